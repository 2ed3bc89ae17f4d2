// SPDX-License-Identifier: BSD-3-Clause
/* Queue pairs, the shared receive queue and registered buffer slots. */
#include "ibc_int.h"

#include <stdlib.h>
#include <string.h>

/* RC queue pair on the process's CQs; attached to the SRQ when there is one,
 * else with its own receive queue of depth rd. */
struct ibv_qp *ibc_qp_create(struct ibc_ctx *c)
{
    struct ibv_qp_init_attr ia = {
        .send_cq = c->scq, .recv_cq = c->rcq, .srq = c->srq, .qp_type = IBV_QPT_RC,
        .cap = {.max_send_wr = c->o.sd, .max_recv_wr = c->srq ? 0 : c->o.rd,
                .max_send_sge = 1, .max_recv_sge = 1},
    };
    struct ibv_qp_attr a = {
        .qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = c->port,
        .qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE,
    };
    struct ibv_qp *qp = ibv_create_qp(c->pd, &ia);

    if (!qp) {
        ibc_err("cannot create a queue pair on %s", c->dev_name);
        return NULL;
    }
    c->sd = ia.cap.max_send_wr;             /* granted, maybe rounded up */
    c->rd = ia.cap.max_recv_wr;
    if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
                      IBV_QP_ACCESS_FLAGS)) {
        ibc_err("cannot move a queue pair to INIT");
        ibv_destroy_qp(qp);
        return NULL;
    }
    return qp;
}

int ibc_qp_connect(struct ibc_ctx *c, struct ibv_qp *qp, uint32_t psn,
                   const struct ibc_conninfo *r)
{
    struct ibv_qp_attr a = {
        .qp_state = IBV_QPS_RTR, .path_mtu = c->mtu, .dest_qp_num = r->qpn,
        .rq_psn = r->psn, .max_dest_rd_atomic = 1, .min_rnr_timer = 1,
        .ah_attr = {.is_global = 1, .port_num = c->port,
                    .grh = {.sgid_index = c->gid_index, .hop_limit = 64}},
    };

    memcpy(a.ah_attr.grh.dgid.raw, r->gid, 16);
    if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                      IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
        return ibc_err("cannot move a queue pair to RTR (remote qpn %u)", r->qpn);
    memset(&a, 0, sizeof a);
    a.qp_state = IBV_QPS_RTS;
    a.timeout = 14;
    a.retry_cnt = 7;
    a.rnr_retry = 7;            /* retry forever while a receive queue is dry */
    a.sq_psn = psn;
    a.max_rd_atomic = 1;
    if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                      IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC))
        return ibc_err("cannot move a queue pair to RTS");
    return 0;
}

/* `count` slots of c->slot bytes in one registered chunk, chained by next. */
int ibc_slots_alloc(struct ibc_ctx *c, unsigned count, struct ibc_slot **out)
{
    struct ibc_chunk *ch = calloc(1, sizeof *ch);
    struct ibc_slot *s = calloc(count, sizeof *s);
    char *mem = NULL;

    if (!ch || !s || posix_memalign((void **)&mem, 4096, c->slot * count))
        goto fail;
    ch->mr = ibv_reg_mr(c->pd, mem, c->slot * count, IBV_ACCESS_LOCAL_WRITE);
    if (!ch->mr)
        goto fail;
    ch->bytes = c->slot * count;
    ch->slots = s;
    ch->next = c->chunks;
    c->chunks = ch;
    for (unsigned i = 0; i < count; i++) {
        s[i].buf = mem + i * c->slot;
        s[i].lkey = ch->mr->lkey;
        s[i].peer = -1;
        s[i].next = i + 1 < count ? &s[i + 1] : NULL;
    }
    *out = s;
    return 0;
fail:
    free(mem);
    free(s);
    free(ch);
    return ibc_err("cannot allocate and register %u buffers of %zu bytes", count, c->slot);
}

int ibc_post_recv(struct ibc_ctx *c, struct ibc_slot *s)
{
    struct ibv_sge sge = {.addr = (uintptr_t)s->buf, .length = c->slot, .lkey = s->lkey};
    struct ibv_recv_wr wr = {.wr_id = (uintptr_t)s, .sg_list = &sge, .num_sge = 1}, *bad;
    int rc = c->srq ? ibv_post_srq_recv(c->srq, &wr, &bad)
                    : ibv_post_recv(c->peers[s->peer].qp, &wr, &bad);

    return rc ? ibc_err("cannot post a receive (%s)", strerror(rc)) : 0;
}

/* Post `more` receives to the SRQ, growing its capacity when needed. */
int ibc_srq_grow(struct ibc_ctx *c, unsigned more)
{
    struct ibc_slot *s;

    if (c->srq_posted + more > c->srq_cap) {
        struct ibv_srq_attr a = {.max_wr = c->srq_posted + more};
        if (ibv_modify_srq(c->srq, &a, IBV_SRQ_MAX_WR))
            return ibc_err("cannot resize the SRQ to %u", a.max_wr);
        struct ibv_srq_attr q;
        c->srq_cap = ibv_query_srq(c->srq, &q) ? a.max_wr : q.max_wr;
    }
    /* Every posted receive may complete at once: keep room in the CQ. */
    if ((int)(c->srq_posted + more) + 16 > c->rcq->cqe &&
        ibv_resize_cq(c->rcq, (int)(c->srq_posted + more) + 16))
        return ibc_err("cannot resize the receive CQ to %u", c->srq_posted + more + 16);
    if (ibc_slots_alloc(c, more, &s))
        return -1;
    for (unsigned i = 0; i < more; i++)
        if (ibc_post_recv(c, &s[i]))
            return -1;
    c->srq_posted += more;
    return 0;
}

/* Ask for IBV_EVENT_SRQ_LIMIT_REACHED when fewer than a quarter remain. */
int ibc_srq_arm(struct ibc_ctx *c)
{
    struct ibv_srq_attr a = {.srq_limit = c->srq_posted / 4 ? c->srq_posted / 4 : 1};

    if (ibv_modify_srq(c->srq, &a, IBV_SRQ_LIMIT))
        return ibc_err("cannot arm the SRQ limit");
    c->srq_limit = a.srq_limit;
    return 0;
}
