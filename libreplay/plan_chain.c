// SPDX-License-Identifier: BSD-3-Clause
/* Bcast as a pipelined chain of point-to-point pieces, node by node.
 *
 * Why not one MPI_Ibcast per chunk: Open MPI's non-blocking bcast (libnbc)
 * uses a binomial tree for up to 4 ranks and does not look at nodes, so on
 * 2 nodes x 2 ranks it sent every byte over the network twice (measured:
 * 176 MiB crossed the link for 88 MiB of bcast data, where the blocking
 * MPI_Bcast sent 88), and tuned ran 1.32x slower than plain
 * (docs/bench.md). The chain enters each node once: root first, then the
 * rest of its node, then every other node's members together.
 *
 * Each chunk travels in pieces of about the profile's piece size, so a
 * rank forwards a piece as soon as it has it (the chain's latency is one
 * piece per hop, not one chunk). Every piece of a call uses the call's one
 * body tag: pieces match in the order they are sent, which is the order
 * every rank sorts its steps in (priority, then place in the buffer), and
 * a forwarder relays strictly in that order (progress.c). The order is
 * checked in the ranks' agreement (op->order_hash): ranks whose profiles
 * order the chunks differently run the call blocking. */
#include "plan.h"

#include <assert.h>
#include <limits.h>
#include <stdlib.h>

/* Pieces per call at most: every receive is posted at once. */
#define CHAIN_MAX_PIECES 512

/* A chain piece is at most this, whatever the per-source piece size: each
 * hop relays a piece only once it has it whole, so a piece that a
 * transport must split or hand over in a second round trip delays every
 * later hop. Open MPI's shared-memory transport (vader) sends up to 32 KiB
 * *with* its header in the first fragment; a 32 KiB piece took one more
 * round trip, which on a node whose CPU its ranks share waits for the
 * receiver's progress thread. Measured (docs/replay.md, "The piece size"):
 * 1 MiB bcast at 2 x 2, 1 Gbit/s, 14.5-15.4 ms per iteration with 32 KiB
 * pieces, 12.6-13.2 with 16 KiB, and 12.8-13.3 with 32 KiB once vader's
 * fragments were raised to 64 KiB; no difference at 2 x 1 (TCP only). */
#define CHAIN_PIECE_MAX_BYTES 16384

/* This rank's neighbours in the chain: root first, then the others node
 * by node (nodes in the order their first member follows the root,
 * cyclically), each node's members in cyclic order from the root.
 * node_of: comms.h's node map. -1 when there is none; 0 or -1 (out of
 * memory). */
static int chain_neighbours(int p, int root, int me, const int *node_of, int *pred, int *succ)
{
    int *firstpos = malloc(3 * (size_t)p * sizeof *firstpos);
    if (!firstpos)
        return -1;
    int *last = firstpos + p, *next = last + p;
    assert(node_of);
    for (int r = 0; r < p; r++) {
        firstpos[r] = INT_MAX;
        last[r] = next[r] = -1;
    }
    for (int i = 0; i < p; i++) {          /* members of each node, cyclically */
        int r = (root + i) % p, g = node_of[r];
        assert(g >= 0 && g < p);
        if (firstpos[g] == INT_MAX)
            firstpos[g] = i;
        else
            next[last[g]] = r;
        last[g] = r;
    }
    int prev = -1;
    *pred = *succ = -1;
    for (int i = 0; i < p; i++) {          /* nodes in order, their members in turn */
        int r = (root + i) % p, g = node_of[r];
        if (firstpos[g] != i)
            continue;
        for (int q = r; q >= 0; q = next[q]) {
            if (q == me)
                *pred = prev;
            if (prev == me)
                *succ = q;
            prev = q;
        }
    }
    free(firstpos);
    assert((*pred < 0) == (me == root));
    return 0;
}

static int add_piece(struct nbop *op, enum step_kind kind, int peer, int chunk, int prio,
                     char *buf, long first, long count)
{
    struct step *s = plan_step_new(op);
    if (!s)
        return -1;
    *s = (struct step){ .kind = kind, .sub = kind == STEP_RECV ? chunk : -1, .chain = 1,
                        .peer = peer, .prio = prio, .part = PART_BODY, .buf = buf,
                        .count = (int)count, .type = op->a.rtype, .chunk_first = first };
    if (kind == STEP_RECV)
        op->chain_left[chunk]++;
    return 0;
}

const char *plan_bcast_chain(struct nbop *op, const struct tnbc_profile_site *site, const int *node_of,
                             int k, const long *first, const long *n)
{
    const struct tnbc_args *a = &op->a;
    int p = op->layout.comm_size, me = op->layout.comm_rank, pred, succ, tsize = 0;
    char *base = op->vrecv ? op->vrecv : op->vsend;
    MPI_Aint ext = nbop_extent(a->rtype);

    assert(k > 0 && k <= 64 && base);
    if (PMPI_Type_size(a->rtype, &tsize) != MPI_SUCCESS || tsize <= 0)
        return "zero-size";
    if (chain_neighbours(p, a->root, me, node_of, &pred, &succ) != 0)
        return nbop_oom;
    long piece = plan_piece_bytes() < CHAIN_PIECE_MAX_BYTES ? plan_piece_bytes() : CHAIN_PIECE_MAX_BYTES;
    long elems = piece / tsize, total = first[k - 1] + n[k - 1];
    if (elems < 1)
        elems = 1;
    if (total / elems >= CHAIN_MAX_PIECES)
        elems = total / CHAIN_MAX_PIECES + 1;
    for (int c = 0; c < k; c++) {
        int prio = tnbc_profile_recv_prio(site, me, c);
        prio = prio < 0 ? INT_MAX : prio;
        for (long e = first[c]; e < first[c] + n[c]; e += elems) {
            long cnt = first[c] + n[c] - e < elems ? first[c] + n[c] - e : elems;
            if (cnt > INT_MAX)
                return "a piece of 2^31 elements or more";
            if ((pred >= 0 && add_piece(op, STEP_RECV, pred, c, prio, base + e * ext, e, cnt) != 0) ||
                (succ >= 0 && add_piece(op, STEP_SEND, succ, c, prio, base + e * ext, e, cnt) != 0))
                return nbop_oom;
        }
    }
    return NULL;
}

/* After plan_finish sorted the steps: the i-th chain receive and the i-th
 * chain send are the same piece (both sorted by priority, then place; each
 * has one peer), so each send relays that receive. */
void plan_chain_link(struct nbop *op)
{
    int r = 0, s = 0;
    for (;;) {
        while (r < op->nsteps && !(op->steps[r].chain && op->steps[r].kind == STEP_RECV))
            r++;
        while (s < op->nsteps && !(op->steps[s].chain && op->steps[s].kind == STEP_SEND))
            s++;
        if (r == op->nsteps || s == op->nsteps)
            break;
        assert(op->steps[r].buf == op->steps[s].buf && op->steps[r].count == op->steps[s].count);
        op->steps[s].after = r + 1;
        r++;
        s++;
    }
}

/* The size of the elements this rank cuts its chunks in: the send type at
 * a scatter's root, else the receive type (which the single-block
 * operations use on both sides). */
static uint32_t chunk_elem_size(const struct nbop *op)
{
    const struct tnbc_args *a = &op->a;
    int root = a->root == op->layout.comm_rank, size = 0;
    MPI_Datatype t = (a->op == TNBC_SCATTER || a->op == TNBC_SCATTERV) && root ? a->stype : a->rtype;
    PMPI_Type_size(t, &size);
    return (uint32_t)size;
}

/* The chunk schedule every rank must share, as the sorted steps give it:
 * the chunk collectives' order (and their counts, but for scatter(v) and
 * reduce_scatter, whose counts differ by rank), or the chain's pieces
 * (first element and count, in the order they travel: a forwarder's
 * receives, which its sends repeat; the root's sends; a last rank's
 * receives); and the size of the elements the chunks are cut in, so that
 * ranks whose types differ (legal when their signatures match) do not cut
 * them differently. */
unsigned plan_order_hash(const struct nbop *op)
{
    uint32_t h = 2166136261u ^ chunk_elem_size(op);
    int per_rank_counts = op->a.op == TNBC_SCATTER || op->a.op == TNBC_SCATTERV ||
                          op->a.op == TNBC_REDUCE_SCATTER || op->a.op == TNBC_REDUCE_SCATTER_BLOCK;
    int recvs = 0;
    for (int i = 0; i < op->nsteps; i++)
        recvs |= op->steps[i].chain && op->steps[i].kind == STEP_RECV;
    for (int i = 0; i < op->nsteps; i++) {
        const struct step *s = &op->steps[i];
        uint32_t v[2];
        if (s->kind == STEP_CHUNK) {
            v[0] = (uint32_t)s->peer;
            v[1] = per_rank_counts ? 0 : (uint32_t)s->count;
        } else if (s->chain && (s->kind == STEP_RECV) == recvs) {
            v[0] = (uint32_t)s->chunk_first;
            v[1] = (uint32_t)s->count;
        } else {
            continue;
        }
        for (int j = 0; j < 2; j++) {
            h ^= v[j];
            h *= 16777619u;
        }
    }
    return h | 1;
}
