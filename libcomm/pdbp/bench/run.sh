#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# make bench-pdbp: PDBP throughput (1-to-N, N-to-1, N-to-N, and MPI_Alltoall
# moving the same bytes) over unit packets of 64 B .. 1 MB on the emulated
# cluster (its own, brought up here and torn down at the end), and pool
# memory against the number of streams and the threshold. CSV under
# $BUILD/bench/pdbp/, plots and tables in docs/pdbp/.
#
# Knobs (environment):
#   PDBP_BENCH_TRANSPORTS "cluster" (default): one rank per node of an emulated
#                         cluster, TCP over shaped links; "tcp": --mca btl
#                         self,tcp on loopback (one host); "shm": Open MPI's
#                         default. Without root or network namespaces the
#                         cluster is replaced by tcp, with a message.
#   PDBP_BENCH_NODES      cluster nodes, default 3
#   PDBP_BENCH_RATE       shaped link rate (tc syntax), default 100mbit (see
#                         docs/pdbp.md: what 2 shared cores can fill)
#   PDBP_BENCH_NPS        host counts to run, default "2 3" on the cluster
#                         (at most the node count), "2 3 4" otherwise
#   PDBP_BENCH_BYTES      bytes per stream per point, default 16000000: streams
#                         long enough to measure the steady state (with 4 MB the
#                         3-host window was 0.7 s, of which the start, the end
#                         and the two barriers took ~5%; docs/pdbp.md)
#   PDBP_BENCH_REPS       runs per point (mean without max and min), default 3
#   PDBP_BENCH_A2A_CALLS  most MPI_Alltoall calls per run, default 2000
#   PDBP_BENCH_MPIRUN     extra mpirun arguments (all transports)
#   PDBP_BENCH_LINK_MBPS  link rate for the plots' share of the link; set from
#                         PDBP_BENCH_RATE when this script brings the cluster up
#   PDBP_BENCH_PATTERNS   throughput runs, default "1toN Nto1 NtoN a2a"
#   PDBP_BENCH_POOL       1 (default): the pool-memory runs; 0: skip them
#   PDBP_BENCH_DOCS       where plots, tables and CSV copies go, default
#                         docs/pdbp; empty: CSV under $BUILD/bench/pdbp only
#                         (for partial runs that must not replace the docs)
#   PDBP_BENCH_CLUSTER    name of the cluster brought up here (1-8 of [a-z0-9]),
#                         default "pdb" + the script's pid
#   PDBP_BENCH_YIELD      Open MPI's mpi_yield_when_idle for the cluster runs;
#                         default "auto": 1 for a run on more nodes than the
#                         machine has CPUs (the cluster then puts two nodes on
#                         one CPU, and their ranks, busy-polling in MPI calls,
#                         see each other's messages a scheduler tick late: a
#                         3-rank barrier took 5-8 ms instead of 0.1-1), else
#                         Open MPI's default (PDBP and MPI_Alltoall alike)
#   PDBP_BENCH_FAST_RATE  N-to-N and MPI_Alltoall again on a faster cluster, for
#                         small packets (default 1gbit; empty: skipped): see
#                         docs/pdbp.md, "Small packets"
#   PDBP_BENCH_TCP_CC     TCP congestion control set in the cluster's node
#                         namespaces, default reno: loss-based like Linux's
#                         default cubic, which namespaces here may not use; the
#                         nodes would otherwise inherit this machine's bbr.
#                         Empty: leave the inherited one. See docs/pdbp.md
set -uo pipefail
cd "$(dirname "$0")/../../.."
: "${BUILD:=build}" "${PY:=/usr/bin/python3}"
out=$BUILD/bench/pdbp
DOCS=${PDBP_BENCH_DOCS-docs/pdbp}
PATTERNS=${PDBP_BENCH_PATTERNS:-1toN Nto1 NtoN a2a}
POOL=${PDBP_BENCH_POOL:-1}
mkdir -p "$out" ${DOCS:+"$DOCS"}
B=$BUILD/pdbp/pdbp_bench
BYTES=${PDBP_BENCH_BYTES:-16000000}
REPS=${PDBP_BENCH_REPS:-3}
TRANSPORTS=${PDBP_BENCH_TRANSPORTS:-cluster}
NODES=${PDBP_BENCH_NODES:-3}
RATE=${PDBP_BENCH_RATE:-100mbit}
EXTRA=${PDBP_BENCH_MPIRUN:-}
LINK=${PDBP_BENCH_LINK_MBPS:-}
CL=scripts/cluster/tnbc-cluster
CLN=${PDBP_BENCH_CLUSTER:-pdb$(( $$ % 100000 ))}  # "pdb" + at most 5 digits: 8 characters
: "${TNBC_CLUSTER_DIR:=/run/tnbc-cluster}"
if [[ $(id -u) -eq 0 ]]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
export OMPI_MCA_btl_base_warn_component_unused=0
# 1 MiB packets must fit one block; one sender thread per host suits 2 cores
export TNBC_PDBP_BLOCK_SIZE=${TNBC_PDBP_BLOCK_SIZE:-1052672}
export TNBC_PDBP_THREADS=${TNBC_PDBP_THREADS:-1}

TCP_CC=${PDBP_BENCH_TCP_CC-reno}
# bring_up NAME RATE: an emulated cluster of $NODES nodes; CC gets the
# congestion control its nodes use.
bring_up() {
    $CL up -n "$NODES" --rate "$2" --name "$1" ${TCP_CC:+--tcp-cc "$TCP_CC"} || return 1
    CC=$(awk -F= '$1 == "TCP_CC" { print $2 }' "$TNBC_CLUSTER_DIR/$1/config")
}
link_mbps() { # tc rate -> Mbit/s
    local r=${1,,}
    case $r in *gbit) echo $(( ${r%gbit} * 1000 )) ;; *mbit) echo "${r%mbit}" ;;
               *kbit) /usr/bin/python3 -c "print(${r%kbit}/1000)" ;; esac
}

cluster_up=0 CC="" YIELD=""
if [[ " $TRANSPORTS " == *" cluster "* ]]; then
    why=""
    if [[ $(id -u) -ne 0 ]]; then why="not root"
    elif ! ip netns add "tnbc-probe-$$" 2>/dev/null; then why="no network namespaces"
    else ip netns del "tnbc-probe-$$"; fi
    if [[ -z $why ]]; then
        trap '$CL down --name "$CLN" >/dev/null 2>&1' EXIT
        trap 'exit 130' INT TERM
        if bring_up "$CLN" "$RATE"; then
            cluster_up=1
            YIELD=${PDBP_BENCH_YIELD-auto}
            LINK=$(link_mbps "$RATE")
        else
            why="tnbc-cluster up failed"
        fi
    fi
    if [[ $cluster_up -eq 0 ]]; then
        echo "bench-pdbp: no emulated cluster ($why): measuring over loopback TCP instead" >&2
        TRANSPORTS=${TRANSPORTS//cluster/tcp}
    fi
fi
if [[ $cluster_up -eq 1 ]]; then
    NPS=${PDBP_BENCH_NPS:-$(seq -s' ' 2 "$NODES")}
else
    NPS=${PDBP_BENCH_NPS:-2 3 4}
fi

run() { # TRANSPORT NP ARGS...
    local pre=$1 np=$2; shift 2
    local args=(--oversubscribe)
    case $pre in
    tcp) args+=(--mca btl self,tcp --mca btl_tcp_if_include lo) ;;  # one host
    cluster) args=(--map-by node) ;;   # one rank per node; TCP between nodes
    esac
    # shellcheck disable=SC2086
    (
        if [[ $pre == cluster ]]; then
            . "$TNBC_CLUSTER_DIR/$CLN/env"
            local y=$YIELD
            [[ $y == auto ]] && { y=""; (( np > $(nproc) )) && y=1; }
            [[ -n $y ]] && export OMPI_MCA_mpi_yield_when_idle=$y
        fi
        timeout -k 5 600 mpirun -np "$np" "${args[@]}" $EXTRA "$B" "$@"
    ) 2> >(grep -v 'plm:rsh: Warning: setpgid' >&2) | sed "s/^/${LABEL:-$pre},$np,/" > "$out/run.tmp" ||
        echo "bench-pdbp: run $pre $np $* failed" >&2
    grep -v ",stats," "$out/run.tmp" >>"$out/tput.csv"
    grep ",stats," "$out/run.tmp" | sed 's/,stats,/,/' >>"$out/stats.csv"
    rm -f "$out/run.tmp"
}

echo "transport,hosts,pattern,packet_bytes,seconds,host_MBps" >"$out/tput.csv"
echo "transport,hosts,pattern,packet_bytes,host,seconds,blocks_sent,mean_block_bytes,send_mpi_s,no_credit,blocks_recv,recv_mpi_s,direct_msgs,sent_msgs,waits" >"$out/stats.csv"
echo "== pdbp throughput: $(date -u '+%F %H:%M UTC'); transports {$TRANSPORTS}${LINK:+, links $RATE}${CC:+, TCP $CC}${YIELD:+, mpi_yield_when_idle $YIELD}; hosts {$NPS}; $BYTES bytes per stream, $REPS runs per point; load: $(cut -d' ' -f1-3 /proc/loadavg)"
for tr in $TRANSPORTS; do
    for np in $NPS; do
        for pat in $PATTERNS; do
            if [[ $pat == a2a ]]; then run "$tr" "$np" a2a "$BYTES" "$REPS"
            else run "$tr" "$np" tput "$pat" "$BYTES" "$REPS"; fi
        done
    done
done
echo "== load after the throughput runs: $(cut -d' ' -f1-3 /proc/loadavg)"
if [[ $cluster_up -eq 1 ]]; then
    $CL down --name "$CLN" >/dev/null 2>&1
fi

# Small packets on a faster link: MPI_Alltoall of one small packet per
# call is bound by per-call costs, not by the link, as on a real cluster;
# at 100 Mbit/s this emulation's microsecond latencies let it fill 40-90 %
# of the link from 256 B (docs/pdbp.md, "Small packets").
FAST=${PDBP_BENCH_FAST_RATE-1gbit} FAST_LINK=""
if [[ $cluster_up -eq 1 && -n $FAST ]]; then
    CLN=pdf$(( $$ % 100000 ))
    if bring_up "$CLN" "$FAST"; then
        FAST_LINK=$(link_mbps "$FAST")
        echo "== pdbp small packets: links $FAST, TCP $CC; hosts {$NPS}; load: $(cut -d' ' -f1-3 /proc/loadavg)"
        for np in $NPS; do
            [[ " $PATTERNS " == *" NtoN "* ]] && LABEL=cluster-$FAST run cluster "$np" tput NtoN "$BYTES" "$REPS"
            [[ " $PATTERNS " == *" a2a "* ]] && LABEL=cluster-$FAST run cluster "$np" a2a "$BYTES" "$REPS"
        done
        $CL down --name "$CLN" >/dev/null 2>&1
    else
        echo "bench-pdbp: no cluster at $FAST: small-packet runs skipped" >&2
    fi
fi
trap - EXIT

# Pool memory is about the allocation algorithm, not links: shared memory.
[[ $POOL == 1 ]] && echo "threshold,streams,host0_pool_bytes,host1_pool_bytes,host0_grows" >"$out/pool.csv"
[[ $POOL == 1 ]] && echo "== pdbp pool memory: streams {1 2 4 8 16} x threshold {0.3 0.5 0.7 0.9}"
[[ $POOL == 1 ]] && for t in 0.3 0.5 0.7 0.9; do
    for s in 1 2 4 8 16; do
        TNBC_PDBP_BLOCK_SIZE=65536 TNBC_PDBP_ROW_CAP=128 TNBC_PDBP_THRESHOLD=$t timeout -k 5 300 \
            mpirun --oversubscribe -np 2 $EXTRA "$B" pool "$s" |
            awk -F, -v t="$t" '$1 == "pool" { print t "," $2 "," $4 "," $5 "," $6 }' >>"$out/pool.csv"
    done
done

if [[ -z $DOCS ]]; then
    echo "== pdbp: CSV in $out (PDBP_BENCH_DOCS empty: docs untouched); load: $(cut -d' ' -f1-3 /proc/loadavg)"
    exit 0
fi
"$PY" libcomm/pdbp/bench/plot.py "$out" "$DOCS" ${LINK:+--link-mbps "cluster=$LINK"} \
    ${FAST_LINK:+--link-mbps "cluster-$FAST=$FAST_LINK"}
cp "$out/tput.csv" "$out/stats.csv" "$DOCS/"
[[ -f $out/pool.csv ]] && cp "$out/pool.csv" "$DOCS/"
echo "== pdbp: CSV in $out and $DOCS/, plots in $DOCS/, table in $DOCS/summary.md; load: $(cut -d' ' -f1-3 /proc/loadavg)"
