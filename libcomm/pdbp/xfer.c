// SPDX-License-Identifier: BSD-3-Clause
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
    int o = rt->open[j];
    /* a record with the route of the one before it in the block omits it */
    int route = o < 0 || !r->nrec[o] || rt->last_src[j] != src || rt->last_dst[j] != dst;
    size_t need = PDBP_HDR_LEN + (route ? PDBP_ROUTE_LEN : 0) + (size_t)len;
    if (o < 0 || r->fill[o] + need > rt->cfg.block_size || r->nrec[o] == 65535) {
        seal(j);
        o = pdbp_row_acquire(r, &rt->umb, rt->cfg.threshold);
        if (o < 0)
            return NULL;
        r->fill[o] = (uint32_t)pdbp_remote_begin(pdbp_row_block(r, &rt->umb, o),
                                                 (uint16_t)rt->host, rt->seq[j]++);
        r->refs[o] = 0;
        rt->open[j] = o;
        route = 1;
    }
    uint8_t *blk = pdbp_row_block(r, &rt->umb, o);
    r->fill[o] = (uint32_t)pdbp_remote_record(blk, r->fill[o], src, dst, len, route);
    rt->last_src[j] = src;
    rt->last_dst[j] = dst;
    r->nrec[o]++;
    r->refs[o]++;
    rt->st.sent_msgs++;
    *slot = (uint32_t)o;
    return blk + r->fill[o] - len;
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

/* Several blocks per destination are in flight at once (MPI_Isend, at most
 * TNBC_PDBP_INFLIGHT and never more than the credits allow): Open MPI's TCP
 * BTL sends a block above its eager limit by rendezvous, and with traffic in
 * both directions the receiver's answer waits in the TCP stream behind the
 * other direction's data; with one block in flight the wire idles for every
 * such handshake. Order per destination is kept: blocks of a row are posted
 * in ring order, by one thread at a time (row_busy), and MPI does not let a
 * message overtake an earlier one to the same rank on the same tag. */

/* The element of row j to post next: the first one from the head that is
 * neither in flight (BUSY) nor done; -1 if none (caller holds mu). */
static int next_to_post(const struct pdbp_row *r)
{
    for (uint32_t k = 0, i = r->send; k < r->used; k++, i = (i + 1) % r->real)
        if (r->state[i] != PDBP_SLOT_BUSY && r->state[i] != PDBP_SLOT_DONE)
            return (int)i;
    return -1;
}

/* A partly filled block is shipped only once no record has been added to
 * it for this long: a block sent in eager pieces completes as soon as MPI
 * has buffered it, long before the wire is idle, so "nothing in flight"
 * alone would ship a small block (and spend a credit on it) every time. */
#define PDBP_PARTIAL_IDLE_S 100e-6

/* What row j can do now (row_state). */
enum row_st {
    ROW_POST,                /* a block to post, with a credit: *slot */
    ROW_WAIT,                /* nothing postable now (empty, in-flight limit, copy or
                              * partial block under way, another thread posting) */
    ROW_NO_CREDIT            /* a block to post, but the receiver has no room yet */
};

/* Row j's state; *slot gets the element to post (caller holds mu). A full
 * (READY) block goes while fewer than INFLIGHT blocks of its row are in
 * flight; the open, partly filled one only when none is and its writers
 * have paused (PDBP_PARTIAL_IDLE_S), so blocks fill up while others travel.
 * *deferred is set when a partial block waits only for that pause (the
 * caller looks again shortly). *now caches the time (-1: not read yet). */
static enum row_st row_state(int j, uint32_t *slot, int *deferred, double *now)
{
    struct pdbp_rt *rt = &pdbp_rt;
    struct pdbp_row *r = &rt->sm[j];
    if (j == rt->host || rt->row_busy[j] || !r->used || rt->inflight[j] >= rt->cfg.inflight)
        return ROW_WAIT;
    int i = next_to_post(r);
    if (i < 0 || r->refs[i])
        return ROW_WAIT;                 /* nothing to send, or a copy in flight */
    uint8_t s = r->state[i];
    int partial = s == PDBP_SLOT_OPEN && i == rt->open[j] && r->nrec[i] && !rt->inflight[j];
    if (partial && rt->credits[j]) {
        if (*now < 0)
            *now = pdbp_now();
        if (r->fill[i] != rt->pfill[j]) {         /* still growing: wait */
            rt->pfill[j] = r->fill[i];
            rt->pfill_t[j] = *now;
            *deferred = 1;
            return ROW_WAIT;
        }
        if (*now - rt->pfill_t[j] < PDBP_PARTIAL_IDLE_S) {
            *deferred = 1;
            return ROW_WAIT;
        }
    }
    if (s != PDBP_SLOT_READY && !partial)
        return ROW_WAIT;
    if (!rt->credits[j]) {               /* the receiver has no room yet */
        rt->st.no_credit++;
        return ROW_NO_CREDIT;
    }
    *slot = (uint32_t)i;
    return ROW_POST;
}

/* A stream whose credits stop coming back for this long is held up by its
 * reader, not by the wire: the others may go (see pick_row). */
#define PDBP_ACK_STALL_S 0.2

/* Whether the destination being served, cur, still has the wire: blocks of
 * it are in flight, or more than one posted block has not been credited
 * back (eager pieces complete when MPI has buffered them, long before they
 * are on the wire; a credit says the receiver has the block) while its
 * credits keep coming back (caller holds mu). */
static int cur_on_wire(int cur, double *now)
{
    struct pdbp_rt *rt = &pdbp_rt;
    if (rt->inflight[cur] || rt->row_busy[cur])
        return 1;
    if (rt->unacked[cur] <= 1)
        return 0;                        /* its last block may overlap the next stream */
    if (*now < 0)
        *now = pdbp_now();
    return *now - rt->ack_t[cur] < PDBP_ACK_STALL_S;
}

/* How long the destination being served may go without a new record
 * before the senders move on, while blocks for others are ready: the
 * program writes to its destinations in some order of its own (every host
 * to host 0 first, say) and alternates between them, so a stream's next
 * block is often a moment behind another's; following that order would
 * line every host up on the same downlink. */
#define PDBP_ROTATE_WAIT_S 2e-3

/* No block is queued or in flight to any host: the next burst starts the
 * rotation afresh at host+1, so all hosts start it together (caller holds
 * mu). */
static void rotate_if_idle(void)
{
    struct pdbp_rt *rt = &pdbp_rt;
    for (int j = 0; j < rt->nhosts; j++)
        if (j != rt->host && (rt->sm[j].used || rt->inflight[j]))
            return;
    rt->cur_dst = (rt->host + 1) % rt->nhosts;
    rt->cur_idle = -1;
}

/* Whether cur, which has nothing to post, may still get its next block
 * soon: less than PDBP_ROTATE_WAIT_S has passed since a record was last
 * seen added to its open block, or since it was first found with nothing
 * to post (caller holds mu). */
static int cur_awaited(double *now)
{
    struct pdbp_rt *rt = &pdbp_rt;
    int o = rt->open[rt->cur_dst];
    uint32_t fill = o >= 0 ? rt->sm[rt->cur_dst].fill[o] : 0;
    if (*now < 0)
        *now = pdbp_now();
    if (rt->cur_idle < 0 || fill != rt->cur_fill) {
        rt->cur_fill = fill;
        rt->cur_idle = *now;
    }
    return *now - rt->cur_idle < PDBP_ROTATE_WAIT_S;
}

/* The row to post a block of next; *slot gets the element (caller holds
 * mu). One destination at a time, in a rotated order: host i serves i+1
 * first, then i+2, ..., and moves on only when the current one has nothing
 * to post and its blocks are off the wire. Every host's streams then form
 * permutations (with 3 hosts: 0->1, 1->2, 2->0, then 0->2, 1->0, 2->1), so
 * each downlink has one sender at a time. Sending to all destinations at
 * once left two TCP streams sharing each downlink and uplink, which split
 * them unevenly: some links idled while the last stream finished (plain
 * TCP between the nodes shows the same: 60-77% of the link at once, 90-95%
 * rotated). A destination whose credits stop coming back for
 * PDBP_ACK_STALL_S (a slow reader) does not hold the others up.
 * *deferred: 1 = a partial block waits for its writers' pause, 2 = the
 * others wait for cur's blocks to leave (the caller looks again). */
static int pick_row(uint32_t *slot, int *deferred)
{
    struct pdbp_rt *rt = &pdbp_rt;
    double now = -1;
    *deferred = 0;
    if (rt->hold_senders)
        return -1;
    rotate_if_idle();
    int cur = rt->cur_dst;
    enum row_st st = row_state(cur, slot, deferred, &now);
    if (st == ROW_POST) {
        rt->cur_idle = -1;
        return cur;
    }
    if (cur_on_wire(cur, &now)) {
        if (!*deferred)
            *deferred = 2;               /* look again soon: credits may stall */
        return -1;
    }
    for (int k = 1; k < rt->nhosts; k++) {
        int j = (cur + k) % rt->nhosts;
        if (row_state(j, slot, deferred, &now) != ROW_POST)
            continue;
        if (st != ROW_NO_CREDIT && cur_awaited(&now)) {
            *deferred = 1;               /* cur's next block may be on its way */
            return -1;
        }
        rt->cur_dst = j;
        rt->cur_idle = -1;
        return j;
    }
    return -1;
}

/* A message this sender thread posted and has not seen complete: a whole
 * block, or one piece of it. While a block is in flight its element's refs
 * count its pieces not yet complete. */
struct sendreq {
    int row;
    uint32_t slot;
    int n;                   /* bytes of the block */
    double t0;               /* when its first piece was posted */
};

/* Post block s of row j as one message (tag DATA), or, when it is larger
 * than TNBC_PDBP_PIECE, as pieces of at most that size (HEAD, then MORE):
 * small enough for the TCP BTL to send eagerly, with no handshake. Called
 * without mu, with row_busy[j] set, so the pieces of one block are
 * consecutive on the wire. Returns pieces posted (req[0..k-1]). */
static int post_block(int j, const uint8_t *blk, int n, MPI_Request *req)
{
    struct pdbp_rt *rt = &pdbp_rt;
    uint32_t piece = rt->cfg.piece;
    if (!piece || (uint32_t)n <= piece)
        return MPI_Isend(blk, n, MPI_BYTE, j, PDBP_TAG_DATA, rt->comm, &req[0])
                   == MPI_SUCCESS ? 1 : 0;
    int k = 0;
    for (int off = 0; off < n; off += (int)piece) {
        int len = n - off < (int)piece ? n - off : (int)piece;
        if (MPI_Isend(blk + off, len, MPI_BYTE, j, off ? PDBP_TAG_MORE : PDBP_TAG_HEAD,
                      rt->comm, &req[k]) != MPI_SUCCESS) {
            /* cannot take back what is posted: wait for it, report failure */
            MPI_Waitall(k, req, MPI_STATUSES_IGNORE);
            return 0;
        }
        k++;
    }
    return k;
}

static void *sender_main(void *arg)
{
    struct pdbp_rt *rt = &pdbp_rt;
    (void)arg;
    uint32_t per = rt->cfg.piece ? (rt->cfg.block_size + rt->cfg.piece - 1) / rt->cfg.piece : 1;
    int cap = rt->nhosts * (int)rt->cfg.inflight * (int)per, nout = 0;
    MPI_Request *req = malloc((size_t)cap * sizeof(*req));
    struct sendreq *sr = malloc((size_t)cap * sizeof(*sr));
    int *idx = malloc((size_t)cap * sizeof(*idx));
    if (!req || !sr || !idx) {
        fprintf(stderr, "pdbp: host %d: no memory for a sender thread; it stops\n",
                rt->host);
        free(req); free(sr); free(idx);
        return NULL;
    }
    long wait_us = 0;                    /* back-off while blocks are in flight */
    pthread_mutex_lock(&rt->mu);
    while (!rt->stop_senders) {
        uint32_t s;
        int deferred = 0;
        int j = nout + (int)per <= cap ? pick_row(&s, &deferred) : -1;
        if (j >= 0) {
            struct pdbp_row *r = &rt->sm[j];
            if (rt->open[j] == (int)s)
                seal(j);                 /* idle link: ship the partial block */
            r->state[s] = PDBP_SLOT_BUSY;
            rt->row_busy[j] = 1;
            rt->credits[j]--;
            rt->unacked[j]++;
            rt->ack_t[j] = pdbp_now();
            if (++rt->inflight[j] > rt->st.max_inflight)
                rt->st.max_inflight = rt->inflight[j];
            uint8_t *blk = pdbp_row_block(r, &rt->umb, s);
            int n = (int)r->fill[s];
            pthread_mutex_unlock(&rt->mu);
            double t0 = pdbp_now();
            int k = post_block(j, blk, n, &req[nout]);
            pthread_mutex_lock(&rt->mu);
            rt->row_busy[j] = 0;
            if (!k) {
                fprintf(stderr, "pdbp: host %d: MPI_Isend to host %d failed\n",
                        rt->host, j);
                rt->inflight[j]--;
                pdbp_row_done(r, s);
                pthread_cond_broadcast(&rt->cv_space);
            } else {
                r->refs[s] = (uint32_t)k;
                for (int i = 0; i < k; i++)
                    sr[nout++] = (struct sendreq){ .row = j, .slot = s, .n = n, .t0 = t0 };
            }
            wait_us = 0;
            continue;
        }
        if (!nout && !deferred) {
            pthread_cond_wait(&rt->cv_send, &rt->mu);
            continue;
        }
        /* blocks in flight: see which are done (MPI outside the lock) */
        int ndone = 0, rc = MPI_SUCCESS;
        pthread_mutex_unlock(&rt->mu);
        if (nout)
            rc = MPI_Testsome(nout, req, &ndone, idx, MPI_STATUSES_IGNORE);
        double now = pdbp_now();
        pthread_mutex_lock(&rt->mu);
        if (rc != MPI_SUCCESS || ndone == MPI_UNDEFINED) {
            fprintf(stderr, "pdbp: host %d: MPI_Testsome failed (%d)\n", rt->host, rc);
            ndone = 0;
        }
        for (int k = 0; k < ndone; k++) {
            struct sendreq *q = &sr[idx[k]];
            struct pdbp_row *r = &rt->sm[q->row];
            if (--r->refs[q->slot] == 0) {   /* the block's last piece */
                rt->st.blocks_sent++;
                rt->st.block_bytes_sent += (uint64_t)q->n;
                rt->st.send_mpi_s += now - q->t0;
                rt->inflight[q->row]--;
                pdbp_row_done(r, q->slot);
            }
            q->row = -1;
        }
        if (ndone > 0) {
            int m = 0;                   /* compact, keeping posting order */
            for (int k = 0; k < nout; k++)
                if (sr[k].row >= 0) {
                    sr[m] = sr[k];
                    req[m++] = req[k];
                }
            nout = m;
            wait_us = 0;
            pthread_cond_broadcast(&rt->cv_space);
            continue;
        }
        /* nothing done: wait for new work or a little while, then test again
         * (a deferred partial block: the idle time it waits for) */
        wait_us = wait_us ? (wait_us * 2 > 1000 ? 1000 : wait_us * 2) : 20;
        if (deferred == 1 && wait_us > PDBP_PARTIAL_IDLE_S * 1e6)
            wait_us = (long)(PDBP_PARTIAL_IDLE_S * 1e6);
        struct timespec dl;
        clock_gettime(CLOCK_REALTIME, &dl);
        dl.tv_nsec += wait_us * 1000;
        if (dl.tv_nsec >= 1000000000L) {
            dl.tv_sec++;
            dl.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&rt->cv_send, &rt->mu, &dl);
    }
    pthread_mutex_unlock(&rt->mu);
    if (nout) {
        /* pdbp_finalize drained the sub-pools first, so this is only after a
         * drain that timed out: finish the sends rather than leave them */
        MPI_Waitall(nout, req, MPI_STATUSES_IGNORE);
        pthread_mutex_lock(&rt->mu);
        for (int k = 0; k < nout; k++) {
            struct pdbp_row *r = &rt->sm[sr[k].row];
            if (--r->refs[sr[k].slot] == 0) {
                rt->inflight[sr[k].row]--;
                pdbp_row_done(r, sr[k].slot);
            }
        }
        pthread_mutex_unlock(&rt->mu);
    }
    free(req); free(sr); free(idx);
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

/* Block receives are posted ahead (MPI_Imrecv into the acquired element of
 * the source's receive sub-pool) so that a rendezvous block's answer leaves
 * at once and blocks from several hosts arrive at the same time; each is
 * validated and handed to the GPs when it is complete, in posting order per
 * source (which is the order that host sent them). Receiver thread only. */
struct rpost {
    MPI_Request *req;        /* [row_cap] ring, posting order */
    uint32_t *slot;
    int *n;
    double *t0;
    uint32_t head, cnt;
};
static struct rpost *rpost;  /* [nhosts] */
static uint32_t rposted;     /* receives posted, all rows */

/* A block arriving in pieces (HEAD, MORE...) from one host: its element,
 * its length from the head's header, bytes in so far. */
struct rasm {
    int active;
    uint32_t slot, total, got;
    double t0;
};
static struct rasm *rasm;    /* [nhosts] */

static int rpost_alloc(void)
{
    struct pdbp_rt *rt = &pdbp_rt;
    uint32_t c = rt->cfg.row_cap;
    rpost = calloc((size_t)rt->nhosts, sizeof(*rpost));
    rasm = calloc((size_t)rt->nhosts, sizeof(*rasm));
    if (!rpost || !rasm)
        return -1;
    for (int i = 0; i < rt->nhosts; i++) {
        struct rpost *p = &rpost[i];
        p->req = malloc(c * sizeof(*p->req));
        p->slot = malloc(c * sizeof(*p->slot));
        p->n = malloc(c * sizeof(*p->n));
        p->t0 = malloc(c * sizeof(*p->t0));
        if (!p->req || !p->slot || !p->n || !p->t0)
            return -1;
    }
    rposted = 0;
    return 0;
}

static void rpost_free(void)
{
    free(rasm);
    rasm = NULL;
    if (!rpost)
        return;
    for (int i = 0; i < pdbp_rt.nhosts; i++) {
        free(rpost[i].req); free(rpost[i].slot); free(rpost[i].n); free(rpost[i].t0);
    }
    free(rpost);
    rpost = NULL;
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
    struct rpost *p = &rpost[src];
    pthread_mutex_lock(&rt->mu);
    int s = pdbp_row_acquire(r, &rt->umb, rt->cfg.threshold);
    uint32_t grown = r->last.checked ? r->last.added : 0;
    pthread_mutex_unlock(&rt->mu);
    if (s < 0 || p->cnt >= rt->cfg.row_cap) {
        discard(msg);
        pdbp_reject(src, "data message", "sender exceeded its credits");
        return;
    }
    uint8_t *blk = pdbp_row_block(r, &rt->umb, (uint32_t)s);
    uint32_t at = (p->head + p->cnt) % rt->cfg.row_cap;
    p->slot[at] = (uint32_t)s;
    p->n[at] = n;
    p->t0[at] = pdbp_now();
    if (MPI_Imrecv(blk, n, MPI_BYTE, msg, &p->req[at]) != MPI_SUCCESS) {
        pthread_mutex_lock(&rt->mu);
        unacquire(r, (uint32_t)s);
        pthread_mutex_unlock(&rt->mu);
        pdbp_reject(src, "data message", "MPI_Imrecv failed");
    } else {
        p->cnt++;
        rposted++;
        if (p->cnt > rt->st.max_recv_posted)   /* written by this thread only */
            __atomic_store_n(&rt->st.max_recv_posted, p->cnt, __ATOMIC_RELAXED);
    }
    send_credits(src, grown);                  /* elements the row just gained */
}

/* A posted block receive is complete: validate it, hand its records to the
 * GPs (or give the element back if it is rejected). */
static void on_block(int src, uint32_t s, int n, double dt)
{
    struct pdbp_rt *rt = &pdbp_rt;
    struct pdbp_row *r = &rt->rm[src];
    uint8_t *blk = pdbp_row_block(r, &rt->umb, s);
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
        unacquire(r, s);
    } else {
        r->legit[s] = 1;
        r->state[s] = PDBP_SLOT_BUSY;
        r->refs[s] = demux(src, s, &m);
        rt->st.recv_msgs += r->refs[s];
        if (!r->refs[s])
            freed = pdbp_row_done(r, s);
    }
    pthread_mutex_unlock(&rt->mu);
    if (!ok)
        pdbp_reject(src, "data message", why);
    send_credits(src, freed);
}

/* Complete the posted receives that are done, oldest first per source;
 * wait for all of them when `all`. Returns the number completed. */
static int complete_posted(int all)
{
    struct pdbp_rt *rt = &pdbp_rt;
    int done = 0;
    for (int i = 0; i < rt->nhosts && rposted; i++) {
        struct rpost *p = &rpost[i];
        while (p->cnt) {
            uint32_t h = p->head;
            int flag = 0;
            MPI_Status st;
            if (all)
                flag = MPI_Wait(&p->req[h], &st) == MPI_SUCCESS;
            else if (MPI_Test(&p->req[h], &flag, &st) != MPI_SUCCESS)
                flag = 0;
            if (!flag)
                break;
            p->head = (h + 1) % rt->cfg.row_cap;
            p->cnt--;
            rposted--;
            on_block(i, p->slot[h], p->n[h], pdbp_now() - p->t0[h]);
            done++;
        }
    }
    return done;
}

/* Queue a block that is already in its element (assembled from pieces)
 * behind the receives posted before it, so per-source order holds. */
static void push_done(int src, uint32_t s, int n, double t0)
{
    struct rpost *p = &rpost[src];
    uint32_t at = (p->head + p->cnt) % pdbp_rt.cfg.row_cap;
    p->slot[at] = s;
    p->n[at] = n;
    p->t0[at] = t0;
    p->req[at] = MPI_REQUEST_NULL;   /* MPI_Test says complete at once */
    p->cnt++;
    rposted++;
    if (p->cnt > pdbp_rt.st.max_recv_posted)   /* written by this thread only */
        __atomic_store_n(&pdbp_rt.st.max_recv_posted, p->cnt, __ATOMIC_RELAXED);
}

/* Give up a block being assembled from src (its element back, no credit). */
static void asm_abort(int src, const char *why)
{
    struct pdbp_rt *rt = &pdbp_rt;
    struct rasm *a = &rasm[src];
    pthread_mutex_lock(&rt->mu);
    unacquire(&rt->rm[src], a->slot);
    pthread_mutex_unlock(&rt->mu);
    a->active = 0;
    pdbp_reject(src, "data block", why);
}

/* The first piece of a block: its header gives the block's length. The
 * whole block is validated as usual once all pieces are in. */
static void on_head(int src, int n, MPI_Message *msg)
{
    struct pdbp_rt *rt = &pdbp_rt;
    if (rasm[src].active)
        asm_abort(src, "block cut short by the next one");
    if (src == rt->host || n > (int)rt->cfg.block_size || n < PDBP_HDR_LEN) {
        discard(msg);
        pdbp_reject(src, "data piece", src == rt->host ? "data from this host to itself" :
                    n < PDBP_HDR_LEN ? "head piece shorter than a header" :
                    "larger than a block");
        return;
    }
    struct pdbp_row *r = &rt->rm[src];
    pthread_mutex_lock(&rt->mu);
    int s = pdbp_row_acquire(r, &rt->umb, rt->cfg.threshold);
    uint32_t grown = r->last.checked ? r->last.added : 0;
    pthread_mutex_unlock(&rt->mu);
    if (s < 0 || rpost[src].cnt >= rt->cfg.row_cap) {
        discard(msg);
        pdbp_reject(src, "data piece", "sender exceeded its credits");
        return;
    }
    uint8_t *blk = pdbp_row_block(r, &rt->umb, (uint32_t)s);
    MPI_Status st;
    double t0 = pdbp_now();
    MPI_Mrecv(blk, n, MPI_BYTE, msg, &st);
    uint32_t body = (uint32_t)blk[4] | (uint32_t)blk[5] << 8 | (uint32_t)blk[6] << 16 |
                    (uint32_t)blk[7] << 24;
    uint64_t total = PDBP_HDR_LEN + (uint64_t)body;
    rasm[src] = (struct rasm){ .active = 1, .slot = (uint32_t)s, .total = (uint32_t)total,
                               .got = (uint32_t)n, .t0 = t0 };
    if (blk[0] != PDBP_MAGIC || blk[2] != PDBP_REMOTEMSG)
        asm_abort(src, "head piece is not a RemoteMsg");
    else if (total > rt->cfg.block_size || total <= (uint64_t)n)
        asm_abort(src, "head piece's length is not that of a larger block");
    send_credits(src, grown);
}

static void on_more(int src, int n, MPI_Message *msg)
{
    struct rasm *a = &rasm[src];
    if (!a->active || n <= 0 || (uint64_t)a->got + (uint64_t)n > a->total) {
        discard(msg);
        if (a->active)
            asm_abort(src, "piece past the block's end");
        else
            pdbp_reject(src, "data piece", "no block under way from this host");
        return;
    }
    struct pdbp_row *r = &pdbp_rt.rm[src];
    MPI_Status st;
    MPI_Mrecv(pdbp_row_block(r, &pdbp_rt.umb, a->slot) + a->got, n, MPI_BYTE, msg, &st);
    a->got += (uint32_t)n;
    if (a->got == a->total) {
        a->active = 0;
        push_done(src, a->slot, (int)a->total, a->t0);
    }
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
            if (rposted && complete_posted(0)) {
                idle = 0;
                continue;
            }
            /* back off so the host leaves the cores to the work (and, on an
             * emulated cluster, to the kernel moving the bytes): a few yields,
             * then 50 us naps (about 2 s of them), then 500 us (not while
             * block receives are under way) */
            struct timespec ts = { 0, idle < 100 ? 0 : idle < 20000 || rposted ? 50000 : 500000 };
            if (ts.tv_nsec)
                nanosleep(&ts, NULL);
            else
                sched_yield();
            idle++;
            continue;
        }
        idle = 0;
        if (rposted)
            complete_posted(0);
        MPI_Get_count(&st, MPI_BYTE, &n);
        if (st.MPI_TAG == PDBP_TAG_DATA)
            on_data(st.MPI_SOURCE, n, &msg);
        else if (st.MPI_TAG == PDBP_TAG_CTRL)
            on_ctrl_msg(st.MPI_SOURCE, n, &msg);
        else if (st.MPI_TAG == PDBP_TAG_HEAD)
            on_head(st.MPI_SOURCE, n, &msg);
        else if (st.MPI_TAG == PDBP_TAG_MORE)
            on_more(st.MPI_SOURCE, n, &msg);
        else {
            discard(&msg);
            pdbp_reject(st.MPI_SOURCE, "message", "unknown tag");
        }
    }
    /* every host has stopped sending: what is posted has arrived or will */
    complete_posted(1);
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
    if (rpost_alloc()) {
        rpost_free();
        return PDBP_E_NOMEM;
    }
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
    rpost_free();
}

int pdbp_test_inject(int host, int tag, const void *buf, size_t n)
{
    return MPI_Send(buf, (int)n, MPI_BYTE, host, tag, pdbp_rt.comm) == MPI_SUCCESS
               ? PDBP_OK : PDBP_E_MPI;
}

/* Test hook: while on, sender threads post no block, so ready blocks pile
 * up; turned off, they are posted back to back (up to the in-flight limit
 * and the credits) before any completion is looked at. */
void pdbp_test_hold_senders(int on)
{
    pthread_mutex_lock(&pdbp_rt.mu);
    pdbp_rt.hold_senders = on;
    pthread_cond_broadcast(&pdbp_rt.cv_send);
    pthread_mutex_unlock(&pdbp_rt.mu);
}
