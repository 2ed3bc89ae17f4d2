#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# What tracing costs an ordinary program and how well the trace measures
# it: bench/ordinary traced with tnbc, per block size and alignment. One
# run gives both sides: the program reports its cycle and consumption rate
# over its first iterations (the traced ones: the first K = 8 calls of the
# site) and over the rest (untraced), so load on the machine hits both
# alike. Prints one line per run:
#   block aligned cycle_traced cycle_plain ratio RCRC rate_plain RCRC/rate confidence
#   control vs_plain_run
# control: the same split of a run without tnbc made just before (its
# first iterations' cycle over the rest's): 1 where the machine's pace
# does not change within a run. At 4 ranks on 2 CPUs with 256 KiB blocks
# it does: the alltoall of a plain run took 2.5-2.8 ms in its first 15-32
# iterations and 1.3-1.6 after in 2 of 6 runs (2026-12-01), which `ratio`
# would count as the trace's cost. vs_plain_run: the traced run's first
# iterations against that plain run's, the same iterations of two runs
# (noisier, not biased by a change of pace within a run).
# Usage: bench/ordinary-trace.sh [NP] [REPS] [BLOCKS...]   (BUILD=build)
#   HEAD=K traces K calls (TNBC_TRACE_MAX_CALLS, --head; default 8) of
#   3K+16 iterations (at least 40; 20 from 1 MiB with K=8): more traced
#   calls make the traced median steadier.
set -u
BUILD=${BUILD:-build}
NP=${1:-4}; REPS=${2:-3}; shift 2 2>/dev/null
BLOCKS=${*:-16384 65536 262144 1048576 4194304}
HEAD=${HEAD:-8}
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
MPI=(mpirun -np "$NP" --oversubscribe --mca mpi_yield_when_idle 1)
printf '%-8s %-7s %-12s %-12s %-6s %-10s %-10s %-9s %-10s %-7s %s\n' block aligned cycle_traced \
    cycle_plain ratio RCRC rate_plain RCRC/rate confidence control vs_plain_run
for rep in $(seq "$REPS"); do
  for b in $BLOCKS; do
    for al in "" --aligned; do
      iters=$(( b >= 1048576 ? 20 : 40 ))
      (( HEAD != 8 )) && iters=$(( 3 * HEAD + 16 > 40 ? 3 * HEAD + 16 : 40 ))
      plain=$(timeout 300 "${MPI[@]}" "$BUILD/bench/ordinary" --block "$b" --iters "$iters" \
              --head "$HEAD" $al 2>&1 | grep '^ORDINARY') || { echo "plain run failed: $b $al"; continue; }
      out=$(TNBC_TRACE_MAX_CALLS=$HEAD timeout 300 scripts/tnbc trace -o "$W/t.db" -- "${MPI[@]}" \
            "$BUILD/bench/ordinary" --block "$b" --iters "$iters" --head "$HEAD" $al 2>&1 |
            grep '^ORDINARY') || { echo "run failed: $b $al"; continue; }
      timeout 120 scripts/tnbc analyze "$W/t.db" -o "$W/t.prof" > "$W/an.txt" 2>&1 || { echo "analyze failed"; continue; }
      line=$(grep -A12 ' alltoall$' "$W/t.prof")
      rcrc=$(sed -n 's/.* rcrc \([^ ]*\) .*/\1/p' <<< "$line")
      conf=$(sed -n 's/.*# confidence \([^ ]*\).*/\1/p' <<< "$line")
      get() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<< "${2:-$out}"; }
      /usr/bin/python3 - "$b" "${al:+1}" "$(get cycle_head)" "$(get cycle_rest)" "$rcrc" \
          "$(get rate_rest)" "${conf:-?}" "$(get cycle_head "$plain")" "$(get cycle_rest "$plain")" <<'PY'
import sys
b, al, ch, cr, rcrc, rate, conf, ph, pr = sys.argv[1:]
ch, cr, rcrc, rate, ph, pr = float(ch), float(cr), float(rcrc), float(rate), float(ph), float(pr)
print(f"{b:<8} {al or '0':<7} {ch:<12.6f} {cr:<12.6f} {ch / cr:<6.2f} {rcrc:<10.3e} "
      f"{rate:<10.3e} {rcrc / rate:<9.2f} {conf:<10} {ph / pr:<7.2f} {ch / ph:.2f}")
PY
    done
  done
done
