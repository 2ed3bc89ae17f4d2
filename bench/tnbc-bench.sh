#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# make bench-tnbc: every application plain, in its hand-written MPI-3
# variant, traced, and tuned by tnbc (trace -> analyze -> run), interleaved
# on a fresh emulated cluster; then predicted against measured overlap.
# Environment: BENCH_NODES, BENCH_SLOTS, BENCH_RATE, BENCH_REPS (see
# bench/bench-apps.sh). Extra arguments go to bench/run-apps.
set -uo pipefail
cd "$(dirname "$0")/.."
export TNBC_BUILD=$PWD/${BUILD:-build}
# 200 Mbit/s by default: the highest rate at which the emulated links, not
# this machine's CPUs, limit TCP (docs/cluster.md, "Achieved bandwidth").
export BENCH_RATE=${BENCH_RATE:-200mbit}
T=$PWD/scripts/tnbc
bench/bench-apps.sh --modes plain,ialltoall,trace,tuned \
    --mode trace="$T trace -o {out}/{app}.db --" --mode-reps trace=1 \
    --after trace="$T analyze {out}/{app}.db -o {out}/{app}.profile --comm-cpu-share {share}" \
    --mode tuned="$T run -p {out}/{app}.profile --summary {out}/{app}-replay-{rep}.d --" "$@" || exit 1
/usr/bin/python3 bench/tnbc-compare "${BUILD:-build}/bench/apps/latest"
