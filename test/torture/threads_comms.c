// SPDX-License-Identifier: BSD-3-Clause
/* Case 10: MPI_THREAD_MULTIPLE, two threads running collectives at the
 * same time on two duplicated communicators (they start together, past a
 * barrier, and each makes 90 calls back to back, so their calls overlap). */
#include "tt.h"
#include <pthread.h>

#define N 4096
static MPI_Comm comm[2];
static uint64_t h[2][30];
static pthread_barrier_t start;

static void *worker(void *arg)
{
    int w = (int)(intptr_t)arg;
    int *s = malloc(N * sizeof *s), *r = malloc(N * sizeof *r);
    int per = N / tt_size;
    pthread_barrier_wait(&start);
    for (int it = 0; it < 30; it++) {
        for (int i = 0; i < N; i++)
            s[i] = tt_rank * 1000 + w * 100 + it + i;
        MPI_Alltoall(s, per, MPI_INT, r, per, MPI_INT, comm[w]);
        MPI_Bcast(s, N, MPI_INT, 0, comm[w]);
        MPI_Allreduce(MPI_IN_PLACE, r, N / 2, MPI_INT, MPI_SUM, comm[w]);
        h[w][it] = tt_hash(r, N * sizeof *r) ^ tt_hash(s, N * sizeof *s);
    }
    free(s);
    free(r);
    return NULL;
}

int main(int argc, char **argv)
{
    if (!tt_init_multiple(&argc, &argv))
        return 0;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm[0]);
    MPI_Comm_dup(MPI_COMM_WORLD, &comm[1]);
    pthread_t t[2];
    pthread_barrier_init(&start, NULL, 2);
    for (int w = 0; w < 2; w++)
        pthread_create(&t[w], NULL, worker, (void *)(intptr_t)w);
    for (int w = 0; w < 2; w++)
        pthread_join(t[w], NULL);
    for (int it = 0; it < 30; it++)
        tt_out("rank %d it %d %016llx %016llx\n", tt_rank, it, (unsigned long long)h[0][it],
               (unsigned long long)h[1][it]);
    MPI_Comm_free(&comm[0]);
    MPI_Comm_free(&comm[1]);
    tt_finish();
    return 0;
}
