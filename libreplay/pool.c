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
 * the allocation by rounding down. */
#define POOL_SLOTS 4
static struct { char *p; size_t size; } pool[POOL_SLOTS];

static uintptr_t page_mask(void) { return (uintptr_t)tnbc_page_size() - 1; }

char *pool_get(size_t n)
{
    for (int i = 0; i < POOL_SLOTS; i++)
        if (pool[i].p && pool[i].size >= n && pool[i].size <= 2 * n + 65536) {
            char *p = pool[i].p;
            pool[i].p = NULL;
            return p;
        }
    void *p;
    return posix_memalign(&p, page_mask() + 1, n) == 0 ? p : NULL;
}

void pool_put(char *p)
{
    if (!p)
        return;
    p = (char *)((uintptr_t)p & ~page_mask());
    size_t n = malloc_usable_size(p);
    for (int i = 0; i < POOL_SLOTS; i++)
        if (!pool[i].p) {
            pool[i].p = p;
            pool[i].size = n;
            return;
        }
    free(p);
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
