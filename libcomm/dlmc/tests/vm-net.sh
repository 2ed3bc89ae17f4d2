# SPDX-License-Identifier: BSD-3-Clause
# vm-net.sh - sourced inside the VM: two network namespaces joined by a
# veth pair, the DLMC module, and helpers to move messages between them.
#   dlmc_net_up [MTU]     namespaces a (va) and b (vb)
#   dlmc_addr NS IF EP    address of endpoint EP on IF in NS
#   dlmc_exchange SRC-NS SRC-IF DST-NS DST-IF N SIZE...
: "${BUILD:=build}"
export BUILD DLMC_KO=$BUILD/kmod/dlmc/dlmc.ko DLMC_BIN=$BUILD/libcomm/dlmc
export DLMC_PARAM=/sys/module/dlmc/parameters

dlmc_net_up() {
    local mtu=${1:-1500}
    ip netns del a 2>/dev/null; ip netns del b 2>/dev/null
    ip netns add a && ip netns add b &&
    ip link add va type veth peer name vb &&
    ip link set va netns a && ip link set vb netns b &&
    ip -n a link set va mtu "$mtu" up && ip -n b link set vb mtu "$mtu" up &&
    ip -n a addr add 10.78.0.1/24 dev va && ip -n b addr add 10.78.0.2/24 dev vb &&
    ip -n a link set lo up && ip -n b link set lo up
}

dlmc_addr() {
    local mac
    mac=$(ip netns exec "$1" cat "/sys/class/net/$2/address") || return 1
    echo "$mac/$3"
}

dlmc_exchange() {
    local sns=$1 sif=$2 dns=$3 dif=$4 n=$5; shift 5
    local dst pid rc
    dst=$(dlmc_addr "$dns" "$dif" 7) || return 1
    ip netns exec "$dns" "$DLMC_BIN/dlmc_tool" recv "$dif" 7 "$n" "$@" &
    pid=$!
    ip netns exec "$sns" "$DLMC_BIN/dlmc_tool" send "$sif" 3 "$dst" "$n" "$@"
    rc=$?
    wait "$pid" || rc=1
    return $rc
}

dlmc_set() { echo "$2" >"$DLMC_PARAM/$1"; }

dlmc_counter() { "$DLMC_BIN/dlmc_tool" stats | awk -v k="$1" '$1 == k {print $2}'; }

# t_fn NAME FUNCTION [ARG...]: t_run for a shell function (t_run runs
# commands under timeout, which cannot see functions unless exported).
t_fn() {
    local name=$1; shift
    t_run "$name" bash -c '"$@"' _ "$@"
}
export -f dlmc_net_up dlmc_addr dlmc_exchange dlmc_set dlmc_counter

# dlmc_mpirun NP CMD...: an MPI job with ranks alternating between
# namespace a (where mpirun runs) and b, talking over the veth only.
dlmc_mpirun() {
    local np=$1; shift
    local hf=/tmp/dlmc-hosts
    printf '10.78.0.1 slots=%s\n10.78.0.2 slots=%s\n' "$np" "$np" >"$hf"
    mkdir -p /tmp/node-mpirun
    ip netns exec a unshare --uts -- env TMPDIR=/tmp/node-mpirun \
        OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
        OMPI_MCA_plm_rsh_agent="$PWD/libcomm/dlmc/tests/ns-agent" \
        OMPI_MCA_plm_rsh_no_tree_spawn=1 \
        OMPI_MCA_oob_tcp_if_include=10.78.0.0/24 \
        OMPI_MCA_btl_tcp_if_include=10.78.0.0/24 \
        OMPI_MCA_btl=self,tcp \
        TNBC_DLMC_IF=va,vb \
        mpirun --hostfile "$hf" --map-by node -np "$np" "$@"
}
export -f dlmc_mpirun
