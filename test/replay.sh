#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Replay mode, end to end: tnbc trace -> tnbc analyze -> tnbc run on plain
# MPI programs; results must be bit-identical to a plain run.
set -u
cd "$(dirname "$0")/.."
source test/lib.sh
export TNBC_BUILD=$PWD/$BUILD
TNBC=scripts/tnbc
P=$BUILD/test
BUILD_TSAN=${BUILD_TSAN:-build-tsan}
BUILD_ASAN=${BUILD_ASAN:-build-asan}
# The launchers for 2 and 4 ranks (T_MPI: Open MPI's mpirun or MPICH's mpiexec).
t_mpi_argv 2; MPI2=("${T_MPI_ARGV[@]}")
t_mpi_argv 4; MPI4=("${T_MPI_ARGV[@]}")
W=$(mktemp -d /tmp/tnbc-replay-test.XXXXXX)
trap 'rm -rf "$W"' EXIT
q() { sqlite3 -batch -noheader "$1" "$2"; }

# The analyzer turns tiny or size-varying sites off; the integrity test
# wants every site exercised, so its profile turns every decision on.
force_on() { sed -E 's/^  decision off .*/  decision on forced by the replay test/' "$1" > "$2"; }

# pipeline NAME NP FORCE PROGRAM ARGS...: plain, trace, analyze, replay.
# Leaves $W/NAME.plain, $W/NAME.tuned (stdout) and $W/NAME.summary.d.
pipeline() {
    local name=$1 np=$2 force=$3; shift 3
    t_mpi_argv "$np" "$@"; local run=("${T_MPI_ARGV[@]}")
    t_mpirun "$np" "$@" > "$W/$name.plain" || { echo "plain run failed"; cat "$W/$name.plain"; return 1; }
    $TNBC trace -o "$W/$name.db" -- timeout -k 5 "$T_TIMEOUT" "${run[@]}" \
        > /dev/null || { echo "trace run failed"; return 1; }
    $TNBC analyze "$W/$name.db" -o "$W/$name.profile" > "$W/$name.analyze" || { echo "analyze failed"; return 1; }
    local prof=$W/$name.profile
    [[ $force == force ]] && { force_on "$prof" "$W/$name.on.profile"; prof=$W/$name.on.profile; }
    $TNBC run -p "$prof" --summary "$W/$name.summary.d" -- \
        timeout -k 5 "$T_TIMEOUT" "${run[@]}" > "$W/$name.tuned" ||
        { echo "tuned run failed"; cat "$W/$name.tuned"; return 1; }
    if ! cmp -s "$W/$name.plain" "$W/$name.tuned"; then
        echo "results differ:"; diff "$W/$name.plain" "$W/$name.tuned"; return 1
    fi
}

# Sum of early returns for OP over the rank summaries.
early() {
    local n=0 f
    for f in "$W/$1.summary.d"/rank-*.db; do
        n=$((n + $(q "$f" "SELECT IFNULL(SUM(traced), 0) FROM site WHERE op = '$2'")))
    done
    echo $n
}

# all_early NAME OP NP CALLS: on each of the NP ranks, the site of OP made
# CALLS calls and every one of them took the early-return path (counted in
# `traced`; a call the runtime ran blocking counts in `calls` only), and,
# where the summary records why calls ran blocking (site.fallback), none
# did for any reason.
all_early() {
    local name=$1 op=$2 np=$3 want=$4 r db got fb
    for ((r = 0; r < np; r++)); do
        db=$W/$name.summary.d/rank-$(printf %06d $r).db
        got=$(q "$db" "SELECT IFNULL(SUM(calls), 0) || ':' || IFNULL(SUM(traced), 0) FROM site WHERE op = '$op'")
        [[ $got == "$want:$want" ]] ||
            { echo "$name rank $r $op: calls:early $got, want $want:$want"; return 1; }
        if [[ $(q "$db" "SELECT count(*) FROM pragma_table_info('site') WHERE name = 'fallback'") == 1 ]]; then
            fb=$(q "$db" "SELECT group_concat(fallback, ' ') FROM site WHERE op = '$op' AND fallback <> ''")
            [[ -z $fb ]] || { echo "$name rank $r $op: fell back: $fb"; return 1; }
        fi
    done
}

# Rank summaries where OP ran blocking for want of a whole receive page.
small() {
    local n=0 f
    for f in "$W/$1.summary.d"/rank-*.db; do
        n=$((n + $(q "$f" "SELECT count(*) FROM site WHERE op = '$2' AND fallback LIKE '%nothing-to-guard%'")))
    done
    echo $n
}

integrity() { # NAME NP SEED [mpirun options...]
    local name=$1 np=$2 seed=$3; shift 3
    pipeline "$name" "$np" force "$@" "$P/replay/integrity" "$seed" 3 || return 1
    grep -q 'integrity: ok' "$W/$name.tuned" || return 1
    local op
    for op in alltoall alltoallv allgather allgatherv gatherv bcast allreduce reduce; do
        # A seed whose blocks are too small for a whole page runs blocking, with that reason.
        [[ $(early "$name" $op) -gt 0 || $(small "$name" $op) -gt 0 ]] ||
            { echo "no early return for $op"; return 1; }
    done
}

check_shm_3()  { integrity shm3 3 31; }   # seed 31: the root gathers in place at another site
check_shm_4()  { integrity shm4 4 12; }
check_shm_2()  { integrity shm2 2 13; }
check_tcp_3()  { integrity tcp3 3 14 --mca btl self,tcp --mca btl_tcp_if_include lo; }
# Bodies cut in one-page pieces: many pieces per block, the first of each
# ending wherever the block's alignment puts the next page.
check_pieces() { integrity pc3 3 15 -x TNBC_PIECE=4096 --mca btl self,tcp --mca btl_tcp_if_include lo; }
# Pages closed with PROT_NONE and written through /proc/self/mem, the
# landing of CPUs without protection keys, where the default uses keys.
check_procmem() { integrity pm3 3 16 -x TNBC_LAND=procmem -x TNBC_PIECE=8192 --mca btl self,tcp --mca btl_tcp_if_include lo; }

# The profile records the piece size the analyzer assumed (32 KiB) and the
# replay cuts with it; TNBC_PIECE overrides it, said once. A profile edited
# to 4096-byte pieces gives the plain results, without the message; with
# TNBC_PIECE=8192 also the plain results, and the message once (rank 0).
check_profile_piece() {
    integrity pp3 3 15 || return 1
    grep -qx 'piece 32768' "$W/pp3.profile" || { echo "the analyzer wrote no 'piece 32768' line"; return 1; }
    sed 's/^piece 32768$/piece 4096/' "$W/pp3.on.profile" > "$W/pp3.4k.profile"
    local env
    for env in "" 8192; do
        t_mpi_argv 3 ${env:+-x TNBC_PIECE=$env} "$P/replay/integrity" 15 3
        $TNBC run -p "$W/pp3.4k.profile" -- timeout -k 5 "$T_TIMEOUT" "${T_MPI_ARGV[@]}" \
            > "$W/pp3.4k$env.out" 2> "$W/pp3.4k$env.err" ||
            { echo "run failed (TNBC_PIECE=$env)"; cat "$W/pp3.4k$env.err"; return 1; }
        cmp -s "$W/pp3.plain" "$W/pp3.4k$env.out" ||
            { echo "results differ (TNBC_PIECE=$env):"; diff "$W/pp3.plain" "$W/pp3.4k$env.out"; return 1; }
        local said
        said=$(grep -c "TNBC_PIECE=8192 overrides the profile's piece size (4096 bytes)" "$W/pp3.4k$env.err" || true)
        [[ $said == $([[ -n $env ]] && echo 1 || echo 0) ]] ||
            { echo "override message $said times with TNBC_PIECE='$env'"; cat "$W/pp3.4k$env.err"; return 1; }
    done
}

# The program reads in the order the profile was made for, and then in the
# opposite order under the same profile: both correct, both early. Forced
# on: this checks the replay of an order, not the analyzer's decision
# (which on a loaded machine may find no overlap and run the site blocking).
check_orders() {
    pipeline fwd 4 force "$P/trace/access_order" alltoall 65536 3,1,0,2 4 || return 1
    all_early fwd alltoall 4 4 || return 1
    t_mpirun 4 "$P/trace/access_order" alltoall 65536 2,0,1,3 4 > "$W/opp.plain" || return 1
    $TNBC run -p "$W/fwd.on.profile" --summary "$W/opp.summary.d" -- \
        timeout -k 5 "$T_TIMEOUT" "${MPI4[@]}" \
        "$P/trace/access_order" alltoall 65536 2,0,1,3 4 > "$W/opp.tuned" || return 1
    cmp "$W/opp.plain" "$W/opp.tuned" && grep -q 'access_order: ok' "$W/opp.tuned" &&
        all_early opp alltoall 4 4
}

# The receives of a call are posted in the profile's priority order: the
# read order the program was traced with (3,1,0,2), less the rank's own
# block. test/replay/irecv_spy.so, preloaded after the runtime, logs the
# source and count of each PMPI_Irecv; zero-byte receives (node tokens) are
# left out, and a source counts where its first part is posted.
check_prio_order() {
    pipeline po 4 force "$P/trace/access_order" alltoall 65536 3,1,0,2 2 || return 1
    rm -rf "$W/spy"; mkdir -p "$W/spy"
    t_mpirun 4 -x LD_PRELOAD="$PWD/$BUILD/lib/libtnbc-replay.so:$PWD/$P/replay/irecv_spy.so" \
        -x TNBC_PROFILE="$W/po.on.profile" -x IRECV_SPY_DIR="$W/spy" \
        "$P/trace/access_order" alltoall 65536 3,1,0,2 1 > "$W/po.spy" 2>&1 || { cat "$W/po.spy"; return 1; }
    grep -q 'access_order: ok' "$W/po.spy" || { cat "$W/po.spy"; return 1; }
    local r got want
    for r in 0 1 2 3; do
        got=$(awk '$2 > 0 && !seen[$1]++ { printf "%s%s", sep, $1; sep = "," }' "$W/spy/rank-$r")
        want=$(echo 3,1,0,2 | tr ',' '\n' | grep -vx "$r" | paste -sd,)
        echo "rank $r: receives posted from $got (want $want)"
        [[ $got == "$want" ]] || return 1
    done
}

# Buffers handed to write(), fwrite(), MPI_Send and free() while in flight.
# All four alltoalls go early on every rank (the program checks every value
# it wrote, sent and received, and prints ok only if all were right).
check_io() {
    pipeline io 4 force "$P/trace/io_and_reuse" "$W" && grep -q 'io_and_reuse: ok' "$W/io.tuned" &&
        all_early io alltoall 4 4
}

check_fortran() {
    pipeline f 4 force "$P/trace/access_order_f" 3,1,0,2 3 && grep -q ok "$W/f.tuned" &&
        all_early f alltoall 4 3
}

# The fault handler's waits show in the summary: 4 MiB blocks over TCP,
# read at once, cannot all have arrived before the first read. One piece
# of 4 KiB in flight at a time (TNBC_WINDOW=1, TNBC_PIECE=4096): a block
# takes a thousand round trips to arrive, so the reader, one of 12 times,
# waits whatever the load (it would have to be kept off the CPU for the
# whole of every transfer not to).
check_waits() {
    # Forced on: this checks the recording, not the analyzer's decision
    # (which on a loaded machine may find no overlap and run it blocking).
    pipeline waits 2 force --mca btl self,tcp --mca btl_tcp_if_include lo \
        -x TNBC_WINDOW=1 -x TNBC_PIECE=4096 \
        "$P/trace/access_order" alltoall 4194304 forward 6 || return 1
    local w=0 f
    for f in "$W/waits.summary.d"/rank-*.db; do
        w=$((w + $(q "$f" "SELECT IFNULL(SUM(wait_ns), 0) FROM call WHERE op = 'alltoall'")))
    done
    echo "waited ${w} ns in faults"
    [[ $w -gt 0 ]]
}

# TNBC_REPLAY_PHASES=1: each rank prints one line of mean times per step of
# the early return, counting as many early returns as its summary does.
check_phases() {
    pipeline ph 2 force "$P/trace/access_order" alltoall 1048576 forward 4 || return 1
    grep -q 'tnbc: rank' "$W/ph.tuned" && { echo "phase line without TNBC_REPLAY_PHASES"; return 1; }
    local out
    out=$(TNBC_REPLAY_PHASES=1 $TNBC run -p "$W/ph.on.profile" --summary "$W/ph2.summary.d" -- \
            timeout -k 5 "$T_TIMEOUT" "${MPI2[@]}" \
            "$P/trace/access_order" alltoall 1048576 forward 4 2>&1) || { echo "$out"; return 1; }
    local r line n early
    for r in 0 1; do
        line=$(echo "$out" | grep "^tnbc: rank $r: ") || { echo "no phase line for rank $r"; echo "$out"; return 1; }
        echo "$line"
        n=$(echo "$line" | sed -E 's/^tnbc: rank [0-9]+: ([0-9]+) early returns.*/\1/')
        early=$(q "$W/ph2.summary.d/rank-00000$r.db" "SELECT IFNULL(SUM(traced), 0) FROM site")
        [[ $n -gt 0 && $n -eq $early ]] || { echo "rank $r: $n early returns in the phase line, $early in the summary"; return 1; }
        echo "$line" | grep -Eq 'candidate [0-9.]+ agree [0-9.]+ plan [0-9.]+ land_self [0-9.]+ arm [0-9.]+ copy [0-9.]+ submit [0-9.]+ edges [0-9.]+ total [0-9.]*[1-9]' ||
            { echo "rank $r: phase line malformed or all zero"; return 1; }
        # Pages close with a protection key where the kernel enabled them
        # (the `ospke` flag), else PROT_NONE with /proc/self/mem landings.
        local method=procmem
        grep -qw ospke /proc/cpuinfo && method=pkey
        echo "$line" | grep -Eq " landing $method pushed [0-9]+ push_wait [0-9.]+\$" ||
            { echo "rank $r: landing method is not $method, or no push count after it"; return 1; }
        # 1 MiB blocks span whole pages: the sends leave from the program's
        # own pages, held read-only (send_guard.h), at least in the first
        # call (a site turns to copying only after its program waited).
        [[ $(echo "$line" | sed -E 's/.* sent_in_place ([0-9]+) .*/\1/') -ge 1 ]] ||
            { echo "rank $r: no call sent from the program's pages"; return 1; }
        # The summary's early_cost row: the same early returns and steps
        # (the line's means, printed to 0.1 us), and the remote block of
        # every call landed by the progress thread: 1 MiB per early return.
        local row steps want
        row=$(q "$W/ph2.summary.d/rank-00000$r.db" "SELECT early, land_bytes, land_ns > 0
                 FROM early_cost WHERE op = 'alltoall'")
        echo "rank $r: early_cost $row"
        [[ $row == "$n|$((n * 1048576))|1" ]] ||
            { echo "rank $r: early_cost row $row, want $n|$((n * 1048576))|1"; return 1; }
        steps=$(q "$W/ph2.summary.d/rank-00000$r.db" "SELECT candidate_ns / 1e3 / early, agree_ns / 1e3 / early,
                 plan_ns / 1e3 / early, land_self_ns / 1e3 / early, arm_ns / 1e3 / early,
                 copy_ns / 1e3 / early, submit_ns / 1e3 / early, edges_ns / 1e3 / early
                 FROM early_cost WHERE op = 'alltoall'" | tr '|' ' ')
        want=$(echo "$line" | sed -E 's/.* candidate ([0-9.]+) agree ([0-9.]+) plan ([0-9.]+) land_self ([0-9.]+) arm ([0-9.]+) copy ([0-9.]+) submit ([0-9.]+) edges ([0-9.]+) total.*/\1 \2 \3 \4 \5 \6 \7 \8/')
        awk -v a="$steps" -v b="$want" 'BEGIN { n = split(a, x, " "); m = split(b, y, " ");
                if (n != 8 || m != 8) exit 1
                for (i = 1; i <= 8; i++) if (x[i] - y[i] > 0.051 || y[i] - x[i] > 0.051) exit 1 }' ||
            { echo "rank $r: early_cost steps $steps, the phase line's $want"; return 1; }
    done
    # TNBC_LAND=procmem chooses the /proc/self/mem landing on any CPU.
    out=$(TNBC_LAND=procmem TNBC_REPLAY_PHASES=1 $TNBC run -p "$W/ph.on.profile" -- \
            timeout -k 5 "$T_TIMEOUT" "${MPI2[@]}" \
            "$P/trace/access_order" alltoall 1048576 forward 4 2>&1) || { echo "$out"; return 1; }
    [[ $(echo "$out" | grep -c "^tnbc: rank [01]: [1-9][0-9]* early returns.* landing procmem pushed [0-9]* push_wait [0-9.]*$") == 2 ]] ||
        { echo "TNBC_LAND=procmem:"; echo "$out"; return 1; }
    # TNBC_SEND_COPY=1: every send from a private copy; the same results.
    TNBC_SEND_COPY=1 TNBC_REPLAY_PHASES=1 $TNBC run -p "$W/ph.on.profile" -- \
        timeout -k 5 "$T_TIMEOUT" "${MPI2[@]}" "$P/trace/access_order" alltoall 1048576 forward 4 \
        > "$W/ph.copy" 2> "$W/ph.copy.err" || { cat "$W/ph.copy.err"; return 1; }
    cmp -s "$W/ph.plain" "$W/ph.copy" || { echo "TNBC_SEND_COPY=1: results differ"; return 1; }
    [[ $(grep -c "^tnbc: rank [01]: [1-9][0-9]* early returns.* sent_in_place 0 " "$W/ph.copy.err") == 2 ]] ||
        { echo "TNBC_SEND_COPY=1 still sent in place:"; cat "$W/ph.copy.err"; return 1; }
}

# trial_want PROFILE OP N: "invocation:blocking ..." for the first N calls
# of OP's site in a trial run, worked out independently of the library
# from the rule in docs/analyzer.md: the k-th site (k = 0, 1, ...) that is
# on or marked `trial`, in file order, runs call i blocking where bit
# 2 + k mod 4 of i is set.
trial_want() {
    local k
    k=$(awk -v op="$2" '/^site / { o = $3; on = 0 } /^  decision on / || /^  trial$/ { on = 1 }
            /^end$/ { if (o == op) { print n; exit } n += on }' "$1")
    [[ -n $k ]] || return 1
    local i out=()
    for ((i = 0; i < $3; i++)); do out+=("$i:$(((i >> (2 + k % 4)) & 1))"); done
    echo "${out[*]}"
}

# trial_rows NAME: the alltoall call rows of summary NAME on ranks 0 and 1
# against trial_want PROFILE.
trial_rows() {
    local r rows want
    want=$(trial_want "$2" alltoall 20) || { echo "no alltoall site in $2"; return 1; }
    [[ $want == *:1* ]] || { echo "no blocking call in the pattern: $want"; return 1; }
    for r in 0 1; do
        rows=$(q "$W/$1.summary.d/rank-00000$r.db" "SELECT group_concat(invocation || ':' ||
                 (wait_ns < 0), ' ') FROM (SELECT * FROM call WHERE op = 'alltoall' ORDER BY invocation)")
        echo "rank $r: $rows"
        [[ -n $rows && $rows == "$want" ]] || { echo "want: $want"; return 1; }
    done
}

# TNBC_REPLAY_TRIAL=1: half the calls of a site that is on run blocking
# (a row with wait_ns -1) in the site's pattern, the others return early;
# results unchanged.
check_trial() {
    pipeline tr 2 force "$P/trace/access_order" alltoall 1048576 forward 20 || return 1
    TNBC_REPLAY_TRIAL=1 $TNBC run -p "$W/tr.on.profile" --summary "$W/tr2.summary.d" -- \
        timeout -k 5 "$T_TIMEOUT" "${MPI2[@]}" \
        "$P/trace/access_order" alltoall 1048576 forward 20 > "$W/tr.trial" || return 1
    cmp -s "$W/tr.plain" "$W/tr.trial" || { echo "results differ:"; diff "$W/tr.plain" "$W/tr.trial"; return 1; }
    trial_rows tr2 "$W/tr.on.profile"
}

# A site the profile marks `trial` (off by the model's timing alone) runs
# as on in a trial run, in its pattern, and rank 0 says how many such
# sites there are; without TNBC_REPLAY_TRIAL it is off: no call early.
check_trial_sites() {
    pipeline ts 2 force "$P/trace/access_order" alltoall 1048576 forward 20 || return 1
    sed -E '/^  trial$/d; s/^  decision on .*/  decision off no predicted overlap (made so by the replay test)/
            /^  model /a\  trial' "$W/ts.on.profile" > "$W/ts.trial.profile"
    local n
    n=$(grep -c '^  trial$' "$W/ts.trial.profile")
    TNBC_REPLAY_TRIAL=1 $TNBC run -p "$W/ts.trial.profile" --summary "$W/ts2.summary.d" -- \
        timeout -k 5 "$T_TIMEOUT" "${MPI2[@]}" \
        "$P/trace/access_order" alltoall 1048576 forward 20 > "$W/ts.trial" 2> "$W/ts.trial.err" ||
        { cat "$W/ts.trial.err"; return 1; }
    cmp -s "$W/ts.plain" "$W/ts.trial" || { echo "results differ:"; diff "$W/ts.plain" "$W/ts.trial"; return 1; }
    grep -q "trial run: $n site(s) the analyzer turned off by its timing alone run as on" "$W/ts.trial.err" ||
        { echo "no 'trial run: $n site(s)' line:"; cat "$W/ts.trial.err"; return 1; }
    trial_rows ts2 "$W/ts.trial.profile" || return 1
    $TNBC run -p "$W/ts.trial.profile" --summary "$W/ts3.summary.d" -- \
        timeout -k 5 "$T_TIMEOUT" "${MPI2[@]}" \
        "$P/trace/access_order" alltoall 1048576 forward 20 > "$W/ts.off" 2> "$W/ts.off.err" ||
        { cat "$W/ts.off.err"; return 1; }
    cmp -s "$W/ts.plain" "$W/ts.off" || { echo "results differ (not a trial run)"; return 1; }
    ! grep -q "trial run" "$W/ts.off.err" || { echo "trial line without TNBC_REPLAY_TRIAL"; return 1; }
    [[ $(early ts3 alltoall) == 0 ]] || { echo "$(early ts3 alltoall) early calls of an off site"; return 1; }
}

# ThreadSanitizer over the progress thread and the program's thread: the
# replay library built with -fsanitize=thread, on the integrity program.
# Open MPI is not instrumented; test/replay/tsan.supp says what is not judged.
# Its landings are held back (TNBC_TEST_LAND_DELAY_US) so the fault path
# certainly runs; the summary must show a call that waited there.
# symbolize=0: to match a suppression by function name TSan symbolizes in
# the process, and its symbolizer's munmap reaches tnbc's wrapper, whose
# range-index lock TSan does not track while reporting: it reports that as
# a race inside the report and deadlocks (seen: Open MPI's vader sendi,
# suppressed, from the progress thread). The suppressions name modules,
# which TSan knows without symbolizing; reports show module+offset.
check_tsan() {
    local tsan; tsan=$(gcc -print-file-name=libtsan.so)
    [[ -f "$tsan" && -f "$BUILD_TSAN/lib/libtnbc-replay.so" ]] || { echo "no TSan build"; return 1; }
    # Seed 12: blocks of 37 KiB (seed 31's fit in one page and run blocking).
    pipeline ts 3 force "$P/replay/integrity" 12 2 || return 1
    t_mpirun 3 -x LD_PRELOAD="$tsan:$PWD/$BUILD_TSAN/lib/libtnbc-replay.so" -x TNBC_PROFILE="$W/ts.on.profile" \
        -x TNBC_PIECE=8192 -x TNBC_TEST_LAND_DELAY_US=10000 \
        -x TNBC_REPLAY_DIR="$W/ts.tsan.d" \
        -x TSAN_OPTIONS="halt_on_error=0 report_signal_unsafe=1 history_size=7 symbolize=0 suppressions=$PWD/test/replay/tsan.supp" \
        "$P/replay/integrity" 12 2 > "$W/ts.tsan" 2>&1 || { tail -40 "$W/ts.tsan"; return 1; }
    cmp <(grep -v ThreadSanitizer "$W/ts.tsan" | grep -E '^(integrity|checksums)') "$W/ts.plain" ||
        { echo "results differ under TSan"; return 1; }
    [[ $(q "$W/ts.tsan.d/rank-000000.db" "SELECT SUM(traced) FROM site") -gt 0 ]] ||
        { echo "nothing was transformed under TSan"; return 1; }
    # Every landing held 10 ms (a test hook of the sanitizer builds): the
    # program's reads found data missing, so the fault path ran under TSan.
    [[ $(t_fault_waits "$W/ts.tsan.d") -gt 0 ]] ||
        { echo "no call waited in the fault path: TSan did not see it"; return 1; }
    if grep -q 'WARNING: ThreadSanitizer' "$W/ts.tsan"; then
        grep -A30 'WARNING: ThreadSanitizer' "$W/ts.tsan" | head -80; return 1
    fi
}

# A code that reads its own block first, as most do: another block's bytes
# in a page it shares with the own block arrive before the call returns
# (libreplay/plan_source.c, cut_block), so reading the own block never
# waits. Every landing is held 3 ms (the sanitizer builds' hook), so a page
# left closed until its other block's last piece landed would certainly be
# waited on. Each rank reads only block 1 (order 1,0, ACCESS_ORDER_READ=1):
# rank 1 its own, rank 0 a remote one. Blocks of 256 KiB at +40 bytes:
# block 1 starts 40 bytes into the page that ends block 0. Only the waits
# between a call's return and the next call's entry count: the next call
# itself may still wait for the unread block 0 of the one before (the
# reuse of its buffer), as the landings are held, and so may MPI_Finalize
# after the last one.
# held_landings NAME NP PROGRAM...: the pipeline's plain run and forced
# profile, then a run of that profile under the ASan build with every
# landing held 3 ms (the sanitizer builds' hook), its summaries in
# $W/NAME.asan.d, its output checked against the plain run's.
# ACCESS_ORDER_READ, where set, reaches every rank.
held_landings() {
    local name=$1 np=$2; shift 2
    local asan; asan=$(gcc -print-file-name=libasan.so)
    [[ -f "$asan" && -f "$BUILD_ASAN/lib/libtnbc-replay.so" ]] || { echo "no ASan build"; return 1; }
    pipeline "$name" "$np" force "$@" || return 1
    t_mpirun "$np" -x LD_PRELOAD="$asan:$PWD/$BUILD_ASAN/lib/libtnbc-replay.so" \
        -x TNBC_PROFILE="$W/$name.on.profile" -x TNBC_TEST_LAND_DELAY_US=3000 \
        ${ACCESS_ORDER_READ:+-x ACCESS_ORDER_READ} \
        -x TNBC_REPLAY_DIR="$W/$name.asan.d" -x ASAN_OPTIONS=detect_leaks=0 \
        "$@" > "$W/$name.asan" 2>&1 || { tail -20 "$W/$name.asan"; return 1; }
    cmp <(grep '^access_order' "$W/$name.asan") "$W/$name.plain" || { echo "results differ"; return 1; }
}

check_own_block_first() {
    ACCESS_ORDER_READ=1 held_landings ob 2 "$P/trace/access_order" alltoall 262144 1,0 4 40 || return 1
    local r faults="SELECT count(*) FROM fault_wait w JOIN call c ON c.call_id = w.call_id
                    JOIN call n ON n.rank = c.rank AND n.site = c.site AND n.invocation = c.invocation + 1
                    WHERE w.start_tsc < n.entry_tsc"
    for r in 0 1; do
        echo "rank $r: $(q "$W/ob.asan.d/rank-00000$r.db" "SELECT SUM(traced) FROM site WHERE op = 'alltoall'") early," \
             "waits: $(q "$W/ob.asan.d/rank-00000$r.db" "SELECT IFNULL(group_concat(how || ':' || idx || ':' || (end_tsc - start_tsc), ' '), 'none') FROM fault_wait")"
    done
    [[ $(q "$W/ob.asan.d/rank-000001.db" "SELECT SUM(traced) FROM site WHERE op = 'alltoall'") -eq 4 &&
       $(q "$W/ob.asan.d/rank-000001.db" "$faults") -eq 0 ]] ||
        { echo "rank 1 waited reading its own block (want 4 early calls, no wait before the next call)"; return 1; }
    [[ $(q "$W/ob.asan.d/rank-000000.db" "$faults") -gt 0 ]] ||
        { echo "rank 0 never waited for its remote block: the landing hook did not hold it"; return 1; }
}

# A code that reads a block whose first page it shares with the tail of
# another remote block: those bytes travel first, as an edge part
# (libreplay/plan_source.c, cut_block), so the page opens long before the
# rest of that block has landed. Before, they came as that block's last
# piece: at 2 x 2, ranks reading block 1 first waited the whole Tcomm for
# the 4120 bytes of block 0 in its first page. Every landing is held 3 ms
# (the sanitizer builds' hook), so the blocks land one piece at a time in
# the order of the profile's priorities. 3 ranks, blocks of 256 KiB at +40
# bytes, read in the order 1, 2, 0: on rank 2 block 1 starts in the page
# that ends block 0, from rank 0, which is read last and so lands last. A
# wait for the other block of a page shows as a `release` of it; none may
# last until all of block 0 has landed (with the cut before, 6-8 of the 8
# calls' did).
check_neighbour_page() {
    held_landings nb 3 "$P/trace/access_order" alltoall 262144 1,2,0 8 40 || return 1
    local db=$W/nb.asan.d/rank-000002.db
    local waits="SELECT count(*) FROM fault_wait WHERE idx = 0 AND how = 'release'"
    local late="$waits AND end_tsc >= (SELECT max(a.tsc) FROM arrival a
                WHERE a.call_id = fault_wait.call_id AND a.idx = 0)"
    echo "rank 2: $(q "$db" "SELECT SUM(traced) FROM site WHERE op = 'alltoall'") early," \
         "$(q "$db" "$waits") waits on block 0 for block 1's first page," \
         "$(q "$db" "$late") of them until all of block 0 had landed"
    [[ $(q "$db" "SELECT SUM(traced) FROM site WHERE op = 'alltoall'") -eq 8 ]] ||
        { echo "rank 2: want 8 early calls"; return 1; }
    [[ $(q "$db" "SELECT count(*) FROM arrival WHERE idx = 0") -gt 0 ]] ||
        { echo "rank 2: no arrivals of block 0 recorded"; return 1; }
    [[ $(q "$db" "$late") -eq 0 ]] ||
        { echo "rank 2 waited for the whole of block 0 to read block 1's first page"; return 1; }
}

# LeakSanitizer's settings for runs whose Open MPI leaks must be told apart
# from the library's: stacks unwound in full (malloc's fast unwinder stops
# in Open MPI's frame-pointer-less frames or yields garbage return
# addresses), so that test/replay/lsan.supp can drop Open MPI's own leaks by
# library name. With the fast unwinder, a 3-rank run's 11,800 leaked
# objects of Open MPI's took LeakSanitizer 70-100 s per process at exit on
# the 2-core test VM (every garbage address re-reads the module list while
# suppressions are matched); with these settings, 15 s.
LSAN_FULL_STACKS="detect_leaks=1:fast_unwind_on_malloc=0:malloc_context_size=30"
LSAN_SUPPRESS="suppressions=$PWD/test/replay/lsan.supp:print_suppressions=0"

# LeakSanitizer: the replay library built with ASan (build-asan/), every
# collective of the integrity program forced on. Any leak not suppressed by
# name in test/replay/lsan.supp fails the test; results as in the plain run.
check_lsan_integrity() {
    local asan; asan=$(gcc -print-file-name=libasan.so)
    [[ -f "$asan" && -f "$BUILD_ASAN/lib/libtnbc-replay.so" ]] || { echo "no ASan build"; return 1; }
    # Seed 12: blocks of 37 KiB, more than a page (as in check_tsan).
    pipeline ls 3 force "$P/replay/integrity" 12 2 || return 1
    t_mpirun 3 -x LD_PRELOAD="$asan:$PWD/$BUILD_ASAN/lib/libtnbc-replay.so" -x TNBC_PROFILE="$W/ls.on.profile" \
        -x TNBC_REPLAY_DIR="$W/ls.asan.d" \
        -x ASAN_OPTIONS="$LSAN_FULL_STACKS" -x LSAN_OPTIONS="$LSAN_SUPPRESS" \
        "$P/replay/integrity" 12 2 > "$W/ls.asan" 2>&1 || { grep -B2 -A20 'ERROR: ' "$W/ls.asan" | head -80; return 1; }
    cmp <(grep -E '^(integrity|checksums)' "$W/ls.asan") "$W/ls.plain" ||
        { echo "results differ under ASan"; return 1; }
    [[ $(q "$W/ls.asan.d/rank-000000.db" "SELECT SUM(traced) FROM site WHERE op IN ('bcast', 'allreduce', 'reduce')") -gt 0 ]] ||
        { echo "no chunked collective was transformed under ASan"; return 1; }
    ! grep -q 'Sanitizer' "$W/ls.asan" || { grep -A30 'Sanitizer' "$W/ls.asan" | head -60; return 1; }
}

# No profile: the library passes every call through.
check_no_profile() {
    t_mpirun 2 -x LD_PRELOAD="$PWD/$BUILD/lib/libtnbc-replay.so" "$P/replay/integrity" 5 2 > "$W/np.out" &&
        t_mpirun 2 "$P/replay/integrity" 5 2 | cmp - "$W/np.out"
}

# A broken profile: one line naming the file and line, then blocking runs.
check_bad_profile() {
    printf 'tnbc-profile 1\nworld_size 2\nsource x.db\n\nsite x alltoall\n  comm_size banana\n' > "$W/bad.profile"
    local out
    out=$($TNBC run -p "$W/bad.profile" -- timeout -k 5 "$T_TIMEOUT" "${MPI2[@]}" \
            "$P/replay/integrity" 5 1 2>&1) || { echo "$out"; return 1; }
    echo "$out" | grep -q 'integrity: ok' || { echo "$out"; return 1; }
    [[ $(echo "$out" | grep -c "bad.profile:6: .*every collective runs blocking") -eq 1 ]] ||
        { echo "$out"; return 1; }
}

# An early bcast sends its bytes over the network no more often than the
# blocking one: plain and tuned runs of the same bcasts (root 1, on node
# 0), counting the bytes node 1's link received. One MPI_Ibcast per chunk
# (libnbc's binomial tree) sent them twice.
bcast_crosses_once() {
    local link=/sys/class/net/tv-$CLUSTER-1/statistics/tx_bytes mode before bytes plain=0
    local app=("$BUILD/bench/bcastread" --bytes 4194304 --chunks 4 --order 3,1,2,0 --root 1 --iters 6)
    t_mpi_argv 4 "${app[@]}"
    $TNBC trace -o "$W/bx.db" -- timeout -k 5 "$T_TIMEOUT" "${T_MPI_ARGV[@]}" > /dev/null &&
        $TNBC analyze "$W/bx.db" -o "$W/bx.profile" > /dev/null && force_on "$W/bx.profile" "$W/bx.on.profile" ||
        { echo "bcastread: trace or analysis failed"; return 1; }
    for mode in plain tuned; do
        before=$(cat "$link") || return 1
        if [[ $mode == plain ]]; then
            timeout -k 5 "$T_TIMEOUT" "${T_MPI_ARGV[@]}" > "$W/bx.$mode.out" || return 1
        else
            $TNBC run -p "$W/bx.on.profile" --summary "$W/bx.summary.d" -- \
                timeout -k 5 "$T_TIMEOUT" "${T_MPI_ARGV[@]}" > "$W/bx.$mode.out" 2> "$W/bx.err" || return 1
            (( $(early bx bcast) >= 4 * 7 )) || { echo "bcast: $(early bx bcast) early returns"; return 1; }
        fi
        grep -q 'check=ok' "$W/bx.$mode.out" || { echo "bcastread $mode: check failed"; return 1; }
        bytes=$(( $(cat "$link") - before ))
        echo "bcast: node 1's link received $bytes bytes ($mode)"
        [[ $mode == plain ]] && plain=$bytes
    done
    # 7 bcasts of 4 MiB: at least 28 MiB whichever way; tuned within 25% of plain.
    (( plain >= 7 * 4194304 && bytes * 4 <= plain * 5 )) ||
        { echo "bcast: tuned sent $bytes bytes to node 1, plain $plain"; return 1; }
}

# One bcast called at two sites (the root's line and everyone else's),
# both turned on with 4 chunks of 256 KiB. Orders alike: every call early,
# the plain results. Orders different (each rank's chunks would match
# another's chunk of the same size, so the data would land in the wrong
# place): every rank runs it blocking with reason schedule-differs, said
# once per rank, and the results are still the plain ones.
check_bcast_two_sites() {
    local app=("$PWD/$P/replay/bcast_two_sites" 1048576 4) ord want r db got
    t_mpirun 3 "${app[@]}" > "$W/two.plain" || { echo "plain run failed"; return 1; }
    t_mpi_argv 3 "${app[@]}"
    $TNBC trace -o "$W/two.db" -- timeout -k 5 "$T_TIMEOUT" "${T_MPI_ARGV[@]}" > /dev/null &&
        $TNBC analyze "$W/two.db" -o "$W/two.profile" > /dev/null || { echo "trace or analysis failed"; return 1; }
    [[ $(grep -c '^site .* bcast$' "$W/two.profile") == 2 ]] || { echo "not two bcast sites"; return 1; }
    for ord in "3 2 1 0" "0 1 2 3"; do
        # The root's site saw no data in the trace: give it the others' shape and this order.
        awk -v ord="$ord" '/^site .* bcast$/ {b = 1} /^end$/ {b = 0}
            b && /^  block_bytes 0$/ {print "  block_bytes 1048576"; next}
            b && /^  chunks 1$/ {print "  chunks 4"; next}
            b && /^  order default 0$/ {print "  order default " ord; next}
            b && /^  (recv|send)_prio \* 0$/ {sub(/\* 0$/, "* " ord)}
            /^  decision off/ {print "  decision on forced"; next} {print}' "$W/two.profile" > "$W/two.o.profile"
        rm -rf "$W/two.summary.d"
        $TNBC run -p "$W/two.o.profile" --summary "$W/two.summary.d" -- \
            timeout -k 5 "$T_TIMEOUT" "${T_MPI_ARGV[@]}" > "$W/two.tuned" 2> "$W/two.err" ||
            { echo "tuned run failed (order $ord)"; cat "$W/two.err"; return 1; }
        cmp -s "$W/two.plain" "$W/two.tuned" || { echo "results differ (order $ord)"; return 1; }
        [[ $ord == "3 2 1 0" ]] && want=early || want=schedule-differs
        for r in 0 1 2; do
            db=$W/two.summary.d/rank-$(printf %06d $r).db
            got=$(q "$db" "SELECT SUM(calls) || ':' || SUM(traced) || ':' || group_concat(fallback, '') FROM site WHERE op = 'bcast'")
            if [[ $want == early ]]; then
                [[ $got == 4:4: ]] || { echo "rank $r (orders alike): calls:early:fallback $got"; return 1; }
            else
                [[ $got == 4:0:schedule-differs:* ]] || { echo "rank $r (orders differ): $got"; return 1; }
                [[ $(grep -c "^tnbc\[$r\]: bcast at .* runs blocking: the ranks' profiles order its chunks differently" "$W/two.err") == 2 ]] ||
                    { echo "rank $r: reason not said once per site"; cat "$W/two.err"; return 1; }
            fi
        done
    done
}

# A rank's turn on its node's link lasts at least TNBC_TURN_PACE times its
# share of the site's Tcomm, from when its progress thread took the call up
# (after posting the call's receives): with the profile's Tcomm set to 1.2
# s and TNBC_TURN_PACE=1, the first rank of each node (its node line's
# first) passes the turn on, a zero-byte send, no sooner than 0.6 s after
# it posted its first receive. Without the minimum it passes it once TCP
# has taken its sends: milliseconds. Load can only delay the hand-over, so
# the bound holds however busy the machine is. test/replay/irecv_spy.so
# logs the posts with the machine's monotonic clock.
# turn_held OP LONGER: OP's site with Tcomm set to 1.2 s and the pace 1;
# each node's first rank must hand its turn on no sooner than 0.6 s
# (LONGER=1: the hold, 1.2 s over the node's 2 ranks) or within 0.3 s
# (LONGER=0) after posting its first receive or data send (a gather's
# sender receives nothing).
turn_held() {
    local op=$1 longer=$2
    pipeline "tp$op" 4 force "$P/trace/access_order" "$op" 262144 3,1,0,2 1 || return 1
    sed -E 's/^(  model tcomm_ns )[^ ]+/\11200000000/' "$W/tp$op.on.profile" > "$W/tp$op.slow.profile"
    rm -rf "$W/tps$op"; mkdir -p "$W/tps$op"
    t_mpirun 4 -x LD_PRELOAD="$PWD/$BUILD/lib/libtnbc-replay.so:$PWD/$P/replay/irecv_spy.so" \
        -x TNBC_PROFILE="$W/tp$op.slow.profile" -x TNBC_TURN_PACE=1 -x IRECV_SPY_DIR="$W/tps$op" \
        "$P/trace/access_order" "$op" 262144 3,1,0,2 1 > "$W/tp$op.spy" 2>&1 || { cat "$W/tp$op.spy"; return 1; }
    grep -q 'access_order: ok' "$W/tp$op.spy" || { cat "$W/tp$op.spy"; return 1; }
    local firsts f t_recv t_token n=0
    firsts=$(awk -v op="$op" '$1 == "site" && $3 == op { in_site = 1 } /^end/ { in_site = 0 }
                  in_site && $1 == "node" { print $3 }' "$W/tp$op.slow.profile")
    for f in $firsts; do
        t_recv=$(cat "$W/tps$op/rank-$f" "$W/tps$op/rank-$f.isend" 2>/dev/null |
                 awk '$2 > 0 && (t == "" || $3 < t) { t = $3 } END { print t }')
        t_token=$(awk '$2 == 0 { print $3; exit }' "$W/tps$op/rank-$f.isend")
        echo "$op, rank $f: first data posted at $t_recv ns, turn passed on at $t_token ns"
        [[ -n $t_recv && -n $t_token ]] || return 1
        if (( longer )); then
            (( t_token - t_recv >= 600000000 )) || { echo "turn shorter than 0.6 s"; return 1; }
        else
            (( t_token - t_recv < 300000000 )) || { echo "a gather's turn held 0.3 s or more"; return 1; }
        fi
        n=$((n + 1))
    done
    [[ $n -eq 2 ]] || { echo "node lines' first ranks: '$firsts'"; return 1; }
}

# An alltoall's turn lasts its share of Tcomm; a gather's does not (its
# Tcomm is the root's: libreplay/tokens.c, turn_ns). A gather's bound is
# 0.3 s against the milliseconds a turn takes without the hold.
turn_lasts() { turn_held alltoall 1 && turn_held gather 0; }

# Across an emulated cluster: 2 nodes x 2 ranks, shared memory inside a
# node, TCP over 1 Gbit/s links between them; the node schedule is active.
CLUSTER=tr$$; CLUSTER=${CLUSTER:0:8}
check_cluster() {
    scripts/cluster/tnbc-cluster up -n 2 --slots 2 --rate 1gbit --name "$CLUSTER" || return 1
    (
        source "/run/tnbc-cluster/$CLUSTER/env"
        pipeline cl 4 force "$P/replay/integrity" 21 2 && grep -q 'integrity: ok' "$W/cl.tuned" &&
            grep -q "^  node tnbc-$CLUSTER-n1" "$W/cl.profile" &&
            [[ $(early cl alltoall) -gt 0 ]] && bcast_crosses_once && turn_lasts
    )
    local rc=$?
    scripts/cluster/tnbc-cluster down --name "$CLUSTER" >/dev/null 2>&1
    return $rc
}

t_run "integrity, 3 ranks, shared memory" check_shm_3
t_run "integrity, 4 ranks, shared memory" check_shm_4
t_run "integrity, 2 ranks, shared memory" check_shm_2
t_openmpi_only "integrity, 3 ranks, TCP" "needs Open MPI's TCP transport (--mca btl self,tcp)" &&
    t_run "integrity, 3 ranks, TCP" check_tcp_3
t_openmpi_only "integrity, 3 ranks, TCP, one-page pieces" "needs Open MPI's TCP transport (--mca btl self,tcp)" &&
    t_run "integrity, 3 ranks, TCP, one-page pieces" check_pieces
# (Over TCP with Open MPI; MPICH drops the --mca options: shared memory.)
t_run "integrity, 3 ranks, landing through /proc/self/mem" check_procmem
t_run "the profile's piece size, and TNBC_PIECE overriding it once" check_profile_piece
t_cmocka "$P/replay/test_pieces"
t_cmocka "$P/replay/test_land"
t_cmocka "$P/replay/test_pool"
t_cmocka "$P/replay/test_yield"
t_run "read order as profiled and opposite" check_orders
t_run "write/fwrite/MPI_Send/free while in flight" check_io
t_run "receives posted in the profile's priority order" check_prio_order
t_run "Fortran MPI_ALLTOALL" check_fortran
t_openmpi_only "fault waits recorded in the summary" "needs Open MPI's TCP transport (--mca btl self,tcp)" &&
    t_run "fault waits recorded in the summary" check_waits
t_run "TNBC_REPLAY_PHASES: per-step times of the early return" check_phases
t_run "TNBC_REPLAY_TRIAL: half the calls blocking in the site's pattern, recorded as such" check_trial
t_run "TNBC_REPLAY_TRIAL runs the profile's trial sites; without it they are off" check_trial_sites
t_openmpi_only "ThreadSanitizer: progress thread and program" "the sanitizer builds (build-tsan, build-asan) are Open MPI builds" &&
    T_TIMEOUT=300 t_run "ThreadSanitizer: progress thread and program" check_tsan
t_openmpi_only "own block read first: no wait on a page it shares with another block" "the sanitizer builds (build-tsan, build-asan) are Open MPI builds" &&
    t_run "own block read first: no wait on a page it shares with another block" check_own_block_first
t_openmpi_only "a page shared with another remote block: its part comes first" "the sanitizer builds (build-tsan, build-asan) are Open MPI builds" &&
    t_run "a page shared with another remote block: its part comes first" check_neighbour_page
t_openmpi_only "LeakSanitizer: no leak in the replay library" "the sanitizer builds (build-tsan, build-asan) are Open MPI builds" &&
    T_TIMEOUT=300 t_run "LeakSanitizer: no leak in the replay library" check_lsan_integrity
t_run "one bcast at two sites: chunk orders alike go early, different ones run blocking" check_bcast_two_sites
t_run "no profile: pass-through" check_no_profile
t_run "malformed profile: one line, blocking" check_bad_profile
if [[ ${T_MPI:-openmpi} == mpich ]]; then
    t_skip "integrity on a 2x2 emulated cluster" "Open MPI only: scripts/cluster places ranks with Open MPI's plm_rsh_agent"
elif [[ $(id -u) -ne 0 ]]; then
    t_skip "integrity on a 2x2 emulated cluster" "needs root for network namespaces"
elif ! ip netns list >/dev/null 2>&1; then
    t_skip "integrity on a 2x2 emulated cluster" "no network namespaces on this kernel"
else
    T_TIMEOUT=240 t_run "integrity on a 2x2 emulated cluster (TCP between nodes)" check_cluster
fi
# ---- issue 16: replay that pays for itself --------------------------------

# No cost when off: with a profile whose sites are all off, a program that
# asks for MPI_THREAD_FUNNELED gets FUNNELED and no tnbc-progress thread
# runs; with the same sites on, the thread runs (the control) and the
# program is still told FUNNELED: the runtime asks MPI for MULTIPLE for its
# own thread but reports the level the program asked for (core/intercept.c).
# Results identical to a plain run in both cases.
check_no_cost_when_off() {
    pipeline nc 2 force "$P/replay/thread_level" 4 || return 1
    sed -E 's/^  decision on .*/  decision off turned off by the test/' "$W/nc.on.profile" > "$W/nc.off.profile"
    grep -q '^  decision on' "$W/nc.off.profile" && { echo "a site is still on"; return 1; }
    local want_plain; want_plain=$(t_mpirun 2 "$P/replay/thread_level" 4 report) || return 1
    local off on
    off=$($TNBC run -p "$W/nc.off.profile" -- timeout -k 5 "$T_TIMEOUT" "${MPI2[@]}" \
            "$P/replay/thread_level" 4 report) || { echo "$off"; return 1; }
    on=$($TNBC run -p "$W/nc.on.profile" -- timeout -k 5 "$T_TIMEOUT" "${MPI2[@]}" \
            "$P/replay/thread_level" 4 report) || { echo "$on"; return 1; }
    echo "plain: $want_plain" | tr '\n' ' '; echo
    echo "off:   $off" | tr '\n' ' '; echo
    echo "on:    $on" | tr '\n' ' '; echo
    [[ $(echo "$want_plain" | grep provided) == "provided funneled progress_thread 0" ]] ||
        { echo "plain run: unexpected thread level or thread"; return 1; }
    [[ $off == "$want_plain" ]] || { echo "all-off profile: differs from the plain run"; return 1; }
    # With a summary asked for, the calls are counted, all blocking as 'off'.
    off=$($TNBC run -p "$W/nc.off.profile" --summary "$W/nc.off.d" -- timeout -k 5 "$T_TIMEOUT" \
            "${MPI2[@]}" "$P/replay/thread_level" 4 report) || { echo "$off"; return 1; }
    [[ $off == "$want_plain" ]] || { echo "all-off profile with a summary: differs from the plain run"; return 1; }
    local row; row=$(q "$W/nc.off.d/rank-000001.db" "SELECT calls || '/' || traced || '/' || fallback FROM site WHERE op = 'alltoall'")
    [[ $row == "4/0/off:4" ]] || { echo "all-off summary: alltoall $row, want 4/0/off:4"; return 1; }
    # The program still sees the level it asked for (tnbc asks MPI for
    # MPI_THREAD_MULTIPLE under the hood, docs/limits.md), and the progress
    # thread runs.
    [[ $(echo "$on" | grep provided) == "provided funneled progress_thread 1" ]] ||
        { echo "profile on: want the level asked for (funneled) and a progress thread"; return 1; }
    [[ $(echo "$on" | grep checksum) == $(echo "$want_plain" | grep checksum) ]] ||
        { echo "profile on: results differ"; return 1; }
}

t_run "no cost when off: thread level and no progress thread (all-off profile)" check_no_cost_when_off
# Where a site is on and a rank's progress thread shares its CPUs, Open
# MPI's idle polling yields (libreplay/yield.c): mpi_yield_when_idle reads 1
# in the tuned run, as MPI_T sees it, and rank 0 says so once; the user's
# own setting (here 0) stands, unsaid. The all-off run above left it as
# plain has it (compared whole). MPICH has no such variable ("none").
# These runs bind each rank to a core, without test/lib.sh's setting.
check_yield_when_crowded() {
    [[ -f $W/nc.on.profile ]] || pipeline nc 2 force "$P/replay/thread_level" 4 || return 1
    local plain on kept want=1
    # Each rank bound to one core, so that it shares it with its progress
    # thread on any machine.
    local bound=("${MPI2[@]}")
    [[ ${T_MPI:-openmpi} == mpich ]] ||
        bound=(env -u OMPI_MCA_mpi_yield_when_idle mpirun --bind-to core:overload-allowed -np 2)
    plain=$(timeout -k 5 "$T_TIMEOUT" "${bound[@]}" "$P/replay/thread_level" 4 report |
            grep yield_when_idle) || return 1
    on=$($TNBC run -p "$W/nc.on.profile" -- timeout -k 5 "$T_TIMEOUT" "${bound[@]}" \
            "$P/replay/thread_level" 4 report 2> "$W/yield.err" | grep yield_when_idle)
    t_mpi_argv 2 --mca mpi_yield_when_idle 0
    [[ ${T_MPI:-openmpi} == mpich ]] || T_MPI_ARGV=(mpirun --bind-to core:overload-allowed -np 2 --mca mpi_yield_when_idle 0)
    kept=$($TNBC run -p "$W/nc.on.profile" -- timeout -k 5 "$T_TIMEOUT" "${T_MPI_ARGV[@]}" \
            "$P/replay/thread_level" 4 report 2> "$W/yield-kept.err" | grep yield_when_idle)
    echo "plain: $plain; tuned: $on; tuned with --mca mpi_yield_when_idle 0: $kept"
    if [[ ${T_MPI:-openmpi} == mpich ]]; then
        [[ $plain == "yield_when_idle none" && $on == "$plain" && $kept == "$plain" ]]; return
    fi
    [[ $plain == "yield_when_idle 0" ]] || { echo "plain: want 0"; return 1; }
    [[ $on == "yield_when_idle $want" ]] || { echo "tuned: want $want"; return 1; }
    [[ $(grep -c "polls yielding the CPU" "$W/yield.err") -eq $want ]] ||
        { echo "want the note once where set"; cat "$W/yield.err"; return 1; }
    [[ $kept == "yield_when_idle 0" ]] && ! grep -q "polls yielding" "$W/yield-kept.err" ||
        { echo "the user's 0 must stand, unsaid"; return 1; }
}
t_run "Open MPI's idle polling yields where the progress thread shares a CPU, not against the user's setting" check_yield_when_crowded
# Push first (docs/replay.md): an early call whose site's code reads data
# within Tcomm (regime other than a) returns only once the progress thread
# has started its steps; a regime-a site returns at once. TNBC_PUSH_FIRST
# overrides both ways. What each rank reports (TNBC_REPLAY_PHASES=1:
# "pushed N") is checked, with plain's results every time.
check_push_first() {
    [[ -f $W/nc.on.profile ]] || pipeline nc 2 force "$P/replay/thread_level" 4 || return 1
    local want r got regime env want_n
    want=$(t_mpirun 2 "$P/replay/thread_level" 4 | grep checksum) || return 1
    for regime in a e; do
        sed -E "s/ regime [a-e]\$/ regime $regime/" "$W/nc.on.profile" > "$W/push-$regime.profile"
    done
    for r in "a - 0" "e - 4" "e 0 0" "a 1 4"; do
        read -r regime env want_n <<< "$r"
        local pre=()
        [[ $env == - ]] || pre=(env TNBC_PUSH_FIRST="$env")
        got=$("${pre[@]}" env TNBC_REPLAY_PHASES=1 $TNBC run -p "$W/push-$regime.profile" -- timeout -k 5 \
                "$T_TIMEOUT" "${MPI2[@]}" "$P/replay/thread_level" 4 2> "$W/push.err") || { cat "$W/push.err"; return 1; }
        [[ $(grep checksum <<< "$got") == "$want" ]] || { echo "regime $regime, TNBC_PUSH_FIRST=$env: results differ"; return 1; }
        local pushed; pushed=$(grep -o 'pushed [0-9]*' "$W/push.err" | sort -u)
        echo "regime $regime, TNBC_PUSH_FIRST=$env: $(echo $pushed)"
        [[ $pushed == "pushed $want_n" ]] || { echo "want pushed $want_n on every rank"; cat "$W/push.err"; return 1; }
    done
}
t_run "push first: a site read within Tcomm returns once its sends started; regime a at once; TNBC_PUSH_FIRST both ways" check_push_first
# The progress thread runs under SCHED_BATCH, whose wake-ups do not preempt
# the program's thread (docs/replay.md, "The early return's cost"), and
# under the default policy with TNBC_PROGRESS_BATCH=0; the kernel's own
# account of the thread (sched_getscheduler on its id) is what is checked.
check_progress_policy() {
    [[ -f $W/nc.on.profile ]] || pipeline nc 2 force "$P/replay/thread_level" 4 || return 1
    local on off
    on=$($TNBC run -p "$W/nc.on.profile" -- timeout -k 5 "$T_TIMEOUT" "${MPI2[@]}" \
            "$P/replay/thread_level" 4 report) || { echo "$on"; return 1; }
    off=$(TNBC_PROGRESS_BATCH=0 $TNBC run -p "$W/nc.on.profile" -- timeout -k 5 "$T_TIMEOUT" \
            "${MPI2[@]}" "$P/replay/thread_level" 4 report) || { echo "$off"; return 1; }
    echo "default: $(grep progress_policy <<<"$on"); TNBC_PROGRESS_BATCH=0: $(grep progress_policy <<<"$off")"
    [[ $(grep progress_policy <<<"$on") == "progress_policy batch" ]] ||
        { echo "default: want the progress thread under SCHED_BATCH"; return 1; }
    [[ $(grep progress_policy <<<"$off") == "progress_policy other" ]] ||
        { echo "TNBC_PROGRESS_BATCH=0: want the default policy"; return 1; }
    [[ $(grep checksum <<<"$on") == $(grep checksum <<<"$off") ]] || { echo "results differ"; return 1; }
}
t_run "progress thread under SCHED_BATCH, the default policy with TNBC_PROGRESS_BATCH=0" check_progress_policy
# A program that asks for MPI_THREAD_MULTIPLE and calls collectives from
# one thread (a second thread exchanging point to point at the same time),
# from one thread after another (each joined before the next starts), or
# from main and a worker in turns while main waits for it: its calls go
# early, every one of them, with the same results as plain. When the
# second thread calls collectives too (MPI_Allreduce on its own
# communicator while the main thread's alltoalls run), the results are
# plain's and every call is counted; whether the two threads' calls
# overlap depends on timing there. Where they do, the rank stops its
# machinery at that call, says so once, and every later call runs blocking
# on every rank: the ThreadSanitizer run below makes them overlap for
# certain (TNBC_TEST_HOLD_CONTENDED) and checks that, with the
# second thread's point-to-point calls (whose buffer releases meet the
# guards) and its stopped collectives against the main thread's early
# returns and the progress thread.
check_thread_multiple() {
    pipeline mt 2 force "$P/replay/thread_level" 24 - multiple || return 1
    all_early mt alltoall 2 24 || return 1
    # Collectives handed from thread to thread, each thread joined before
    # the next starts: the owner's exit hands the runtime on, and every
    # call goes early (before, the second thread stopped the rank).
    pipeline mtr 2 force "$P/replay/thread_level" 24 - relay || return 1
    all_early mtr alltoall 2 24 || return 1
    # Main and a worker in turns, main alive all along (an OpenMP
    # `single`): the token passes between them, every call goes early
    # (under the owner rule before, the worker's first call stopped the rank).
    pipeline mtt 2 force "$P/replay/thread_level" 24 - turns || return 1
    all_early mtt alltoall 2 24 || return 1
    local r want; want=$(t_mpirun 2 "$P/replay/thread_level" 24 - second) || return 1
    local got; got=$($TNBC run -p "$W/mt.on.profile" --summary "$W/mt2.summary.d" -- \
        timeout -k 5 "$T_TIMEOUT" "${MPI2[@]}" "$P/replay/thread_level" 24 - second 2> "$W/mt2.err") ||
        { echo "$got"; cat "$W/mt2.err"; return 1; }
    [[ $got == "$want" ]] || { echo "two threads with collectives: results differ ($got, plain $want)"; return 1; }
    for r in 0 1; do
        [[ $(grep -c "^tnbc\[$r\]: collectives from two threads at once" "$W/mt2.err") -le 1 ]] ||
            { echo "rank $r: want at most one line saying why it stopped"; cat "$W/mt2.err"; return 1; }
        # Every alltoall counted: at its site before the stop, in the
        # `(stopped)` row after it (which thread stops the rank, and when,
        # depends on timing; the total does not).
        local n; n=$(q "$W/mt2.summary.d/rank-00000$r.db" "SELECT sum(calls) FROM site WHERE op = 'alltoall'")
        echo "rank $r: alltoall rows $(q "$W/mt2.summary.d/rank-00000$r.db" "SELECT site || ':' || calls || ':' || fallback FROM site WHERE op = 'alltoall'" | paste -sd' ')"
        [[ $n == 24 ]] || { echo "rank $r: the summary counts $n alltoall calls, the program made 24"; return 1; }
    done
    if [[ -n $(q "$W/mt2.summary.d/rank-000000.db" "SELECT 1 FROM site WHERE site = '(stopped)' LIMIT 1") ]]; then
        $TNBC merge "$W/mt2.db" "$W/mt2.summary.d" > /dev/null || return 1
        $TNBC report "$W/mt2.db" -p "$W/mt.on.profile" -o "$W/mt2.report" --no-plots | grep -A1 '^site (stopped)' |
            grep -q 'blocking: stopped' || { echo "tnbc report: no line for the calls after the stop"; return 1; }
    fi
    # The same under tnbc auto: a stopped rank sends a key no site has.
    got=$($TNBC auto -- timeout -k 5 "$T_TIMEOUT" "${MPI2[@]}" "$P/replay/thread_level" 24 - second \
          2> "$W/mt3.err") || { echo "$got"; cat "$W/mt3.err"; return 1; }
    [[ $got == "$want" ]] || { echo "auto, two threads with collectives: results differ ($got, plain $want)"; return 1; }
    [[ $(grep -c "collectives from two threads at once" "$W/mt3.err") -le 2 ]] ||
        { echo "auto: a rank said more than once why it stopped"; cat "$W/mt3.err"; return 1; }
}

# The runs above under ThreadSanitizer (the profile of the test above),
# and the overlapping one under tnbc auto with the AddressSanitizer build.
check_thread_multiple_tsan() {
    [[ -f $W/mt.on.profile ]] || { echo "no profile: the test above failed"; return 1; }
    local tsan want; tsan=$(gcc -print-file-name=libtsan.so)
    [[ -f "$tsan" && -f "$BUILD_TSAN/lib/libtnbc-replay.so" ]] || { echo "no TSan build"; return 1; }
    local mode
    for mode in multiple second relay turns; do
        want=$(t_mpirun 2 "$P/replay/thread_level" 24 - "$mode") || return 1
        # second: each rank's first holder keeps the token until the other
        # thread's collective finds it taken, so the two overlap for certain.
        t_mpirun 2 -x LD_PRELOAD="$tsan:$PWD/$BUILD_TSAN/lib/libtnbc-replay.so" -x TNBC_PROFILE="$W/mt.on.profile" \
            -x TNBC_TEST_HOLD_CONTENDED=$([[ $mode == second ]] && echo 1 || echo 0) \
            -x TSAN_OPTIONS="halt_on_error=0 report_signal_unsafe=1 history_size=7 symbolize=0 suppressions=$PWD/test/replay/tsan.supp" \
            "$P/replay/thread_level" 24 - "$mode" > "$W/mt.$mode.tsan" 2>&1 || { tail -40 "$W/mt.$mode.tsan"; return 1; }
        [[ $(grep checksum "$W/mt.$mode.tsan") == $(echo "$want" | grep checksum) ]] ||
            { echo "$mode: results differ under TSan"; tail -40 "$W/mt.$mode.tsan"; return 1; }
        ! grep -q "WARNING: ThreadSanitizer" "$W/mt.$mode.tsan" ||
            { echo "$mode:"; grep -A30 "WARNING: ThreadSanitizer" "$W/mt.$mode.tsan" | head -80; return 1; }
        local r said
        for r in 0 1; do
            said=$(grep -c "^tnbc\[$r\]: collectives from two threads at once" "$W/mt.$mode.tsan")
            [[ $said == $([[ $mode == second ]] && echo 1 || echo 0) ]] ||
                { echo "$mode: rank $r said $said times that two threads' collectives overlapped"; return 1; }
        done
    done
    # The stop under tnbc auto, the calls made to overlap by the same hook
    # (the AddressSanitizer build has it too): a stopped rank sends a key
    # no site has, and the other rank follows it into blocking calls.
    local asan; asan=$(gcc -print-file-name=libasan.so)
    [[ -f "$asan" && -f "$BUILD_ASAN/lib/libtnbc-replay.so" ]] || { echo "no ASan build"; return 1; }
    want=$(t_mpirun 2 "$P/replay/thread_level" 24 - second) || return 1
    t_mpirun 2 -x LD_PRELOAD="$asan:$PWD/$BUILD_ASAN/lib/libtnbc-replay.so" -x TNBC_AUTO=1 \
        -x TNBC_TEST_HOLD_CONTENDED=1 -x ASAN_OPTIONS=detect_leaks=0 \
        "$P/replay/thread_level" 24 - second > "$W/mt.auto.asan" 2>&1 || { tail -40 "$W/mt.auto.asan"; return 1; }
    [[ $(grep checksum "$W/mt.auto.asan") == $(echo "$want" | grep checksum) ]] ||
        { echo "auto, overlapping collectives: results differ"; tail -40 "$W/mt.auto.asan"; return 1; }
    for r in 0 1; do
        said=$(grep -c "^tnbc\[$r\]: collectives from two threads at once" "$W/mt.auto.asan")
        [[ $said == 1 ]] || { echo "auto: rank $r said $said times that two threads' collectives overlapped"; return 1; }
    done
}

t_run "MPI_THREAD_MULTIPLE: early from one thread, stopped safely by a second" check_thread_multiple
t_openmpi_only "MPI_THREAD_MULTIPLE under ThreadSanitizer" "the sanitizer builds (build-tsan, build-asan) are Open MPI builds" &&
    t_run "MPI_THREAD_MULTIPLE under ThreadSanitizer" check_thread_multiple_tsan
# No silent fallback: every call is counted either as early or under the
# reason it ran blocking. 2 ranks, 256 KiB blocks in a loop on the same
# buffers: no call may meet the guard of the one before it (the guard
# lifetime: a finished call's ranges are retired before the next arms).
# Then a trial run: half the alltoalls blocking in the site's pattern
# (trial_want), 'trial' in the summary and in `tnbc report`.
check_fallback_reasons() {
    pipeline fb 2 force "$P/replay/thread_level" 40 || return 1
    local r row
    for r in 0 1; do
        row=$(q "$W/fb.summary.d/rank-00000$r.db" "SELECT calls || '/' || traced || '/' || fallback FROM site WHERE op = 'alltoall'")
        echo "rank $r alltoall calls/early/fallback: $row"
        [[ $row == "40/40/" ]] || { echo "want 40/40/ (every call early, none fell back)"; return 1; }
    done
    # The 8-byte reduce into a local variable: the root's buffer is on its
    # stack (it votes blocking as unsafe, docs/limits.md), the other rank
    # follows it.
    [[ $(q "$W/fb.summary.d/rank-000000.db" "SELECT fallback FROM site WHERE op = 'reduce'") == "unsafe:1" &&
       $(q "$W/fb.summary.d/rank-000001.db" "SELECT fallback FROM site WHERE op = 'reduce'") == "other-rank:1" ]] ||
        { echo "reduce: want unsafe:1 at the root, other-rank:1 at rank 1"; return 1; }
    TNBC_REPLAY_TRIAL=1 $TNBC run -p "$W/fb.on.profile" --summary "$W/fbt.summary.d" -- \
        timeout -k 5 "$T_TIMEOUT" "${MPI2[@]}" "$P/replay/thread_level" 20 > "$W/fbt.out" || return 1
    local want nb
    want=$(trial_want "$W/fb.on.profile" alltoall 20) || { echo "no alltoall site"; return 1; }
    nb=$(grep -o ':1' <<< "$want" | wc -l)
    (( nb > 0 )) || { echo "no blocking call in the pattern: $want"; return 1; }
    for r in 0 1; do
        row=$(q "$W/fbt.summary.d/rank-00000$r.db" "SELECT calls || '/' || traced || '/' || fallback FROM site WHERE op = 'alltoall'")
        [[ $row == "20/$((20 - nb))/trial:$nb" ]] || { echo "rank $r trial: $row, want 20/$((20 - nb))/trial:$nb"; return 1; }
    done
    $TNBC merge "$W/fbt.db" "$W/fbt.summary.d" > /dev/null || return 1
    local rep
    rep=$($TNBC report "$W/fb.db" "$W/fbt.db" -p "$W/fb.on.profile" -o "$W/fb.report" --no-plots) ||
        { echo "$rep"; return 1; }
    echo "$rep" | grep 'replay:'
    echo "$rep" | grep -q "^  replay: $((40 - 2 * nb)) of 40 calls returned early (all ranks); blocking: trial $((2 * nb))\$" ||
        { echo "tnbc report: no per-site replay line for the alltoall"; return 1; }
}

t_run "no silent fallback: early or a reason, per site, in the summary and tnbc report" check_fallback_reasons

# A site whose sizes change from call to call (1, 5/4, 3/2 of the block in
# turn, and a quarter of it every tenth call): the analyzer keeps one
# decision for the traced 1-3/2 (block_bytes -1 and block_range), the
# runtime takes calls within a factor 2 of those early and runs the quarter
# blocking as a profile mismatch; results identical.
check_varying_block() {
    pipeline vary 2 force "$P/replay/auto_user" 20 32768 vary || return 1
    local s r row
    s=$(awk '/^site .* alltoall$/ {on = 1} on && /block_bytes|block_range/ {print} /^end/ {on = 0}' "$W/vary.profile" | tr -s ' ' | paste -sd' ')
    [[ $s == " block_bytes -1  block_range 32768 49152" ]] ||
        { echo "alltoall identity: '$s', want block_bytes -1 and block_range 32768 49152"; return 1; }
    for r in 0 1; do
        row=$(q "$W/vary.summary.d/rank-00000$r.db" "SELECT calls || '/' || traced || '/' || fallback FROM site WHERE op = 'alltoall'")
        echo "rank $r alltoall calls/early/fallback: $row"
        [[ $row == "20/18/profile-mismatch:2" ]] ||
            { echo "want 20/18/profile-mismatch:2 (the two quarter-size calls blocking)"; return 1; }
    done
}
t_run "block sizes varying between calls: early within the traced range, blocking outside" check_varying_block
# Symbols: the library exports only MPI, Fortran MPI and the libc calls it
# interposes (the export list that scripts/gen-exports writes): every other
# exported name is one the C library exports too, and the basic I/O, free
# and signal calls are among them; a program exporting its own land,
# progress_submit and nbop_create gets its own results, and the library
# still lands data with its own (results as in a plain run).
check_symbols() {
    local lib=$BUILD/lib/libtnbc-replay.so extra
    # Beyond MPI's names, only functions the C library itself exports (the
    # calls tnbc interposes) may be exported; land, nbop_*, tnbc_* ... not.
    local libc; libc=$(gcc -print-file-name=libc.so.6)
    extra=$(comm -23 <(nm -D --defined-only "$lib" | awk '{print $3}' | grep -Ev '^(MPI_|mpi_)' | sort -u) \
                     <(nm -D --defined-only "$libc" | awk '{sub(/@.*/, "", $3); print $3}' | sort -u))
    [[ -z $extra ]] || { echo "exported beyond the list:" $extra; return 1; }
    local w; for w in read write free munmap mmap mprotect sigaction sigset vfork; do
        nm -D --defined-only "$lib" | awk '{print $3}' | grep -qx "$w" ||
            { echo "interposed $w is not exported"; return 1; }
    done
    nm -D --defined-only "$lib" | grep -Eq ' (land|nbop_create|progress_submit|tnbc_guard_arm)$' &&
        { echo "an internal symbol is exported"; return 1; }
    nm -D --defined-only "$P/replay/own_symbols" | grep -qw land || { echo "the test program does not export land"; return 1; }
    pipeline sym 2 force "$P/replay/own_symbols" 6 || return 1
    cat "$W/sym.tuned"
    grep -q '^own_symbols: data ok, own functions ok$' "$W/sym.tuned" || return 1
    [[ $(early sym alltoall) -gt 0 ]] || { echo "alltoall not transformed"; return 1; }
}

t_run "symbols: only the interposed ones exported; a program's own land() stays its own" check_symbols
# LeakSanitizer over 300 chunked allreduces (the replay library built with
# SAN=asan, preloaded after the sanitizer runtimes): no leak may be
# allocated by the library's own code (a leak per chunked op shows 300
# times with frames in libreplay/). Open MPI's own leaks at exit are not
# judged here (its frames are not ours).
check_lsan() {
    local asan ubsan lib=$PWD/build-asan/lib/libtnbc-replay.so
    asan=$(gcc -print-file-name=libasan.so); ubsan=$(gcc -print-file-name=libubsan.so)
    [[ -f "$asan" && -f "$ubsan" && -f "$lib" ]] || { echo "no ASan build (make SAN=asan)"; return 1; }
    pipeline lk 2 force "$P/replay/allreduce_loop" 4 || return 1
    t_mpirun 2 -x LD_PRELOAD="$asan:$ubsan:$lib" -x TNBC_PROFILE="$W/lk.on.profile" \
        -x TNBC_REPLAY_DIR="$W/lk.asan.d" -x ASAN_OPTIONS=detect_leaks=1:exitcode=0 \
        "$P/replay/allreduce_loop" 300 > "$W/lk.asan" 2>&1
    grep -q '^allreduce_loop: ok$' "$W/lk.asan" || { tail -30 "$W/lk.asan"; return 1; }
    local r n
    for r in 0 1; do
        n=$(q "$W/lk.asan.d/rank-00000$r.db" "SELECT traced FROM site WHERE op = 'allreduce'")
        [[ $n == 300 ]] || { echo "rank $r: $n of 300 allreduces transformed"; return 1; }
    done
    grep -q 'LeakSanitizer\|==ERROR' "$W/lk.asan" || echo "(no leak report at all)"
    if grep -Eq '^ +#[0-9]+ .* (libreplay|core|profiles)/[a-z_]+\.c:' "$W/lk.asan"; then
        grep -B3 -A6 -E ' (libreplay|core|profiles)/[a-z_]+\.c:' "$W/lk.asan" | head -40; return 1
    fi
    grep -qi 'runtime error' "$W/lk.asan" && { grep -i 'runtime error' "$W/lk.asan" | head; return 1; }
    return 0
}

t_openmpi_only "LeakSanitizer: 300 chunked allreduces leak nothing of the library's" "the sanitizer builds (build-tsan, build-asan) are Open MPI builds" &&
    T_TIMEOUT=300 t_run "LeakSanitizer: 300 chunked allreduces leak nothing of the library's" check_lsan
# Release before every MPI call that can touch a user buffer: the wrappers
# generated from mpi.h (scripts/gen-release-mpi) are current, each one on
# the list is exported by the library, and a program handing a buffer in
# flight to MPI_Mrecv, MPI_Pack and MPI_Reduce_scatter_block (shared memory
# and TCP) gives the plain run's results.
check_release_list() {
    local mpi=openmpi list fn missing=0 exported gen=()
    # MPICH's are generated by the build from its header.
    [[ ${T_MPI:-openmpi} == mpich ]] && mpi=mpich gen=(-o "$BUILD/core/wrap_release_gen_mpich.c")
    scripts/gen-release-mpi --mpi "$mpi" --check "${gen[@]}" || return 1
    list=$(scripts/gen-release-mpi --mpi "$mpi" --list | awk '{print $1}')
    exported=$(nm -D --defined-only "$BUILD/lib/libtnbc-replay.so" | awk '{print $3}')
    for fn in $list; do
        grep -qx "$fn" <<< "$exported" || { echo "not exported: $fn"; missing=1; }
    done
    echo "$(wc -w <<< "$list") generated wrappers, all exported"
    # docs/limits.md lists Open MPI's (MPICH's adds MPI-4's, too many to list).
    local doc; doc=$(sed -n '/release-list begin/,/release-list end/p' docs/limits.md | grep -o 'MPI_[A-Za-z_]*' | sort)
    [[ $mpi == mpich || $doc == "$(sort <<< "$list")" ]] ||
        { echo "docs/limits.md's release list is not the generated one"; return 1; }
    [[ $missing == 0 ]] || return 1
    for fn in MPI_Alltoallw MPI_Reduce_scatter_block MPI_Ineighbor_alltoall MPI_Rput MPI_Rget \
              MPI_Mrecv MPI_Imrecv MPI_Pack MPI_Unpack MPI_Get_accumulate MPI_Iscan; do
        # generated, or handled by a hand-written wrapper (core/wrap_*.c)
        grep -qx "$fn" <<< "$list"$'\n'"$exported" || { echo "$fn is not covered"; return 1; }
    done
    pipeline rc 2 force "$P/replay/release_calls" 6 || return 1
    [[ $(early rc alltoall) -gt 0 ]] || { echo "alltoall not transformed"; return 1; }
    # Open MPI's TCP transport as well (MPICH has no --mca btl: done above on its own).
    [[ ${T_MPI:-openmpi} == mpich ]] && return 0
    $TNBC run -p "$W/rc.on.profile" -- timeout -k 5 "$T_TIMEOUT" "${MPI2[@]}" \
        --mca btl self,tcp --mca btl_tcp_if_include lo "$P/replay/release_calls" 6 > "$W/rc.tcp" &&
        cmp "$W/rc.plain" "$W/rc.tcp"
}

t_run "release before every MPI call with a buffer (generated from mpi.h)" check_release_list
# inject NAME WHAT REASON ASAN_OPTIONS N... -- ENV...: failure injection in
# the sanitizer build. The integrity program, its sites forced on, runs
# under the ASan/UBSan replay library with ENV (which names N), for each N:
# the results must be the plain run's, some site rows must count REASON,
# and no sanitizer error, frame of the library's in a leak report, or
# abort may show. WHAT names the failure in messages.
inject() {
    local name=$1 what=$2 reason=$3 asan_opts=$4; shift 4
    local ns=() n r hits asan ubsan lib=$PWD/build-asan/lib/libtnbc-replay.so
    while [[ $1 != -- ]]; do ns+=("$1"); shift; done; shift
    asan=$(gcc -print-file-name=libasan.so); ubsan=$(gcc -print-file-name=libubsan.so)
    [[ -f "$asan" && -f "$ubsan" && -f "$lib" ]] || { echo "no ASan build (make SAN=asan)"; return 1; }
    pipeline "$name" 3 force "$P/replay/integrity" 12 4 || return 1
    local bad='^ +#[0-9]+ .* (libreplay|core|profiles)/[a-z_]+\.c:|ERROR: AddressSanitizer|runtime error|aborting'
    for n in "${ns[@]}"; do
        t_mpirun 3 -x LD_PRELOAD="$asan:$ubsan:$lib" -x TNBC_PROFILE="$W/$name.on.profile" \
            -x TNBC_REPLAY_DIR="$W/$name$n.d" $(printf -- "-x %s " "${@//\{n\}/$n}") \
            -x ASAN_OPTIONS="$asan_opts" -x LSAN_OPTIONS="$LSAN_SUPPRESS" \
            "$P/replay/integrity" 12 4 > "$W/$name$n.out" 2>&1 ||
            { tail -30 "$W/$name$n.out"; return 1; }
        cmp <(grep -E '^(integrity|checksums)' "$W/$name$n.out") "$W/$name.plain" ||
            { echo "every $n-th $what failing: results differ"; return 1; }
        hits=0
        for r in 0 1 2; do
            hits=$((hits + $(q "$W/$name$n.d/rank-00000$r.db" "SELECT count(*) FROM site WHERE fallback LIKE '%$reason%'")))
        done
        echo "every $n-th $what failing: $hits site rows with $reason"
        [[ $hits -gt 0 ]] || { echo "no call counted as $reason"; return 1; }
        if grep -Eq "$bad" "$W/$name$n.out"; then
            grep -B3 -A8 -E "$bad" "$W/$name$n.out" | head -40
            return 1
        fi
    done
}

# Allocation failure: TNBC_TEST_FAIL_ALLOC=N fails every N-th allocation of
# the op's files (libreplay/testalloc.h). The calls hit run blocking
# (counted as no-memory), the results are the plain run's, nothing aborts,
# hangs, or leaks memory of the library's (LeakSanitizer).
check_alloc_failure() {
    inject af allocation no-memory "$LSAN_FULL_STACKS:exitcode=0" 3 11 -- 'TNBC_TEST_FAIL_ALLOC={n}'
}

# mprotect failure: TNBC_TEST_FAIL_MPROTECT=N fails every N-th mprotect of
# the guard with ENOMEM (as the kernel does at vm.max_map_count), with each
# landing held 3 ms so that the program faults on pages still closed. A
# guard that cannot be armed makes its call wait for all its data
# (guard-conflict); a page that cannot be opened is opened page by page or
# the call waits for all its data. The results are the plain run's;
# nothing aborts, hangs or reports a sanitizer error.
check_mprotect_failure() {
    inject mf mprotect guard-conflict detect_leaks=0 2 3 -- 'TNBC_TEST_FAIL_MPROTECT={n}' TNBC_TEST_LAND_DELAY_US=3000
}

t_openmpi_only "mprotect failures: same results, no abort, no hang" "the sanitizer builds (build-tsan, build-asan) are Open MPI builds" &&
    T_TIMEOUT=300 t_run "mprotect failures: same results, no abort, no hang" check_mprotect_failure
t_openmpi_only "allocation failures vote blocking: same results, no abort, no leak" "the sanitizer builds (build-tsan, build-asan) are Open MPI builds" &&
    T_TIMEOUT=300 t_run "allocation failures vote blocking: same results, no abort, no leak" check_alloc_failure
t_summary
