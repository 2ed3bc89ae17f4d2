/* SPDX-License-Identifier: BSD-3-Clause */
/* Landing the elements of a derived datatype: only the bytes of its type
 * map reach the user's buffer (typemap.h says why).
 *
 * Pages still protected are read through /proc/self/mem, the runs written
 * into that copy, and the pages written back (land.h): nobody else writes
 * them meanwhile, since the program faults on them and only the progress
 * thread lands. Pages outside [lo, hi) are open to the program, which may
 * be writing their other bytes: there each run is copied on its own. */
#ifndef TNBC_LAND_TYPED_H
#define TNBC_LAND_TYPED_H

#include "typemap.h"

#include <stdint.h>

/* Copies the runs of elements [first, first + count) from the shadow,
 * where the user's buffer pointer falls at `shadow`, into the user's
 * buffer at `user`; [lo, hi) are the pages still protected (page-aligned;
 * lo == hi: none). 0, or -1 when /proc/self/mem failed. */
int land_typed(char *user, const char *shadow, long first, long count, const struct typemap *m,
               uintptr_t lo, uintptr_t hi);

#endif
