// SPDX-License-Identifier: BSD-3-Clause
/* Case 2: receive buffers on the stack. A helper receives into a local
 * array, reads 64 bytes of it and returns; the next helper's frame reuses
 * that stack memory at once. Also from a second thread's stack. */
#include "tt.h"
#include <pthread.h>

#define N 16384

static __attribute__((noinline)) uint64_t receive_on_stack(int it)
{
    int local[N];
    for (int i = 0; i < N; i++)
        local[i] = tt_rank == 0 ? it * 3 + i : 0;
    MPI_Bcast(local, N, MPI_INT, 0, MPI_COMM_WORLD);
    return tt_hash(local + N / 2, 64);
}

static __attribute__((noinline)) uint64_t alltoall_on_stack(int it)
{
    int s[N], r[N];
    int per = N / tt_size;
    for (int i = 0; i < N; i++)
        s[i] = tt_rank * 100000 + it + i;
    MPI_Alltoall(s, per, MPI_INT, r, per, MPI_INT, MPI_COMM_WORLD);
    return tt_hash(r, 64);
}

static __attribute__((noinline)) uint64_t scribble(int it)
{
    volatile int junk[2 * N];     /* lands on the pages the helpers used */
    for (int i = 0; i < 2 * N; i++)
        junk[i] = it ^ i;
    return junk[N];
}

static void *thread_main(void *arg)
{
    uint64_t *h = arg;
    *h = receive_on_stack(99) ^ scribble(99);
    return NULL;
}

int main(int argc, char **argv)
{
    tt_init_thread(&argc, &argv, MPI_THREAD_SERIALIZED);
    for (int it = 0; it < 4; it++) {
        uint64_t a = receive_on_stack(it);
        uint64_t b = scribble(it);
        uint64_t c = alltoall_on_stack(it);
        uint64_t d = scribble(it + 1);
        tt_out("rank %d it %d %016llx %016llx %016llx %016llx\n", tt_rank, it,
               (unsigned long long)a, (unsigned long long)b, (unsigned long long)c,
               (unsigned long long)d);
    }
    uint64_t h = 0;
    pthread_t t;
    pthread_create(&t, NULL, thread_main, &h);   /* the only MPI caller meanwhile */
    pthread_join(t, NULL);
    tt_out("rank %d thread %016llx\n", tt_rank, (unsigned long long)h);
    tt_finish();
    return 0;
}
