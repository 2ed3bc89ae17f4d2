/* SPDX-License-Identifier: BSD-3-Clause */
/* Allocation failure injection for the op's files (nbop.c, pool.c and the
 * planners), sanitizer builds only (libreplay/module.mk defines
 * TNBC_TEST_HOOKS): TNBC_TEST_FAIL_ALLOC=N makes every N-th allocation of
 * those files fail (one count for all of them), so test/replay.sh can check
 * that an allocation failure votes blocking and nothing else changes.
 * Include it after the system headers. */
#ifndef TNBC_TESTALLOC_H
#define TNBC_TESTALLOC_H

#include <stdlib.h>

#ifdef TNBC_TEST_HOOKS
void *testalloc_malloc(size_t n);
void *testalloc_calloc(size_t n, size_t k);
void *testalloc_realloc(void *p, size_t n);
int testalloc_posix_memalign(void **p, size_t align, size_t n);
#define malloc(n) testalloc_malloc(n)
#define posix_memalign(p, align, n) testalloc_posix_memalign(p, align, n)
#define calloc(n, k) testalloc_calloc(n, k)
#define realloc(p, n) testalloc_realloc(p, n)
#endif

#endif
