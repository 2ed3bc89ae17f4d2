// SPDX-License-Identifier: BSD-3-Clause
/* Case 1: MPI_Bcast with a vector datatype into the even ints of an array
 * while another thread (and then the caller) writes the odd ints, which
 * are not part of the message. Only the type map's bytes may change. */
#include "tt.h"
#include <pthread.h>

#define N 65536
static int *a;

static void *bump_odd(void *arg)
{
    (void)arg;
    for (int k = 0; k < 200; k++)
        for (int i = 1; i < N; i += 2)
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
    MPI_Type_vector(N / 2, 1, 2, MPI_INT, &evens);
    MPI_Type_commit(&evens);
    a = malloc(N * sizeof *a);
    for (int it = 0; it < 4; it++) {
        for (int i = 0; i < N; i++)
            a[i] = tt_rank == 0 ? it * 7 + i : -1 - i;
        /* The other thread writes the holes during the call (legal: they
         * are not part of the message) and after it. */
        pthread_t t;
        pthread_create(&t, NULL, bump_odd, NULL);
        MPI_Bcast(a, 1, evens, 0, MPI_COMM_WORLD);
        pthread_join(t, NULL);
        for (int i = 1; i < N; i += 2)
            a[i] += 10;
        tt_out("rank %d it %d hash %016llx a[0..3] %d %d %d %d\n", tt_rank, it,
               (unsigned long long)tt_hash(a, N * sizeof *a), a[0], a[1], a[2], a[3]);
    }
    MPI_Type_free(&evens);
    free(a);
    tt_finish();
    return 0;
}
