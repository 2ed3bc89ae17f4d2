// SPDX-License-Identifier: BSD-3-Clause
/* Case 10b: the thread level the program asked for is the one it sees,
 * from MPI_Init_thread and from MPI_Query_thread. */
#include "tt.h"

int main(int argc, char **argv)
{
    int q, provided = tt_init_thread(&argc, &argv, MPI_THREAD_FUNNELED);
    MPI_Query_thread(&q);
    int *a = malloc(65536 * sizeof *a);
    for (int i = 0; i < 65536; i++)
        a[i] = tt_rank == 0 ? i : 0;
    MPI_Bcast(a, 65536, MPI_INT, 0, MPI_COMM_WORLD);
    tt_out("rank %d provided %d query %d %016llx\n", tt_rank, provided, q,
           (unsigned long long)tt_hash(a, 65536 * sizeof *a));
    tt_finish();
    return 0;
}
