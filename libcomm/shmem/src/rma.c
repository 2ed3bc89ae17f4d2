/*
 * rma.c - contiguous and strided put/get on both transports.
 *
 * Load/store reaches mapped heaps; everything else is one MPI_Put/MPI_Get on
 * the region's window, locked once at start-up. A blocking put waits only for
 * local completion (MPI_Win_flush_local), as OpenSHMEM allows; remote
 * completion is left to shmem_quiet, which flushes only windows that have
 * operations outstanding.
 */
#include <limits.h>
#include <stdlib.h>

#include "internal.h"

#define CHUNK ((size_t)1 << 30)   /* MPI counts are int */

/* Small blocking puts (and non-fetching atomics) are issued from a copy in
 * this buffer, so they need no MPI_Win_flush_local: OpenSHMEM promises only
 * that the caller's source is reusable. Space is recycled by shmem_quiet,
 * which completes every operation issued from it. */
#define BOUNCE_SIZE (64 * 1024)
#define BOUNCE_MAX 256
static char *bounce;
static size_t bounce_used;

const void *shmemi_bounce(const void *src, size_t n)
{
    if (n > BOUNCE_MAX)
        return NULL;
    if (!bounce && !(bounce = malloc(BOUNCE_SIZE)))
        return NULL;
    if (bounce_used + n > BOUNCE_SIZE)
        shmemi_quiet();
    char *p = bounce + bounce_used;
    memcpy(p, src, n);
    bounce_used += (n + 15) & ~(size_t)15;
    return p;
}

void shmemi_bounce_reset(void)
{
    bounce_used = 0;
}

void shmemi_put_rma(const struct shmemi_target *t, const void *src, size_t n,
                    int pe, int nbi)
{
    const void *copy = nbi ? NULL : shmemi_bounce(src, n);
    if (copy) {
        src = copy;
        nbi = 1;
    }
    for (size_t done = 0; done < n; done += CHUNK) {
        int c = (int)(n - done < CHUNK ? n - done : CHUNK);
        MPI_Put((const char *)src + done, c, MPI_BYTE, pe,
                t->off + (MPI_Aint)done, c, MPI_BYTE, t->win);
    }
    shmemi_mark_pending(t->region, pe);
    if (!nbi)
        MPI_Win_flush_local(pe, t->win);
}

void shmemi_get_rma(const struct shmemi_target *t, void *dest, size_t n,
                    int pe, int nbi)
{
    for (size_t done = 0; done < n; done += CHUNK) {
        int c = (int)(n - done < CHUNK ? n - done : CHUNK);
        MPI_Get((char *)dest + done, c, MPI_BYTE, pe, t->off + (MPI_Aint)done, c,
                MPI_BYTE, t->win);
    }
    if (nbi)
        shmemi_mark_pending(t->region, pe);
    else
        MPI_Win_flush(pe, t->win);
}

/* Bytes spanned by nelems elements of elsize at stride st (in elements). */
static int span(ptrdiff_t st, size_t elsize, size_t nelems, size_t *bytes)
{
    if (st <= 0 || nelems > (size_t)INT_MAX)
        return -1;
    *bytes = ((nelems - 1) * (size_t)st + 1) * elsize;
    return 0;
}

static MPI_Datatype strided(ptrdiff_t st, size_t elsize, size_t nelems)
{
    MPI_Datatype t;
    MPI_Type_create_hvector((int)nelems, (int)elsize, (MPI_Aint)(st * (ptrdiff_t)elsize),
                            MPI_BYTE, &t);
    MPI_Type_commit(&t);
    return t;
}

static void copy_strided(char *d, const char *s, ptrdiff_t dst, ptrdiff_t sst,
                         size_t elsize, size_t nelems)
{
    for (size_t i = 0; i < nelems; i++)
        memcpy(d + i * dst * elsize, s + i * sst * elsize, elsize);
}

void shmemi_iput(void *dest, const void *src, ptrdiff_t dst, ptrdiff_t sst,
                 size_t elsize, size_t nelems, int pe)
{
    struct shmemi_target t;
    size_t bytes, sbytes;
    if (nelems == 0)
        return;
    if (span(dst, elsize, nelems, &bytes) || span(sst, elsize, nelems, &sbytes)) {
        shmemi_warn("iput: strides must be positive (dst %td, sst %td); refused", dst, sst);
        return;
    }
    if (shmemi_xlate("iput", dest, bytes, pe, &t))
        return;
    if (t.local) {
        copy_strided(t.local, src, dst, sst, elsize, nelems);
        return;
    }
    MPI_Datatype ot = strided(sst, elsize, nelems), tt = strided(dst, elsize, nelems);
    MPI_Put(src, 1, ot, pe, t.off, 1, tt, t.win);
    shmemi_mark_pending(t.region, pe);
    MPI_Win_flush_local(pe, t.win);
    MPI_Type_free(&ot);
    MPI_Type_free(&tt);
}

void shmemi_iget(void *dest, const void *src, ptrdiff_t dst, ptrdiff_t sst,
                 size_t elsize, size_t nelems, int pe)
{
    struct shmemi_target t;
    size_t bytes, dbytes;
    if (nelems == 0)
        return;
    if (span(sst, elsize, nelems, &bytes) || span(dst, elsize, nelems, &dbytes)) {
        shmemi_warn("iget: strides must be positive (dst %td, sst %td); refused", dst, sst);
        return;
    }
    if (shmemi_xlate("iget", src, bytes, pe, &t))
        return;
    if (t.local) {
        copy_strided(dest, t.local, dst, sst, elsize, nelems);
        return;
    }
    MPI_Datatype ot = strided(dst, elsize, nelems), tt = strided(sst, elsize, nelems);
    MPI_Get(dest, 1, ot, pe, t.off, 1, tt, t.win);
    MPI_Win_flush(pe, t.win);
    MPI_Type_free(&ot);
    MPI_Type_free(&tt);
}

void shmem_putmem(void *dest, const void *src, size_t n, int pe) { shmemi_put(dest, src, n, pe, 0); }
void shmem_getmem(void *dest, const void *src, size_t n, int pe) { shmemi_get(dest, src, n, pe, 0); }
void shmem_putmem_nbi(void *dest, const void *src, size_t n, int pe) { shmemi_put(dest, src, n, pe, 1); }
void shmem_getmem_nbi(void *dest, const void *src, size_t n, int pe) { shmemi_get(dest, src, n, pe, 1); }
