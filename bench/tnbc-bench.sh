#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# make bench-tnbc: every application plain, in its hand-written MPI-3
# variant, traced, and tuned by tnbc, interleaved on a fresh emulated
# cluster, along the path the README gives users: trace -> analyze ->
# trial run -> analyze --measured -> run; then predicted against measured
# overlap. BENCH_TRIAL=0 leaves out the trial run (the model's decisions
# alone). Environment: BENCH_NODES, BENCH_SLOTS, BENCH_RATE, BENCH_REPS
# (see bench/bench-apps.sh). Extra arguments go to bench/run-apps.
set -uo pipefail
cd "$(dirname "$0")/.."
export TNBC_BUILD=$PWD/${BUILD:-build}
# 200 Mbit/s by default: the highest rate at which the emulated links, not
# this machine's CPUs, limit TCP (docs/cluster.md, "Achieved bandwidth").
export BENCH_RATE=${BENCH_RATE:-200mbit}
T=$PWD/scripts/tnbc
analyze="$T analyze {out}/{app}.db -o {out}/{app}.profile --comm-cpu-share {share}"
case ${BENCH_TRIAL:-1} in
    1) # The model's profile is kept as {app}.model.profile; the trial
       # run's summary ({app}-trial.d) then decides the sites it ran early
       # (docs/analyzer.md, "Trial runs") in {app}.profile.
       modes=plain,ialltoall,trace,trial,tuned
       trial=(--mode trial="env TNBC_REPLAY_TRIAL=1 $T run -p {out}/{app}.profile --summary {out}/{app}-trial.d --"
              --mode-reps trial=1
              --after trial="cp {out}/{app}.profile {out}/{app}.model.profile && $analyze --measured {out}/{app}-trial.d") ;;
    0) modes=plain,ialltoall,trace,tuned trial=() ;;
    *) echo "tnbc-bench: BENCH_TRIAL must be 0 or 1, not '$BENCH_TRIAL'" >&2; exit 2 ;;
esac
bench/bench-apps.sh --modes "$modes" \
    --mode trace="$T trace -o {out}/{app}.db --" --mode-reps trace=1 \
    --after trace="$analyze" "${trial[@]}" \
    --mode tuned="$T run -p {out}/{app}.profile --summary {out}/{app}-replay-{rep}.d --" "$@" || exit 1
/usr/bin/python3 bench/tnbc-compare "${BUILD:-build}/bench/apps/latest"
