// SPDX-License-Identifier: BSD-3-Clause
#include "activity.h"
#include "clock.h"
#include "config.h"
#include "nbop.h"
#include "tracedb.h"

#include <sqlite3.h>
#include <stdatomic.h>
#include <stdlib.h>

enum kind { K_ARRIVAL, K_WAIT, K_PROGRESS };

struct event {
    uint64_t call_entry;     /* the call's entry tick: its key until written */
    uint64_t t0, t1;         /* ticks; an arrival has t0 == t1 */
    int64_t bytes;
    int32_t piece, idx, peer;
    uint8_t kind, how;       /* arrival: 1 = by the caller; wait: enum tnbc_guard_event */
};

static struct {
    struct event *ev;
    long cap;
    atomic_long next;        /* slots claimed, dropped ones included */
    atomic_int on;
    uint64_t pass_t0, span_t0, span_t1;   /* progress thread only */
    int span_open;
} A;

void activity_init(void)
{
    A.cap = tnbc_env_long("TNBC_REPLAY_ACTIVITY_MAX", 65536, 0, 1L << 26);
    A.ev = calloc((size_t)(A.cap ? A.cap : 1), sizeof *A.ev);
    if (!A.ev) {
        tnbc_warn("no memory for the summary's activity (%ld events); it is left out", A.cap);
        return;
    }
    atomic_store(&A.next, 0);
    atomic_store(&A.on, 1);
}

/* A slot, or NULL when the buffer is full (counted: next passes cap). */
static struct event *claim(void)
{
    long i = atomic_fetch_add(&A.next, 1);
    return i < A.cap ? &A.ev[i] : NULL;
}

void activity_arrival(const struct nbop *op, int sub)
{
    if (!atomic_load_explicit(&A.on, memory_order_relaxed) || !op->record || sub < 0)
        return;
    uint64_t now = tnbc_ticks();
    struct event *e = claim();
    if (!e)
        return;
    const struct tnbc_submsg *s = &nbop_guard_layout(op)->sub[sub];
    *e = (struct event){ .call_entry = op->entry_tick, .t0 = now, .t1 = now,
                         .bytes = (int64_t)s->bytes, .piece = sub, .idx = s->idx,
                         .peer = s->peer, .kind = K_ARRIVAL, .how = sub == op->self_piece };
}

void activity_wait(const struct nbop *op, int sub, enum tnbc_guard_event ev, uint64_t t0_ns)
{
    if (!atomic_load_explicit(&A.on, memory_order_relaxed) || !op->record)
        return;
    /* The start in ticks: now less the nanoseconds waited. */
    uint64_t now = tnbc_ticks(), ns = tnbc_ns_now() - t0_ns;
    uint64_t waited = (uint64_t)((double)ns * tnbc_ticks_hz() / 1e9);
    struct event *e = claim();
    if (!e)
        return;
    const struct tnbc_submsg *s = &nbop_guard_layout(op)->sub[sub];
    *e = (struct event){ .call_entry = op->entry_tick, .t0 = waited < now ? now - waited : 0,
                         .t1 = now, .bytes = (int64_t)s->bytes, .piece = sub, .idx = s->idx,
                         .peer = s->peer, .kind = K_WAIT, .how = (uint8_t)ev };
}

void activity_pass_begin(void)
{
    if (atomic_load_explicit(&A.on, memory_order_relaxed))
        A.pass_t0 = tnbc_ticks();
}

void activity_pass_end(int progressed, int more)
{
    if (!atomic_load_explicit(&A.on, memory_order_relaxed))
        return;
    if (progressed) {
        if (!A.span_open)
            A.span_t0 = A.pass_t0;
        A.span_open = 1;
        A.span_t1 = tnbc_ticks();
    }
    if (A.span_open && (!progressed || !more)) {
        struct event *e = claim();
        if (e)
            *e = (struct event){ .t0 = A.span_t0, .t1 = A.span_t1, .kind = K_PROGRESS };
        A.span_open = 0;
    }
}

static const char *const wait_how[] = {
    [TNBC_EV_READ] = "read", [TNBC_EV_WRITE] = "write", [TNBC_EV_ACCESS] = "access",
    [TNBC_EV_RELEASE] = "release",
};

/* Tied to the call row by rank and entry tick; an event whose call has no
 * row (none should: only recorded calls have events) is left out. */
static const char *const insert_sql[] = {
    [K_ARRIVAL] = "INSERT INTO arrival(call_id, piece, idx, peer, bytes, tsc, by)"
                  " SELECT call_id, ?3, ?4, ?5, ?6, ?7, ?9 FROM call"
                  " WHERE rank = ?1 AND entry_tsc = ?2 AND wait_ns >= 0",
    [K_WAIT] = "INSERT INTO fault_wait(call_id, piece, idx, peer, bytes, start_tsc, end_tsc, how)"
               " SELECT call_id, ?3, ?4, ?5, ?6, ?7, ?8, ?9 FROM call"
               " WHERE rank = ?1 AND entry_tsc = ?2 AND wait_ns >= 0",
    [K_PROGRESS] = "INSERT INTO progress(rank, start_tsc, end_tsc) VALUES (?1, ?7, ?8)",
};

static int write_event(sqlite3_stmt *st, const struct event *e, int rank)
{
    sqlite3_bind_int(st, 1, rank);
    sqlite3_bind_int64(st, 2, (int64_t)e->call_entry);
    sqlite3_bind_int(st, 3, e->piece);
    sqlite3_bind_int(st, 4, e->idx);
    sqlite3_bind_int(st, 5, e->peer);
    sqlite3_bind_int64(st, 6, e->bytes);
    sqlite3_bind_int64(st, 7, (int64_t)e->t0);
    sqlite3_bind_int64(st, 8, (int64_t)e->t1);
    const char *how = e->kind == K_ARRIVAL ? (e->how ? "caller" : "progress") :
                      e->how < sizeof wait_how / sizeof *wait_how ? wait_how[e->how] : "?";
    sqlite3_bind_text(st, 9, how, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : -1;
}

void activity_write(struct tnbc_db *db, int rank)
{
    if (!atomic_exchange(&A.on, 0))
        return;
    sqlite3 *h = tnbc_db_handle(db);
    sqlite3_stmt *st[3] = { NULL, NULL, NULL };
    long n = atomic_load(&A.next), kept = n < A.cap ? n : A.cap;
    int ok = 1;
    for (int k = 0; k < 3; k++)
        ok &= sqlite3_prepare_v2(h, insert_sql[k], -1, &st[k], NULL) == SQLITE_OK;
    for (long i = 0; ok && i < kept; i++)
        ok = write_event(st[A.ev[i].kind], &A.ev[i], rank) == 0;
    sqlite3_stmt *sum = NULL;
    ok = ok && sqlite3_prepare_v2(h, "INSERT OR REPLACE INTO activity(rank, events, dropped)"
                                     " VALUES (?1, ?2, ?3)", -1, &sum, NULL) == SQLITE_OK;
    if (ok) {
        sqlite3_bind_int(sum, 1, rank);
        sqlite3_bind_int64(sum, 2, kept);
        sqlite3_bind_int64(sum, 3, n - kept);
        ok = sqlite3_step(sum) == SQLITE_DONE;
    }
    if (!ok)
        tnbc_warn("replay summary: cannot write the activity tables: %s", sqlite3_errmsg(h));
    sqlite3_finalize(sum);
    for (int k = 0; k < 3; k++)
        sqlite3_finalize(st[k]);
    free(A.ev);
    A.ev = NULL;
}
