// SPDX-License-Identifier: BSD-3-Clause
/*
 * Decisions checked against a measured replay run (tnbc-analyze --measured).
 *
 * The model predicts a site's saving from per-site medians of the traced
 * terms; it cannot see costs such as the rank that bounds an iteration
 * gaining nothing, or the progress thread and the landing copy taking CPU
 * from the computation (docs/limits.md). A trial run with the profile
 * measures what the model cannot: per site, the time from one call's
 * entry to the next call's entry (the slowest rank's, median over
 * invocations), in the trace and in the replay. A site that is on but was
 * not faster in replay than traced is turned off, with both numbers in its
 * reason; a site that was faster keeps its decision and says by how much.
 * The traced cycle is in program time (the trace's own work taken out,
 * core/clock.h); the replay cycle is wall time, its costs included.
 *
 * The measured run decides every site it ran early, whatever the model
 * says: a site the model turns off with the early return's steps as that
 * run timed them (Tinit, an_early_read) but whose early calls were faster
 * there is on, with both numbers and the model's reason.
 *
 * A trial run (TNBC_REPLAY_TRIAL=1) runs every other call of a site
 * blocking; then the cycles after its early calls are compared with those
 * after its blocking calls, both measured in the same run under the same
 * conditions, and the trace is not needed for that site.
 */
#include "analyzer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int set_reason(struct tnbc_profile_site *ps, const char *text)
{
    char *r = strdup(text);
    if (!r)
        return -1;
    free(ps->reason);
    ps->reason = r;
    return 0;
}

/* The baseline cycle: the trial run's blocking calls when it has them
 * (*what says so), else the trace's. Returns the count, or -1. */
static int baseline(struct tnbc_profile_site *ps, struct an_trace *trace, struct an_trace *replay,
                    double *ns, const char **what, char *err, size_t errlen)
{
    int n = an_site_cycle_ns(replay, ps->site, ps->op, AN_CYCLE_AFTER_BLOCKING, ns, err, errlen);
    *what = "after its blocking calls in the same trial run";
    if (n != 0)
        return n;
    *what = "traced";
    return an_site_cycle_ns(trace, ps->site, ps->op, AN_CYCLE_ALL, ns, err, errlen);
}

static int check_site(struct tnbc_profile_site *ps, struct an_trace *trace,
                      struct an_trace *replay, char *err, size_t errlen)
{
    double base, measured;
    const char *what;
    char buf[800];
    int nt = baseline(ps, trace, replay, &base, &what, err, errlen);
    int nm = nt < 0 ? -1 : an_site_cycle_ns(replay, ps->site, ps->op, AN_CYCLE_AFTER_EARLY,
                                            &measured, err, errlen);
    if (nt < 0 || nm < 0)
        return -1;
    if (nt == 0 || nm == 0 || !isfinite(base) || !isfinite(measured))
        return 0;   /* one call, or none early: nothing to compare */
    if (measured >= base) {
        ps->on = 0;
        snprintf(buf, sizeof buf,
                 "measured in replay: %.1f ms from call to call against %.1f ms %s, "
                 "no gain (the model said: %s)",
                 measured / 1e6, base / 1e6, what, ps->reason);
    } else if (ps->on) {
        snprintf(buf, sizeof buf, "%s; measured in replay: %.1f ms from call to call against "
                 "%.1f ms %s",
                 ps->reason, measured / 1e6, base / 1e6, what);
    } else {
        /* Off by the model's timing only: the analysis is the trial
         * profile's but for Tinit, now the timed early return, and a site
         * the runtime cannot run early has no early calls to compare. */
        ps->on = 1;
        snprintf(buf, sizeof buf,
                 "measured in replay: %.1f ms from call to call against %.1f ms %s, a gain "
                 "(the model said off: %s)",
                 measured / 1e6, base / 1e6, what, ps->reason);
    }
    return set_reason(ps, buf) < 0 ? -1 : 1;
}

int an_measured(struct tnbc_profile *p, struct an_trace *trace, struct an_trace *replay,
                char *err, size_t errlen)
{
    err[0] = '\0';
    for (int i = 0; i < p->nsites; i++) {
        struct tnbc_profile_site *ps = &p->sites[i];
        int rc = check_site(ps, trace, replay, err, errlen);
        if (rc < 0) {
            if (!err[0])
                snprintf(err, errlen, "out of memory");
            return -1;
        }
    }
    return 0;
}
