// SPDX-License-Identifier: BSD-3-Clause
/*
 * util.c - messages, environment parsing, refusal of bad accesses.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"

static void vmsg(const char *kind, const char *fmt, va_list ap)
{
    char line[512];
    vsnprintf(line, sizeof line, fmt, ap);
    fprintf(stderr, "tnbc-shmem: %s PE %d: %s\n", kind,
            shmemi.initialized ? shmemi.me : -1, line);
}

void shmemi_fatal(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmsg("error:", fmt, ap);
    va_end(ap);
    int up = 0;
    MPI_Initialized(&up);
    if (up)
        MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

void shmemi_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmsg("warning:", fmt, ap);
    va_end(ap);
}

void shmemi_check_init(const char *fn)
{
    if (!shmemi.initialized) {
        fprintf(stderr, "tnbc-shmem: error: %s called before shmem_init\n", fn);
        exit(1);
    }
}

/* A size such as 64M, 1G, 4096. A bad value is reported and the default used. */
size_t shmemi_env_size(const char *name, size_t dflt)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return dflt;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    unsigned shift = 0;
    switch (*end) {
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    case '\0': break;
    default: end = NULL;
    }
    if (!end || *end || errno || v == 0 || v > (SIZE_MAX >> shift) || s[0] == '-') {
        shmemi_warn("%s=%s is not a size (e.g. 64M); using %zu", name, s, dflt);
        return dflt;
    }
    return (size_t)v << shift;
}

int shmemi_bad_access(const char *op, const void *addr, size_t n, int pe)
{
    const struct shmemi_region *h = &shmemi.reg[SHMEMI_HEAP];
    const struct shmemi_region *d = &shmemi.reg[SHMEMI_DATA];
    if ((unsigned)pe >= (unsigned)shmemi.npes)
        fprintf(stderr, "tnbc-shmem: error PE %d: %s to PE %d refused: no such PE "
                "(%d PEs)\n", shmemi.me, op, pe, shmemi.npes);
    else if (n == SIZE_MAX)
        fprintf(stderr, "tnbc-shmem: error PE %d: %s at %p on PE %d refused: its "
                "size in bytes overflows\n", shmemi.me, op, addr, pe);
    else
        fprintf(stderr, "tnbc-shmem: error PE %d: %s of %zu bytes at %p on PE %d "
                "refused: not symmetric (heap %p-%p, static data %p-%p)\n",
                shmemi.me, op, n, addr, pe, (void *)h->base,
                (void *)(h->base + h->size), (void *)d->base,
                (void *)(d->base + d->size));
    if (!shmemi.on_error_skip)
        MPI_Abort(shmemi.comm, 1);
    return -1;
}

int shmemi_refuse(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmsg("error", fmt, ap);
    va_end(ap);
    if (!shmemi.on_error_skip)
        MPI_Abort(shmemi.comm, 1);
    return -1;
}

static pthread_mutex_t rma_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;

void shmemi_lock(void)
{
    if (shmemi.threads)
        pthread_mutex_lock(&rma_lock);
}

void shmemi_unlock(void)
{
    if (shmemi.threads)
        pthread_mutex_unlock(&rma_lock);
}
