#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# make bench-ibconn: the model's tables on the host, then memory, latency,
# bandwidth and time-to-first-message on soft-RoCE in the VM bench.
# Results: $BUILD/bench/ibconn/*.txt (numbers quoted in docs/ibconn.md).
cd "$(dirname "$0")/../../.." || exit 1
B=${BUILD:-build}
out=$B/bench/ibconn
mkdir -p "$out"
"$B/bin/tnbc-connmodel" --paper | tee "$out/model-paper.txt"
"$B/bin/tnbc-connmodel" --sweep -c 4 --s1 8192 | tee "$out/model-sweep.txt"
if [[ ! -s ${TNBC_VM_DIR:-build/vm}/KVER ]]; then
    echo "bench-ibconn: no guest kernel (make deps); VM benchmarks skipped"; exit 0
fi
status=0
for part in ${TNBC_IBCONN_BENCH_PARTS:-first perf mem}; do
    echo "== VM: $part"
    scripts/vm/run -t 590 -c 2 -m 2048 -e BUILD="$B" \
        libcomm/ibconn/tests/bench-vm.sh "$part" | tee "$out/$part.txt"
    [[ ${PIPESTATUS[0]} -eq 0 ]] || status=1
done
exit $status
