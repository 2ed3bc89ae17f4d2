// SPDX-License-Identifier: BSD-3-Clause
/* Trace mode: after each handled blocking collective, guard the receive
 * sub-messages (PROT_NONE) and the send buffer (read-only), and record when
 * the code after the call first touches each one. The first
 * TNBC_TRACE_MAX_CALLS invocations of every call site are traced; later
 * ones only counted. Records go to DIR/rank-NNNNNN.db (docs/schema.md). */
#include "callsite.h"
#include "comm_shape.h"
#include "crowding.h"
#include "clock.h"
#include "config.h"
#include "event_ring.h"
#include "guard_keys.h"
#include "intercept.h"
#include "runinfo.h"
#include "tracedb.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>

const char tnbc_mode_name[] = "tnbc trace";

enum { RECV, SEND };
static const char *const side_name[2] = { "recv", "send" };

/* A traced call's lifecycle (under T.lock):
 *
 *   after_call --> LIVE (on T.live), and ARMED too (on T.armed) where a
 *                  guard could be armed
 *   ARMED --every sub-message open, not T.last (retire_open_calls)-->
 *          RETIRED: guards disarmed, off T.armed
 *   LIVE, not ARMED, not T.last --flush--> row written, freed
 *   finalize: every ARMED call disarmed, then flushed
 *
 * Invariant: tc->in_armed exactly when tc is on T.armed; a freed call
 * never is. */
struct traced_call {
    int64_t call_id;
    struct tnbc_call_layout layout;
    struct tnbc_guard guard[2];
    atomic_int next_ord;
    struct traced_call *next;        /* T.live */
    struct traced_call *armed_next;  /* T.armed, while in_armed */
    int in_armed;
    /* The row waits here for the next write (flush). */
    struct tnbc_call_row row;
    unsigned char *cover[2];        /* per side and sub: cover_name index */
    int recorded;
    /* The span from return to the rank's next handled collective: the
     * program's run that the model's terms come from (table fidelity). */
    uint64_t span_wall0, span_prog0;
    unsigned long span_dropped0;
    int64_t span_ns, observer_ns, dropped;
};

struct site_stats {
    const struct tnbc_site *site;
    enum tnbc_op op;
    int64_t calls, traced, total_ticks, bytes;
    int64_t unsafe;     /* calls whose datatype and op rule out an early return */
    int64_t unguardable;  /* traced calls whose receive buffer the guard may not
                             protect (a stack, shared, huge-page or RMA window memory) */
    int64_t stepped;    /* traced calls armed with single steps allowed on pages
                           whose sub-messages have none of their own */
    int dirty;
};

static struct {
    int on;
    int rank;
    long max_calls;
    int chunks;
    int guard_send;
    long step_calls;    /* TNBC_TRACE_STEP_CALLS */
    long tail_calls;    /* TNBC_TRACE_TAIL_CALLS */
    struct tnbc_db *db;
    struct traced_call *live;       /* every call not yet freed, newest first */
    struct traced_call *armed;      /* those of them with a guard armed */
    struct tnbc_site_table stats;   /* of struct site_stats */
    unsigned long dropped_reported;
    struct traced_call *last;       /* its span is still open */
    uint64_t flush_ticks, last_flush;  /* TNBC_TRACE_FLUSH_MS in ticks; when */
    pthread_mutex_t lock;     /* one writer of all the above at a time */
} T = { .lock = PTHREAD_MUTEX_INITIALIZER };

int tnbc_mode_thread_level(int required) { return required; }

/* Before any thread exists (MPI_Init starts some), so that every thread
 * allows the keys the trace closes pages with (guard_keys.h). */
__attribute__((constructor)) static void take_keys(void) { tnbc_gkeys_reserve(); }

int tnbc_mode_init(int provided)
{
    struct tnbc_run_info info;
    const char *dir;
    (void)provided;

    tnbc_clock_init();
    T.max_calls = tnbc_env_long("TNBC_TRACE_MAX_CALLS", 8, 0, 1L << 40);
    T.chunks = (int)tnbc_env_long("TNBC_CHUNKS", 4, 1, 64);
    /* Send buffers only on request: their first writes are shown by the
     * timeline but used by no decision (the analyzer orders by receive
     * touches), and guarding them doubled a traced call's faults. */
    T.guard_send = tnbc_env_bool("TNBC_TRACE_SEND", 0);
    T.step_calls = tnbc_env_long("TNBC_TRACE_STEP_CALLS", 2, 0, 1L << 40);
    T.tail_calls = tnbc_env_long("TNBC_TRACE_TAIL_CALLS", 2, 0, 1L << 40);
    T.flush_ticks = (uint64_t)((double)tnbc_env_long("TNBC_TRACE_FLUSH_MS", 100, 0, 1L << 30) *
                               1e-3 * tnbc_ticks_hz());
    dir = tnbc_env_str("TNBC_TRACE_DIR", "tnbc-trace");
    tnbc_runinfo_collect(&info, "trace");
    /* Collective, at every rank's MPI_Init: the analyzer's crowded-machine
     * rule reads it (crowding.h); on failure the row says "not counted". */
    struct crowding crowd;
    if (crowding_measure(MPI_COMM_WORLD, &crowd) == 0) {
        info.machine_ranks = crowd.ranks;
        info.machine_cpus = crowd.cpus;
    } else if (info.rank == 0) {
        tnbc_warn("cannot count the ranks per machine; the trace leaves it unknown");
    }
    T.rank = info.rank;
    /* Results are unaffected (the trace delays no data), but a freed
     * buffer keeps its guard: the allocator's writes into it count as the
     * program's touches. */
    if (tnbc_foreign_free() && info.rank == 0)
        tnbc_warn("warning: the program defines free() itself; a touch of a buffer after it was freed "
                  "may be the allocator's, recorded as the program's");
    T.db = tnbc_rank_db_open(dir, &info);
    if (!T.db) {
        tnbc_warn("tracing disabled: no trace database; collectives run unchanged");
        return 0;
    }
    char v[32];
    tnbc_db_begin(T.db);
    snprintf(v, sizeof v, "%d", T.chunks);
    tnbc_db_meta(T.db, "chunks", v);
    snprintf(v, sizeof v, "%ld", T.max_calls);
    tnbc_db_meta(T.db, "trace_max_calls", v);
    snprintf(v, sizeof v, "%ld", T.tail_calls);
    tnbc_db_meta(T.db, "trace_tail_calls", v);
    tnbc_db_commit(T.db);
    T.on = 1;
    return 1;
}

/* ---- fault-side: async-signal-safe ------------------------------------- */

static void on_guard_event(struct tnbc_guard *g, int sub, enum tnbc_guard_event ev,
                           enum tnbc_release_reason why, uint64_t tick)
{
    struct traced_call *tc = g->user;
    struct touch_event e = {
        .call = tc, .side = g == &tc->guard[SEND] ? SEND : RECV, .sub = sub,
        .ord = ev == TNBC_EV_RELEASE || ev == TNBC_EV_TAIL ? -1 : atomic_fetch_add(&tc->next_ord, 1),
        .tick = tick, .ev = (unsigned char)ev, .why = (unsigned char)why,
    };
    event_ring_push(&e);
}

/* ---- application side ---------------------------------------------------- */

static void store_event(const struct touch_event *e, void *arg)
{
    static const char *const how[] = { "read", "write", "access" };
    struct traced_call *tc = e->call;
    char release[32];
    (void)arg;
    if (e->ev == TNBC_EV_TAIL) {      /* after its first touch's row, in ring order */
        tnbc_db_touch_tail(T.db, tc->call_id, side_name[e->side], e->sub, (int64_t)e->tick);
        return;
    }
    if (e->ev == TNBC_EV_RELEASE) {
        /* Pages released because the trace ended, or because a neighbour was
         * touched past the re-arm limit, say nothing about the program. */
        if (e->why == TNBC_REL_FINALIZE || e->why == TNBC_REL_DONE)
            return;
        snprintf(release, sizeof release, "release:%s",
                 tnbc_release_reason_name((enum tnbc_release_reason)e->why));
    }
    tnbc_db_touch(T.db, tc->call_id, side_name[e->side], e->sub, e->ord, (int64_t)e->tick, e->ev == TNBC_EV_RELEASE ? release : how[e->ev]);
}

static void free_call(struct traced_call *tc)
{
    tnbc_guard_disarm(&tc->guard[RECV], TNBC_REL_DONE);
    tnbc_guard_disarm(&tc->guard[SEND], TNBC_REL_DONE);
    tnbc_layout_free(&tc->layout);
    free(tc->cover[RECV]);
    free(tc->cover[SEND]);
    free(tc);
}

/* Lifts the guards of traced calls whose every sub-message is open, so a
 * new call on the same memory can be guarded; their rows wait for the
 * batch (flush). An all-open guard has nothing left to release. Walks only
 * the calls still armed: T.live holds every call since the last flush (up
 * to TNBC_TRACE_FLUSH_MS of them), and walking it twice per traced call
 * made a traced 16 KiB call 1.6-1.8x a plain one with 1024 traced calls
 * against 1.4-1.5x with 32. */
static void retire_open_calls(void)
{
    for (struct traced_call **p = &T.armed; *p;) {
        struct traced_call *tc = *p;
        assert(tc->in_armed);
        if (tc != T.last && tnbc_guard_all_open(&tc->guard[RECV]) && tnbc_guard_all_open(&tc->guard[SEND])) {
            tnbc_guard_disarm(&tc->guard[RECV], TNBC_REL_DONE);
            tnbc_guard_disarm(&tc->guard[SEND], TNBC_REL_DONE);
            *p = tc->armed_next;
            tc->in_armed = 0;
        } else {
            p = &tc->armed_next;
        }
    }
}

static void write_dirty_sites(void)
{
    for (int i = 0; i < T.stats.nrows; i++) {
        struct site_stats *s = (struct site_stats *)T.stats.rows + i;
        if (!s->dirty || !s->site)
            continue;
        /* As replay's summary names that reason (docs/schema.md): the
         * analyzer turns such a site off. */
        char fallback[64] = "";
        int at = 0;
        if (s->unsafe)
            at = snprintf(fallback, sizeof fallback, "unsafe:%lld", (long long)s->unsafe);
        if (s->unguardable)
            snprintf(fallback + at, sizeof fallback - (size_t)at, "%sunguardable:%lld",
                     at ? " " : "", (long long)s->unguardable);
        struct tnbc_site_row row = {
            .rank = T.rank, .site = s->site->id, .module = s->site->module,
            .symbol = s->site->symbol, .op = tnbc_op_name(s->op), .offset = s->site->offset,
            .shape = tnbc_site_shape(s->site),
            .calls = s->calls, .traced = s->traced,
            .total_ns = (int64_t)tnbc_ticks_to_ns((uint64_t)s->total_ticks), .bytes = s->bytes,
            .fallback = fallback,
        };
        tnbc_db_site(T.db, &row);
        s->dirty = 0;
    }
}

static const char *const cover_names[] = { "guarded", "partial", "edge", "empty" };

/* Each sub's cover, kept past the guard's disarm for the batched write. */
static int keep_cover(struct traced_call *tc, int side)
{
    const struct tnbc_guard *g = &tc->guard[side];
    int n = g->layout->nsub;
    tc->cover[side] = malloc(n > 0 ? (size_t)n : 1);
    if (!tc->cover[side])
        return -1;
    for (int i = 0; i < n; i++)
        tc->cover[side][i] = g->armed ? g->cover[i]
                                      : g->layout->sub[i].bytes ? TNBC_COVER_EDGE : TNBC_COVER_EMPTY;
    return 0;
}

static void write_call(struct traced_call *tc)
{
    const struct tnbc_call_layout *l = &tc->layout;
    tc->call_id = tnbc_db_call(T.db, &tc->row);
    for (int side = RECV; side <= SEND; side++) {
        const struct tnbc_layout *lay = side == RECV ? &l->recv : &l->send;
        for (int i = 0; i < lay->nsub; i++)
            tnbc_db_submsg(T.db, tc->call_id, side_name[side], lay->sub[i].idx, lay->sub[i].peer,
                           (int64_t)lay->sub[i].offset, (int64_t)lay->sub[i].bytes,
                           tc->cover[side] ? cover_names[tc->cover[side][i]] : "edge");
    }
    tc->recorded = 1;
}

/* The calls' rows, oldest first (T.live is newest first). */
static void write_unrecorded(struct traced_call *tc)
{
    if (!tc)
        return;
    write_unrecorded(tc->next);
    if (!tc->recorded)
        write_call(tc);
}

static void write_fidelity(const struct traced_call *tc)
{
    struct tnbc_fidelity_row f = {
        .call_id = tc->call_id, .span_ns = tc->span_ns, .observer_ns = tc->observer_ns,
        .dropped = tc->dropped,
    };
    uint64_t refill = 0;
    for (int side = RECV; side <= SEND; side++) {
        f.faults += atomic_load(&tc->guard[side].faults);
        f.steps += atomic_load(&tc->guard[side].steps);
        refill += atomic_load(&tc->guard[side].refill_ticks);
    }
    f.refill_ns = (int64_t)tnbc_ticks_to_ns(refill);
    tnbc_db_fidelity(T.db, &f);
}

/* Closes the open span (clock.h: observer time is wall minus program). */
static void end_span(uint64_t wall, uint64_t prog)
{
    struct traced_call *tc = T.last;
    if (!tc)
        return;
    uint64_t w = wall - tc->span_wall0, p = prog - tc->span_prog0;
    tc->span_ns = (int64_t)tnbc_ticks_to_ns(w);
    tc->observer_ns = (int64_t)tnbc_ticks_to_ns(w > p ? w - p : 0);
    tc->dropped = (int64_t)(event_ring_dropped() - tc->span_dropped0);
    T.last = NULL;
}

/* The database is written in one transaction (the calls' rows, the touches
 * so far, the calls done with) at a traced call's return once
 * TNBC_TRACE_FLUSH_MS have passed since the last write (0: at every traced
 * call), when the event ring is half full, and at MPI_Finalize. Two
 * transactions (some 30 system calls) per call made an ordinary program's
 * traced calls several times slower than its plain ones (docs/trace.md);
 * a kill loses at most the last TNBC_TRACE_FLUSH_MS of records. */

/* When `now` or the ring is half full: write the waiting calls and
 * touches; forget traced calls whose every sub-message is open (nothing
 * more to learn from them), with their fidelity row. */
static void flush(int now, int write_sites)
{
    unsigned long dropped = event_ring_dropped();
    if (!now && event_ring_pending() < (int)(EVENT_RING_SLOTS / 2))
        return;
    T.last_flush = tnbc_ticks();
    tnbc_db_begin(T.db);
    write_unrecorded(T.live);
    event_ring_drain(store_event, NULL);
    if (write_sites)
        write_dirty_sites();
    if (dropped != T.dropped_reported) {
        tnbc_warn("%lu touch events dropped (event ring full)", dropped - T.dropped_reported);
        T.dropped_reported = dropped;
    }
    for (struct traced_call **p = &T.live; *p;) {
        struct traced_call *tc = *p;
        if (tc != T.last && !tc->in_armed) {     /* retired, or never armed */
            assert(!tc->guard[RECV].armed && !tc->guard[SEND].armed);
            *p = tc->next;
            write_fidelity(tc);
            free_call(tc);
        } else {
            p = &tc->next;
        }
    }
    tnbc_db_commit(T.db);
}

static struct site_stats *stats_for(const struct tnbc_site *site, enum tnbc_op op)
{
    T.stats.row_size = sizeof(struct site_stats);
    struct site_stats *s = tnbc_site_row(&T.stats, site);
    if (!s)
        return NULL;
    s->site = site;
    s->op = op;
    return s;
}

static void record_call(struct traced_call *tc, const struct tnbc_args *a, const char *site,
                        int invocation, uint64_t entry, uint64_t ret)
{
    const struct tnbc_call_layout *l = &tc->layout;
    tc->row = (struct tnbc_call_row){
        .rank = T.rank, .site = site, .invocation = invocation, .op = tnbc_op_name(a->op),
        .comm_size = l->comm_size, .comm_rank = l->comm_rank, .root = a->root,
        .send_type_size = l->send_type_size, .recv_type_size = l->recv_type_size,
        .send_bytes = (int64_t)l->send.bytes, .recv_bytes = (int64_t)l->recv.bytes,
        .block_bytes = l->recv.nsub ? l->recv.block_bytes : 0, .nsub = l->recv.nsub,
        .chunks = l->chunks, .entry_tsc = (int64_t)entry, .return_tsc = (int64_t)ret,
    };
    tc->span_ns = -1;
    if (keep_cover(tc, RECV) != 0 || keep_cover(tc, SEND) != 0)
        tnbc_warn("out of memory: cover of call %d at %s recorded as edge", invocation, site);
}

/* Single steps are what a traced call of sub-page blocks costs (tens of
 * microseconds each, thousands per call when the code reads a block byte
 * by byte: a text alltoall of 4000 B blocks parsed with strtod took
 * 2,200-8,200 steps, about 175 ms, in every traced call). A site's first
 * TNBC_TRACE_STEP_CALLS calls that can step give the exact order on shared
 * pages; later ones record, on each shared page, the sub-message touched
 * first there and release the others (`limit`). */
static void arm(struct traced_call *tc, int side, struct site_stats *st, int invocation)
{
    struct tnbc_guard *g = &tc->guard[side];
    g->layout = side == RECV ? &tc->layout.recv : &tc->layout.send;
    g->closed_prot = side == RECV ? PROT_NONE : PROT_READ;
    g->flags = GUARD_PRETOUCH;      /* the program's reads keep their pace */
    /* Receive side: a site's first TNBC_TRACE_TAIL_CALLS traced calls see
     * tails (guard.h), closed with mprotect (a keyed guard cannot keep a
     * tail closed); the later ones, whose tails the analysis takes from
     * those (analyzer.h, struct an_tails), see none and close with keys
     * where they work. A tail costs a fault and two mprotects per block
     * (docs/trace.md, "Cost"). */
    if (side == RECV) {
        if (invocation < T.tail_calls) {
            g->flags |= GUARD_TAIL;
            if (g->layout->base && tnbc_gkeys_kept())
                /* An earlier keyed call's keys kept on these pages go
                 * first: a keyed arm that took their key back later would
                 * give them key 0 read-write, opening this guard's closed
                 * pages. */
                tnbc_gkeys_released(g->layout->base, g->layout->span, 0);
        } else {
            g->flags |= GUARD_KEYS;
        }
    }
    if (st->stepped >= T.step_calls)
        g->flags |= GUARD_NO_STEP;
    g->hook = on_guard_event;
    g->user = tc;
    if (g->layout->nsub && tnbc_guard_arm(g) < 0)
        g->armed = 0;       /* overlaps the other side: leave it unguarded */
    if (side == RECV && !(g->flags & GUARD_NO_STEP) && tnbc_guard_may_step(g))
        st->stepped++;
}

/* Bookkeeping after the real call: counts, and for a traced invocation the
 * guards and the call's row. */
static int after_call(const struct tnbc_args *a, const struct tnbc_site *site,
                      struct site_stats *st, struct traced_call *tc, int rc, int invocation,
                      uint64_t entry, uint64_t ret)
{
    if (st) {         /* (its call was counted at entry) */
        st->total_ticks += (int64_t)(ret - entry);
        st->dirty = 1;
    }
    if (!tc)
        return rc;
    if (rc != MPI_SUCCESS) {
        tnbc_layout_free(&tc->layout);
        free(tc);
        return rc;
    }
    st->traced++;
    st->bytes += (int64_t)tc->layout.recv.bytes;
    arm(tc, RECV, st, invocation);
    /* Memory the guard refused (replay runs such calls blocking too): no
     * read of it is seen, and its calls would look like calls whose data
     * all sits in edge pages. Counted, so that the analyzer can say why
     * such a site stays off. */
    if (tc->guard[RECV].refused)
        st->unguardable++;
    tc->guard[SEND].layout = &tc->layout.send;   /* read by record_call even when unarmed */
    if (T.guard_send)
        arm(tc, SEND, st, invocation);
    record_call(tc, a, site->id, invocation, entry, ret);
    tc->next = T.live;
    T.live = tc;
    if (tc->guard[RECV].armed || tc->guard[SEND].armed) {
        tc->armed_next = T.armed;
        T.armed = tc;
        tc->in_armed = 1;
    }
    T.last = tc;            /* its span starts at return */
    flush(tnbc_ticks() - T.last_flush >= T.flush_ticks, 1);
    return rc;
}

int tnbc_mode_collective(const struct tnbc_args *a, void *caller)
{
    const struct tnbc_site *site;
    struct site_stats *st;
    struct traced_call *tc = NULL;
    const char *why;
    uint64_t entry, ret;
    int rc, invocation;

    if (!T.on)
        return tnbc_pmpi_collective(a);
    /* The trace's own work before and after the real call is not the
     * program's: it is taken out of program time (clock.h). Under
     * MPI_THREAD_MULTIPLE several threads get here at once: the trace's
     * state (sites, live calls, the event ring's consumer, the database's
     * transactions) has one writer at a time, and the lock is not held
     * across the real call (threads' collectives on different
     * communicators must be able to run at the same time). */
    uint64_t own = tnbc_ticks();
    pthread_mutex_lock(&T.lock);
    end_span(own, tnbc_program_ticks());
    retire_open_calls();
    flush(0, 0);
    site = tnbc_site_on(caller, a->comm);
    st = stats_for(site, a->op);
    /* The invocation number is taken (and counted) here, under the lock:
     * two threads at one site get different ones, and no more than
     * TNBC_TRACE_MAX_CALLS are traced. */
    invocation = st ? (int)st->calls++ : 0;
    if (st && !tnbc_call_form_transformable(a, &why))
        st->unsafe++;
    if (st && invocation < T.max_calls) {
        tc = calloc(1, sizeof *tc);
        if (tc && tnbc_layout_build(a, T.chunks, &tc->layout, &why) != 0) {
            static int warned;
            tnbc_warn_once(warned, "%s at %s not traced: %s", tnbc_op_name(a->op), site->id, why);
            free(tc);
            tc = NULL;
        }
    }
    if (tc) {
        tnbc_guard_release_layout(&tc->layout, TNBC_REL_REUSE);
        /* Earlier calls whose last closed pages that opened are done:
         * their guards go now, so that this call's can be armed on the
         * same memory. Left until the next call, they made every other
         * call of a site whose blocks the program does not all read go
         * unguarded (a gatherv whose root reads one block: 4 of 8 traced
         * calls, and the analyzer took them for calls never read). */
        retire_open_calls();
    }
    tnbc_gkeys_collective();    /* keys past the traced calls go (guard_keys.h) */
    if (!tc && tnbc_guard_active()) {
        struct tnbc_call_layout l;
        if (tnbc_layout_build(a, 1, &l, &why) == 0) {
            tnbc_guard_release_layout(&l, TNBC_REL_REUSE);
            tnbc_layout_free(&l);
        }
    }
    pthread_mutex_unlock(&T.lock);
    tnbc_ticks_lost_since(own, 0);
    entry = tnbc_program_ticks();
    rc = tnbc_pmpi_collective(a);
    ret = tnbc_program_ticks();
    own = tnbc_ticks();
    pthread_mutex_lock(&T.lock);
    st = stats_for(site, a->op);     /* the table may have grown meanwhile */
    rc = after_call(a, site, st, tc, rc, invocation, entry, ret);
    pthread_mutex_unlock(&T.lock);
    tnbc_ticks_lost_since(own, 0);
    if (tc) {
        pthread_mutex_lock(&T.lock);
        if (T.last == tc) {        /* after_call kept it: its span starts */
            tc->span_wall0 = tnbc_ticks();
            tc->span_prog0 = tnbc_program_ticks();
            tc->span_dropped0 = event_ring_dropped();
        }
        pthread_mutex_unlock(&T.lock);
    }
    return rc;
}

void tnbc_mode_quiesce(MPI_Comm *comm)
{
    (void)comm;          /* trace mode has nothing in flight */
}

void tnbc_mode_finalize(void)
{
    if (!T.on)
        return;
    pthread_mutex_lock(&T.lock);
    end_span(tnbc_ticks(), tnbc_program_ticks());
    for (struct traced_call *tc = T.armed; tc; tc = tc->armed_next) {
        tnbc_guard_disarm(&tc->guard[RECV], TNBC_REL_FINALIZE);
        tnbc_guard_disarm(&tc->guard[SEND], TNBC_REL_FINALIZE);
        tc->in_armed = 0;
    }
    T.armed = NULL;
    tnbc_gkeys_forget_all();
    for (int i = 0; i < T.stats.nrows; i++) {
        struct site_stats *s = (struct site_stats *)T.stats.rows + i;
        s->dirty = s->site != NULL;
    }
    flush(1, 1);
    tnbc_db_begin(T.db);
    /* How receive pages were closed (docs/trace.md, "Cost"). */
    tnbc_db_meta(T.db, "trace_guard", tnbc_gkeys_summary());
    tnbc_db_run_finished(T.db, T.rank);
    tnbc_db_commit(T.db);
    tnbc_db_close(T.db);
    T.db = NULL;
    T.on = 0;
    pthread_mutex_unlock(&T.lock);
}
