// SPDX-License-Identifier: BSD-3-Clause
/* Case 4: MPI_MAX/MIN on doubles holding signed zeros and NaNs: the result
 * bits depend on the order of application; they must match the plain run. */
#include "tt.h"
#include <math.h>

#define N 16384

int main(int argc, char **argv)
{
    tt_init(&argc, &argv);
    double *x = malloc(N * sizeof *x), *mx = malloc(N * sizeof *mx), *mn = malloc(N * sizeof *mn);
    for (int it = 0; it < 4; it++) {
        for (int i = 0; i < N; i++) {
            int k = (i + tt_rank + it) % 5;
            x[i] = k == 0 ? 0.0 : k == 1 ? -0.0 : k == 2 ? NAN : k == 3 ? -NAN : (double)(i % 7);
        }
        MPI_Allreduce(x, mx, N, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        MPI_Allreduce(x, mn, N, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
        tt_out("rank %d it %d max %016llx min %016llx\n", tt_rank, it,
               (unsigned long long)tt_hash(mx, N * sizeof *mx),
               (unsigned long long)tt_hash(mn, N * sizeof *mn));
    }
    tt_finish();
    return 0;
}
