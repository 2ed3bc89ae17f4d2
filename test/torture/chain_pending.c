// SPDX-License-Identifier: BSD-3-Clause
/* Own case: the receive buffer of one Alltoall is the send buffer of the
 * next, at once and unread (an FFT's transposes back to back): the second
 * call's send pages are still held by the first call's guard, so its send
 * copy must wait for that data first. Buffers from malloc at odd offsets,
 * so the blocks share pages; the third call sends from the first's send
 * buffer again, rewritten. */
#include "tt.h"

#define BLK 40000      /* ints per block: blocks share pages */

int main(int argc, char **argv)
{
    tt_init(&argc, &argv);
    size_t n = (size_t)BLK * (size_t)tt_size;
    char *ra = malloc(n * sizeof(int) + 24), *rb = malloc(n * sizeof(int) + 40),
         *rc = malloc(n * sizeof(int) + 8);
    int *a = (int *)(ra + 24), *b = (int *)(rb + 40), *c = (int *)(rc + 8);
    for (int it = 0; it < 6; it++) {
        for (size_t i = 0; i < n; i++)
            a[i] = tt_rank * 1000003 + (int)i * 7 + it;
        MPI_Alltoall(a, BLK, MPI_INT, b, BLK, MPI_INT, MPI_COMM_WORLD);
        MPI_Alltoall(b, BLK, MPI_INT, c, BLK, MPI_INT, MPI_COMM_WORLD);
        for (size_t i = 0; i < n; i++)
            a[i] = (int)(n - i) + it;
        MPI_Alltoall(a, BLK, MPI_INT, b, BLK, MPI_INT, MPI_COMM_WORLD);
        tt_out("rank %d it %d c %016llx b %016llx\n", tt_rank, it,
               (unsigned long long)tt_hash(c, n * sizeof(int)),
               (unsigned long long)tt_hash(b, n * sizeof(int)));
    }
    free(ra);
    free(rb);
    free(rc);
    tt_finish();
    return 0;
}
