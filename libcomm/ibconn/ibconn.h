/* SPDX-License-Identifier: BSD-3-Clause */
/* ibconn: point-to-point messaging over libibverbs with scalable connection
 * modes (design 001): full RC mesh, RC with one shared receive queue, XRC,
 * and group connection with on-demand dedicated connections.
 *
 * Endpoints are bootstrapped over MPI. Messages up to the eager threshold go
 * through pre-posted receive buffers; larger ones by RDMA-write rendezvous.
 * Calls are blocking; progress (including forwarding for other processes in
 * group mode) happens inside ibc_* calls, so processes waiting for each other
 * use ibc_barrier rather than MPI_Barrier. Messages between two processes
 * arrive in order; a receive names its source. All functions return 0 on
 * success and -1 after printing a one-line "ibconn: ..." error. */
#ifndef IBCONN_H
#define IBCONN_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

enum ibc_mode { IBC_RC, IBC_RC_SRQ, IBC_XRC, IBC_GROUP, IBC_MODE_COUNT };

struct ibc_opts {
    enum ibc_mode mode;       /* requested mode (TNBC_IBCONN_MODE) */
    unsigned allowed;         /* bit per mode accepted as fallback (TNBC_IBCONN_ALLOW) */
    size_t eager;             /* eager threshold in bytes (TNBC_IBCONN_EAGER, 8192) */
    unsigned sd;              /* send queue depth (TNBC_IBCONN_SD, 16) */
    unsigned rd;              /* rc: receive queue depth (TNBC_IBCONN_RD, 16) */
    unsigned n;               /* rc: receives posted per connection (TNBC_IBCONN_N, 5) */
    unsigned srq_per_conn;    /* SRQ receives per connection (TNBC_IBCONN_SRQ_PER_CONN, 1) */
    unsigned srq_min;         /* SRQ receives at least (TNBC_IBCONN_SRQ_MIN, 16) */
    unsigned srq_max;         /* SRQ refill ceiling (TNBC_IBCONN_SRQ_MAX, 4096) */
    unsigned group;           /* group size (TNBC_IBCONN_GROUP, 4096) */
    int proxy;                /* forward through static links meanwhile (TNBC_IBCONN_PROXY) */
    char devices[256];        /* comma-separated devices, "" = all (TNBC_IBCONN_DEVICES) */
    int gid_index;            /* -1: first IPv4 GID (TNBC_IBCONN_GID) */
    unsigned s2;              /* bytes per work request, for accounting (TNBC_IBCONN_S2, 64) */
};

struct ibc_stats {
    enum ibc_mode mode;           /* mode in use (after any fallback) */
    unsigned nprocs;
    unsigned conns_static;        /* connections made at start-up */
    unsigned conns_dynamic;       /* connections made on demand */
    unsigned sd, rd;              /* queue depths granted by the device */
    uint64_t srq_depth;           /* SRQ receives posted now (0 without SRQ) */
    uint64_t slot_bytes;          /* receive buffer size (header + eager) */
    uint64_t bytes_wqe;           /* work requests: QPs and SRQ at granted depths * s2 */
    uint64_t bytes_rbuf;          /* posted receive buffers */
    uint64_t bytes_model;         /* bytes_wqe + bytes_rbuf: what the model counts */
    uint64_t bytes_sbuf;          /* send staging buffers (not in the model) */
    uint64_t bytes_cq;            /* completion queues, cqe * 64 (not in the model) */
    uint64_t bytes_mapped;        /* queue memory the kernel mapped (/proc/self/maps) */
    uint64_t eager_sent, rndv_sent, forwarded, proxied;
    uint64_t credit_stalls;       /* rc: sends that waited for credits */
    uint64_t srq_limit_events, srq_refills;
};

const char *ibc_mode_name(enum ibc_mode mode);
/* Defaults overridden by TNBC_IBCONN_* variables; -1 on a bad value. */
int ibc_opts_from_env(struct ibc_opts *o);

struct ibc_ctx;
int ibc_init(MPI_Comm comm, const struct ibc_opts *o, struct ibc_ctx **out);
int ibc_send(struct ibc_ctx *c, int dst, const void *buf, size_t len);
int ibc_recv(struct ibc_ctx *c, int src, void *buf, size_t cap, size_t *len);
int ibc_progress(struct ibc_ctx *c);
/* Barrier that keeps making progress (forwarding, connection set-up). */
int ibc_barrier(struct ibc_ctx *c);
/* Whether a direct connection to peer exists (static or made on demand). */
int ibc_connected(struct ibc_ctx *c, int peer);
void ibc_get_stats(struct ibc_ctx *c, struct ibc_stats *s);
int ibc_finalize(struct ibc_ctx *c);

#endif
