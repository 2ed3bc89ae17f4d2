/*
 * xfer.c - the data path: writers pack records into send sub-pools, the
 * sender thread pool ships sealed blocks, the receiver thread lands them in
 * receive sub-pools and hands records to the GPs' read pipes.
 *
 * Flow control is by credits: host i may have at most as many blocks in
 * flight to host j as j's receive sub-pool for i has free real elements.
 * j returns a credit (BPMsg) for each element it frees and for each element
 * the threshold algorithm adds. So the receiver always has room, MPI never
 * buffers unboundedly, and a slow reader stalls its senders (back-pressure)
 * instead of losing data.
 */
#include "rt.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int bad_logged;

void pdbp_reject(int src, const char *what, const char *why)
{
    /* rejected under the lock or not: a counter, then one line per message
     * for the first few, so a flood cannot flood the log */
    __atomic_add_fetch(&pdbp_rt.st.rejected, 1, __ATOMIC_RELAXED);
    if (__atomic_fetch_add(&bad_logged, 1, __ATOMIC_RELAXED) < 20)
        fprintf(stderr, "pdbp: host %d: rejected %s from host %d: %s\n",
                pdbp_rt.host, what, src, why);
}

static void send_credits(int host, uint32_t n)
{
    if (!n)
        return;
    uint8_t b[PDBP_CTRL_MAX];
    struct pdbp_bpmsg bp = { .op = PDBP_BP_CREDIT, .host = (uint16_t)pdbp_rt.host,
                             .credits = n };
    pdbp_ctrl_send(host, b, pdbp_enc_bp(b, &bp));
}

/* ---- writers: into the send sub-pools ---- */

/* Close the block being packed for host j (caller holds mu). */
static void seal(int j)
{
    struct pdbp_row *r = &pdbp_rt.sm[j];
    int o = pdbp_rt.open[j];
    if (o < 0)
        return;
    pdbp_remote_end(pdbp_row_block(r, &pdbp_rt.umb, o), r->fill[o], r->nrec[o]);
    r->state[o] = PDBP_SLOT_READY;
    pdbp_rt.open[j] = -1;
}

/* Reserve room for one record of len bytes in the block being packed for
 * dst's host: writes the record's route and header, counts a copy in flight
 * on the element (refs on the send side) and returns where the data bytes
 * go; the caller copies them without the lock, then calls
 * pdbp_reserve_done. A block is not sent while a copy into it is in flight.
 * NULL when the sub-pool is full (back-pressure). Caller holds mu. */
uint8_t *pdbp_reserve_remote(pdbp_gp_t src, pdbp_gp_t dst, uint32_t len,
                             uint32_t *slot)
{
    struct pdbp_rt *rt = &pdbp_rt;
    int j = GP_HOST(dst);
    struct pdbp_row *r = &rt->sm[j];
    size_t need = PDBP_REC_OVERHEAD + (size_t)len;
    int o = rt->open[j];
    if (o < 0 || r->fill[o] + need > rt->cfg.block_size || r->nrec[o] == 65535) {
        seal(j);
        o = pdbp_row_acquire(r, &rt->umb, rt->cfg.threshold);
        if (o < 0)
            return NULL;
        r->fill[o] = (uint32_t)pdbp_remote_begin(pdbp_row_block(r, &rt->umb, o),
                                                 (uint16_t)rt->host, rt->seq[j]++);
        r->refs[o] = 0;
        rt->open[j] = o;
    }
    uint8_t *blk = pdbp_row_block(r, &rt->umb, o);
    uint32_t at = r->fill[o];
    r->fill[o] = (uint32_t)pdbp_remote_record(blk, at, src, dst, len);
    r->nrec[o]++;
    r->refs[o]++;
    rt->st.sent_msgs++;
    *slot = (uint32_t)o;
    return blk + at + PDBP_REC_OVERHEAD;
}

/* The copy into a reserved record is done (caller holds mu). */
void pdbp_reserve_done(pdbp_gp_t dst, uint32_t slot)
{
    struct pdbp_rt *rt = &pdbp_rt;
    rt->sm[GP_HOST(dst)].refs[slot]--;
    /* the block may be complete now, or the link idle: wake a sender */
    pthread_cond_signal(&rt->cv_send);
}

/* The writer's path: waits for room, copies outside the lock. */
int pdbp_put_remote(pdbp_gp_t src, pdbp_gp_t dst, const void *data, uint32_t len)
{
    struct pdbp_rt *rt = &pdbp_rt;
    uint8_t *to;
    uint32_t slot;
    pthread_mutex_lock(&rt->mu);
    while (!(to = pdbp_reserve_remote(src, dst, len, &slot))) {
        rt->st.waits++;              /* sub-pool full: back-pressure */
        pthread_cond_signal(&rt->cv_send);
        pthread_cond_wait(&rt->cv_space, &rt->mu);
    }
    pthread_mutex_unlock(&rt->mu);
    if (len)
        memcpy(to, data, len);
    pthread_mutex_lock(&rt->mu);
    pdbp_reserve_done(dst, slot);
    pthread_mutex_unlock(&rt->mu);
    return PDBP_OK;
}

/* Append a record to GP g's read pipe (caller holds mu). */
static int deliver(pdbp_gp_t dst, pdbp_gp_t src, int row, uint32_t slot,
                   const uint8_t *data, uint32_t len)
{
    int k = GP_INDEX(dst);
    if (GP_HOST(dst) != pdbp_rt.host || k >= PDBP_MAX_GP || !pdbp_rt.gps[k].used)
        return -1;
    struct pdbp_rq *q = malloc(sizeof(*q));
    if (!q)
        return -1;
    *q = (struct pdbp_rq){ .row = row, .slot = slot, .data = data, .len = len, .src = src };
    struct pdbp_gpent *e = &pdbp_rt.gps[k];
    if (e->tail)
        e->tail->next = q;
    else
        e->head = q;
    e->tail = q;
    pthread_cond_broadcast(&e->cv);
    return 0;
}

/* A LocalMsg never touches MPI: it goes into this host's own receive
 * sub-pool and straight to the destination's read pipe. */
int pdbp_put_local(pdbp_gp_t src, pdbp_gp_t dst, const void *data, uint32_t len)
{
    struct pdbp_rt *rt = &pdbp_rt;
    struct pdbp_row *r = &rt->rm[rt->host];
    int s, rc = PDBP_OK;
    pthread_mutex_lock(&rt->mu);
    while ((s = pdbp_row_acquire(r, &rt->umb, rt->cfg.threshold)) < 0) {
        rt->st.waits++;
        pthread_cond_wait(&rt->cv_space, &rt->mu);
    }
    uint8_t *blk = pdbp_row_block(r, &rt->umb, s);
    r->fill[s] = (uint32_t)pdbp_enc_local(blk, src, dst, data, len);
    r->state[s] = PDBP_SLOT_BUSY;
    r->refs[s] = 1;
    r->legit[s] = 1;
    if (deliver(dst, src, rt->host, s, blk + PDBP_HDR_LEN + PDBP_REC_OVERHEAD, len)) {
        pdbp_row_done(r, s);
        rc = PDBP_E_NOTFOUND;
    } else {
        rt->st.local_msgs++;
    }
    pthread_mutex_unlock(&rt->mu);
    return rc;
}

/* recvData is done with a record: free its element when no record of the
 * block is left, and give the sender its credit back. */
void pdbp_consumed(int row, uint32_t slot)
{
    struct pdbp_rt *rt = &pdbp_rt;
    struct pdbp_row *r = &rt->rm[row];
    uint32_t freed = 0;
    pthread_mutex_lock(&rt->mu);
    if (--r->refs[slot] == 0)
        freed = pdbp_row_done(r, slot);
    if (freed)
        pthread_cond_broadcast(&rt->cv_space);
    pthread_mutex_unlock(&rt->mu);
    if (row != rt->host)
        send_credits(row, freed);
}

/* ---- sender thread pool ---- */

/* A row j with a block to send and a credit for it (caller holds mu). */
static int pick_row(int *start)
{
    struct pdbp_rt *rt = &pdbp_rt;
    for (int k = 0; k < rt->nhosts; k++) {
        int j = (*start + k) % rt->nhosts;
        struct pdbp_row *r = &rt->sm[j];
        if (j == rt->host || rt->row_busy[j] || !r->used || r->refs[r->send])
            continue;                    /* nothing to send, or a copy in flight */
        uint8_t s = r->state[r->send];
        if (s == PDBP_SLOT_READY ||
            (s == PDBP_SLOT_OPEN && (int)r->send == rt->open[j] && r->nrec[r->send])) {
            if (!rt->credits[j]) {       /* the receiver has no room yet */
                rt->st.no_credit++;
                continue;
            }
            *start = j + 1;
            return j;
        }
    }
    return -1;
}

static void *sender_main(void *arg)
{
    struct pdbp_rt *rt = &pdbp_rt;
    int start = (int)(intptr_t)arg;
    pthread_mutex_lock(&rt->mu);
    while (!rt->stop_senders) {
        int j = pick_row(&start);
        if (j < 0) {
            pthread_cond_wait(&rt->cv_send, &rt->mu);
            continue;
        }
        struct pdbp_row *r = &rt->sm[j];
        uint32_t s = r->send;
        if (rt->open[j] == (int)s)
            seal(j);                     /* idle link: ship the partial block */
        r->state[s] = PDBP_SLOT_BUSY;
        rt->row_busy[j] = 1;
        rt->credits[j]--;
        uint8_t *blk = pdbp_row_block(r, &rt->umb, s);
        int n = (int)r->fill[s];
        pthread_mutex_unlock(&rt->mu);
        double t0 = pdbp_now();
        int rc = MPI_Send(blk, n, MPI_BYTE, j, PDBP_TAG_DATA, rt->comm);
        double dt = pdbp_now() - t0;
        pthread_mutex_lock(&rt->mu);
        rt->st.blocks_sent++;
        rt->st.block_bytes_sent += (uint64_t)n;
        rt->st.send_mpi_s += dt;
        if (rc != MPI_SUCCESS)
            fprintf(stderr, "pdbp: host %d: MPI_Send to host %d failed (%d)\n",
                    rt->host, j, rc);
        pdbp_row_done(r, s);
        rt->row_busy[j] = 0;
        pthread_cond_broadcast(&rt->cv_space);
        pthread_cond_signal(&rt->cv_send);
    }
    pthread_mutex_unlock(&rt->mu);
    return NULL;
}

/* Wait until every send sub-pool is empty. Returns 0, or -1 on timeout. */
int pdbp_drain_sends(int timeout_ms)
{
    struct pdbp_rt *rt = &pdbp_rt;
    struct timespec dl;
    pdbp_deadline(&dl, timeout_ms);
    int rc = 0;
    pthread_mutex_lock(&rt->mu);
    for (;;) {
        int busy = 0;
        for (int j = 0; j < rt->nhosts; j++)
            busy |= j != rt->host && rt->sm[j].used;
        if (!busy)
            break;
        pthread_cond_broadcast(&rt->cv_send);
        if (pthread_cond_timedwait(&rt->cv_space, &rt->mu, &dl) == ETIMEDOUT) {
            rc = -1;
            break;
        }
    }
    pthread_mutex_unlock(&rt->mu);
    return rc;
}

/* ---- receiver thread ---- */

/* Undo the acquire of the newest element of a receive row (a rejected block
 * must not occupy room its sender never paid a credit for). */
static void unacquire(struct pdbp_row *r, uint32_t s)
{
    if ((s + 1) % r->real == r->recv) {
        r->recv = s;
        r->used--;
        r->state[s] = PDBP_SLOT_FREE;
    } else {
        pdbp_row_done(r, s);
    }
}

static void discard(MPI_Message *msg)
{
    char c;
    MPI_Status st;
    /* receive and drop; a truncation error here is expected */
    MPI_Mrecv(&c, 0, MPI_BYTE, msg, &st);
}

/* Deliver each record of a validated block; returns records delivered. */
static uint32_t demux(int src, uint32_t s, const struct pdbp_msg *m)
{
    uint32_t off = 0, k = 0;
    struct pdbp_record rec;
    while (pdbp_remote_next(m, &off, &rec)) {
        if (GP_HOST(rec.src) != src)
            pdbp_reject(src, "record", "source GP is not on the sending host");
        else if (deliver(rec.dst, rec.src, src, s, rec.data, rec.len))
            pdbp_reject(src, "record", "destination GP is not registered here");
        else
            k++;
    }
    return k;
}

static void on_data(int src, int n, MPI_Message *msg)
{
    struct pdbp_rt *rt = &pdbp_rt;
    if (src == rt->host || n > (int)rt->cfg.block_size) {
        discard(msg);
        pdbp_reject(src, "data message", src == rt->host ?
                    "data from this host to itself" : "larger than a block");
        return;
    }
    struct pdbp_row *r = &rt->rm[src];
    pthread_mutex_lock(&rt->mu);
    int s = pdbp_row_acquire(r, &rt->umb, rt->cfg.threshold);
    uint32_t grown = r->last.checked ? r->last.added : 0;
    pthread_mutex_unlock(&rt->mu);
    if (s < 0) {
        discard(msg);
        pdbp_reject(src, "data message", "sender exceeded its credits");
        return;
    }
    uint8_t *blk = pdbp_row_block(r, &rt->umb, s);
    MPI_Status st;
    double t0 = pdbp_now();
    MPI_Mrecv(blk, n, MPI_BYTE, msg, &st);
    double dt = pdbp_now() - t0;
    struct pdbp_msg m;
    const char *why = "not a RemoteMsg";
    int ok = pdbp_msg_parse(blk, (size_t)n, &m, &why) == 0 &&
             m.type == PDBP_REMOTEMSG;
    if (ok && m.u.remote.host != src) {
        ok = 0;
        why = "RemoteMsg names another source host";
    }
    pthread_mutex_lock(&rt->mu);
    rt->st.blocks_recv++;
    rt->st.recv_mpi_s += dt;
    uint32_t freed = 0;
    if (!ok) {
        unacquire(r, (uint32_t)s);
    } else {
        r->legit[s] = 1;
        r->state[s] = PDBP_SLOT_BUSY;
        r->refs[s] = demux(src, (uint32_t)s, &m);
        rt->st.recv_msgs += r->refs[s];
        if (!r->refs[s])
            freed = pdbp_row_done(r, (uint32_t)s);
    }
    pthread_mutex_unlock(&rt->mu);
    if (!ok)
        pdbp_reject(src, "data message", why);
    send_credits(src, freed + grown);
}

static void on_ctrl_msg(int src, int n, MPI_Message *msg)
{
    uint8_t b[PDBP_CTRL_MAX];
    MPI_Status st;
    if (n > PDBP_CTRL_MAX) {
        discard(msg);
        pdbp_reject(src, "control message", "longer than any control message");
        return;
    }
    MPI_Mrecv(b, n, MPI_BYTE, msg, &st);
    pdbp_on_ctrl(src, b, n);
}

static int stops_seen;

static void *receiver_main(void *arg)
{
    struct pdbp_rt *rt = &pdbp_rt;
    (void)arg;
    int idle = 0, stops_sent = 0;
    while (__atomic_load_n(&stops_seen, __ATOMIC_ACQUIRE) < rt->nhosts) {
        if (!stops_sent && __atomic_load_n(&rt->send_stops, __ATOMIC_ACQUIRE)) {
            /* sent from this thread, so after everything it sent before */
            uint8_t b[PDBP_CTRL_MAX];
            struct pdbp_damsg da = { .op = PDBP_DA_STOP, .host = (uint16_t)rt->host };
            size_t len = pdbp_enc_da(b, &da);
            for (int h = 0; h < rt->nhosts; h++)
                pdbp_ctrl_send(h, b, len);
            stops_sent = 1;
        }
        int flag = 0, n = 0;
        MPI_Message msg;
        MPI_Status st;
        if (MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, rt->comm, &flag, &msg, &st)
            != MPI_SUCCESS) {
            fprintf(stderr, "pdbp: host %d: MPI_Improbe failed; receiver stops "
                    "(recvData will time out)\n", rt->host);
            break;
        }
        if (!flag) {
            /* back off so idle hosts leave the cores to the work */
            struct timespec ts = { 0, idle < 5000 ? 0 : idle < 50000 ? 50000 : 500000 };
            if (ts.tv_nsec)
                nanosleep(&ts, NULL);
            else
                sched_yield();
            idle++;
            continue;
        }
        idle = 0;
        MPI_Get_count(&st, MPI_BYTE, &n);
        if (st.MPI_TAG == PDBP_TAG_DATA)
            on_data(st.MPI_SOURCE, n, &msg);
        else if (st.MPI_TAG == PDBP_TAG_CTRL)
            on_ctrl_msg(st.MPI_SOURCE, n, &msg);
        else {
            discard(&msg);
            pdbp_reject(st.MPI_SOURCE, "message", "unknown tag");
        }
    }
    return NULL;
}

/* Called by pdbp_on_ctrl for each STOP. */
void pdbp_receiver_stop(void)
{
    __atomic_add_fetch(&stops_seen, 1, __ATOMIC_RELEASE);
}

int pdbp_xfer_start(void)
{
    struct pdbp_rt *rt = &pdbp_rt;
    stops_seen = 0;
    bad_logged = 0;
    if (pthread_create(&rt->receiver, NULL, receiver_main, NULL))
        return PDBP_E_NOMEM;
    rt->senders = calloc(rt->cfg.threads, sizeof(*rt->senders));
    if (!rt->senders)
        return PDBP_E_NOMEM;
    for (uint32_t i = 0; i < rt->cfg.threads; i++)
        if (pthread_create(&rt->senders[i], NULL, sender_main,
                           (void *)(intptr_t)(rt->host + 1 + i)))
            return PDBP_E_NOMEM;
    return PDBP_OK;
}

/* After the barrier of pdbp_finalize: exchange STOPs, join everything. */
void pdbp_xfer_stop(void)
{
    struct pdbp_rt *rt = &pdbp_rt;
    __atomic_store_n(&rt->send_stops, 1, __ATOMIC_RELEASE);
    pthread_join(rt->receiver, NULL);
    pthread_mutex_lock(&rt->mu);
    rt->stop_senders = 1;
    pthread_cond_broadcast(&rt->cv_send);
    pthread_mutex_unlock(&rt->mu);
    for (uint32_t i = 0; i < rt->cfg.threads; i++)
        pthread_join(rt->senders[i], NULL);
    free(rt->senders);
    rt->senders = NULL;
}

int pdbp_test_inject(int host, int tag, const void *buf, size_t n)
{
    return MPI_Send(buf, (int)n, MPI_BYTE, host, tag, pdbp_rt.comm) == MPI_SUCCESS
               ? PDBP_OK : PDBP_E_MPI;
}
