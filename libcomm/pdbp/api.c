// SPDX-License-Identifier: BSD-3-Clause
/*
 * api.c - the communication programming interface (CPI): prcsReg,
 * prcsApplyPipe, sendData, recvData, prcsReleasePipe, prcsFree, and the
 * name lookup at the management node.
 */
#include "rt.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void pdbp_set_device(const struct pdbp_dev_ops *ops)
{
    pdbp_rt.sgp_dev = ops ? ops : &pdbp_dev_host;
}

/* The GP entry of a local GP id, or NULL (caller holds mu). */
static struct pdbp_gpent *gp_get(pdbp_gp_t gp)
{
    if (gp < 0 || GP_HOST(gp) != pdbp_rt.host || GP_INDEX(gp) >= PDBP_MAX_GP)
        return NULL;
    struct pdbp_gpent *e = &pdbp_rt.gps[GP_INDEX(gp)];
    return e->used ? e : NULL;
}

/* The pipe bound to a GP, or NULL (caller holds mu). */
static struct pdbp_pipe *pipe_get(pdbp_pipe_t p)
{
    if (p < 0 || (uint32_t)p >= pdbp_rt.cfg.pipes)
        return NULL;
    struct pdbp_pipe *x = &pdbp_rt.pipes[p];
    return x->state == PIPE_BOUND ? x : NULL;
}

/* Tell the management node about a binding change and, if reqid, wait. */
static int mb_notify(uint16_t op, pdbp_gp_t gp, int pipe, const char *name, int wait)
{
    uint8_t b[PDBP_CTRL_MAX];
    struct pdbp_mbinfomsg mb = { .op = op, .host = (uint16_t)pdbp_rt.host,
                                 .gp = gp, .pipe = pipe };
    memcpy(mb.name, name, sizeof(mb.name));
    if (!wait) {
        int m = __atomic_load_n(&pdbp_rt.mnode, __ATOMIC_ACQUIRE);
        return pdbp_ctrl_send(m, b, pdbp_enc_mbinfo(b, &mb));
    }
    mb.reqid = pdbp_new_reqid();
    int status = 0, value = 0;
    int rc = pdbp_mnode_call(b, pdbp_enc_mbinfo(b, &mb), mb.reqid, &status, &value);
    return rc ? rc : status;
}

int prcsReg(const char *name, int kind, pdbp_gp_t *gp)
{
    struct pdbp_rt *rt = &pdbp_rt;
    if (!rt->inited)
        return PDBP_E_STATE;
    if (!name || !gp || !*name || strlen(name) >= PDBP_NAME_MAX ||
        (kind != PDBP_NGP && kind != PDBP_SGP))
        return PDBP_E_ARG;
    pthread_mutex_lock(&rt->mu);
    int k = 0;
    while (k < PDBP_MAX_GP && rt->gps[k].used)
        k++;
    if (k == PDBP_MAX_GP) {
        pthread_mutex_unlock(&rt->mu);
        return PDBP_E_NOMEM;
    }
    struct pdbp_gpent *e = &rt->gps[k];
    e->used = 1;
    memset(e->name, 0, sizeof(e->name));
    strcpy(e->name, name);
    e->kind = kind;
    e->dev = kind == PDBP_SGP ? rt->sgp_dev : &pdbp_dev_host;
    e->pipe = -1;
    pthread_mutex_unlock(&rt->mu);
    pdbp_gp_t id = (pdbp_gp_t)((uint32_t)rt->host << 16 | (uint32_t)k);
    int rc = mb_notify(PDBP_MB_REGISTER, id, -1, e->name, 1);
    if (rc != PDBP_OK) {
        pthread_mutex_lock(&rt->mu);
        e->used = 0;
        pthread_mutex_unlock(&rt->mu);
        return rc;
    }
    *gp = id;
    return PDBP_OK;
}

int prcsApplyPipe(pdbp_gp_t gp, pdbp_pipe_t *pipe)
{
    struct pdbp_rt *rt = &pdbp_rt;
    if (!rt->inited)
        return PDBP_E_STATE;
    if (!pipe)
        return PDBP_E_ARG;
    pthread_mutex_lock(&rt->mu);
    struct pdbp_gpent *e = gp_get(gp);
    if (!e || e->pipe >= 0) {
        pthread_mutex_unlock(&rt->mu);
        return e ? PDBP_E_STATE : PDBP_E_ARG;
    }
    uint32_t i = 0;
    while (i < rt->cfg.pipes && rt->pipes[i].state != PIPE_FREE)
        i++;
    if (i == rt->cfg.pipes) {
        pthread_mutex_unlock(&rt->mu);
        return PDBP_E_NOPIPE;
    }
    rt->pipes[i].state = PIPE_BOUND;
    rt->pipes[i].gp = gp;
    rt->pipes[i].uses++;
    e->pipe = (int)i;
    char name[PDBP_NAME_MAX];
    memcpy(name, e->name, sizeof(name));
    pthread_mutex_unlock(&rt->mu);
    mb_notify(PDBP_MB_BIND, gp, (int)i, name, 0);
    *pipe = (pdbp_pipe_t)i;
    return PDBP_OK;
}

int sendData(pdbp_pipe_t pipe, pdbp_gp_t dst, const void *buf, size_t len)
{
    struct pdbp_rt *rt = &pdbp_rt;
    if (!rt->inited)
        return PDBP_E_STATE;
    if ((!buf && len) || dst < 0 || GP_HOST(dst) >= rt->nhosts ||
        GP_INDEX(dst) >= PDBP_MAX_GP)
        return PDBP_E_ARG;
    if (len > pdbp_max_message())
        return PDBP_E_TOOBIG;
    pthread_mutex_lock(&rt->mu);
    struct pdbp_pipe *p = pipe_get(pipe);
    struct pdbp_gpent *e = p ? gp_get(p->gp) : NULL;
    const struct pdbp_dev_ops *dev = e ? e->dev : NULL;
    pdbp_gp_t src = p ? p->gp : -1;
    /* a local destination can be checked now; a remote one is checked
     * (and a stray record rejected) by its host */
    int remote = GP_HOST(dst) != rt->host;
    int unknown = !remote && !gp_get(dst);
    /* Fast path: a remote message from host memory, with nothing of this
     * pipe still queued (so order is kept), is copied straight into the
     * block being packed for its host: one copy, no writer hand-off, the
     * copy made without the lock. When the sub-pool is full it goes through
     * the write pipe and its writer thread as below. */
    uint8_t *to = NULL;
    uint32_t slot = 0;
    if (e && remote && dev == &pdbp_dev_host && !p->head && !p->writing &&
        (to = pdbp_reserve_remote(src, dst, (uint32_t)len, &slot))) {
        p->direct++;
        rt->st.direct_msgs++;
    }
    pthread_mutex_unlock(&rt->mu);
    if (to) {
        if (len)
            memcpy(to, buf, len);
        pthread_mutex_lock(&rt->mu);
        pdbp_reserve_done(dst, slot);
        if (--p->direct == 0)
            pthread_cond_broadcast(&p->cv_room);
        pthread_mutex_unlock(&rt->mu);
        return PDBP_OK;
    }
    if (!e)
        return PDBP_E_ARG;
    if (unknown)
        return PDBP_E_NOTFOUND;
    struct pdbp_wq *w = malloc(sizeof(*w) + len);
    if (!w)
        return PDBP_E_NOMEM;
    *w = (struct pdbp_wq){ .src = src, .dst = dst, .len = (uint32_t)len };
    if (len && dev->to_host(w->data, buf, len)) {
        free(w);
        return PDBP_E_DEVICE;
    }
    pthread_mutex_lock(&rt->mu);
    /* the write pipe holds at most pipe_bytes: wait for the writer */
    while (p->bytes && p->bytes + len > rt->cfg.pipe_bytes) {
        rt->st.waits++;
        pthread_cond_wait(&p->cv_room, &rt->mu);
    }
    p->bytes += len;
    if (p->tail)
        p->tail->next = w;
    else
        p->head = w;
    p->tail = w;
    pthread_cond_signal(&p->cv_work);
    pthread_mutex_unlock(&rt->mu);
    return PDBP_OK;
}

/* First record in e's read pipe from src (or any); unlinks it. */
static struct pdbp_rq *take(struct pdbp_gpent *e, pdbp_gp_t src, size_t cap,
                            size_t *len, int *trunc)
{
    struct pdbp_rq **pp = &e->head, *prev = NULL;
    while (*pp && src != PDBP_ANY && (*pp)->src != src) {
        prev = *pp;
        pp = &(*pp)->next;
    }
    struct pdbp_rq *q = *pp;
    if (!q)
        return NULL;
    if (q->len > cap) {          /* leave it there; tell the size */
        *len = q->len;
        *trunc = 1;
        return NULL;
    }
    *pp = q->next;
    if (e->tail == q)
        e->tail = prev;
    return q;
}

int recvData(pdbp_pipe_t pipe, pdbp_gp_t *src, void *buf, size_t cap,
             size_t *len, int timeout_ms)
{
    struct pdbp_rt *rt = &pdbp_rt;
    if (!rt->inited)
        return PDBP_E_STATE;
    if (!len || (!buf && cap))
        return PDBP_E_ARG;
    pdbp_gp_t want = src ? *src : PDBP_ANY;
    struct timespec dl;
    pdbp_deadline(&dl, timeout_ms);
    pthread_mutex_lock(&rt->mu);
    struct pdbp_pipe *p = pipe_get(pipe);
    struct pdbp_gpent *e = p ? gp_get(p->gp) : NULL;
    if (!e) {
        pthread_mutex_unlock(&rt->mu);
        return PDBP_E_ARG;
    }
    struct pdbp_rq *q;
    int trunc = 0, rc = PDBP_OK;
    while (!(q = take(e, want, cap, len, &trunc)) && !trunc) {
        if (timeout_ms == 0 ||
            pthread_cond_timedwait(&e->cv, &rt->mu, &dl) == ETIMEDOUT) {
            rc = PDBP_E_TIMEOUT;
            break;
        }
    }
    const struct pdbp_dev_ops *dev = e->dev;
    pthread_mutex_unlock(&rt->mu);
    if (trunc)
        return PDBP_E_TRUNC;
    if (!q)
        return rc;
    /* the element stays busy until pdbp_consumed, so copy without the lock */
    if (q->len && dev->from_host(buf, q->data, q->len))
        rc = PDBP_E_DEVICE;
    *len = q->len;
    if (src)
        *src = q->src;
    pdbp_consumed(q->row, q->slot);
    free(q);
    return rc;
}

int pdbp_flush(pdbp_pipe_t pipe)
{
    struct pdbp_rt *rt = &pdbp_rt;
    if (!rt->inited)
        return PDBP_E_STATE;
    pthread_mutex_lock(&rt->mu);
    struct pdbp_pipe *p = pipe_get(pipe);
    while (p && (p->head || p->writing || p->direct))
        pthread_cond_wait(&p->cv_room, &rt->mu);
    pthread_mutex_unlock(&rt->mu);
    return p ? PDBP_OK : PDBP_E_ARG;
}

int prcsReleasePipe(pdbp_gp_t gp, pdbp_pipe_t pipe)
{
    struct pdbp_rt *rt = &pdbp_rt;
    if (!rt->inited)
        return PDBP_E_STATE;
    pthread_mutex_lock(&rt->mu);
    struct pdbp_pipe *p = pipe_get(pipe);
    struct pdbp_gpent *e = gp_get(gp);
    int ok = p && e && p->gp == gp;
    pthread_mutex_unlock(&rt->mu);
    if (!ok)
        return PDBP_E_ARG;
    pdbp_flush(pipe);            /* nothing queued is lost on release */
    pthread_mutex_lock(&rt->mu);
    p->state = PIPE_FREE;
    p->gp = -1;
    e->pipe = -1;
    char name[PDBP_NAME_MAX];
    memcpy(name, e->name, sizeof(name));
    pthread_mutex_unlock(&rt->mu);
    mb_notify(PDBP_MB_UNBIND, gp, pipe, name, 0);
    return PDBP_OK;
}

int prcsFree(pdbp_gp_t gp)
{
    struct pdbp_rt *rt = &pdbp_rt;
    if (!rt->inited)
        return PDBP_E_STATE;
    pthread_mutex_lock(&rt->mu);
    struct pdbp_gpent *e = gp_get(gp);
    int pipe = e ? e->pipe : -1;
    pthread_mutex_unlock(&rt->mu);
    if (!e)
        return PDBP_E_ARG;
    if (pipe >= 0)
        prcsReleasePipe(gp, pipe);
    pthread_mutex_lock(&rt->mu);
    /* records nobody will read: free their elements */
    struct pdbp_rq *q = e->head;
    e->head = e->tail = NULL;
    char name[PDBP_NAME_MAX];
    memcpy(name, e->name, sizeof(name));
    e->used = 0;
    pthread_mutex_unlock(&rt->mu);
    while (q) {
        struct pdbp_rq *n = q->next;
        pdbp_consumed(q->row, q->slot);
        free(q);
        q = n;
    }
    return mb_notify(PDBP_MB_FREE, gp, -1, name, 0);
}

int pdbp_lookup(const char *name, pdbp_gp_t *gp, int timeout_ms)
{
    struct pdbp_rt *rt = &pdbp_rt;
    if (!rt->inited)
        return PDBP_E_STATE;
    if (!name || !gp || !*name || strlen(name) >= PDBP_NAME_MAX)
        return PDBP_E_ARG;
    double end = pdbp_now() + timeout_ms / 1000.0;
    for (;;) {
        uint8_t b[PDBP_CTRL_MAX];
        struct pdbp_urmsg ur = { .reqid = pdbp_new_reqid(), .op = PDBP_UR_LOOKUP,
                                 .host = (uint16_t)rt->host };
        memcpy(ur.name, name, strlen(name) + 1);
        int status = 0, value = 0;
        int rc = pdbp_mnode_call(b, pdbp_enc_ur(b, &ur), ur.reqid, &status, &value);
        if (rc == PDBP_OK && status == PDBP_OK) {
            *gp = value;
            return PDBP_OK;
        }
        if (rc == PDBP_OK)
            rc = status;
        if (rc != PDBP_E_NOTFOUND && rc != PDBP_E_TIMEOUT)
            return rc;
        if (timeout_ms >= 0 && pdbp_now() >= end)
            return rc;
        struct timespec ts = { 0, 20 * 1000000L };   /* not registered yet */
        nanosleep(&ts, NULL);
    }
}
