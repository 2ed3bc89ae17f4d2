// SPDX-License-Identifier: BSD-3-Clause
/* The single-block operations as one non-blocking collective per chunk:
 * allreduce and reduce (MPI_Iallreduce/Ireduce over a range of elements;
 * bcast cuts its chunks the same way, then goes as a chain, plan_chain.c),
 * scatter(v) (MPI_Iscatterv) and reduce_scatter(_block)
 * (MPI_Ireduce_scatter). Every rank runs the same chunks in the same
 * (profile) order, so the chunk collectives match. This file owns the
 * chunk steps and the per-chunk counts and displacements. */
#include "plan.h"
#include "pool.h"

#include <limits.h>
#include <string.h>

#include "testalloc.h"

/* bcast, allreduce, reduce: one non-blocking collective per chunk (bcast:
 * a chain of pieces), in the chunks' priority order (the same on every
 * rank: the agreement checks it). */
const char *plan_chunked(struct nbop *op, const struct tnbc_profile_site *site, const int *node_of)
{
    const struct tnbc_args *a = &op->a;
    int me = op->layout.comm_rank, m = site->chunks > 0 ? site->chunks : 1;
    long first[64], n[64];
    int k;

    if (a->op != TNBC_BCAST && !tnbc_reduction_is_exact(a->rtype, a->mpi_op))
        return "floating-point or user-defined reduction (results could differ in the last bit)";
    if (a->op == TNBC_ALLREDUCE && a->sendbuf == MPI_IN_PLACE)
        return "MPI_IN_PLACE";
    if (m > 64)
        m = 64;
    k = tnbc_chunk_split(a->rcount, m, first, n);
    if (k == 0)
        return "zero-size";
    if (op->layout.recv.nsub) {
        /* Reduce at the root in place: its contribution is in recvbuf. (A
         * derived type's holes in the shadow are never landed.) */
        op->vrecv = pool_mirror(&op->layout.recv, a->recvbuf, &op->shadow, a->sendbuf == MPI_IN_PLACE);
        if (!op->vrecv)
            return nbop_oom;
    }
    if (op->layout.send.nsub) {
        const void *src = a->op == TNBC_BCAST ? a->recvbuf : a->sendbuf;
        op->vsend = pool_mirror(&op->layout.send, src, &op->sendcopy, 1);
        if (!op->vsend)
            return nbop_oom;
    }
    if (a->op == TNBC_BCAST)
        return plan_bcast_chain(op, site, node_of, k, first, n);
    MPI_Aint ext = nbop_extent(a->rtype);
    for (int c = 0; c < k; c++) {
        struct step *s = plan_step_new(op);
        int prio = tnbc_profile_recv_prio(site, me, c);
        if (!s || n[c] > INT_MAX)
            return !s ? nbop_oom : "a chunk of 2^31 elements or more";
        *s = (struct step){ .kind = STEP_CHUNK, .sub = op->layout.recv.nsub ? c : -1, .peer = c,
                            .prio = prio < 0 ? INT_MAX : prio,
                            .buf = op->vrecv ? op->vrecv + first[c] * ext : op->vsend + first[c] * ext,
                            .count = (int)n[c], .type = a->rtype, .chunk_first = first[c] };
    }
    return NULL;
}

/* Chunk c's share of `count` elements when every rank cuts its own count in
 * exactly m chunks (some empty when count < m): the same cut at the root,
 * which cuts each destination's count, and at that destination. */
static void scatter_cut(long count, int m, int c, long *first, long *n)
{
    *first = count * c / m;
    *n = count * (c + 1) / m - *first;
}

#define SCATTER_MAX_CHUNKS 64

/* Scatter(v) and reduce_scatter(_block): one chunk step per scatter_cut
 * share of this rank's `count` received elements, in the profile's
 * priority order; an empty share has no sub-message. The step lands in the
 * receive shadow (no shadow: a root scattering in place receives nothing). */
static const char *cut_chunk_steps(struct nbop *op, const struct tnbc_profile_site *site, int m,
                                   long count)
{
    int me = op->layout.comm_rank;
    MPI_Aint ext = nbop_extent(op->a.rtype);
    for (int c = 0, sub = 0; c < m; c++) {
        long first, n;
        struct step *s = plan_step_new(op);
        int prio = tnbc_profile_recv_prio(site, me, c);
        if (!s)
            return nbop_oom;
        scatter_cut(count, m, c, &first, &n);
        *s = (struct step){ .kind = STEP_CHUNK, .sub = n > 0 && op->layout.recv.nsub ? sub++ : -1,
                            .peer = c, .prio = prio < 0 ? INT_MAX : prio,
                            .buf = op->vrecv ? op->vrecv + first * ext : NULL,
                            .count = (int)n, .type = op->a.rtype, .chunk_first = first };
    }
    return NULL;
}

const int *nbop_scatter_counts(const struct nbop *op, int c)
{
    return op->scatter_cd ? op->scatter_cd + (size_t)c * 2 * (size_t)op->layout.comm_size : NULL;
}

const int *nbop_scatter_displs(const struct nbop *op, int c)
{
    return op->scatter_cd ? nbop_scatter_counts(op, c) + op->layout.comm_size : NULL;
}

/* Scatter(v) as m MPI_Iscatterv, one per chunk: chunk c takes the c-th
 * m-th of every destination's block. Every rank runs exactly m of them
 * (the chunk collectives must match), whatever its own count; a chunk
 * empty here has no sub-message. Element counts cut alike on both sides
 * when the root's send type and the receiver's type have the same size
 * (the type-signature rule then makes the counts equal): plan_order_hash
 * includes that size, so ranks whose sizes differ run the call blocking. */
const char *plan_scattered(struct nbop *op, const struct tnbc_profile_site *site)
{
    const struct tnbc_args *a = &op->a;
    int p = op->layout.comm_size, me = op->layout.comm_rank, root = a->root == me;
    int m = site->chunks > 0 ? site->chunks : 1, in_place = root && a->recvbuf == MPI_IN_PLACE;
    if (m > SCATTER_MAX_CHUNKS)
        m = SCATTER_MAX_CHUNKS;
    if (!in_place) {
        op->vrecv = pool_mirror(&op->layout.recv, a->recvbuf, &op->shadow, 0);
        if (!op->vrecv)
            return nbop_oom;
    }
    if (root) {
        op->vsend = pool_mirror(&op->layout.send, a->sendbuf, &op->sendcopy, 1);
        op->scatter_cd = malloc((size_t)m * 2 * (size_t)p * sizeof *op->scatter_cd);
        if (!op->vsend || !op->scatter_cd)
            return nbop_oom;
        for (int c = 0; c < m; c++)
            for (int k = 0; k < p; k++) {
                long count = a->scounts ? a->scounts[k] : a->scount, first, n;
                long displ = a->sdispls ? a->sdispls[k] : (long)k * a->scount;
                scatter_cut(count, m, c, &first, &n);
                op->scatter_cd[((size_t)c * 2) * (size_t)p + (size_t)k] = (int)n;
                op->scatter_cd[((size_t)c * 2 + 1) * (size_t)p + (size_t)k] = (int)(displ + first);
            }
    }
    return cut_chunk_steps(op, site, m, in_place ? 0 : a->rcount);
}

/* Reduce_scatter(_block) as m MPI_Ireduce_scatter, one per chunk: chunk c
 * reduces the c-th m-th of every rank's block (scatter_cut of its count, the
 * same at every rank, which knows every count). Its send data are those
 * parts of the send buffer, packed chunk after chunk into the private
 * copy. Exact reductions only, as for allreduce. */
const char *plan_reduce_scattered(struct nbop *op, const struct tnbc_profile_site *site)
{
    const struct tnbc_args *a = &op->a;
    int p = op->layout.comm_size, me = op->layout.comm_rank;
    int m = site->chunks > 0 ? site->chunks : 1;
    if (m > SCATTER_MAX_CHUNKS)
        m = SCATTER_MAX_CHUNKS;
    if (!tnbc_reduction_is_exact(a->rtype, a->mpi_op))
        return "floating-point or user-defined reduction (results could differ in the last bit)";
    if (a->sendbuf == MPI_IN_PLACE)
        return "MPI_IN_PLACE";    /* replay.c passes the out-of-place equivalent */
    MPI_Aint ext = nbop_extent(a->rtype);
    long total = 0;
    for (int k = 0; k < p; k++)
        total += a->rcounts ? a->rcounts[k] : a->rcount;
    op->vrecv = pool_mirror(&op->layout.recv, a->recvbuf, &op->shadow, 0);
    op->sendcopy = pool_get((size_t)(total ? total : 1) * (size_t)ext);
    op->scatter_cd = malloc((size_t)m * 2 * (size_t)p * sizeof *op->scatter_cd);
    if (!op->vrecv || !op->sendcopy || !op->scatter_cd)
        return nbop_oom;
    op->vsend = op->sendcopy;
    /* counts[k]: rank k's part of chunk c; displs[0]: where chunk c starts
     * in the packed copy (elements). */
    long packed = 0;
    for (int c = 0; c < m; c++) {
        int *counts = op->scatter_cd + (size_t)c * 2 * (size_t)p;
        counts[p] = (int)packed;
        long block = 0;
        for (int k = 0; k < p; k++) {
            long count = a->rcounts ? a->rcounts[k] : a->rcount, first, n;
            scatter_cut(count, m, c, &first, &n);
            counts[k] = (int)n;
            memcpy(op->sendcopy + packed * ext, (const char *)a->sendbuf + (block + first) * ext,
                   (size_t)(n * ext));
            packed += n;
            block += count;
        }
    }
    return cut_chunk_steps(op, site, m, a->rcounts ? a->rcounts[me] : a->rcount);
}
