/* SPDX-License-Identifier: BSD-3-Clause */
/* Memory model of the connection modes (design 001, sections 1-4).
 *
 * Per process, with N = m*c processes, n pre-posted receives per RC queue
 * pair of s1 bytes, send/receive queue depths sd/rd, work-request size s2:
 *   RC      (n*s1 + (sd+rd)*s2) * (N-1)
 *   RC_SRQ  (s1 + sd*s2 + s2) * (N-1)      one SRQ buffer and WQE per peer
 *   XRC_S   (s1 + sd*s2 + s2) * m          one connection per remote node
 *   XRC_M   (f*s1 + sd*s2 + s2) * m        f = (1 + 1/2 + ... + 1/2^(k-1))/k
 *   GROUP   (s1 + sd*s2 + s2) * links      XRC inside groups of g processes
 *           links = g/c + (G-1), G = ceil(N/g); full XRC connection if N <= g
 *   GROUP_RC the same over RC+SRQ: links = (g-1) + (G-1)
 * Queue management space and CQs are left out, as in the design. */
#ifndef IBC_MODEL_H
#define IBC_MODEL_H

#include <stdint.h>

enum ibc_model_mode {
    IBC_M_RC, IBC_M_RC_SRQ, IBC_M_XRC_S, IBC_M_XRC_M, IBC_M_GROUP, IBC_M_GROUP_RC,
    IBC_M_COUNT
};

struct ibc_model_params {
    uint64_t m;      /* nodes */
    uint64_t c;      /* cores (processes) per node */
    double s1;       /* receive buffer bytes */
    double sd, rd;   /* send / receive queue depth */
    double s2;       /* work request bytes */
    double n;        /* pre-posted receives per RC queue pair */
    uint64_t g;      /* group size in processes */
    unsigned k;      /* XRC_M: number of buffer sizes s1, s1/2, ... */
};

struct ibc_model_row {
    uint64_t conns;        /* connections (QPs) per process */
    double bytes;          /* bytes per process */
};

/* The design's defaults: s1 8 kB (8000 B, as its tables compute), depths 16,
 * s2 64 B, n 5, groups of 4096, 6 buffer sizes. */
void ibc_model_defaults(struct ibc_model_params *p);
const char *ibc_model_name(enum ibc_model_mode mode);
/* 0 on success, -1 if the parameters are out of range (message in err). */
int ibc_model_check(const struct ibc_model_params *p, char *err, int errlen);
struct ibc_model_row ibc_model_eval(const struct ibc_model_params *p, enum ibc_model_mode mode);

#endif
