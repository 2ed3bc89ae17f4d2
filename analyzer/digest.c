// SPDX-License-Identifier: BSD-3-Clause
/*
 * What the analysis keeps of one traced call's receive sub-messages: the
 * touched blocks in first-touch order (the order sample), the call's model
 * terms, and a hash of its per-source sizes. The sub-message rows themselves
 * are dropped once read, so a site of 1,024 ranks x 8 traced calls x 1,024
 * blocks holds about 4 bytes per touched block instead of a row each.
 */
#include "analyzer.h"
#include "platform.h"

#include <stdlib.h>

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

int an_call_digest(const struct an_trace *t, struct an_call *c, struct an_sub *subs, int n)
{
    c->nrecv = n;
    c->proj_tcomm_ns = t->platform ? an_platform_tcomm(t->platform, c, &t->ranks[c->rank]) : -1;
    an_call_terms(c, subs, n, &t->ranks[c->rank], &c->tcurc_ns, &c->rcrc, &c->tinit_ns);
    c->tinit_ns += t->early_cost_ns; /* the measured steps model.c does not see */
    c->own_ns = an_call_own_overlap(c, subs, n, &t->ranks[c->rank], t->comm_cpu_share);
    if (digest_order(c, subs, n) < 0)
        return -1;
    return digest_sizes(c, subs, n);
}
