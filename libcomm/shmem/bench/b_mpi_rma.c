// SPDX-License-Identifier: BSD-3-Clause
/*
 * b_mpi_rma.c - the b_putget measurements in plain MPI-3 RMA: one window from
 * MPI_Win_allocate, locked once; MPI_Put + MPI_Win_flush per window of puts
 * for the rate, MPI_Put/MPI_Get + MPI_Win_flush for latency.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXB (1 << 20)
#define WINDOW 4096

static const size_t sizes[] = {8, 64, 512, 4096, 32768, 262144, MAXB};
#define NSIZES (int)(sizeof sizes / sizeof sizes[0])

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    const char *impl = argc > 1 ? argv[1] : "mpi-rma";
    double secs = argc > 2 ? atof(argv[2]) : 0.5;
    int act = n - 1, tgt = 0;
    char *base, *local = malloc(MAXB);
    MPI_Win win;
    memset(local, 1, MAXB);
    MPI_Win_allocate(MAXB + WINDOW * 8, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == act && n > 1) {
        long v = 42, done = 0;
        double t0 = MPI_Wtime(), t;
        do {
            for (int i = 0; i < WINDOW; i++)
                MPI_Put(&v, 1, MPI_LONG, tgt, MAXB + i * 8, 1, MPI_LONG, win);
            MPI_Win_flush(tgt, win);
            done += WINDOW;
        } while ((t = MPI_Wtime() - t0) < secs);
        printf("%s put_nbi_rate 8 %.2f Mmsg/s\n", impl, done / t / 1e6);
        for (int op = 0; op < 2; op++)
            for (int si = 0; si < NSIZES; si++) {
                size_t b = sizes[si];
                long iters = b >= 65536 ? 200 : 2000;
                for (int w = 0; w < 10; w++) {
                    MPI_Get(local, (int)b, MPI_BYTE, tgt, 0, (int)b, MPI_BYTE, win);
                    MPI_Win_flush(tgt, win);
                }
                t0 = MPI_Wtime();
                for (long i = 0; i < iters; i++) {
                    if (op == 0)
                        MPI_Put(local, (int)b, MPI_BYTE, tgt, 0, (int)b, MPI_BYTE, win);
                    else
                        MPI_Get(local, (int)b, MPI_BYTE, tgt, 0, (int)b, MPI_BYTE, win);
                    MPI_Win_flush(tgt, win);
                }
                t = MPI_Wtime() - t0;
                printf("%s %s_latency %zu %.2f us\n", impl, op ? "get" : "put", b,
                       t / iters * 1e6);
            }
        fflush(stdout);
    }
    /* the target must keep calling MPI for progress with osc/pt2pt */
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
    free(local);
    MPI_Finalize();
    return 0;
}
