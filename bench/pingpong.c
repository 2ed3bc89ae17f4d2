// SPDX-License-Identifier: BSD-3-Clause
/* pingpong: the one-way latency between the first and the last rank (on
 * the emulated cluster, two nodes), half the median round trip of 8-byte
 * messages after --warmup round trips. bench/projection.sh gives it to
 * `tnbc analyze --platform` as the target's latency. The other ranks only
 * wait. Check: every echo carries the payload that was sent. RESULT line
 * as the other applications (t_coll = t_total = one-way latency in s),
 * plus latency_us. */
#include "bench_util.h"

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One round trip of `msg` between rank 0 and `peer`; seconds (rank 0) or 0. */
static double round_trip(int rank, int peer, uint64_t msg, int corrupt, int *ok)
{
    uint64_t got = 0;
    double t0 = bench_now();
    if (rank == 0) {
        MPI_Send(&msg, 1, MPI_UINT64_T, peer, 1, MPI_COMM_WORLD);
        MPI_Recv(&got, 1, MPI_UINT64_T, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        *ok &= got == msg;
        return bench_now() - t0;
    }
    MPI_Recv(&got, 1, MPI_UINT64_T, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    got ^= (uint64_t)(corrupt != 0);
    MPI_Send(&got, 1, MPI_UINT64_T, 0, 2, MPI_COMM_WORLD);
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, np, ok = 1;
    struct bench_common c = { .iters = 1000, .warmup = 100 };
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    for (int i = 1; i < argc; i++)
        if (!bench_common_arg(argc, argv, &i, &c))
            bench_usage_error("usage: pingpong [--iters N] [--warmup N] [--corrupt]");
    if (np < 2)
        bench_usage_error("pingpong needs at least 2 ranks, got %d", np);
    if (c.iters < 1)
        bench_usage_error("--iters must be at least 1");
    int peer = np - 1, active = rank == 0 || rank == peer;
    struct bench_times t = bench_times_new(c.iters);
    double *rtt = bench_alloc(sizeof(double) * (size_t)c.iters);
    for (long it = -c.warmup; it < c.iters; it++) {
        double s = active ? round_trip(rank, peer, bench_pattern(7, (uint64_t)(it + c.warmup), 1),
                                       c.corrupt && it == 0, &ok) : 0;
        if (it >= 0)
            rtt[it] = s;
    }
    double one_way = 0;
    if (rank == 0) {
        qsort(rtt, (size_t)c.iters, sizeof *rtt, by_value);
        one_way = rtt[c.iters / 2] / 2;
    }
    for (long it = 0; it < c.iters; it++)
        bench_times_put(&t, it, one_way, one_way);
    char extra[64];
    snprintf(extra, sizeof extra, "latency_us=%.2f", one_way * 1e6);
    int rc = bench_report("pingpong", extra, &t, ok, MPI_COMM_WORLD);
    bench_times_free(&t);
    free(rtt);
    MPI_Finalize();
    return rc;
}
