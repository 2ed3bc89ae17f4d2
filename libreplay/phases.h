/* SPDX-License-Identifier: BSD-3-Clause */
/* Where an early return's time goes: the steps of tnbc_mode_collective
 * timed per call, summed per site (the summary's early_cost table, read by
 * tnbc report and tnbc analyze --measured) and per rank (one line at
 * MPI_Finalize when TNBC_REPLAY_PHASES=1); docs/replay.md, "The early
 * return's cost".
 *
 * A call's steps accumulate in its thread's current record from
 * phase_start on; phase_call_done adds them to the site's and the rank's
 * sums once the call has returned early. A call that ends blocking never
 * reaches phase_call_done, and the next phase_start drops its record. */
#ifndef TNBC_REPLAY_PHASES_H
#define TNBC_REPLAY_PHASES_H

#include <stdint.h>

enum phase {
    PHASE_CANDIDATE,  /* profile lookup, layout, schedule built */
    PHASE_AGREE,      /* the ranks' agreement (one small MPI_Alltoall) */
    PHASE_PLAN,       /* send pieces cut to the receivers' edge requests */
    PHASE_LAND_SELF,  /* this rank's own block copied in, before the guard */
    PHASE_ARM,        /* receive pages guarded */
    PHASE_COPY,       /* send buffer copied, or its pages made read-only
                         (send_guard.h) and only its edges copied */
    PHASE_SUBMIT,     /* handed to the progress thread */
    PHASE_EDGES,      /* waited for edge and unguarded sub-messages */
    PHASE_COUNT
};

/* A site's (or a rank's) early returns: how many, and their steps summed. */
struct phase_sums {
    int64_t calls;
    uint64_t ticks[PHASE_COUNT];
};

/* Starts timing a call (dropping the thread's unfinished record); returns
 * the clock to pass to phase_end. */
uint64_t phase_start(void);
/* Adds the time since *clock to step k of the current call and restarts
 * *clock. */
void phase_end(uint64_t *clock, enum phase k);
/* The call waited since *clock for the progress thread to start its
 * steps (replay.c, push_first): not one of its steps, whose sum is the
 * early return's cost, but counted apart for the rank's line (pushed,
 * push_wait). Restarts *clock. */
void phase_push(uint64_t *clock);
/* The current call returned early: its steps are added to *site (NULL:
 * a call site dladdr could not name) and to the rank's sums. */
void phase_call_done(struct phase_sums *site);
/* The current call sends from the program's own pages (send_guard.h):
 * counted for the rank's line (sent_in_place). */
void phase_sent_in_place(void);
/* One line on stderr with this rank's mean per step, when asked for. */
void phase_report(int rank);

struct tnbc_db;
/* One early_cost row (docs/schema.md): the site's steps in ns and the
 * progress thread's landing of its pieces (land_ns, land_bytes). Returns 0,
 * or -1 when SQLite refused it. */
int phase_write(struct tnbc_db *db, int rank, const char *site, const char *op,
                const struct phase_sums *s, int64_t land_ns, int64_t land_bytes);

#endif
