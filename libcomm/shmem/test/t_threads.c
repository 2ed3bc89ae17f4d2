// SPDX-License-Identifier: BSD-3-Clause
/* t_threads.c - SHMEM_THREAD_MULTIPLE: 4 threads per PE issue small blocking
 * puts, non-fetching atomics (both go through the staging buffer on the RMA
 * path) and fetching atomics at once; the totals are exact. Then threads of
 * every PE take one global lock. If the library provides less than
 * MULTIPLE, the test says so and checks nothing threaded. */
#include <pthread.h>
#include <string.h>
#include "t_common.h"

#define THREADS 4
#define OPS 400   /* bounded under load: osc/ucx atomics wait for the target PE's progress */

static long sum_add, sum_fadd, lock_word, rmw;
static long slots[THREADS][OPS / 100];
static int npes;

static void *worker(void *arg)
{
    long tid = (long)arg;
    int me = shmem_my_pe(), peer = (me + 1) % npes;
    for (int i = 0; i < OPS; i++) {
        shmem_long_atomic_add(&sum_add, i + 1, peer);
        shmem_long_atomic_fetch_add(&sum_fadd, 1, (peer + 1) % npes);
        if (i % 100 == 0)
            shmem_long_p(&slots[tid][i / 100], (long)me * 1000000 + tid * 1000 + i / 100, peer);
    }
    for (int i = 0; i < 20; i++) {
        shmem_set_lock(&lock_word);
        long v = shmem_long_g(&rmw, 0);
        shmem_long_p(&rmw, v + 1, 0);
        shmem_quiet();
        shmem_clear_lock(&lock_word);
    }
    return NULL;
}

int main(void)
{
    int provided = -1;
    shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided);
    int me = shmem_my_pe(), q = -1;
    npes = shmem_n_pes();
    shmem_query_thread(&q);
    CHECK(q == provided, "query_thread %d vs provided %d", q, provided);
    if (provided != SHMEM_THREAD_MULTIPLE) {
        if (me == 0)
            printf("SKIP: thread level %d provided, not MULTIPLE\n", provided);
        return t_done("t_threads");
    }
    pthread_t th[THREADS];
    for (long t = 0; t < THREADS; t++)
        pthread_create(&th[t], NULL, worker, (void *)t);
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
    shmem_quiet();
    shmem_barrier_all();
    long want_add = (long)THREADS * OPS * (OPS + 1) / 2;
    CHECK(sum_add == want_add, "atomic_add total %ld, want %ld", sum_add, want_add);
    CHECK(sum_fadd == (long)THREADS * OPS, "fetch_add total %ld", sum_fadd);
    int from = (me + npes - 1) % npes;
    for (int t = 0; t < THREADS; t++)
        for (int k = 0; k < OPS / 100; k++)
            CHECK(slots[t][k] == (long)from * 1000000 + t * 1000 + k, "slot %d/%d: %ld",
                  t, k, slots[t][k]);
    if (me == 0)
        CHECK(rmw == 20L * THREADS * npes, "lock-protected count %ld", rmw);
    return t_done("t_threads");
}
