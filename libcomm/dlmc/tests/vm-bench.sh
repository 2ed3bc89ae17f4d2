#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Runs inside the VM bench: DLMC vs TCP sockets vs Open MPI's TCP BTL on the
# same veth pair between namespaces a and b, in one VM run; then the two
# applications over the DLMC channel and over Open MPI.  Output: one line
# per measurement ("KIND key=value ...") on stdout.
. libcomm/dlmc/tests/vm-net.sh
set -u
MTU=${TNBC_DLMC_BENCH_MTU:-1500}
insmod "$DLMC_KO" || exit 1
dlmc_net_up "$MTU" || exit 1
mkdir -p /tmp/node-mpirun
echo "# mtu=$MTU cpus=$(nproc) kernel=$(uname -r)"

server_then_client() { # SERVER-CMD... -- CLIENT-CMD...
    local s=() pid
    while [[ $1 != -- ]]; do s+=("$1"); shift; done; shift
    "${s[@]}" & pid=$!
    "$@"; local rc=$?
    wait $pid
    return $rc
}

dst=$(dlmc_addr b vb 20)
server_then_client ip netns exec b "$DLMC_BIN/dlmc_bench" dlmc-server vb 20 -- \
    ip netns exec a "$DLMC_BIN/dlmc_bench" dlmc-client va 21 "$dst"
server_then_client ip netns exec b "$DLMC_BIN/dlmc_bench" tcp-server 5201 -- \
    ip netns exec a "$DLMC_BIN/dlmc_bench" tcp-client 10.78.0.2 5201
# Open MPI polls in its progress loop; let the DLMC channel poll too.
export TNBC_DLMC_SPIN_US=${TNBC_DLMC_SPIN_US:-2000}
dlmc_mpirun 2 "$DLMC_BIN/dlmc_pingpong" --transport=dlmc
dlmc_mpirun 2 "$DLMC_BIN/dlmc_pingpong" --transport=mpi
for t in dlmc mpi; do
    dlmc_mpirun 2 "$DLMC_BIN/dlmc_pi" --transport=$t -r 10 1000 100000 10000000
    dlmc_mpirun 2 "$DLMC_BIN/dlmc_tridiag" --transport=$t -r 2 10000 100000 1000000
done
"$DLMC_BIN/dlmc_tool" stats | sed 's/^/# /'
rmmod dlmc
