/* SPDX-License-Identifier: BSD-3-Clause */
/* Where an early return's time goes: the steps of tnbc_mode_collective
 * timed per call and averaged per rank, printed at MPI_Finalize when
 * TNBC_REPLAY_PHASES=1 (docs/replay.md, "The early return's cost"). */
#ifndef TNBC_REPLAY_PHASES_H
#define TNBC_REPLAY_PHASES_H

#include <stdint.h>

enum phase {
    PHASE_CANDIDATE,  /* profile lookup, layout, schedule built */
    PHASE_AGREE,      /* the ranks' agreement (one small MPI_Alltoall) */
    PHASE_PLAN,       /* send pieces cut to the receivers' edge requests */
    PHASE_LAND_SELF,  /* this rank's own block copied in, before the guard */
    PHASE_ARM,        /* receive pages guarded */
    PHASE_COPY,       /* send buffer copied */
    PHASE_SUBMIT,     /* handed to the progress thread */
    PHASE_EDGES,      /* waited for edge and unguarded sub-messages */
    PHASE_COUNT
};

/* Starts timing a call; returns the clock to pass to phase_end. */
uint64_t phase_start(void);
/* Adds the time since *clock to phase k and restarts *clock. */
void phase_end(uint64_t *clock, enum phase k);
/* Counts one early return whose phases were all timed. */
void phase_call_done(void);
/* One line on stderr with this rank's mean per phase, when asked for. */
void phase_report(int rank);

#endif
