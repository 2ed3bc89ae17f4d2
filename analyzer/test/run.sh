#!/usr/bin/env bash
# Suite `analyzer`: the profile library (cmocka), tnbc-analyze and
# tnbc-report on hand-made traces with known answers (TAP), and a bounded
# libFuzzer run of the profile reader. Run by `make check-analyzer`.
cd "$(dirname "$0")/../.."
T_SUITE=analyzer
source test/lib.sh
: "${BUILD:=build}"

t_cmocka "$BUILD/analyzer/test/test_profile"
BUILD=$BUILD t_cmocka analyzer/test/test_analyzer.py

# The fuzz target needs clang's libFuzzer runtime; build it here so that
# `make all` never depends on clang.
FUZZ_SECONDS=${TNBC_FUZZ_SECONDS:-15}
if ! command -v clang >/dev/null; then
    t_skip fuzz-profile "clang not installed (Debian: clang, libclang-rt-14-dev)"
elif ! make --no-print-directory -s "${FUZZ_BIN:-$BUILD/fuzz/fuzz-profile}" \
        >"$T_LOGDIR/fuzz-build.log" 2>&1; then
    if grep -q "cannot find.*libclang_rt.fuzzer\|fuzzer.*No such file" "$T_LOGDIR/fuzz-build.log"; then
        t_skip fuzz-profile "clang has no libFuzzer runtime (libclang-rt-14-dev)"
    else
        t_run fuzz-profile-build bash -c "cat '$T_LOGDIR/fuzz-build.log'; exit 1"
    fi
else
    corpus=$(mktemp -d)
    t_run "fuzz-profile (${FUZZ_SECONDS}s)" "${FUZZ_BIN:-$BUILD/fuzz/fuzz-profile}" \
        -max_total_time="$FUZZ_SECONDS" -timeout=5 -rss_limit_mb=1024 \
        -dict=profiles/fuzz/profile.dict "$corpus" profiles/fuzz/seeds
    rm -rf "$corpus"
fi
t_summary
