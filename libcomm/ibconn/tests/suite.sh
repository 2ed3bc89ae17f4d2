#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Suite "ibconn": the memory model on the host, then the messaging layer on
# soft-RoCE inside the VM bench (skipped, with the reason, where it cannot run).
cd "$(dirname "$0")/../../.." || exit 1
T_SUITE=ibconn
source test/lib.sh
B=${BUILD:-build}
T=$B/libcomm/ibconn/tests/ibc_test

t_cmocka "$B/libcomm/ibconn/tests/t_model"
t_run "tnbc-connmodel --paper prints the design's examples" bash -c "
    $B/bin/tnbc-connmodel --paper | tee /dev/stderr | grep -Eq '^ +320000 +1102/1102 +10\.22'"
t_expect_fail "tnbc-connmodel rejects a bad value" 2 "^tnbc-connmodel: bad value '12x' for -m$" \
    "$B/bin/tnbc-connmodel" -m 12x
t_expect_fail "tnbc-connmodel rejects a group size that splits nodes" 2 \
    "^tnbc-connmodel: group size must be a multiple of c" "$B/bin/tnbc-connmodel" -c 8 -g 4100
t_run "bad TNBC_IBCONN_EAGER is refused with a one-line message" bash -c "
    out=\$(TNBC_IBCONN_EAGER=12abc timeout 30 mpirun -np 1 $T mode:rc 2>&1); rc=\$?; echo \"\$out\"
    [[ \$rc -ne 0 && \$rc -lt 124 ]] && grep -q \"TNBC_IBCONN_EAGER='12abc' is not an integer\" <<<\"\$out\""
t_run "unknown TNBC_IBCONN_MODE is refused with a one-line message" bash -c "
    out=\$(TNBC_IBCONN_MODE=dc timeout 30 mpirun -np 1 $T mode:rc 2>&1); rc=\$?; echo \"\$out\"
    [[ \$rc -ne 0 && \$rc -lt 124 ]] && grep -q \"TNBC_IBCONN_MODE='dc' is not one of\" <<<\"\$out\""
if ! compgen -G '/sys/class/infiniband/*' >/dev/null; then
    t_run "no RDMA device on the host: clean failure with the reason" bash -c "
        out=\$(timeout 30 mpirun -np 2 $T mode:rc_srq 2>&1); rc=\$?; echo \"\$out\"
        [[ \$rc -ne 0 && \$rc -lt 124 ]] && grep -q 'ibconn: no RDMA device' <<<\"\$out\""
fi

# The VM part: one boot runs vm-suite.sh; its counts join this suite's.
why=
command -v qemu-system-x86_64 >/dev/null || why="qemu-system-x86_64 is not installed (make deps)"
[[ -z $why && ! -s ${TNBC_VM_DIR:-build/vm}/KVER ]] && why="no guest kernel under build/vm (make deps)"
log=$T_LOGDIR/vm.log
if [[ -n $why ]]; then
    # Each of the VM's tests, named, as skipped (nothing runs on the host).
    T_LIST_ONLY="ibconn on soft-RoCE in the VM: $why" BUILD="$B" \
        bash libcomm/ibconn/tests/vm-suite.sh >"$log" 2>&1
    t_merge "$log" ibconn-vm $?
else
    # 450 s: the emulated guest slows several-fold on a loaded host (the
    # DLMC suite's guest ran out of 200 s so, libcomm/dlmc/tests/dlmc.sh).
    scripts/vm/run -t "${TNBC_IBCONN_VM_TIMEOUT:-450}" -c 2 -m "${TNBC_VM_MEM:-1536}" \
        -e BUILD="$B" libcomm/ibconn/tests/vm-suite.sh >"$log" 2>&1
    t_merge "$log" ibconn-vm $?
fi
t_summary
