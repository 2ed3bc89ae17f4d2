#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# bench-shmem: put rate and put/get latency side by side (tnbc-shmem on shared
# memory and on MPI RMA, Open MPI's OSHMEM, plain MPI RMA), on one node and
# over Open MPI's TCP BTL; the irregular kernels from 1 to 4 PEs.
# Results: $BUILD/bench/shmem/*.txt; numbers quoted in docs/shmem.md.
# REPEAT=n runs each measurement n times (default 3); docs quote the best.
cd "$(dirname "$0")/../../.." || exit 1
: "${BUILD:=build}" "${REPEAT:=3}" "${SECS:=0.5}"
OUT=$BUILD/bench/shmem
B=$BUILD/shmem/bench
mkdir -p "$OUT" "$B/ompi"
if [[ $(id -u) -eq 0 ]]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_btl_base_warn_component_unused=0
export OMPI_MCA_mpi_yield_when_idle=1
# rma mode allocates no shared window, so osc pt2pt alone: with sm allowed,
# MPI_Win_allocate on one host would pick osc/sm and bypass TCP
TCP=(--mca pml ob1 --mca btl self,tcp --mca osc pt2pt)
MPIRUN=(timeout -k 5 150 mpirun --oversubscribe)

run() { # LABEL FILE CMD...: run REPEAT times, append to FILE
    local label=$1 file=$2; shift 2
    for ((i = 1; i <= REPEAT; i++)); do
        echo "## $label run $i: $*" >>"$file"
        "$@" >>"$file" 2>"$OUT/last.err" || echo "## $label: exit $? ($(tail -n 3 "$OUT/last.err" | tr '\n' ' '))" >>"$file"
    done
}

pg=$OUT/putget.txt; : >"$pg"
run "tnbc shm" "$pg" "${MPIRUN[@]}" -np 2 "$B/b_putget" tnbc-shm "$SECS"
run "tnbc rma" "$pg" "${MPIRUN[@]}" -np 2 -x TNBC_SHMEM_TRANSPORT=rma "$B/b_putget" tnbc-rma "$SECS"
run "mpi rma" "$pg" "${MPIRUN[@]}" -np 2 "$B/b_mpi_rma" mpi-rma "$SECS"
run "mpi rma ucx" "$pg" "${MPIRUN[@]}" -np 2 --mca osc ucx "$B/b_mpi_rma" mpi-rma-ucx "$SECS"
if command -v oshcc >/dev/null && oshcc -O2 -o "$B/ompi/b_putget" libcomm/shmem/bench/b_putget.c; then
    run "oshmem" "$pg" timeout -k 5 300 oshrun --oversubscribe -np 2 "$B/ompi/b_putget" ompi-oshmem "$SECS"
    run "oshmem tcp" "$pg" timeout -k 5 60 oshrun --oversubscribe -np 2 -x UCX_TLS=tcp,self \
        "$B/ompi/b_putget" ompi-oshmem-tcp "$SECS"
else
    echo "## oshmem: oshcc missing or failed" >>"$pg"
fi
run "tnbc rma tcp" "$pg" "${MPIRUN[@]}" -np 2 "${TCP[@]}" -x TNBC_SHMEM_TRANSPORT=rma \
    "$B/b_putget" tnbc-rma-tcp "$SECS"
# osc pt2pt alone: with sm allowed, MPI_Win_allocate on one host would pick
# osc/sm and bypass TCP
run "mpi rma tcp" "$pg" "${MPIRUN[@]}" -np 2 --mca pml ob1 --mca btl self,tcp --mca osc pt2pt \
    "$B/b_mpi_rma" mpi-rma-tcp "$SECS"

# static (global) data against heap data, one node, both transports
st=$OUT/static.txt; : >"$st"
run "static shm" "$st" "${MPIRUN[@]}" -np 2 "$B/b_static" tnbc-shm "$SECS"
run "static rma" "$st" "${MPIRUN[@]}" -np 2 -x TNBC_SHMEM_TRANSPORT=rma "$B/b_static" tnbc-rma "$SECS"

ir=$OUT/irregular.txt; : >"$ir"
for np in 1 2 3 4; do
    run "irregular shm np=$np" "$ir" "${MPIRUN[@]}" -np $np "$B/b_irregular" $((1 << 20)) $((1 << 16)) 5
done
run "irregular shm np=4 small" "$ir" "${MPIRUN[@]}" -np 4 "$B/b_irregular" $((1 << 20)) $((1 << 15)) 3
run "irregular rma np=4 small" "$ir" "${MPIRUN[@]}" -np 4 -x TNBC_SHMEM_TRANSPORT=rma \
    "$B/b_irregular" $((1 << 20)) $((1 << 15)) 3
run "irregular rma+tcp np=4" "$ir" "${MPIRUN[@]}" -np 4 "${TCP[@]}" -x TNBC_SHMEM_TRANSPORT=rma \
    "$B/b_irregular" $((1 << 20)) $((1 << 13)) 3

/usr/bin/python3 libcomm/shmem/bench/summarize.py "$pg" "$ir" | tee "$OUT/summary.txt"
