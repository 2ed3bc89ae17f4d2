// SPDX-License-Identifier: BSD-3-Clause
/* Case 7c: MPI_Allgather whose send buffer is the rank's own slot of the
 * receive buffer (not MPI_IN_PLACE; not conforming, but common). */
#include "tt.h"

#define N 16384

int main(int argc, char **argv)
{
    tt_init(&argc, &argv);
    int *r = malloc((size_t)N * tt_size * sizeof *r);
    for (int it = 0; it < 4; it++) {
        for (int i = 0; i < N; i++)
            r[(size_t)tt_rank * N + i] = tt_rank * 100 + it + i;
        MPI_Allgather(r + (size_t)tt_rank * N, N, MPI_INT, r, N, MPI_INT, MPI_COMM_WORLD);
        tt_out("rank %d it %d %016llx\n", tt_rank, it,
               (unsigned long long)tt_hash(r, (size_t)N * tt_size * sizeof *r));
    }
    tt_finish();
    return 0;
}
