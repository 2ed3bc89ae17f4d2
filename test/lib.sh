# SPDX-License-Identifier: BSD-3-Clause
# Shared shell helpers for test suites. Source it, call t_* functions, end with
# t_summary. Every check is bounded in time; a hang is a failure with a message.
#
#   t_run NAME CMD...        pass if CMD (command or function) exits 0 in time
#   t_bounded CMD...         run CMD for at most T_TIMEOUT s (124 when killed)
#   t_expect_fail NAME RC REGEX CMD...
#                            pass if CMD exits with status RC (1-125: a clean
#                            refusal, not a missing binary, 126/127, a hang or
#                            a signal) and its output (stdout and stderr)
#                            matches the extended regex REGEX
#   t_skip NAME REASON       counted as skipped, never as passed
#   t_cmocka BIN             run a cmocka binary in TAP mode, count each test
#   t_mpirun NP ARGS...      mpirun bounded by T_TIMEOUT seconds (default 60)
#   t_mpi_argv NP ARGS...    sets the array T_MPI_ARGV to the launch command
#                            (without timeout) for T_MPI (below); ARGS are
#                            Open MPI's options, then the program
#   t_openmpi_only NAME WHY  0 under Open MPI; under MPICH, a named skip
#
# T_MPI=openmpi or mpich (the default when BUILD ends in -mpich, as make
# MPI=mpich's build-mpich/): the launcher the suites use. Under mpich, Open MPI's options are turned
# into Hydra's: -np N -> -n N, -x VAR[=VAL] -> -genv VAR VAL, --oversubscribe
# dropped (Hydra's fork launcher runs any number of ranks), --mca NAME VAL
# dropped (no equivalent; a test that depends on one is Open-MPI-only).
#   t_fuzz NAME SEEDS [DICT] build $BUILD/fuzz/fuzz-NAME (mk/fuzz.mk) and run it
#                            TNBC_FUZZ_SECONDS (15) from SEEDS; skipped with the
#                            reason when clang or its libFuzzer runtime is missing
#   t_summary                prints "SUITE: N passed, N failed, N skipped"
#
#   t_merge LOG SUITE RC     add the counts of a sub-suite run (a VM) whose
#                            output is in LOG and whose exit status was RC:
#                            its verdict lines are shown, its summary line
#                            "SUITE: N passed, N failed, N skipped" is added;
#                            no summary line, or RC != 0, is one failure more
#
# T_LIST_ONLY=REASON: run nothing; every t_run, t_expect_fail, t_cmocka and
# t_fuzz is counted as a skip with REASON, under its own name. A suite that
# runs inside a VM is run so on the host when the VM cannot start, so that
# each of its tests shows as skipped (docs/DEVELOPING.md).
#
# T_ONLY=REGEX / T_EXCEPT=REGEX (bash regexes on test names): run only the
# tests whose names match T_ONLY and not T_EXCEPT; the others are neither
# run nor counted, and the summary line says a selection was made. For
# working on one test and for the mutation check (scripts/check-mutants).

: "${T_SUITE:=$(basename "${BASH_SOURCE[1]:-suite}" .sh)}"
: "${T_TIMEOUT:=60}"
# The MPI the build was made with: build-mpich/ (make MPI=mpich) is MPICH's.
[[ -z ${T_MPI:-} && ${BUILD:-build} == *-mpich ]] && T_MPI=mpich
: "${T_MPI:=openmpi}"
: "${T_LOGDIR:=${BUILD:-build}/test-logs/$T_SUITE}"
mkdir -p "$T_LOGDIR"
T_PASS=0 T_FAIL=0 T_SKIP=0

if [[ $(id -u) -eq 0 ]]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
# Keep Open MPI quiet and predictable on a small shared machine.
export OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_btl_base_warn_component_unused=0
export OMPI_MCA_mpi_yield_when_idle=1
# One host: shared memory only, and the runtime's own traffic on loopback.
# (With the TCP BTL loaded, Open MPI probes every interface, including the
# bridges of emulated clusters, and a 4-rank job can take seconds to end.)
# A test that wants TCP says so on its mpirun command line, which wins.
: "${OMPI_MCA_btl:=self,vader}"
: "${OMPI_MCA_oob_tcp_if_include:=lo}"
export OMPI_MCA_btl OMPI_MCA_oob_tcp_if_include
# No PCI discovery by hwloc in every rank's MPI_Init (it finds the NICs
# near a process; the suites use shared memory and loopback): it reads
# pci.ids through a growing realloc, which under the sanitizers'
# allocators, whose frees give shadow memory back with madvise, took a
# 4-rank TSan MPI hello 57 s instead of 7 and a 3-rank ASan one 37 s
# instead of 1.9 on the 2-core test VM (a CI run beside them).
: "${HWLOC_COMPONENTS:=-pci}"
export HWLOC_COMPONENTS

# _t_selected NAME: 0 when NAME is to run under T_ONLY/T_EXCEPT.
_t_selected() {
    [[ -z ${T_ONLY:-} || $1 =~ $T_ONLY ]] && [[ -z ${T_EXCEPT:-} || ! $1 =~ $T_EXCEPT ]]
}

_t_log() { echo "$T_LOGDIR/$(echo "$1" | tr -c 'A-Za-z0-9_.-' '_').log"; }

_t_result() { # NAME RC LOG
    local name=$1 rc=$2 log=$3
    if [[ $rc -eq 0 ]]; then
        T_PASS=$((T_PASS + 1)); echo "  ok   $name"
    else
        T_FAIL=$((T_FAIL + 1))
        if [[ $rc -eq 124 || $rc -eq 137 ]]; then
            echo "  FAIL $name (timed out after ${T_TIMEOUT}s)"
        else
            echo "  FAIL $name (exit $rc)"
        fi
        sed 's/^/       | /' "$log" | tail -n 25
    fi
}

_t_kill_tree() { # PID SIGNAL: the process and all its descendants
    local child
    for child in $(pgrep -P "$1" 2>/dev/null); do _t_kill_tree "$child" "$2"; done
    kill "-$2" "$1" 2>/dev/null
}

# Runs "$@" (a command or a shell function) for at most T_TIMEOUT seconds;
# returns its status, or 124 when it had to be killed.
t_bounded() {
    "$@" &
    local pid=$! rc
    (
        sleep "$T_TIMEOUT"
        echo "t_bounded: killed after ${T_TIMEOUT}s: $*" >&2
        _t_kill_tree "$pid" TERM; sleep 3; _t_kill_tree "$pid" KILL
    ) &
    local dog=$!
    wait "$pid"; rc=$?
    if kill -0 "$dog" 2>/dev/null; then
        # The watchdog first, then its sleep: killed the other way round,
        # the watchdog would wake and report a kill that never happened.
        local nap; nap=$(pgrep -P "$dog" 2>/dev/null)
        kill -KILL "$dog" 2>/dev/null
        [[ -n "$nap" ]] && kill -KILL $nap 2>/dev/null
        wait "$dog" 2>/dev/null
    else
        rc=124
    fi
    return $rc
}

t_run() {
    local name=$1; shift
    _t_selected "$name" || return 0
    [[ -n ${T_LIST_ONLY:-} ]] && { t_skip "$name" "$T_LIST_ONLY"; return 0; }
    local log; log=$(_t_log "$name")
    t_bounded "$@" >"$log" 2>&1
    _t_result "$name" $? "$log"
}

t_expect_fail() {
    local name=$1 want=$2 re=$3; shift 3
    _t_selected "$name" || return 0
    [[ -n ${T_LIST_ONLY:-} ]] && { t_skip "$name" "$T_LIST_ONLY"; return 0; }
    local log rc; log=$(_t_log "$name")
    if ! [[ $want =~ ^[0-9]+$ && $want -ge 1 && $want -le 125 ]]; then
        echo "t_expect_fail: expected status '$want' is not in 1-125" >"$log"
        _t_result "$name" 1 "$log"; return
    fi
    t_bounded "$@" >"$log" 2>&1; rc=$?
    if [[ $rc -eq 0 ]]; then
        echo "expected failure with exit $want, got exit 0" >>"$log"; _t_result "$name" 1 "$log"
    elif [[ $rc -ne $want ]]; then
        echo "expected exit $want, got exit $rc" >>"$log"
        _t_result "$name" "$rc" "$log"
    elif ! grep -Eq -- "$re" "$log"; then
        echo "exit $rc as expected, but no output matches /$re/" >>"$log"
        _t_result "$name" 1 "$log"
    else
        _t_result "$name" 0 "$log"
    fi
}

t_skip() {
    _t_selected "$1" || return 0
    T_SKIP=$((T_SKIP + 1)); echo "  skip $1: $2"
}

t_fuzz() {
    local name=$1 seeds=$2 dict=${3:-} bin=${BUILD:-build}/fuzz/fuzz-$1
    _t_selected "fuzz-$name" || return 0
    [[ -n ${T_LIST_ONLY:-} ]] && { t_skip "fuzz-$name" "$T_LIST_ONLY"; return 0; }
    local secs=${TNBC_FUZZ_SECONDS:-15} log=$T_LOGDIR/fuzz-$1-build.log
    if ! command -v clang >/dev/null; then
        t_skip "fuzz-$name" "clang not installed (Debian: clang, libclang-rt-14-dev)"; return
    fi
    if ! make --no-print-directory -s "$bin" >"$log" 2>&1; then
        if grep -q "cannot find.*libclang_rt.fuzzer\|fuzzer.*No such file" "$log"; then
            t_skip "fuzz-$name" "clang has no libFuzzer runtime (libclang-rt-14-dev)"
        else
            t_run "fuzz-$name build" bash -c "cat '$log'; exit 1"
        fi
        return
    fi
    local corpus; corpus=$(mktemp -d)
    T_TIMEOUT=$((secs + 60)) t_run "fuzz-$name (${secs}s)" "$bin" -max_total_time="$secs" \
        -timeout=5 -rss_limit_mb=1024 -artifact_prefix="$T_LOGDIR/" ${dict:+-dict="$dict"} \
        "$corpus" "$seeds"
    rm -rf "$corpus"
}

t_cmocka() {
    local bin=$1 log rc; log=$(_t_log "$(basename "$bin")")
    _t_selected "$(basename "$bin")" || return 0
    [[ -n ${T_LIST_ONLY:-} ]] && { t_skip "$(basename "$bin")" "$T_LIST_ONLY"; return 0; }
    CMOCKA_MESSAGE_OUTPUT=TAP timeout -k 5 "$T_TIMEOUT" "$bin" >"$log" 2>&1; rc=$?
    local ok notok skipped
    ok=$(grep -c '^ok ' "$log"); notok=$(grep -c '^not ok ' "$log")
    skipped=$(grep -ciE '^(not )?ok .*# *skip' "$log")
    # cmocka prints a skipped test as "not ok N # SKIP": a skip, not a failure.
    notok=$((notok - $(grep -ciE '^not ok .*# *skip' "$log")))
    ok=$((ok - $(grep -ciE '^ok .*# *skip' "$log")))
    T_PASS=$((T_PASS + ok)); T_FAIL=$((T_FAIL + notok)); T_SKIP=$((T_SKIP + skipped))
    echo "  $(basename "$bin"): $ok ok, $notok not ok, $skipped skipped"
    # Nothing run and nothing skipped: the binary did not get to its tests.
    if [[ $notok -gt 0 || $rc -ne 0 || ($ok -eq 0 && $skipped -eq 0) ]]; then
        [[ $notok -eq 0 ]] && { T_FAIL=$((T_FAIL + 1)); echo "  FAIL $(basename "$bin") exit $rc"; }
        sed 's/^/       | /' "$log" | tail -n 25
    fi
}

t_mpi_argv() {
    local np=$1; shift
    if [[ ${T_MPI:-openmpi} != mpich ]]; then
        T_MPI_ARGV=(mpirun --oversubscribe -np "$np" "$@"); return
    fi
    # Hydra: global options (-genv) before the executable; the fork
    # launcher, not ssh, on this one host.
    T_MPI_ARGV=(mpiexec.mpich -launcher fork)
    while [[ $# -gt 0 ]]; do
        case $1 in
            -x) if [[ $2 == *=* ]]; then T_MPI_ARGV+=(-genv "${2%%=*}" "${2#*=}")
                else T_MPI_ARGV+=(-genv "$2" "${!2-}"); fi
                shift 2 ;;
            --mca) shift 3 ;;
            --oversubscribe) shift ;;
            -np) np=$2; shift 2 ;;
            *) break ;;
        esac
    done
    T_MPI_ARGV+=(-n "$np" "$@")
}

# The calls that waited in replay's fault path, over the rank summaries
# in DIR (a TNBC_REPLAY_DIR).
t_fault_waits() { # DIR
    local f n=0
    for f in "$1"/rank-*.db; do
        n=$((n + $(sqlite3 -batch -noheader "$f" "SELECT count(*) FROM call WHERE wait_ns > 0")))
    done
    echo "$n"
}

t_mpirun() {
    t_mpi_argv "$@"
    timeout -k 5 "$T_TIMEOUT" "${T_MPI_ARGV[@]}"
}

t_openmpi_only() {
    [[ ${T_MPI:-openmpi} != mpich ]] && return 0
    t_skip "$1" "Open MPI only: $2"
    return 1
}

t_merge() {
    local log=$1 suite=$2 rc=$3 line p f k
    grep -E '^  (ok|FAIL|skip) |^       \| ' "$log"
    line=$(grep -E "^$suite: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped\$" "$log" | tail -n 1)
    if [[ -z $line ]]; then
        T_FAIL=$((T_FAIL + 1))
        echo "  FAIL $suite ended without a summary line (exit $rc); last lines of $log:"
        tail -n 20 "$log" | sed 's/^/       | /'
        return 1
    fi
    read -r p f k < <(sed -E 's/^[^:]*: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped$/\1 \2 \3/' <<<"$line")
    T_PASS=$((T_PASS + p)) T_FAIL=$((T_FAIL + f)) T_SKIP=$((T_SKIP + k))
    if [[ $rc -ne 0 && $f -eq 0 ]]; then
        T_FAIL=$((T_FAIL + 1)); echo "  FAIL $suite exited $rc after a summary with no failure"
        return 1
    fi
}

t_summary() {
    [[ -n ${T_ONLY:-}${T_EXCEPT:-} ]] &&
        echo "$T_SUITE: a selection ran (T_ONLY='${T_ONLY:-}' T_EXCEPT='${T_EXCEPT:-}')"
    echo "$T_SUITE: $T_PASS passed, $T_FAIL failed, $T_SKIP skipped"
    [[ $T_FAIL -eq 0 ]]
}
