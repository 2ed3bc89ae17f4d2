// SPDX-License-Identifier: BSD-3-Clause
/* The blocking send/receive calls: eager through pre-posted buffers up to
 * the threshold, RDMA-write rendezvous (RTS, CTS, write, FIN) above it. */
#include "ibc_int.h"

#include <stdlib.h>
#include <string.h>

static int check_rank(const struct ibc_ctx *c, int r, const char *what)
{
    if (!c)
        return ibc_err("%s: no context", what);
    if (r < 0 || r >= c->nprocs || r == c->rank)
        return ibc_err("%s: rank %d is not another process of 0..%d", what, r, c->nprocs - 1);
    return 0;
}

/* Keep the outbox bounded: a sender that outruns its receivers waits here. */
static int outbox_room(struct ibc_ctx *c)
{
    while (c->out_len > 4 * c->sslots)
        if (ibc_wait_step(c))
            return -1;
    return 0;
}

static int send_eager(struct ibc_ctx *c, int dst, const void *buf, size_t len)
{
    struct ibc_peer *p = &c->peers[dst];
    struct ibc_hdr h = {.type = T_DATA, .src = (uint32_t)c->rank, .dst = (uint32_t)dst,
                        .len = len};

    if (p->state != C_CONNECTED) {
        if (c->o.proxy && c->mode == IBC_GROUP) {
            /* Through the static links while the dedicated one is made. */
            if (ibc_conn_start(c, dst))
                return -1;
            c->st.proxied++;
        } else if (ibc_wait_connected(c, dst)) {
            return -1;
        }
    }
    h.seq = p->send_seq++;
    c->st.eager_sent++;
    if (ibc_queue(c, ibc_route(c, dst), &h, buf, len))
        return -1;
    return outbox_room(c);
}

static int post_write(struct ibc_ctx *c, int dst, struct ibv_mr *mr, size_t len)
{
    struct ibc_peer *p = &c->peers[dst];
    struct ibv_sge sge = {.addr = (uintptr_t)mr->addr, .length = (uint32_t)len, .lkey = mr->lkey};
    struct ibv_send_wr wr = {.wr_id = IBC_RNDV_WRID, .sg_list = &sge, .num_sge = 1,
                             .opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
                             .wr.rdma = {.remote_addr = p->cts_addr, .rkey = p->cts_rkey}},
                       *bad;

    while (p->outstanding >= c->sd)
        if (ibc_wait_step(c))
            return -1;
    c->rndv_peer = dst;
    c->rndv_write_done = 0;
    if (ibv_post_send(p->qp, &wr, &bad))
        return ibc_err("cannot post the RDMA write to rank %d", dst);
    p->outstanding++;
    return 0;
}

static int send_rndv(struct ibc_ctx *c, int dst, const void *buf, size_t len)
{
    struct ibc_peer *p = &c->peers[dst];
    struct ibv_mr *mr;
    int rc = -1;

    if (len > UINT32_MAX)
        return ibc_err("send of %zu bytes: above the 4 GiB limit of one RDMA write", len);
    if (ibc_wait_connected(c, dst))
        return -1;
    mr = ibv_reg_mr(c->pd, (void *)buf, len, IBV_ACCESS_LOCAL_WRITE);
    if (!mr)
        return ibc_err("cannot register the %zu-byte send buffer", len);
    struct ibc_hdr h = {.type = T_RTS, .src = (uint32_t)c->rank, .dst = (uint32_t)dst,
                        .seq = p->send_seq++, .len = len};
    p->cts_seen = 0;
    if (ibc_queue(c, dst, &h, NULL, 0))
        goto out;
    while (!(p->cts_seen && p->cts_seq == h.seq))
        if (ibc_wait_step(c))
            goto out;
    p->cts_seen = 0;
    if (post_write(c, dst, mr, len))
        goto out;
    h.type = T_FIN;
    if (ibc_queue(c, dst, &h, NULL, 0))
        goto out;
    while (!c->rndv_write_done)
        if (ibc_wait_step(c))
            goto out;
    c->st.rndv_sent++;
    rc = 0;
out:
    ibv_dereg_mr(mr);
    return rc;
}

int ibc_send(struct ibc_ctx *c, int dst, const void *buf, size_t len)
{
    if (check_rank(c, dst, "send"))
        return -1;
    if (len && !buf)
        return ibc_err("send: NULL buffer for %zu bytes", len);
    return len <= c->o.eager ? send_eager(c, dst, buf, len) : send_rndv(c, dst, buf, len);
}

static int recv_rndv(struct ibc_ctx *c, int src, struct ibc_msg *m, void *buf)
{
    struct ibc_peer *p = &c->peers[src];
    struct ibv_mr *mr = ibv_reg_mr(c->pd, buf, m->len,
                                   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
    int rc = -1;

    if (!mr)
        return ibc_err("cannot register the %llu-byte receive buffer",
                       (unsigned long long)m->len);
    struct ibc_hdr h = {.type = T_CTS, .src = (uint32_t)c->rank, .dst = (uint32_t)src,
                        .seq = m->seq, .addr = (uintptr_t)buf, .rkey = mr->rkey};
    if (ibc_wait_connected(c, src) || ibc_queue(c, src, &h, NULL, 0))
        goto out;
    while (p->rndv_fin_seq != (uint64_t)m->seq + 1)
        if (ibc_wait_step(c))
            goto out;
    rc = 0;
out:
    ibv_dereg_mr(mr);
    return rc;
}

int ibc_recv(struct ibc_ctx *c, int src, void *buf, size_t cap, size_t *len)
{
    if (check_rank(c, src, "recv"))
        return -1;
    struct ibc_peer *p = &c->peers[src];
    struct ibc_msg *m;

    while (!(m = p->q) || m->seq != p->recv_seq)
        if (ibc_wait_step(c))
            return -1;
    if (m->len > cap)
        return ibc_err("recv: %llu-byte message from rank %d does not fit in %zu bytes",
                       (unsigned long long)m->len, src, cap);
    if (m->len && !buf)
        return ibc_err("recv: NULL buffer");
    p->q = m->next;
    p->recv_seq++;
    int rc = 0;
    if (m->type == T_DATA)
        memcpy(buf, m->data, m->len);
    else
        rc = recv_rndv(c, src, m, buf);
    if (len)
        *len = m->len;
    free(m);
    return rc;
}

int ibc_barrier(struct ibc_ctx *c)
{
    MPI_Request req;
    int done = 0;

    MPI_Ibarrier(c->comm, &req);
    while (!done) {
        if (ibc_wait_step(c))
            return -1;
        MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    }
    return 0;
}

int ibc_connected(struct ibc_ctx *c, int peer)
{
    return c && peer >= 0 && peer < c->nprocs && c->peers[peer].state == C_CONNECTED;
}
