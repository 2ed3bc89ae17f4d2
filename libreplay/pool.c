// SPDX-License-Identifier: BSD-3-Clause
#include "pool.h"

#include <malloc.h>
#include <stdint.h>
#include <string.h>

#include "testalloc.h"

#define POOL_SLOTS 4
static struct { char *p; size_t size; } pool[POOL_SLOTS];

char *pool_get(size_t n)
{
    for (int i = 0; i < POOL_SLOTS; i++)
        if (pool[i].p && pool[i].size >= n && pool[i].size <= 2 * n + 65536) {
            char *p = pool[i].p;
            pool[i].p = NULL;
            return p;
        }
    return malloc(n);
}

void pool_put(char *p)
{
    if (!p)
        return;
    size_t n = malloc_usable_size(p);
    for (int i = 0; i < POOL_SLOTS; i++)
        if (!pool[i].p) {
            pool[i].p = p;
            pool[i].size = n;
            return;
        }
    free(p);
}

char *pool_mirror(const struct tnbc_layout *l, const void *user, char **priv, int copy)
{
    *priv = pool_get(l->span ? l->span : 1);
    if (!*priv)
        return NULL;
    if (copy && l->span)
        memcpy(*priv, l->base, l->span);
    return (char *)((uintptr_t)*priv + ((uintptr_t)user - (uintptr_t)l->base));
}
