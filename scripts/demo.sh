#!/usr/bin/env bash
# make demo: the whole tnbc workflow on the FFT-like kernel, as a new user
# would run it: a small emulated cluster (or one node without root), a plain
# run, a trace run, the analysis, tuned runs with the profile, and a table.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
B=${BUILD:-build}
export TNBC_BUILD=$ROOT/$B
T=scripts/tnbc
OUT=$B/demo
REPS=${DEMO_REPS:-3}
APP=("$ROOT/$B/bench/fft3d" --n "${DEMO_N:-128}" --iters "${DEMO_ITERS:-3}" --warmup 1)
NAME=dm$$; NAME=${NAME:0:8}
step() { echo "[demo $(date +%H:%M:%S)] $*"; }

rm -rf "$OUT"; mkdir -p "$OUT"
[[ $(id -u) -eq 0 ]] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

where="one node (shared memory: nothing to hide, expect no gain)"
if [[ $(id -u) -eq 0 ]] && ip netns list >/dev/null 2>&1; then
    step "bringing up an emulated cluster: 2 nodes, 1 Gbit/s links"
    trap 'step "tearing the cluster down"; scripts/cluster/tnbc-cluster down --name "$NAME" >/dev/null 2>&1 || true' EXIT
    trap 'exit 130' INT TERM
    scripts/cluster/tnbc-cluster up -n 2 --rate 1gbit --name "$NAME" > "$OUT/cluster.log" 2>&1 ||
        { cat "$OUT/cluster.log"; exit 1; }
    # shellcheck disable=SC1090
    source "/run/tnbc-cluster/$NAME/env"
    where="2 emulated nodes x 1 rank, 1 Gbit/s links"
else
    step "not root or no network namespaces: running on one node instead of an emulated cluster"
    export OMPI_MCA_btl=self,vader OMPI_MCA_oob_tcp_if_include=lo
fi
MPIRUN=(timeout -k 5 600 mpirun --oversubscribe -np 2)

field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" "$2"; }
median() { sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }

step "plain run of fft3d (${APP[*]:1}) on $where"
"${MPIRUN[@]}" "${APP[@]}" > "$OUT/plain-0.out"
field check "$OUT/plain-0.out" | grep -qx ok || { cat "$OUT/plain-0.out"; exit 1; }

step "trace run: tnbc trace -o $OUT/fft3d.db -- mpirun ..."
$T trace -o "$OUT/fft3d.db" -- "${MPIRUN[@]}" "${APP[@]}" > "$OUT/trace.out"

step "analysis: tnbc analyze $OUT/fft3d.db -o $OUT/fft3d.profile"
$T analyze "$OUT/fft3d.db" -o "$OUT/fft3d.profile" | sed 's/^/    /'

for r in $(seq 1 "$REPS"); do
    step "repetition $r/$REPS: plain, then tuned (tnbc run -p $OUT/fft3d.profile -- mpirun ...)"
    "${MPIRUN[@]}" "${APP[@]}" > "$OUT/plain-$r.out"
    $T run -p "$OUT/fft3d.profile" --summary "$OUT/replay-$r.d" -- "${MPIRUN[@]}" "${APP[@]}" > "$OUT/tuned-$r.out"
    for m in plain tuned; do
        field check "$OUT/$m-$r.out" | grep -qx ok || { echo "$m run failed its check"; cat "$OUT/$m-$r.out"; exit 1; }
    done
done

step "report: predicted (trace) against measured (tuned run 1) -> $OUT/report/"
$T merge "$OUT/replay.db" "$OUT/replay-1.d" > /dev/null
$T report "$OUT/fft3d.db" "$OUT/replay.db" -p "$OUT/fft3d.profile" -o "$OUT/report" > "$OUT/report.txt" 2>&1 ||
    echo "    (report failed, see $OUT/report.txt)"

p=$(for r in $(seq 1 "$REPS"); do field t_total "$OUT/plain-$r.out"; done | median)
t=$(for r in $(seq 1 "$REPS"); do field t_total "$OUT/tuned-$r.out"; done | median)
c=$(for r in $(seq 1 "$REPS"); do field t_coll "$OUT/plain-$r.out"; done | median)
echo
echo "fft3d on $where, median of $REPS runs (seconds per iteration):"
awk -v p="$p" -v t="$t" -v c="$c" 'BEGIN {
    printf "  %-10s %-10s %-8s %-14s %s\n", "plain", "tuned", "speedup", "coll. (plain)", "hidden share of collective time"
    printf "  %-10.4f %-10.4f %-8.3f %-14.4f %.0f%%\n", p, t, p / t, c, 100 * (p - t) / c }'
echo
echo "profile:  $OUT/fft3d.profile"
echo "report:   $OUT/report.txt and plots in $OUT/report/"
echo "traces:   $OUT/fft3d.db (trace), $OUT/replay-*.d (tuned runs' summaries)"
