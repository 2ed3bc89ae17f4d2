// SPDX-License-Identifier: BSD-3-Clause
/*
 * Does transparent non-blocking execution pay at a site, and why; how many
 * chunks a single-block operation is split into.
 *
 * The design measured the break-even at about 256 B per sub-message (below
 * it, mprotect plus one fault cost more than the message itself) and most
 * of the time hidden above 4 KB (digest 000, "Costs measured").
 */
#include "analyzer.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Fewer chunks than traced when the chunks would fall below AN_MIN_CHUNK:
 * more chunks allow (m-1)/m overlap but every chunk costs a message. */
int an_chunks(int64_t block_bytes, int traced_chunks)
{
    int m = traced_chunks > 0 ? traced_chunks : 1;
    int64_t fit = block_bytes > 0 ? block_bytes / AN_MIN_CHUNK : 1;
    if (fit < 1)
        fit = 1;
    return fit < m ? (int)fit : m;
}

static char *reason_fmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *reason_fmt(const char *fmt, ...)
{
    char buf[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return strdup(buf);
}

static const char *regime_words(char r)
{
    switch (r) {
    case 'a': return "the code does not touch the data for longer than the collective";
    case 'b': return "no CURC, code consumes slower than data arrives";
    case 'c': return "no CURC, code consumes faster than data arrives";
    case 'd': return "some CURC, code consumes slower than data arrives";
    case 'e': return "some CURC, code consumes faster than data arrives";
    default: return "no data";
    }
}

/* What the reason should say about the order the priorities follow. */
static const char *order_note(const struct tnbc_profile_site *ps)
{
    if (ps->samples == 0)
        return "";
    if (ps->order_kind == TNBC_ORDER_DEFAULT)
        return "; no stable read order across ranks and calls: default order";
    if (ps->order_kind == TNBC_ORDER_PER_RANK)
        return "; ranks read in different orders: per-rank priorities";
    return "";
}

int an_decide(struct tnbc_profile_site *ps, int64_t sub_bytes, const char *inconsistent,
              double comm_cpu_share, const char *cpu_why, int tinit_modelled)
{
    char cpu[64] = "";
    if (comm_cpu_share > 0)
        snprintf(cpu, sizeof cpu, " (counting the %.0f%% CPU share of communication)",
                 100 * comm_cpu_share);
    const struct tnbc_model *m = &ps->model;
    ps->on = 0;
    if (inconsistent) {
        ps->reason = reason_fmt("%s", inconsistent);
        return 0;
    }
    if (m->regime == '-') {
        ps->reason = reason_fmt("no traced call received data at this site");
        return 0;
    }
    if (sub_bytes < AN_TINY_BYTES) {
        ps->reason = reason_fmt("tiny sub-messages: %lld B < %d B break-even (guarding and "
                                "fault handling cost more than the message)",
                                (long long)sub_bytes, AN_TINY_BYTES);
        return 0;
    }
    if (comm_cpu_share >= 1) {
        /* The saving is zero by the share itself, whatever the timings: a
         * fact about the machine, said before any of the model's terms. */
        ps->reason = reason_fmt("no CPU to overlap with: %s",
                                cpu_why ? cpu_why : "communication in flight takes all of the "
                                "CPU the program's work needs (CPU share 100%)");
        return 0;
    }
    if (m->toverlap_ns <= 0) {
        if (m->tinit_ns >= m->tcomm_ns)
            ps->reason = reason_fmt("no predicted overlap: Tinit %.1f us >= Tcomm %.1f us",
                                    m->tinit_ns / 1e3, m->tcomm_ns / 1e3);
        else
            ps->reason = reason_fmt("no predicted overlap: the code reads the data at once "
                                    "after the call (TCURC %.1f us, RCRC unbounded)",
                                    m->tcurc_ns / 1e3);
    } else if (m->saving_call_ns <= 0) {
        ps->reason = reason_fmt("no predicted overlap for the slowest rank (the formula "
                                "gives %.1f us, but that rank waits for the data it reads "
                                "first and has little to do after it)", m->toverlap_ns / 1e3);
    } else if (tinit_modelled && m->saving_call_ns < m->tinit_ns) {
        /* Tinit from the model alone is the early return's cost as the
         * trace can estimate it; runs measured it 1.3 to 12 times higher
         * (the agreement's round trip, the hand-off to the progress
         * thread, waiting for the edge pieces: docs/analyzer.md). A
         * saving smaller than that estimate is within its error. */
        ps->reason = reason_fmt("predicted saving %.1f us per call%s is below the early "
                                "return's modelled cost (Tinit %.1f us), which measured runs "
                                "exceeded 1.3-12x: as likely a loss (a trial run and tnbc "
                                "analyze --measured time it)",
                                m->saving_call_ns / 1e3, cpu, m->tinit_ns / 1e3);
    } else if (m->saving_call_ns < AN_MIN_GAIN * m->tcomm_ns) {
        /* The early return has costs the model does not count (the progress
         * thread's CPU, the landing copy, the agreement), and a run's noise
         * is larger than this: a gain this small is as likely a loss. */
        ps->reason = reason_fmt("predicted saving %.1f us per call%s is below %.0f%% of Tcomm "
                                "(%.1f us): not worth the early return's unmodelled costs",
                                m->saving_call_ns / 1e3, cpu, 100 * AN_MIN_GAIN,
                                m->tcomm_ns / 1e3);
    } else {
        ps->on = 1;
        ps->reason = reason_fmt(
            "regime %c (%s): saves %.1f us per call%s, %.0f%% of Tcomm%s%s", m->regime,
            regime_words(m->regime), m->saving_call_ns / 1e3, cpu,
            m->tcomm_ns > 0 ? 100.0 * m->saving_call_ns / m->tcomm_ns : 0.0,
            sub_bytes < AN_SMALL_BYTES ? "; small sub-messages (< 4 KB): guard costs weigh"
                                       : "",
            order_note(ps));
    }
    return 1;
}
