// SPDX-License-Identifier: BSD-3-Clause
/* An ordinary hybrid code: MPI_THREAD_FUNNELED, an OpenMP team (libgomp's
 * own threads, made at the first parallel region after MPI_Init) reading
 * the blocks of an Alltoall into malloc'd buffers at odd offsets in a
 * scrambled order right after the call, each thread a different block;
 * then an OpenMP reduction over the whole buffer and an Allgather on a
 * row communicator. Per-block sums are combined in a fixed order, so the
 * output is the same in every run. Built with -fopenmp (test/module.mk). */
#include "tt.h"
#include <omp.h>

#define BLK 131072              /* doubles per block: 1 MiB */
#define ITERS 6

int main(int argc, char **argv)
{
    int provided = tt_init_thread(&argc, &argv, MPI_THREAD_FUNNELED);
    if (provided < MPI_THREAD_FUNNELED) {
        tt_out("rank %d: MPI_THREAD_FUNNELED not provided\n", tt_rank);
        tt_finish();
        return 0;
    }
    omp_set_num_threads(2);
    MPI_Comm row;
    MPI_Comm_split(MPI_COMM_WORLD, tt_rank % 2, tt_rank, &row);
    size_t n = (size_t)BLK * (size_t)tt_size;
    char *sraw = malloc(n * sizeof(double) + 64), *rraw = malloc(n * sizeof(double) + 64);
    double *s = (double *)(sraw + 8), *r = (double *)(rraw + 40);
    double *bsum = malloc(sizeof(double) * (size_t)tt_size);
    for (int it = 0; it < ITERS; it++) {
        for (size_t i = 0; i < n; i++)
            s[i] = (double)((i * 2654435761u + (size_t)tt_rank * 97 + (size_t)it) % 1000) / 1000.0;
        MPI_Alltoall(s, BLK, MPI_DOUBLE, r, BLK, MPI_DOUBLE, MPI_COMM_WORLD);
#pragma omp parallel for schedule(static, 1)
        for (int k = 0; k < tt_size; k++) {
            int b = (3 * k + 1) % tt_size;
            const double *p = r + (size_t)b * BLK;
            double acc = 0;
            for (size_t i = BLK; i-- > 0;)            /* backwards through the block */
                acc += p[i] * p[(i * 7) % BLK];
            bsum[b] = acc;
        }
        double total = 0;
        for (int k = 0; k < tt_size; k++)
            total += bsum[k];

        MPI_Alltoall(s, BLK, MPI_DOUBLE, r, BLK, MPI_DOUBLE, MPI_COMM_WORLD);
        long long hits = 0;
#pragma omp parallel for reduction(+ : hits)
        for (size_t i = 0; i < n; i++)
            hits += r[i] > 0.5;

        double mine[4] = { total, (double)hits, (double)it, (double)tt_rank };
        double all[4 * 64];
        int rs;
        MPI_Comm_size(row, &rs);
        MPI_Allgather(mine, 4, MPI_DOUBLE, all, 4, MPI_DOUBLE, row);
        double rsum = 0;
        for (int i = 4 * (rs < 64 ? rs : 64) - 1; i >= 0; i--)
            rsum += all[i];
        tt_out("rank %d it %d total %.17g hits %lld row %.17g %016llx\n", tt_rank, it, total, hits,
               rsum, (unsigned long long)tt_hash(r, n * sizeof(double)));
    }
    MPI_Comm_free(&row);
    free(sraw);
    free(rraw);
    free(bsum);
    tt_finish();
    return 0;
}
