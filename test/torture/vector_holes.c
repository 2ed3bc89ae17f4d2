// SPDX-License-Identifier: BSD-3-Clause
/* Case 1: MPI_Bcast with a derived datatype into the even ints of an array
 * and its last int, while another thread (and then the caller) writes the
 * other odd ints, which are not part of the message. Only the type map's
 * bytes may change. (The last int makes the message's footprint the whole
 * array, whole pages when the array is page-aligned.)
 * Even iterations receive into a malloc'd array, odd ones into a
 * page-aligned one: traced as one chunk, the message reaches both partial
 * end pages of the malloc'd array, so replay has nothing to guard and runs
 * those calls blocking (saying so); the aligned array's pages are guarded,
 * and the other thread's writes to its holes wait in the fault handler
 * until the data has landed around them. */
#include "tt.h"
#include <pthread.h>

#define N 65536
static int *a;

static void *bump_odd(void *arg)
{
    (void)arg;
    for (int k = 0; k < 200; k++)
        for (int i = 1; i < N - 1; i += 2)
            a[i] += 1;
    return NULL;
}

int main(int argc, char **argv)
{
    /* FUNNELED: the second thread makes no MPI call. (A program asking for
     * MPI_THREAD_MULTIPLE runs every collective blocking under replay,
     * threads_comms; here the derived-datatype rule must protect it.) */
    tt_init_thread(&argc, &argv, MPI_THREAD_FUNNELED);
    MPI_Datatype evens;
    static int displs[N / 2 + 1], lens[N / 2 + 1];
    for (int i = 0; i <= N / 2; i++) {
        displs[i] = i < N / 2 ? 2 * i : N - 1;
        lens[i] = 1;
    }
    MPI_Type_indexed(N / 2 + 1, lens, displs, MPI_INT, &evens);
    MPI_Type_commit(&evens);
    int *unaligned = malloc(N * sizeof *a), *aligned = aligned_alloc(4096, N * sizeof *a);
    for (int it = 0; it < 4; it++) {
        a = it % 2 ? aligned : unaligned;
        for (int i = 0; i < N; i++)
            a[i] = tt_rank == 0 ? it * 7 + i : -1 - i;
        /* The other thread writes the holes during the call (legal: they
         * are not part of the message) and after it. */
        pthread_t t;
        pthread_create(&t, NULL, bump_odd, NULL);
        MPI_Bcast(a, 1, evens, 0, MPI_COMM_WORLD);
        pthread_join(t, NULL);
        for (int i = 1; i < N - 1; i += 2)
            a[i] += 10;
        tt_out("rank %d it %d hash %016llx a[0..3] %d %d %d %d\n", tt_rank, it,
               (unsigned long long)tt_hash(a, N * sizeof *a), a[0], a[1], a[2], a[3]);
    }
    MPI_Type_free(&evens);
    free(unaligned);
    free(aligned);
    tt_finish();
    return 0;
}
