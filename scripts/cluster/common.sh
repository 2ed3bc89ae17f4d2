# SPDX-License-Identifier: BSD-3-Clause
# Naming and state shared by tnbc-cluster and the plm_rsh_agent (sourced).
#
# Every kernel object a cluster creates carries the cluster's name, so two
# clusters never collide and `down` can find everything again:
#   netns      tnbc-NAME-nK        (K = 0..N-1)
#   hostname   tnbc-NAME-nK        (own UTS namespace per node)
#   bridge     tb-NAME             (root namespace, holds the .254 address)
#   host veth  tv-NAME-K           (peer is eth0 inside the node)
# Interface names are limited to 15 bytes, hence NAME <= 8 characters and
# K <= 99. State lives in $TNBC_CLUSTER_DIR/NAME (default /run/tnbc-cluster).

if [[ $(id -u) -eq 0 ]]; then
    : "${TNBC_CLUSTER_DIR:=/run/tnbc-cluster}"
else
    : "${TNBC_CLUSTER_DIR:=${TMPDIR:-/tmp}/tnbc-cluster-$(id -u)}"
fi
CL_MAX_NODES=64

cl_die() { echo "tnbc-cluster: $*" >&2; exit 1; }

cl_check_name() {
    [[ $1 =~ ^[a-z0-9]{1,8}$ ]] ||
        cl_die "bad cluster name '$1': use 1 to 8 characters [a-z0-9]"
}

cl_state()  { echo "$TNBC_CLUSTER_DIR/$1"; }
cl_netns()  { echo "tnbc-$1-n$2"; }
cl_bridge() { echo "tb-$1"; }
cl_veth()   { echo "tv-$1-$2"; }

# cl_node_of_host HOST: prints "NETNS HOSTNAME TMPDIR CPUS" for the node
# whose address or hostname is HOST, searching every recorded cluster
# (addresses are unique across clusters because each has its own subnet).
# CPUS is the node's taskset list, "-" when the cluster recorded none.
cl_node_of_host() {
    local host=$1 f
    for f in "$TNBC_CLUSTER_DIR"/*/nodes; do
        [[ -r $f ]] || continue
        awk -v h="$host" '$1 == h || $2 == h { print $2, $2, $3, ($4 == "" ? "-" : $4); found = 1; exit }
                          END { exit !found }' "$f" && return 0
    done
    return 1
}
