#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# make bench-replay: the costs of the replay runtime's choices (docs/replay.md).
#  1. landing: /proc/self/mem writes into guarded pages against memcpy;
#  2. pass-through: libtnbc-replay.so with no profile, and with
#     TNBC_DISABLE=1, against no library, on a loop of small collectives,
#     runs interleaved, median of REPS.
set -uo pipefail
cd "$(dirname "$0")/../.."
B=${BUILD:-build}
REPS=${BENCH_REPS:-7}
OUT=$B/bench/replay; mkdir -p "$OUT"
[[ $(id -u) -eq 0 ]] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader OMPI_MCA_oob_tcp_if_include=lo

echo "== landing cost: $B/libreplay/bench/land_cost 200"
"$B/libreplay/bench/land_cost" 200 | tee "$OUT/land_cost.txt"

echo "== pass-through: coll_loop 300000 on 2 ranks, $REPS interleaved repetitions"
LIB=$PWD/$B/lib/libtnbc-replay.so
run() { timeout 300 mpirun --oversubscribe -np 2 "$@" "$B/libreplay/bench/coll_loop" 300000 |
        sed -n 's/coll_loop: \([0-9.]*\) seconds.*/\1/p'; }
: > "$OUT/passthrough.csv"
for r in $(seq 1 "$REPS"); do
    echo "plain,$(run)" >> "$OUT/passthrough.csv"
    echo "noprofile,$(run -x LD_PRELOAD="$LIB")" >> "$OUT/passthrough.csv"
    echo "disabled,$(run -x LD_PRELOAD="$LIB" -x TNBC_DISABLE=1)" >> "$OUT/passthrough.csv"
done
/usr/bin/python3 - "$OUT/passthrough.csv" <<'PY' | tee "$OUT/passthrough.txt"
import csv, statistics, sys
rows = {}
for mode, t in csv.reader(open(sys.argv[1])):
    rows.setdefault(mode, []).append(float(t))
base = statistics.median(rows["plain"])
for mode, ts in rows.items():
    m = statistics.median(ts)
    print(f"{mode:<10} median {m:.4f} s  min {min(ts):.4f}  max {max(ts):.4f}  vs plain {100 * (m / base - 1):+.2f}%")
PY
