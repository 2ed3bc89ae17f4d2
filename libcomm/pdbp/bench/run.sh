#!/usr/bin/env bash
# make bench-pdbp: PDBP throughput (1-to-N, N-to-1, N-to-N, and MPI_Alltoall
# moving the same bytes) over unit packets of 64 B .. 1 MB, and pool memory
# against the number of streams and the threshold. CSV under
# $BUILD/bench/pdbp/, plots in docs/pdbp/.
#
# Knobs (environment):
#   PDBP_BENCH_NPS        host counts to run, default "2 3 4"
#   PDBP_BENCH_BYTES      bytes per stream per point, default 4000000
#   PDBP_BENCH_REPS       runs per point (mean without max and min), default 3
#   PDBP_BENCH_TRANSPORTS "tcp shm": tcp = --mca btl self,tcp on loopback (the
#                         stand-in for separate hosts), shm = Open MPI's
#                         default; cluster = --mca btl self,tcp with hosts and
#                         interface given in PDBP_BENCH_MPIRUN
#   PDBP_BENCH_MPIRUN     extra mpirun arguments, e.g. the emulated cluster's
#                         hostfile and --mca btl_tcp_if_include IFACE
#   PDBP_BENCH_LINK_MBPS  shaped link rate in Mbit/s: plots then show the share
set -uo pipefail
cd "$(dirname "$0")/../../.."
: "${BUILD:=build}" "${PY:=/usr/bin/python3}"
out=$BUILD/bench/pdbp
mkdir -p "$out" docs/pdbp
B=$BUILD/pdbp/pdbp_bench
NPS=${PDBP_BENCH_NPS:-2 3 4}
BYTES=${PDBP_BENCH_BYTES:-4000000}
REPS=${PDBP_BENCH_REPS:-3}
TRANSPORTS=${PDBP_BENCH_TRANSPORTS:-tcp shm}
EXTRA=${PDBP_BENCH_MPIRUN:-}
if [[ $(id -u) -eq 0 ]]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
export OMPI_MCA_btl_base_warn_component_unused=0
# 1 MiB packets must fit one block; one sender thread per host suits 2 cores
export TNBC_PDBP_BLOCK_SIZE=${TNBC_PDBP_BLOCK_SIZE:-1052672}
export TNBC_PDBP_THREADS=${TNBC_PDBP_THREADS:-1}

run() { # CSV-PREFIX NP ARGS...
    local pre=$1 np=$2; shift 2
    local btl=()
    case $pre in
    tcp) btl=(--mca btl self,tcp --mca btl_tcp_if_include lo) ;;  # one host
    cluster) btl=(--mca btl self,tcp) ;;  # hosts/interfaces come from PDBP_BENCH_MPIRUN
    esac
    # shellcheck disable=SC2086
    timeout -k 5 600 mpirun --oversubscribe -np "$np" "${btl[@]}" $EXTRA "$B" "$@" |
        sed "s/^/$pre,$np,/" >>"$out/tput.csv" || echo "bench-pdbp: run $pre $np $* failed" >&2
}

echo "transport,hosts,pattern,packet_bytes,seconds,host_MBps" >"$out/tput.csv"
echo "== pdbp throughput: hosts {$NPS}, $BYTES bytes per stream, $REPS runs per point; load: $(cut -d' ' -f1-3 /proc/loadavg)"
for tr in $TRANSPORTS; do
    for np in $NPS; do
        for pat in 1toN Nto1 NtoN; do
            run "$tr" "$np" tput "$pat" "$BYTES" "$REPS"
        done
        run "$tr" "$np" a2a "$BYTES" "$REPS"
    done
done

echo "threshold,streams,host0_pool_bytes,host1_pool_bytes,host0_grows" >"$out/pool.csv"
echo "== pdbp pool memory: streams {1 2 4 8 16} x threshold {0.3 0.5 0.7 0.9}"
for t in 0.3 0.5 0.7 0.9; do
    for s in 1 2 4 8 16; do
        TNBC_PDBP_BLOCK_SIZE=65536 TNBC_PDBP_ROW_CAP=128 TNBC_PDBP_THRESHOLD=$t timeout -k 5 300 \
            mpirun --oversubscribe -np 2 $EXTRA "$B" pool "$s" |
            awk -F, -v t="$t" '$1 == "pool" { print t "," $2 "," $4 "," $5 "," $6 }' >>"$out/pool.csv"
    done
done

"$PY" libcomm/pdbp/bench/plot.py "$out" docs/pdbp ${PDBP_BENCH_LINK_MBPS:+--link-mbps "$PDBP_BENCH_LINK_MBPS"}
cp "$out/tput.csv" "$out/pool.csv" docs/pdbp/
echo "== pdbp: CSV in $out and docs/pdbp/, plots in docs/pdbp/, table in docs/pdbp/summary.md"
