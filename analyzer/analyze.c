// SPDX-License-Identifier: BSD-3-Clause
/*
 * One profile site from one (site, op) of the trace: identity, order,
 * model, decision, chunking, priorities, node schedule.
 */
#include "analyzer.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int is_v_op(const char *op)
{
    return strcmp(op, "alltoallv") == 0 || strcmp(op, "allgatherv") == 0 ||
           strcmp(op, "gatherv") == 0;
}

static int receives(const struct an_call *c)
{
    return c->nrecv > 0 && c->recv_bytes > 0;
}

/* Ops whose receive sizes may differ by rank within one call: their
 * identity is -1 whenever the sizes differ, with no range. */
static int sizes_vary_by_rank(const char *op)
{
    return is_v_op(op) || strcmp(op, "scatterv") == 0 || strcmp(op, "reduce_scatter") == 0;
}

/* The receive block's size for the profile identity: bytes per source
 * block (per-source ops), the whole block (single-block ops), -1 where it
 * legitimately varies. An op with one size per call whose size varied
 * within AN_BLOCK_RANGE_MAX gets -1 and the traced range in ps (the model
 * takes medians over the calls, so it stands for them); wider, *bad says
 * why the site is off. */
static int64_t identity_bytes(const struct an_site *s, int chunked, struct tnbc_profile_site *ps,
                              char *bad, size_t badlen)
{
    int64_t lo = -1, hi = -1;
    ps->comm_size = s->ncalls ? s->calls[0].comm_size : 1;
    for (int i = 0; i < s->ncalls; i++) {
        const struct an_call *c = &s->calls[i];
        if (c->comm_size != ps->comm_size && !bad[0])
            snprintf(bad, badlen, "communicator size varies between calls (%d and %d)",
                     ps->comm_size, c->comm_size);
        if (!receives(c))
            continue;
        int64_t b = chunked ? c->recv_bytes : c->block_bytes;
        lo = lo < 0 || b < lo ? b : lo;
        hi = b > hi ? b : hi;
    }
    if (is_v_op(s->op))
        return -1;
    if (lo == hi)
        return lo < 0 ? 0 : lo;
    if (sizes_vary_by_rank(s->op))
        return -1;
    if (hi > lo * AN_BLOCK_RANGE_MAX) {
        if (!bad[0])
            snprintf(bad, badlen, "block size varies between calls more than %dx (%lld B to "
                     "%lld B)", AN_BLOCK_RANGE_MAX, (long long)lo, (long long)hi);
        return lo;
    }
    assert(lo > 0 && lo < hi);
    ps->has_block_range = 1;
    ps->block_min = lo;
    ps->block_max = hi;
    return -1;
}

static int traced_chunks(const struct an_site *s)
{
    int m = 0;
    for (int i = 0; i < s->ncalls; i++)
        if (s->calls[i].chunks > m)
            m = s->calls[i].chunks;
    return m;
}

/* A call's touched blocks in first-touch order; traced chunks are mapped
 * onto the profile's m chunks (chunk c of mt lands in the chunk holding its
 * middle), keeping each chunk's first touch. */
static int make_sample(const struct an_call *c, int chunked, int m, int nsub,
                       struct an_sample *out)
{
    char *seen = calloc((size_t)nsub, 1);
    out->seq = malloc((size_t)(nsub ? nsub : 1) * sizeof(int));
    out->rank = c->comm_rank;
    out->k = 0;
    if (!seen || !out->seq) {
        free(seen);
        return -1;
    }
    int mt = c->chunks > 0 ? c->chunks : 1;
    for (int i = 0; i < c->k; i++) {
        int b = c->seq[i];
        if (chunked)
            b = (int)(((2 * (int64_t)b + 1) * m) / (2 * (int64_t)mt));
        if (b < 0 || b >= nsub || seen[b])
            continue;
        seen[b] = 1;
        out->seq[out->k++] = b;
    }
    free(seen);
    return 0;
}

static int site_orders(const struct an_site *s, struct tnbc_profile_site *ps, int chunked)
{
    struct an_sample *v = calloc((size_t)(s->ncalls ? s->ncalls : 1), sizeof *v);
    int n = 0, rc = 0;
    if (!v)
        return -1;
    for (int i = 0; i < s->ncalls && rc == 0; i++) {
        const struct an_call *c = &s->calls[i];
        if (!receives(c) || c->comm_size != ps->comm_size)
            continue;
        rc = make_sample(c, chunked, ps->chunks, ps->nsub, &v[n]);
        n += rc == 0;
    }
    /* Calls come sorted by world rank; group by communicator rank. */
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && v[j - 1].rank > v[j].rank; j--) {
            struct an_sample x = v[j];
            v[j] = v[j - 1];
            v[j - 1] = x;
        }
    if (rc == 0)
        rc = an_orders(v, n, ps->nsub, !chunked, ps);
    for (int i = 0; i < n; i++)
        free(v[i].seq);
    free(v);
    return rc;
}

/* Which communicator ranks receive at this site. */
static char *receivers(const struct an_site *s, const struct tnbc_profile_site *ps)
{
    char *rx = malloc((size_t)ps->comm_size), *seen = calloc((size_t)ps->comm_size, 1);
    int gather = strcmp(s->op, "gather") == 0 || strcmp(s->op, "gatherv") == 0, root = -1;
    if (!rx || !seen) {
        free(rx);
        free(seen);
        return NULL;
    }
    memset(rx, 0, (size_t)ps->comm_size);
    for (int i = 0; i < s->ncalls; i++) {
        const struct an_call *c = &s->calls[i];
        if (c->comm_rank >= ps->comm_size)
            continue;
        seen[c->comm_rank] = 1;
        rx[c->comm_rank] |= receives(c);
        if (c->root >= 0)
            root = c->root;
    }
    for (int r = 0; r < ps->comm_size; r++)
        if (!seen[r]) /* rank not traced: what the operation implies */
            rx[r] = gather ? r == root : 1;
    free(seen);
    return rx;
}

/* v-variants: a rank whose per-source sizes are the same in every traced
 * call gets a hash of them, so replay can tell a different pattern. */
static int site_vhash(const struct an_site *s, struct tnbc_profile_site *ps)
{
    int N = ps->comm_size;
    for (int i = 0; i < s->ncalls;) {
        int j = i, ok = 1, have = 0;
        uint64_t h = 0;
        for (; j < s->ncalls && s->calls[j].rank == s->calls[i].rank; j++) {
            const struct an_call *c = &s->calls[j];
            if (!receives(c))
                continue;
            if (!c->sizes_known || c->comm_size != N) {
                ok = 0;
                continue;
            }
            uint64_t hk = c->vhash;
            ok &= !have || hk == h;
            h = hk;
            have = 1;
        }
        int r = s->calls[i].comm_rank;
        if (ok && have && r < N) {
            if (!ps->vhash && (!(ps->vhash = malloc((size_t)N * sizeof *ps->vhash)) ||
                               !(ps->vhash_rank = malloc((size_t)N * sizeof(int)))))
                return -1;
            ps->vhash_rank[ps->nvhash] = r;
            ps->vhash[ps->nvhash++] = h;
        }
        i = j;
    }
    return 0;
}

/* Median bytes of one receive sub-message, for the size decision. */
static int64_t sub_bytes(const struct an_site *s, const struct tnbc_profile_site *ps)
{
    double *v = malloc((size_t)(s->ncalls ? s->ncalls : 1) * sizeof *v);
    int n = 0;
    if (!v)
        return 0;
    for (int i = 0; i < s->ncalls; i++)
        if (receives(&s->calls[i]))
            v[n++] = (double)s->calls[i].recv_bytes / (ps->nsub ? ps->nsub : 1);
    double m = n ? an_median(v, n) : 0;
    free(v);
    return (int64_t)m;
}

/* The calls whose Tinit holds the early return as timed in replay
 * (--measured), and their mean of it in *mean_ns. */
static int tinit_measured(const struct an_site *s, double *mean_ns)
{
    double sum = 0;
    int n = 0;
    for (int i = 0; i < s->ncalls; i++)
        if (isfinite(s->calls[i].measured_in_call_ns)) {
            sum += s->calls[i].measured_in_call_ns;
            n++;
        }
    *mean_ns = n ? sum / n : 0;
    return n;
}

/* With --measured (some calls timed, `mean` ns their mean), the reason
 * says that Tinit's part in the call is the early return that run timed at
 * this site. */
static int note_measured_tinit(int timed_calls, double mean, struct tnbc_profile_site *ps)
{
    if (!timed_calls || !ps->reason)
        return 0;
    size_t len = strlen(ps->reason) + 160;
    char *r = malloc(len);
    if (!r)
        return -1;
    snprintf(r, len, "%s; Tinit counts the early return as timed in the measured run "
             "(%.1f us per call)", ps->reason, mean / 1e3);
    free(ps->reason);
    ps->reason = r;
    return 0;
}

int an_site_build(struct an_trace *t, struct an_site *s, struct tnbc_profile_site *ps)
{
    char bad[256] = "";
    int chunked = tnbc_profile_op_is_chunked(s->op);
    ps->site = strdup(s->site);
    ps->op = strdup(s->op);
    if (!ps->site || !ps->op)
        return -1;
    ps->block_bytes = identity_bytes(s, chunked, ps, bad, sizeof bad);
    if (!bad[0] && s->site_unsafe > 0)
        snprintf(bad, sizeof bad, "datatype and op rule out an early return in %lld call%s "
                 "(floating-point, user-defined or derived-type reduction); tnbc runs it blocking",
                 (long long)s->site_unsafe, s->site_unsafe == 1 ? "" : "s");
    /* No traced call on some rank could be guarded: its reads were never
     * seen, and replay runs such a call blocking on every member. */
    if (!bad[0] && s->site_receiving > 0 && s->site_unguardable >= s->site_receiving)
        snprintf(bad, sizeof bad, "the receive buffer is memory tnbc cannot guard (a thread's stack, "
                 "a shared or huge-page mapping, an RMA window, a gap of a page or more) in all %lld "
                 "traced calls that received; tnbc runs it blocking",
                 (long long)s->site_receiving);
    if (!bad[0] && s->site_receiving > 0 && s->site_interleaved >= s->site_receiving)
        snprintf(bad, sizeof bad, "nothing to guard: its receive blocks interleave across the buffer "
                 "(a derived receive type) and none lies in whole pages of its own, in all %lld traced "
                 "calls that received; tnbc runs it blocking (a page-aligned buffer would do)",
                 (long long)s->site_receiving);
    ps->calls = s->site_calls;
    ps->traced = s->site_traced;
    if (an_model_site(t, s, &ps->model) < 0)
        return -1;
    if (chunked) {
        /* scatterv's sizes vary by rank: chunk by the typical size. */
        int64_t whole = ps->block_bytes > 0 ? ps->block_bytes : (int64_t)ps->model.dcomm;
        ps->chunks = an_chunks(whole, traced_chunks(s));
    }
    ps->nsub = ps->nsend = chunked ? ps->chunks : ps->comm_size;
    if (site_orders(s, ps, chunked) < 0)
        return -1;
    char *rx = receivers(s, ps);
    if (!rx)
        return -1;
    int rc = an_priorities(ps, rx);
    free(rx);
    if (rc < 0 || an_nodes(t, s, ps) < 0)
        return -1;
    if (is_v_op(s->op) && site_vhash(s, ps) < 0)
        return -1;
    double measured_mean;
    int measured_calls = tinit_measured(s, &measured_mean);
    int timed = an_decide(ps, sub_bytes(s, ps), bad[0] ? bad : NULL, an_site_share(t, s),
                          s->crowded[0] ? s->crowded : t->comm_cpu_why, !measured_calls);
    if (note_measured_tinit(measured_calls, measured_mean, ps) < 0)
        return -1;
    struct an_fidelity fid;
    if (an_site_fidelity(t, s, &fid, bad, sizeof bad) < 0)
        return -1;
    an_fidelity_decide(ps, &fid, timed);
    /* Off by the model's timing (or the trace's confidence in it) alone:
     * a trial run may time it (profiles/FORMAT.md, `trial`). */
    ps->trial = timed && !ps->on;
    return ps->reason ? 0 : -1;
}

int an_analyze(struct an_trace *t, struct tnbc_profile *p, char *err, size_t errlen)
{
    char **sites = NULL, **ops = NULL;
    int n = 0, rc = 0;
    p->version = TNBC_PROFILE_VERSION;
    p->world_size = t->world_size;
    p->piece_bytes = PIECES_DEFAULT_BYTES;   /* what the model assumes (model.c) */
    p->source = strdup(t->path);
    if (!p->source || an_trace_sites(t, &sites, &ops, &n, err, errlen) < 0)
        rc = -1;
    if (rc == 0 && n > 0 && !(p->sites = calloc((size_t)n, sizeof *p->sites))) {
        snprintf(err, errlen, "%s: out of memory", t->path);
        rc = -1;
    }
    for (int i = 0; i < n && rc == 0; i++) {
        struct an_site s;
        if (!tnbc_profile_op_known(ops[i])) {
            fprintf(stderr, "tnbc-analyze: %s: skipping site %s: unknown operation '%s'\n",
                    t->path, sites[i], ops[i]);
            continue;
        }
        rc = an_site_load(t, sites[i], ops[i], &s, err, errlen);
        if (rc == 0) {
            p->nsites++;
            if (an_site_build(t, &s, &p->sites[p->nsites - 1]) < 0) {
                snprintf(err, errlen, "%s: site %s %s: out of memory", t->path, sites[i],
                         ops[i]);
                rc = -1;
            }
        }
        an_site_free(&s);
    }
    for (int i = 0; i < n; i++) {
        free(sites[i]);
        free(ops[i]);
    }
    free(sites);
    free(ops);
    return rc;
}
