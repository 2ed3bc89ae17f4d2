#!/usr/bin/env bash
# Suite dlmc: host unit tests, then the module tests in the VM bench
# (scripts/vm/run), whose counts are added to this suite's.
cd "$(dirname "$0")/../../.."
export T_SUITE=dlmc
. test/lib.sh
: "${BUILD:=build}"

t_cmocka "$BUILD/libcomm/dlmc/test_dlmc_proto"

vm_reason() {
    [[ -x scripts/vm/run ]] || { echo "no VM bench (scripts/vm/run)"; return; }
    command -v qemu-system-x86_64 >/dev/null || { echo "qemu-system-x86_64 missing"; return; }
    [[ -s ${TNBC_VM_DIR:-build/vm}/KVER ]] || { echo "no guest kernel (make deps)"; return; }
    [[ -e $BUILD/kmod/dlmc/dlmc.ko ]] || { echo "module not built (make dlmc-kmod)"; return; }
}
why=$(vm_reason)
if [[ -n $why ]]; then
    t_skip "module tests in the VM" "$why"
    t_summary; exit
fi
log=$T_LOGDIR/vm-check.log
BUILD=$BUILD scripts/vm/run -t 200 -m 1536 -e BUILD="$BUILD" bash libcomm/dlmc/tests/vm-check.sh >"$log" 2>&1
rc=$?
grep -E '^  (ok|FAIL|skip) |^       \| ' "$log"
line=$(grep -E '^dlmc-vm: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$log" | tail -n 1)
if [[ -z $line ]]; then
    T_FAIL=$((T_FAIL + 1))
    echo "  FAIL VM run ended without a summary (exit $rc):"; tail -n 25 "$log" | sed 's/^/       | /'
elif [[ $rc -eq 125 ]]; then
    t_skip "module tests in the VM" "the VM could not start"
else
    read -r p f s < <(echo "$line" | sed -E 's/^[^0-9]*([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped$/\1 \2 \3/')
    T_PASS=$((T_PASS + p)) T_FAIL=$((T_FAIL + f)) T_SKIP=$((T_SKIP + s))
    [[ $rc -ne 0 && $f -eq 0 ]] && { T_FAIL=$((T_FAIL + 1)); echo "  FAIL VM exit $rc"; }
fi
t_summary
