// SPDX-License-Identifier: BSD-3-Clause
/* Case 10b: a hybrid code as they are often written. It asks for
 * MPI_THREAD_MULTIPLE "to be safe" and runs a persistent team of threads
 * (as OpenMP does): the main thread calls the alltoall while a worker
 * exchanges a halo point to point on its own communicator, then every
 * thread of the team reads its share of the received blocks, last block
 * first. Only the main thread calls collectives, so its calls go early. */
#include "tt.h"
#include <pthread.h>

#define N 98304            /* ints per block: 384 KiB */
#define TEAM 3
#define ITERS 12

static int *sbuf, *rbuf;
static MPI_Comm halo;
static pthread_barrier_t bar;
static uint64_t part[TEAM][ITERS];
static int halo_in[ITERS];

/* Blocks t, t+TEAM, ... counted from the last one, summed by thread t. */
static uint64_t read_share(int t)
{
    uint64_t h = 0;
    for (int k = t; k < tt_size; k += TEAM) {
        const int *b = rbuf + (size_t)(tt_size - 1 - k) * N;
        for (int i = N - 1; i >= 0; i--)
            h = h * 31 + (uint64_t)(unsigned)b[i];
    }
    return h;
}

static void *member(void *arg)
{
    int t = (int)(intptr_t)arg;
    for (int it = 0; it < ITERS; it++) {
        for (int i = t; i < tt_size * N; i += TEAM)
            sbuf[i] = tt_rank * 1000003 + it * 7919 + i;
        pthread_barrier_wait(&bar);
        if (t == 0) {
            MPI_Alltoall(sbuf, N, MPI_INT, rbuf, N, MPI_INT, MPI_COMM_WORLD);
        } else if (t == 1) {
            int out = tt_rank * 100 + it;
            MPI_Sendrecv(&out, 1, MPI_INT, (tt_rank + 1) % tt_size, it, &halo_in[it], 1, MPI_INT,
                         (tt_rank + tt_size - 1) % tt_size, it, halo, MPI_STATUS_IGNORE);
        }
        pthread_barrier_wait(&bar);
        part[t][it] = read_share(t);
        pthread_barrier_wait(&bar);     /* nobody refills sbuf or calls again before all read */
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (!tt_init_multiple(&argc, &argv))
        return 0;
    MPI_Comm_dup(MPI_COMM_WORLD, &halo);
    sbuf = malloc((size_t)tt_size * N * sizeof *sbuf);
    rbuf = malloc((size_t)tt_size * N * sizeof *rbuf);
    if (!sbuf || !rbuf)
        MPI_Abort(MPI_COMM_WORLD, 1);
    pthread_barrier_init(&bar, NULL, TEAM);
    pthread_t th[TEAM];
    for (int t = 1; t < TEAM; t++)
        pthread_create(&th[t], NULL, member, (void *)(intptr_t)t);
    member((void *)(intptr_t)0);          /* the main thread is member 0 */
    for (int t = 1; t < TEAM; t++)
        pthread_join(th[t], NULL);
    for (int it = 0; it < ITERS; it++)
        tt_out("rank %d it %d %016llx %016llx %016llx halo %d\n", tt_rank, it,
               (unsigned long long)part[0][it], (unsigned long long)part[1][it],
               (unsigned long long)part[2][it], halo_in[it]);
    pthread_barrier_destroy(&bar);
    MPI_Comm_free(&halo);
    free(sbuf);
    free(rbuf);
    tt_finish();
    return 0;
}
