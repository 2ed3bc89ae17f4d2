#include "nbop.h"
#include "profile.h"

#include <limits.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int nbop_reduction_is_exact(MPI_Datatype t, MPI_Op op)
{
    static const MPI_Datatype integers[] = {
        MPI_CHAR, MPI_SIGNED_CHAR, MPI_UNSIGNED_CHAR, MPI_BYTE, MPI_SHORT, MPI_UNSIGNED_SHORT,
        MPI_INT, MPI_UNSIGNED, MPI_LONG, MPI_UNSIGNED_LONG, MPI_LONG_LONG, MPI_UNSIGNED_LONG_LONG,
        MPI_INT8_T, MPI_INT16_T, MPI_INT32_T, MPI_INT64_T, MPI_UINT8_T, MPI_UINT16_T,
        MPI_UINT32_T, MPI_UINT64_T, MPI_C_BOOL, MPI_INTEGER, MPI_LOGICAL,
    };
    /* Comparisons and bitwise/logical operations do not round: any order of
     * application gives the same bits. Integer sums and products wrap the
     * same way in any order. Floating-point sums and products do not. */
    if (op == MPI_MAX || op == MPI_MIN || op == MPI_BAND || op == MPI_BOR || op == MPI_BXOR ||
        op == MPI_LAND || op == MPI_LOR || op == MPI_LXOR || op == MPI_MAXLOC || op == MPI_MINLOC)
        return 1;
    if (op != MPI_SUM && op != MPI_PROD)
        return 0;           /* user-defined: may even be non-commutative */
    for (size_t i = 0; i < sizeof integers / sizeof *integers; i++)
        if (t == integers[i])
            return 1;
    return 0;
}

static MPI_Aint extent_of(MPI_Datatype t)
{
    MPI_Aint lb, ext;
    PMPI_Type_get_extent(t, &lb, &ext);
    return ext;
}

/* A type whose elements are packed bytes with no holes: a shadow need not
 * start as a copy of the user's bytes. */
static int dense(MPI_Datatype t)
{
    MPI_Aint lb, ext, tlb, text;
    int size;
    PMPI_Type_get_extent(t, &lb, &ext);
    PMPI_Type_get_true_extent(t, &tlb, &text);
    PMPI_Type_size(t, &size);
    return lb == 0 && tlb == 0 && ext == size && text == size;
}

/* Private memory standing in for one side's user buffer: `priv` holds the
 * layout's span; the returned pointer is where the user's buffer pointer
 * falls inside it, so the original counts and displacements apply. */
static char *mirror(const struct tnbc_layout *l, const void *user, char **priv, int copy)
{
    *priv = malloc(l->span ? l->span : 1);
    if (!*priv)
        return NULL;
    if (copy && l->span)
        memcpy(*priv, l->base, l->span);
    return (char *)((uintptr_t)*priv + ((uintptr_t)user - (uintptr_t)l->base));
}

static int add(struct nbop *op, enum step_kind kind, int sub, int peer, int prio, char *buf,
               long count, MPI_Datatype type)
{
    struct step *s = &op->steps[op->nsteps++];
    if (count > INT_MAX)
        return -1;
    *s = (struct step){ .kind = kind, .sub = sub, .peer = peer, .prio = prio < 0 ? INT_MAX : prio,
                        .buf = buf, .count = (int)count, .type = type };
    return 0;
}

static int by_kind_then_prio(const void *x, const void *y)
{
    const struct step *a = x, *b = y;
    if ((a->kind == STEP_RECV) != (b->kind == STEP_RECV))
        return a->kind == STEP_RECV ? -1 : 1;
    if (a->prio != b->prio)
        return a->prio < b->prio ? -1 : 1;
    return a->peer - b->peer;
}

/* alltoall(v), allgather(v), gather(v): a receive per source, a send per
 * destination, all point-to-point on the private communicator. */
static const char *per_source(struct nbop *op, const struct tnbc_profile_site *site)
{
    const struct tnbc_args *a = &op->a;
    int p = op->layout.comm_size, me = op->layout.comm_rank, rooted = a->root >= 0;
    int is_root = me == a->root, in_place = a->sendbuf == MPI_IN_PLACE;

    if (in_place && !rooted)
        return "MPI_IN_PLACE";
    if (op->layout.recv.nsub) {
        op->vrecv = mirror(&op->layout.recv, a->recvbuf, &op->shadow, !dense(a->rtype));
        if (!op->vrecv)
            return "out of memory";
    }
    if (!in_place) {
        op->vsend = mirror(&op->layout.send, a->sendbuf, &op->sendcopy, 1);
        if (!op->vsend)
            return "out of memory";
    }
    op->steps = calloc((size_t)(2 * p), sizeof *op->steps);
    if (!op->steps)
        return "out of memory";
    MPI_Aint rext = extent_of(a->rtype), sext = in_place ? 0 : extent_of(a->stype);
    for (int src = 0; src < op->layout.recv.nsub; src++) {
        long count = a->rcounts ? a->rcounts[src] : a->rcount;
        long displ = a->rdispls ? a->rdispls[src] : (long)src * a->rcount;
        if (count == 0 || (in_place && src == me))
            continue;         /* nothing to receive: the sub is complete */
        add(op, STEP_RECV, src, src, tnbc_profile_recv_prio(site, me, src),
            op->vrecv + displ * rext, count, a->rtype);
    }
    if (in_place)
        return NULL;
    for (int dst = 0; dst < p; dst++) {
        long count, displ;
        if (rooted && dst != a->root)
            continue;
        if (a->op == TNBC_ALLTOALL) {
            count = a->scount;
            displ = (long)dst * a->scount;
        } else if (a->op == TNBC_ALLTOALLV) {
            count = a->scounts[dst];
            displ = a->sdispls[dst];
        } else {
            count = a->scount;
            displ = 0;
        }
        if (count == 0)
            continue;
        add(op, STEP_SEND, -1, dst, tnbc_profile_send_prio(site, me, dst),
            op->vsend + displ * sext, count, a->stype);
    }
    (void)is_root;
    return NULL;
}

/* bcast, allreduce, reduce: one non-blocking collective per chunk, in the
 * chunks' priority order (the same on every rank). */
static const char *chunked(struct nbop *op, const struct tnbc_profile_site *site)
{
    const struct tnbc_args *a = &op->a;
    int me = op->layout.comm_rank, m = site->chunks > 0 ? site->chunks : 1;
    long first[64], n[64];
    int k;

    if (a->op != TNBC_BCAST && !nbop_reduction_is_exact(a->rtype, a->mpi_op))
        return "floating-point or user-defined reduction (results could differ in the last bit)";
    if (a->op == TNBC_ALLREDUCE && a->sendbuf == MPI_IN_PLACE)
        return "MPI_IN_PLACE";
    if (m > 64)
        m = 64;
    k = tnbc_chunk_split(a->rcount, m, first, n);
    if (k == 0)
        return "zero-size";
    if (op->layout.recv.nsub) {
        /* Reduce at the root in place: its contribution is in recvbuf. */
        int keep = !dense(a->rtype) || a->sendbuf == MPI_IN_PLACE;
        op->vrecv = mirror(&op->layout.recv, a->recvbuf, &op->shadow, keep);
        if (!op->vrecv)
            return "out of memory";
    }
    if (op->layout.send.nsub) {
        const void *src = a->op == TNBC_BCAST ? a->recvbuf : a->sendbuf;
        op->vsend = mirror(&op->layout.send, src, &op->sendcopy, 1);
        if (!op->vsend)
            return "out of memory";
    }
    op->steps = calloc((size_t)k, sizeof *op->steps);
    if (!op->steps)
        return "out of memory";
    MPI_Aint ext = extent_of(a->rtype);
    for (int c = 0; c < k; c++) {
        char *buf = op->vrecv ? op->vrecv + first[c] * ext : op->vsend + first[c] * ext;
        add(op, STEP_CHUNK, op->layout.recv.nsub ? c : -1, c,
            tnbc_profile_recv_prio(site, me, c), buf, n[c], a->rtype);
        op->steps[c].chunk_first = first[c];
    }
    return NULL;
}

struct nbop *nbop_create(const struct tnbc_args *a, const struct tnbc_profile_site *site,
                         MPI_Comm priv, int tag, const char **why)
{
    struct nbop *op = calloc(1, sizeof *op);
    int chunks = tnbc_op_is_chunked(a->op) ? (site->chunks > 0 ? site->chunks : 1) : 1;

    *why = NULL;
    if (!op) {
        *why = "out of memory";
        return NULL;
    }
    op->a = *a;
    op->comm = priv;
    op->tag = tag;
    if (tnbc_layout_build(a, chunks, &op->layout, why) != 0) {
        free(op);
        return NULL;
    }
    switch (a->op) {
    case TNBC_ALLTOALL: case TNBC_ALLTOALLV: case TNBC_ALLGATHER: case TNBC_ALLGATHERV:
    case TNBC_GATHER: case TNBC_GATHERV:
        *why = per_source(op, site);
        break;
    case TNBC_BCAST: case TNBC_ALLREDUCE: case TNBC_REDUCE:
        *why = chunked(op, site);
        break;
    default:
        *why = "operation not transformed by this version (scatter, scatterv)";
    }
    int nsub = op->layout.recv.nsub;
    if (!*why) {
        op->sub_done = calloc((size_t)(nsub ? nsub : 1), sizeof *op->sub_done);
        op->reqs = malloc((size_t)(op->nsteps ? op->nsteps : 1) * sizeof *op->reqs);
        if (!op->sub_done || !op->reqs)
            *why = "out of memory";
    }
    if (*why) {
        nbop_free(op);
        return NULL;
    }
    /* Sub-messages no step delivers are complete from the start. */
    for (int i = 0; i < nsub; i++)
        atomic_store(&op->sub_done[i], 1);
    for (int i = 0; i < op->nsteps; i++) {
        op->reqs[i] = MPI_REQUEST_NULL;
        if (op->steps[i].sub >= 0)
            atomic_store(&op->sub_done[op->steps[i].sub], 0);
    }
    qsort(op->steps, (size_t)op->nsteps, sizeof *op->steps, by_kind_then_prio);
    op->remaining = op->nsteps;
    return op;
}

void nbop_free(struct nbop *op)
{
    if (!op)
        return;
    tnbc_layout_free(&op->layout);
    free(op->shadow);
    free(op->sendcopy);
    free(op->steps);
    free(op->reqs);
    free((void *)op->sub_done);
    free(op);
}

void nbop_sub_complete(struct nbop *op, int sub)
{
    atomic_store(&op->sub_done[sub], 1);
    syscall(SYS_futex, &op->sub_done[sub], FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

void nbop_wait_sub(struct nbop *op, int sub)
{
    while (!atomic_load(&op->sub_done[sub]))
        syscall(SYS_futex, &op->sub_done[sub], FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
}
