#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# check-apps: every benchmark application runs on 2 to 4 local ranks and its
# self-check passes; a corrupted result (--corrupt flips one bit of received
# data) is caught; bad arguments give one clean error; the bench driver runs
# its modes, a launcher-prefix mode and an --after hook.
cd "$(dirname "$0")/.."
T_SUITE=apps
. test/lib.sh
B=${BUILD:-build}/bench
# Under SAN=asan, LeakSanitizer reports Open MPI's own allocations left at
# MPI_Finalize (from its dlopen'ed components), not ours: leave leaks out.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}

# ok_run NAME NP ARGS...: exit 0 and a RESULT line with check=ok
ok_run() {
    local name=$1 np=$2; shift 2
    t_run "$name" bash -c 'out=$(t_mpirun "$0" "$@") || { echo "$out"; exit 1; }; echo "$out";
                           grep -q "^RESULT .*check=ok" <<<"$out"' "$np" "$@"
}
# bad_run NAME NP ARGS...: exit 1 (every rank's check failed and said so)
# and a RESULT line with check=fail
bad_run() {
    local name=$1 np=$2; shift 2
    t_expect_fail "$name" 1 "^RESULT .*check=fail" t_mpirun "$np" "$@"
}
export -f t_mpirun t_mpi_argv; export T_TIMEOUT

for np in 2 4; do
    ok_run "microbench fwd np$np"      $np $B/microbench --block 65536 --iters 2 --tcurc-us 200 --crc-us 400
    ok_run "microbench ialltoall np$np" $np $B/microbench --block 65536 --iters 2 --variant ialltoall --tcurc-us 500
    ok_run "fft3d np$np"               $np $B/fft3d --n 16 --iters 2
    ok_run "pencil np$np"              $np $B/pencil --n 16 --iters 2
    ok_run "isort np$np"               $np $B/isort --keys 20000 --maxkey 16384 --iters 2
    ok_run "bcastread np$np"           $np $B/bcastread --bytes 65536 --iters 2 --crc-us 100
    ok_run "ordinary np$np"            $np $B/ordinary --block 65544 --iters 4 --head 2
done
ok_run "microbench perm np3"        3 $B/microbench --block 4104 --iters 2 --order perm
ok_run "microbench list np3"        3 $B/microbench --block 4096 --iters 2 --order 2,0,1 --crc-passes 3
ok_run "microbench rev sub-page np2" 2 $B/microbench --block 24 --iters 3 --order rev
ok_run "bcastread ibcast np3"       3 $B/bcastread --bytes 98304 --chunks 3 --order 2,0,1 --variant ibcast --tcurc-us 200
ok_run "bcastread root2 np3"        3 $B/bcastread --bytes 65536 --root 2
ok_run "isort uneven np3"           3 $B/isort --keys 5000 --maxkey 3000
ok_run "alltoall_f fwd np2"         2 $B/alltoall_f 1000 2 fwd
ok_run "alltoall_f rev np4"         4 $B/alltoall_f 300 2 rev
ok_run "pingpong np3 (first and last rank)" 3 $B/pingpong --iters 50 --warmup 5
t_run "pingpong prints a positive latency" bash -c 'out=$(t_mpirun 2 "$0" --iters 20) || exit 1; echo "$out";
                       grep "^RESULT app=pingpong .*check=ok" <<<"$out" |
                           sed -n "s/.* latency_us=\([0-9.]*\) .*/\1/p" | awk "BEGIN { bad = 1 } { bad = !(\$1 > 0) } END { exit bad }"' $B/pingpong

# The self-checks catch a single flipped bit in the received data.
bad_run "microbench detects corruption"  2 $B/microbench --block 4096 --iters 1 --corrupt
bad_run "microbench ialltoall detects"   2 $B/microbench --block 4096 --iters 1 --variant ialltoall --corrupt
bad_run "fft3d detects corruption"       2 $B/fft3d --n 8 --iters 1 --corrupt
bad_run "pencil detects corruption"      4 $B/pencil --n 16 --iters 1 --corrupt
bad_run "isort detects corruption"       2 $B/isort --keys 1000 --maxkey 1024 --iters 1 --corrupt
bad_run "bcastread detects corruption"   2 $B/bcastread --bytes 4096 --iters 1 --corrupt
bad_run "ordinary detects corruption"    2 $B/ordinary --block 4096 --iters 3 --head 2 --corrupt
bad_run "alltoall_f detects corruption"  2 $B/alltoall_f 100 1 fwd corrupt
bad_run "pingpong detects corruption"    2 $B/pingpong --iters 5 --warmup 0 --corrupt

# Bad arguments: a one-line error and exit 2, no hang, no crash.
bad_args() {
    local name=$1 np=$2; shift 2
    t_run "$name" bash -c 'out=$(t_mpirun "$0" "$@" 2>&1); rc=$?; echo "$out"; echo "rc=$rc";
                           [[ $rc -ne 0 && $rc -lt 124 ]] && grep -q "^error: " <<<"$out"' "$np" "$@"
}
bad_args "microbench bad order"     2 $B/microbench --order 0,0
bad_args "microbench bad block"     2 $B/microbench --block 12x
bad_args "microbench bad variant"   2 $B/microbench --variant magic
bad_args "fft3d n not power of two" 2 $B/fft3d --n 12
bad_args "pencil n not divisible by the grid" 3 $B/pencil --n 16
bad_args "isort bad maxkey"         3 $B/isort --maxkey 1000
bad_args "bcastread bad chunks"     2 $B/bcastread --bytes 100 --chunks 3
bad_args "alltoall_f bad n"         2 $B/alltoall_f zero
bad_args "pingpong bad iters"        2 $B/pingpong --iters 0
bad_args "pingpong alone"            1 $B/pingpong

# The driver: built-in modes, a launcher-prefix mode with placeholders, a
# per-mode repetition count and an --after hook; CSV and JSON written.
out=$T_LOGDIR/driver
rm -rf "$out"; mkdir -p "$out"
cat >"$out/apps.conf" <<'CONF'
# small sizes; {T*x} scales with the calibrated Tcomm
@calibrate | microbench | --block 65536 --iters 2
@calibrate-share | microbench | --block 64 --iters 2 --tcurc-us {T*2} --crc-us 0
micro-a | microbench | --block 65536 --iters 2 --tcurc-us {T*1.5} --crc-us {T*0.2} | ialltoall=--variant ialltoall
bcast   | bcastread  | --bytes 65536 --iters 2 --crc-us {T*2}  | ialltoall=--variant ibcast
isort   | isort      | --keys 1000 --maxkey 1024 --iters 2
CONF
t_run "run-apps plain/ialltoall/prefix mode" bench/run-apps --local --np 2 --reps 2 --out "$out" \
    --config "$out/apps.conf" --timeout 60 \
    --modes plain,ialltoall,wrapped --mode wrapped='env BENCH_WRAPPED={app}.{rep}' \
    --mode-reps wrapped=1 --after wrapped="echo {share} > $out/after.{app}"
t_run "run-apps wrote runs and summary" bash -c '
    out=$0
    [[ $(grep -c ",ok," "$out/runs.csv") -eq 13 ]] || { cat "$out/runs.csv"; exit 1; }
    grep -q "^micro-a,ialltoall,2,2," "$out/summary.csv" && grep -q "^bcast,wrapped,1,1," "$out/summary.csv" &&
    grep -q "^isort,plain,2,2," "$out/summary.csv" && ! grep -q "^isort,ialltoall" "$out/summary.csv" &&
    grep -q "env BENCH_WRAPPED=micro-a.0 mpirun" "$out/runs.csv" &&
    [[ -e $out/after.micro-a && -e $out/after.bcast && -e $out/after.isort ]] &&
    /usr/bin/python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
share = d[\"meta\"][\"comm_cpu_share\"]
assert d[\"meta\"][\"tcomm_us\"] > 0 and 0 <= share <= 0.9, d[\"meta\"]
# the --after hook got the calibrated share through {share}
assert float(open(sys.argv[2]).read()) == round(share, 3), open(sys.argv[2]).read()
# 64-byte blocks, below the break-even of the analyzer whatever the load
# of the machine: tnbc leaves the calibration blocking, so the share comes
# from the MPI-3 variant, and the summary says which (with 64 KiB blocks
# slow shared memory on a loaded machine once made the analyzer turn it on)
assert d[\"meta\"][\"comm_cpu_share_from\"] == \"ialltoall\", d[\"meta\"]
# microbench says how long its call took to return (t_return: the slowest
# rank'"'"'s mean, never more than t_coll, the mean of the slowest per
# iteration, which for the ialltoall variant also holds the MPI_Wait);
# isort does not say
import csv
rows = list(csv.DictReader(open(sys.argv[3])))
micro = [r for r in rows if r[\"app\"] == \"micro-a\"]
assert micro and all(0 < float(r[\"t_return\"]) <= float(r[\"t_coll\"]) + 1e-6 for r in micro), micro
assert all(r[\"t_return\"] == \"\" for r in rows if r[\"app\"] == \"isort\"), rows
" "$out/summary.json" "$out/after.isort" "$out/runs.csv"' "$out"
# Where a node's ranks outnumber its CPUs every mode yields while it waits
# (the stronger baseline there): decided from the cluster's own record of
# each node's CPUs and slots; checked on hand-made records.
t_run "run-apps yields where ranks share a CPU" bash -c '
    d=$0/clusters; mkdir -p "$d/one" "$d/two" "$d/wide" &&
    printf "10.0.0.1 a /tmp 0\n10.0.0.2 b /tmp 1\n" | tee "$d/one/nodes" > "$d/two/nodes" &&
    printf "10.0.0.1 slots=1\n10.0.0.2 slots=1\n" > "$d/one/hostfile" &&
    printf "10.0.0.1 slots=2\n10.0.0.2 slots=2\n" > "$d/two/hostfile" &&
    printf "10.0.0.1 a /tmp 0-1\n10.0.0.2 b /tmp 2,3\n" > "$d/wide/nodes" &&
    cp "$d/two/hostfile" "$d/wide/hostfile" &&
    TNBC_CLUSTER_DIR=$d /usr/bin/python3 -c "
from importlib.machinery import SourceFileLoader
m = SourceFileLoader(\"run_apps\", \"bench/run-apps\").load_module()
class A: pass
def share(cluster, np):
    a = A(); a.cluster, a.np = cluster, np
    return m.ranks_share_cpus(a)
# 2 x 1 on a CPU each; 2 x 2 on a CPU each; 2 x 2 on two CPUs each
assert not share(\"one\", 2) and share(\"one\", 3), \"one\"
assert share(\"two\", 4) and share(\"two\", 2) and not share(\"two\", 1), \"two\"
assert not share(\"wide\", 4), \"wide\"
assert m.cpu_count(\"0,2-5\") == 5
"' "$out"
# The share calibrated with tnbc itself, on a 2-node emulated cluster at
# 200 Mbit/s (1 MiB blocks: 42 ms of link), where the analyzer turns the
# calibration's Alltoall on: traced once, analyzed, and run tuned against
# plain (the trace and profile stay in the output directory).
CL=scripts/cluster/tnbc-cluster
cname=tp$(( $$ % 10000 ))
if [[ -n ${T_LIST_ONLY:-} ]] || ! $CL up --name "$cname" -n 2 --rate 200mbit >/dev/null 2>&1 ||
   ! grep -q MODE=netns "${TNBC_CLUSTER_DIR:-/run/tnbc-cluster}/$cname/config" 2>/dev/null; then
    $CL down --name "$cname" >/dev/null 2>&1
    t_skip "run-apps calibrates the share with tnbc's early return" "no emulated cluster (network namespaces)"
else
    trap '$CL down --name "$cname" >/dev/null 2>&1' EXIT
    sout=$T_LOGDIR/driver-share
    rm -rf "$sout"; mkdir -p "$sout"
    cat >"$sout/apps.conf" <<'CONF'
@calibrate | microbench | --block 1048576 --iters 2
@calibrate-share | microbench | --block 1048576 --iters 8 --tcurc-us {T*2} --crc-us 0
micro-a | microbench | --block 65536 --iters 2
CONF
    T_TIMEOUT=180 t_run "run-apps calibrates the share with tnbc's early return" bash -c '
        out=$0
        bench/run-apps --cluster "$1" --np 2 --reps 1 --out "$out" --config "$out/apps.conf" \
            --timeout 60 --modes plain --after plain="echo {share} > $out/after" > "$out/log" 2>&1 ||
            { cat "$out/log"; exit 1; }
        cat "$out/log"
        grep -q "^calibration: CPU share of communication in flight (tnbc) = " "$out/log" &&
        grep -q "^  decision on " "$out/calibrate-share.profile" || { cat "$out/calibrate-share.profile"; exit 1; }
        /usr/bin/python3 -c "
import json, sys
m = json.load(open(sys.argv[1]))[\"meta\"]
assert m[\"comm_cpu_share_from\"] == \"tnbc\" and 0 <= m[\"comm_cpu_share\"] <= 0.9, m
" "$out/summary.json"' "$sout" "$cname"
    $CL down --name "$cname" >/dev/null 2>&1
fi
t_expect_fail "run-apps unknown mode" 1 "^run-apps: unknown mode 'nosuch'" \
    bench/run-apps --local --modes plain,nosuch --apps micro-a
t_expect_fail "run-apps failing run is reported" 1 "^  FAILED isort broken rep 0: exit 1," \
    bench/run-apps --local --np 2 --reps 1 --apps isort \
    --config "$out/apps.conf" --out "$T_LOGDIR/driver-fail" --modes plain,broken --mode broken='false'

t_summary
