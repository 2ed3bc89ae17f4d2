/* SPDX-License-Identifier: BSD-3-Clause */
/* Sending from the caller's own pages instead of from a copy.
 *
 * An early return gives the send buffer back to the program while its
 * blocks are still to be sent. Copying them first was the largest step of
 * the early return (0.27-0.36 ms per MiB on the emulated cluster, where
 * the progress thread and the network share the node's CPU;
 * docs/replay.md). Instead, the buffer's whole pages are made read-only
 * (one mprotect: about 20 us per MiB) and every send step whose bytes lie
 * in them sends from there. Bytes on the first and last partial page,
 * which the buffer shares with data the program may write at any time,
 * are still copied.
 *
 * The program may read its send buffer at once, as after the blocking
 * call. A write to it before the last of those sends is done faults and
 * waits for them, as does a system call, MPI call, free or reuse of the
 * memory (the release wrappers); then the pages open. The progress thread
 * lifts the guard when the last such send is done, so a program that
 * writes the buffer only after its work never waits. Each site keeps the
 * balance of the copies saved against the time its program waited so
 * (send_guard_account); once the waits outweigh the copies, the site
 * copies from then on (replay.c, at reap).
 *
 * op->send_guard (one per op), who moves it:
 *
 *   unarmed --send_guard_arm: caller, PLANNED op, sends planned--> armed
 *   armed --send_guard_sent, the last in-place send done: progress thread--> lifted
 *   armed --send_guard_abandon: nbop_free of a never submitted op--> lifted
 *
 * Invariant: while armed, op->sends_pending is 1 and every step with
 * in_place set reads only pages the guard holds read-only; the fault
 * hook returns only once sends_pending is 0.
 *
 * Only where nothing else needs those pages writable: per-source
 * operations with a dense send type, private writable memory
 * (tnbc_guard_memory_ok), and no RDMA device, xpmem or knem on the node,
 * whose MPI transports may register send buffers for writing, which a
 * read-only page refuses. TNBC_SEND_COPY=1 always copies; =0 sends in
 * place even then. */
#ifndef TNBC_SEND_GUARD_H
#define TNBC_SEND_GUARD_H

#include "nbop.h"

/* Reads TNBC_SEND_COPY and probes the node (once, at start). */
void send_guard_configure(void);
/* Caller, op PLANNED and its sends planned: holds the whole pages of the
 * send buffer read-only and points the send steps that lie in them at the
 * caller's bytes (in_place). Returns how many steps send in place (0: the
 * guard is not armed and every step is copied). */
int send_guard_arm(struct nbop *op);
/* Progress thread: send step `s` is done. Returns 1 when it was the last
 * in-place send: the guard is lifted and waiters are woken. */
int send_guard_sent(struct nbop *op, const struct step *s);
/* A finished op of a site: adds its copy time saved (estimated) minus the
 * time the program waited for its in-place sends to the site's balance
 * (ns, capped). A site whose balance is negative copies (replay.c). */
void send_guard_account(int64_t *balance_ns, const struct nbop *op);
/* A PLANNED op freed without being submitted: nothing will send from the
 * pages; lift the guard. */
void send_guard_abandon(struct nbop *op);

#endif
