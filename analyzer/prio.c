// SPDX-License-Identifier: BSD-3-Clause
/*
 * Priorities (digest 000, "Priorities within a process" and "across
 * processes of a node").
 *
 * Receiving side: a block's priority is its position in the rank's read
 * order (0 = read first). Sending side: the block rank s sends to rank d
 * gets the priority d gives to its receive block s, so the block a receiver
 * reads first is sent first. Single-block operations: chunk c's position in
 * the order, the same at every rank and on both sides.
 *
 * Node schedule: ranks sharing a host take the host's network one at a time,
 * the rank whose blocks are needed earliest first (the design's Figure 4:
 * after N*T every process holds the blocks of each node's first process).
 */
#include "analyzer.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

static void fill_row(int *row, const int *order, int n)
{
    for (int i = 0; i < n; i++)
        row[order[i]] = i;
}

int an_priorities(struct tnbc_profile_site *ps, const char *receives)
{
    int n = ps->nsub, rows = ps->chunks > 0 ? 1 : ps->comm_size;
    ps->recv_prio = malloc((size_t)rows * n * sizeof(int));
    ps->send_prio = malloc((size_t)rows * ps->nsend * sizeof(int));
    if (!ps->recv_prio || !ps->send_prio)
        return -1;
    if (ps->chunks > 0) {
        fill_row(ps->recv_prio, ps->order, n);
        memcpy(ps->send_prio, ps->recv_prio, (size_t)n * sizeof(int));
        return 0;
    }
    for (int d = 0; d < rows; d++) {
        int *row = ps->recv_prio + (size_t)d * n;
        const int *ord = ps->rank_order && ps->rank_order[d] ? ps->rank_order[d] : ps->order;
        if (receives[d])
            fill_row(row, ord, n);
        else
            for (int j = 0; j < n; j++)
                row[j] = -1;
    }
    for (int s = 0; s < rows; s++)
        for (int d = 0; d < rows; d++)
            ps->send_prio[(size_t)s * ps->nsend + d] = ps->recv_prio[(size_t)d * n + s];
    return 0;
}

struct need {
    int rank;
    long first, sum; /* earliest and summed receiver priority of its blocks */
};

static int by_need(const void *a, const void *b)
{
    const struct need *x = a, *y = b;
    if (x->first != y->first)
        return x->first < y->first ? -1 : 1;
    if (x->sum != y->sum)
        return x->sum < y->sum ? -1 : 1;
    return x->rank - y->rank;
}

static struct need need_of(const struct tnbc_profile_site *ps, int s)
{
    struct need nd = {s, LONG_MAX, 0};
    for (int d = 0; d < ps->comm_size; d++) {
        int p = ps->send_prio[(size_t)s * ps->nsend + d];
        if (p < 0)
            continue;
        if (p < nd.first)
            nd.first = p;
        nd.sum += p;
    }
    return nd;
}

static int add_node(struct tnbc_profile_site *ps, const char *host, struct need *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, by_need);
    struct tnbc_profile_node *nd = &ps->nodes[ps->nnodes];
    nd->host = strdup(host);
    nd->ranks = malloc((size_t)n * sizeof(int));
    if (!nd->host || !nd->ranks) {
        free(nd->host);
        free(nd->ranks);
        return -1;
    }
    nd->nranks = n;
    for (int i = 0; i < n; i++)
        nd->ranks[i] = v[i].rank;
    ps->nnodes++;
    return 0;
}

int an_nodes(const struct an_trace *t, const struct an_site *s, struct tnbc_profile_site *ps)
{
    if (ps->chunks > 0)
        return 0;
    int N = ps->comm_size, rc = 0;
    const int *w = s->world; /* an_site_world */
    char *done = calloc((size_t)N, 1);
    struct need *v = malloc((size_t)N * sizeof *v);
    ps->nodes = calloc((size_t)N, sizeof *ps->nodes);
    if (!done || !v || !ps->nodes) {
        rc = -1;
        goto out;
    }
    if (!w || s->nworld < N)
        goto out; /* members unknown: no node table */
    for (int a = 0; a < N && rc == 0; a++) {
        if (done[a] || w[a] < 0)
            continue;
        const char *host = t->ranks[w[a]].host;
        int n = 0;
        for (int b = a; b < N; b++) {
            if (done[b] || w[b] < 0 || strcmp(t->ranks[w[b]].host, host) != 0)
                continue;
            done[b] = 1;
            v[n++] = need_of(ps, b);
        }
        if (n > 1)
            rc = add_node(ps, host, v, n);
    }
out:
    free(done);
    free(v);
    return rc;
}
