/* SPDX-License-Identifier: BSD-3-Clause */
/* A communicator's shape, for call-site identity: its size and a stable
 * hash of its members' MPI_COMM_WORLD ranks in communicator-rank order.
 * The same members give the same shape in every run, whichever call made
 * the communicator (split, dup, create, cart_sub), so one code address used
 * on several sub-communicators yields one site per shape (docs/schema.md).
 * A communicator with MPI_COMM_WORLD's shape (every world rank, in order)
 * keeps the plain code-address id. Application thread only. */
#ifndef TNBC_COMM_SHAPE_H
#define TNBC_COMM_SHAPE_H

#include "callsite.h"

#include <mpi.h>
#include <stdint.h>

struct tnbc_comm_shape {
    int size;
    int world;          /* 1: MPI_COMM_WORLD's shape */
    uint32_t hash;      /* FNV-1a over size and members' world ranks */
    char name[32];      /* "world", or "c<size>.<8 hex digits>" ("i..." for an
                           inter-communicator, whose remote group is hashed too) */
};

/* The shape of comm (cached on it as an attribute, freed with it). NULL
 * only when out of memory or comm is not a usable communicator. */
const struct tnbc_comm_shape *tnbc_comm_shape(MPI_Comm comm);
/* The site of the code at `caller` as used on comm: tnbc_site_of(caller)
 * for a communicator of MPI_COMM_WORLD's shape, else its variant with the
 * id suffix "@<shape name>". Never NULL. */
const struct tnbc_site *tnbc_site_on(void *caller, MPI_Comm comm);

#endif
