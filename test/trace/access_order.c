// SPDX-License-Identifier: BSD-3-Clause
/* A plain MPI program (no knowledge of tnbc) whose code after each
 * collective reads the received blocks in a known order, so a trace must
 * give back exactly that order.
 *
 *   access_order OP BLOCK_BYTES ORDER ITERS [OFFSET]
 *     OP     alltoall | allgather | alltoallv | gather | bcast | allreduce
 *     ORDER  forward | reverse | comma-separated permutation (e.g. 3,1,2,0)
 *            of the blocks (per-source ops) or chunks (bcast/allreduce, m=4)
 *     OFFSET bytes to shift the receive buffer from a page boundary (default
 *            0 = page-aligned); non-zero makes blocks straddle pages
 * Prints "access_order: ok" when every value read is right.
 * ACCESS_ORDER_KILL_AFTER=N: rank 0 kills itself (SIGKILL) after N
 * iterations, to test that a killed run keeps what was traced.
 * ACCESS_ORDER_CURC_US=U: U microseconds of work unrelated to the data
 * between the call and the reads (a site the analyzer clearly turns on).
 * ACCESS_ORDER_READ=K: read only the first K blocks of ORDER (the others
 * stay untouched until the next call reuses the buffer). */
#include <mpi.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parse_order(const char *spec, int n, int *order)
{
    if (!strcmp(spec, "forward") || !strcmp(spec, "reverse")) {
        for (int i = 0; i < n; i++)
            order[i] = spec[0] == 'f' ? i : n - 1 - i;
        return 0;
    }
    char *copy = strdup(spec), *tok, *save = NULL;
    int k = 0;
    for (tok = strtok_r(copy, ",", &save); tok && k < n; tok = strtok_r(NULL, ",", &save))
        order[k++] = atoi(tok);
    free(copy);
    return k == n ? 0 : -1;
}

/* Value every byte of block b from source s holds in iteration it. */
static unsigned char expect(int s, int b, int it, size_t i) { return (unsigned char)(s * 31 + b * 7 + it * 3 + i); }

int main(int argc, char **argv)
{
    int rank, size, bad = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 5) {
        if (!rank)
            fprintf(stderr, "usage: access_order OP BLOCK_BYTES ORDER ITERS [OFFSET]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const char *op = argv[1];
    size_t bb = strtoul(argv[2], NULL, 10);
    int iters = atoi(argv[4]);
    size_t shift = argc > 5 ? strtoul(argv[5], NULL, 10) : 0;
    int chunked = !strcmp(op, "bcast") || !strcmp(op, "allreduce");
    int nblocks = chunked ? 4 : size;
    int *order = malloc(sizeof(int) * (size_t)nblocks);
    if (parse_order(argv[3], nblocks, order)) {
        if (!rank)
            fprintf(stderr, "bad order %s for %d blocks\n", argv[3], nblocks);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    size_t total = chunked ? bb * 4 : bb * (size_t)size;
    unsigned char *sraw, *rraw;
    posix_memalign((void **)&sraw, 4096, total + shift + 4096);
    posix_memalign((void **)&rraw, 4096, total + shift + 4096);
    unsigned char *sbuf = sraw + shift, *rbuf = rraw + shift;
    int *counts = malloc(sizeof(int) * (size_t)size), *displs = malloc(sizeof(int) * (size_t)size);
    for (int i = 0; i < size; i++) {
        counts[i] = (int)bb;
        displs[i] = (int)(bb * (size_t)i);
    }

    const char *kill_after = getenv("ACCESS_ORDER_KILL_AFTER");
    const char *curc = getenv("ACCESS_ORDER_CURC_US");
    double curc_s = curc ? atof(curc) * 1e-6 : 0;
    const char *read_env = getenv("ACCESS_ORDER_READ");
    int nread = read_env && atoi(read_env) > 0 && atoi(read_env) < nblocks ? atoi(read_env) : nblocks;
    for (int it = 0; it < iters; it++) {
        if (kill_after && rank == 0 && it == atoi(kill_after))
            raise(SIGKILL);
        /* Send data: block d (to destination d) from this rank. */
        for (int d = 0; d < nblocks; d++)
            for (size_t i = 0; i < bb; i++)
                sbuf[(size_t)d * bb + i] = chunked ? expect(0, d, it, i)
                                         : !strcmp(op, "alltoall") || !strcmp(op, "alltoallv")
                                             ? expect(rank, d, it, i) : expect(rank, 0, it, i);
        if (!strcmp(op, "alltoall"))
            MPI_Alltoall(sbuf, (int)bb, MPI_BYTE, rbuf, (int)bb, MPI_BYTE, MPI_COMM_WORLD);
        else if (!strcmp(op, "alltoallv"))
            MPI_Alltoallv(sbuf, counts, displs, MPI_BYTE, rbuf, counts, displs, MPI_BYTE, MPI_COMM_WORLD);
        else if (!strcmp(op, "allgather"))
            MPI_Allgather(sbuf, (int)bb, MPI_BYTE, rbuf, (int)bb, MPI_BYTE, MPI_COMM_WORLD);
        else if (!strcmp(op, "gather"))
            MPI_Gather(sbuf, (int)bb, MPI_BYTE, rbuf, (int)bb, MPI_BYTE, 0, MPI_COMM_WORLD);
        else if (!strcmp(op, "bcast")) {
            if (rank == 0)
                memcpy(rbuf, sbuf, total);
            MPI_Bcast(rbuf, (int)total, MPI_BYTE, 0, MPI_COMM_WORLD);
        } else if (!strcmp(op, "allreduce")) {
            /* MPI_MAX of identical contributions: the result is the input. */
            MPI_Allreduce(sbuf, rbuf, (int)total, MPI_UNSIGNED_CHAR, MPI_MAX, MPI_COMM_WORLD);
        } else {
            if (!rank)
                fprintf(stderr, "unknown op %s\n", op);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        if (!strcmp(op, "gather") && rank != 0)
            continue;
        for (double t0 = MPI_Wtime(); MPI_Wtime() - t0 < curc_s;)
            ;                     /* work that does not touch the data */
        /* The code after the call: read the blocks in the given order. */
        for (int k = 0; k < nread; k++) {
            int b = order[k];
            const unsigned char *blk = rbuf + (size_t)b * bb;
            for (size_t i = 0; i < bb; i++) {
                unsigned char want = chunked ? expect(0, b, it, i)
                                   : !strcmp(op, "alltoall") || !strcmp(op, "alltoallv")
                                       ? expect(b, rank, it, i) : expect(b, 0, it, i);
                if (blk[i] != want)
                    bad++;
            }
        }
    }
    int allbad = 0;
    MPI_Allreduce(&bad, &allbad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("access_order: %s (%d wrong bytes)\n", allbad ? "FAILED" : "ok", allbad);
    free(sraw);
    free(rraw);
    free(order);
    free(counts);
    free(displs);
    MPI_Finalize();
    return allbad ? 1 : 0;
}
