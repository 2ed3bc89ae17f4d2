// SPDX-License-Identifier: BSD-3-Clause
#include "pool.h"
#include "guard.h"

#include <assert.h>
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "testalloc.h"

/* Every buffer is page-aligned memory; the mirror inside it starts at the
 * user buffer's offset within its page (pool_mirror), so pool_put finds
 * the allocation by rounding down.
 *
 * The cache keeps the POOL_SLOTS largest buffers given back, and a request
 * takes the smallest that fits and is not more than twice too large. A
 * program whose sizes drift from call to call (a load balancer moving a
 * block's size: user program u21, 0.75-1.25 MiB blocks) then keeps reusing
 * buffers: the first cache kept the first four it got, never replaced
 * them by larger ones, and every later call mapped fresh memory for its
 * send copy and receive shadow, about 4 ms of page faults per call for
 * 2 x 2 MB on the shadow-paging test VM (perf: 70% of the tuned run's page
 * faults in those two copies). New buffers get an eighth more than asked,
 * so that a size that grows a little still finds one. */
#define POOL_SLOTS 4
static struct { char *p; size_t size; } pool[POOL_SLOTS];

static uintptr_t page_mask(void) { return (uintptr_t)tnbc_page_size() - 1; }

static int fits(size_t size, size_t n) { return size >= n && size <= 2 * n + 65536; }

char *pool_get(size_t n)
{
    int best = -1;
    for (int i = 0; i < POOL_SLOTS; i++)
        if (pool[i].p && fits(pool[i].size, n) && (best < 0 || pool[i].size < pool[best].size))
            best = i;
    if (best >= 0) {
        char *p = pool[best].p;
        pool[best].p = NULL;
        return p;
    }
    size_t want = n + n / 8;
    want = want < n ? n : (want + page_mask()) & ~(size_t)page_mask();
    void *p;
    if (posix_memalign(&p, page_mask() + 1, want) == 0)
        return p;
    return posix_memalign(&p, page_mask() + 1, n) == 0 ? p : NULL;
}

/* The slot a buffer given back goes to: an empty one, else the smallest. */
static int victim(void)
{
    int v = 0;
    for (int i = 0; i < POOL_SLOTS; i++) {
        if (!pool[i].p)
            return i;
        if (pool[i].size < pool[v].size)
            v = i;
    }
    return v;
}

void pool_put(char *p)
{
    if (!p)
        return;
    p = (char *)((uintptr_t)p & ~page_mask());
    size_t n = malloc_usable_size(p);
    int slot = victim();
    if (pool[slot].p && pool[slot].size >= n) {
        free(p);               /* every buffer kept is at least as large */
        return;
    }
    free(pool[slot].p);
    pool[slot].p = p;
    pool[slot].size = n;
}

/* The mirror has the user buffer's offset within a page: a copy between
 * the two then reads and writes at the same page offsets. At a small
 * distance modulo 4 KiB (malloc's 16 bytes against a page-aligned user
 * buffer) 1 MiB of an alltoall's send copy took 0.45-0.56 ms of CPU, 2.5
 * times the same copy into the receive buffer, and half that once the
 * offsets matched; most likely 4K aliasing (loads waiting on the store
 * just before them), not confirmed with CPU counters. */
char *pool_mirror(const struct tnbc_layout *l, const void *user, char **priv, int copy)
{
    uintptr_t offset = (uintptr_t)l->base & page_mask();
    char *p = pool_get((l->span ? l->span : 1) + offset);
    *priv = p ? p + offset : NULL;
    if (!p)
        return NULL;
    assert(((uintptr_t)*priv & page_mask()) == ((uintptr_t)l->base & page_mask()));
    if (copy && l->span)
        memcpy(*priv, l->base, l->span);
    return (char *)((uintptr_t)*priv + ((uintptr_t)user - (uintptr_t)l->base));
}
