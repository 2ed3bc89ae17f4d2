// SPDX-License-Identifier: BSD-3-Clause
/*
 * mnode.c - control messages (CMP), the management node pair and the
 * initialization sequence.
 *
 * Hosts 0 and 1 are the management nodes (MNodes); host 0 is primary.
 * Every host is also a compute node (CNode). The primary keeps the host
 * table (HInfoMsg) and the GP binding table (MBInfoMsg), copies every
 * update to the backup, and sends it a heartbeat. When the backup hears
 * nothing for TNBC_PDBP_FAILOVER_MS it takes over and tells every host
 * (DAMsg TAKEOVER); a CNode whose request times out also turns to the
 * other MNode by itself. Open MPI cannot outlive a dead rank, so a failure
 * is emulated by stopping the primary's management service
 * (pdbp_test_fail_mnode); its compute side keeps running.
 *
 * Init sequence: each CNode sends HInfoMsg to the primary; once all are in
 * and agree on the pool settings, the primary answers DAMsg READY to all.
 */
#include "rt.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define READY_REQID 1

double pdbp_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

void pdbp_deadline(struct timespec *ts, int ms)
{
    clock_gettime(CLOCK_REALTIME, ts);
    if (ms < 0) {
        ts->tv_sec += 365L * 24 * 3600;          /* "forever" */
        return;
    }
    ts->tv_sec += ms / 1000;
    ts->tv_nsec += (long)(ms % 1000) * 1000000L;
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
}

int pdbp_ctrl_send(int dest, const void *buf, size_t n)
{
    return MPI_Send(buf, (int)n, MPI_BYTE, dest, PDBP_TAG_CTRL, pdbp_rt.comm)
                   == MPI_SUCCESS ? PDBP_OK : PDBP_E_MPI;
}

uint32_t pdbp_new_reqid(void)
{
    return __atomic_add_fetch(&pdbp_rt.next_reqid, 1, __ATOMIC_RELAXED);
}

static struct pdbp_pend *pend_find(uint32_t reqid)
{
    for (int i = 0; i < PDBP_NPEND; i++)
        if (pdbp_rt.pend[i].reqid == reqid)
            return &pdbp_rt.pend[i];
    return NULL;
}

/* Send a request and wait for the DAMsg with the same reqid. */
int pdbp_ctrl_call(int dest, const void *buf, size_t n, uint32_t reqid,
                   int timeout_ms, int *status, int *value)
{
    struct pdbp_rt *rt = &pdbp_rt;
    pthread_mutex_lock(&rt->mu);
    struct pdbp_pend *p = pend_find(reqid);
    if (!p)
        p = pend_find(0);
    if (!p) {
        pthread_mutex_unlock(&rt->mu);
        return PDBP_E_NOMEM;
    }
    *p = (struct pdbp_pend){ .reqid = reqid };
    pthread_mutex_unlock(&rt->mu);
    int rc = buf ? pdbp_ctrl_send(dest, buf, n) : PDBP_OK;
    struct timespec dl;
    pdbp_deadline(&dl, timeout_ms);
    pthread_mutex_lock(&rt->mu);
    while (rc == PDBP_OK && !p->done)
        if (pthread_cond_timedwait(&rt->cv_ctrl, &rt->mu, &dl) == ETIMEDOUT)
            rc = PDBP_E_TIMEOUT;
    if (p->done) {
        rc = PDBP_OK;
        *status = p->status;
        *value = p->value;
    }
    p->reqid = 0;
    pthread_mutex_unlock(&rt->mu);
    return rc;
}

/* A request to the management node, turning to the other one when the
 * current one does not answer. buf is re-encoded by the caller's reqid. */
int pdbp_mnode_call(uint8_t *buf, size_t n, uint32_t reqid, int *status,
                    int *value)
{
    struct pdbp_rt *rt = &pdbp_rt;
    for (int tries = 0; tries < 2; tries++) {
        int m = __atomic_load_n(&rt->mnode, __ATOMIC_ACQUIRE);
        int rc = pdbp_ctrl_call(m, buf, n, reqid, (int)rt->cfg.req_timeout_ms,
                                status, value);
        if (rc != PDBP_E_TIMEOUT || rt->nhosts < 2)
            return rc;
        int other = m == 0 ? 1 : 0;
        fprintf(stderr, "pdbp: host %d: management node %d does not answer; "
                "turning to host %d\n", rt->host, m, other);
        __atomic_compare_exchange_n(&rt->mnode, &m, other, 0,
                                    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
    }
    return PDBP_E_TIMEOUT;
}

/* ---- management node side ---- */

static int is_active_mnode(void)
{
    struct pdbp_rt *rt = &pdbp_rt;
    return rt->host == __atomic_load_n(&rt->mnode, __ATOMIC_ACQUIRE) && !rt->mnode_failed;
}

static struct pdbp_name *name_find(const char *name)
{
    for (int i = 0; i < pdbp_rt.nnames; i++)
        if (!strcmp(pdbp_rt.names[i].name, name))
            return &pdbp_rt.names[i];
    return NULL;
}

static void answer(int dest, uint32_t reqid, uint16_t op, int status, int value)
{
    uint8_t b[PDBP_CTRL_MAX];
    struct pdbp_damsg da = { .reqid = reqid, .op = op, .host = (uint16_t)pdbp_rt.host,
                             .status = status, .value = value };
    pdbp_ctrl_send(dest, b, pdbp_enc_da(b, &da));
}

/* Apply a binding update to this MNode's table (caller holds mu). */
static int mb_apply(const struct pdbp_mbinfomsg *mb)
{
    struct pdbp_rt *rt = &pdbp_rt;
    struct pdbp_name *e = name_find(mb->name);
    switch (mb->op) {
    case PDBP_MB_REGISTER:
        if (e)
            return e->gp == mb->gp ? PDBP_OK : PDBP_E_ARG; /* name taken */
        if (rt->nnames == rt->names_cap) {
            int cap = rt->names_cap ? 2 * rt->names_cap : 64;
            struct pdbp_name *nn = realloc(rt->names, cap * sizeof(*nn));
            if (!nn)
                return PDBP_E_NOMEM;
            rt->names = nn;
            rt->names_cap = cap;
        }
        e = &rt->names[rt->nnames++];
        memcpy(e->name, mb->name, sizeof(e->name));
        e->gp = mb->gp;
        e->pipe = -1;
        return PDBP_OK;
    case PDBP_MB_FREE:
        if (e && e->gp == mb->gp)
            *e = rt->names[--rt->nnames];
        return PDBP_OK;
    default: /* BIND, UNBIND */
        if (e && e->gp == mb->gp)
            e->pipe = mb->op == PDBP_MB_BIND ? mb->pipe : -1;
        return PDBP_OK;
    }
}

static void on_mbinfo(const struct pdbp_mbinfomsg *mb)
{
    struct pdbp_rt *rt = &pdbp_rt;
    if (rt->host > 1 || rt->mnode_failed)
        return;                          /* not a (living) management node */
    pthread_mutex_lock(&rt->mu);
    int rc = mb_apply(mb);
    int active = is_active_mnode();
    pthread_mutex_unlock(&rt->mu);
    if (!active)
        return;                          /* a copy from the primary */
    if (rt->host == 0 && rt->nhosts > 1) {
        /* replicate to the backup, without asking it to answer */
        uint8_t b[PDBP_CTRL_MAX];
        struct pdbp_mbinfomsg copy = *mb;
        copy.reqid = 0;
        pdbp_ctrl_send(1, b, pdbp_enc_mbinfo(b, &copy));
    }
    if (mb->reqid && mb->host < rt->nhosts)
        answer(mb->host, mb->reqid, PDBP_DA_ANSWER, rc, mb->gp);
}

static void on_lookup(const struct pdbp_urmsg *ur)
{
    struct pdbp_rt *rt = &pdbp_rt;
    pthread_mutex_lock(&rt->mu);
    int active = is_active_mnode();
    struct pdbp_name *e = active ? name_find(ur->name) : NULL;
    int gp = e ? e->gp : -1;
    pthread_mutex_unlock(&rt->mu);
    if (!active || ur->host >= rt->nhosts)
        return;                          /* a dead MNode stays silent */
    answer(ur->host, ur->reqid, PDBP_DA_ANSWER, e ? PDBP_OK : PDBP_E_NOTFOUND, gp);
}

/* Collect host information; the primary answers READY when all are in. */
static void on_hinfo(const struct pdbp_hinfomsg *hi)
{
    struct pdbp_rt *rt = &pdbp_rt;
    if (rt->host > 1 || hi->nhosts != rt->nhosts)
        return;
    pthread_mutex_lock(&rt->mu);
    if (!rt->hseen[hi->host]) {
        rt->hseen[hi->host] = 1;
        rt->nhinfo++;
    }
    rt->hinfo[hi->host] = *hi;
    int all = rt->nhinfo == rt->nhosts && rt->host == 0;
    pthread_mutex_unlock(&rt->mu);
    if (rt->host == 0 && rt->nhosts > 1) {
        uint8_t b[PDBP_CTRL_MAX];
        pdbp_ctrl_send(1, b, pdbp_enc_hinfo(b, hi));   /* copy to the backup */
    }
    if (!all)
        return;
    int status = PDBP_OK, bad = -1;
    for (int h = 0; h < rt->nhosts; h++) {
        const struct pdbp_hinfomsg *x = &rt->hinfo[h];
        if (x->block_size != rt->cfg.block_size || x->init_real != rt->cfg.init_real ||
            x->row_cap != rt->cfg.row_cap) {
            status = PDBP_E_ARG;
            bad = h;
        }
    }
    for (int h = 0; h < rt->nhosts; h++)
        answer(h, READY_REQID, PDBP_DA_READY, status, bad);
}

static void on_damsg(const struct pdbp_damsg *da)
{
    struct pdbp_rt *rt = &pdbp_rt;
    switch (da->op) {
    case PDBP_DA_STOP:
        pdbp_receiver_stop();
        return;
    case PDBP_DA_HEARTBEAT:
        pthread_mutex_lock(&rt->mu);
        rt->last_hb = pdbp_now();
        pthread_mutex_unlock(&rt->mu);
        return;
    case PDBP_DA_TAKEOVER:
        if (da->value >= 0 && da->value < rt->nhosts && da->value < 2)
            __atomic_store_n(&rt->mnode, da->value, __ATOMIC_RELEASE);
        return;
    default: { /* ANSWER, READY: wake the waiting request */
        pthread_mutex_lock(&rt->mu);
        struct pdbp_pend *p = da->reqid ? pend_find(da->reqid) : NULL;
        if (p && !p->done) {
            p->done = 1;
            p->status = da->status;
            p->value = da->value;
            pthread_cond_broadcast(&rt->cv_ctrl);
        }
        pthread_mutex_unlock(&rt->mu);
    }
    }
}

/* Handle one control message received from host src (receiver thread). */
void pdbp_on_ctrl(int src, const uint8_t *buf, int n)
{
    struct pdbp_rt *rt = &pdbp_rt;
    struct pdbp_msg m;
    const char *why;
    if (pdbp_msg_parse(buf, (size_t)n, &m, &why)) {
        pdbp_reject(src, "control message", why);
        return;
    }
    switch (m.type) {
    case PDBP_BPMSG:
        pthread_mutex_lock(&rt->mu);
        rt->credits[src] += m.u.bp.credits;
        /* a credit means src has taken a block off the wire (or grew its
         * row: counted the same, which can only end a phase early) */
        rt->unacked[src] -= m.u.bp.credits < rt->unacked[src] ? m.u.bp.credits
                                                               : rt->unacked[src];
        rt->ack_t[src] = pdbp_now();
        pthread_cond_broadcast(&rt->cv_send);
        pthread_mutex_unlock(&rt->mu);
        break;
    case PDBP_DAMSG: on_damsg(&m.u.da); break;
    case PDBP_URMSG: on_lookup(&m.u.ur); break;
    case PDBP_HINFOMSG: on_hinfo(&m.u.hi); break;
    case PDBP_MBINFOMSG: on_mbinfo(&m.u.mb); break;
    default:
        pdbp_reject(src, "control message", "a data message on the control tag");
    }
}

/* ---- manager thread: heartbeats (primary) and failover (backup) ---- */

static void *manager_main(void *arg)
{
    struct pdbp_rt *rt = &pdbp_rt;
    (void)arg;
    pthread_mutex_lock(&rt->mu);
    rt->last_hb = pdbp_now();
    while (!rt->stop_manager) {
        pthread_mutex_unlock(&rt->mu);
        struct timespec ts = { rt->cfg.hb_ms / 1000, (rt->cfg.hb_ms % 1000) * 1000000L };
        nanosleep(&ts, NULL);
        pthread_mutex_lock(&rt->mu);
        if (rt->stop_manager)
            break;
        if (rt->host == 0 && !rt->mnode_failed) {
            pthread_mutex_unlock(&rt->mu);
            answer(1, 0, PDBP_DA_HEARTBEAT, PDBP_OK, 0);
            pthread_mutex_lock(&rt->mu);
        } else if (rt->host == 1 && __atomic_load_n(&rt->mnode, __ATOMIC_ACQUIRE) == 0 &&
                   pdbp_now() - rt->last_hb > rt->cfg.hb_timeout_ms / 1000.0) {
            __atomic_store_n(&rt->mnode, 1, __ATOMIC_RELEASE);
            pthread_mutex_unlock(&rt->mu);
            fprintf(stderr, "pdbp: host 1: primary management node silent for "
                    "%u ms; taking over\n", rt->cfg.hb_timeout_ms);
            for (int h = 0; h < rt->nhosts; h++)
                answer(h, 0, PDBP_DA_TAKEOVER, PDBP_OK, 1);
            pthread_mutex_lock(&rt->mu);
        }
    }
    pthread_mutex_unlock(&rt->mu);
    return NULL;
}

int pdbp_manager_start(void)
{
    struct pdbp_rt *rt = &pdbp_rt;
    if (rt->nhosts < 2 || rt->host > 1)
        return PDBP_OK;
    rt->hinfo = calloc(rt->nhosts, sizeof(*rt->hinfo));
    rt->hseen = calloc(rt->nhosts, 1);
    if (!rt->hinfo || !rt->hseen)
        return PDBP_E_NOMEM;
    return pthread_create(&rt->manager, NULL, manager_main, NULL) ? PDBP_E_NOMEM
                                                                   : PDBP_OK;
}

void pdbp_manager_stop(void)
{
    struct pdbp_rt *rt = &pdbp_rt;
    if (rt->nhosts < 2 || rt->host > 1)
        return;
    pthread_mutex_lock(&rt->mu);
    rt->stop_manager = 1;
    pthread_mutex_unlock(&rt->mu);
    pthread_join(rt->manager, NULL);
}

void pdbp_mnode_free(void)
{
    struct pdbp_rt *rt = &pdbp_rt;
    free(rt->hinfo); free(rt->hseen); free(rt->names);
    rt->hinfo = NULL; rt->hseen = NULL; rt->names = NULL;
    rt->nnames = rt->names_cap = rt->nhinfo = 0;
}

/* Figure 6: HInfoMsg to the primary, then wait for READY. */
int pdbp_init_sequence(void)
{
    struct pdbp_rt *rt = &pdbp_rt;
    if (rt->nhosts == 1 && !rt->hinfo) {
        rt->hinfo = calloc(1, sizeof(*rt->hinfo));
        rt->hseen = calloc(1, 1);
        if (!rt->hinfo || !rt->hseen)
            return PDBP_E_NOMEM;
    }
    uint8_t b[PDBP_CTRL_MAX];
    struct pdbp_hinfomsg hi = {
        .host = (uint16_t)rt->host, .nhosts = (uint16_t)rt->nhosts,
        .block_size = rt->cfg.block_size, .max_blocks = rt->cfg.max_blocks,
        .init_real = (uint16_t)rt->cfg.init_real, .row_cap = (uint16_t)rt->cfg.row_cap,
    };
    gethostname(hi.hostname, sizeof(hi.hostname) - 1);
    int status = 0, value = 0;
    int rc = pdbp_ctrl_call(0, b, pdbp_enc_hinfo(b, &hi), READY_REQID, 60000,
                            &status, &value);
    if (rc == PDBP_E_TIMEOUT) {
        fprintf(stderr, "pdbp: host %d: no READY from management node 0 in 60 s "
                "(did every rank call pdbp_init?)\n", rt->host);
        return rc;
    }
    if (rc == PDBP_OK && status != PDBP_OK) {
        fprintf(stderr, "pdbp: host %d: host %d's pool settings differ from host 0's "
                "(TNBC_PDBP_BLOCK_SIZE, _INIT_REAL and _ROW_CAP must match)\n",
                rt->host, value);
        return status;
    }
    return rc;
}

void pdbp_test_fail_mnode(void)
{
    pthread_mutex_lock(&pdbp_rt.mu);
    pdbp_rt.mnode_failed = 1;
    pthread_mutex_unlock(&pdbp_rt.mu);
    fprintf(stderr, "pdbp: host %d: management service stopped (emulated failure)\n",
            pdbp_rt.host);
}
