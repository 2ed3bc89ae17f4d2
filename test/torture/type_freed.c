// SPDX-License-Identifier: BSD-3-Clause
/* Case 3: a derived datatype freed right after the blocking call returned
 * (legal: the call is complete), then the data read. */
#include "tt.h"

#define N 65536

int main(int argc, char **argv)
{
    tt_init(&argc, &argv);
    int *a = malloc(N * sizeof *a), *s = malloc(N * sizeof *s);
    for (int it = 0; it < 4; it++) {
        MPI_Datatype four, pair;
        MPI_Type_contiguous(4, MPI_INT, &four);
        MPI_Type_commit(&four);
        MPI_Type_vector(2, 1, 1, MPI_INT, &pair);
        MPI_Type_commit(&pair);
        for (int i = 0; i < N; i++) {
            a[i] = tt_rank == 0 ? it * 11 + i : 0;
            s[i] = tt_rank * 1000 + it + i;
        }
        MPI_Bcast(a, N / 4, four, 0, MPI_COMM_WORLD);
        MPI_Type_free(&four);
        uint64_t h1 = tt_hash(a, N * sizeof *a);
        int *r = malloc(N * sizeof *r);
        int per = N / 2 / tt_size;
        MPI_Alltoall(s, per, pair, r, per, pair, MPI_COMM_WORLD);
        MPI_Type_free(&pair);
        tt_out("rank %d it %d %016llx %016llx\n", tt_rank, it, (unsigned long long)h1,
               (unsigned long long)tt_hash(r, (size_t)per * 2 * tt_size * sizeof *r));
        free(r);
    }
    free(a);
    free(s);
    tt_finish();
    return 0;
}
