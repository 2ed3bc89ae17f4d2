#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Torture suite: legal MPI programs that do unusual things with buffers
# after a blocking collective returned (test/torture/*.c). Each runs plain,
# traced, tuned with the analyzer's profile and tuned with every site
# forced on; the four outputs must be identical byte for byte, and every
# run ends in time (a hang is a failure with a message). The forced run
# must also do what the case is about: return early (the summary counts
# early returns), or run blocking with the expected reason logged.
#   TORTURE_CASES="a b"  runs only those cases ("profiles": the profile checks;
#                        "auto": tnbc auto on memory it cannot guard).
#
# The numbered cases of issue 22 and the programs that cover them:
#   1  vector type, holes written by another thread     vector_holes.c
#   2  receive buffers on the stack of returning frames  stack_buf.c
#   3  datatype freed after the call                     type_freed.c
#   4  MAX/MIN on doubles with signed zeros and NaNs     maxmin_float.c
#   5  the program mprotects the received table          mprotect_table.c
#   6  receive buffers in shared mappings                shared_map.c
#   7  forked child reads the buffer                     fork_child.c
#      MPI_Mrecv into a pending buffer                   mrecv_pending.c
#      MPI_Alltoallw from (and into) pending buffers     alltoallw_pending.c
#      SIGALRM handler reads the last buffer             sigalrm_reader.c
#      allgather send buffer in its own receive slot     allgather_overlap.c
#      40,000-site profile, FIFO profile, -p /dev/zero   check_profiles below
#   8  MPI_File_iwrite_at of a pending buffer            file_iwrite.c
#      reader thread with every signal blocked           blocked_reader.c
#      sigset/sysv_signal/bsd_signal after MPI_Init      sigset_handler.c
#   9  EFAULT: preadv/pwritev, stat, getcwd, pipe, ...  efault.c
#      the same through _FORTIFY_SOURCE's checked entries fortify_io.c
#      aio_*, lio_listio, sendmmsg/recvmmsg, vmsplice,
#      process_vm_readv/writev on the process itself    kernel_io.c
#  10  two threads, collectives on two communicators     threads_comms.c
#      thread level asked for is the one seen            thread_level.c
#  (11, SHMEM sizes and strides, is not a case of this suite.)
# Own cases: remap.c, two_pending.c, static_buf.c, p2p_pending.c (Isend/
# Irecv + Waitall), put_pending.c (MPI_Put), pack_pending.c (Pack/Unpack),
# window_recv.c (receive buffers in RMA windows read and written remotely),
# window_recv_f.f90 (the same from Fortran), interleaved_types.c (receive
# types whose blocks interleave in memory), far_struct.c (struct types
# over two arrays far apart: the memory between them is not the call's),
# fiber_stack.c (user-level threads on a stack from malloc), fd_reuse.c
# (dup2/closefrom over the descriptor replay lands through), signal_thread.c
# (a process-directed signal left to the program's own signal thread),
# chain_pending.c (one call's pending receive buffer is the next call's
# send buffer), send_reuse.c (the send buffer written, read into, freed,
# discarded and received into while sends may still read its pages),
# tcp_progress.c (the program's MPI call writes out the call's pieces queued
# on a TCP connection), openmp_team.c (an OpenMP team reads the blocks),
# own_alloc.c (the program defines malloc and free itself),
# nopie_free_pointer.c (free's address taken in a non-PIE executable),
# mpi4py_numpy.py (a Python program: mpi4py and numpy arrays),
# mixed_user.c (an ordinary program doing many of
# these at once on sub-communicators).
set -u
cd "$(dirname "$0")/.."
: "${BUILD:=build}"
source test/lib.sh
export TNBC_BUILD=${TNBC_BUILD:-$PWD/$BUILD}
TNBC=scripts/tnbc
P=$BUILD/test/torture
: "${TORTURE_TIMEOUT:=60}"
W=$(mktemp -d /tmp/tnbc-torture.XXXXXX)
trap 'rm -rf "$W"' EXIT

force_on() { sed -E 's/^  decision off .*/  decision on forced by the torture test/' "$1" > "$2"; }

# One bounded run: NP PROGRAM [MPIRUN-ARGS] (timeout first: scripts/tnbc
# then exports the settings, which local ranks inherit). MPIRUN-ARGS are
# Open MPI's; under MPICH (T_MPI, test/lib.sh) they become Hydra's.
mpi() {
    t_mpi_argv "$1" ${3:-} "$2"
    echo timeout -k 5 "$TORTURE_TIMEOUT" "${T_MPI_ARGV[@]}"
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

# Early returns in the forced run's summary.
early() {
    local n=0 f
    for f in "$W/$1.summary.d"/rank-*.db; do
        [[ -f $f ]] && n=$((n + $(sqlite3 -batch -noheader "$f" "SELECT IFNULL(SUM(traced), 0) FROM site")))
    done
    echo $n
}

expected() { # NAME EXPECT: ';'-separated "early", "blocking:REGEX", "said:REGEX", "analyzed:REGEX", "trace-calls:N" or "-"
    local item items
    IFS=';' read -ra items <<< "$2"
    for item in "${items[@]}"; do
        expected_one "$1" "$item" || return 1
    done
}

expected_one() { # NAME ITEM
    case $2 in
        early)
            local n; n=$(early "$1")
            echo "$n early returns in the forced run"
            [[ $n -gt 0 ]] || { echo "expected early returns"; cat "$W/$1.forced.err"; return 1; } ;;
        trace-calls:*)   # every call traced, none lost, no database error
            local n; n=$(sqlite3 -batch -noheader "$W/$1.db" "SELECT COUNT(*) FROM call")
            echo "$n calls in the trace"
            [[ $n -eq ${2#trace-calls:} ]] || { echo "expected ${2#trace-calls:} calls"; return 1; }
            ! grep -i 'sqlite\|transaction' "$W/$1.trace.err" ;;
        blocking:*)
            grep -Eq "runs blocking: .*(${2#blocking:})" "$W/$1.forced.err" ||
                { echo "expected a call to run blocking: ${2#blocking:}"; cat "$W/$1.forced.err"; return 1; } ;;
        analyzed:*)      # the analyzer's summary says it
            grep -Eq "${2#analyzed:}" "$W/$1.analyze" ||
                { echo "expected the analyzer to say: ${2#analyzed:}"; cat "$W/$1.analyze"; return 1; } ;;
        said:*)          # one line of the forced run says it
            [[ $(grep -Ec "${2#said:}" "$W/$1.forced.err") -eq 1 ]] ||
                { echo "expected one line: ${2#said:}"; cat "$W/$1.forced.err"; return 1; } ;;
    esac
}

torture() { # NAME NP EXPECT
    local name=$1 np=$2 prog=${prog_of[$1]:-$P/$1} rc args=${args_of[$1]:-}
    $(mpi "$np" "$prog" "$args") > "$W/$name.plain" 2> "$W/$name.plain.err"; rc=$?
    ran "$name" plain $rc || return 1
    $TNBC trace -o "$W/$name.db" -- $(mpi "$np" "$prog" "$args") > "$W/$name.trace" 2> "$W/$name.trace.err"; rc=$?
    ran "$name" trace $rc && same "$name" trace || return 1
    [[ -n ${trace_only[$name]:-} ]] && { expected "$name" "$3"; return; }
    $TNBC analyze "$W/$name.db" -o "$W/$name.profile" > "$W/$name.analyze" 2>&1 ||
        { echo "analyze failed"; cat "$W/$name.analyze"; return 1; }
    $TNBC run -p "$W/$name.profile" -- $(mpi "$np" "$prog" "$args") > "$W/$name.tuned" 2> "$W/$name.tuned.err"; rc=$?
    ran "$name" tuned $rc && same "$name" tuned || return 1
    force_on "$W/$name.profile" "$W/$name.on.profile"
    $TNBC run -p "$W/$name.on.profile" --summary "$W/$name.summary.d" -- $(mpi "$np" "$prog" "$args") > "$W/$name.forced" 2> "$W/$name.forced.err"; rc=$?
    ran "$name" forced $rc && same "$name" forced || return 1
    grep -h 'runs blocking\|not guarded' "$W/$name".*.err | sed 's/^.*tnbc[^:]*: //' | sort -u | head -5
    expected "$name" "$3"
}

# What each case must show in the forced run (see expected()).
declare -A expect=(
    [vector_holes]="early;blocking:no block still to arrive" [stack_buf]="blocking:stack;analyzed:: off: the receive buffer is memory tnbc cannot guard"
    [type_freed]=early [maxmin_float]="blocking:floating-point;analyzed:allreduce: off: datatype and op rule out an early return in [0-9]+ calls?"
    [mprotect_table]=early [shared_map]="blocking:shared mapping;analyzed:: off: the receive buffer is memory tnbc cannot guard" [fork_child]=early
    [sigalrm_reader]=early [allgather_overlap]="blocking:overlaps" [blocked_reader]=early
    [sigset_handler]=early [efault]=early [threads_comms]="trace-calls:48;said:tnbc\[0\]: collectives from two threads at once" [hybrid_team]=early [thread_level]=early
    [remap]=early [two_pending]=early [static_buf]=early
    [mrecv_pending]=early [alltoallw_pending]=early [file_iwrite]=early
    [p2p_pending]=early [put_pending]=early [pack_pending]=early
    [window_recv]="blocking:RMA window;early;analyzed:: off: the receive buffer is memory tnbc cannot guard"
    [window_recv_f]="blocking:RMA window"
    [interleaved_types]="early;blocking:blocks interleaved by a derived type"
    [far_struct]="blocking:a page or more between the call's bytes;analyzed:: off: the receive buffer is memory tnbc cannot guard"
    [fiber_stack]=early
    [fd_reuse]=early
    [signal_thread]=early
    [chain_pending]=early
    [send_reuse]=early
    [tcp_progress]=early
    [mixed_user]="early;blocking:stack"
    [fortify_io]=early
    [kernel_io]=early
    [openmp_team]=early
    [own_alloc]="blocking:defines free\\(\\) itself"
    [nopie_free_pointer]=early
    [mpi4py_numpy]=early
    [remap_ucx]=early [mprotect_table_ucx]=early [send_reuse_ucx]=early
    [mpi4_pending]=early
)
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
    [mpi4py_numpy]="mpi4py + numpy: arrays received and read at once by numpy, dropped by reference counting"
    [nopie_free_pointer]="a non-PIE program keeping free in a table of pointers (Python's way): not its own free, calls go early"
    [own_alloc]="the program's own malloc and free: buffers handed back unseen, so every call runs blocking"
    [openmp_team]="MPI + OpenMP: libgomp's team reads the blocks in a scrambled order, backwards, right after the call"
    [fortify_io]="pending buffers handed to _FORTIFY_SOURCE's __read_chk, __recv_chk, __fread_chk, __open_2, ..., to fread_unlocked, fwrite_unlocked, and paths to open64, fopen64 (9)"
    [kernel_io]="pending buffers handed to aio_write/aio_read/lio_listio (glibc's helper threads), sendmmsg/recvmmsg, vmsplice, process_vm_readv/writev on itself (9)"
    [threads_comms]="two threads, collectives on two communicators (10)"
    [hybrid_team]="MPI_THREAD_MULTIPLE team: collectives from one thread, halo from another, all read (10)"
    [thread_level]="the thread level asked for is the one seen (10)"
    [remap]="mremap, munmap+mmap, free+malloc right after the call"
    [two_pending]="memcpy between two pending buffers, second thread writing"
    [static_buf]="buffers in .bss/.data; a buffer read after MPI_Finalize"
    [mrecv_pending]="MPI_Mprobe + MPI_Mrecv into a pending buffer (7)"
    [alltoallw_pending]="MPI_Alltoallw from and into pending buffers (7)"
    [file_iwrite]="MPI_File_iwrite_at of a pending buffer, file read back (8)"
    [p2p_pending]="MPI_Isend/MPI_Irecv of pending buffers, MPI_Waitall"
    [put_pending]="MPI_Put from a pending buffer into a window"
    [pack_pending]="MPI_Pack/MPI_Unpack of, into and from pending buffers"
    [window_recv]="receive buffers in RMA windows the neighbour reads and writes (fence, passive, dynamic)"
    [window_recv_f]="the same from Fortran (MPI_WIN_CREATE through Open MPI's Fortran symbols)"
    [interleaved_types]="receive types whose blocks interleave (absolute struct at MPI_BOTTOM, columns), 4 ranks"
    [far_struct]="a struct type at MPI_BOTTOM over two arrays far apart (bcast, moving root)"
    [fiber_stack]="fibers (makecontext) on a malloc'd stack: a receive into a local array, then the next fiber's frames"
    [fd_reuse]="dup2 and closefrom over the landing's descriptor while data is on its way"
    [signal_thread]="SIGUSR1 to the process, blocked in the main thread after its first call, handled by the program's signal thread reading the last buffer"
    [chain_pending]="a pending receive buffer sent on at once by the next Alltoall"
    [send_reuse]="the send buffer written, read(2) into, freed, discarded, received into, by two threads, right after the call"
    [tcp_progress]="over TCP, the program's own MPI_Sendrecv right after the call writes out the call's queued pieces"
    [mixed_user]="an ordinary program: sub-communicators, malloc'd buffers at odd offsets, reader thread, qsort in place, pipe, realloc of pending buffers, 4 ranks"
    [mpi4_pending]="MPI_Isendrecv, MPI_Send_c and a persistent MPI_Alltoall_init of pending buffers (MPI-4: MPICH)"
    [remap_ucx]="remap over UCX (Open MPI's pml/ucx), whose memory hooks patch tnbc's mmap, munmap, mremap and madvise"
    [mprotect_table_ucx]="mprotect_table over UCX: madvise and mmap MAP_FIXED through the patched entries"
    [send_reuse_ucx]="send_reuse over UCX: a send buffer discarded (madvise) through the patched entry"
)
# Cases whose tuned and forced runs are skipped (t_skip with the reason):
# only plain and traced runs are compared.
declare -A trace_only=(
)
order=(vector_holes stack_buf type_freed maxmin_float mprotect_table shared_map fork_child
       sigalrm_reader allgather_overlap blocked_reader sigset_handler efault fortify_io kernel_io
       threads_comms hybrid_team openmp_team own_alloc nopie_free_pointer thread_level remap two_pending static_buf mrecv_pending alltoallw_pending file_iwrite
       p2p_pending put_pending pack_pending window_recv window_recv_f interleaved_types far_struct fiber_stack fd_reuse
       signal_thread chain_pending send_reuse tcp_progress mixed_user mpi4py_numpy
       remap_ucx mprotect_table_ucx send_reuse_ucx mpi4_pending)
# Ranks per case: 2, but where the case needs sources beyond the own one
# and a second remote one (one landing while another is still in flight).
declare -A np_of=([interleaved_types]=4 [mixed_user]=4)
# mpirun arguments per case: TCP between the two local ranks, where the
# case is about MPI's TCP progress; UCX (over TCP and shared memory here,
# as on an InfiniBand cluster), whose memory hooks overwrite the first
# bytes of tnbc's mmap, munmap, mremap and madvise (core/entry_patch.h).
# Under MPICH (ch4:ucx) the arguments are dropped: it runs over UCX anyway.
UCX="--mca pml ucx --mca pml_ucx_devices any --mca pml_ucx_tls any"
declare -A args_of=([tcp_progress]="--mca btl self,tcp" [remap_ucx]="$UCX"
                    [mprotect_table_ucx]="$UCX" [send_reuse_ucx]="$UCX")
# Programs that are not built under the case's name: a Python script
# (Debian's python3-mpi4py and python3-numpy, mk/deps.d/core.txt), and
# the cases run again over UCX.
declare -A prog_of=([mpi4py_numpy]="/usr/bin/python3 $PWD/test/torture/mpi4py_numpy.py"
                    [remap_ucx]=$P/remap [mprotect_table_ucx]=$P/mprotect_table
                    [send_reuse_ucx]=$P/send_reuse)
have_pml_ucx() { [[ $T_MPI == mpich ]] || ompi_info 2>/dev/null | grep -q 'MCA pml: ucx'; }
have_mpi4py() { /usr/bin/python3 -c 'import mpi4py, numpy' 2>/dev/null; }
# Cases that are not legal MPI, or not runnable, under MPICH, and why.
declare -A not_under_mpich=(
    [allgather_overlap]="MPICH refuses a send buffer inside the receive buffer (aliased buffers, which the standard forbids; Open MPI accepts it)"
    [mpi4py_numpy]="Debian's mpi4py is built against Open MPI"
)
for c in ${TORTURE_CASES:-${order[@]}}; do
    [[ $c == profiles || $c == auto ]] && continue
    if [[ $T_MPI == mpich && -n ${not_under_mpich[$c]:-} ]]; then
        t_skip "$c: ${what[$c]}" "${not_under_mpich[$c]}"
        continue
    fi
    if [[ $c == mpi4py_numpy ]] && ! have_mpi4py; then
        t_skip "$c: ${what[$c]}" "python3-mpi4py or python3-numpy is not installed (make deps)"
        continue
    fi
    if [[ $c == mpi4_* && $T_MPI != mpich ]]; then
        t_skip "$c: ${what[$c]}" "MPI-4 functions: Open MPI 4.1's header has none (the case runs in torture-mpich)"
        continue
    fi
    if [[ $c == *_ucx ]] && ! have_pml_ucx; then
        t_skip "$c: ${what[$c]}" "this Open MPI has no pml/ucx component"
        continue
    fi
    [[ -n ${prog_of[$c]:-} || -x $P/$c ]] || { t_run "$c: built" false; continue; }
    T_TIMEOUT=$((4 * TORTURE_TIMEOUT + 60)) t_run "$c: ${what[$c]:-}" torture "$c" "${np_of[$c]:-2}" "${expect[$c]:--}"
    [[ -n ${trace_only[$c]:-} ]] && t_skip "$c: tuned and forced runs" "${trace_only[$c]}"
done
# Profiles that must not hang or crash the run: `tnbc run` refuses a FIFO
# or a device in one line; the runtime given one directly (TNBC_PROFILE)
# says so in one line and runs every collective blocking; and a profile
# of 40,000 sites, read in linear time, whose extra sites change nothing.
check_profiles() {
    local prog=$P/thread_level out
    $(mpi 2 "$prog") > "$W/prof.plain" 2>/dev/null || return 1
    mkfifo "$W/fifo"
    local lib=$PWD/$BUILD/lib/libtnbc-replay.so
    for bad in "$W/fifo" /dev/zero; do
        # The front door refuses it before starting the job, in one line ...
        out=$($TNBC run -p "$bad" -- $(mpi 2 "$prog") 2>&1 >/dev/null) &&
            { echo "$bad: tnbc run accepted it"; return 1; }
        [[ $out == "tnbc run: -p $bad: not a regular file" ]] ||
            { echo "$bad: tnbc run said: $out"; return 1; }
        # ... and the runtime, given it without the front door, says one line
        # and runs every collective blocking.
        t_mpi_argv 2 -x LD_PRELOAD="$lib" -x TNBC_PROFILE="$bad" "$prog"
        out=$(timeout -k 5 "$TORTURE_TIMEOUT" "${T_MPI_ARGV[@]}" 2>&1 >"$W/prof.out") ||
            { echo "$bad: run failed: $out"; return 1; }
        cmp -s "$W/prof.plain" "$W/prof.out" || { echo "$bad: output differs"; return 1; }
        [[ $(echo "$out" | grep -c "not a regular file; every collective runs blocking") -eq 1 ]] ||
            { echo "$bad: expected one line: $out"; return 1; }
    done
    $TNBC trace -o "$W/prof.db" -- $(mpi 2 "$prog") > /dev/null 2>&1 &&
        $TNBC analyze "$W/prof.db" -o "$W/prof.profile" > /dev/null || return 1
    /usr/bin/python3 - "$W/prof.profile" "$W/big.profile" <<'PY' || return 1
import sys
src = open(sys.argv[1]).read()
head, rest = src.split("\nsite ", 1)
block = "site " + rest.split("\nend\n")[0] + "\nend\n"
name = block.split()[1]
with open(sys.argv[2], "w") as f:
    f.write(src)
    for i in range(40000):
        f.write("\n" + block.replace("site " + name, "site other.so+0x%x" % i, 1))
PY
    $TNBC run -p "$W/big.profile" -- $(mpi 2 "$prog") > "$W/prof.big" 2>"$W/prof.big.err" ||
        { cat "$W/prof.big.err"; return 1; }
    cmp -s "$W/prof.plain" "$W/prof.big" || { echo "40k sites: output differs"; return 1; }
}
# docs/limits.md lists exactly the calls core/wrap_syscalls.def wraps.
check_limits_list() {
    local def doc
    def=$(grep -o '^SYSCALL([^,]*, [a-z_0-9]*' core/wrap_syscalls.def | sed 's/.*, //' | sort)
    doc=$(tr '\n' ' ' < docs/limits.md | sed 's/.*buffers it takes): //; s/; and `open`.*//' |
          tr ' ' '\n' | grep -E '^[a-z_0-9]+$' | sort)
    diff <(echo "$def") <(echo "$doc") && echo "$(echo "$def" | wc -l) calls, listed"
}
t_run "docs/limits.md lists every call of core/wrap_syscalls.def" check_limits_list
# fortify_io is only a test of the checked entries if the compiler used them.
check_fortify_imports() {
    local want="__fread_chk __fread_unlocked_chk __getcwd_chk __pread_chk __read_chk __readlink_chk __recv_chk __recvfrom_chk fread_unlocked fwrite_unlocked __open_2 __open64_2 __openat_2 open64 openat64 fopen64 preadv64v2"
    local got
    got=$(nm -D "$P/fortify_io" | awk '$1 == "U" {sub(/@.*/, "", $2); print $2}' | sort | tr '\n' ' ')
    for w in $want; do
        [[ " $got" == *" $w "* ]] || { echo "fortify_io does not call $w"; return 1; }
    done
}
[[ -z ${TORTURE_CASES:-} || " ${TORTURE_CASES} " == *" fortify_io "* ]] &&
    t_run "fortify_io calls the checked entries it is about" check_fortify_imports

# tnbc auto on receive buffers in shared mappings: its learning calls
# cannot guard them, the site is off for that reason (not for a model
# term computed from calls it never saw), nothing goes early, same bytes.
check_auto_unguardable() {
    local prog=$P/shared_map rc
    $(mpi 2 "$prog") > "$W/aug.plain" 2>/dev/null || { echo "plain run failed"; return 1; }
    TNBC_AUTO_MIN_BYTES=0 $TNBC auto --summary "$W/aug.d" -- $(mpi 2 "$prog") > "$W/aug.auto" 2> "$W/aug.err"
    rc=$?
    ran aug auto $rc && same aug auto || return 1
    grep -q '^tnbc\[0\]: auto: alltoall at shared_map+0x[0-9a-f]*: 9 calls, 0 early, .*now off: the receive buffer is memory tnbc cannot guard' "$W/aug.err" ||
        { echo "expected the site off for its memory:"; cat "$W/aug.err"; return 1; }
    grep -m1 'now off' "$W/aug.err"
}

if [[ -z ${TORTURE_CASES:-} || " $TORTURE_CASES " == *" profiles "* ]]; then
    t_run "profiles: FIFO, /dev/zero, 40,000 sites" check_profiles
fi
if [[ -z ${TORTURE_CASES:-} || " $TORTURE_CASES " == *" auto "* ]]; then
    t_run "auto, receive buffers in shared mappings: off, says why" check_auto_unguardable
fi
t_summary
