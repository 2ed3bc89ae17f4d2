#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Communicators: collectives on sub-communicators go early, one site per
# communicator shape, with results bit-identical to a plain run; freed
# communicators and inter-communicators are handled. Every run is bounded;
# the profiles turn every site on, so verdicts do not depend on load.
set -u
cd "$(dirname "$0")/.."
source test/lib.sh
export TNBC_BUILD=$PWD/$BUILD
TNBC=scripts/tnbc
P=$BUILD/test/comm
BUILD_TSAN=${BUILD_TSAN:-build-tsan}
W=$(mktemp -d /tmp/tnbc-comm-test.XXXXXX)
trap 'rm -rf "$W"' EXIT
q() { sqlite3 -batch -noheader "$1" "$2"; }

# pipeline NAME NP PROGRAM ARGS...: plain, trace, analyze, replay with every
# decision forced on (as in test/replay.sh); the tuned run's stderr is kept.
# Leaves $W/NAME.{plain,tuned,err,db,profile} and $W/NAME.summary.d.
pipeline() {
    local name=$1 np=$2; shift 2
    t_mpirun "$np" "$@" > "$W/$name.plain" || { echo "plain run failed"; cat "$W/$name.plain"; return 1; }
    $TNBC trace -o "$W/$name.db" -- timeout -k 5 "$T_TIMEOUT" mpirun --oversubscribe -np "$np" "$@" \
        > /dev/null || { echo "trace run failed"; return 1; }
    $TNBC analyze "$W/$name.db" -o "$W/$name.auto.profile" > /dev/null || { echo "analyze failed"; return 1; }
    sed -E 's/^  decision off .*/  decision on forced by the comm test/' "$W/$name.auto.profile" > "$W/$name.profile"
    $TNBC run -p "$W/$name.profile" --summary "$W/$name.summary.d" -- \
        timeout -k 5 "$T_TIMEOUT" mpirun --oversubscribe -np "$np" "$@" > "$W/$name.tuned" 2> "$W/$name.err" ||
        { echo "tuned run failed"; cat "$W/$name.tuned" "$W/$name.err"; return 1; }
    if ! cmp -s "$W/$name.plain" "$W/$name.tuned"; then
        echo "results differ:"; diff "$W/$name.plain" "$W/$name.tuned"; return 1
    fi
}

# The shape name of a communicator whose members are these world ranks,
# computed here from its definition (docs/schema.md): FNV-1a (32 bits) over
# the little-endian bytes of the size, then of each member's world rank.
shape() {
    /usr/bin/python3 - "$@" <<'PY'
import struct, sys
ranks = [int(x) for x in sys.argv[1:]]
h = 2166136261
for v in [len(ranks)] + ranks:
    for b in struct.pack("<I", v):
        h = ((h ^ b) * 16777619) & 0xffffffff
print("c%d.%08x" % (len(ranks), h))
PY
}

# rows NAME RANK: "shape calls traced" of rank RANK's alltoall sites in the
# replay summary, sorted.
rows() {
    q "$W/$1.summary.d/rank-00000$2.db" \
        "SELECT comm_shape || ' ' || calls || ' ' || traced FROM site WHERE op='alltoall' ORDER BY 1"
}

# 2x2 grid: rank r is in row {2(r/2), 2(r/2)+1} and column {r%2, r%2+2};
# 4 steps, each one row and one column transpose, all of them early.
check_fft() {
    pipeline fft 4 "$P/comm_fft" 4 || return 1
    [[ $(grep -c '^comm_fft: rank . hash' "$W/fft.tuned") -eq 4 ]] || { echo "no hashes"; return 1; }
    local r row col want got
    for r in 0 1 2 3; do
        row=$(shape $((r / 2 * 2)) $((r / 2 * 2 + 1)))
        col=$(shape $((r % 2)) $((r % 2 + 2)))
        want=$(printf '%s 4 4\n%s 4 4\n' "$row" "$col" | sort)
        got=$(rows fft $r)
        [[ $got == "$want" ]] || { echo "rank $r: summary rows '$got', want '$want'"; return 1; }
    done
}

# The transposes are one code address: the trace, the profile and the
# summary have one entry per shape for it (4 shapes, 2 per rank), with the
# same ids in the trace run and the tuned run.
check_shared_site() {
    [[ -f $W/fft.db ]] || { echo "needs check_fft's files"; return 1; }
    local addrs ids sids
    addrs=$(q "$W/fft.db" "SELECT DISTINCT substr(site, 1, instr(site, '@') - 1) FROM site WHERE op='alltoall'")
    [[ $(wc -l <<< "$addrs") -eq 1 && $addrs == comm_fft+0x* ]] || { echo "addresses: $addrs"; return 1; }
    ids=$(q "$W/fft.db" "SELECT DISTINCT site FROM site WHERE op='alltoall' ORDER BY 1")
    [[ $(wc -l <<< "$ids") -eq 4 ]] || { echo "trace sites: $ids"; return 1; }
    [[ $(grep -c "^site $addrs@c2\.[0-9a-f]\{8\} alltoall$" "$W/fft.profile") -eq 4 ]] ||
        { echo "profile entries:"; grep '^site' "$W/fft.profile"; return 1; }
    sids=$(for f in "$W"/fft.summary.d/rank-*.db; do q "$f" "SELECT site FROM site WHERE op='alltoall'"; done | sort -u)
    [[ $sids == "$ids" ]] || { echo "summary sites differ from the trace's: $sids"; return 1; }
}

# Each round frees its communicator right after the Alltoall, before
# reading; the program checks every element against the sender's pattern.
# 4 rounds on each half, all early; then one inter-communicator Alltoall,
# blocking, said once per rank.
check_free() {
    pipeline free 4 "$P/comm_free" 4 || return 1
    grep -qx 'comm_free: ok' "$W/free.tuned" || { cat "$W/free.tuned"; return 1; }
    local r want got
    for r in 0 1 2 3; do
        want="$(shape $((r % 2)) $((r % 2 + 2))) 4 4"
        got=$(rows free $r)
        [[ $got == "$want" ]] || { echo "rank $r: summary rows '$got', want '$want'"; return 1; }
    done
    [[ $(grep -c 'collectives on an inter-communicator .* run blocking' "$W/free.err") -eq 4 ]] ||
        { echo "inter-communicator not reported once per rank:"; cat "$W/free.err"; return 1; }
    [[ $(grep -c 'inter-communicator' "$W/free.err") -eq 4 ]] || { cat "$W/free.err"; return 1; }
}

# The same grid in Fortran with `use mpi_f08` (Open MPI's mpi_*_f08
# symbols), plus an in-place integer Allreduce on the row: bit-identical,
# every call early; the point-to-point wrappers pass rank 3's hash to rank
# 0 round the ring and rank 0's from rank 1.
check_f08() {
    pipeline f08 4 "$P/comm_fft_f08" 4 || return 1
    [[ $(grep -c '^comm_fft_f08: rank . hash' "$W/f08.tuned") -eq 4 ]] || { echo "no hashes"; return 1; }
    local h0 h3
    h0=$(sed -n 's/^comm_fft_f08: rank 0 hash //p' "$W/f08.tuned")
    h3=$(sed -n 's/^comm_fft_f08: rank 3 hash //p' "$W/f08.tuned")
    grep -qx "comm_fft_f08: ring $h3 $h0" "$W/f08.tuned" || { echo "ring wrong:"; cat "$W/f08.tuned"; return 1; }
    local r row col want got
    for r in 0 1 2 3; do
        row=$(shape $((r / 2 * 2)) $((r / 2 * 2 + 1)))
        col=$(shape $((r % 2)) $((r % 2 + 2)))
        want=$(printf 'alltoall %s 4 4\nalltoall %s 4 4\nallreduce %s 1 1\n' "$row" "$col" "$row" | sort)
        got=$(q "$W/f08.summary.d/rank-00000$r.db" "SELECT op || ' ' || comm_shape || ' ' || calls || ' ' ||
                 traced FROM site WHERE op IN ('alltoall', 'allreduce') ORDER BY 1")
        [[ $got == "$want" ]] || { echo "rank $r: summary rows '$got', want '$want'"; return 1; }
    done
}

# One call site on communicators made by dup (MPI_COMM_WORLD's shape: the
# plain site), create (odd ranks), create_group (even ranks) and Cart_sub
# (rows of a 2x2 grid): 2 rounds each, all early, every element checked.
check_kinds() {
    pipeline kinds 4 "$P/comm_kinds" 2 || return 1
    grep -qx 'comm_kinds: ok' "$W/kinds.tuned" || { cat "$W/kinds.tuned"; return 1; }
    local r want got
    for r in 0 1 2 3; do
        want=$(printf 'world 2 2\n%s 2 2\n%s 2 2\n' "$(shape $((r % 2)) $((r % 2 + 2)))" \
            "$(shape $((r / 2 * 2)) $((r / 2 * 2 + 1)))" | sort)
        got=$(rows kinds $r)
        [[ $got == "$want" ]] || { echo "rank $r: summary rows '$got', want '$want'"; return 1; }
    done
}

# MPI_IN_PLACE on alltoall, alltoallv, allgather, allgatherv and allreduce,
# on MPI_COMM_WORLD and on a half: 2 rounds each, every one early, every
# element checked against the senders' patterns.
check_inplace() {
    pipeline ip 4 "$P/inplace" 2 || return 1
    grep -qx 'inplace: ok' "$W/ip.tuned" || { cat "$W/ip.tuned"; return 1; }
    local r op want got
    for r in 0 1 2 3; do
        want=$(for op in alltoall alltoallv allgather allgatherv allreduce; do
                   echo "$op world 2 2"; echo "$op $(shape $((r % 2)) $((r % 2 + 2))) 2 2"
               done | sort)
        got=$(q "$W/ip.summary.d/rank-00000$r.db" "SELECT op || ' ' || comm_shape || ' ' || calls || ' ' ||
                 traced FROM site WHERE op != 'reduce' ORDER BY 1")
        [[ $got == "$want" ]] || { echo "rank $r: summary rows '$got', want '$want'"; return 1; }
    done
}

# MPI_Scatter and MPI_Scatterv (root in place), root rotating, on
# MPI_COMM_WORLD and a half: 4 rounds each, all early, every element
# checked against the root's pattern.
check_scatter() {
    pipeline sc 4 "$P/scatter" 4 || return 1
    grep -qx 'scatter: ok' "$W/sc.tuned" || { cat "$W/sc.tuned"; return 1; }
    local r op want got
    for r in 0 1 2 3; do
        want=$(for op in scatter scatterv; do
                   echo "$op world 4 4"; echo "$op $(shape $((r % 2)) $((r % 2 + 2))) 4 4"
               done | sort)
        got=$(q "$W/sc.summary.d/rank-00000$r.db" "SELECT op || ' ' || comm_shape || ' ' || calls || ' ' ||
                 traced FROM site WHERE op LIKE 'scatter%' ORDER BY 1")
        [[ $got == "$want" ]] || { echo "rank $r: summary rows '$got', want '$want'"; return 1; }
    done
}

# MPI_Reduce_scatter_block (int sum) and MPI_Reduce_scatter (long max,
# counts differing by rank), out of place and in place, on MPI_COMM_WORLD
# and a half: those 4 sites x 2 communicators early in both rounds; a
# double-sum Reduce_scatter_block at one more site runs blocking on both,
# with the reason said once per site and rank.
check_redscat() {
    pipeline rsc 4 "$P/redscat" 2 || return 1
    grep -qx 'redscat: ok' "$W/rsc.tuned" || { cat "$W/rsc.tuned"; return 1; }
    local r want got
    for r in 0 1 2 3; do
        got=$(q "$W/rsc.summary.d/rank-00000$r.db" "SELECT count(*) FROM site WHERE op LIKE
                 'reduce_scatter%' AND calls = 2 AND traced = 2")
        [[ $got == 8 ]] || { echo "rank $r: $got early reduce_scatter sites, want 8"; return 1; }
        got=$(q "$W/rsc.summary.d/rank-00000$r.db" "SELECT group_concat(comm_shape, ' ') FROM (SELECT
                 comm_shape FROM site WHERE op = 'reduce_scatter_block' AND calls = 2 AND traced = 0
                 ORDER BY 1)")
        want=$(printf '%s\nworld\n' "$(shape $((r % 2)) $((r % 2 + 2)))" | sort | paste -sd' ')
        [[ $got == "$want" ]] || { echo "rank $r: blocking sites on '$got', want '$want'"; return 1; }
        [[ $(grep -c "^tnbc\[$r\]: reduce_scatter_block at .* runs blocking: floating-point" "$W/rsc.err") -eq 2 ]] ||
            { echo "rank $r: reason not said once per site"; cat "$W/rsc.err"; return 1; }
    done
}

# MPI_Alltoallw with one type for every peer (byte displacements), out of
# place and in place, on MPI_COMM_WORLD and a half: early, recorded as
# alltoallv; with a type per pair: blocking, said once per rank.
check_alltoallw() {
    pipeline aw 4 "$P/alltoallw" 2 || return 1
    grep -qx 'alltoallw: ok' "$W/aw.tuned" || { cat "$W/aw.tuned"; return 1; }
    local r half want got
    for r in 0 1 2 3; do
        half=$(shape $((r % 2)) $((r % 2 + 2)))
        want=$(printf '%s\n' "$half 2 2" "$half 2 2" "world 2 2" "world 2 2" | sort)
        got=$(q "$W/aw.summary.d/rank-00000$r.db" "SELECT comm_shape || ' ' || calls || ' ' || traced
                 FROM site WHERE op = 'alltoallv' ORDER BY 1")
        [[ $got == "$want" ]] || { echo "rank $r: summary rows '$got', want '$want'"; return 1; }
        [[ $(grep -c "^tnbc\[$r\]: alltoallw with different datatypes per peer" "$W/aw.err") -eq 1 ]] ||
            { echo "rank $r: reason not said once"; cat "$W/aw.err"; return 1; }
    done
}

# Neighbor collectives handed the receive buffer of an early Alltoall
# while it is in flight: guards lifted (the data waited for), correct
# values forwarded, the Alltoall early both rounds, said once per rank.
check_neighbor() {
    pipeline nb 4 "$P/neighbor" 2 || return 1
    grep -qx 'neighbor: ok' "$W/nb.tuned" || { cat "$W/nb.tuned"; return 1; }
    local r
    for r in 0 1 2 3; do
        [[ $(q "$W/nb.summary.d/rank-00000$r.db" "SELECT calls || ' ' || traced FROM site WHERE op = 'alltoall'") == "2 2" ]] ||
            { echo "rank $r: alltoall not early twice"; return 1; }
        [[ $(grep -c "^tnbc\[$r\]: neighbor collectives are not handled" "$W/nb.err") -eq 1 ]] ||
            { echo "rank $r: not said once"; cat "$W/nb.err"; return 1; }
    done
}

# Derived datatypes with holes: MPI_Bcast of a vector and of a resized
# struct type and MPI_Alltoall of the vector type go early; the holes are
# left as they were, and usable by the program while the call is in
# flight. Every element and hole checked by the program.
check_dtypes() {
    pipeline dt 4 "$P/dtypes" 2 || return 1
    grep -qx 'dtypes: ok' "$W/dt.tuned" || { cat "$W/dt.tuned"; return 1; }
    all_early dt "alltoall 2 2, bcast 2 2, bcast 2 2"
}

# Every rank's summary rows of pipeline NAME ("op calls traced", sorted)
# are WANT, and no call ran blocking: the programs' own calls on stack
# variables left out (report's gather, ct_verdict's reduce run blocking).
all_early() { # NAME WANT
    local r got
    for r in 0 1 2 3; do
        got=$(q "$W/$1.summary.d/rank-00000$r.db" "SELECT group_concat(op || ' ' || calls || ' ' || traced, ', ')
                 FROM (SELECT op, calls, traced FROM site WHERE op NOT IN ('gather', 'reduce') ORDER BY 1, 2, 3)")
        [[ $got == "$2" ]] || { echo "rank $r: summary rows '$got'"; return 1; }
    done
    ! grep "runs blocking" "$W/$1.err" | grep -v -e " reduce at " -e " gather at " || { echo "a call ran blocking"; return 1; }
}

# Derived datatypes on every operation that goes early, in the
# combinations replay treats apart (test/comm/dtypes_ops.c): dense sender
# and derived receiver and the reverse, a transpose whose blocks' footprints
# interleave, alltoallv of a struct, allgather, gatherv, scatter with
# different types of one size, scatterv. Results bit-identical to plain
# and checked by the program; every call of every site went early.
check_dtypes_ops() {
    pipeline dto 4 "$P/dtypes_ops" 2 || return 1
    grep -qx 'dtypes_ops: ok' "$W/dto.tuned" || { cat "$W/dto.tuned"; return 1; }
    all_early dto "allgather 2 2, alltoall 2 2, alltoall 2 2, alltoall 2 2, alltoall 2 2, alltoallv 2 2, gatherv 2 2, scatter 2 2, scatterv 2 2"
}

# The pencil FFT benchmark (bench/pencil.c) on a 2x2 grid, tuned: its own
# check (spectrum against a direct DFT, round trip) passes, and all its
# transposes went early: 3 iterations (1 warm-up) x 2 per communicator.
check_pencil() {
    local b=$BUILD/bench/pencil args="--n 32 --iters 2 --warmup 1" r want got
    $TNBC trace -o "$W/pen.db" -- timeout -k 5 "$T_TIMEOUT" mpirun --oversubscribe -np 4 $b $args > /dev/null || { echo "trace run failed"; return 1; }
    $TNBC analyze "$W/pen.db" -o "$W/pen.auto.profile" > /dev/null || { echo "analyze failed"; return 1; }
    sed -E 's/^  decision off .*/  decision on forced by the comm test/' "$W/pen.auto.profile" > "$W/pen.profile"
    $TNBC run -p "$W/pen.profile" --summary "$W/pen.summary.d" -- timeout -k 5 "$T_TIMEOUT" mpirun --oversubscribe -np 4 $b $args > "$W/pen.tuned" ||
        { echo "tuned run failed"; cat "$W/pen.tuned"; return 1; }
    grep -q '^RESULT app=pencil .*grid=2x2 .*check=ok$' "$W/pen.tuned" || { cat "$W/pen.tuned"; return 1; }
    for r in 0 1 2 3; do
        want=$(printf '%s 6 6\n%s 6 6\n' "$(shape $((r / 2 * 2)) $((r / 2 * 2 + 1)))" \
            "$(shape $((r % 2)) $((r % 2 + 2)))" | sort)
        got=$(rows pen $r)
        [[ $got == "$want" ]] || { echo "rank $r: summary rows '$got', want '$want'"; return 1; }
    done
}

# The freed-communicator program under ThreadSanitizer (check_free's
# profile): the drain and the duplicates' release inside MPI_Comm_free's
# attribute callback race with nothing in the progress thread.
check_tsan_free() {
    local tsan; tsan=$(gcc -print-file-name=libtsan.so)
    [[ -f $W/free.profile ]] || { echo "needs check_free's files"; return 1; }
    [[ -f "$tsan" && -f "$BUILD_TSAN/lib/libtnbc-replay.so" ]] || { echo "no TSan build"; return 1; }
    t_mpirun 4 -x LD_PRELOAD="$tsan:$PWD/$BUILD_TSAN/lib/libtnbc-replay.so" -x TNBC_PROFILE="$W/free.profile" \
        -x TNBC_REPLAY_DIR="$W/free.tsan.d" \
        -x TSAN_OPTIONS="halt_on_error=0 report_signal_unsafe=0 history_size=7 symbolize=0 suppressions=$PWD/test/replay/tsan.supp" \
        "$P/comm_free" 4 > "$W/free.tsan" 2>&1 || { tail -40 "$W/free.tsan"; return 1; }
    grep -qx 'comm_free: ok' "$W/free.tsan" || { tail -40 "$W/free.tsan"; return 1; }
    [[ $(q "$W/free.tsan.d/rank-000000.db" "SELECT SUM(traced) FROM site WHERE op = 'alltoall'") -eq 4 ]] ||
        { echo "not every Alltoall went early under TSan"; return 1; }
    if grep -q 'WARNING: ThreadSanitizer' "$W/free.tsan"; then
        grep -A30 'WARNING: ThreadSanitizer' "$W/free.tsan" | head -80; return 1
    fi
}

# The derived-datatype program under ThreadSanitizer (check_dtypes_ops's
# profile), every landing held back 3 ms (a test hook of the sanitizer
# builds) so that the program's reads wait in the fault path while the
# progress thread writes the type map's runs next to the holes it reads
# and writes: results as plain, and no report.
check_tsan_dtypes() {
    local tsan; tsan=$(gcc -print-file-name=libtsan.so)
    [[ -f $W/dto.profile ]] || { echo "needs check_dtypes_ops's files"; return 1; }
    [[ -f "$tsan" && -f "$BUILD_TSAN/lib/libtnbc-replay.so" ]] || { echo "no TSan build"; return 1; }
    t_mpirun 4 -x LD_PRELOAD="$tsan:$PWD/$BUILD_TSAN/lib/libtnbc-replay.so" -x TNBC_PROFILE="$W/dto.profile" \
        -x TNBC_REPLAY_DIR="$W/dto.tsan.d" -x TNBC_TEST_LAND_DELAY_US=3000 \
        -x TSAN_OPTIONS="halt_on_error=0 report_signal_unsafe=1 history_size=7 symbolize=0 suppressions=$PWD/test/replay/tsan.supp" \
        "$P/dtypes_ops" 2 > "$W/dto.tsan" 2>&1 || { tail -40 "$W/dto.tsan"; return 1; }
    cmp <(grep -v -e ThreadSanitizer -e '^tnbc' "$W/dto.tsan") "$W/dto.plain" || { echo "results differ under TSan"; return 1; }
    [[ $(t_fault_waits "$W/dto.tsan.d") -gt 0 ]] || { echo "no call waited in the fault path"; return 1; }
    if grep -q 'WARNING: ThreadSanitizer' "$W/dto.tsan"; then
        grep -A30 'WARNING: ThreadSanitizer' "$W/dto.tsan" | head -80; return 1
    fi
}

# A version-1 trace (before communicator shapes) is still analyzed; an
# unknown version is refused in one line.
check_old_trace() {
    [[ -f $W/fft.db ]] || { echo "needs check_fft's files"; return 1; }
    cp "$W/fft.db" "$W/v1.db" && q "$W/v1.db" "UPDATE meta SET value='1' WHERE key='schema_version'"
    $TNBC analyze "$W/v1.db" -o "$W/v1.profile" > /dev/null || { echo "version 1 refused"; return 1; }
    cp "$W/fft.db" "$W/v9.db" && q "$W/v9.db" "UPDATE meta SET value='9' WHERE key='schema_version'"
    local err
    err=$($TNBC analyze "$W/v9.db" -o "$W/v9.profile" 2>&1 >/dev/null) && { echo "version 9 accepted"; return 1; }
    [[ $(wc -l <<< "$err") -eq 1 && $err == *"schema_version 9"* ]] || { echo "$err"; return 1; }
}

t_run "FFT-like 2x2 grid: row and column transposes early, bit-identical" check_fft
t_run "one call site on two sub-communicators: one entry per shape" check_shared_site
t_run "communicator freed while its early call is in flight; inter-communicator blocking" check_free
t_run "Fortran mpi_f08: 2x2 grid transposes and in-place Allreduce early, bit-identical" check_f08
t_run "dup, create, create_group, Cart_sub: one site, early on each" check_kinds
t_run "MPI_IN_PLACE alltoall(v), allgather(v), allreduce: early, correct" check_inplace
t_run "MPI_Scatter and MPI_Scatterv (root in place): early, correct" check_scatter
t_run "MPI_Reduce_scatter(_block), in place too: early; double sum blocking, said once" check_redscat
t_run "MPI_Alltoallw: one type per side early (in place too), a type per pair blocking" check_alltoallw
t_run "neighbor collectives on buffers in flight: released, correct" check_neighbor
t_run "derived datatypes: bcast vector/struct and alltoall vector go early, holes untouched" check_dtypes
t_run "derived datatypes on every early operation: packed sends, typed receives, interleaved blocks" check_dtypes_ops
T_TIMEOUT=300 t_run "ThreadSanitizer: derived datatypes landing by runs while the program waits and writes holes" check_tsan_dtypes
t_run "pencil FFT benchmark, 2x2 grid: check passes, every transpose early" check_pencil
T_TIMEOUT=300 t_run "ThreadSanitizer: communicator freed while its call is in flight" check_tsan_free
t_run "trace schema: version 1 still read, unknown version refused" check_old_trace
t_summary
