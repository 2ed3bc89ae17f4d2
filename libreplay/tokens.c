// SPDX-License-Identifier: BSD-3-Clause
/* The node schedule (digest 000: one process's highest-priority blocks get
 * the node's network to themselves at a time). The ranks of a node pass a
 * token along in the profile's phase order: a rank's bodies to other nodes
 * wait for it (gated sends), and it hands the token on when they are done.
 * This file owns the token steps and the node table's use; the progress
 * thread runs the steps. */
#include "plan.h"

#include <assert.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>

/* Set once at start (nbop_configure). */
static int node_schedule = 1;
static double turn_pace = 0;

void tokens_set_schedule(int on, double pace)
{
    node_schedule = on;
    turn_pace = pace;
}

/* How long a rank keeps its node's turn at least, from when it got it: its
 * share of the site's blocking Tcomm (the node's ranks taking equal turns
 * on its link), times TNBC_TURN_PACE. A turn otherwise ends when the
 * rank's sends to other nodes complete, and over TCP they complete once
 * the socket has taken them: with Linux's autotuned buffers a rank's 2 MiB
 * were taken at once, the next rank's data followed at once and shared the
 * link with it (docs/replay.md, step 5). Only where every rank sends to
 * every other (alltoall(v), allgather(v)): there each rank's sends to other
 * nodes are its share of what the node's link carries for Tcomm. A
 * gather(v)'s Tcomm is the root's, waiting for the last sender included,
 * and a sender's block is a small part of it: holding the turn for that
 * share made a user program's 4-rank gatherv of about 60 KB per rank, on
 * the emulated 2 x 2 cluster, cost 5 ms per iteration (23.3 against 18.1
 * plain; 16.8-17.8 without the hold). 0: no minimum (the last rank of its
 * node, a rooted operation, no model, or pacing off). */
static uint64_t turn_ns(const struct nbop *op, const struct tnbc_profile_site *site, int nranks)
{
    double tcomm = site->model.tcomm_ns;
    int rooted = op->a.op == TNBC_GATHER || op->a.op == TNBC_GATHERV;
    if (turn_pace <= 0 || rooted || nranks < 2 || !isfinite(tcomm) || tcomm <= 0)
        return 0;
    return (uint64_t)(turn_pace * tcomm / nranks);
}

/* Where this rank stands in its node's schedule: the ranks just before
 * and after it, and its turn's least length. The caller has set them to
 * -1 and 0 (the ends, or no schedule). */
static void node_neighbours(struct nbop *op, const struct tnbc_profile_site *site)
{
    int me = op->layout.comm_rank;
    assert(op->token_from == -1 && op->token_to == -1 && op->turn_ns == 0);
    for (int n = 0; node_schedule && n < site->nnodes; n++) {
        const struct tnbc_profile_node *node = &site->nodes[n];
        for (int k = 0; k < node->nranks; k++) {
            if (node->ranks[k] != me)
                continue;
            op->token_from = k > 0 ? node->ranks[k - 1] : -1;
            op->token_to = k + 1 < node->nranks ? node->ranks[k + 1] : -1;
            op->turn_ns = op->token_to >= 0 ? turn_ns(op, site, node->nranks) : 0;
            return;
        }
    }
}

/* FNV-1a over the node table (ranks in phase order, node by node); never 0
 * for a table, 0 without one. */
int tokens_hash(const struct tnbc_profile_site *site)
{
    uint32_t h = 2166136261u;
    if (!node_schedule || site->nnodes == 0)
        return 0;
    for (int n = 0; n < site->nnodes; n++)
        for (int k = -1; k < site->nodes[n].nranks; k++) {
            h ^= (uint32_t)(k < 0 ? -1 - n : site->nodes[n].ranks[k]);
            h *= 16777619u;
        }
    return (int)(h | 1);
}

/* Is rank r on this rank's node (per the profile's node table)? */
int tokens_same_node(const struct tnbc_profile_site *site, int me, int r)
{
    for (int n = 0; n < site->nnodes; n++) {
        const struct tnbc_profile_node *node = &site->nodes[n];
        int has_me = 0, has_r = 0;
        for (int k = 0; k < node->nranks; k++) {
            has_me |= node->ranks[k] == me;
            has_r |= node->ranks[k] == r;
        }
        if (has_me)
            return has_r;
    }
    return 0;
}

static int add_token(struct nbop *op, enum step_kind kind, int peer, int prio)
{
    struct step *s = plan_step_new(op);
    if (!s)
        return -1;
    *s = (struct step){ .kind = kind, .sub = -1, .peer = peer, .prio = prio };
    return 0;
}

/* The node schedule is followed only when every rank would follow the same
 * one. Every rank of a node takes part in its token chain, whether or not
 * it sends anything itself (a root gathering in place sends nothing). */
int tokens_plan(struct nbop *op, const struct edge_req *got)
{
    int p = op->layout.comm_size, same_schedule = 1;
    for (int r = 0; r < p; r++)
        same_schedule &= got[r].nodes_hash == op->nodes_hash;
    op->token_from = op->token_to = -1;
    op->turn_ns = 0;
    op->turn_end_ns = 0;
    if (same_schedule)
        node_neighbours(op, op->site_prio);
    op->token_ok = op->token_from < 0;
    if ((op->token_from >= 0 && add_token(op, STEP_TOKEN_IN, op->token_from, INT_MIN) != 0) ||
        (op->token_to >= 0 && add_token(op, STEP_TOKEN_OUT, op->token_to, INT_MAX) != 0))
        return -1;
    return 0;
}
