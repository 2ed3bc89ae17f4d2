#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# make bench-auto: tnbc auto next to plain, the hand-written MPI-3 variant
# and the three-step workflow (trace -> analyze -> run), interleaved on a
# fresh emulated cluster, 64 calls per site (bench/apps-auto.conf).
# Environment as bench/tnbc-bench.sh (BENCH_NODES, BENCH_SLOTS, BENCH_RATE,
# BENCH_REPS); extra arguments go to bench/run-apps (e.g. --apps micro-a).
# auto gets the calibrated CPU share (TNBC_AUTO_COMM_CPU_SHARE) as the
# three-step workflow's analysis does (--comm-cpu-share): on the emulated
# cluster, one machine, auto would otherwise turn every site off by the
# crowded rule where the cluster's ranks outnumber its CPUs.
set -uo pipefail
cd "$(dirname "$0")/.."
export TNBC_BUILD=$PWD/${BUILD:-build}
export BENCH_RATE=${BENCH_RATE:-200mbit}
T=$PWD/scripts/tnbc
bench/bench-apps.sh --config bench/apps-auto.conf --modes plain,ialltoall,trace,tuned,auto \
    --mode trace="$T trace -o {out}/{app}.db --" --mode-reps trace=1 \
    --after trace="$T analyze {out}/{app}.db -o {out}/{app}.profile --comm-cpu-share {share}" \
    --mode tuned="$T run -p {out}/{app}.profile --" \
    --mode auto="env TNBC_AUTO_COMM_CPU_SHARE={share} $T auto --profile-out {out}/{app}-auto-{rep}.profile --summary {out}/{app}-auto-{rep}.d --" "$@"
