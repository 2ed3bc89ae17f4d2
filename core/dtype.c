// SPDX-License-Identifier: BSD-3-Clause
#include "dtype.h"

#include <stdlib.h>

/* Recursion bound: deeper nesting is treated as undecodable. */
#define DTYPE_MAX_DEPTH 32

int tnbc_type_is_named(MPI_Datatype t)
{
    int ni, na, nd, combiner;
    if (t == MPI_DATATYPE_NULL || PMPI_Type_get_envelope(t, &ni, &na, &nd, &combiner) != MPI_SUCCESS)
        return 0;
    return combiner == MPI_COMBINER_NAMED;
}

/* Combiners whose contents are element types to look through. */
static int is_constructor(int combiner)
{
    switch (combiner) {
    case MPI_COMBINER_DUP: case MPI_COMBINER_CONTIGUOUS: case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR: case MPI_COMBINER_INDEXED: case MPI_COMBINER_HINDEXED:
    case MPI_COMBINER_INDEXED_BLOCK: case MPI_COMBINER_HINDEXED_BLOCK:
    case MPI_COMBINER_STRUCT: case MPI_COMBINER_SUBARRAY: case MPI_COMBINER_DARRAY:
    case MPI_COMBINER_RESIZED:
        return 1;
    default:
        return 0;
    }
}

/* Calls visit(child) for each datatype t was built from; the children MPI
 * returns for derived types are new handles, freed here. The combiner goes
 * to *combiner. Returns the first non-zero visit() result, -1 when t
 * cannot be decoded or out of memory, else 0. */
static int each_child(MPI_Datatype t, int *combiner, int (*visit)(MPI_Datatype, void *, int), void *arg,
                      int depth)
{
    int ni, na, nd, rc = 0;
    if (PMPI_Type_get_envelope(t, &ni, &na, &nd, combiner) != MPI_SUCCESS || !is_constructor(*combiner))
        return -1;
    int *ints = malloc(sizeof *ints * (size_t)(ni + 1));
    MPI_Aint *aints = malloc(sizeof *aints * (size_t)(na + 1));
    MPI_Datatype *kids = malloc(sizeof *kids * (size_t)(nd + 1));
    if (!ints || !aints || !kids ||
        PMPI_Type_get_contents(t, ni, na, nd, ints, aints, kids) != MPI_SUCCESS) {
        rc = -1;
        nd = 0;
    }
    for (int i = 0; i < nd; i++) {
        if (rc == 0)
            rc = visit(kids[i], arg, depth + 1);
        if (!tnbc_type_is_named(kids[i]))
            PMPI_Type_free(&kids[i]);
    }
    free(ints);
    free(aints);
    free(kids);
    return rc;
}

/* 0 when t is made of named types by contiguous/dup only, else 1. */
static int not_in_order(MPI_Datatype t, void *arg, int depth)
{
    int combiner;
    if (depth > DTYPE_MAX_DEPTH)
        return 1;
    if (tnbc_type_is_named(t))
        return 0;
    if (each_child(t, &combiner, not_in_order, arg, depth) != 0)
        return 1;
    return combiner != MPI_COMBINER_CONTIGUOUS && combiner != MPI_COMBINER_DUP;
}

int tnbc_type_is_dense(MPI_Datatype t)
{
    MPI_Aint lb, ext, tlb, text;
    int size;
    if (t == MPI_DATATYPE_NULL || PMPI_Type_get_extent(t, &lb, &ext) != MPI_SUCCESS ||
        PMPI_Type_get_true_extent(t, &tlb, &text) != MPI_SUCCESS || PMPI_Type_size(t, &size) != MPI_SUCCESS)
        return 0;
    if (lb != 0 || tlb != 0 || ext != size || text != size)
        return 0;
    return not_in_order(t, NULL, 0) == 0;
}
