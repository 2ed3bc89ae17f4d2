// SPDX-License-Identifier: BSD-3-Clause
/* A program written the ordinary way, for tnbc auto's tests:
 *
 *   auto_user ITERS BLOCK [vary]
 *
 * Each iteration: an MPI_Alltoall of BLOCK bytes per peer between malloc'd
 * buffers (not page-aligned), the received blocks read backwards by a
 * helper with a local accumulator array; an MPI_Bcast of 4 * BLOCK bytes
 * on a communicator split by rank parity (every rank is in one), read
 * from its middle outwards; an MPI_Allreduce of BLOCK / 8 64-bit integers (a sum: exact in
 * any order, so tnbc may run it). The
 * send data depends on the iteration and on what was received, so a wrong
 * byte anywhere changes the printed checksum (rank 0).
 *
 * With `vary` every size changes from iteration to iteration as an adaptive
 * code's would: BLOCK, 5/4 BLOCK and 3/2 BLOCK in turn, and every tenth
 * iteration (9, 19, ...) BLOCK / 4. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t mix(uint64_t h, const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

/* Reads the P received blocks last first, as a solver's sweep might. */
static uint64_t sweep_backwards(const double *recv, int p, long per_block)
{
    double acc[8] = { 0 };
    for (int b = p - 1; b >= 0; b--)
        for (long i = 0; i < per_block; i++)
            acc[i % 8] += recv[b * per_block + i] * (1.0 + (double)b);
    return mix(14695981039346656037ull, (const unsigned char *)acc, sizeof acc);
}

static uint64_t middle_out(const double *v, long n)
{
    double acc = 0;
    for (long d = 0; d <= n / 2; d++) {
        if (n / 2 + d < n)
            acc += v[n / 2 + d];
        if (d > 0 && n / 2 - d >= 0)
            acc -= v[n / 2 - d] * 0.5;
    }
    return mix(1, (const unsigned char *)&acc, sizeof acc);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int vary = argc == 4 && strcmp(argv[3], "vary") == 0;
    if ((argc != 3 && !vary) || atol(argv[1]) < 1 || atol(argv[2]) < 64 ||
        atol(argv[2]) % (vary ? 32 : 8)) {
        if (rank == 0)
            fprintf(stderr, "usage: auto_user ITERS BLOCK [vary] (BLOCK a multiple of 8, "
                            "of 32 with vary, >= 64)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long iters = atol(argv[1]), block = atol(argv[2]);
    long cap = vary ? block * 3 / 2 : block;   /* the largest block */
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    double *send = malloc((size_t)(size * cap) + 24), *recv = malloc((size_t)(size * cap) + 40);
    double *bc = malloc((size_t)(4 * cap) + 8);
    int64_t *red = malloc((size_t)cap), *sum = malloc((size_t)cap);
    if (!send || !recv || !bc || !red || !sum)
        MPI_Abort(MPI_COMM_WORLD, 3);
    /* Shift off malloc's 16-byte alignment: blocks straddle pages. */
    send = (double *)((char *)send + 8);
    recv = (double *)((char *)recv + 24);
    uint64_t h = 14695981039346656037ull;
    for (long it = 0; it < iters; it++) {
        long per = block / 8;
        if (vary)
            per = it % 10 == 9 ? per / 4 : per * (4 + it % 3) / 4;
        for (long i = 0; i < size * per; i++)
            send[i] = (double)(rank * 1000003 + i) * 0.25 + (double)it + (double)(h % 97);
        MPI_Alltoall(send, (int)per, MPI_DOUBLE, recv, (int)per, MPI_DOUBLE, MPI_COMM_WORLD);
        h = mix(h, (const unsigned char *)&(uint64_t){ sweep_backwards(recv, size, per) }, 8);
        int hr;
        MPI_Comm_rank(half, &hr);
        if (hr == 0)
            for (long i = 0; i < 4 * per; i++)
                bc[i] = (double)(i % 1013) + (double)it * 0.5 + (double)(rank % 2);
        MPI_Bcast(bc, (int)(4 * per), MPI_DOUBLE, 0, half);
        h = mix(h, (const unsigned char *)&(uint64_t){ middle_out(bc, 4 * per) }, 8);
        for (long i = 0; i < per; i++)
            red[i] = (int64_t)(rank + 1) * (i % 31) + it;
        MPI_Allreduce(red, sum, (int)per, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
        h = mix(h, (const unsigned char *)sum, (size_t)per * 8);
    }
    uint64_t all[2] = { h, 0 };
    MPI_Reduce(&h, &all[1], 1, MPI_UINT64_T, MPI_BXOR, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("auto_user: checksum %016llx\n", (unsigned long long)all[1]);
    free((char *)send - 8);
    free((char *)recv - 24);
    free(bc);
    free(red);
    free(sum);
    MPI_Comm_free(&half);
    MPI_Finalize();
    return 0;
}
