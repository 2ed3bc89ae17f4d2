// SPDX-License-Identifier: BSD-3-Clause
/* Start-up over MPI (device, mode, queues, static links) and tear-down. */
#include "ibc_int.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

/* One SRQ receive per static connection, within [srq_min, srq_max]. */
static unsigned srq_depth(const struct ibc_ctx *c, unsigned statics)
{
    unsigned depth = c->o.srq_per_conn * statics;

    if (depth < c->o.srq_min)
        depth = c->o.srq_min;
    return depth < c->o.srq_max ? depth : c->o.srq_max;
}

static int make_queues(struct ibc_ctx *c)
{
    int statics = 0;

    for (int p = 0; p < c->nprocs; p++)
        statics += ibc_is_static(c, p);
    c->conns_static = (unsigned)statics;
    c->sslots = 2 * c->o.sd > 32 ? 2 * c->o.sd : 32;
    c->scq_size = (int)c->sslots + 8;
    /* With an SRQ the receive CQ starts at the SRQ's depth and grows with it
     * (ibc_srq_grow), so its memory scales like the rest. */
    c->rcq_size = c->use_srq ? (int)srq_depth(c, (unsigned)statics) + 16
                             : (int)(c->o.rd * (unsigned)statics) + 16;
    c->scq = ibv_create_cq(c->dev, c->scq_size, NULL, NULL, 0);
    c->rcq = ibv_create_cq(c->dev, c->rcq_size, NULL, NULL, 0);
    if (!c->scq || !c->rcq)
        return ibc_err("cannot create completion queues (%d, %d entries)", c->scq_size,
                       c->rcq_size);
    if (c->use_srq) {
        unsigned depth = srq_depth(c, (unsigned)statics);
        struct ibv_srq_init_attr sa = {.attr = {.max_wr = depth, .max_sge = 1}};
        if (!(c->srq = ibv_create_srq(c->pd, &sa)))
            return ibc_err("cannot create a shared receive queue of %u", depth);
        c->srq_cap = sa.attr.max_wr;
        if (ibc_srq_grow(c, depth) || ibc_srq_arm(c))
            return -1;
    }
    struct ibc_slot *s;
    if (ibc_slots_alloc(c, c->sslots, &s))
        return -1;
    c->sfree = s;
    c->sfree_n = c->sslots;
    return 0;
}

/* rc: each process exposes one counter per peer that the peer RDMA-writes
 * with the number of receives it has given back. */
static int make_credits(struct ibc_ctx *c)
{
    uint64_t addr;

    c->credit_in = calloc((size_t)c->nprocs, sizeof *c->credit_in);
    c->credit_addr = calloc((size_t)c->nprocs, sizeof *c->credit_addr);
    c->credit_rkey = calloc((size_t)c->nprocs, sizeof *c->credit_rkey);
    if (!c->credit_in || !c->credit_addr || !c->credit_rkey)
        return ibc_err("out of memory");
    c->credit_mr = ibv_reg_mr(c->pd, c->credit_in, (size_t)c->nprocs * sizeof *c->credit_in,
                              IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
    if (!c->credit_mr)
        return ibc_err("cannot register the credit counters");
    addr = (uintptr_t)c->credit_in;
    MPI_Allgather(&addr, 1, MPI_UINT64_T, c->credit_addr, 1, MPI_UINT64_T, c->comm);
    MPI_Allgather(&c->credit_mr->rkey, 1, MPI_UINT32_T, c->credit_rkey, 1, MPI_UINT32_T,
                  c->comm);
    return 0;
}

/* Create the static queue pairs, exchange their numbers with MPI, connect. */
static int static_links(struct ibc_ctx *c)
{
    uint32_t *out = calloc(2 * (size_t)c->nprocs, sizeof *out);
    uint32_t *in = calloc(2 * (size_t)c->nprocs, sizeof *in);
    int rc = -1;

    if (!out || !in) {
        ibc_err("out of memory");
        goto done;
    }
    for (int p = 0; p < c->nprocs; p++) {
        struct ibc_peer *pe = &c->peers[p];
        if (!ibc_is_static(c, p))
            continue;
        if (!(pe->qp = ibc_qp_create(c)))
            goto done;
        pe->is_static = 1;
        pe->psn = (uint32_t)((c->rank * 7919u + (unsigned)p * 104729u) & 0xffffff);
        out[2 * p] = pe->qp->qp_num;
        out[2 * p + 1] = pe->psn;
        if (c->mode == IBC_RC) {        /* n receives on its own queue */
            struct ibc_slot *s;
            if (ibc_slots_alloc(c, c->o.n, &s))
                goto done;
            for (unsigned i = 0; i < c->o.n; i++) {
                s[i].peer = p;
                if (ibc_post_recv(c, &s[i]))
                    goto done;
            }
        }
    }
    MPI_Alltoall(out, 2, MPI_UINT32_T, in, 2, MPI_UINT32_T, c->comm);
    MPI_Allgather(c->gid.raw, 16, MPI_BYTE, c->gids, 16, MPI_BYTE, c->comm);
    for (int p = 0; p < c->nprocs; p++) {
        if (!c->peers[p].is_static)
            continue;
        struct ibc_conninfo r = {.qpn = in[2 * p], .psn = in[2 * p + 1]};
        memcpy(r.gid, c->gids[p].raw, 16);
        if (ibc_qp_connect(c, c->peers[p].qp, c->peers[p].psn, &r))
            goto done;
        c->peers[p].state = C_CONNECTED;
    }
    rc = 0;
done:
    free(out);
    free(in);
    return rc;
}

/* Every rank must get through each step, or all give up together. */
static int all_ok(struct ibc_ctx *c, int rc)
{
    int bad = rc != 0, any;

    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_LOR, c->comm);
    return any ? -1 : 0;
}

int ibc_init(MPI_Comm comm, const struct ibc_opts *o, struct ibc_ctx **out)
{
    struct ibc_ctx *c = calloc(1, sizeof *c);

    *out = NULL;
    if (!c)
        return ibc_err("out of memory");
    MPI_Comm_dup(comm, &c->comm);
    MPI_Comm_rank(c->comm, &c->rank);
    MPI_Comm_size(c->comm, &c->nprocs);
    if (o)
        c->o = *o;
    else if (all_ok(c, ibc_opts_from_env(&c->o)))
        goto fail;
    if (all_ok(c, ibc_dev_open(c)) || ibc_mode_choose(c))
        goto fail;
    c->use_srq = c->mode != IBC_RC;
    c->slot = (sizeof(struct ibc_hdr) + c->o.eager + 63) / 64 * 64;
    c->peers = calloc((size_t)c->nprocs, sizeof *c->peers);
    c->gids = calloc((size_t)c->nprocs, sizeof *c->gids);
    if (all_ok(c, !c->peers || !c->gids ? ibc_err("out of memory") : 0))
        goto fail;
    if (all_ok(c, make_queues(c)))
        goto fail;
    if (c->mode == IBC_RC && all_ok(c, make_credits(c)))
        goto fail;
    if (all_ok(c, static_links(c)))
        goto fail;
    int fl = fcntl(c->dev->async_fd, F_GETFL);
    fcntl(c->dev->async_fd, F_SETFL, fl | O_NONBLOCK);
    MPI_Barrier(c->comm);           /* every static QP is ready to receive */
    c->ready = 1;
    *out = c;
    return 0;
fail:
    ibc_finalize(c);
    return -1;
}

static void free_msgs(struct ibc_ctx *c)
{
    for (int p = 0; c->peers && p < c->nprocs; p++)
        while (c->peers[p].q) {
            struct ibc_msg *m = c->peers[p].q;
            c->peers[p].q = m->next;
            free(m);
        }
    while (c->out_head) {
        struct ibc_out *o = c->out_head;
        c->out_head = o->next;
        free(o);
    }
}

/* Drain our sends, meet everyone (still forwarding), then free it all. */
int ibc_finalize(struct ibc_ctx *c)
{
    int rc = 0;

    if (!c)
        return 0;
    if (c->ready) {
        unsigned busy = 1;
        while (busy && rc == 0) {
            busy = c->out_len;
            for (int p = 0; p < c->nprocs; p++)
                busy += c->peers[p].outstanding;
            if (busy)
                rc = ibc_wait_step(c);
        }
        if (rc == 0)
            rc = ibc_barrier(c);
    }
    for (int p = 0; c->peers && p < c->nprocs; p++)
        if (c->peers[p].qp)
            ibv_destroy_qp(c->peers[p].qp);
    if (c->srq)
        ibv_destroy_srq(c->srq);
    if (c->scq)
        ibv_destroy_cq(c->scq);
    if (c->rcq)
        ibv_destroy_cq(c->rcq);
    while (c->chunks) {
        struct ibc_chunk *ch = c->chunks;
        c->chunks = ch->next;
        void *mem = ch->mr->addr;
        ibv_dereg_mr(ch->mr);
        free(mem);
        free(ch->slots);
        free(ch);
    }
    if (c->credit_mr)
        ibv_dereg_mr(c->credit_mr);
    free_msgs(c);
    free(c->credit_in);
    free(c->credit_addr);
    free(c->credit_rkey);
    free(c->peers);
    free(c->gids);
    ibc_dev_close(c);
    MPI_Comm_free(&c->comm);
    free(c);
    return rc;
}
