#!/usr/bin/env bash
# Torture suite: legal MPI programs that do unusual things with buffers
# after a blocking collective returned (test/torture/*.c). Each runs plain,
# traced, tuned with the analyzer's profile and tuned with every site
# forced on; the four outputs must be identical byte for byte, and every
# run ends in time (a hang is a failure with a message).
#   TORTURE_CASES="a b"  runs only those cases.
set -u
cd "$(dirname "$0")/.."
: "${BUILD:=build}"
source test/lib.sh
export TNBC_BUILD=$PWD/$BUILD
TNBC=scripts/tnbc
P=$BUILD/test/torture
: "${TORTURE_TIMEOUT:=60}"
W=$(mktemp -d /tmp/tnbc-torture.XXXXXX)
trap 'rm -rf "$W"' EXIT

force_on() { sed -E 's/^  decision off .*/  decision on forced by the torture test/' "$1" > "$2"; }

mpi() { # NP PROGRAM: one bounded run
    timeout -k 5 "$TORTURE_TIMEOUT" mpirun --oversubscribe -np "$1" "$2"
}

same() { # NAME MODE
    if ! cmp -s "$W/$1.plain" "$W/$1.$2"; then
        echo "$2 output differs from the plain run:"; diff "$W/$1.plain" "$W/$1.$2" | head -20
        return 1
    fi
}

ran() { # NAME MODE RC
    [[ $3 -eq 0 ]] && return 0
    [[ $3 -eq 124 || $3 -eq 137 ]] && echo "$2 run hung (killed after ${TORTURE_TIMEOUT}s)" ||
        echo "$2 run failed (exit $3)"
    tail -20 "$W/$1.$2.err"
    return 1
}

torture() { # NAME NP
    local name=$1 np=$2 prog=$P/$1 rc
    mpi "$np" "$prog" > "$W/$name.plain" 2> "$W/$name.plain.err"; rc=$?
    ran "$name" plain $rc || return 1
    $TNBC trace -o "$W/$name.db" -- mpi "$np" "$prog" > "$W/$name.trace" 2> "$W/$name.trace.err"; rc=$?
    ran "$name" trace $rc && same "$name" trace || return 1
    $TNBC analyze "$W/$name.db" -o "$W/$name.profile" > "$W/$name.analyze" 2>&1 ||
        { echo "analyze failed"; cat "$W/$name.analyze"; return 1; }
    $TNBC run -p "$W/$name.profile" -- mpi "$np" "$prog" > "$W/$name.tuned" 2> "$W/$name.tuned.err"; rc=$?
    ran "$name" tuned $rc && same "$name" tuned || return 1
    force_on "$W/$name.profile" "$W/$name.on.profile"
    $TNBC run -p "$W/$name.on.profile" -- mpi "$np" "$prog" > "$W/$name.forced" 2> "$W/$name.forced.err"; rc=$?
    ran "$name" forced $rc && same "$name" forced || return 1
    grep -h 'runs blocking' "$W/$name".*.err | sed 's/^.*tnbc[^:]*: //' | sort -u | head -5
    return 0
}
export -f mpi
export TORTURE_TIMEOUT

declare -A what=(
    [vector_holes]="vector type: holes written by another thread (1)"
    [stack_buf]="receive buffers on the stack of returning frames (2)"
    [type_freed]="derived datatype freed after the call (3)"
    [maxmin_float]="MAX/MIN on doubles with signed zeros and NaNs (4)"
    [mprotect_table]="mprotect/madvise/mmap MAP_FIXED on a received table (5)"
    [shared_map]="receive buffers in shared mappings (6)"
    [fork_child]="forked child reads the buffer (7)"
    [sigalrm_reader]="SIGALRM handler reads the last buffer (7)"
    [allgather_overlap]="allgather send buffer inside the receive buffer (7)"
    [blocked_reader]="reader thread with every signal blocked (8)"
    [sigset_handler]="program's SIGSEGV handler via sigset/sysv_signal/bsd_signal (8)"
    [efault]="pending buffers handed to system calls (9)"
    [threads_comms]="two threads, collectives on two communicators (10)"
    [thread_level]="the thread level asked for is the one seen (10)"
    [remap]="mremap, munmap+mmap, free+malloc right after the call"
    [two_pending]="memcpy between two pending buffers, second thread writing"
)
order=(vector_holes stack_buf type_freed maxmin_float mprotect_table shared_map fork_child
       sigalrm_reader allgather_overlap blocked_reader sigset_handler efault threads_comms
       thread_level remap two_pending)
for c in ${TORTURE_CASES:-${order[@]}}; do
    [[ -x $P/$c ]] || { t_run "$c: built" false; continue; }
    T_TIMEOUT=$((4 * TORTURE_TIMEOUT + 60)) t_run "$c: ${what[$c]:-}" torture "$c" 2
done
t_summary
