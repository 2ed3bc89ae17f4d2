// SPDX-License-Identifier: BSD-3-Clause
/*
 * What the analysis keeps of one traced call's receive sub-messages: the
 * touched blocks in first-touch order (the order sample), the call's model
 * terms, and a hash of its per-source sizes. The sub-message rows themselves
 * are dropped once read, so a site of 1,024 ranks x 8 traced calls x 1,024
 * blocks holds about 4 bytes per touched block instead of a row each.
 */
#include "analyzer.h"
#include "crowding.h"
#include "platform.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int an_sub_by_ord(const void *a, const void *b)
{
    const struct an_sub *x = *(const struct an_sub *const *)a;
    const struct an_sub *y = *(const struct an_sub *const *)b;
    return x->ord < y->ord ? -1 : x->ord > y->ord;
}

static int digest_order(struct an_call *c, struct an_sub *subs, int n)
{
    const struct an_sub **t = malloc((size_t)(n ? n : 1) * sizeof *t);
    if (!t)
        return -1;
    int k = 0;
    for (int i = 0; i < n; i++)
        if (subs[i].touched)
            t[k++] = &subs[i];
    qsort(t, (size_t)k, sizeof *t, an_sub_by_ord);
    c->seq = malloc((size_t)(k ? k : 1) * sizeof *c->seq);
    if (!c->seq) {
        free(t);
        return -1;
    }
    for (int i = 0; i < k; i++)
        c->seq[i] = t[i]->idx;
    c->k = k;
    free(t);
    return 0;
}

/* subs are sorted by idx, so "all of 0..nsub-1" is a count and an end check. */
static int digest_sizes(struct an_call *c, const struct an_sub *subs, int n)
{
    c->sizes_known = n == c->nsub && n > 0 && subs[0].idx == 0 && subs[n - 1].idx == n - 1;
    if (!c->sizes_known)
        return 0;
    int64_t *bytes = malloc((size_t)n * sizeof *bytes);
    if (!bytes)
        return -1;
    for (int i = 0; i < n; i++)
        bytes[i] = subs[i].bytes;
    c->vhash = tnbc_profile_vhash(bytes, n);
    free(bytes);
    return 0;
}

/* Whether member m of the call's communicator shares the call's rank's
 * node: on the --platform by its placement (members in blocks of ppn, when
 * the communicator is the platform's size), else by the traced hosts. */
static int same_node(const struct an_trace *t, const struct an_site *s, const struct an_call *c,
                     int m)
{
    const struct an_platform *p = t->platform;
    if (p)
        return (long)c->comm_size == (long)p->nodes * p->ppn && m / p->ppn == c->comm_rank / p->ppn;
    int w = m < s->nworld ? s->world[m] : -1;
    const char *mine = t->ranks[c->rank].host, *theirs = w >= 0 ? t->ranks[w].host : NULL;
    return mine && theirs && strcmp(mine, theirs) == 0;
}

/* Whether every member of the site's communicator is on the host of the
 * site's first traced call. */
static int members_on_one_node(const struct an_trace *t, const struct an_site *s)
{
    for (int m = 0; m < s->nworld; m++)
        if (!same_node(t, s, &s->calls[0], m))
            return 0;
    return 1;
}

/* The share is 1 where the members' data moves on a machine whose CPUs
 * the job's ranks already outnumber (the trace's run rows; crowding.h):
 * all members on one host, or the whole job on one machine (hosts that
 * are network namespaces of one kernel, as the emulated cluster's: there
 * the data between hosts is TCP through that kernel, copied by the same
 * CPUs; 4 ranks on 2 CPUs at 2 x 2, 1 Gbit/s, an ordinary program
 * predicted to save 38% of Tcomm per call ran 3-5% slower than plain, as
 * tnbc auto, whose machine_decides rule is this one, would have said). */
static void site_crowded(const struct an_trace *t, struct an_site *s)
{
    s->crowded[0] = 0;
    if (!t->crowded_rule || s->ncalls < 1)
        return;
    const struct an_rank *r = &t->ranks[s->calls[0].rank];
    const struct crowding machine = { r->machine_ranks, r->machine_cpus };
    if (machine.ranks <= 0 || machine.cpus <= 0 || !crowding_crowded(&machine))
        return;
    if (members_on_one_node(t, s))
        crowding_why(s->crowded, sizeof s->crowded, s->nworld, &machine, "--comm-cpu-share");
    else if (machine.ranks == t->world_size)
        crowding_why_job(s->crowded, sizeof s->crowded, &machine, "--comm-cpu-share");
}

int an_site_world(const struct an_trace *t, struct an_site *s)
{
    int size = 0;
    for (int i = 0; i < s->ncalls; i++)
        size = s->calls[i].comm_size > size ? s->calls[i].comm_size : size;
    free(s->world);
    s->world = malloc((size_t)(size ? size : 1) * sizeof *s->world);
    if (!s->world)
        return -1;
    s->nworld = size;
    for (int i = 0; i < size; i++)
        s->world[i] = -1;
    for (int i = 0; i < s->ncalls; i++)
        if (s->calls[i].comm_rank >= 0 && s->calls[i].comm_rank < size)
            s->world[s->calls[i].comm_rank] = s->calls[i].rank;
    site_crowded(t, s);
    return 0;
}

/* Per-source data from members on this rank's node arrives by a memory
 * copy while the other members' crosses the node's link: where both kinds
 * come, the link is what Tcomm measures, and the near blocks are there at
 * once, as this rank's own. (2 nodes x 2 ranks at 1 Gbit/s: a rank that
 * reads its two remote blocks first waited 17 ms per call for them, which
 * a play-out spreading all three foreign blocks over Tcomm missed: 24 ms
 * predicted, 12.6 measured.) Where all come from one node, shared memory
 * is the network and nothing is near. */
static void mark_near(const struct an_trace *t, const struct an_site *s, const struct an_call *c,
                      struct an_sub *subs, int n)
{
    int far = 0;
    for (int i = 0; i < n; i++) {
        int foreign = c->chunks == 0 && subs[i].idx != c->comm_rank;
        subs[i].near = foreign && same_node(t, s, c, subs[i].idx);
        far |= foreign && !subs[i].near;
    }
    for (int i = 0; i < n && !far; i++)
        subs[i].near = 0;
}

/* --platform with ranks sharing cores (cores < ppn): the program's work
 * before and while reading takes ppn/cores times as long as traced. Tinit
 * stays as traced (docs/analyzer.md says so). */
static void project_cpu(const struct an_platform *p, struct an_call *c)
{
    double f = an_platform_cpu_factor(p);
    if (f == 1.0)
        return;
    if (isfinite(c->tcurc_ns))     /* NaN: not observed; inf: never read */
        c->tcurc_ns *= f;
    if (isfinite(c->rcrc) && c->rcrc > 0)
        c->rcrc /= f;
}

/* TCURC counts the code's own work only: the time the rank spent inside
 * other collectives before its first need moves their bytes, not this
 * call's (spans.c). */
static void curc_less_comm(const struct an_trace *t, struct an_call *c)
{
    double hz = t->ranks[c->rank].tsc_hz;
    if (!isfinite(c->tcurc_ns) || c->tcurc_ns <= 0 || !t->spans || hz <= 0)
        return;
    int64_t need = c->return_tsc + (int64_t)(c->tcurc_ns * 1e-9 * hz);
    double comm = (double)an_spans_within(t, c->rank, c->return_tsc, need) / hz * 1e9;
    c->tcurc_ns = comm < c->tcurc_ns ? c->tcurc_ns - comm : 0;
}

/* When the plain run's rank went on to its next collective, from this
 * call's return: the entry of its next recorded call (in the trace's
 * first K calls of every site, those of one loop are mostly there), not
 * before its reading ends; its reading's end where there is none, and on
 * --platform (the traced spans are the traced machine's). The critical
 * path (model.c) takes the last rank to get there. */
static double reach(const struct an_trace *t, const struct an_call *c, double reads)
{
    double hz = t->ranks[c->rank].tsc_hz;
    if (isnan(c->own_ns))
        return NAN;
    if (t->smallest_rank)
        return reads;   /* not used; tnbc auto's spans are sorted later */
    int64_t next = t->platform || !t->spans ? -1 : an_spans_next_entry(t, c->rank, c->return_tsc);
    if (next < 0 || hz <= 0)
        return reads;
    return fmax((double)(next - c->return_tsc) / hz * 1e9, reads);
}

int an_call_digest(const struct an_trace *t, const struct an_site *s, struct an_call *c,
                   struct an_sub *subs, int n, struct an_tails *tails)
{
    c->nrecv = n;
    mark_near(t, s, c, subs, n);
    c->proj_tcomm_ns = t->platform ? an_platform_tcomm(t->platform, c, &t->ranks[c->rank]) : -1;
    c->measured_in_call_ns = an_early_in_call_ns(t, s->site, s->op, c->rank);
    an_call_terms(c, subs, n, &t->ranks[c->rank], &c->tcurc_ns, &c->rcrc, &c->tinit_ns);
    curc_less_comm(t, c);
    if (t->platform)
        project_cpu(t->platform, c);
    if (!isfinite(c->measured_in_call_ns))
        c->tinit_ns += t->early_cost_ns; /* the steps model.c does not see, as given */
    double reads = 0;
    c->own_ns = an_call_own_overlap(c, subs, n, &t->ranks[c->rank], an_call_share(t, s, c),
                                    &reads, tails);
    c->reach_ns = reach(t, c, reads);
    if (digest_order(c, subs, n) < 0)
        return -1;
    return digest_sizes(c, subs, n);
}
