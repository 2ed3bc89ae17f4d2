/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * shmemx.h - tnbc-shmem extensions for irregular codes (design paper 002).
 *
 * Active messages: a handler registered collectively runs on the target PE,
 * atomically with respect to every other handler on that PE. It runs inside
 * a library call on the target (passive progress): the wait/test family,
 * shmem_barrier_all, shmemx_sync_seg, waiting for a lock, or shmemx_am_poll().
 * Every message sent before shmem_barrier_all has run when the barrier
 * returns on every PE, including messages sent by handlers.
 *
 * Segments: a symmetric-heap area plus a counter of incoming shmemx_put_seg
 * operations. shmemx_sync_seg waits until the count given at registration has
 * arrived, consumes it, and returns; no acknowledgement travels per put.
 *
 * Two-address reads: shmemx_get_to asks PE src_pe to deliver its copy of
 * src into dest on PE dest_pe; the data never passes through the caller.
 */
#ifndef TNBC_SHMEMX_H
#define TNBC_SHMEMX_H

#include <stddef.h>
#include <stdint.h>

#include <shmem.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Largest payload of one active message. */
#define SHMEMX_AM_MAX_BYTES (1u << 20)

typedef void (*shmemx_am_handler_t)(int src_pe, const void *data, size_t len);

/* Collective: every PE registers the same handlers in the same order.
 * Returns the handler id (>= 0), or -1 with a message on error. */
int shmemx_register_handler(shmemx_am_handler_t handler);
/* Sends len bytes (copied; data may be reused at once) to handler on pe. */
void shmemx_send(int pe, int handler, const void *data, size_t len);
/* Runs the handlers of messages that have arrived; returns how many ran. */
int shmemx_am_poll(void);

/* Collective: addr/len must be a symmetric-heap area (same on every PE);
 * expected is this PE's own count of incoming puts per phase.
 * Returns the segment id (>= 0), or -1 with a message on error. */
int shmemx_register_seg(void *addr, size_t len, long expected);
void shmemx_put_seg(int seg, void *dest, const void *src, size_t nbytes, int pe);
/* Waits for this PE's expected count of puts into seg, then subtracts it so
 * the segment is ready for the next phase. Not collective. */
void shmemx_sync_seg(int seg);
/* Puts counted so far into seg on this PE (for tests and diagnostics). */
long shmemx_seg_count(int seg);

/* Delivers nbytes at src on src_pe into dest on dest_pe. Non-blocking;
 * complete after shmem_barrier_all. */
void shmemx_get_to(void *dest, const void *src, size_t nbytes, int dest_pe,
                  int src_pe);

#ifdef __cplusplus
}
#endif

#endif /* TNBC_SHMEMX_H */
