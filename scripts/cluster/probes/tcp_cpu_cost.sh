#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# CPU cost of moving data over an emulated cluster's links (docs/cluster.md,
# "Achieved bandwidth, and the CPU it costs"): 32 MiB each way at once
# between nodes 0 and 1 of cluster NAME with tcp_tput.py, and the CPU time
# all CPUs spent meanwhile (user + system + irq + softirq, from /proc/stat).
#   probes/tcp_cpu_cost.sh NAME [BURST_BYTES RATE]
# With BURST_BYTES and RATE, both ends of both nodes' veths are re-shaped
# first (tbf rate RATE burst BURST_BYTES), to compare bucket sizes.
set -euo pipefail
name=$1 burst=${2:-} rate=${3:-}
here=$(dirname "$0")
n0=tnbc-$name-n0 n1=tnbc-$name-n1
addr1=$(ip netns exec "$n1" ip -4 -o addr show eth0 | awk '{print $4}' | cut -d/ -f1)
if [[ -n $burst ]]; then
    limit=$(( 4 * burst > 500000 ? 4 * burst : 500000 ))
    for k in 0 1; do
        ip netns exec "tnbc-$name-n$k" tc qdisc replace dev eth0 root tbf rate "$rate" burst "$burst" limit "$limit"
        tc qdisc replace dev "tv-$name-$k" root tbf rate "$rate" burst "$burst" limit "$limit"
    done
fi
busy() { awk '/^cpu /{print $2 + $3 + $4 + $7 + $8}' /proc/stat; }
ip netns exec "$n1" /usr/bin/python3 "$here/tcp_tput.py" server "$addr1" 32 bi &
sleep 0.5
b0=$(busy)
ip netns exec "$n0" /usr/bin/python3 "$here/tcp_tput.py" client "$addr1" 32 bi
b1=$(busy)
wait
echo "CPU: $(( b1 - b0 )) jiffies ($(getconf CLK_TCK)/s) for 64 MiB${burst:+, burst $burst B at $rate}"
