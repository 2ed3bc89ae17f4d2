// SPDX-License-Identifier: BSD-3-Clause
/* Own case: the program's own MPI call right after an early return moves
 * MPI's traffic itself. Over TCP (the case runs with --mca btl self,tcp)
 * the MPI_Sendrecv that follows each Alltoall writes out whatever
 * fragments wait on the socket, among them the pieces tnbc sends from the
 * Alltoall's send buffer while holding its pages read-only
 * (libreplay/send_guard.h). writev only reads them; when the library's
 * writev wrapper waited for those sends to finish, inside MPI's lock on
 * the connection, the progress thread could not make them: the job hung
 * (2 ranks, 8 MiB per peer, every run). Page-aligned buffers, so that the
 * sends go from the program's pages. */
#include "tt.h"

#define N (1L << 20)               /* doubles per peer and per message */

int main(int argc, char **argv)
{
    tt_init(&argc, &argv);
    long np = tt_size;
    double *s, *r, *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
    if (posix_memalign((void **)&s, 4096, (size_t)(np * N) * sizeof *s) ||
        posix_memalign((void **)&r, 4096, (size_t)(np * N) * sizeof *r) || !x || !y)
        MPI_Abort(MPI_COMM_WORLD, 1);
    int peer = (tt_rank + 1) % tt_size, from = (tt_rank + tt_size - 1) % tt_size;
    uint64_t h = 0;
    long bad = 0;
    for (int it = 0; it < 8; it++) {
        for (long i = 0; i < np * N; i++)
            s[i] = tt_rank * 1e7 + i + it;
        for (long i = 0; i < N; i++)
            x[i] = -(double)i - it - tt_rank;
        MPI_Alltoall(s, N, MPI_DOUBLE, r, N, MPI_DOUBLE, MPI_COMM_WORLD);
        MPI_Sendrecv(x, N, MPI_DOUBLE, peer, 5, y, N, MPI_DOUBLE, from, 5, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        for (long i = np * N - 1; i >= 0; i--)
            bad += r[i] != (double)((i / N) * 1e7 + tt_rank * N + i % N + it);
        h ^= tt_hash(r, (size_t)(np * N) * sizeof *r) ^ tt_hash(y, N * sizeof *y);
    }
    tt_out("rank %d: bad %ld hash %016llx\n", tt_rank, bad, (unsigned long long)h);
    free(s);
    free(r);
    free(x);
    free(y);
    tt_finish();
    return 0;
}
