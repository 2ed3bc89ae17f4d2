/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Projection to another platform (tnbc-analyze --platform SPEC): the
 * traced calls' Tcomm re-derived from their bytes on a platform described
 * by link rate per node, latency, ranks per node and nodes; the rest of
 * the model (TCURC, RCRC, the per-rank play-out) is the traced one.
 * docs/analyzer.md, "Projection to another platform", says what it assumes.
 */
#ifndef TNBC_ANALYZER_PLATFORM_H
#define TNBC_ANALYZER_PLATFORM_H

#include <stddef.h>

struct an_call;
struct an_rank;

struct an_platform {
    double link_Bps;   /* bytes/s one node's link carries each way */
    double latency_ns; /* per message */
    int ppn, nodes;    /* ranks per node, nodes: the communicator spans them */
    double memcpy_Bps; /* intra-node copy rate; 0: the traced rank's copy_bw */
    int cores;         /* CPUs per node the ranks run on; default ppn */
    char spec[160];    /* as given, for the profile and the summary */
};

/* Strict: keys link, latency, ppn, nodes (all required), memcpy and cores
 * (optional), once each, comma-separated, with units. Returns -1 with a
 * one-line err on anything else. */
int an_platform_parse(const char *spec, struct an_platform *p, char *err, size_t errlen);

/* How much slower each rank's own work runs on the platform than where it
 * was traced (with a core to itself): ppn/cores where the node's ranks
 * share fewer cores than there are ranks, else 1. */
double an_platform_cpu_factor(const struct an_platform *p);

/* The CPU share of communication in flight (--comm-cpu-share, measured
 * with a core per rank) on the platform, for an all-to-all operation
 * (alltoall(v), allgather(v): per source and rootless, every rank sends
 * to and receives from every other): where the node's ppn ranks share
 * fewer cores, each core carries ppn/cores ranks' communication. Other
 * operations (rooted ones, and the chunked allreduce, whose ring is not
 * validated here), and no platform: `share` as given. */
double an_platform_share(const struct an_platform *p, double share, int all_to_all);

/* The call's Tcomm on the platform, in ns, from its received bytes. */
double an_platform_tcomm(const struct an_platform *p, const struct an_call *c,
                         const struct an_rank *r);

#endif
