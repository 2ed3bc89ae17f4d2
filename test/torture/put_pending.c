// SPDX-License-Identifier: BSD-3-Clause
/* Own case: MPI_Put from a buffer still pending from a collective that
 * returned early into a window on the peer (fence epochs). The window must
 * receive the collective's data. */
#include "tt.h"

#define N 65536

int main(int argc, char **argv)
{
    tt_init(&argc, &argv);
    int peer = (tt_rank + 1) % tt_size;
    int *w = calloc(N, sizeof *w);
    MPI_Win win;
    MPI_Win_create(w, N * sizeof *w, sizeof *w, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    for (int it = 0; it < 4; it++) {
        int *a = malloc(N * sizeof *a);
        for (int i = 0; i < N; i++)
            a[i] = tt_rank == 0 ? it * 19 + i : -5;
        MPI_Bcast(a, N, MPI_INT, 0, MPI_COMM_WORLD);
        MPI_Win_fence(0, win);
        MPI_Put(a + 100 * tt_rank, 20000, MPI_INT, peer, it * 1000, 20000, MPI_INT, win);
        MPI_Win_fence(0, win);
        tt_out("rank %d it %d w[%d] %d %016llx %016llx\n", tt_rank, it, it * 1000, w[it * 1000],
               (unsigned long long)tt_hash(w, N * sizeof *w),
               (unsigned long long)tt_hash(a, N * sizeof *a));
        free(a);
    }
    MPI_Win_free(&win);
    free(w);
    tt_finish();
    return 0;
}
