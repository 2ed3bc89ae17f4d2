// SPDX-License-Identifier: BSD-3-Clause
/* Data integrity of every handled collective, as a plain MPI program.
 *
 *   integrity SEED ITERS
 *
 * Each iteration calls every operation with buffer alignments, roots and
 * read orders drawn from SEED (the same on all ranks), overwrites the send buffer right
 * after the call (the caller may do that at once), then reads the receive
 * blocks in a random order and checks every element against the values the
 * senders wrote. It ends by printing a checksum of everything received, so
 * two runs (plain and under tnbc) can be compared bit for bit. Each
 * operation is called from its own call site. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;
static long bad;
static uint64_t checksum = 1469598103934665603ull;

static uint64_t rng_state;
static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}
static int rnd_in(int lo, int hi) { return lo + (int)(rnd() % (uint64_t)(hi - lo + 1)); }

static int value(int op, int it, int src, int dst, long i)
{
    return (int)((op * 7919 + it * 104729 + src * 131 + dst * 31 + i * 17) & 0x7fffffff);
}

static void mix(int v)
{
    checksum ^= (uint64_t)(uint32_t)v;
    checksum *= 1099511628211ull;
}

/* A buffer at a random offset from a page boundary. */
static int *place(void *raw, int ints_shift) { return (int *)raw + ints_shift; }

static void random_order(int *order, int n)
{
    for (int i = 0; i < n; i++)
        order[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(rnd() % (uint64_t)(i + 1)), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
}

/* Reads block b (count ints at buf) expecting value(op, it, src, dst, i). */
static void check_block(const int *buf, long count, int op, int it, int src, int dst)
{
    for (long i = 0; i < count; i++) {
        int v = buf[i];
        if (v != value(op, it, src, dst, i))
            bad++;
        mix(v);
    }
}

static void fill(int *buf, long count, int op, int it, int src, int dst)
{
    for (long i = 0; i < count; i++)
        buf[i] = value(op, it, src, dst, i);
}

static void scribble(int *buf, long count) { memset(buf, 0xA5, (size_t)count * sizeof(int)); }

enum { OP_A2A, OP_A2AV, OP_AG, OP_AGV, OP_GATHER, OP_GATHERV, OP_BCAST, OP_ALLRED, OP_RED, OP_SCATTER, NOPS };

static void run_alltoall(int it, void *sraw, void *rraw, int n, int rs, int ss, int *order)
{
    int *s = place(sraw, ss), *r = place(rraw, rs);
    for (int d = 0; d < size; d++)
        fill(s + (long)d * n, n, OP_A2A, it, rank, d);
    MPI_Alltoall(s, n, MPI_INT, r, n, MPI_INT, MPI_COMM_WORLD);
    scribble(s, (long)n * size);
    for (int k = 0; k < size; k++)
        check_block(r + (long)order[k] * n, n, OP_A2A, it, order[k], rank);
}

static void run_alltoallv(int it, void *sraw, void *rraw, int n, int rs, int ss, int *order)
{
    int sc[64], sd[64], rc[64], rd[64], off = 0;
    int *s = place(sraw, ss), *r = place(rraw, rs);
    for (int p = 0; p < size; p++) {        /* block p->q has n + p + q ints, displaced */
        sc[p] = n + rank + p;
        sd[p] = off;
        off += sc[p] + 3;
    }
    off = 0;
    for (int p = 0; p < size; p++) {
        rc[p] = n + p + rank;
        rd[p] = off;
        off += rc[p] + 5;
    }
    for (int d = 0; d < size; d++)
        fill(s + sd[d], sc[d], OP_A2AV, it, rank, d);
    MPI_Alltoallv(s, sc, sd, MPI_INT, r, rc, rd, MPI_INT, MPI_COMM_WORLD);
    scribble(s, off);
    for (int k = 0; k < size; k++)
        check_block(r + rd[order[k]], rc[order[k]], OP_A2AV, it, order[k], rank);
}

static void run_allgather(int it, void *sraw, void *rraw, int n, int rs, int ss, int *order)
{
    int *s = place(sraw, ss), *r = place(rraw, rs);
    fill(s, n, OP_AG, it, rank, -1);
    MPI_Allgather(s, n, MPI_INT, r, n, MPI_INT, MPI_COMM_WORLD);
    scribble(s, n);
    for (int k = 0; k < size; k++)
        check_block(r + (long)order[k] * n, n, OP_AG, it, order[k], -1);
}

static void run_allgatherv(int it, void *sraw, void *rraw, int n, int rs, int ss, int *order)
{
    int rc[64], rd[64], off = 0;
    int *s = place(sraw, ss), *r = place(rraw, rs);
    for (int p = 0; p < size; p++) {
        rc[p] = n + 2 * p;
        rd[p] = off;
        off += rc[p] + 1;
    }
    fill(s, rc[rank], OP_AGV, it, rank, -1);
    MPI_Allgatherv(s, rc[rank], MPI_INT, r, rc, rd, MPI_INT, MPI_COMM_WORLD);
    scribble(s, rc[rank]);
    for (int k = 0; k < size; k++)
        check_block(r + rd[order[k]], rc[order[k]], OP_AGV, it, order[k], -1);
}

static void run_gather(int it, void *sraw, void *rraw, int n, int rs, int ss, int *order, int root)
{
    int *s = place(sraw, ss), *r = place(rraw, rs);
    fill(s, n, OP_GATHER, it, rank, root);
    MPI_Gather(s, n, MPI_INT, r, n, MPI_INT, root, MPI_COMM_WORLD);
    scribble(s, n);
    if (rank == root)
        for (int k = 0; k < size; k++)
            check_block(r + (long)order[k] * n, n, OP_GATHER, it, order[k], root);
}

static void run_gatherv_in_place(int it, void *sraw, void *rraw, int n, int rs, int ss, int *order,
                                 int root)
{
    int rc[64], rd[64], off = 0;
    int *s = place(sraw, ss), *r = place(rraw, rs);
    for (int p = 0; p < size; p++) {
        rc[p] = n + p;
        rd[p] = off;
        off += rc[p];
    }
    if (rank == root) {             /* the root's own block is already in place */
        fill(r + rd[root], rc[root], OP_GATHERV, it, root, root);
        MPI_Gatherv(MPI_IN_PLACE, 0, MPI_INT, r, rc, rd, MPI_INT, root, MPI_COMM_WORLD);
        for (int k = 0; k < size; k++)
            check_block(r + rd[order[k]], rc[order[k]], OP_GATHERV, it, order[k], root);
    } else {
        fill(s, rc[rank], OP_GATHERV, it, rank, root);
        MPI_Gatherv(s, rc[rank], MPI_INT, NULL, NULL, NULL, MPI_INT, root, MPI_COMM_WORLD);
        scribble(s, rc[rank]);
    }
}

/* Chunked operations: the reader goes through 4 quarters in random order. */
static void read_quarters(const int *r, long count, int op, int it, int src, const int *order)
{
    for (int k = 0; k < 4; k++) {
        long lo = count * order[k] / 4, hi = count * (order[k] + 1) / 4;
        for (long i = lo; i < hi; i++) {
            if (r[i] != value(op, it, src, -1, i))
                bad++;
            mix(r[i]);
        }
    }
}

static void run_bcast(int it, void *rraw, int n, int rs, int *order, int root)
{
    int *r = place(rraw, rs);
    long count = (long)n * size;
    if (rank == root)
        fill(r, count, OP_BCAST, it, root, -1);
    MPI_Bcast(r, (int)count, MPI_INT, root, MPI_COMM_WORLD);
    if (rank == root)
        scribble(r, count);         /* the root may reuse its buffer at once */
    else
        read_quarters(r, count, OP_BCAST, it, root, order);
}

static void run_allreduce(int it, void *sraw, void *rraw, int n, int rs, int ss, int *order)
{
    int *s = place(sraw, ss), *r = place(rraw, rs);
    long count = (long)n * size;
    /* MPI_MAX of value() from every rank, with rank 0 the largest: it is
     * rank 0's contribution, which value(..., src=0, ...) describes. */
    for (long i = 0; i < count; i++)
        s[i] = rank == 0 ? value(OP_ALLRED, it, 0, -1, i) : value(OP_ALLRED, it, 0, -1, i) - 1 - rank;
    MPI_Allreduce(s, r, (int)count, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    scribble(s, count);
    read_quarters(r, count, OP_ALLRED, it, 0, order);
}

static void run_reduce_sum(int it, void *sraw, void *rraw, int n, int rs, int ss, int *order, int root)
{
    int *s = place(sraw, ss), *r = place(rraw, rs);
    long count = (long)n * size;
    for (long i = 0; i < count; i++)     /* integer sums are exact in any order */
        s[i] = (int)((value(OP_RED, it, 0, -1, i) & 0xffff) + rank);
    MPI_Reduce(s, r, (int)count, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD);
    scribble(s, count);
    if (rank != root)
        return;
    for (int k = 0; k < 4; k++) {
        long lo = count * order[k] / 4, hi = count * (order[k] + 1) / 4;
        for (long i = lo; i < hi; i++) {
            int want = (int)((value(OP_RED, it, 0, -1, i) & 0xffff) * size + size * (size - 1) / 2);
            bad += r[i] != want;
            mix(r[i]);
        }
    }
}

static void run_scatter(int it, void *sraw, void *rraw, int n, int rs, int ss, int root)
{
    int *s = place(sraw, ss), *r = place(rraw, rs);
    if (rank == root)
        for (int d = 0; d < size; d++)
            fill(s + (long)d * n, n, OP_SCATTER, it, root, d);
    MPI_Scatter(s, n, MPI_INT, r, n, MPI_INT, root, MPI_COMM_WORLD);
    check_block(r, n, OP_SCATTER, it, root, rank);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    unsigned long seed = argc > 1 ? strtoul(argv[1], NULL, 10) : 1;
    int iters = argc > 2 ? atoi(argv[2]) : 4;
    if (size > 64)
        MPI_Abort(MPI_COMM_WORLD, 2);
    rng_state = seed * 2654435761u + 1;
    const size_t cap = (size_t)64 << 20;
    void *sraw, *rraw;
    posix_memalign(&sraw, 4096, cap);
    posix_memalign(&rraw, 4096, cap);
    int order[64];
    /* Block sizes from 1 int to 40 KiB, fixed for the run (a profile
     * describes one size per site); alignments, roots and read orders
     * change every iteration. */
    int n = rnd_in(0, 3) == 0 ? rnd_in(1, 300) : rnd_in(1000, 10000);
    for (int it = 0; it < iters; it++) {
        int rs = rnd_in(0, 1023), ss = rnd_in(0, 1023), root = rnd_in(0, size - 1);
        random_order(order, size);
        run_alltoall(it, sraw, rraw, n, rs, ss, order);
        run_alltoallv(it, sraw, rraw, n, rs, ss, order);
        run_allgather(it, sraw, rraw, n, rs, ss, order);
        run_allgatherv(it, sraw, rraw, n, rs, ss, order);
        run_gather(it, sraw, rraw, n, rs, ss, order, root);
        run_gatherv_in_place(it, sraw, rraw, n, rs, ss, order, root);
        random_order(order, 4);
        run_bcast(it, rraw, n, rs, order, root);
        run_allreduce(it, sraw, rraw, n, rs, ss, order);
        run_reduce_sum(it, sraw, rraw, n, rs, ss, order, root);
        run_scatter(it, sraw, rraw, n, rs, ss, root);
    }
    long allbad = 0;
    uint64_t sums[64] = { 0 }, mine = checksum;
    MPI_Allreduce(&bad, &allbad, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Gather(&mine, 1, MPI_UINT64_T, sums, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("integrity: %s (%ld wrong values)\nchecksums:", allbad ? "FAILED" : "ok", allbad);
        for (int p = 0; p < size; p++)
            printf(" %016llx", (unsigned long long)sums[p]);
        printf("\n");
    }
    free(sraw);
    free(rraw);
    MPI_Finalize();
    return allbad != 0;
}
