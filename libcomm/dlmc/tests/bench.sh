#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# bench-dlmc: runs tests/vm-bench.sh in the VM bench and keeps its output
# under $BUILD/bench/dlmc/ (numbers are copied into docs/dlmc.md).
cd "$(dirname "$0")/../../.."
: "${BUILD:=build}"
out=$BUILD/bench/dlmc
mkdir -p "$out"
if [[ ! -x scripts/vm/run || ! -s ${TNBC_VM_DIR:-build/vm}/KVER ]]; then
    echo "bench-dlmc: skipped: no VM bench (scripts/vm/run, make deps)"; exit 0
fi
for mtu in ${TNBC_DLMC_BENCH_MTUS:-1500}; do
    echo "== DLMC bench, MTU $mtu"
    scripts/vm/run -t 590 -m 1536 -e BUILD="$BUILD" -e TNBC_DLMC_BENCH_MTU="$mtu" \
        bash libcomm/dlmc/tests/vm-bench.sh 2>&1 | grep -v '^\s*$' | tee "$out/mtu$mtu.txt"
done
