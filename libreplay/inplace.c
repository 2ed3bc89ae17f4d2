// SPDX-License-Identifier: BSD-3-Clause
/* Out-of-place equivalents of in-place collectives (inplace.h). */
#include "inplace.h"

#include <stdlib.h>
#include <string.h>

/* A private copy of the bytes `count` elements of t at buf (element
 * offset displ) touch; *at is where buf + displ falls in it. */
static void *copy_elements(const char *buf, long displ, long count, MPI_Datatype t, const char **at)
{
    MPI_Aint lb, ext, tlb, text;
    PMPI_Type_get_extent(t, &lb, &ext);
    PMPI_Type_get_true_extent(t, &tlb, &text);
    (void)lb;
    const char *first = buf + displ * ext;
    size_t len = count > 0 ? (size_t)((count - 1) * ext + text) : 0;
    char *c = malloc(len ? len : 1);
    if (!c)
        return NULL;
    memcpy(c, first + tlb, len);
    *at = c - tlb;
    return c;
}

int inplace_args(const struct tnbc_args *a, struct tnbc_args *out, void **copy, const char **why)
{
    const char *at = NULL;
    int me = 0;
    *copy = NULL;
    if (a->sendbuf != MPI_IN_PLACE)
        return 0;
    *out = *a;
    PMPI_Comm_rank(a->comm, &me);
    switch (a->op) {
    case TNBC_ALLTOALL:
    case TNBC_ALLTOALLV: {
        /* Everything sent is in the receive buffer: copy its whole span. */
        struct tnbc_call_layout l;
        if (tnbc_layout_build(a, 1, &l, why) != 0)
            return -1;
        *copy = malloc(l.recv.span ? l.recv.span : 1);
        if (*copy) {
            memcpy(*copy, l.recv.base, l.recv.span);
            at = (const char *)*copy - ((const char *)l.recv.base - (const char *)a->recvbuf);
        }
        tnbc_layout_free(&l);
        out->scount = a->rcount;
        out->scounts = a->rcounts;
        out->sdispls = a->rdispls;
        out->stype = a->rtype;
        break;
    }
    case TNBC_ALLGATHER:
    case TNBC_ALLGATHERV: {
        /* This rank's contribution is its own block of the receive buffer. */
        long displ = a->rcounts ? a->rdispls[me] : (long)me * a->rcount;
        long count = a->rcounts ? a->rcounts[me] : a->rcount;
        *copy = copy_elements(a->recvbuf, displ, count, a->rtype, &at);
        out->scount = (int)count;
        out->stype = a->rtype;
        break;
    }
    case TNBC_ALLREDUCE:
        *copy = copy_elements(a->recvbuf, 0, a->rcount, a->rtype, &at);
        break;
    case TNBC_REDUCE_SCATTER_BLOCK:
    case TNBC_REDUCE_SCATTER: {
        /* Every rank's block is in the receive buffer; the result goes to
         * its start. */
        int p = 0;
        long total = 0;
        PMPI_Comm_size(a->comm, &p);
        for (int k = 0; k < p; k++)
            total += a->rcounts ? a->rcounts[k] : a->rcount;
        *copy = copy_elements(a->recvbuf, 0, total, a->rtype, &at);
        break;
    }
    default:
        return 0;            /* the roots' in-place forms are handled as they are */
    }
    if (!*copy) {
        *why = "out of memory";
        return -1;
    }
    out->sendbuf = at;
    return 1;
}
