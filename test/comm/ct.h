/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared scaffolding of the communicator suite's programs (test/comm.sh):
 * start-up with a check of the rank count, the world and split-half rank
 * tables, and the verdict line. Each program keeps its own data pattern and
 * checks; the expected values come from that pattern, never from MPI. */
#ifndef CT_H
#define CT_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* FNV-1a over n bytes: a result line's fingerprint. */
static inline uint64_t ct_hash(const void *p, size_t n)
{
    const unsigned char *c = p;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ c[i]) * 1099511628211ull;
    return h;
}

/* MPI_Init, and this process's rank and size in MPI_COMM_WORLD. */
static inline void ct_init(int *argc, char ***argv, int *rank, int *size)
{
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
}

/* Unless `ok`, rank 0 prints "NAME: needs WHAT" and the job aborts (status 2). */
static inline void ct_require(int ok, int rank, const char *name, const char *what)
{
    if (ok)
        return;
    if (rank == 0)
        fprintf(stderr, "%s: needs %s\n", name, what);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

/* An even number of ranks, at most 64: world[k] = k, and *h the half of
 * MPI_COMM_WORLD with this rank's parity, half[k] its k-th rank in world. */
static inline void ct_halves(const char *name, int rank, int size, int world[64], int half[32],
                             MPI_Comm *h)
{
    ct_require(size % 2 == 0 && size <= 64, rank, name, "an even number of ranks, at most 64");
    for (int k = 0; k < size; k++)
        world[k] = k;
    for (int k = 0; k < size / 2; k++)
        half[k] = 2 * k + rank % 2;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, h);
}

/* Sums every rank's count of wrong elements; rank 0 prints "NAME: ok" or
 * "NAME: N wrong elements". Returns the exit status (0 when all were right). */
static inline int ct_verdict(const char *name, long bad, int rank)
{
    long total = 0;
    MPI_Reduce(&bad, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        if (total)
            printf("%s: %ld wrong elements\n", name, total);
        else
            printf("%s: ok\n", name);
    }
    return total != 0;
}

#endif
