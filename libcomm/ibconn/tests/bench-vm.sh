#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# ibconn benchmarks on soft-RoCE, inside the VM bench (bench.sh runs it):
#   scripts/vm/run -t 600 libcomm/ibconn/tests/bench-vm.sh mem|perf|first
# Prints result lines; numbers go to docs/ibconn.md.
cd "$(dirname "$0")/../../.." || exit 1
B=${BUILD:-build}
X=$B/libcomm/ibconn/tests/ibc_bench
[[ -n ${TNBC_IN_VM:-} ]] || { echo "bench-vm.sh: run inside scripts/vm/run" >&2; exit 2; }
scripts/vm/rxe-up -q || exit 1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
       OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader OMPI_MCA_oob_tcp_if_include=lo \
       OMPI_MCA_mpi_yield_when_idle=1
run() { local np=$1; shift; timeout 240 mpirun --oversubscribe -np "$np" "$@" 2>&1 | grep -v '^ibconn: mode'; }

case ${1:-} in
mem)
    # SRQ depth = one receive per connection, as in the design's model.
    for np in ${TNBC_IBCONN_BENCH_NPS:-2 4 8 16}; do
        for mode in rc rc_srq group; do
            TNBC_IBCONN_MODE=$mode TNBC_IBCONN_GROUP=4 TNBC_IBCONN_SRQ_MIN=1 run "$np" "$X" mem
        done
        TNBC_IBCONN_MODE=group TNBC_IBCONN_GROUP=4 TNBC_IBCONN_SRQ_MIN=1 run "$np" "$X" mem-all
    done ;;
perf)
    # The host is shared and TCG is slow: perftest and ibconn alternate, three
    # rounds, so both see the same conditions; compare round by round.
    for round in 1 2 3; do
        echo "== round $round: perftest ibv_rc_pingpong (rxe1 -> rxe0 over the veth)"
        for s in 8 65536; do
            ibv_rc_pingpong -d rxe0 -g 1 -s $s -n 100 >/dev/null 2>&1 & sleep 1
            echo "size=$s $(timeout 60 ibv_rc_pingpong -d rxe1 -g 1 -s $s -n 100 10.77.0.1 2>&1 | grep usec/iter)"
            wait
        done
        echo "== round $round: perftest ib_write_bw (#bytes #iters peak avg MB/s)"
        for s in 1048576 4194304; do
            timeout 90 ib_write_bw -d rxe0 -x 1 -s $s -n 16 >/dev/null 2>&1 & sleep 1
            echo "size=$s $(timeout 90 ib_write_bw -d rxe1 -x 1 -s $s -n 16 10.77.0.1 2>&1 | grep -E "^ +$s ")"
            wait
        done
        echo "== round $round: ibconn rc_srq (rank 0 on rxe0, rank 1 on rxe1)"
        TNBC_IBCONN_MODE=rc_srq run 2 "$X" lat
        TNBC_IBCONN_MODE=rc_srq run 2 "$X" bw
    done
    echo "== ibconn rc"
    TNBC_IBCONN_MODE=rc run 2 "$X" bw
    ;;
first)
    # 0 <-> 3: pre-connected (rc_srq) vs on demand (group of 2: 0 and 3 share
    # neither group nor index).
    for round in 1 2 3; do
        TNBC_IBCONN_MODE=rc_srq run 4 "$X" first 3
        TNBC_IBCONN_MODE=group TNBC_IBCONN_GROUP=2 run 4 "$X" first 3
    done
    ;;
*) echo "usage: bench-vm.sh mem|perf|first" >&2; exit 2 ;;
esac
