#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# make demo: the whole tnbc workflow on the FFT-like kernel (and on a Bcast
# kernel), as a new user would run it: a small emulated cluster (or one node
# without root), a plain run, a trace run, the analysis, tuned runs with the
# profile, a report, and a table.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
B=${BUILD:-build}
export TNBC_BUILD=$ROOT/$B
T=scripts/tnbc
OUT=$B/demo
REPS=${DEMO_REPS:-3}
NAME=dm$$; NAME=${NAME:0:8}
# 200 Mbit/s: the rate at which this machine's emulated links, not its CPUs,
# limit TCP (docs/cluster.md, "Achieved bandwidth").
RATE=${DEMO_RATE:-200mbit}
step() { echo "[demo $(date +%H:%M:%S)] $*"; }

rm -rf "$OUT"; mkdir -p "$OUT"
[[ $(id -u) -eq 0 ]] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

where="one node (shared memory: nothing to hide, expect no gain)"
if [[ $(id -u) -eq 0 ]] && ip netns list >/dev/null 2>&1; then
    step "bringing up an emulated cluster: 2 nodes, $RATE links"
    trap 'step "tearing the cluster down"; scripts/cluster/tnbc-cluster down --name "$NAME" >/dev/null 2>&1 || true' EXIT
    trap 'exit 130' INT TERM
    scripts/cluster/tnbc-cluster up -n 2 --rate "$RATE" --name "$NAME" > "$OUT/cluster.log" 2>&1 ||
        { cat "$OUT/cluster.log"; exit 1; }
    # shellcheck disable=SC1090
    source "/run/tnbc-cluster/$NAME/env"
    where="2 emulated nodes x 1 rank, $RATE links"
else
    step "not root or no network namespaces: running on one node instead of an emulated cluster"
    export OMPI_MCA_btl=self,vader OMPI_MCA_oob_tcp_if_include=lo
fi
MPIRUN=(timeout -k 5 600 mpirun --oversubscribe -np 2)

field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" "$2"; }
median() { sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }

# demo_app NAME ARGS...: plain, trace, analyze, REPS x (plain, tuned), report;
# appends "NAME plain tuned coll" to $OUT/table.
demo_app() {
    local name=$1; shift
    local app=("$ROOT/$B/bench/$name" "$@")
    step "$name: plain run (${app[*]:1}) on $where"
    "${MPIRUN[@]}" "${app[@]}" > "$OUT/$name-plain-0.out"
    field check "$OUT/$name-plain-0.out" | grep -qx ok || { cat "$OUT/$name-plain-0.out"; exit 1; }

    step "$name: trace run: tnbc trace -o $OUT/$name.db -- mpirun ..."
    $T trace -o "$OUT/$name.db" -- "${MPIRUN[@]}" "${app[@]}" > "$OUT/$name-trace.out"

    step "$name: analysis: tnbc analyze $OUT/$name.db -o $OUT/$name.profile"
    $T analyze "$OUT/$name.db" -o "$OUT/$name.profile" | grep -v ': off: tiny' | sed 's/^/    /'

    # README's optional check: a trial run in which half the calls of a
    # tuned site run blocking; a site whose early calls were not faster
    # is turned off, and a `trial` site (off by the model's timing alone)
    # whose early calls were faster is turned on (docs/analyzer.md, --measured).
    if grep -q -e '^  decision on' -e '^  trial$' "$OUT/$name.profile"; then
        step "$name: trial run (TNBC_REPLAY_TRIAL=1 tnbc run ... --summary $OUT/$name-trial.d), then tnbc analyze ... --measured"
        TNBC_REPLAY_TRIAL=1 $T run -p "$OUT/$name.profile" --summary "$OUT/$name-trial.d" -- \
            "${MPIRUN[@]}" "${app[@]}" > "$OUT/$name-trial.out"
        field check "$OUT/$name-trial.out" | grep -qx ok || { cat "$OUT/$name-trial.out"; exit 1; }
        $T analyze "$OUT/$name.db" -o "$OUT/$name.profile" --measured "$OUT/$name-trial.d" |
            grep -v ': off: tiny' | sed 's/^/    /'
    fi

    for r in $(seq 1 "$REPS"); do
        step "$name: repetition $r/$REPS: plain, tuned (tnbc run -p $OUT/$name.profile -- mpirun ...), then tnbc auto -- mpirun ..."
        "${MPIRUN[@]}" "${app[@]}" > "$OUT/$name-plain-$r.out"
        $T run -p "$OUT/$name.profile" --summary "$OUT/$name-replay-$r.d" -- "${MPIRUN[@]}" "${app[@]}" \
            > "$OUT/$name-tuned-$r.out"
        # The one-command way in, next to the three steps: tnbc auto learns
        # the sites in the run itself.
        $T auto --profile-out "$OUT/$name-auto.profile" -- "${MPIRUN[@]}" "${app[@]}" \
            > "$OUT/$name-auto-$r.out" 2> "$OUT/$name-auto-$r.err"
        for m in plain tuned auto; do
            field check "$OUT/$name-$m-$r.out" | grep -qx ok ||
                { echo "$m run failed its check"; cat "$OUT/$name-$m-$r.out"; exit 1; }
        done
    done

    step "$name: report, predicted (trace) against measured (tuned run 1) -> $OUT/$name-report/"
    $T merge "$OUT/$name-replay.db" "$OUT/$name-replay-1.d" > /dev/null
    $T report "$OUT/$name.db" "$OUT/$name-replay.db" -p "$OUT/$name.profile" -o "$OUT/$name-report" \
        > "$OUT/$name-report.txt" 2>&1 || echo "    (report failed, see $OUT/$name-report.txt)"

    local p t c a
    p=$(for r in $(seq 1 "$REPS"); do field t_total "$OUT/$name-plain-$r.out"; done | median)
    t=$(for r in $(seq 1 "$REPS"); do field t_total "$OUT/$name-tuned-$r.out"; done | median)
    c=$(for r in $(seq 1 "$REPS"); do field t_coll "$OUT/$name-plain-$r.out"; done | median)
    a=$(for r in $(seq 1 "$REPS"); do field t_total "$OUT/$name-auto-$r.out"; done | median)
    echo "$name $p $t $c $a" >> "$OUT/table"
}

: > "$OUT/table"
# The FFT-like kernel reads the transposed blocks at once, in order: little
# to hide. The integer sort ranks its buckets in order as they arrive. The
# Bcast kernel reads its chunks in the order {3,1,2,0} while computing: the
# priorities let it start on chunk 3 first.
demo_app fft3d --n "${DEMO_N:-128}" --iters "${DEMO_ITERS:-3}" --warmup 1
demo_app isort --keys 2097152 --maxkey 1048576 --iters 4 --warmup 1
demo_app bcastread --bytes 8388608 --chunks 4 --order 3,1,2,0 --crc-us 300000 --iters 4 --warmup 1

echo
echo "On $where, median of $REPS runs, seconds per iteration;"
echo "under each kernel, its call sites' decisions in the profile the tuned runs used:"
scripts/demo-table "$OUT/table" "$OUT"
echo
echo "profiles: $OUT/fft3d.profile $OUT/isort.profile $OUT/bcastread.profile"
echo "reports:  $OUT/*-report.txt, plots in $OUT/*-report/"
echo "traces:   $OUT/*.db (trace and merged replay summaries), $OUT/*-replay-*.d"
