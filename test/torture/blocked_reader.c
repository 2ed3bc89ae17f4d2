// SPDX-License-Identifier: BSD-3-Clause
/* Case 8a: a reader thread with every signal blocked reads the buffer a
 * collective of the main thread just filled. */
#include "tt.h"
#include <pthread.h>
#include <signal.h>

#define N 65536
static int *a;
static pthread_barrier_t go, done;
static uint64_t h[4];

static void *reader(void *arg)
{
    (void)arg;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    for (int it = 0; it < 4; it++) {
        pthread_barrier_wait(&go);
        h[it] = tt_hash(a, N * sizeof *a);
        pthread_barrier_wait(&done);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    tt_init_thread(&argc, &argv, MPI_THREAD_FUNNELED);
    a = malloc(N * sizeof *a);
    pthread_barrier_init(&go, NULL, 2);
    pthread_barrier_init(&done, NULL, 2);
    pthread_t t;
    pthread_create(&t, NULL, reader, NULL);
    for (int it = 0; it < 4; it++) {
        for (int i = 0; i < N; i++)
            a[i] = tt_rank == 0 ? it * 9 + i : 0;
        MPI_Bcast(a, N, MPI_INT, 0, MPI_COMM_WORLD);
        pthread_barrier_wait(&go);
        pthread_barrier_wait(&done);
        tt_out("rank %d it %d %016llx\n", tt_rank, it, (unsigned long long)h[it]);
    }
    pthread_join(t, NULL);
    /* The main thread too, with every signal blocked. */
    sigset_t all;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, NULL);
    for (int i = 0; i < N; i++)
        a[i] = tt_rank == 0 ? 77 + i : 0;
    MPI_Bcast(a, N, MPI_INT, 0, MPI_COMM_WORLD);
    tt_out("rank %d blocked %016llx\n", tt_rank, (unsigned long long)tt_hash(a, N * sizeof *a));
    tt_finish();
    return 0;
}
