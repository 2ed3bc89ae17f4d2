/* SPDX-License-Identifier: BSD-3-Clause */
/* Putting received bytes into receive pages that are still guarded.
 *
 * The program must not see a sub-message before it is complete, so its
 * pages stay PROT_NONE while it lands; Open MPI's shared-memory and TCP
 * transports copy with the CPU and would fault there. Data is therefore
 * received into private memory and written into the guarded pages through
 * /proc/self/mem, whose writes pass page protection (FOLL_FORCE); the pages
 * are opened afterwards. One extra copy, done by the progress thread.
 * Where the CPU has memory protection keys, the pages are closed with a
 * key only the progress thread allows, and its landing is a memcpy. */
#ifndef TNBC_LAND_H
#define TNBC_LAND_H

#include <stddef.h>

/* Opens /proc/self/mem and checks that a write through it reaches a
 * PROT_NONE page. 0, or -1 with *why set and no descriptor kept (then
 * land_check refuses every call: nothing is transformed). */
int land_init(const char **why);
/* Before an early return: the descriptor is still /proc/self/mem (the
 * program may have closed its number, or put a file there with dup2), and
 * is opened again where it is not. 0, or -1 with *why set (the call then
 * runs blocking). Application thread. */
int land_check(const char **why);
/* The descriptor landings write through (-1: none). */
int land_fd(void);
/* The progress thread, at its start: its own landings may copy into
 * guarded pages directly where they are closed with a protection key
 * (land.c); a no-op otherwise. */
void land_thread_direct(void);
/* "pkey" or "procmem": how guarded pages are closed and written. */
const char *land_method(void);
/* The protection key guarded pages close with, or -1 (procmem). */
int land_pkey(void);
/* The guard's closed_prot for receive pages this landing writes:
 * TNBC_PROT_KEYED or PROT_NONE. */
int land_closed_prot(void);
/* Copies n bytes from src to dst (dst may be guarded). 0 or -1. */
int land(void *dst, const void *src, size_t n);
/* Copies n bytes from src (which may be guarded) to dst. 0 or -1. */
int land_read(void *dst, const void *src, size_t n);

#endif
