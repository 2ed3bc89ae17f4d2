// SPDX-License-Identifier: BSD-3-Clause
/* A simultaneous exchange of BLOCK bytes each way (docs/cluster.md):
 * MPI_Alltoall, MPI_Isend/MPI_Irecv pairs, pre-posted receives, and rank 1
 * starting 20 ms late; POLL=1 adds a thread calling MPI_Iprobe every 50 us.
 *   mpicc -O2 -pthread -o exchange exchange.c
 *   mpirun -np 2 ./exchange BLOCK [POLL] */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { ITERS = 8, WARMUP = 2, MAXP = 32 };
static volatile int stop;

static void *poller(void *unused)
{
    (void)unused;
    while (!stop) {
        int flag;
        MPI_Iprobe(MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        usleep(50);
    }
    return NULL;
}

static void exchange(int mode, int rank, int p, char *s, char *d, long b)
{
    MPI_Request q[2 * MAXP];
    int n = 0;
    if (mode == 0) {
        MPI_Alltoall(s, (int)b, MPI_BYTE, d, (int)b, MPI_BYTE, MPI_COMM_WORLD);
        return;
    }
    for (int k = 0; k < p; k++)
        MPI_Irecv(d + k * b, (int)b, MPI_BYTE, k, 0, MPI_COMM_WORLD, &q[n++]);
    if (mode == 2)
        MPI_Barrier(MPI_COMM_WORLD);        /* every receive posted first */
    if (mode == 3 && rank == 1)
        usleep(20000);
    for (int k = 0; k < p; k++)
        MPI_Isend(s + k * b, (int)b, MPI_BYTE, k, 0, MPI_COMM_WORLD, &q[n++]);
    MPI_Waitall(n, q, MPI_STATUSES_IGNORE);
}

int main(int argc, char **argv)
{
    static const char *names[] = {"MPI_Alltoall", "isend/irecv", "prepost+barrier", "rank0 first"};
    int provided, rank, p;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    long b = argc > 1 ? atol(argv[1]) : 1048576;
    int poll = argc > 2 && atoi(argv[2]);
    if (p > MAXP || b <= 0) {
        if (rank == 0)
            fprintf(stderr, "exchange: BLOCK > 0 and at most %d ranks\n", MAXP);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    pthread_t th;
    if (poll)
        pthread_create(&th, NULL, poller, NULL);
    char *s = malloc((size_t)(b * p)), *d = malloc((size_t)(b * p));
    memset(s, 1, (size_t)(b * p));
    for (int mode = 0; mode < 4; mode++) {
        double sum = 0, best = 1e9;
        for (int it = 0; it < ITERS; it++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t = MPI_Wtime();
            exchange(mode, rank, p, s, d, b);
            t = MPI_Wtime() - t;
            if (it >= WARMUP) {
                sum += t;
                best = t < best ? t : best;
            }
        }
        if (rank == 0)
            printf("%-16s block %ld poll %d: mean %.1f ms min %.1f ms\n", names[mode], b, poll,
                   sum / (ITERS - WARMUP) * 1e3, best * 1e3);
    }
    stop = 1;
    if (poll)
        pthread_join(th, NULL);
    free(s);
    free(d);
    MPI_Finalize();
    return 0;
}
