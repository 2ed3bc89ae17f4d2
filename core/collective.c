// SPDX-License-Identifier: BSD-3-Clause
#include "collective.h"
#include "dtype.h"
#include "guard.h"
#include "typemap.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *const op_names[TNBC_OP_COUNT] = {
    "alltoall", "alltoallv", "allgather", "allgatherv", "gather", "gatherv",
    "scatter", "scatterv", "bcast", "allreduce", "reduce",
    "reduce_scatter_block", "reduce_scatter",
};

const char *tnbc_op_name(enum tnbc_op op)
{
    return (op >= 0 && op < TNBC_OP_COUNT) ? op_names[op] : "?";
}

int tnbc_op_from_name(const char *name)
{
    for (int i = 0; i < TNBC_OP_COUNT; i++)
        if (strcmp(name, op_names[i]) == 0)
            return i;
    return -1;
}

int tnbc_op_is_chunked(enum tnbc_op op)
{
    return op == TNBC_BCAST || op == TNBC_ALLREDUCE || op == TNBC_REDUCE ||
           op == TNBC_SCATTER || op == TNBC_SCATTERV || op == TNBC_REDUCE_SCATTER_BLOCK ||
           op == TNBC_REDUCE_SCATTER;
}

int tnbc_chunk_split(long count, int m, long *first, long *n)
{
    int k = 0;
    if (count <= 0 || m <= 0)
        return 0;
    if (m > count)
        m = (int)count;
    for (int j = 0; j < m; j++) {
        long lo = count * j / m, hi = count * (j + 1) / m;
        first[k] = lo;
        n[k] = hi - lo;
        k++;
    }
    return k;
}

/* Geometry of a datatype, in bytes. */
struct dtype {
    MPI_Aint extent, true_lb, true_extent;
    int size;
};

static int dtype_of(MPI_Datatype t, struct dtype *d)
{
    MPI_Aint lb;
    if (t == MPI_DATATYPE_NULL)
        return -1;
    if (PMPI_Type_get_extent(t, &lb, &d->extent) != MPI_SUCCESS ||
        PMPI_Type_get_true_extent(t, &d->true_lb, &d->true_extent) != MPI_SUCCESS ||
        PMPI_Type_size(t, &d->size) != MPI_SUCCESS)
        return -1;
    return 0;
}

/* The bytes touched by `count` elements starting `displ` elements in:
 * [start, start + len) relative to the buffer pointer. */
static void footprint(const struct dtype *d, long displ, long count,
                      intptr_t *start, size_t *len)
{
    *start = (intptr_t)(displ * d->extent + d->true_lb);
    *len = count > 0 ? (size_t)((count - 1) * d->extent + d->true_extent) : 0;
}

struct block {         /* one block in element units, before normalisation */
    long displ, count;
    int peer;
};

const char tnbc_page_holes_reason[] =
    "a page or more between the call's bytes that is not the call's (gaps between its blocks or "
    "holes in its datatype)";

static int by_offset(const void *x, const void *y)
{
    const struct tnbc_submsg *a = x, *b = y;
    return a->offset < b->offset ? -1 : a->offset > b->offset;
}

/* Whether [a, b) holds a whole page. */
static int holds_page(uintptr_t a, uintptr_t b, uintptr_t ps)
{
    uintptr_t first = (a + ps - 1) & ~(ps - 1);
    return first >= a && first + ps > first && first + ps <= b;
}

/* A gap of a whole page between the blocks' footprints (displacements that
 * leave room between them). */
static int gap_between_blocks(const struct tnbc_layout *l, uintptr_t ps)
{
    /* The common case first, without sorting: blocks in index order, each
     * starting where (or before) the ones before it end. */
    size_t end = 0;
    int in_order = 1;
    for (int i = 0; i < l->nsub && in_order; i++) {
        if (!l->sub[i].bytes)
            continue;
        in_order = l->sub[i].offset <= end;
        if (l->sub[i].offset + l->sub[i].bytes > end)
            end = l->sub[i].offset + l->sub[i].bytes;
    }
    if (in_order)
        return 0;
    int n = 0;
    struct tnbc_submsg *s = malloc((size_t)(l->nsub ? l->nsub : 1) * sizeof *s);
    if (!s)
        return 1;                  /* cannot tell: treated as a gap */
    for (int i = 0; i < l->nsub; i++)
        if (l->sub[i].bytes)
            s[n++] = l->sub[i];
    qsort(s, (size_t)n, sizeof *s, by_offset);
    int gap = 0;
    end = n ? s[0].offset + s[0].bytes : 0;
    for (int i = 1; i < n && !gap; i++) {
        gap = s[i].offset > end &&
              holds_page((uintptr_t)l->base + end, (uintptr_t)l->base + s[i].offset, ps);
        if (s[i].offset + s[i].bytes > end)
            end = s[i].offset + s[i].bytes;
    }
    free(s);
    return gap;
}

/* A hole of a page or more inside one element of t, or between two
 * consecutive elements (`many`): conservative, since where the hole falls
 * against page boundaries is not looked at. A type the map cannot describe
 * (an element wider than TYPEMAP_MAX_SPAN) counts as holed. */
static int hole_in_type(MPI_Datatype t, int many, MPI_Aint ps)
{
    if (tnbc_type_is_dense(t))
        return 0;
    const char *why;
    struct typemap *m = typemap_of(t, &why);
    if (!m)
        return 1;
    int hole = many && m->extent - (m->hi - m->lo) >= ps;
    for (int i = 1; i < m->nruns && !hole; i++)
        hole = m->run[i].off - (m->run[i - 1].off + m->run[i - 1].len) >= ps;
    typemap_free(m);
    return hole;
}

static int page_holes(const struct tnbc_layout *l, MPI_Datatype t, const struct block *b, int n)
{
    uintptr_t ps = (uintptr_t)tnbc_page_size();
    if (!l->base || l->span < ps)
        return 0;
    int many = 0;
    for (int i = 0; i < n; i++)
        many |= b[i].count > 1;
    return gap_between_blocks(l, ps) || hole_in_type(t, many, (MPI_Aint)ps);
}

/* Turn blocks (element units relative to buf) into a layout with byte
 * offsets from the lowest touched byte. */
static int make_layout(char *buf, MPI_Datatype t, const struct dtype *d, const struct block *b,
                       int n, struct tnbc_layout *l)
{
    intptr_t lo = INTPTR_MAX, hi = INTPTR_MIN, start;
    size_t len;
    long first_bytes = -2;

    l->sub = calloc((size_t)(n > 0 ? n : 1), sizeof *l->sub);
    if (!l->sub)
        return -1;
    l->nsub = n;
    l->bytes = 0;
    for (int i = 0; i < n; i++) {
        footprint(d, b[i].displ, b[i].count, &start, &len);
        if (len > 0) {
            lo = start < lo ? start : lo;
            hi = start + (intptr_t)len > hi ? start + (intptr_t)len : hi;
        }
        long payload = b[i].count * d->size;
        l->bytes += (size_t)payload;
        first_bytes = (first_bytes == -2 || first_bytes == payload) ? payload : -1;
    }
    l->block_bytes = first_bytes == -2 ? 0 : first_bytes;
    if (lo == INTPTR_MAX) {         /* nothing touched at all */
        lo = 0;
        hi = 0;
    }
    l->base = buf + lo;
    l->span = (size_t)(hi - lo);
    for (int i = 0; i < n; i++) {
        footprint(d, b[i].displ, b[i].count, &start, &len);
        l->sub[i].offset = len ? (size_t)(start - lo) : 0;
        l->sub[i].bytes = len;
        l->sub[i].idx = i;
        l->sub[i].peer = b[i].peer;
        l->sub[i].elem_first = b[i].displ;
        l->sub[i].elem_count = b[i].count;
    }
    l->page_holes = page_holes(l, t, b, n);
    return 0;
}

static int per_peer(char *buf, MPI_Datatype t, int p, long count,
                    const int *counts, const int *displs, struct tnbc_layout *l,
                    int *type_size)
{
    struct dtype d;
    struct block *b;
    int rc;

    if (dtype_of(t, &d) < 0)
        return -1;
    *type_size = d.size;
    b = calloc((size_t)p, sizeof *b);
    if (!b)
        return -1;
    for (int i = 0; i < p; i++) {
        b[i].count = counts ? counts[i] : count;
        b[i].displ = displs ? displs[i] : (long)i * count;
        b[i].peer = i;
    }
    rc = make_layout(buf, t, &d, b, p, l);
    free(b);
    return rc;
}

static int chunked(char *buf, MPI_Datatype t, long count, int m,
                   struct tnbc_layout *l, int *type_size)
{
    struct dtype d;
    struct block b[64];
    long first[64], n[64];
    int k, j;

    if (dtype_of(t, &d) < 0)
        return -1;
    *type_size = d.size;
    if (m > 64)
        m = 64;
    k = tnbc_chunk_split(count, m, first, n);
    for (j = 0; j < k; j++) {
        b[j].displ = first[j];
        b[j].count = n[j];
        b[j].peer = -1;
    }
    return make_layout(buf, t, &d, b, k, l);
}

static int whole(char *buf, MPI_Datatype t, long count, struct tnbc_layout *l,
                 int *type_size)
{
    struct dtype d;
    struct block b = { 0, count, -1 };
    if (dtype_of(t, &d) < 0)
        return -1;
    *type_size = d.size;
    return make_layout(buf, t, &d, &b, 1, l);
}

int tnbc_layout_build(const struct tnbc_args *a, int chunks,
                      struct tnbc_call_layout *out, const char **why)
{
    int p, r, rc = 0, is_root;
    char *rb = a->recvbuf, *sb = (char *)a->sendbuf;
    int sin_place = a->sendbuf == MPI_IN_PLACE, rin_place = a->recvbuf == MPI_IN_PLACE;

    memset(out, 0, sizeof *out);
    *why = NULL;
    if (PMPI_Comm_size(a->comm, &p) != MPI_SUCCESS || PMPI_Comm_rank(a->comm, &r) != MPI_SUCCESS) {
        *why = "invalid communicator";
        return -1;
    }
    int inter = 0;
    PMPI_Comm_test_inter(a->comm, &inter);
    if (inter) {
        *why = "inter-communicator";
        return -1;
    }
    out->comm_size = p;
    out->comm_rank = r;
    is_root = a->root == r;

    switch (a->op) {
    case TNBC_ALLTOALL:
        rc = per_peer(rb, a->rtype, p, a->rcount, NULL, NULL, &out->recv, &out->recv_type_size);
        if (!rc && !sin_place)
            rc = per_peer(sb, a->stype, p, a->scount, NULL, NULL, &out->send, &out->send_type_size);
        break;
    case TNBC_ALLTOALLV:
        rc = per_peer(rb, a->rtype, p, 0, a->rcounts, a->rdispls, &out->recv, &out->recv_type_size);
        if (!rc && !sin_place)
            rc = per_peer(sb, a->stype, p, 0, a->scounts, a->sdispls, &out->send, &out->send_type_size);
        break;
    case TNBC_ALLGATHER:
    case TNBC_ALLGATHERV:
        rc = per_peer(rb, a->rtype, p, a->rcount, a->rcounts, a->rdispls, &out->recv, &out->recv_type_size);
        if (!rc && !sin_place)
            rc = whole(sb, a->stype, a->scount, &out->send, &out->send_type_size);
        break;
    case TNBC_GATHER:
    case TNBC_GATHERV:
        if (is_root)
            rc = per_peer(rb, a->rtype, p, a->rcount, a->rcounts, a->rdispls, &out->recv, &out->recv_type_size);
        if (!rc && !sin_place)
            rc = whole(sb, a->stype, a->scount, &out->send, &out->send_type_size);
        break;
    case TNBC_SCATTER:
    case TNBC_SCATTERV:
        if (!rin_place) {
            rc = chunked(rb, a->rtype, a->rcount, chunks, &out->recv, &out->recv_type_size);
            out->chunks = out->recv.nsub;
        }
        if (!rc && is_root)
            rc = per_peer(sb, a->stype, p, a->scount, a->scounts, a->sdispls, &out->send, &out->send_type_size);
        break;
    case TNBC_BCAST:
        if (is_root) {
            rc = whole(rb, a->rtype, a->rcount, &out->send, &out->send_type_size);
        } else {
            rc = chunked(rb, a->rtype, a->rcount, chunks, &out->recv, &out->recv_type_size);
            out->chunks = out->recv.nsub;
        }
        break;
    case TNBC_ALLREDUCE:
    case TNBC_REDUCE:
        if (a->op == TNBC_ALLREDUCE || is_root) {
            rc = chunked(rb, a->rtype, a->rcount, chunks, &out->recv, &out->recv_type_size);
            out->chunks = out->recv.nsub;
        }
        if (!rc && !sin_place)
            rc = whole(sb, a->rtype, a->rcount, &out->send, &out->send_type_size);
        break;
    case TNBC_REDUCE_SCATTER_BLOCK:
    case TNBC_REDUCE_SCATTER: {
        /* Each rank receives its own block of the reduction; it sends
         * every rank's (in place: they are in recvbuf). */
        long mine = a->rcounts ? a->rcounts[r] : a->rcount, total = 0;
        for (int i = 0; i < p; i++)
            total += a->rcounts ? a->rcounts[i] : a->rcount;
        rc = chunked(rb, a->rtype, mine, chunks, &out->recv, &out->recv_type_size);
        out->chunks = out->recv.nsub;
        if (!rc && !sin_place)
            rc = whole(sb, a->rtype, total, &out->send, &out->send_type_size);
        break;
    }
    default:
        *why = "unknown operation";
        return -1;
    }
    if (rc) {
        tnbc_layout_free(out);
        *why = "invalid datatype or out of memory";
        return -1;
    }
    return 0;
}

void tnbc_layout_free(struct tnbc_call_layout *l)
{
    free(l->recv.sub);
    free(l->send.sub);
    l->recv.sub = l->send.sub = NULL;
    l->recv.nsub = l->send.nsub = 0;
}

/* ---- which calls may return early ------------------------------------- */

static int in_list(MPI_Datatype t, const MPI_Datatype *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (t == list[i])
            return 1;
    return 0;
}

/* Integer arithmetic wraps the same way in any order, and comparisons and
 * bitwise/logical operations on integers do not round. Floating point is
 * left out entirely: sums round, and MAX/MIN give different bits for
 * signed zeros and NaNs depending on the order of application. */
int tnbc_reduction_is_exact(MPI_Datatype t, MPI_Op op)
{
    static const MPI_Datatype integers[] = {
        MPI_CHAR, MPI_SIGNED_CHAR, MPI_UNSIGNED_CHAR, MPI_BYTE, MPI_SHORT, MPI_UNSIGNED_SHORT,
        MPI_INT, MPI_UNSIGNED, MPI_LONG, MPI_UNSIGNED_LONG, MPI_LONG_LONG, MPI_UNSIGNED_LONG_LONG,
        MPI_INT8_T, MPI_INT16_T, MPI_INT32_T, MPI_INT64_T, MPI_UINT8_T, MPI_UINT16_T,
        MPI_UINT32_T, MPI_UINT64_T, MPI_C_BOOL, MPI_INTEGER, MPI_LOGICAL,
        MPI_INTEGER1, MPI_INTEGER2, MPI_INTEGER4, MPI_INTEGER8,
    };
    static const MPI_Datatype int_pairs[] = { MPI_2INT, MPI_SHORT_INT, MPI_LONG_INT, MPI_2INTEGER };
    if (op == MPI_MAXLOC || op == MPI_MINLOC)
        return in_list(t, int_pairs, sizeof int_pairs / sizeof *int_pairs);
    if (op != MPI_SUM && op != MPI_PROD && op != MPI_MAX && op != MPI_MIN && op != MPI_BAND &&
        op != MPI_BOR && op != MPI_BXOR && op != MPI_LAND && op != MPI_LOR && op != MPI_LXOR)
        return 0;           /* user-defined: may even be non-commutative */
    return in_list(t, integers, sizeof integers / sizeof *integers);
}

static int sides_overlap(const struct tnbc_layout *x, const struct tnbc_layout *y)
{
    if (!x->nsub || !y->nsub || !x->base || !y->base || !x->span || !y->span)
        return 0;
    return x->base < y->base + y->span && y->base < x->base + x->span;
}

int tnbc_call_form_transformable(const struct tnbc_args *a, const char **why)
{
    int reduction = a->op == TNBC_ALLREDUCE || a->op == TNBC_REDUCE ||
                    a->op == TNBC_REDUCE_SCATTER || a->op == TNBC_REDUCE_SCATTER_BLOCK;
    if (reduction && !tnbc_type_is_named(a->rtype)) {
        *why = "a reduction on a derived datatype";
        return 0;
    }
    if ((a->op == TNBC_ALLREDUCE || a->op == TNBC_REDUCE) && !tnbc_reduction_is_exact(a->rtype, a->mpi_op)) {
        *why = "floating-point or user-defined reduction (the result's bits could depend on the order)";
        return 0;
    }
    return 1;
}

int tnbc_call_transformable(const struct tnbc_args *a, const struct tnbc_call_layout *l,
                            const char **why)
{
    if (!tnbc_call_form_transformable(a, why))
        return 0;
    if (sides_overlap(&l->recv, &l->send)) {
        *why = "the send buffer overlaps the receive buffer";
        return 0;
    }
    if ((l->recv.nsub && l->recv.page_holes) || (l->send.nsub && l->send.page_holes)) {
        *why = tnbc_page_holes_reason;
        return 0;
    }
    if (l->recv.nsub && l->recv.span &&
        !tnbc_guard_memory_ok((uintptr_t)l->recv.base, (uintptr_t)l->recv.base + l->recv.span, why))
        return 0;
    return 1;
}
