/* SPDX-License-Identifier: BSD-3-Clause */
/* What a replay did over time, for its summary (tnbc run --summary; the
 * tables arrival, fault_wait, progress and activity of docs/schema.md,
 * drawn by tnbc timeline): when each receive piece landed, when the program
 * waited in the fault path and for how long, and when the progress thread
 * was busy.
 *
 * Recorded only when a summary is asked for (activity_init); otherwise
 * every hook is one load and a branch. Events go into one buffer allocated
 * at start: a slot is claimed with one atomic add, so the hooks take no
 * lock and allocate nothing, and the fault-path hook is async-signal-safe.
 * Events past the buffer's size (TNBC_REPLAY_ACTIVITY_MAX, default 65536)
 * are counted as dropped. Only calls the summary records (op->record)
 * have their events kept; they are tied to their call row by the call's
 * entry tick when the summary is written. */
#ifndef TNBC_ACTIVITY_H
#define TNBC_ACTIVITY_H

#include "guard.h"

#include <stdint.h>

struct nbop;
struct tnbc_db;

/* Application thread, once, when the summary database is open. */
void activity_init(void);
/* Guard sub-message (piece or chunk) `sub` of op has landed; by the
 * progress thread, or by the caller for its own block. sub < 0: none. */
void activity_arrival(const struct nbop *op, int sub);
/* The program waited in the fault path (or before a system call, MPI call,
 * free or reuse of the buffer: ev) for sub of op, from t0_ns (tnbc_ns_now)
 * until now. Async-signal-safe. */
void activity_wait(const struct nbop *op, int sub, enum tnbc_guard_event ev, uint64_t t0_ns);
/* Progress thread: a pass of its loop begins; it ends having made
 * `progressed` steps of progress, `more` when calls remain in flight
 * (else it goes to sleep). Consecutive passes that progress are one busy
 * span. */
void activity_pass_begin(void);
void activity_pass_end(int progressed, int more);
/* Application thread, at the summary's end (every call recorded, the
 * progress thread stopped): writes the events and frees the buffer. */
void activity_write(struct tnbc_db *db, int rank);

#endif
