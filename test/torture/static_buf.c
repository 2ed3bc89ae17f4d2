// SPDX-License-Identifier: BSD-3-Clause
/* Own case: receive buffers in static storage (.bss and .data, as Fortran
 * COMMON blocks and module arrays are), read right after the call, and
 * one of them read again only after MPI_Finalize. */
#include "tt.h"

#define N 65536
static int bss_buf[N];
static int data_buf[N] = { 1 };
static int send_buf[N];

int main(int argc, char **argv)
{
    tt_init(&argc, &argv);
    int per = N / tt_size;
    for (int it = 0; it < 4; it++) {
        for (int i = 0; i < N; i++)
            send_buf[i] = tt_rank * 17 + it * 1000 + i;
        MPI_Alltoall(send_buf, per, MPI_INT, bss_buf, per, MPI_INT, MPI_COMM_WORLD);
        tt_out("rank %d it %d bss %016llx\n", tt_rank, it,
               (unsigned long long)tt_hash(bss_buf, (size_t)per * tt_size * sizeof(int)));
        if (tt_rank == 0)
            for (int i = 0; i < N; i++)
                data_buf[i] = it * 3 - i;
        MPI_Bcast(data_buf, N, MPI_INT, 0, MPI_COMM_WORLD);
        tt_out("rank %d it %d data %016llx\n", tt_rank, it,
               (unsigned long long)tt_hash(data_buf, sizeof data_buf));
    }
    int *late = malloc(N * sizeof *late);
    for (int i = 0; i < N; i++)
        late[i] = tt_rank == 0 ? 5 * i : 0;
    MPI_Bcast(late, N, MPI_INT, 0, MPI_COMM_WORLD);
    int rank = tt_rank;
    tt_finish();                       /* MPI_Finalize: late is read after it */
    if (rank == 0)
        printf("after finalize %016llx\n", (unsigned long long)tt_hash(late, N * sizeof *late));
    return 0;
}
