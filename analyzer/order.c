// SPDX-License-Identifier: BSD-3-Clause
/*
 * Receive order: the consensus of the traced first-touch orders, how well
 * it agrees with them, and per-rank orders where ranks disagree.
 *
 * A sample is one traced call's sequence of touched receive blocks. The
 * consensus is a Borda ranking (mean position of each block; a block a
 * sample never touched sits at the mean of the positions left after its
 * touched ones). Agreement with an order is measured on samples with at
 * least two touched blocks: Kendall tau over their touched blocks, and the
 * fraction whose touched blocks come exactly in the order's sequence.
 */
#include "analyzer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void positions(const int *order, int n, int *pos)
{
    for (int i = 0; i < n; i++)
        pos[order[i]] = i;
}

/* Inversions of a[0..n) by merge sort (a is reordered; tmp is scratch). */
static int64_t inversions(int *a, int *tmp, int n)
{
    if (n < 2)
        return 0;
    int h = n / 2;
    int64_t inv = inversions(a, tmp, h) + inversions(a + h, tmp, n - h);
    int i = 0, j = h, k = 0;
    while (i < h && j < n) {
        if (a[i] <= a[j]) {
            tmp[k++] = a[i++];
        } else {
            inv += h - i;
            tmp[k++] = a[j++];
        }
    }
    while (i < h)
        tmp[k++] = a[i++];
    while (j < n)
        tmp[k++] = a[j++];
    memcpy(a, tmp, (size_t)n * sizeof *a);
    return inv;
}

/* Kendall tau of the sample's touched blocks against an order given as
 * positions; NAN when fewer than two blocks were touched. O(k log k). */
double an_kendall(const struct an_sample *s, const int *pos)
{
    if (s->k < 2)
        return NAN;
    int *a = malloc(2 * (size_t)s->k * sizeof *a);
    if (!a)
        return NAN;
    for (int i = 0; i < s->k; i++)
        a[i] = pos[s->seq[i]];
    double pairs = (double)s->k * (s->k - 1) / 2;
    double d = (double)inversions(a, a + s->k, s->k);
    free(a);
    return 1.0 - 2.0 * d / pairs;
}

static int identical(const struct an_sample *s, const int *pos)
{
    for (int i = 1; i < s->k; i++)
        if (pos[s->seq[i]] < pos[s->seq[i - 1]])
            return 0;
    return 1;
}

void an_agreement(const struct an_sample *v, int n, const int *order, int nsub,
                  struct an_agreement *out)
{
    int *pos = malloc((size_t)nsub * sizeof *pos);
    double tau = 0;
    int64_t same = 0, cnt = 0;
    memset(out, 0, sizeof *out);
    if (!pos)
        return;
    positions(order, nsub, pos);
    for (int i = 0; i < n; i++) {
        if (v[i].k < 2)
            continue;
        tau += an_kendall(&v[i], pos);
        same += identical(&v[i], pos);
        cnt++;
    }
    free(pos);
    if (cnt) {
        out->tau = tau / (double)cnt;
        out->identical = (double)same / (double)cnt;
        out->samples = cnt;
    }
}

static const double *sort_key;
static int by_key(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    if (sort_key[x] != sort_key[y])
        return sort_key[x] < sort_key[y] ? -1 : 1;
    return x - y;
}

int an_borda(const struct an_sample *v, int n, int nsub, int *order)
{
    double *sum = calloc((size_t)nsub, sizeof *sum);
    char *seen = malloc((size_t)nsub);
    if (!sum || !seen) {
        free(sum);
        free(seen);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        memset(seen, 0, (size_t)nsub);
        for (int j = 0; j < v[i].k; j++) {
            sum[v[i].seq[j]] += j;
            seen[v[i].seq[j]] = 1;
        }
        double rest = (v[i].k + nsub - 1) / 2.0;
        for (int b = 0; b < nsub; b++)
            if (!seen[b])
                sum[b] += rest;
    }
    for (int b = 0; b < nsub; b++)
        order[b] = b;
    sort_key = sum; /* single-threaded tool */
    qsort(order, (size_t)nsub, sizeof *order, by_key);
    free(sum);
    free(seen);
    return 0;
}

/* A rank's own order replaces the shared one when it explains the rank's
 * samples well and clearly better. */
static int rank_orders(const struct an_sample *v, int n, int nsub, const int *shared,
                       struct tnbc_profile_site *ps)
{
    int found = 0;
    for (int i = 0; i < n;) {
        int j = i;
        while (j < n && v[j].rank == v[i].rank)
            j++;
        int *own = malloc((size_t)nsub * sizeof *own);
        if (!own || an_borda(v + i, j - i, nsub, own) < 0) {
            free(own);
            return -1;
        }
        struct an_agreement a_own, a_sh;
        an_agreement(v + i, j - i, own, nsub, &a_own);
        an_agreement(v + i, j - i, shared, nsub, &a_sh);
        int r = v[i].rank;
        if (a_own.samples >= AN_RANK_MIN_SAMPLES && a_own.tau >= AN_STABLE_TAU &&
            a_own.tau - a_sh.tau >= AN_RANK_GAIN && r >= 0 && r < ps->comm_size) {
            if (!ps->rank_order &&
                !(ps->rank_order = calloc((size_t)ps->comm_size, sizeof(int *)))) {
                free(own);
                return -1;
            }
            free(ps->rank_order[r]);
            ps->rank_order[r] = own;
            found = 1;
        } else {
            free(own);
        }
        i = j;
    }
    return found;
}

/* v must be grouped by rank (the communicator rank). */
int an_orders(const struct an_sample *v, int n, int nsub, int per_rank,
              struct tnbc_profile_site *ps)
{
    struct an_agreement ag;
    ps->order = malloc((size_t)(nsub ? nsub : 1) * sizeof *ps->order);
    if (!ps->order || an_borda(v, n, nsub, ps->order) < 0)
        return -1;
    an_agreement(v, n, ps->order, nsub, &ag);
    ps->agree_identical = ag.identical;
    ps->agree_tau = ag.tau;
    ps->samples = ag.samples;
    int stable = ag.samples > 0 && ag.tau >= AN_STABLE_TAU;
    if (!stable)
        for (int b = 0; b < nsub; b++)
            ps->order[b] = b; /* the operation's default: index order */
    int own = per_rank ? rank_orders(v, n, nsub, ps->order, ps) : 0;
    if (own < 0)
        return -1;
    ps->order_kind = own ? TNBC_ORDER_PER_RANK
                         : stable ? TNBC_ORDER_CONSENSUS : TNBC_ORDER_DEFAULT;
    return 0;
}
