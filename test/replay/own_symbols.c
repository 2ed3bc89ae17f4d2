// SPDX-License-Identifier: BSD-3-Clause
/* A plain MPI program that defines functions named like the replay
 * library's internals (land, progress_submit, nbop_create), exported from
 * the executable (built with -rdynamic), and exchanges blocks with
 * MPI_Alltoall. The library must neither replace these (the program gets
 * its own results) nor call them instead of its own (the exchanged data
 * must arrive intact while tnbc lands it). Used by test/replay.sh
 * (check_symbols). Usage: own_symbols ITERATIONS */
#include <mpi.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#define BLOCK_INTS 32768    /* 128 KiB per peer */

static int calls_to_mine;

int land(void *dst, const void *src, size_t n)
{
    (void)dst;
    (void)src;
    calls_to_mine++;
    return (int)(n % 1000) + 4242;
}

int progress_submit(int x)
{
    calls_to_mine++;
    return 3 * x + 1;
}

void *nbop_create(void)
{
    static int mine;
    calls_to_mine++;
    return &mine;
}

/* Called through volatile pointers so the compiler cannot fold them. */
static int (*volatile p_land)(void *, const void *, size_t) = land;
static int (*volatile p_submit)(int) = progress_submit;
static void *(*volatile p_create)(void) = nbop_create;

int main(int argc, char **argv)
{
    int rank, size, iters = argc > 1 ? atoi(argv[1]) : 4;
    static int anchor;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int *sb = malloc((size_t)size * BLOCK_INTS * sizeof *sb);
    int *rb = malloc((size_t)size * BLOCK_INTS * sizeof *rb);
    if (!sb || !rb)
        MPI_Abort(MPI_COMM_WORLD, 1);
    long bad = 0;
    for (int it = 0; it < iters; it++) {
        for (long i = 0; i < (long)size * BLOCK_INTS; i++)
            sb[i] = (int)(rank * 1000003L + it * 7919L + i);
        MPI_Alltoall(sb, BLOCK_INTS, MPI_INT, rb, BLOCK_INTS, MPI_INT, MPI_COMM_WORLD);
        for (int src = 0; src < size; src++)
            for (long i = 0; i < BLOCK_INTS; i++)
                bad += rb[(long)src * BLOCK_INTS + i] !=
                       (int)(src * 1000003L + it * 7919L + (long)rank * BLOCK_INTS + i);
    }
    (void)anchor;
    int own = p_land(&anchor, &anchor, 17) == 4259 && p_submit(5) == 16 && p_create() != NULL &&
              calls_to_mine == 3;
    long allbad = 0;
    int allown = 0;
    MPI_Reduce(&bad, &allbad, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&own, &allown, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("own_symbols: data %s, own functions %s\n", allbad ? "WRONG" : "ok",
               allown == size ? "ok" : "REPLACED");
    free(sb);
    free(rb);
    MPI_Finalize();
    return 0;
}
