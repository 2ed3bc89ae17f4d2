// SPDX-License-Identifier: BSD-3-Clause
/*
 * How far the trace of a site can be trusted: what it could not measure
 * cleanly (table fidelity, one row per traced call), folded into one
 * confidence per site, and the decision turned off where the trace cannot
 * support its prediction (docs/analyzer.md, "Confidence").
 *
 * The model's terms are in program time: the trace subtracts its own time
 * (handlers, and the kernel's share of each signal, measured once at
 * start-up). The subtraction is as good as that start-up figure, which a
 * loaded machine makes wrong by up to 100x per signal (docs/trace.md).
 * So the more of the time after the call went to the observer, and the
 * more signals it took (a single step is two), the less the terms say
 * about the program; a lost touch event leaves the order itself unknown.
 * The handler's reads of the pages it opens (GUARD_PRETOUCH: 4 us a page
 * under a hypervisor that shadows the page tables, most of the observer's
 * time with MiB blocks there) are timed where they happen, so they are
 * left out of the share (fidelity.refill_ns, schema 4): counted, they put
 * large-block sites at confidence 0.34-0.39 on such a VM.
 */
#include "analyzer.h"

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int has_fidelity_table(const struct an_trace *t)
{
    return an_has_row(t, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'fidelity'");
}

/* Traces before schema 4's fidelity.refill_ns: all observer time estimated. */
static int has_refill_column(const struct an_trace *t)
{
    return an_has_row(t, "SELECT 1 FROM pragma_table_info('fidelity') WHERE name = 'refill_ns'");
}

/* confidence = min(1 - share / AN_MAX_OBSERVER, 1 - steps / AN_MAX_STEPS),
 * in [0, 1]; 0 when an event was dropped. */
double an_confidence(const struct an_fidelity *f)
{
    if (!f->known)
        return NAN;
    if (f->dropped > 0)
        return 0;
    double a = 1 - f->observer_share / AN_MAX_OBSERVER, b = 1 - f->steps / AN_MAX_STEPS;
    double c = a < b ? a : b;
    return c < 0 ? 0 : c > 1 ? 1 : c;
}

int an_site_fidelity(struct an_trace *t, const struct an_site *s, struct an_fidelity *f,
                     char *err, size_t errlen)
{
    sqlite3 *db = t->db;
    sqlite3_stmt *st;
    memset(f, 0, sizeof *f);
    f->confidence = NAN;
    if (!db || !has_fidelity_table(t))
        return 0;       /* a trace from before the table: nothing known */
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT f.steps, f.faults, f.observer_ns, f.span_ns, f.dropped, %s "
                              "FROM fidelity f JOIN call c ON c.call_id = f.call_id "
                              "WHERE c.site = ?1 AND c.op = ?2 AND c.recv_bytes > 0",
             has_refill_column(t) ? "f.refill_ns" : "0");
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "%s: fidelity: %s", t->path, sqlite3_errmsg(db));
        return -1;
    }
    sqlite3_bind_text(st, 1, s->site, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, s->op, -1, SQLITE_STATIC);
    int cap = s->ncalls > 0 ? s->ncalls : 1, n = 0, nshare = 0, rc;
    double *v = malloc(4 * (size_t)cap * sizeof *v);
    if (!v) {
        sqlite3_finalize(st);
        snprintf(err, errlen, "%s: out of memory", t->path);
        return -1;
    }
    double *steps = v, *faults = v + cap, *share = v + 2 * cap, *refill = v + 3 * cap;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW && n < cap) {
        steps[n] = (double)sqlite3_column_int64(st, 0);
        faults[n] = (double)sqlite3_column_int64(st, 1);
        int64_t obs = sqlite3_column_int64(st, 2), span = sqlite3_column_int64(st, 3);
        int64_t ref = sqlite3_column_int64(st, 5);
        ref = ref < 0 ? 0 : ref > obs ? obs : ref;
        if (span > 0) {
            share[nshare] = (double)(obs - ref) / (double)span;
            refill[nshare++] = (double)ref / (double)span;
        }
        f->dropped += sqlite3_column_int64(st, 4);
        n++;
    }
    sqlite3_finalize(st);
    if (n > 0) {
        f->known = 1;
        f->calls = n;
        f->steps = an_median(steps, n);
        f->faults = an_median(faults, n);
        f->observer_share = nshare ? an_median(share, nshare) : 0;
        f->refill_share = nshare ? an_median(refill, nshare) : 0;
        f->confidence = an_confidence(f);
    }
    free(v);
    return 0;
}

void an_fidelity_decide(struct tnbc_profile_site *ps, const struct an_fidelity *f, int timed)
{
    ps->has_confidence = f->known;
    if (!f->known)
        return;
    ps->confidence = f->confidence;
    ps->fid_observer_share = f->observer_share;
    ps->fid_steps = f->steps;
    ps->fid_dropped = f->dropped;
    if (!timed || f->confidence >= AN_MIN_CONFIDENCE)
        return;
    char buf[400];
    snprintf(buf, sizeof buf,
             "the trace cannot support the prediction: confidence %.2f < %.2f (observer %.0f%% "
             "of the time after the call besides %.0f%% of timed page refills, %.0f single "
             "steps per call, %lld touch events dropped); the prediction was: %s",
             f->confidence, AN_MIN_CONFIDENCE, 100 * f->observer_share, 100 * f->refill_share,
             f->steps,
             (long long)f->dropped, ps->reason ? ps->reason : "");
    char *r = strdup(buf);
    if (!r)
        return; /* keep the old reason; the site keeps its verdict */
    free(ps->reason);
    ps->reason = r;
    ps->on = 0;
}
