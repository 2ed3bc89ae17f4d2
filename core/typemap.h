/* SPDX-License-Identifier: BSD-3-Clause */
/* The bytes one element of a datatype really holds, as runs in address
 * order: what a receive of that type writes, and none of its holes.
 *
 * A receive with a derived datatype lands in a private shadow of the
 * user's buffer; only these runs may then be copied into the user's
 * buffer, since the holes between them belong to the program (another
 * thread may be writing them while the call is in flight). The runs come
 * from MPI itself: one element is unpacked (MPI_Unpack) from bytes of all
 * ones into a zeroed buffer, and the bytes it set are the type map's.
 * That costs a pass over the element's true extent, so the runs are cached
 * on the datatype (an attribute, freed with the type). The layout
 * (collective.c) reads the holes between the runs: a page or more between
 * a call's bytes is never guarded. */
#ifndef TNBC_TYPEMAP_H
#define TNBC_TYPEMAP_H

#include <mpi.h>

/* An element spanning more than this many bytes is not mapped (the call
 * runs blocking). */
#define TYPEMAP_MAX_SPAN (64L << 20)

struct typemap_run {
    MPI_Aint off;      /* from the element's start (buffer + i x extent) */
    MPI_Aint len;
};

struct typemap {
    MPI_Aint extent;
    MPI_Aint lo, hi;   /* the runs' bounds: [lo, hi) from the element's start */
    int nruns;
    struct typemap_run run[];   /* ascending, disjoint, not adjacent */
};

/* The runs of the committed datatype t, as a copy the caller owns
 * (typemap_free); NULL with *why set when t's element spans more than
 * TYPEMAP_MAX_SPAN bytes, its extent is not positive, or out of memory.
 * Application thread only (the cache is not locked). */
struct typemap *typemap_of(MPI_Datatype t, const char **why);
void typemap_free(struct typemap *m);
/* The reason typemap_of gives when an allocation failed. */
extern const char typemap_oom[];

#endif
