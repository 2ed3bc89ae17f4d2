#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Trace mode, end to end: unmodified MPI programs under LD_PRELOAD of
# libtnbc-trace.so, their first-touch records checked in SQLite.
set -u
cd "$(dirname "$0")/.."
source test/lib.sh
B=$BUILD
LIB=$PWD/$B/lib/libtnbc-trace.so
P=$B/test/trace
W=$(mktemp -d /tmp/tnbc-trace-test.XXXXXX)
trap 'rm -rf "$W"' EXIT

# traced NAME NP PROGRAM ARGS...: run under tracing into $W/NAME.d, merge into $W/NAME.db
traced() {
    local name=$1 np=$2; shift 2
    rm -rf "$W/$name.d" "$W/$name.db"
    local pass=() v
    for v in TNBC_TRACE_MAX_CALLS TNBC_CHUNKS TNBC_TRACE_SEND TNBC_TRACE_STEP_CALLS TNBC_TRACE_TAIL_CALLS TNBC_TRACE_KEYS; do [[ -n "${!v:-}" ]] && pass+=(-x "$v"); done
    t_mpirun "$np" -x LD_PRELOAD="$LIB" -x TNBC_TRACE_DIR="$W/$name.d" "${pass[@]}" "$@" &&
        "$B/bin/tnbc-merge" "$W/$name.db" "$W/$name.d"
}
q() { sqlite3 -batch -noheader "$1" "$2"; }

# Each traced receive side's touch order, one line per call: "rank op order".
orders() {
    q "$1" "SELECT c.rank, c.op, (SELECT group_concat(idx, ',') FROM (SELECT idx FROM touch t
             WHERE t.call_id = c.call_id AND t.side = 'recv' AND t.ord IS NOT NULL ORDER BY t.ord))
           FROM call c WHERE c.op = '$2' ORDER BY c.rank, c.invocation"
}

# expect_order DB OP ORDER NCALLS: every traced OP call shows ORDER, and there are NCALLS of them.
expect_order() {
    local db=$1 op=$2 want=$3 n=$4 got lines
    got=$(orders "$db" "$op")
    lines=$(echo "$got" | grep -c . || true)
    if [[ $lines -ne $n ]]; then echo "expected $n traced $op calls, found $lines"; echo "$got"; return 1; fi
    if echo "$got" | awk -F'|' -v w="$want" '$3 != w { bad = 1; print "rank " $1 ": order " $3 ", want " w } END { exit bad }'; then
        return 0
    fi
    return 1
}

# Every recv first touch comes after the call returned.
touches_after_return() {
    local bad
    bad=$(q "$1" "SELECT count(*) FROM touch t JOIN call c USING (call_id) WHERE t.tsc <= c.return_tsc")
    [[ $bad -eq 0 ]] || { echo "$bad touches before the return"; return 1; }
    local n; n=$(q "$1" "SELECT count(*) FROM touch WHERE ord IS NOT NULL")
    [[ $n -gt 0 ]] || { echo "no touches at all"; return 1; }
}

check_alltoall_perm() {
    traced a2a 4 "$P/access_order" alltoall 8192 3,1,0,2 3 &&
        expect_order "$W/a2a.db" alltoall 3,1,0,2 12 && touches_after_return "$W/a2a.db"
}
# A program that reads one block of two and leaves the other untouched
# until the next call reuses the buffer: every traced call is guarded.
# Before, the earlier call's guard, opened only by that reuse, was lifted
# one call later, so every other call went unguarded ('edge' throughout)
# and the analyzer took those calls for calls never read.
check_unread_blocks() {
    ACCESS_ORDER_READ=1 traced ur 2 -x ACCESS_ORDER_READ "$P/access_order" alltoall 65536 1,0 6 100 || return 1
    local got
    got=$(q "$W/ur.db" "SELECT c.rank || ':' || c.invocation || ':' || group_concat(s.guard) FROM call c
                        JOIN submsg s ON s.call_id = c.call_id AND s.side = 'recv'
                        WHERE c.op = 'alltoall' GROUP BY c.call_id HAVING sum(s.guard IN ('guarded', 'partial')) = 0")
    [[ -z $got ]] || { echo "calls with no guarded block (rank:invocation:guards): $got"; return 1; }
    [[ $(q "$W/ur.db" "SELECT count(*) FROM call WHERE op = 'alltoall'") == 12 ]] ||
        { echo "want 12 traced alltoalls"; return 1; }
}
check_reverse()   { traced rev 4 "$P/access_order" alltoall 4096 reverse 2 && expect_order "$W/rev.db" alltoall 3,2,1,0 8; }
check_forward()   { traced fwd 3 "$P/access_order" alltoallv 12288 forward 2 && expect_order "$W/fwd.db" alltoallv 0,1,2 6; }
check_allgather() { traced ag 4 "$P/access_order" allgather 8192 2,0,3,1 2 && expect_order "$W/ag.db" allgather 2,0,3,1 8; }
# Only the root receives: its two calls show the order, the other ranks'
# calls have no receive sub-messages (nsub 0) and no touches.
check_gather() {
    traced ga 4 "$P/access_order" gather 8192 1,3,0,2 2 || return 1
    local got want
    got=$(q "$W/ga.db" "SELECT rank || ':' || nsub FROM call WHERE op = 'gather' ORDER BY rank, invocation" |
          tr '\n' ' ')
    want="0:4 0:4 1:0 1:0 2:0 2:0 3:0 3:0 "
    [[ $got == "$want" ]] || { echo "rank:nsub $got, want $want"; return 1; }
    got=$(orders "$W/ga.db" gather | tr '\n' ' ')
    want="0|gather|1,3,0,2 0|gather|1,3,0,2 1|gather| 1|gather| 2|gather| 2|gather| 3|gather| 3|gather| "
    [[ $got == "$want" ]] || { echo "orders: $got"; echo "want:   $want"; return 1; }
}

# Bcast in m = 4 chunks read as {3,1,2,0}: every non-root rank shows it.
check_bcast() {
    traced bc 4 "$P/access_order" bcast 8192 3,1,2,0 2 || return 1
    local got; got=$(orders "$W/bc.db" bcast | awk -F'|' '$1 != 0 {print $3}' | sort -u)
    [[ "$got" == "3,1,2,0" ]] || { echo "bcast orders: $got"; return 1; }
    [[ $(q "$W/bc.db" "SELECT DISTINCT chunks FROM call WHERE op='bcast' AND rank<>0") == 4 ]]
}
# (The program's own final MPI_Allreduce is another site, with 1 element.)
check_allreduce() {
    traced ar 2 "$P/access_order" allreduce 8192 1,3,0,2 2 || return 1
    local got; got=$(orders "$W/ar.db" allreduce | awk -F'|' '$3 != "" {print $3}')
    [[ $(echo "$got" | grep -c .) == 4 && $(echo "$got" | sort -u) == "1,3,0,2" ]] ||
        { echo "allreduce orders: $got"; return 1; }
}

# Blocks not aligned to pages: every block that has a guarded byte is
# traced, in the right relative order; blocks wholly in edge pages are not.
check_unaligned() {
    traced un 4 "$P/access_order" alltoall 5000 3,1,0,2 2 100 || return 1
    local got; got=$(orders "$W/un.db" alltoall | awk -F'|' '{print $3}' | sort -u)
    [[ "$got" == "3,1,0,2" ]] || { echo "unaligned orders: $got"; return 1; }
}

# Sub-page blocks: three blocks of 1500 B share the only guarded page
# (block 3 lies in the edge page). Exact first touches need the
# single-step re-arm; the order must be 1,0,2 (3 is untraceable).
check_subpage() {
    traced sp 4 "$P/access_order" alltoall 1500 3,1,0,2 2 || return 1
    local got; got=$(orders "$W/sp.db" alltoall | awk -F'|' '{print $3}' | sort -u)
    [[ "$got" == "1,0,2" ]] || { echo "sub-page orders: $got"; return 1; }
    [[ $(q "$W/sp.db" "SELECT DISTINCT guard FROM submsg WHERE side='recv' AND idx=3") == edge ]]
}

# Only a site's first TNBC_TRACE_STEP_CALLS (2) calls that can step do:
# in the later calls of the sub-page blocks above, the shared page's first
# fault records block 1, read first, and releases 0 and 2 (limit) instead
# of stepping; with TNBC_TRACE_STEP_CALLS=0 no call steps.
check_subpage_step_budget() {
    traced spb 4 "$P/access_order" alltoall 1500 3,1,0,2 5 || return 1
    local got want r
    got=$(q "$W/spb.db" "SELECT DISTINCT c.invocation || ':' || (f.steps > 0) FROM call c JOIN fidelity f
             USING (call_id) WHERE c.op = 'alltoall' ORDER BY 1" | paste -sd' ')
    [[ $got == "0:1 1:1 2:0 3:0 4:0" ]] || { echo "invocation:stepped $got, want 0:1 1:1 2:0 3:0 4:0"; return 1; }
    got=$(orders "$W/spb.db" alltoall | awk -F'|' '{print $3}' | paste -sd' ')
    want=$(for r in 0 1 2 3; do printf '1,0,2 1,0,2 1 1 1 '; done | sed 's/ $//')
    [[ $got == "$want" ]] || { echo "orders $got"; echo "want   $want"; return 1; }
    [[ $(q "$W/spb.db" "SELECT count(*) FROM touch t JOIN call c USING (call_id) WHERE t.side = 'recv'
            AND c.invocation >= 2 AND t.how = 'release:limit'") == 24 ]] ||
        { echo "want blocks 0 and 2 released (limit) in the 3 later calls of 4 ranks"; return 1; }
    TNBC_TRACE_STEP_CALLS=0 traced spb0 4 "$P/access_order" alltoall 1500 3,1,0,2 2 || return 1
    [[ $(q "$W/spb0.db" "SELECT sum(steps) FROM fidelity") == 0 ]] || { echo "TNBC_TRACE_STEP_CALLS=0 stepped"; return 1; }
}

# The program hands the whole receive buffer to write() before reading it,
# and rewrites the send buffer (in block order) before the next call, then
# frees it after the last: so on every rank, each of the 4 calls shows its
# 4 receive blocks released for io, and its 4 send blocks first written,
# or, at the last call, released by free.
check_io_reuse() {
    TNBC_TRACE_SEND=1 traced io 4 "$P/io_and_reuse" "$W" || return 1
    local got want= r i
    got=$(q "$W/io.db" "SELECT c.rank || ':' || c.invocation || ' ' || (SELECT group_concat(x, ',') FROM
            (SELECT t.side || t.idx || '=' || t.how AS x FROM touch t WHERE t.call_id = c.call_id
             ORDER BY t.side, t.idx)) FROM call c WHERE c.op = 'alltoall' ORDER BY c.rank, c.invocation")
    for r in 0 1 2 3; do
        for i in 0 1 2 3; do
            local s=write; [[ $i -eq 3 ]] && s=release:free
            want+="$r:$i recv0=release:io,recv1=release:io,recv2=release:io,recv3=release:io,"
            want+="send0=$s,send1=$s,send2=$s,send3=$s"$'\n'
        done
    done
    [[ $got == "${want%$'\n'}" ]] || { echo "got:"; echo "$got"; echo "want:"; echo "$want"; return 1; }
}

check_fortran() {
    traced f 4 "$P/access_order_f" 3,1,0,2 3 && expect_order "$W/f.db" alltoall 3,1,0,2 12 &&
        touches_after_return "$W/f.db"
}

# Bounded cost: only the first K calls of a site are traced, all are counted.
check_max_calls() {
    TNBC_TRACE_MAX_CALLS=2 traced k 2 "$P/access_order" alltoall 4096 forward 5 || return 1
    [[ $(q "$W/k.db" "SELECT count(*) FROM call WHERE op='alltoall'") == 4 ]] &&
        [[ $(q "$W/k.db" "SELECT DISTINCT calls || '/' || traced FROM site WHERE op='alltoall'") == "5/2" ]]
}

# Send buffers left unguarded (the default): receive orders still exact,
# no send rows.
check_no_send_guard() {
    traced ns 4 "$P/access_order" alltoall 8192 3,1,0,2 2 || return 1
    expect_order "$W/ns.db" alltoall 3,1,0,2 8 &&
        [[ $(q "$W/ns.db" "SELECT count(*) FROM touch WHERE side = 'send'") == 0 ]]
}

# How the receive pages were closed, as the trace recorded it (meta).
guard_way() { q "$1" "SELECT DISTINCT value FROM meta WHERE key = 'trace_guard'"; }
NO_KEYS="mprotect (no protection keys here)"

# Protection keys (the default where the CPU and kernel have them) and
# mprotect (TNBC_TRACE_KEYS=0) see the same first touches, in blocks not
# page-aligned; the trace says which it used.
check_keys_and_mprotect() {
    traced ky 4 "$P/access_order" alltoall 5000 3,1,0,2 2 100 || return 1
    TNBC_TRACE_KEYS=0 traced mp 4 "$P/access_order" alltoall 5000 3,1,0,2 2 100 || return 1
    local k m; k=$(guard_way "$W/ky.db"); m=$(guard_way "$W/mp.db")
    [[ ( "$k" == keys || "$k" == "$NO_KEYS" ) && "$m" == "mprotect (TNBC_TRACE_KEYS=0)" ]] ||
        { echo "guard: default '$k', TNBC_TRACE_KEYS=0 '$m'"; return 1; }
    [[ "$(orders "$W/ky.db" alltoall)" == "$(orders "$W/mp.db" alltoall)" &&
       $(orders "$W/ky.db" alltoall | grep -c '3,1,0,2') == 8 ]] ||
        { echo "keys:"; orders "$W/ky.db" alltoall; echo "mprotect:"; orders "$W/mp.db" alltoall; return 1; }
}

# Keys deny only the arming thread: a program that hands the received data
# to threads it starts after each call ends their use (its first call's
# threads inherit the denial and are seen), and every traced call has
# touches; the results are the plain run's.
check_threads_end_keys() {
    traced th 2 "$B/bench/ordinary" --iters 6 --head 3 --block 65536 --threads 2 > "$W/th.out" || return 1
    local plain way; plain=$(t_mpirun 2 "$B/bench/ordinary" --iters 6 --head 3 --block 65536 --threads 2 |
                                 sed -n 's/.*checksum=//p')
    [[ -n "$plain" && "$plain" == "$(sed -n 's/.*checksum=//p' "$W/th.out")" ]] ||
        { echo "checksum: plain $plain"; cat "$W/th.out"; return 1; }
    way=$(guard_way "$W/th.db")
    [[ "$way" == "keys, then mprotect (the program started a thread)" || "$way" == "$NO_KEYS" ]] ||
        { echo "guard: '$way'"; return 1; }
    local untouched; untouched=$(q "$W/th.db" "SELECT count(*) FROM call c WHERE c.op = 'alltoall' AND
        NOT EXISTS (SELECT 1 FROM touch t WHERE t.call_id = c.call_id AND t.ord IS NOT NULL)")
    [[ $untouched == 0 ]] || { echo "$untouched traced alltoall calls without a touch"; return 1; }
}

# Call sites are stable across runs (ASLR) and distinct per call.
check_site_stable() {
    [[ -f "$W/a2a.db" && -f "$W/rev.db" ]] || return 1
    local a b; a=$(q "$W/a2a.db" "SELECT DISTINCT site FROM call WHERE op='alltoall'")
    b=$(q "$W/rev.db" "SELECT DISTINCT site FROM call WHERE op='alltoall'")
    [[ -n "$a" && "$a" == "$b" && "$a" == access_order+0x* ]] || { echo "sites: '$a' vs '$b'"; return 1; }
}

# A run killed half-way keeps the calls traced so far (run.finished = 0).
check_killed_run() {
    rm -rf "$W/kill.d"
    ACCESS_ORDER_KILL_AFTER=3 TNBC_TRACE_FLUSH_MS=0 t_mpirun 2 -x LD_PRELOAD="$LIB" \
        -x TNBC_TRACE_DIR="$W/kill.d" -x TNBC_TRACE_FLUSH_MS \
        -x ACCESS_ORDER_KILL_AFTER "$P/access_order" alltoall 8192 reverse 6 && return 1
    local db=$W/kill.d/rank-000000.db
    [[ $(q "$db" "SELECT count(*) FROM call WHERE op='alltoall'") == 3 ]] &&
        [[ $(q "$db" "SELECT finished FROM run") == 0 ]] &&
        [[ $(q "$db" "SELECT count(*) FROM touch WHERE ord IS NOT NULL") -ge 4 ]]
}

# A real crash after a traced collective still crashes (chained to the
# previous SIGSEGV handler), quickly and with a signal exit.
check_real_crash() {
    local out rc
    out=$(t_mpirun 1 -x LD_PRELOAD="$LIB" -x TNBC_TRACE_DIR="$W/crash.d" "$P/crash_after" 2>&1); rc=$?
    [[ $rc -ne 0 && $rc -ne 124 && $rc -ne 137 ]] || { echo "exit $rc"; echo "$out"; return 1; }
    echo "$out" | grep -qi 'segmentation\|signal 11\|SIGSEGV' || { echo "$out"; return 1; }
}

# A bad setting gives one clear line and the default; the program is unaffected.
check_bad_env() {
    local out
    out=$(TNBC_TRACE_MAX_CALLS=lots TNBC_CHUNKS=0 TNBC_TRACE_KEYS=99 TNBC_TRACE_TAIL_CALLS=-1 traced env 2 "$P/access_order" alltoall 4096 forward 1 2>&1) ||
        { echo "$out"; return 1; }
    echo "$out" | grep -q 'TNBC_TRACE_MAX_CALLS="lots" is not a whole number' &&
        echo "$out" | grep -q 'TNBC_TRACE_TAIL_CALLS="-1" is not a whole number' &&
        echo "$out" | grep -q 'TNBC_CHUNKS="0" is not a whole number in \[1, 64\]' &&
        echo "$out" | grep -q 'TNBC_TRACE_KEYS="99" is not a whole number in \[0, 15\]' ||
        { echo "$out"; return 1; }
}

echo "trace: $(nproc) cores, library $LIB"
t_run "alltoall permutation 3,1,0,2, 4 ranks" check_alltoall_perm
t_run "alltoall reverse order" check_reverse
t_run "alltoallv forward order, 3 ranks" check_forward
t_run "allgather permutation" check_allgather
t_run "gather at the root" check_gather
t_run "bcast chunks read {3,1,2,0}" check_bcast
t_run "allreduce chunks" check_allreduce
t_run "blocks not page-aligned" check_unaligned
t_run "every call guarded when the code leaves blocks unread" check_unread_blocks
t_run "sub-page blocks sharing a page (exact re-arm)" check_subpage
t_run "sub-page blocks: only a site's first two calls single-step" check_subpage_step_budget
t_run "write/fwrite/MPI_Send/free on guarded buffers" check_io_reuse
t_run "Fortran (use mpi) MPI_ALLTOALL" check_fortran
t_run "only the first K calls traced" check_max_calls
t_run "send buffers unguarded by default" check_no_send_guard
t_run "call-site ids stable across runs" check_site_stable
t_run "protection keys and mprotect see the same touches" check_keys_and_mprotect
t_run "the program's threads end the use of keys, and are seen" check_threads_end_keys
t_run "killed run keeps what was traced" check_killed_run
t_run "real crash still crashes" check_real_crash
t_run "bad environment values" check_bad_env
t_summary
