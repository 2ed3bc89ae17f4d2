/* SPDX-License-Identifier: BSD-3-Clause */
/* The progress thread: drives the schedules of transformed collectives
 * with non-blocking MPI on the private communicator, in priority order,
 * keeping at most `window` sends of one call in flight so a low-priority
 * block never takes bandwidth from a higher one that is ready. It polls
 * with an exponential back-off and sleeps when nothing is in flight, so it
 * does not take a core from the computation it overlaps. */
#ifndef TNBC_PROGRESS_H
#define TNBC_PROGRESS_H

#include <stdint.h>

#include "nbop.h"

/* Starts the thread (named tnbc-progress) if it is not running: on the
 * first call that goes early, so a run whose calls all stay blocking has
 * none. 0, or -1 when it cannot be started. Application thread only. */
int progress_start(int window, long max_sleep_us, int batch);
int progress_running(void);
void progress_submit(struct nbop *op);
/* Blocks until the progress thread has started op's first steps (its
 * receives posted, its first window of sends handed to MPI). */
void progress_wait_started(struct nbop *op);
/* Waits until every submitted call has completed. */
void progress_quiesce(void);
void progress_stop(void);
/* The program blocks until the progress thread has done something (data
 * landed, sends done): the thread polls at its shortest interval from
 * progress_wait_begin to progress_wait_end. begin returns the wait's
 * start (tnbc_ns_now), end the nanoseconds waited since. Nestable;
 * async-signal-safe (the fault path waits this way). */
uint64_t progress_wait_begin(void);
int64_t progress_wait_end(uint64_t began_ns);
/* Completed calls (their guards lifted), for the application thread to
 * account and free; NULL when none. */
struct nbop *progress_take_done(void);

#endif
