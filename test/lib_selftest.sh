#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Suite "testlib": the helpers of test/lib.sh, on small fake inputs whose
# verdicts are known. Each case runs a tiny suite in a child shell and
# compares its summary line with the expected one, written by hand.
set -u
cd "$(dirname "$0")/.."
T_SUITE=testlib
source test/lib.sh
W=$(mktemp -d /tmp/tnbc-testlib.XXXXXX)
trap 'rm -rf "$W"' EXIT

# fake SUMMARY BODY: run BODY as a suite named "fake"; pass when its last
# line is "fake: SUMMARY".
fake() {
    local want=$1 body=$2 got
    got=$(T_SUITE=fake T_LOGDIR="$W/logs" T_TIMEOUT=10 bash -c "source test/lib.sh; $body; t_summary" 2>&1 |
          tail -n 1)
    echo "got:  $got"; echo "want: fake: $want"
    [[ $got == "fake: $want" ]]
}

t_run "t_expect_fail: the expected status and message pass" \
    fake "1 passed, 0 failed, 0 skipped" "t_expect_fail x 3 '^no: bad$' bash -c 'echo no: bad; exit 3'"
t_run "t_expect_fail: another status fails" \
    fake "0 passed, 1 failed, 0 skipped" "t_expect_fail x 3 'bad' bash -c 'echo bad; exit 1'"
t_run "t_expect_fail: a missing binary (127) fails" \
    fake "0 passed, 1 failed, 0 skipped" "t_expect_fail x 1 'not found' /nonexistent/tnbc-binary"
t_run "t_expect_fail: 127 cannot be what is expected" \
    fake "0 passed, 1 failed, 0 skipped" "t_expect_fail x 127 'not found' /nonexistent/tnbc-binary"
t_run "t_expect_fail: the right status without the message fails" \
    fake "0 passed, 1 failed, 0 skipped" "t_expect_fail x 2 'usage' bash -c 'echo other; exit 2'"
t_run "t_expect_fail: exit 0 fails" \
    fake "0 passed, 1 failed, 0 skipped" "t_expect_fail x 1 '' true"
t_run "t_expect_fail: a signal fails" \
    fake "0 passed, 1 failed, 0 skipped" "t_expect_fail x 1 '' bash -c 'kill -SEGV \$\$'"

printf '  ok   a\n  skip b: why\nsub: 1 passed, 0 failed, 1 skipped\n' >"$W/sub-ok.log"
printf '  ok   a\n' >"$W/sub-none.log"
t_run "t_merge: counts added" \
    fake "1 passed, 0 failed, 1 skipped" "t_merge '$W/sub-ok.log' sub 0"
t_run "t_merge: no summary line is a failure" \
    fake "0 passed, 1 failed, 0 skipped" "t_merge '$W/sub-none.log' sub 0"
t_run "t_merge: a non-zero exit after a clean summary is a failure" \
    fake "1 passed, 1 failed, 1 skipped" "t_merge '$W/sub-ok.log' sub 3"
t_run "T_LIST_ONLY: every test named and skipped, none run" \
    fake "0 passed, 0 failed, 3 skipped" \
    "T_LIST_ONLY=why; t_run a touch '$W/ran'; t_expect_fail b 1 x false; t_skip c other; [[ ! -e '$W/ran' ]] || t_run ran false"
t_run "T_ONLY: the others neither run nor counted" \
    fake "1 passed, 0 failed, 0 skipped" "T_ONLY='^a'; t_run a true; t_run b false"
printf '#!/bin/sh\necho "ok 1 - t"\nkill -SEGV $$\n' >"$W/fake-cmocka"; chmod +x "$W/fake-cmocka"
t_run "t_cmocka: a crash after the ok lines is a failure" \
    fake "1 passed, 1 failed, 0 skipped" "t_cmocka '$W/fake-cmocka'"
printf '#!/bin/sh\necho "not ok 1 - a # SKIP"\necho "not ok 2 - b # SKIP"\n' >"$W/fake-skips"
chmod +x "$W/fake-skips"
t_run "t_cmocka: every test skipped (a capability missing) is no failure" \
    fake "0 passed, 0 failed, 2 skipped" "t_cmocka '$W/fake-skips'"
printf '#!/bin/sh\necho "1..0"\n' >"$W/fake-empty"; chmod +x "$W/fake-empty"
t_run "t_cmocka: no test run and none skipped is a failure" \
    fake "0 passed, 1 failed, 0 skipped" "t_cmocka '$W/fake-empty'"
# The launch line under each MPI, written out by hand (docs/mpich.md).
argv_is() { # T_MPI WANT ARGS...: t_mpi_argv ARGS gives WANT (words joined by |)
    local mpi=$1 want=$2 got; shift 2
    got=$(T_MPI=$mpi; t_mpi_argv "$@"; IFS='|'; echo "${T_MPI_ARGV[*]}")
    echo "got:  $got"; echo "want: $want"
    [[ $got == "$want" ]]
}
t_run "t_mpi_argv: Open MPI's line unchanged" argv_is openmpi \
    'mpirun|--oversubscribe|-np|3|-x|A=1 2|--mca|btl|self,tcp|prog|-x|y' 3 -x 'A=1 2' --mca btl self,tcp prog -x y
t_run "t_mpi_argv: MPICH gets -genv, -n, no --mca, the program's own arguments untouched" \
    env TNBC_T_V=v7 T_LOGDIR="$W/logs" bash -c 'source test/lib.sh; '"$(declare -f argv_is)"'; argv_is mpich \
    "mpiexec.mpich|-launcher|fork|-genv|A|1 2|-genv|TNBC_T_V|v7|-n|3|prog|-x|y|--mca|z" \
    3 -x "A=1 2" --mca btl self,tcp -x TNBC_T_V --oversubscribe prog -x y --mca z'
t_summary
