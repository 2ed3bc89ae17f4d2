#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Trace overhead: the Alltoall loop of bench/trace/a2a_read.c run plain and
# under LD_PRELOAD of libtnbc-trace.so, each configuration REPS times
# (interleaved, so that load on the machine spreads over all of them).
# Reports per configuration the median loop time, its spread (min-max), the
# ratio to plain, the overhead per call (over all ITERS calls) and per
# traced call, and the fault and mprotect costs the library measured
# (run.fault_ns, run.mprotect_ns, median over runs and ranks), and the
# guard's fault and single-step costs measured alone (step_cost.c).
#
#   BENCH_NP=4 BENCH_BLOCK=65536 BENCH_ITERS=200 BENCH_REPS=5 bench/trace/run.sh
#
# Results: $BUILD/bench/trace/results.txt (and raw.csv next to it).
set -uo pipefail
cd "$(dirname "$0")/../.."
T_SUITE=bench-trace
source test/lib.sh                    # Open MPI settings for one host, t_mpirun
B=${BUILD:-build}
NP=${BENCH_NP:-4}
BLOCK=${BENCH_BLOCK:-65536}
ITERS=${BENCH_ITERS:-200}
REPS=${BENCH_REPS:-5}
T_TIMEOUT=${BENCH_TIMEOUT:-600}
LIB=$PWD/$B/lib/libtnbc-trace.so
PROG=$B/bench/trace/a2a_read
OUT=$B/bench/trace
W=$(mktemp -d /tmp/tnbc-bench-trace.XXXXXX)
trap 'rm -rf "$W"' EXIT
mkdir -p "$OUT"

# name | buffers | K (traced calls per site; "-" = not preloaded) | extra env
CONFIGS=(
    "plain|malloc|-|"
    "trace K=0|malloc|0|"
    "trace K=8 (default)|malloc|8|"
    "trace K=8, no send guards|malloc|8|TNBC_TRACE_SEND=0"
    "trace K=8, REARM_MAX=64|malloc|8|TNBC_TRACE_REARM_MAX=64"
    "plain, page-aligned|page|-|"
    "trace K=8, page-aligned|page|8|"
    "trace K=$ITERS (all), page-aligned|page|$ITERS|"
)

# run_config IDX REP: one run; appends "idx,rep,seconds,fault_ns,mprotect_ns" to raw.csv.
run_config() {
    local idx=$1 rep=$2 name bufs k extra line secs fault="" mp="" envs=()
    IFS='|' read -r name bufs k extra <<<"${CONFIGS[$idx]}"
    if [[ $k != - ]]; then
        rm -rf "$W/d"
        envs=(-x LD_PRELOAD="$LIB" -x TNBC_TRACE_DIR="$W/d" -x TNBC_TRACE_MAX_CALLS="$k")
        [[ -n $extra ]] && envs+=(-x "$extra")
    fi
    local t0=$SECONDS
    line=$(t_mpirun "$NP" "${envs[@]}" "$PROG" "$BLOCK" "$ITERS" "$bufs" 2>"$W/err") || {
        echo "bench-trace: '$name' failed (exit $?):" >&2; tail -n 5 "$W/err" >&2; return 1; }
    secs=$(awk '{for (i = 1; i < NF; i++) if ($i == "seconds") print $(i + 1)}' <<<"$line")
    [[ $line == *"errors 0 "* && -n $secs ]] || { echo "bench-trace: '$name': $line" >&2; return 1; }
    if [[ $k != - ]]; then
        fault=$(for db in "$W"/d/rank-*.db; do sqlite3 "$db" "SELECT fault_ns FROM run"; done | tr '\n' ' ')
        mp=$(for db in "$W"/d/rank-*.db; do sqlite3 "$db" "SELECT mprotect_ns FROM run"; done | tr '\n' ' ')
    fi
    echo "$idx,$rep,$secs,$fault,$mp,$((SECONDS - t0))" >>"$OUT/raw.csv"
}

echo "bench-trace: $NP ranks, $BLOCK-byte blocks, $ITERS calls, $REPS runs per configuration, $(nproc) cores"
echo "idx,rep,seconds,fault_ns(per rank),mprotect_ns(per rank),wall_s" >"$OUT/raw.csv"
STEP=$("$B/bench/trace/step_cost") || { echo "bench-trace: step_cost failed" >&2; exit 1; }
for ((rep = 1; rep <= REPS; rep++)); do
    for idx in "${!CONFIGS[@]}"; do
        run_config "$idx" "$rep" || exit 1
    done
    echo "  run $rep of $REPS done"
done

# The table: medians over runs, overhead against the plain run with the
# same buffers.
{
    echo "# make bench-trace: $NP ranks, MPI_Alltoall of $BLOCK B blocks, $ITERS calls, reading every block;"
    echo "# $REPS runs per configuration, median [min-max]; $(nproc) cores, $(date -u +%Y-%m-%dT%H:%MZ)"
    /usr/bin/python3 - "$OUT/raw.csv" "$ITERS" "${CONFIGS[@]}" <<'EOF'
import csv, statistics, sys
raw, iters, configs = sys.argv[1], int(sys.argv[2]), [c.split('|') for c in sys.argv[3:]]
rows = list(csv.reader(open(raw)))[1:]
secs = {i: [float(r[2]) for r in rows if int(r[0]) == i] for i in range(len(configs))}
def nums(col):
    return [float(x) for r in rows for x in r[col].split() if x]
med = {i: statistics.median(v) for i, v in secs.items()}
plain = {c[1]: med[i] for i, c in enumerate(configs) if c[2] == '-'}
low = {i: min(v) for i, v in secs.items()}
plain_low = {c[1]: low[i] for i, c in enumerate(configs) if c[2] == '-'}
print(f"{'configuration':34} {'median s':>8} {'[min-max]':>17} {'ratio':>5} {'us/call':>7}"
      f" {'ms/traced call':>14} {'(from minima)':>13}")
for i, (name, bufs, k, extra) in enumerate(configs):
    v, base = secs[i], plain[bufs]
    over, over_low = med[i] - base, low[i] - plain_low[bufs]
    traced = min(int(k), iters) if k != '-' else 0
    col = lambda x: f"{x:14.2f}" if traced else f"{'-':>14}"
    print(f"{name:34} {med[i]:8.3f} [{min(v):7.3f}-{max(v):7.3f}] {med[i] / base:5.2f} "
          f"{over / iters * 1e6 if k != '-' else 0:7.0f} {col(over / max(traced, 1) * 1e3)}"
          f" {col(over_low / max(traced, 1) * 1e3)[1:]}")
f, m = nums(3), nums(4)
if f:
    print(f"measured by the library (median over {len(f)} rank runs): "
          f"fault {statistics.median(f) / 1e3:.1f} us [{min(f) / 1e3:.1f}-{max(f) / 1e3:.1f}], "
          f"mprotect {statistics.median(m) / 1e3:.1f} us [{min(m) / 1e3:.1f}-{max(m) / 1e3:.1f}]")
EOF
    echo "guard alone (bench/trace/step_cost, median [min-max] of 15 rounds, ns): $STEP"
} | tee "$OUT/results.txt"
