/* SPDX-License-Identifier: BSD-3-Clause */
/* MPI_IN_PLACE forms of alltoall(v), allgather(v), allreduce and
 * reduce_scatter(_block), made
 * transformable: what the call must send is copied out of the receive
 * buffer first, and the call proceeds as its out-of-place equivalent (the
 * same bytes sent, the same bytes received), whose send side the early
 * return copies again into its own private memory before it returns. */
#ifndef TNBC_INPLACE_H
#define TNBC_INPLACE_H

#include "collective.h"

/* When a is one of these in-place forms: fills *out with the out-of-place
 * equivalent, *copy with the memory holding the send data (free() it once
 * the call has returned), and returns 1; 0 when a is not in place (or
 * another operation); -1 with *why when out of memory or the layout
 * cannot be built. */
int inplace_args(const struct tnbc_args *a, struct tnbc_args *out, void **copy, const char **why);

#endif
