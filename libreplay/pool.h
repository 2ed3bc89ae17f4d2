/* SPDX-License-Identifier: BSD-3-Clause */
/* The private buffers of transformed calls (receive shadows, send copies).
 * They are large and short-lived: a few are kept for the next calls, so
 * each call does not pay for fresh pages (page faults and zeroing of a new
 * mapping). Owner: the application thread, the only one that creates and
 * frees ops (nbop.h); nothing here is thread-safe. */
#ifndef TNBC_POOL_H
#define TNBC_POOL_H

#include "collective.h"

#include <stddef.h>

/* Page-aligned memory of at least n bytes (from the pool, or new); NULL
 * when out of memory. */
char *pool_get(size_t n);
/* Gives back a buffer of pool_get or pool_mirror (its *priv; NULL:
 * nothing). */
void pool_put(char *p);
/* Private memory standing in for one side's user buffer: *priv holds the
 * layout's span at the same offset within a page as l->base, a copy of
 * the user's bytes when `copy`; the returned pointer is where the user's
 * buffer pointer falls inside it, so the original counts and displacements
 * apply. NULL (and *priv NULL) when out of memory. */
char *pool_mirror(const struct tnbc_layout *l, const void *user, char **priv, int copy);

#endif
