// SPDX-License-Identifier: BSD-3-Clause
/* Trace-overhead workload: a plain MPI program (no tnbc knowledge) that,
 * ITERS times, writes its send buffer, calls MPI_Alltoall, and reads every
 * received block in full. It checks every value it reads, so it also shows
 * that tracing does not change what the program computes.
 *
 *   a2a_read BLOCK_BYTES ITERS [malloc|page]
 *
 * malloc (default): buffers from malloc, as most programs get them (for
 * large sizes glibc returns page + 16 bytes, so block boundaries fall
 * inside pages); page: page-aligned buffers (posix_memalign), so blocks
 * that are whole pages share no page.
 *
 * Prints one line from rank 0: the slowest rank's loop time. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static uint64_t value(int from, int to, int it) { return (uint64_t)from << 40 | (uint64_t)to << 20 | (uint64_t)it; }

int main(int argc, char **argv)
{
    int p, r;
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    long block = argc > 1 ? atol(argv[1]) : 65536;
    int iters = argc > 2 ? atoi(argv[2]) : 200;
    if (block < 8 || block % 8 || iters < 1) {
        if (r == 0)
            fprintf(stderr, "usage: a2a_read BLOCK_BYTES(multiple of 8) ITERS\n");
        MPI_Finalize();
        return 2;
    }
    long words = block / 8;
    int aligned = argc > 3 && strcmp(argv[3], "page") == 0;
    uint64_t *sbuf = NULL, *rbuf = NULL;
    if (aligned) {
        size_t ps = (size_t)sysconf(_SC_PAGESIZE);
        if (posix_memalign((void **)&sbuf, ps, (size_t)(p * block)) ||
            posix_memalign((void **)&rbuf, ps, (size_t)(p * block)))
            MPI_Abort(MPI_COMM_WORLD, 1);
    } else {
        sbuf = malloc((size_t)(p * block));
        rbuf = malloc((size_t)(p * block));
    }
    if (!sbuf || !rbuf)
        MPI_Abort(MPI_COMM_WORLD, 1);

    long errors = 0;
    uint64_t sum = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int it = 0; it < iters; it++) {
        for (int to = 0; to < p; to++)
            for (long w = 0; w < words; w++)
                sbuf[to * words + w] = value(r, to, it) + (uint64_t)w;
        MPI_Alltoall(sbuf, (int)words, MPI_UINT64_T, rbuf, (int)words, MPI_UINT64_T, MPI_COMM_WORLD);
        for (int from = 0; from < p; from++)
            for (long w = 0; w < words; w++) {
                uint64_t v = rbuf[from * words + w];
                sum += v;
                errors += v != value(from, r, it) + (uint64_t)w;
            }
    }
    double t = MPI_Wtime() - t0, tmax;
    long all_errors;
    MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&errors, &all_errors, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (r == 0)
        printf("buffers %s ranks %d block %ld iters %d seconds %.6f per_call_us %.2f errors %ld checksum %llu\n",
               aligned ? "page" : "malloc", p, block, iters, tmax, tmax / iters * 1e6, all_errors, (unsigned long long)sum);
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return all_errors != 0;
}
