// SPDX-License-Identifier: BSD-3-Clause
/* The protocol engine: routing over static links, the outbox, completion
 * handling, forwarding, and connections made on demand. */
#include "ibc_int.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

/* ---- routing (group mode: static links inside groups and across same-index
 * ranks; other modes connect everyone at start-up) ---- */

int ibc_is_static(const struct ibc_ctx *c, int p)
{
    unsigned g = c->o.group;

    if (p == c->rank)
        return 0;
    if (c->mode != IBC_GROUP)
        return 1;
    return (unsigned)p / g == (unsigned)c->rank / g || (unsigned)p % g == (unsigned)c->rank % g;
}

/* Next hop towards dst: dst itself when connected, else the member of my group
 * with dst's index (or, when my group is the short last one, the member of
 * dst's group with my index); both are static links and so is the next hop. */
int ibc_route(const struct ibc_ctx *c, int dst)
{
    unsigned g = c->o.group;

    if (c->peers[dst].state == C_CONNECTED || ibc_is_static(c, dst))
        return dst;
    unsigned hop = (unsigned)c->rank / g * g + (unsigned)dst % g;
    if (hop < (unsigned)c->nprocs)
        return (int)hop;
    return (int)((unsigned)dst / g * g + (unsigned)c->rank % g);
}

/* ---- outbox ---- */

int ibc_queue(struct ibc_ctx *c, int via, const struct ibc_hdr *h, const void *payload,
              size_t len)
{
    struct ibc_out *o = malloc(sizeof *o + sizeof *h + len);

    if (!o)
        return ibc_err("out of memory queueing %zu bytes", len);
    o->next = NULL;
    o->via = via;
    o->credit_write = 0;
    o->stalled = 0;
    o->len = sizeof *h + len;
    memcpy(o->msg, h, sizeof *h);
    if (len)
        memcpy(o->msg + sizeof *h, payload, len);
    if (c->out_tail)
        c->out_tail->next = o;
    else
        c->out_head = o;
    c->out_tail = o;
    c->out_len++;
    return ibc_flush(c);
}

static int queue_credit(struct ibc_ctx *c, int peer)
{
    struct ibc_out *o = malloc(sizeof *o + sizeof(uint64_t));

    if (!o)
        return ibc_err("out of memory");
    *o = (struct ibc_out){.via = peer, .credit_write = 1, .len = sizeof(uint64_t)};
    memcpy(o->msg, &c->peers[peer].freed_local, sizeof(uint64_t));
    c->peers[peer].freed_reported = c->peers[peer].freed_local;
    /* Credits go first: they are what unblocks the other side. */
    o->next = c->out_head;
    c->out_head = o;
    if (!c->out_tail)
        c->out_tail = o;
    c->out_len++;
    return 0;
}

/* Whether o may be posted now; rc eager sends also need a credit. */
static int can_post(struct ibc_ctx *c, struct ibc_out *o)
{
    struct ibc_peer *p = &c->peers[o->via];

    if (p->state != C_CONNECTED && p->state != C_ACCEPTED)
        return 0;
    if (p->outstanding >= c->sd)
        return 0;
    /* credit_in is written by the peer's RDMA: read it through volatile. */
    if (c->mode == IBC_RC && !o->credit_write &&
        p->sent - ((volatile uint64_t *)c->credit_in)[o->via] >= c->o.n) {
        c->st.credit_stalls += !o->stalled;
        o->stalled = 1;
        return 0;
    }
    return 1;
}

static int post(struct ibc_ctx *c, struct ibc_out *o)
{
    struct ibc_peer *p = &c->peers[o->via];
    struct ibc_slot *s = c->sfree;
    struct ibv_sge sge = {.addr = (uintptr_t)s->buf, .length = (uint32_t)o->len, .lkey = s->lkey};
    struct ibv_send_wr wr = {.wr_id = (uintptr_t)s, .sg_list = &sge, .num_sge = 1,
                             .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED}, *bad;

    memcpy(s->buf, o->msg, o->len);
    if (o->credit_write) {
        wr.opcode = IBV_WR_RDMA_WRITE;
        wr.wr.rdma.remote_addr = c->credit_addr[o->via] + (uint64_t)c->rank * sizeof(uint64_t);
        wr.wr.rdma.rkey = c->credit_rkey[o->via];
    }
    int rc = ibv_post_send(p->qp, &wr, &bad);
    if (rc)
        return ibc_err("cannot post a send to rank %d (%s)", o->via, strerror(rc));
    c->sfree = s->next;
    c->sfree_n--;
    s->peer = o->via;
    p->outstanding++;
    if (!o->credit_write && c->mode == IBC_RC)
        p->sent++;
    return 0;
}

/* Post what can go now, keeping each connection's order. */
int ibc_flush(struct ibc_ctx *c)
{
    struct ibc_out **link = &c->out_head, *o, *prev = NULL;

    c->pass++;
    while ((o = *link) && c->sfree) {
        struct ibc_peer *p = &c->peers[o->via];
        if (p->blocked_pass == c->pass || !can_post(c, o)) {
            p->blocked_pass = c->pass;
            prev = o;
            link = &o->next;
            continue;
        }
        if (post(c, o))
            return -1;
        *link = o->next;
        if (c->out_tail == o)
            c->out_tail = prev;
        c->out_len--;
        free(o);
    }
    return 0;
}

/* ---- receive side ---- */

static int deliver(struct ibc_ctx *c, const struct ibc_hdr *h, const char *payload)
{
    struct ibc_peer *p = &c->peers[h->src];
    size_t n = h->type == T_DATA ? h->len : 0;
    struct ibc_msg *m = malloc(sizeof *m + n), **at = &p->q;

    if (!m)
        return ibc_err("out of memory for a %zu-byte message", n);
    m->type = h->type;
    m->seq = h->seq;
    m->len = h->len;
    memcpy(m->data, payload, n);
    /* Proxied and direct messages may cross: keep the queue in seq order. */
    while (*at && (int32_t)((*at)->seq - m->seq) < 0)
        at = &(*at)->next;
    m->next = *at;
    *at = m;
    return 0;
}

static int srq_grow_by(struct ibc_ctx *c, unsigned want)
{
    unsigned room = c->o.srq_max > c->srq_posted ? c->o.srq_max - c->srq_posted : 0;

    return want && room ? ibc_srq_grow(c, want < room ? want : room) : 0;
}

/* A dedicated connection is up: count it and give the SRQ its share. */
static int conn_established(struct ibc_ctx *c)
{
    c->conns_dynamic++;
    return c->srq ? srq_grow_by(c, c->o.srq_per_conn) : 0;
}

static int on_conn_req(struct ibc_ctx *c, const struct ibc_hdr *h, const struct ibc_conninfo *r)
{
    struct ibc_peer *p = &c->peers[h->src];
    struct ibc_conninfo mine;

    if (p->state == C_CONNECTED || p->state == C_ACCEPTED)
        return 0;                       /* already done */
    if (p->state == C_CONNECTING && c->rank < (int)h->src)
        return 0;                       /* both asked: the lower rank's request wins */
    if (p->state == C_NONE) {
        if (!(p->qp = ibc_qp_create(c)))
            return -1;
        p->psn = (uint32_t)(lrand48() & 0xffffff);
    }
    if (ibc_qp_connect(c, p->qp, p->psn, r))
        return -1;
    p->state = C_ACCEPTED;              /* sends wait for READY over the new QP */
    mine = (struct ibc_conninfo){.qpn = p->qp->qp_num, .psn = p->psn};
    memcpy(mine.gid, c->gid.raw, 16);
    struct ibc_hdr rep = {.type = T_CONN_REP, .src = (uint32_t)c->rank, .dst = h->src};
    if (conn_established(c))
        return -1;
    return ibc_queue(c, ibc_route(c, (int)h->src), &rep, &mine, sizeof mine);
}

static int on_conn_rep(struct ibc_ctx *c, const struct ibc_hdr *h, const struct ibc_conninfo *r)
{
    struct ibc_peer *p = &c->peers[h->src];

    if (p->state != C_CONNECTING)
        return ibc_err("unexpected connection reply from rank %u", h->src);
    if (ibc_qp_connect(c, p->qp, p->psn, r))
        return -1;
    p->state = C_CONNECTED;
    if (conn_established(c))
        return -1;
    struct ibc_hdr ready = {.type = T_READY, .src = (uint32_t)c->rank, .dst = h->src};
    return ibc_queue(c, (int)h->src, &ready, NULL, 0);
}

/* Reject anything malformed before acting on it. */
static int check_hdr(const struct ibc_ctx *c, const struct ibc_hdr *h, uint32_t bytes)
{
    if (bytes < sizeof *h || h->type < T_DATA || h->type >= T_TYPE_END)
        return ibc_err("malformed message (%u bytes, type %u)", bytes, bytes ? h->type : 0);
    if (h->src >= (uint32_t)c->nprocs || h->dst >= (uint32_t)c->nprocs)
        return ibc_err("message with ranks %u->%u outside 0..%d", h->src, h->dst, c->nprocs - 1);
    size_t body = bytes - sizeof *h;
    if (h->type == T_DATA && (h->len != body || h->len > c->o.eager))
        return ibc_err("message from %u: length %llu does not match %zu received", h->src,
                       (unsigned long long)h->len, body);
    if ((h->type == T_CONN_REQ || h->type == T_CONN_REP) && body != sizeof(struct ibc_conninfo))
        return ibc_err("connection message from %u has %zu bytes", h->src, body);
    return 0;
}

static int handle(struct ibc_ctx *c, const struct ibc_hdr *h, uint32_t bytes)
{
    const char *payload = (const char *)(h + 1);

    if (check_hdr(c, h, bytes))
        return -1;
    struct ibc_peer *p = &c->peers[h->src];
    if (h->dst != (uint32_t)c->rank) {  /* not mine: pass it on */
        c->st.forwarded++;
        return ibc_queue(c, ibc_route(c, (int)h->dst), h, payload, bytes - sizeof *h);
    }
    switch (h->type) {
    case T_DATA:
    case T_RTS:
        return deliver(c, h, payload);
    case T_CTS:
        p->cts_seen = 1;
        p->cts_addr = h->addr;
        p->cts_rkey = h->rkey;
        p->cts_seq = h->seq;
        return 0;
    case T_FIN:
        p->rndv_fin_seq = (uint64_t)h->seq + 1;
        return 0;
    case T_CONN_REQ:
        return on_conn_req(c, h, (const struct ibc_conninfo *)payload);
    case T_CONN_REP:
        return on_conn_rep(c, h, (const struct ibc_conninfo *)payload);
    case T_READY:
        if (p->state == C_ACCEPTED)
            p->state = C_CONNECTED;
        return 0;
    }
    return 0;
}

static int recv_done(struct ibc_ctx *c, const struct ibv_wc *wc)
{
    struct ibc_slot *s = (struct ibc_slot *)(uintptr_t)wc->wr_id;

    if (wc->status != IBV_WC_SUCCESS)
        return ibc_err("receive failed: %s", ibv_wc_status_str(wc->status));
    int rc = handle(c, (const struct ibc_hdr *)s->buf, wc->byte_len);
    /* The buffer goes straight back: the message was copied or consumed. */
    if (ibc_post_recv(c, s))
        return -1;
    if (c->mode == IBC_RC) {
        struct ibc_peer *p = &c->peers[s->peer];
        p->freed_local++;
        unsigned half = c->o.n / 2 ? c->o.n / 2 : 1;
        if (p->freed_local - p->freed_reported >= half && queue_credit(c, s->peer))
            return -1;
    }
    return rc;
}

static int send_done(struct ibc_ctx *c, const struct ibv_wc *wc)
{
    if (wc->wr_id == IBC_RNDV_WRID) {
        c->peers[c->rndv_peer].outstanding--;
        c->rndv_write_done = 1;
    } else {
        struct ibc_slot *s = (struct ibc_slot *)(uintptr_t)wc->wr_id;
        c->peers[s->peer].outstanding--;
        s->next = c->sfree;
        c->sfree = s;
        c->sfree_n++;
    }
    if (wc->status != IBV_WC_SUCCESS)
        return ibc_err("send failed: %s", ibv_wc_status_str(wc->status));
    return 0;
}

/* SRQ low-water events: grow the pool (up to srq_max) and re-arm. */
static int async_events(struct ibc_ctx *c)
{
    struct ibv_async_event ev;

    while (ibv_get_async_event(c->dev, &ev) == 0) {
        enum ibv_event_type t = ev.event_type;
        ibv_ack_async_event(&ev);
        if (t == IBV_EVENT_SRQ_LIMIT_REACHED) {
            unsigned before = c->srq_posted;
            c->st.srq_limit_events++;
            if (srq_grow_by(c, before / 2 > 16 ? before / 2 : 16))
                return -1;
            if (c->srq_posted > before) {
                c->st.srq_refills++;
                if (ibc_srq_arm(c))
                    return -1;
            }
        } else if (t == IBV_EVENT_QP_FATAL || t == IBV_EVENT_CQ_ERR ||
                   t == IBV_EVENT_DEVICE_FATAL) {
            return ibc_err("device error: %s", ibv_event_type_str(t));
        }
    }
    return 0;
}

/* One round of progress: completions, SRQ events, the outbox. Returns the
 * number of completions handled, or -1. */
typedef int (*wc_handler)(struct ibc_ctx *c, const struct ibv_wc *wc);

/* Handle every completion waiting on cq; adds their number to *done. */
static int drain(struct ibc_ctx *c, struct ibv_cq *cq, wc_handler fn, int *done)
{
    struct ibv_wc wc[16];
    int n;

    while ((n = ibv_poll_cq(cq, 16, wc)) > 0)
        for (int i = 0; i < n; i++, (*done)++)
            if (fn(c, &wc[i]))
                return -1;
    return n < 0 ? ibc_err("polling a completion queue failed") : 0;
}

static int progress_round(struct ibc_ctx *c)
{
    int done = 0;

    if (drain(c, c->scq, send_done, &done) || drain(c, c->rcq, recv_done, &done))
        return -1;
    if (c->srq && (c->async_tick++ & 31) == 0 && async_events(c))
        return -1;
    if (c->out_head && ibc_flush(c))
        return -1;
    return done;
}

int ibc_progress(struct ibc_ctx *c)
{
    return progress_round(c) < 0 ? -1 : 0;
}

/* A step of a blocking wait: when nothing happened, give the CPU away, since
 * the peer we wait for (or soft-RoCE's kernel work) may need it. */
int ibc_wait_step(struct ibc_ctx *c)
{
    int n = progress_round(c);

    if (n == 0)
        sched_yield();
    return n < 0 ? -1 : 0;
}

/* ---- connections on demand ---- */

int ibc_conn_start(struct ibc_ctx *c, int peer)
{
    struct ibc_peer *p = &c->peers[peer];
    struct ibc_conninfo mine;

    if (p->state != C_NONE)
        return 0;
    if (!(p->qp = ibc_qp_create(c)))
        return -1;
    p->psn = (uint32_t)(lrand48() & 0xffffff);
    p->state = C_CONNECTING;
    mine = (struct ibc_conninfo){.qpn = p->qp->qp_num, .psn = p->psn};
    memcpy(mine.gid, c->gid.raw, 16);
    struct ibc_hdr req = {.type = T_CONN_REQ, .src = (uint32_t)c->rank, .dst = (uint32_t)peer};
    return ibc_queue(c, ibc_route(c, peer), &req, &mine, sizeof mine);
}

int ibc_wait_connected(struct ibc_ctx *c, int peer)
{
    if (ibc_conn_start(c, peer))
        return -1;
    while (c->peers[peer].state != C_CONNECTED)
        if (ibc_wait_step(c))
            return -1;
    return 0;
}
