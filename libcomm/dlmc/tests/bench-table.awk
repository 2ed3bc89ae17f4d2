# SPDX-License-Identifier: BSD-3-Clause
# bench-table.awk: turns vm-bench.sh output into the markdown tables of
# docs/dlmc.md.  Usage: awk -f bench-table.awk build/bench/dlmc/mtu1500.txt
function kv(s,   a, i, n, p) {
    delete F
    n = split(s, a, " ")
    for (i = 2; i <= n; i++) { p = index(a[i], "="); F[substr(a[i], 1, p - 1)] = substr(a[i], p + 1) }
}
/ size=/ {
    kv($0); k = $1; sz = F["size"]
    if (!(sz in seen)) { seen[sz] = 1; order[++ns] = sz }
    if (!(k in kseen)) { kseen[k] = 1; kinds[++nk] = k }
    lat[k, sz] = F["latency_us"]; bw[k, sz] = F["bandwidth_MBps"]
}
/^pi / { kv($0); pi[++np] = sprintf("| pi | %s | n=%s | %s µs |", F["transport"], F["n"], F["time_us"]) }
/^tridiag / { kv($0); pi[++np] = sprintf("| tridiag | %s | N=%s (%s B moved) | %s ms |", F["transport"], F["n"], F["bytes_moved"], F["time_ms"]) }
END {
    hdr = "| size |"; sep = "|---:|"
    for (j = 1; j <= nk; j++) { hdr = hdr " " kinds[j] " |"; sep = sep "---:|" }
    print "Latency (µs, one way):\n"; print hdr; print sep
    for (i = 1; i <= ns; i++) { line = "| " order[i] " |"; for (j = 1; j <= nk; j++) line = line " " lat[kinds[j], order[i]] " |"; print line }
    print "\nBandwidth (MB/s):\n"; print hdr; print sep
    for (i = 1; i <= ns; i++) { line = "| " order[i] " |"; for (j = 1; j <= nk; j++) line = line " " bw[kinds[j], order[i]] " |"; print line }
    print "\nApplications (2 ranks, one per namespace; mean time per run):\n"
    print "| app | transport | size | time |"; print "|---|---|---|---:|"
    for (i = 1; i <= np; i++) print pi[i]
}
