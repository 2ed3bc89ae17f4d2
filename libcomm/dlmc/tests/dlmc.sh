#!/usr/bin/env bash
# Suite dlmc: host unit tests, then the module tests in the VM bench
# (scripts/vm/run), whose counts are added to this suite's.
cd "$(dirname "$0")/../../.."
export T_SUITE=dlmc
. test/lib.sh
: "${BUILD:=build}"

B=$BUILD/libcomm/dlmc
t_cmocka "$B/test_dlmc_proto"
t_fuzz dlmc libcomm/dlmc/fuzz/seeds
# The applications over plain MPI on the host (they check their own results).
t_run "pi over MPI, 3 ranks" mpirun --oversubscribe -np 3 "$B/dlmc_pi" -r 2 1000 100000
t_run "tridiagonal solver over MPI, 3 ranks" mpirun --oversubscribe -np 3 "$B/dlmc_tridiag" -r 1 6 1000 200000
# Bad configuration: a one-line error, never a hang or a crash.
t_expect_fail "unknown transport refused" env TNBC_P2P=udp "$B/dlmc_pi" 10
t_expect_fail "bad size refused" "$B/dlmc_tool" send eth0 3 02:00:00:00:00:01/5 1 5G
t_expect_fail "bad endpoint refused" "$B/dlmc_tool" recv eth0 99999 1 1
t_expect_fail "channel: no such TNBC_DLMC_IF, all ranks fail" \
    env TNBC_DLMC_IF=nosuch0 mpirun --oversubscribe -np 2 "$B/dlmc_pi" --transport=dlmc 10
t_expect_fail "channel: bad TNBC_DLMC_EP_BASE, all ranks fail" \
    env TNBC_DLMC_IF=lo TNBC_DLMC_EP_BASE=70000 mpirun --oversubscribe -np 2 "$B/dlmc_pi" --transport=dlmc 10

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
for try in 1 2; do
    BUILD=$BUILD scripts/vm/run -t 200 -m 1536 -e BUILD="$BUILD" bash libcomm/dlmc/tests/vm-check.sh >"$log" 2>&1
    rc=$?
    # 125: the guest never ran the command (e.g. a boot that failed on a
    # starved host); one more boot before calling it a failure.
    [[ $rc -eq 125 ]] || break
    echo "  (VM did not start, exit 125; booting again)"
done
grep -E '^  (ok|FAIL|skip) |^       \| ' "$log"
line=$(grep -E '^dlmc-vm: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$log" | tail -n 1)
if [[ -z $line ]]; then
    T_FAIL=$((T_FAIL + 1))
    echo "  FAIL VM run ended without a summary (exit $rc):"; tail -n 25 "$log" | sed 's/^/       | /'
else
    read -r p f s < <(echo "$line" | sed -E 's/^[^0-9]*([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped$/\1 \2 \3/')
    T_PASS=$((T_PASS + p)) T_FAIL=$((T_FAIL + f)) T_SKIP=$((T_SKIP + s))
    [[ $rc -ne 0 && $f -eq 0 ]] && { T_FAIL=$((T_FAIL + 1)); echo "  FAIL VM exit $rc"; }
fi
t_summary
