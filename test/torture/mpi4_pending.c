// SPDX-License-Identifier: BSD-3-Clause
/* Own case: pending receive buffers handed, right after the call, to
 * MPI-4 functions that Open MPI 4.1's header lacks and MPICH 4's has:
 * MPI_Isendrecv, the large-count MPI_Send_c/MPI_Recv_c, and a persistent
 * MPI_Alltoall_init started at once. Under MPICH the release wrappers are
 * generated from its own header (by the build, core/module.mk): before,
 * none of these lifted the guards, and the peer read the blocks through
 * the kernel before they had landed (wrong data, silently). Blocks of
 * 4 MiB, so that data is still on its way. */
#include "tt.h"

#define BLK (4 << 20)

#if MPI_VERSION >= 4
static char *sbuf, *rbuf, *other;

static void exchange(int it)
{
    tt_exchange_pattern(sbuf, rbuf, BLK, it, NULL, 0);
}

static void report(const char *what, int it, const char *buf)
{
    tt_out("rank %d it %d %s %016llx\n", tt_rank, it, what,
           (unsigned long long)tt_hash(buf, 2 * (size_t)BLK));
}

int main(int argc, char **argv)
{
    if (!tt_init_ranks(&argc, &argv, 2))
        return 0;
    char *s = malloc(2 * (size_t)BLK + 64), *r = malloc(2 * (size_t)BLK + 64);
    other = malloc(2 * (size_t)BLK);
    sbuf = s + 24;
    rbuf = r + 40;
    int peer = 1 - tt_rank;
    for (int it = 0; it < 3; it++) {
        exchange(it);
        MPI_Request q;
        MPI_Isendrecv(rbuf, 2 * BLK, MPI_CHAR, peer, 1, other, 2 * BLK, MPI_CHAR, peer, 1,
                      MPI_COMM_WORLD, &q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        report("isendrecv", it, other);

        exchange(it + 10);
        if (tt_rank == 0)
            MPI_Send_c(rbuf, (MPI_Count)2 * BLK, MPI_CHAR, 1, 2, MPI_COMM_WORLD);
        else
            MPI_Recv_c(other, (MPI_Count)2 * BLK, MPI_CHAR, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (tt_rank == 1)
            report("send_c", it, other);

        /* The received blocks sent on by a persistent Alltoall. */
        exchange(it + 20);
        MPI_Alltoall_init(rbuf, BLK, MPI_CHAR, other, BLK, MPI_CHAR, MPI_COMM_WORLD, MPI_INFO_NULL, &q);
        MPI_Start(&q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        MPI_Request_free(&q);
        report("alltoall_init", it, other);
    }
    free(s);
    free(r);
    free(other);
    tt_finish();
    return 0;
}
#else
int main(int argc, char **argv)
{
    tt_init(&argc, &argv);
    tt_out("MPI %d.%d has no MPI-4 functions\n", MPI_VERSION, MPI_SUBVERSION);
    tt_finish();
    return 0;
}
#endif
