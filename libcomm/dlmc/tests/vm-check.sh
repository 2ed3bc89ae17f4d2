#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Runs inside the VM bench (scripts/vm/run): the DLMC module tests.
# Ends with "dlmc-vm: N passed, N failed, N skipped" for tests/dlmc.sh.
export T_SUITE=dlmc-vm T_TIMEOUT=${T_TIMEOUT:-90}
. test/lib.sh
. libcomm/dlmc/tests/vm-net.sh

SIZES="0 1 3 4 5 63 64 65 1459 1460 1461 2920 2921 4095 4096 4097 65535 65536 65537 1048575 1048576 1048577 4194304 16777216"

t_run "load the module" insmod "$DLMC_KO"
t_run "device node is root-only (0600)" test "$(stat -c %a /dev/dlmc)" = 600
t_run "unload and load again" sh -c "rmmod dlmc && insmod $DLMC_KO"
t_fn "two namespaces joined by veth" dlmc_net_up 1500
t_run "bad ioctl arguments refused" ip netns exec a "$DLMC_BIN/dlmc_bad" va
t_fn "all sizes 0 B..16 MiB a->b, MTU 1500, verified" \
    dlmc_exchange a va b vb 24 $SIZES
t_run "MTU 9000" sh -c "ip -n a link set va mtu 9000 && ip -n b link set vb mtu 9000"
t_fn "all sizes b->a, MTU 9000, verified" dlmc_exchange b vb a va 24 $SIZES

both_ways() {
    dlmc_exchange a va b vb 200 1 1000 100000 &
    local p=$!
    dlmc_exchange b vb a va 200 70000 3 &
    local q=$!
    wait $p && wait $q
}
export -f both_ways
t_fn "both directions at once" both_ways
t_run "malformed frames counted and dropped" bash -c "
    ip netns exec b $DLMC_BIN/dlmc_tool recv vb 7 2 1000 & pid=\$!
    sleep 1
    ip netns exec a $DLMC_BIN/dlmc_raw va \$(dlmc_addr b vb 7) || exit 1
    wait \$pid"

restart() {
    local dst pid rc=0
    dst=$(dlmc_addr b vb 7)
    ip netns exec b "$DLMC_BIN/dlmc_tool" recv vb 7 10 1000 70000 & pid=$!
    ip netns exec a "$DLMC_BIN/dlmc_tool" send va 3 "$dst" 5 1000 70000 || rc=1
    # Same address again, new incarnation: must start over, not be
    # mistaken for duplicates of the first one.
    TNBC_DLMC_FIRST=5 ip netns exec a "$DLMC_BIN/dlmc_tool" send va 3 "$dst" 10 1000 70000 || rc=1
    wait $pid || rc=1
    return $rc
}
export -f restart
t_fn "sender closes and binds the same address again" restart

mpi_apps() {
    dlmc_mpirun 2 "$DLMC_BIN/dlmc_pi" --transport=dlmc -r 3 100 100000 &&
    dlmc_mpirun 2 "$DLMC_BIN/dlmc_tridiag" --transport=dlmc -r 1 1000 300000
}
export -f mpi_apps
t_fn "mpirun across namespaces: pi and tridiagonal solver over DLMC" mpi_apps

lossy() {
    local retrans0 bad0
    retrans0=$(dlmc_counter tx_retrans) bad0=$(dlmc_counter rx_bad_csum)
    dlmc_set rto_ms 8; dlmc_set loss_ppm 50000; dlmc_set corrupt_ppm 30000
    dlmc_exchange a va b vb 60 0 1 1000 9000 20000 100000 1048576 && both_ways
    local rc=$?
    dlmc_set loss_ppm 0; dlmc_set corrupt_ppm 0; dlmc_set rto_ms 50
    "$DLMC_BIN/dlmc_tool" stats
    [[ $rc -eq 0 ]] || return 1
    (( $(dlmc_counter tx_retrans) > retrans0 )) || { echo "no retransmissions"; return 1; }
    (( $(dlmc_counter rx_bad_csum) > bad0 )) || { echo "no damaged frame seen"; return 1; }
    (( $(dlmc_counter inj_lost) > 0 )) || { echo "no frame lost"; return 1; }
}
export -f lossy
t_fn "5% loss + 3% corruption: every message once, in order, intact" lossy

under_traffic() {
    local dst f s
    dst=$(dlmc_addr b vb 9)
    ip netns exec b "$DLMC_BIN/dlmc_tool" sink vb 9 & s=$!
    ip netns exec a "$DLMC_BIN/dlmc_tool" flood va 5 "$dst" & f=$!
    sleep 3
    if rmmod dlmc 2>/dev/null; then echo "rmmod succeeded with endpoints open"; return 1; fi
    kill -9 $f; wait $f 2>/dev/null
    # The receiver still has data queued and frames in flight toward it.
    kill -9 $s; wait $s 2>/dev/null
    rmmod dlmc || return 1
    ! lsmod | grep -q '^dlmc'
}
export -f under_traffic
t_fn "unload refused under traffic, clean once endpoints close" under_traffic
t_run "no leaked objects at unload" sh -c "dmesg | grep -q 'dlmc: unloaded, 0 objects leaked' && ! dmesg | grep 'dlmc: unloaded, [1-9]'"
other_type() {
    insmod "$DLMC_KO" ethertype=0x88b5 || return 1
    dlmc_exchange a va b vb 3 1 5000 70000
    local rc=$?
    rmmod dlmc && return $rc
}
export -f other_type
t_fn "load with another EtherType" other_type
t_expect_fail "EtherType below 0x600 refused" 1 "could not insert module.*Invalid param" \
    insmod "$DLMC_KO" ethertype=0x100
t_run "the refusal says why in the kernel log" \
    sh -c "dmesg | grep -q 'dlmc: ethertype 0x0100 is a length, not a type'"
t_run "no oops, BUG or WARNING in the kernel log" sh -c "! dmesg | grep -E 'BUG|WARNING|Oops|general protection|Call Trace'"
[[ -n ${T_LIST_ONLY:-} ]] || dmesg | grep -i dlmc | tail -n 5
t_summary
