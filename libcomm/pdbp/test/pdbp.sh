#!/usr/bin/env bash
# PDBP test suite: protocol and pool unit tests, then the six calls over MPI
# on 2-4 ranks (shared memory, and Open MPI's TCP BTL as the stand-in for
# separate hosts). Every MPI run is bounded by T_TIMEOUT.
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

echo "-- pools, pipes, protocol errors, failover"
t_run "pool growth (threshold)" env TNBC_PDBP_BLOCK_SIZE=16384 TNBC_PDBP_INIT_REAL=3 \
    TNBC_PDBP_ROW_CAP=16 mpirun --oversubscribe -np 3 "$M" growth
t_run "back-pressure at the block limit" env TNBC_PDBP_BLOCK_SIZE=65536 \
    TNBC_PDBP_MAX_BLOCKS=11 TNBC_PDBP_INIT_REAL=3 mpirun --oversubscribe -np 2 "$M" backpressure
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
