#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# make bench-apps: every application plain and in its hand-written MPI-3
# variant, on a fresh emulated cluster (BENCH_NODES x BENCH_SLOTS ranks, links
# at BENCH_RATE), or on this machine alone when namespaces are not available.
# Extra arguments go to bench/run-apps (e.g. --reps 9 --apps micro-a).
set -uo pipefail
cd "$(dirname "$0")/.."
nodes=${BENCH_NODES:-2} slots=${BENCH_SLOTS:-1} rate=${BENCH_RATE:-1gbit}
name=bench$$; name=${name:0:8}
cl=scripts/cluster/tnbc-cluster
if "$cl" up --name "$name" -n "$nodes" --slots "$slots" --rate "$rate" &&
   grep -q MODE=netns "${TNBC_CLUSTER_DIR:-/run/tnbc-cluster}/$name/config" 2>/dev/null; then
    trap '"$cl" down --name "$name" >/dev/null' EXIT
    trap 'exit 130' INT TERM
    where=(--cluster "$name")
else
    "$cl" down --name "$name" >/dev/null 2>&1
    echo "bench-apps: no emulated cluster (see above): running on this machine only;" \
         "communication is a memory copy here, so overlap numbers mean little" >&2
    where=(--local)
fi
bench/run-apps "${where[@]}" --np $((nodes * slots)) --reps "${BENCH_REPS:-5}" \
    --modes plain,ialltoall "$@"
