// SPDX-License-Identifier: BSD-3-Clause
/*
 * seg.c - segments: a symmetric-heap area plus a counter of incoming puts.
 *
 * To a mapped PE, shmemx_put_seg copies the data and then increments the
 * target's counter with a release atomic, so the data is visible before the
 * count. To any other PE the data travels as one message that the target
 * copies and counts when it polls. Either way no acknowledgement comes back:
 * the sender never waits, and the target's shmemx_sync_seg waits for its count.
 */
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"

#define MAX_SEGS 256

struct seg { char *addr; size_t len; long expected; long *counter; };
struct seg_hdr { int32_t seg; uint32_t pad; uint64_t off; };

static struct seg segs[MAX_SEGS];
static int nsegs;

static int bad_seg(const char *fn, int seg)
{
    if (seg >= 0 && seg < nsegs)
        return 0;
    fprintf(stderr, "tnbc-shmem: error PE %d: %s: no segment %d (%d registered)\n",
            shmemi.me, fn, seg, nsegs);
    return 1;
}

int shmemx_register_seg(void *addr, size_t len, long expected)
{
    const struct shmemi_region *h = &shmemi.reg[SHMEMI_HEAP];
    uintptr_t off = (uintptr_t)addr - (uintptr_t)h->base;
    int agree[2] = {nsegs, -nsegs}, m[2];
    shmemi_check_init("shmemx_register_seg");
    MPI_Allreduce(agree, m, 2, MPI_INT, MPI_MAX, shmemi.comm);
    if (m[0] != -m[1])
        shmemi_fatal("shmemx_register_seg: PEs registered different numbers of "
                     "segments; registration is collective");
    int ok = nsegs < MAX_SEGS && expected >= 0 && len > 0 &&
             off < h->size && len <= h->size - off, all;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, shmemi.comm);
    if (!all) {
        if (!ok)
            shmemi_warn("shmemx_register_seg(%p, %zu, %ld): needs a symmetric-heap "
                        "area and a count >= 0", addr, len, expected);
        return -1;
    }
    long *counter = shmemi_heap_alloc(8, sizeof(long));   /* same on every PE */
    if (!counter)
        shmemi_fatal("shmemx_register_seg: symmetric heap full");
    __atomic_store_n(counter, 0, __ATOMIC_SEQ_CST);
    segs[nsegs] = (struct seg){addr, len, expected, counter};
    shmem_barrier_all();
    return nsegs++;
}

static void count_in(long *counter)
{
    __atomic_fetch_add(counter, 1, __ATOMIC_RELEASE);
}

void shmemx_put_seg(int seg, void *dest, const void *src, size_t nbytes, int pe)
{
    struct shmemi_target t;
    if (bad_seg("shmemx_put_seg", seg))
        return;
    const struct seg *s = &segs[seg];
    size_t off = (size_t)((char *)dest - s->addr);
    if ((uintptr_t)dest < (uintptr_t)s->addr || off > s->len || nbytes > s->len - off) {
        fprintf(stderr, "tnbc-shmem: error PE %d: shmemx_put_seg of %zu bytes at %p "
                "on PE %d refused: outside segment %d (%p, %zu bytes)\n", shmemi.me,
                nbytes, dest, pe, seg, (void *)s->addr, s->len);
        return;
    }
    if (shmemi_xlate("put_seg", dest, nbytes, pe, &t))
        return;
    if (t.local) {
        memcpy(t.local, src, nbytes);
        char *c = (char *)s->counter;
        if (pe != shmemi.me)
            c = shmemi.reg[SHMEMI_HEAP].peer[pe] + (c - shmemi.reg[SHMEMI_HEAP].base);
        count_in((long *)c);
        return;
    }
    struct seg_hdr h = {seg, 0, off};
    shmemi_msg_send(pe, SHMEMI_TAG_SEG, &h, sizeof h, src, nbytes);
}

void shmemi_seg_deliver(int src, const char *buf, size_t len)
{
    struct seg_hdr h;
    if (len < sizeof h) {
        fprintf(stderr, "tnbc-shmem: error PE %d: short segment message from PE %d; "
                "dropped\n", shmemi.me, src);
        return;
    }
    memcpy(&h, buf, sizeof h);
    len -= sizeof h;
    if (bad_seg("segment message", h.seg))
        return;
    const struct seg *s = &segs[h.seg];
    if (h.off > s->len || len > s->len - h.off) {
        fprintf(stderr, "tnbc-shmem: error PE %d: segment message from PE %d "
                "overruns segment %d; dropped\n", shmemi.me, src, h.seg);
        return;
    }
    memcpy(s->addr + h.off, buf + sizeof h, len);
    count_in(s->counter);
}

void shmemx_sync_seg(int seg)
{
    if (bad_seg("shmemx_sync_seg", seg))
        return;
    const struct seg *s = &segs[seg];
    while (__atomic_load_n(s->counter, __ATOMIC_ACQUIRE) < s->expected)
        shmemi_progress();
    __atomic_fetch_sub(s->counter, s->expected, __ATOMIC_ACQ_REL);
}

long shmemx_seg_count(int seg)
{
    if (bad_seg("shmemx_seg_count", seg))
        return -1;
    return __atomic_load_n(segs[seg].counter, __ATOMIC_ACQUIRE);
}
