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
 * A trial run (TNBC_REPLAY_TRIAL=1) runs half the calls of a site
 * blocking; then the cycles after its early calls are compared with those
 * after its blocking calls, both measured in the same run under the same
 * conditions, and the trace is not needed for that site. Its sites take
 * turns in patterns that let each call be paired with one that differs
 * in that site's state alone (trial_pairs), so that a site beside one
 * that gains is not credited with that gain. It also runs the sites the
 * analysis marked `trial` (off by the model's timing alone) as on, and
 * the run decides those too.
 */
#include "analyzer.h"

#include <assert.h>
#include <math.h>
#include <stdint.h>
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

static double mean(const double *v, int n)
{
    double s = 0;
    for (int i = 0; i < n; i++)
        s += v[i];
    return n > 0 ? s / n : NAN;
}

/* A trial run's blocking calls of a site follow bit b of the call number
 * (libreplay/replay.c, trial_blocking), b read off the rows themselves:
 * calls i and i + 2^b (bit b clear in i) then differ in this site's state
 * alone, the program's other sites alike in both. Per such pair in which
 * call i ran early and call i + 2^b blocking, the cycles after them; the
 * means of the early and blocking members (their difference is the
 * pairs' mean saving: the other sites' states, equally many each way,
 * cancel in it, where they would not in the members' medians) and the
 * median of the pairs' savings (blocking minus early), which decides.
 * Returns the number of pairs, 0 where no bit explains the rows, -1 when
 * out of memory. c is in invocation order, one cycle per invocation
 * (an_site_cycles). */
static int trial_pairs(const struct an_cycle *c, int n, double *early, double *blocking,
                       double *saving)
{
    int b = 0, found = 0;
    for (; b < 16 && !found; b++) {
        found = n > 0;
        for (int i = 0; i < n && found; i++)
            found = c[i].invocation >= 0 && c[i].blocking == (int)((c[i].invocation >> b) & 1);
    }
    if (!found)
        return 0;
    int64_t step = INT64_C(1) << (b - 1);
    double *v = malloc(3 * (size_t)n * sizeof *v);
    if (!v)
        return -1;
    double *e = v, *bl = v + n, *d = v + 2 * n;
    int k = 0;
    for (int i = 0, j = 0; i < n; i++) {
        int64_t partner = c[i].invocation + step;
        if (c[i].blocking)
            continue;
        while (j < n && c[j].invocation < partner)   /* both ascend: one pass */
            j++;
        if (j == n || c[j].invocation != partner)
            continue;
        assert(c[j].blocking);
        e[k] = c[i].ns;
        bl[k] = c[j].ns;
        d[k] = bl[k] - e[k];
        k++;
    }
    *saving = an_median(d, k);
    *early = mean(e, k);
    *blocking = mean(bl, k);
    free(v);
    return k;
}

/* What a trial run says of the site, paired where it can be: the cycle
 * after early calls (*measured) and after blocking ones (*base), whether
 * that is a gain, and the pairing in `how`. A gain also needs the early
 * calls' cycle below the traced one (when the trace has one): a trial
 * run's blocking calls among early ones can run slower than any blocking
 * call of a plain run (fft3d at 200 Mbit/s: 810-830 ms after the second
 * and third of a run of blocking calls against 462-488 traced, its early
 * calls 466-486), which the pairs alone would take for the early
 * return's gain. `margin`: the fraction by which they must beat it.
 * Returns 1 with an answer, 0 with none (no pairs), -1 when out of
 * memory. */
static int trial_verdict(struct tnbc_profile_site *ps, struct an_trace *trace,
                         struct an_trace *replay, double margin, double *measured, double *base,
                         int *gain, char *how, size_t howlen, char *err, size_t errlen)
{
    struct an_cycle *c;
    int n;
    double saving, traced;
    if (an_site_cycles(replay, ps->site, ps->op, &c, &n, err, errlen) < 0)
        return -1;
    int pairs = trial_pairs(c, n, measured, base, &saving);
    free(c);
    if (pairs < 0)
        return -1;
    if (pairs == 0)
        return 0;
    if (an_site_cycle_ns(trace, ps->site, ps->op, AN_CYCLE_ALL, &traced, err, errlen) < 0)
        return -1;
    /* Off by the model: the pairs' median must save `margin` of the
     * blocking calls' cycle too, as check_site asks of the means. A trial
     * turned ordinary --passes 64 on at 2 x 1 and 1 Gbit/s with 0.2 ms (1%)
     * per pair, and its tuned runs were 1.4% slower than plain. */
    *gain = saving > margin * *base;
    int n_how = snprintf(how, howlen, " (means of %d pairs of calls that differ in this site "
                         "alone; median saving per pair %.1f ms)", pairs, saving / 1e6);
    if (!*gain && saving > 0 && n_how >= 0 && (size_t)n_how < howlen)
        n_how += snprintf(how + n_how, howlen - (size_t)n_how, ", under the %.0f%% of the "
                          "blocking calls' cycle that turns on a site the model turned off",
                          100 * margin);
    if (*gain && isfinite(traced) && *measured >= traced * (1 - margin)) {
        *gain = 0;
        char faster[32] = "no faster";
        if (margin > 0)
            snprintf(faster, sizeof faster, "not %.0f%% faster", 100 * margin);
        if (n_how >= 0 && (size_t)n_how < howlen)
            snprintf(how + n_how, howlen - (size_t)n_how, ", but %s than the traced calls "
                     "(%.1f ms)", faster, traced / 1e6);
    }
    return 1;
}

/* Does the fallback text ('reason:N ...') hold a reason other than the
 * profile's own (off, not in it) and a trial run's blocking half? */
static int runtime_refused(const char *fb)
{
    static const char *const planned[] = { "off:", "not-profiled:", "trial:", NULL };
    for (const char *w = fb; *w; w += strcspn(w, " "), w += strspn(w, " ")) {
        int known = 0;
        for (const char *const *p = planned; *p && !known; p++)
            known = strncmp(w, *p, strlen(*p)) == 0;
        if (!known)
            return 1;
    }
    return 0;
}

/* A site the measured run asked to go early (on, or tried by a trial run)
 * whose every call the runtime ran blocking, for reasons of its own
 * (nothing to guard, a buffer it may not guard, another rank that could
 * not): no early call to compare, and none to come. Off, saying why, so
 * that neither the profile nor the next trial run asks again. 1 when so
 * decided, 0 when not this case, -1 with err. */
static int never_early(struct tnbc_profile_site *ps, struct an_trace *replay, char *err,
                       size_t errlen)
{
    char fb[400], buf[1200];
    int64_t calls;
    if (!ps->on && !ps->trial)
        return 0;
    int rc = an_site_never_early(replay, ps->site, ps->op, &calls, fb, sizeof fb, err, errlen);
    if (rc <= 0 || !runtime_refused(fb))
        return rc;
    ps->on = 0;
    ps->trial = 0;
    snprintf(buf, sizeof buf, "the measured run ran all %lld of its calls blocking (%s), none early "
             "(the model said: %s)", (long long)calls, fb, ps->reason);
    return set_reason(ps, buf) < 0 ? -1 : 1;
}

static int check_site(struct tnbc_profile_site *ps, struct an_trace *trace,
                      struct an_trace *replay, char *err, size_t errlen)
{
    double base, measured;
    const char *what;
    char buf[1200], how[240] = "";
    int nt = baseline(ps, trace, replay, &base, &what, err, errlen);
    int nm = nt < 0 ? -1 : an_site_cycle_ns(replay, ps->site, ps->op, AN_CYCLE_AFTER_EARLY,
                                            &measured, err, errlen);
    if (nt < 0 || nm < 0)
        return -1;
    if (nm == 0)
        return never_early(ps, replay, err, errlen);
    if (nt == 0 || !isfinite(base) || !isfinite(measured))
        return 0;   /* one call: nothing to compare */
    /* A site the model turned off goes on only where its early calls
     * beat the blocking ones clearly: by AN_MIN_GAIN, the model's own
     * threshold for a saving worth an early return. A trial run's pairs
     * and a trace each err toward the early calls (its blocking calls can
     * run slow; the trace's cycle keeps some of the observer's cost). */
    double margin = ps->on ? 0 : AN_MIN_GAIN;
    int gain = measured < base * (1 - margin);
    if (!gain && measured < base)
        snprintf(how, sizeof how, ", not the %.0f%% faster that turns on a site the model "
                 "turned off", 100 * AN_MIN_GAIN);
    if (strcmp(what, "traced") != 0) {
        int rc = trial_verdict(ps, trace, replay, margin, &measured, &base, &gain, how,
                               sizeof how, err, errlen);
        if (rc < 0)
            return -1;
    }
    if (!gain) {
        ps->on = 0;
        snprintf(buf, sizeof buf,
                 "measured in replay: %.1f ms from call to call against %.1f ms %s%s, "
                 "no gain (the model said: %s)",
                 measured / 1e6, base / 1e6, what, how, ps->reason);
    } else if (ps->on) {
        snprintf(buf, sizeof buf, "%s; measured in replay: %.1f ms from call to call against "
                 "%.1f ms %s%s",
                 ps->reason, measured / 1e6, base / 1e6, what, how);
    } else {
        /* Off by the model's timing only: the analysis is the trial
         * profile's but for Tinit, now the timed early return, and a site
         * the runtime cannot run early has no early calls to compare. */
        ps->on = 1;
        snprintf(buf, sizeof buf,
                 "measured in replay: %.1f ms from call to call against %.1f ms %s%s, a gain "
                 "(the model said off: %s)",
                 measured / 1e6, base / 1e6, what, how, ps->reason);
    }
    ps->trial = 0;   /* decided by the measurement, not the model */
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
