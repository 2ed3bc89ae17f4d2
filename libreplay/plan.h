/* SPDX-License-Identifier: BSD-3-Clause */
/* What the op's owner (nbop.c) shares with the planners that fill in its
 * steps: plan_source.c (per-source operations: point-to-point pieces),
 * plan_chunked.c (one non-blocking collective per chunk), plan_chain.c
 * (bcast as a chain of pieces) and tokens.c (the
 * node schedule's token chain). Internal to those files. */
#ifndef TNBC_PLAN_H
#define TNBC_PLAN_H

#include "dtype.h"
#include "nbop.h"
#include "profile.h"

/* nbop.c: a new zeroed step at the end of op->steps, growing it as needed;
 * NULL when out of memory. */
struct step *plan_step_new(struct nbop *op);
/* nbop.c: grows op->steps to hold at least `cap` steps. 0 or -1. */
int plan_steps_reserve(struct nbop *op, long cap);
/* nbop.c: orders the steps and allocates their request arrays. Called
 * exactly once per op: by nbop_create for chunked operations, by
 * nbop_plan_sends for per-source ones (calling it twice leaked the first
 * arrays). 0 or -1. */
int plan_finish(struct nbop *op);
/* nbop.c: the one way a guard sub-message's bytes reach the program's
 * buffer: lands them from `src` (where the sub-message's first byte is),
 * counts down the edge parts the call waits for (`edge_wait`, from
 * step.edge_wait), marks the sub-message complete and opens its pages.
 * `in_call`: the application thread copies its own block in while still
 * inside the call, before the guard is armed (see nbop.c). */
void plan_deliver(struct nbop *op, int sub, const char *src, int edge_wait, int in_call);

/* plan_source.c: alltoall(v), allgather(v), gather(v). NULL, or why not. */
const char *plan_per_source(struct nbop *op, const struct tnbc_profile_site *site);
/* Body pieces of about this many bytes (0: one per block). */
void plan_source_set_piece(long bytes);
long plan_piece_bytes(void);

/* plan_chunked.c: bcast, allreduce, reduce (node_of: comms.h's node map,
 * for bcast's chain); scatter(v); reduce_scatter(_block). */
const char *plan_chunked(struct nbop *op, const struct tnbc_profile_site *site, const int *node_of);
const char *plan_scattered(struct nbop *op, const struct tnbc_profile_site *site);
const char *plan_reduce_scattered(struct nbop *op, const struct tnbc_profile_site *site);

/* plan_chain.c: bcast's k chunks (first element, count) as a pipelined
 * chain of pieces; NULL, or why not. After plan_finish: plan_chain_link
 * ties each relayed send to its receive, and plan_order_hash gives the
 * chunk schedule every rank must share (checked in the agreement). */
const char *plan_bcast_chain(struct nbop *op, const struct tnbc_profile_site *site, const int *node_of,
                             int k, const long *first, const long *n);
void plan_chain_link(struct nbop *op);
unsigned plan_order_hash(const struct nbop *op);

/* tokens.c: the node schedule (1: follow the profile's node phases, 0:
 * ignore them) and the least length of a turn (a fraction of the rank's
 * share of the site's Tcomm, 0: none); the hash of a site's node table
 * as this rank would follow it (0: none); whether r is on rank me's node;
 * and the token steps of a per-source op once every rank's request is
 * known (got). 0 or -1. */
void tokens_set_schedule(int on, double pace);
int tokens_hash(const struct tnbc_profile_site *site);
int tokens_same_node(const struct tnbc_profile_site *site, int me, int r);
int tokens_plan(struct nbop *op, const struct edge_req *got);

#endif
