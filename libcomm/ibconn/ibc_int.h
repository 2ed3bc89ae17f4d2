/* SPDX-License-Identifier: BSD-3-Clause */
/* ibconn internals shared by its files. */
#ifndef IBC_INT_H
#define IBC_INT_H

#include "ibconn.h"

#include <infiniband/verbs.h>
#include <stdio.h>

/* Print "ibconn: <message>" on one line; returns -1 for `return ibc_err(...)`. */
int ibc_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

enum ibc_type {             /* message types on the wire */
    T_DATA = 1,             /* eager payload */
    T_RTS,                  /* rendezvous: len bytes are waiting (seq) */
    T_CTS,                  /* rendezvous: write them to addr/rkey */
    T_FIN,                  /* rendezvous: written */
    T_CONN_REQ,             /* on demand: here is my new QP (through static links) */
    T_CONN_REP,             /* on demand: here is mine, connected to yours */
    T_READY,                /* on demand: first message over the new connection */
    T_TYPE_END
};

struct ibc_hdr {
    uint8_t type;
    uint8_t pad[3];
    uint32_t src, dst;      /* origin and final destination */
    uint32_t seq;           /* data sequence from src to dst (DATA, RTS, CTS, FIN) */
    uint64_t len;           /* payload bytes (DATA), message bytes (RTS) */
    uint64_t addr;          /* CTS: target address */
    uint32_t rkey;          /* CTS: target key */
    uint32_t pad2;
};

struct ibc_conninfo {       /* CONN_REQ / CONN_REP payload */
    uint32_t qpn, psn;
    uint8_t gid[16];
};

/* A receive or send buffer slot inside a registered chunk. */
struct ibc_slot {
    char *buf;
    uint32_t lkey;
    int peer;               /* rc: owning connection; send: destination */
    struct ibc_slot *next;  /* free list */
};

/* A message that arrived before its receive, kept in seq order per source. */
struct ibc_msg {
    struct ibc_msg *next;
    uint8_t type;           /* T_DATA or T_RTS */
    uint32_t seq;
    uint64_t len;
    char data[];
};

enum conn_state { C_NONE, C_CONNECTING, C_ACCEPTED, C_CONNECTED };

struct ibc_peer {
    struct ibv_qp *qp;
    enum conn_state state;
    int is_static;
    uint32_t psn;
    uint32_t send_seq, recv_seq;
    struct ibc_msg *q;          /* arrived, sorted by seq */
    unsigned outstanding;       /* send work requests not completed */
    /* rc credits: my eager sends to this peer and how many it has freed
     * (written into credit_in[peer] by the peer with RDMA). */
    uint64_t sent;
    uint64_t freed_local, freed_reported;
    unsigned blocked_pass;      /* outbox flush pass that found it blocked */
    uint64_t rndv_fin_seq;      /* last FIN seen + 1 */
    int cts_seen;               /* CTS for the pending rendezvous send */
    uint64_t cts_addr;
    uint32_t cts_rkey, cts_seq;
};

/* A message waiting for send resources (slot, queue room, credits, or its
 * connection); handlers queue instead of blocking, so progress never nests. */
struct ibc_out {
    struct ibc_out *next;
    int via;                    /* connection it leaves by */
    int credit_write;           /* rc credit update (RDMA write, no receive used) */
    int stalled;                /* counted once in credit_stalls */
    size_t len;                 /* header + payload */
    char msg[];
};

struct ibc_chunk {              /* registered memory holding slots */
    struct ibc_chunk *next;
    struct ibv_mr *mr;
    struct ibc_slot *slots;
    size_t bytes;
};

struct ibc_ctx {
    MPI_Comm comm;
    int rank, nprocs;
    struct ibc_opts o;
    enum ibc_mode mode;
    int use_srq;
    int ready;                  /* start-up finished on every rank */

    struct ibv_context *dev;
    const char *dev_name;
    uint8_t port;
    int gid_index;
    union ibv_gid gid;
    enum ibv_mtu mtu;
    struct ibv_pd *pd;
    struct ibv_cq *scq, *rcq;
    int scq_size, rcq_size;
    struct ibv_srq *srq;
    unsigned srq_cap, srq_posted, srq_limit;

    struct ibc_peer *peers;
    union ibv_gid *gids;        /* every rank's GID (from start-up) */
    size_t slot;                /* header + eager */
    struct ibc_chunk *chunks;
    struct ibc_slot *sfree;     /* free send slots */
    unsigned sslots, sfree_n;

    /* rc credits: credit_in[p] = receives p has freed for me (RDMA target) */
    uint64_t *credit_in;
    struct ibv_mr *credit_mr;
    uint64_t *credit_addr;      /* every rank's credit_in address */
    uint32_t *credit_rkey;

    struct ibc_out *out_head, *out_tail;
    unsigned out_len, pass;
    int rndv_peer;
    unsigned async_tick;

    unsigned sd, rd;            /* granted depths */
    unsigned conns_static, conns_dynamic;
    int rndv_write_done;
    struct ibc_stats st;
};

/* ibc_dev.c */
int ibc_dev_open(struct ibc_ctx *c);
int ibc_mode_choose(struct ibc_ctx *c);
void ibc_dev_close(struct ibc_ctx *c);

/* ibc_qp.c */
struct ibv_qp *ibc_qp_create(struct ibc_ctx *c);
int ibc_qp_connect(struct ibc_ctx *c, struct ibv_qp *qp, uint32_t psn,
                   const struct ibc_conninfo *remote);
int ibc_slots_alloc(struct ibc_ctx *c, unsigned count, struct ibc_slot **out);
int ibc_post_recv(struct ibc_ctx *c, struct ibc_slot *s);
int ibc_srq_grow(struct ibc_ctx *c, unsigned more);
int ibc_srq_arm(struct ibc_ctx *c);

/* ibc_proto.c */
#define IBC_RNDV_WRID 1         /* wr_id of the rendezvous RDMA write (slots are aligned) */
int ibc_is_static(const struct ibc_ctx *c, int peer);
int ibc_route(const struct ibc_ctx *c, int dst);
int ibc_queue(struct ibc_ctx *c, int via, const struct ibc_hdr *h, const void *payload,
              size_t len);
int ibc_flush(struct ibc_ctx *c);
int ibc_wait_step(struct ibc_ctx *c);
int ibc_conn_start(struct ibc_ctx *c, int peer);
int ibc_wait_connected(struct ibc_ctx *c, int peer);

/* ibc_mem.c */
uint64_t ibc_mapped_bytes(void);

#endif
