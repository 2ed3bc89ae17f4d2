/* SPDX-License-Identifier: BSD-3-Clause */
/* FNV-1a, 64 bits: the one hash tnbc uses for short keys (profile site
 * index, value lists, machine ids). Not for anything adversarial. Header
 * only, so the profile reader's fuzz target needs no object of core/. */
#ifndef TNBC_FNV_H
#define TNBC_FNV_H

#include <stddef.h>
#include <stdint.h>

#define TNBC_FNV1A_INIT 0xcbf29ce484222325ULL

static inline uint64_t tnbc_fnv1a_byte(uint64_t h, unsigned char c)
{
    return (h ^ c) * 0x100000001b3ULL;
}

/* h continued over n bytes at p (start with TNBC_FNV1A_INIT). */
static inline uint64_t tnbc_fnv1a(uint64_t h, const void *p, size_t n)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++)
        h = tnbc_fnv1a_byte(h, c[i]);
    return h;
}

#endif
