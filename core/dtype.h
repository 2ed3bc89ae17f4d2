/* SPDX-License-Identifier: BSD-3-Clause */
/* What tnbc needs to know of an MPI datatype beyond its size and extents,
 * decoded with MPI_Type_get_envelope/get_contents. */
#ifndef TNBC_DTYPE_H
#define TNBC_DTYPE_H

#include <mpi.h>

/* A predefined (named) datatype: it lives as long as MPI. */
int tnbc_type_is_named(MPI_Datatype t);
/* Whether t's elements are packed bytes in the order of their type map:
 * no holes, lower bound 0, extent = size, and made of named types by
 * MPI_Type_contiguous/MPI_Type_dup only (an indexed type of the same
 * geometry may list its blocks backwards). Such a buffer can be sent and
 * cut as plain bytes. */
int tnbc_type_is_dense(MPI_Datatype t);

#endif
