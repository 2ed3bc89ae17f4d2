#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# PDBP test suite: protocol and pool unit tests, then the six calls over MPI
# on 2-4 ranks: shared memory, Open MPI's TCP BTL on loopback, and the
# emulated cluster (ranks on separate network-namespace nodes joined by
# shaped links; skipped with the reason without root or namespaces).
# Every MPI run is bounded by T_TIMEOUT.
cd "$(dirname "$0")/../../.."
T_SUITE=pdbp
: "${T_TIMEOUT:=60}"
source test/lib.sh
: "${PDBP_BIN:=${BUILD:-build}/pdbp}"
M=$PDBP_BIN/mpi_pdbp
# t_run bounds each command with timeout, so mpirun runs directly under it

echo "-- protocol (incl. fuzz) and pool unit tests"
t_cmocka "$PDBP_BIN/test_proto"
t_cmocka "$PDBP_BIN/test_pool"
t_fuzz pdbp libcomm/pdbp/fuzz/seeds

echo "-- streams with checksums (shared memory)"
t_run "1-to-2 remote"            mpirun --oversubscribe -np 3 "$M" 1toN
t_run "3-to-1 remote"            mpirun --oversubscribe -np 4 "$M" Nto1
t_run "4-to-4 remote"            mpirun --oversubscribe -np 4 "$M" NtoN
t_run "local GPs, no MPI"        mpirun --oversubscribe -np 2 "$M" local
t_run "1-MB-class messages N-to-N" env TNBC_PDBP_BLOCK_SIZE=1052672 mpirun --oversubscribe -np 3 "$M" NtoN 1000000

echo "-- streams over the TCP BTL (stand-in for separate hosts)"
t_run "tcp 1-to-2"  mpirun --oversubscribe -np 3 --mca btl self,tcp --mca btl_tcp_if_include lo "$M" 1toN
t_run "tcp 2-to-1"  mpirun --oversubscribe -np 3 --mca btl self,tcp --mca btl_tcp_if_include lo "$M" Nto1
t_run "tcp 3-to-3"  mpirun --oversubscribe -np 3 --mca btl self,tcp --mca btl_tcp_if_include lo "$M" NtoN

echo "-- across the emulated cluster (2 nodes, TCP over shaped 1 Gbit/s links)"
CL=scripts/cluster/tnbc-cluster
CLN=${PDBP_TEST_CLUSTER:-pd$(( $$ % 1000000 ))}  # "pd" + at most 6 digits: within the 8-character limit
: "${TNBC_CLUSTER_DIR:=/run/tnbc-cluster}"
cl_why=""
if [[ $(id -u) -ne 0 ]]; then cl_why="not root"
elif ! command -v tc >/dev/null || ! command -v nsenter >/dev/null; then cl_why="tc or nsenter missing"
elif ! ip netns add "tnbc-probe-$$" 2>/dev/null; then cl_why="no network namespaces on this kernel"
else ip netns del "tnbc-probe-$$"; fi
CL_CHECKS=("2 nodes N-to-N, traffic over the shaped link" "2 nodes 1-to-2" "2 nodes 2-to-1"
           "2 nodes x 2 slots N-to-N" "2 nodes x 2 slots failover, data after it")
if [[ -n $cl_why ]]; then
    for c in "${CL_CHECKS[@]}"; do
        t_skip "cluster: $c" "the emulated cluster needs root and network namespaces ($cl_why)"
    done
else
    trap '$CL down --name "$CLN" >/dev/null 2>&1' EXIT
    t_run "cluster: up 2 nodes x 2 slots at 1gbit" $CL up -n 2 --slots 2 --rate 1gbit --name "$CLN"
    if [[ ! -f $TNBC_CLUSTER_DIR/$CLN/env ]]; then
        for c in "${CL_CHECKS[@]}"; do t_skip "cluster: $c" "cluster $CLN did not come up"; done
    else
        # cl_run NP SCENARIO [MPIRUN-ARGS...]: mpirun with the cluster's settings
        # (hostfile, rsh agent into the nodes, TCP between them); output to stdout
        cl_run() {
            local np=$1 scen=$2; shift 2
            ( . "$TNBC_CLUSTER_DIR/$CLN/env" && mpirun -np "$np" "$@" "$M" "$scen" )
        }
        # both nodes took part (each node has its own hostname)
        both_nodes() { grep -q "on tnbc-$CLN-n0:" <<<"$1" && grep -q "on tnbc-$CLN-n1:" <<<"$1"; }
        # One rank per node: host 0 on node 0, host 1 on node 1. The bridge's end
        # of node 1's link counts the bytes into node 1: at least the payload
        # host 0 sent to host 1 must have crossed it.
        cl_link() {
            local before after out sent
            before=$(tc -s qdisc show dev "tv-$CLN-1" | awk '/Sent/ {print $2; exit}')
            out=$(cl_run 2 NtoN --map-by node 2>&1); local rc=$?; echo "$out"
            after=$(tc -s qdisc show dev "tv-$CLN-1" | awk '/Sent/ {print $2; exit}')
            sent=$(sed -n 's/^PASS NtoN host 0 on .*(\([0-9]*\) payload bytes).*/\1/p' <<<"$out")
            echo "payload host 0 -> host 1: ${sent:-?} B; bytes into node 1 over its link: $((after - before))"
            [[ $rc -eq 0 && -n $sent ]] && both_nodes "$out" && (( after - before >= sent ))
        }
        cl_scen() { # NP SCENARIO MPIRUN-ARGS...: passes on every host, on both nodes
            local np=$1 scen=$2 out; shift 2
            out=$(cl_run "$np" "$scen" "$@" 2>&1); local rc=$?; echo "$out"
            [[ $rc -eq 0 && $(grep -c "^PASS $scen host" <<<"$out") -eq $np ]] && both_nodes "$out"
        }
        t_run "cluster: ${CL_CHECKS[0]}" cl_link
        # 3 ranks by node: hosts 0 and 2 on node 0, host 1 on node 1 (TCP and shared memory)
        t_run "cluster: ${CL_CHECKS[1]}" cl_scen 3 1toN --map-by node
        t_run "cluster: ${CL_CHECKS[2]}" cl_scen 3 Nto1 --map-by node
        # 4 ranks by slot: hosts 0, 1 on node 0, hosts 2, 3 on node 1
        t_run "cluster: ${CL_CHECKS[3]}" cl_scen 4 NtoN
        t_run "cluster: ${CL_CHECKS[4]}" cl_scen 4 failover \
            -x TNBC_PDBP_FAILOVER_MS=1000 -x TNBC_PDBP_REQUEST_MS=1500
    fi
    t_run "cluster: down" $CL down --name "$CLN"
    trap - EXIT
fi

echo "-- pools, pipes, protocol errors, failover"
t_run "pool growth (threshold)" env TNBC_PDBP_BLOCK_SIZE=16384 TNBC_PDBP_INIT_REAL=3 \
    TNBC_PDBP_ROW_CAP=16 mpirun --oversubscribe -np 3 "$M" growth
t_run "back-pressure at the block limit" env TNBC_PDBP_BLOCK_SIZE=65536 \
    TNBC_PDBP_MAX_BLOCKS=11 TNBC_PDBP_INIT_REAL=3 mpirun --oversubscribe -np 2 "$M" backpressure
# 256 KiB blocks over TCP: above the BTL's eager limit (rendezvous), as in the bench
t_run "several blocks in flight, slow reader, both ways (tcp)" env TNBC_PDBP_BLOCK_SIZE=262144 \
    TNBC_PDBP_INIT_REAL=6 TNBC_PDBP_ROW_CAP=6 TNBC_PDBP_INFLIGHT=4 mpirun --oversubscribe -np 2 \
    --mca btl self,tcp --mca btl_tcp_if_include lo "$M" inflight
t_run "several blocks in flight, slow reader, both ways (shm)" env TNBC_PDBP_BLOCK_SIZE=65536 \
    TNBC_PDBP_INIT_REAL=5 TNBC_PDBP_ROW_CAP=5 TNBC_PDBP_INFLIGHT=3 mpirun --oversubscribe -np 2 "$M" inflight
t_run "pipe reuse (12 GPs, 2 pipes)" env TNBC_PDBP_PIPES=2 mpirun --oversubscribe -np 2 "$M" reuse
t_run "malformed messages rejected" mpirun --oversubscribe -np 2 "$M" badmsg
t_run "management node failover" env TNBC_PDBP_FAILOVER_MS=1000 \
    TNBC_PDBP_REQUEST_MS=1500 mpirun --oversubscribe -np 3 "$M" failover

echo "-- bad configuration"
# each must fail cleanly (no hang) and say why in one line
refuse() { # NAME PATTERN CMD...: CMD fails and its output matches PATTERN
    local name=$1 pat=$2; shift 2
    local out=$T_LOGDIR/$(echo "$name" | tr -c 'A-Za-z0-9' '_').out
    t_run "$name" bash -c 'o=$0 p=$1; shift; ! "$@" >"$o" 2>&1 && grep -q "$p" "$o"' \
        "$out" "$pat" "$@"
}
refuse "init refuses a block limit below the initial pools" "is below the 12 blocks" \
    env TNBC_PDBP_MAX_BLOCKS=3 mpirun --oversubscribe -np 2 "$M" init
refuse "init refuses hosts with different pool settings" "pool settings differ" \
    mpirun --oversubscribe -np 1 env TNBC_PDBP_BLOCK_SIZE=8192 "$M" init : -np 1 "$M" init
log=$T_LOGDIR/bad_env.out
t_run "bad env value: one line, default used" bash -c \
    "TNBC_PDBP_THRESHOLD=abc mpirun --oversubscribe -np 2 $M init >$log 2>&1 &&
     grep -q \"TNBC_PDBP_THRESHOLD='abc' is not a number\" $log"

echo "-- CUDA device back end"
if [[ ! -x $PDBP_BIN/dev_cuda_check ]]; then
    t_skip "cuda device copies" "nvcc not found at build time: CUDA back end not built"
else
    out=$(timeout -k 5 "$T_TIMEOUT" "$PDBP_BIN/dev_cuda_check" 2>&1); rc=$?
    if [[ $rc -eq 77 ]]; then
        t_skip "cuda device copies" "built, but no usable GPU (${out#SKIP: })"
    else
        t_run "cuda device copies" "$PDBP_BIN/dev_cuda_check"
    fi
fi

t_summary
