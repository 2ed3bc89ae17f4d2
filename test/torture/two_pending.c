// SPDX-License-Identifier: BSD-3-Clause
/* Own case: one pending buffer copied into another (a string instruction
 * faulting on two guards at once), and a buffer written by a second thread
 * while the first thread reads another part of it. */
#include "tt.h"
#include <pthread.h>

#define N 65536
static int *b;

static void *writer(void *arg)
{
    (void)arg;
    for (int i = N / 2; i < N; i++)
        b[i] = b[i] * 2 + 1;
    return NULL;
}

int main(int argc, char **argv)
{
    tt_init_thread(&argc, &argv, MPI_THREAD_FUNNELED);
    int *a = malloc(N * sizeof *a);
    b = malloc(N * sizeof *b);
    for (int it = 0; it < 4; it++) {
        for (int i = 0; i < N; i++) {
            a[i] = tt_rank == 0 ? it + i : 0;
            b[i] = tt_rank == 0 ? it * 2 + i : 0;
        }
        MPI_Bcast(a, N, MPI_INT, 0, MPI_COMM_WORLD);
        MPI_Bcast(b, N, MPI_INT, 0, MPI_COMM_WORLD);
        memcpy(b, a, N / 2 * sizeof *a);
        pthread_t t;
        pthread_create(&t, NULL, writer, NULL);
        uint64_t h = tt_hash(b, N / 2 * sizeof *b);
        pthread_join(t, NULL);
        tt_out("rank %d it %d %016llx %016llx\n", tt_rank, it, (unsigned long long)h,
               (unsigned long long)tt_hash(b, N * sizeof *b));
    }
    tt_finish();
    return 0;
}
