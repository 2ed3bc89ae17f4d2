#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Core unit tests (cmocka, TAP): range index, page guard, sub-message
# layouts, configuration, our entries kept ours (entry_patch). Three passes
# over the same sources:
#   1. the normal build ($BUILD);
#   2. ASan + UBSan (build-asan/, UB is fatal, leaks reported);
#   3. TSan (build-tsan/) for the parts that run in several threads and in
#      signal handlers: range index and guard.
# The collective test runs under mpirun with 4 ranks so that every rank
# checks its own role (root or not); the others need no MPI launcher.
# A sanitizer that cannot run on this machine is skipped with the reason.
set -u
cd "$(dirname "$0")/.."
source test/lib.sh
B=${BUILD:-build}
UNITS=(range_index guard guard_keys collective config altstack entry_patch)
TSAN_UNITS=(range_index guard)

# cmocka_run BIN: t_cmocka (which counts cmocka's "# SKIP" lines as
# skipped), and the reasons of the skips.
cmocka_run() {
    local log
    t_cmocka "$1"
    log=$(_t_log "$(basename "$1")")
    if grep -q '^not ok [0-9]* # SKIP' "$log"; then
        echo "  skip $(grep '^not ok [0-9]* # SKIP' "$log" | sed 's/.*# SKIP //' | tr '\n' ' ')(see $log)"
    fi
}

# run_units DIR UNIT...: every unit's binary under DIR, in TAP mode.
run_units() {
    local dir=$1 u; shift
    for u in "$@"; do
        if [[ $u == collective ]]; then
            local w=$dir/test/core/test_collective-np4
            printf '#!/bin/sh\nexec mpirun --oversubscribe -np 4 "%s"\n' \
                "$PWD/$dir/test/core/test_collective" >"$w"
            chmod +x "$w"
            ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0 cmocka_run "$w"
        else
            cmocka_run "$dir/test/core/test_$u"
        fi
    done
}

# A pass's logs go to their own directory (same binary names).
pass_logs() { T_LOGDIR=$B/test-logs/core/$1; mkdir -p "$T_LOGDIR"; }

# san_works FLAGS: can a program built with FLAGS run here? Prints why not.
san_works() {
    local d; d=$(mktemp -d /tmp/tnbc-san.XXXXXX)
    printf 'int main(void) { return 0; }\n' >"$d/p.c"
    if ! gcc $1 "$d/p.c" -o "$d/p" >"$d/log" 2>&1 || ! "$d/p" >>"$d/log" 2>&1; then
        head -n 1 "$d/log"; rm -rf "$d"; return 1
    fi
    rm -rf "$d"
}

# san_build SAN UNIT...: build the unit tests into build-SAN/ (a make of
# its own, not this one's: MAKEFLAGS would carry a jobserver we lack).
san_build() {
    local san=$1 u targets=(); shift
    for u in "$@"; do targets+=("build-$san/test/core/test_$u"); done
    env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
        make --no-print-directory -s -j2 SAN="$san" BUILD="build-$san" "${targets[@]}"
}

# san_pass NAME SAN FLAGS UNIT...: build and run one sanitizer pass. A
# failed build counts as one failure; a sanitizer that cannot run, a skip.
san_pass() {
    local name=$1 san=$2 flags=$3 why log; shift 3
    if [[ ${TNBC_TEST_SANITIZERS:-1} == 0 ]]; then   # scripts/check-mutants
        t_skip "$name unit tests" "TNBC_TEST_SANITIZERS=0"
        return
    fi
    if ! why=$(san_works "$flags"); then
        t_skip "$name unit tests" "a $flags program does not run here: ${why:-no output}"
        return
    fi
    pass_logs "$san"
    echo "core: $name (build-$san/)"
    log=$T_LOGDIR/build.log
    if ! T_TIMEOUT=300 t_bounded san_build "$san" "$@" >"$log" 2>&1; then
        _t_result "$name build" 1 "$log"
        return
    fi
    run_units "build-$san" "$@"
}

echo "core: normal build ($B/)"
pass_logs normal
run_units "$B" "${UNITS[@]}"

# UB aborts the test; leaks fail it (except under MPI, which leaks at exit).
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export ASAN_OPTIONS=detect_leaks=1
export TSAN_OPTIONS=halt_on_error=0:exitcode=66
[[ $B == build-asan ]] || san_pass "ASan+UBSan" asan "-fsanitize=address,undefined" "${UNITS[@]}"
[[ $B == build-tsan ]] || san_pass TSan tsan "-fsanitize=thread" "${TSAN_UNITS[@]}"
t_summary
