// SPDX-License-Identifier: BSD-3-Clause
/*
 * tnbc profile: the parts shared by reader and writer users — lookup,
 * checking a running call against a site, priorities, freeing.
 */
#include "profile.h"
#include "fnv.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const chunked_ops[] = {"bcast", "allreduce", "reduce", "scatter",
                                          "scatterv", "reduce_scatter_block",
                                          "reduce_scatter", NULL};
static const char *const per_source_ops[] = {"alltoall", "alltoallv", "allgather",
                                             "allgatherv", "gather", "gatherv", NULL};

static int in_list(const char *const *list, const char *s)
{
    for (; *list; list++)
        if (strcmp(*list, s) == 0)
            return 1;
    return 0;
}

int tnbc_profile_op_is_chunked(const char *op)
{
    return op && in_list(chunked_ops, op);
}

int tnbc_profile_op_known(const char *op)
{
    return op && (in_list(chunked_ops, op) || in_list(per_source_ops, op));
}

static void site_free(struct tnbc_profile_site *s)
{
    free(s->site);
    free(s->op);
    free(s->reason);
    free(s->order);
    if (s->rank_order) {
        for (int r = 0; r < s->comm_size; r++)
            free(s->rank_order[r]);
        free(s->rank_order);
    }
    free(s->recv_prio);
    free(s->send_prio);
    free(s->vhash_rank);
    free(s->vhash);
    for (int i = 0; i < s->nnodes; i++) {
        free(s->nodes[i].host);
        free(s->nodes[i].ranks);
    }
    free(s->nodes);
}

void tnbc_profile_free(struct tnbc_profile *p)
{
    if (!p)
        return;
    for (int i = 0; i < p->nsites; i++)
        site_free(&p->sites[i]);
    free(p->sites);
    free(p->index);
    free(p->path);
    free(p->source);
    free(p->program);
    free(p);
}

uint64_t tnbc_profile_site_hash(const char *site, const char *op)
{
    uint64_t h = tnbc_fnv1a(TNBC_FNV1A_INIT, site, strlen(site));
    h = tnbc_fnv1a_byte(h, 0xff);       /* separator no name contains */
    return tnbc_fnv1a(h, op, strlen(op));
}

const struct tnbc_profile_site *tnbc_profile_find(const struct tnbc_profile *p,
                                                  const char *site, const char *op)
{
    if (!p || !site || !op)
        return NULL;
    if (p->index) {     /* once per collective call: constant time */
        size_t mask = p->index_cap - 1, at = tnbc_profile_site_hash(site, op) & mask;
        for (int s; (s = p->index[at]) >= 0; at = (at + 1) & mask)
            if (strcmp(p->sites[s].site, site) == 0 && strcmp(p->sites[s].op, op) == 0)
                return &p->sites[s];
        return NULL;
    }
    for (int i = 0; i < p->nsites; i++)
        if (p->sites[i].site && p->sites[i].op && strcmp(p->sites[i].site, site) == 0 &&
            strcmp(p->sites[i].op, op) == 0) /* a site being parsed has no id yet */
            return &p->sites[i];
    return NULL;
}

uint64_t tnbc_profile_vhash(const int64_t *bytes, int n)
{
    uint64_t h = TNBC_FNV1A_INIT;
    for (int i = 0; i < n; i++) {
        uint64_t v = (uint64_t)bytes[i];
        for (int b = 0; b < 8; b++)          /* little-endian on every host */
            h = tnbc_fnv1a_byte(h, (unsigned char)(v >> (8 * b)));
    }
    return h;
}

static int site_error(const struct tnbc_profile *p, const struct tnbc_profile_site *s,
                      char *err, size_t errlen, const char *fmt, ...)
{
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (err && errlen) {
        snprintf(err, errlen, "%s:%d: site %s %s: %s; running it blocking",
                 p && p->path ? p->path : "(profile)", s->line, s->site, s->op, what);
        for (char *c = err; *c; c++) /* site ids may hold any decoded byte */
            if ((unsigned char)*c < ' ' || *c == 0x7f)
                *c = '?';
    }
    return -1;
}

int tnbc_profile_check(const struct tnbc_profile *p, const struct tnbc_profile_site *s,
                       int comm_size, int64_t block_bytes, int rank,
                       const int64_t *src_bytes, char *err, size_t errlen)
{
    if (!s)
        return -1;
    if (comm_size != s->comm_size)
        return site_error(p, s, err, errlen,
                          "communicator size %d in the running call, %d in the profile",
                          comm_size, s->comm_size);
    if (rank < 0 || rank >= s->comm_size)
        return site_error(p, s, err, errlen, "rank %d outside the communicator of %d",
                          rank, s->comm_size);
    if (s->block_bytes != -1 && block_bytes != s->block_bytes)
        return site_error(p, s, err, errlen,
                          "block size %lld B in the running call, %lld B in the profile",
                          (long long)block_bytes, (long long)s->block_bytes);
    if (s->has_block_range && block_bytes >= 0 &&
        (block_bytes < (s->block_min + TNBC_PROFILE_RANGE_SLACK - 1) / TNBC_PROFILE_RANGE_SLACK ||
         block_bytes > s->block_max * TNBC_PROFILE_RANGE_SLACK))
        return site_error(p, s, err, errlen,
                          "block size %lld B in the running call, traced sizes %lld-%lld B "
                          "(taken within a factor %d of them)",
                          (long long)block_bytes, (long long)s->block_min,
                          (long long)s->block_max, TNBC_PROFILE_RANGE_SLACK);
    if (s->block_bytes != -1 || !src_bytes)
        return 0; /* sizes vary: only a stable rank's hash can be checked */
    for (int i = 0; i < s->nvhash; i++) {
        if (s->vhash_rank[i] != rank)
            continue;
        uint64_t h = tnbc_profile_vhash(src_bytes, s->comm_size);
        if (h != s->vhash[i])
            return site_error(p, s, err, errlen,
                              "per-source sizes of rank %d hash to 0x%016llx, profile has "
                              "0x%016llx",
                              rank, (unsigned long long)h, (unsigned long long)s->vhash[i]);
    }
    return 0;
}

int tnbc_profile_recv_prio(const struct tnbc_profile_site *s, int rank, int idx)
{
    if (!s || rank < 0 || rank >= s->comm_size || idx < 0 || idx >= s->nsub)
        return -1;
    if (s->chunks > 0)
        return s->recv_prio[idx]; /* one row shared by every rank */
    return s->recv_prio[(size_t)rank * s->nsub + idx];
}

int tnbc_profile_send_prio(const struct tnbc_profile_site *s, int rank, int j)
{
    if (!s || rank < 0 || rank >= s->comm_size || j < 0 || j >= s->nsend)
        return -1;
    if (s->chunks > 0)
        return s->send_prio[j];
    return s->send_prio[(size_t)rank * s->nsend + j];
}

int tnbc_profile_node_phase(const struct tnbc_profile_site *s, int rank)
{
    if (!s)
        return 0;
    for (int n = 0; n < s->nnodes; n++)
        for (int i = 0; i < s->nodes[n].nranks; i++)
            if (s->nodes[n].ranks[i] == rank)
                return i;
    return 0;
}
