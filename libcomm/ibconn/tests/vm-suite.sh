#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# ibconn tests on soft-RoCE, run inside the VM bench by suite.sh:
#   scripts/vm/run libcomm/ibconn/tests/vm-suite.sh
# All steps share one mpirun (MPI start-up dominates under TCG); rank 0
# prints "ok"/"FAIL" per step, counted here. Ends with
# "ibconn-vm: N passed, N failed, N skipped".
cd "$(dirname "$0")/../../.." || exit 1
T_SUITE=ibconn-vm
source test/lib.sh
B=${BUILD:-build}

if [[ -z ${TNBC_IN_VM:-} && -z ${T_LIST_ONLY:-} ]]; then
    t_skip "ibconn on rxe" "not inside the VM bench (scripts/vm/run)"; t_summary; exit
fi
# Four ranks, spread over rxe0 and rxe1. Group size 3 makes groups {0,1,2}
# and {3}: rank 3 is statically linked to rank 0 only, so ranks 1 and 2 reach
# it (and it them) through connections made on demand, all at once.
G="TNBC_IBCONN_MODE=group TNBC_IBCONN_GROUP=3"
steps=(
    TNBC_IBCONN_MODE=rc integrity
    TNBC_IBCONN_MODE=rc_srq integrity
    $G integrity
    $G TNBC_IBCONN_EAGER=2048 TNBC_IBCONN_PROXY=1 integrity
    $G ondemand
    $G TNBC_IBCONN_PROXY=1 ondemand
    TNBC_IBCONN_MODE=rc TNBC_IBCONN_N=2 TNBC_IBCONN_RD=2 exhaust
    TNBC_IBCONN_MODE=rc_srq TNBC_IBCONN_SRQ_MIN=4 exhaust
    TNBC_IBCONN_MODE=xrc mode:rc_srq
    TNBC_IBCONN_MODE=xrc TNBC_IBCONN_ALLOW=xrc,rc mode:rc
    TNBC_IBCONN_MODE=xrc TNBC_IBCONN_ALLOW=xrc refuse
)
nsteps=0
for s in "${steps[@]}"; do [[ $s == *=* ]] || nsteps=$((nsteps + 1)); done
# T_LIST_ONLY (lib.sh): each step, named as ibc_test names it, as skipped;
# then the named checks below (which t_run skips).
if [[ -n ${T_LIST_ONLY:-} ]]; then
    settings=
    for s in "${steps[@]}"; do
        if [[ $s == *=* ]]; then settings+="${settings:+ }$s"; continue; fi
        t_skip "$s $settings" "$T_LIST_ONLY"; settings=
    done
else
if ! scripts/vm/rxe-up -q >"$T_LOGDIR/rxe-up.log" 2>&1; then
    t_run "rxe devices up" sh -c "cat $T_LOGDIR/rxe-up.log; false"; t_summary; exit
fi
# MPI only bootstraps: keep it on shared memory and loopback, off the rxe devices.
export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader OMPI_MCA_oob_tcp_if_include=lo
rx0=$(cat /sys/class/net/tnbc0/statistics/rx_bytes)
log=$T_LOGDIR/steps.log
timeout -k 5 "${TNBC_IBCONN_STEPS_TIMEOUT:-150}" \
    mpirun --oversubscribe -np 4 "$B/libcomm/ibconn/tests/ibc_test" "${steps[@]}" >"$log" 2>&1
rc=$?
grep -E '^(ok  |FAIL) ' "$log" >"$log.verdicts"
while read -r verdict name settings; do
    if [[ $verdict == ok ]]; then T_PASS=$((T_PASS + 1)); echo "  ok   $name $settings"
    else T_FAIL=$((T_FAIL + 1)); echo "  FAIL $name $settings"; fi
done <"$log.verdicts"
done_steps=$(wc -l <"$log.verdicts")
if ((done_steps < nsteps)); then
    T_FAIL=$((T_FAIL + nsteps - done_steps))
    echo "  FAIL $((nsteps - done_steps)) step(s) never finished (mpirun exit $rc):"
    tail -n 25 "$log" | sed 's/^/       | /'
elif grep -q '^FAIL' "$log"; then
    grep -vE '^(ok  |FAIL) ' "$log" | tail -n 25 | sed 's/^/       | /'
fi
fi
# The refusals must say why, in one line each.
t_run "xrc refusal names its reason and the fallback" \
    grep -q "ibconn: mode xrc refused on rxe.: the device has no XRC (IBV_DEVICE_XRC not in device_cap_flags); using rc_srq" "$log"
t_run "xrc with no allowed fallback says so" grep -q "no allowed fallback (TNBC_IBCONN_ALLOW)" "$log"
[[ -n ${T_LIST_ONLY:-} ]] && rx0=0 rx1=0 || rx1=$(cat /sys/class/net/tnbc0/statistics/rx_bytes)
t_run "RDMA traffic crossed the veth ($(( (rx1 - rx0) / 1000 )) kB into tnbc0)" test $((rx1 - rx0)) -gt 1000000
t_summary
