// SPDX-License-Identifier: BSD-3-Clause
/* Per-step timing of the early return (phases.h). The current record is
 * per thread; the sums are written by the thread that holds the runtime
 * (the application's, one at a time: replay.c's token). Always on: a clock
 * read costs ~20 ns, against ~0.1 ms for the cheapest early return. */
#include "phases.h"

#include "clock.h"
#include "config.h"
#include "land.h"
#include "tracedb.h"

#include <sqlite3.h>
#include <stdio.h>

static _Thread_local uint64_t current[PHASE_COUNT];
static struct phase_sums rank_sums;
static int64_t rank_in_place;      /* early returns that sent from the caller's pages */
static int64_t rank_pushed;        /* early returns that waited for the push (phase_push) */
static uint64_t rank_push_ticks;   /* and how long, in all */

static const char *const phase_names[PHASE_COUNT] = {
    [PHASE_CANDIDATE] = "candidate", [PHASE_AGREE] = "agree", [PHASE_PLAN] = "plan",
    [PHASE_LAND_SELF] = "land_self", [PHASE_ARM] = "arm", [PHASE_COPY] = "copy",
    [PHASE_SUBMIT] = "submit", [PHASE_EDGES] = "edges",
};

uint64_t phase_start(void)
{
    for (int k = 0; k < PHASE_COUNT; k++)
        current[k] = 0;
    return tnbc_ticks();
}

void phase_end(uint64_t *clock, enum phase k)
{
    uint64_t now = tnbc_ticks();
    current[k] += now - *clock;
    *clock = now;
}

void phase_push(uint64_t *clock)
{
    uint64_t now = tnbc_ticks();
    rank_pushed++;
    rank_push_ticks += now - *clock;
    *clock = now;
}

static void add(struct phase_sums *s)
{
    s->calls++;
    for (int k = 0; k < PHASE_COUNT; k++)
        s->ticks[k] += current[k];
}

void phase_call_done(struct phase_sums *site)
{
    if (site)
        add(site);
    add(&rank_sums);
}

void phase_sent_in_place(void) { rank_in_place++; }

void phase_report(int rank)
{
    if (!tnbc_env_bool("TNBC_REPLAY_PHASES", 0))
        return;
    char line[512];
    long calls = (long)rank_sums.calls;
    int n = snprintf(line, sizeof line, "tnbc: rank %d: %ld early returns, mean us:", rank, calls);
    double total = 0;
    for (int k = 0; k < PHASE_COUNT && n > 0 && (size_t)n < sizeof line; k++) {
        double us = calls ? tnbc_ticks_to_ns(rank_sums.ticks[k]) / 1e3 / (double)calls : 0;
        total += us;
        n += snprintf(line + n, sizeof line - (size_t)n, " %s %.1f", phase_names[k], us);
    }
    fprintf(stderr, "%s total %.1f sent_in_place %lld landing %s pushed %lld push_wait %.1f\n", line,
            total, (long long)rank_in_place, land_method(), (long long)rank_pushed,
            rank_pushed ? tnbc_ticks_to_ns(rank_push_ticks) / 1e3 / (double)rank_pushed : 0.0);
}

static const char insert_sql[] =
    "INSERT INTO early_cost (rank, site, op, early, candidate_ns, agree_ns, plan_ns, "
    "land_self_ns, arm_ns, copy_ns, submit_ns, edges_ns, land_ns, land_bytes) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";

int phase_write(struct tnbc_db *db, int rank, const char *site, const char *op,
                const struct phase_sums *s, int64_t land_ns, int64_t land_bytes)
{
    _Static_assert(PHASE_COUNT == 8, "one early_cost column per step");
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(tnbc_db_handle(db), insert_sql, -1, &st, NULL) != SQLITE_OK)
        return -1;
    int i = 1;
    sqlite3_bind_int(st, i++, rank);
    sqlite3_bind_text(st, i++, site, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, i++, op, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, i++, s->calls);
    for (int k = 0; k < PHASE_COUNT; k++)
        sqlite3_bind_int64(st, i++, (int64_t)tnbc_ticks_to_ns(s->ticks[k]));
    sqlite3_bind_int64(st, i++, land_ns);
    sqlite3_bind_int64(st, i++, land_bytes);
    int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : -1;
    sqlite3_finalize(st);
    return rc;
}
