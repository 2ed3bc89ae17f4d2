// SPDX-License-Identifier: BSD-3-Clause
/* Benchmarks of ibconn (run inside the VM bench by bench.sh):
 *
 *   ibc_bench mem        memory per process (accounted, mapped) and connection
 *                        counts after start-up, next to the model
 *   ibc_bench mem-all    the same after every rank has messaged every other
 *                        (group mode: every dynamic connection made)
 *   ibc_bench lat        ping-pong half round trip between ranks 0 and 1
 *   ibc_bench bw         streaming bandwidth from rank 0 to rank 1
 *   ibc_bench first P    time of the first and of later round trips 0 <-> P
 *
 * Mode and queue sizes from TNBC_IBCONN_*; rank 0 prints one line per result. */
#include "../ibc_model.h"
#include "../ibconn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, nprocs;

static int all_to_all_once(struct ibc_ctx *c)
{
    char b = 1;

    for (int d = 1; d < nprocs; d++)
        if (ibc_send(c, (rank + d) % nprocs, &b, 1))
            return -1;
    for (int d = 1; d < nprocs; d++)
        if (ibc_recv(c, (rank - d + nprocs) % nprocs, &b, 1, NULL))
            return -1;
    return ibc_barrier(c);
}

static enum ibc_model_mode model_mode(enum ibc_mode m)
{
    return m == IBC_RC ? IBC_M_RC : m == IBC_RC_SRQ ? IBC_M_RC_SRQ : IBC_M_GROUP_RC;
}

static int bench_mem(struct ibc_ctx *c, const struct ibc_opts *o, int after_all)
{
    struct ibc_stats s;
    unsigned long long mine[4], hi[4];

    if (after_all && all_to_all_once(c))
        return -1;
    ibc_get_stats(c, &s);
    mine[0] = s.bytes_model;
    mine[1] = s.bytes_mapped;
    mine[2] = s.conns_static + s.conns_dynamic;
    mine[3] = s.srq_depth;
    MPI_Reduce(mine, hi, 4, MPI_UNSIGNED_LONG_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank != 0)
        return 0;
    /* The model with the depths the device granted, and with the design's. */
    struct ibc_model_params p = {.m = (uint64_t)nprocs, .c = 1, .s1 = (double)s.slot_bytes,
                                 .sd = s.sd, .rd = s.rd, .s2 = o->s2, .n = o->n,
                                 .g = o->group, .k = 6};
    enum ibc_model_mode mm = model_mode(s.mode);
    struct ibc_model_row granted = ibc_model_eval(&p, mm);
    p.sd = o->sd;
    p.rd = o->rd;
    struct ibc_model_row design = ibc_model_eval(&p, mm);
    if (after_all && s.mode == IBC_GROUP)       /* every pair connected now */
        granted.conns = design.conns = (uint64_t)nprocs - 1;
    printf("mem%s np=%d mode=%s conns=%llu model_conns=%llu srq=%llu sd=%u rd=%u "
           "accounted=%llu model_granted=%.0f model_design=%.0f mapped=%llu sbuf=%llu cq=%llu\n",
           after_all ? "-all" : "", nprocs, ibc_mode_name(s.mode), hi[2],
           (unsigned long long)granted.conns, hi[3], s.sd, s.rd, hi[0],
           after_all && s.mode == IBC_GROUP ? 0.0 : granted.bytes,
           after_all && s.mode == IBC_GROUP ? 0.0 : design.bytes, hi[1],
           (unsigned long long)s.bytes_sbuf, (unsigned long long)s.bytes_cq);
    return 0;
}

static int pingpong(struct ibc_ctx *c, int peer, char *buf, size_t size, int iters, double *us)
{
    double t0 = 0;

    for (int i = -2; i < iters; i++) {          /* two warm-up rounds */
        if (i == 0)
            t0 = MPI_Wtime();
        if (rank == 0) {
            if (ibc_send(c, peer, buf, size) || ibc_recv(c, peer, buf, size, NULL))
                return -1;
        } else if (ibc_recv(c, 0, buf, size, NULL) || ibc_send(c, 0, buf, size)) {
            return -1;
        }
    }
    *us = (MPI_Wtime() - t0) / iters / 2 * 1e6;
    return 0;
}

static int bench_lat(struct ibc_ctx *c)
{
    static const size_t sizes[] = {8, 1024, 8192, 65536, 1 << 20};
    static const int iters[] = {100, 100, 50, 20, 5};
    char *buf = calloc(1, 1 << 20);
    double us;

    for (int i = 0; i < 5 && rank < 2; i++) {
        if (pingpong(c, 1, buf, sizes[i], iters[i], &us))
            return -1;
        if (rank == 0)
            printf("lat size=%zu iters=%d half_rtt_us=%.1f\n", sizes[i], iters[i], us);
    }
    free(buf);
    return ibc_barrier(c);
}

static int bench_bw(struct ibc_ctx *c)
{
    static const size_t sizes[] = {65536, 1 << 20, 4 << 20};
    static const int counts[] = {64, 16, 4};
    char *buf = calloc(1, 4 << 20), ack = 0;

    for (int i = 0; i < 3 && rank < 2; i++) {
        double t0 = MPI_Wtime();
        for (int k = 0; k < counts[i]; k++)
            if (rank == 0 ? ibc_send(c, 1, buf, sizes[i]) : ibc_recv(c, 0, buf, sizes[i], NULL))
                return -1;
        if (rank == 0 ? ibc_recv(c, 1, &ack, 1, NULL) : ibc_send(c, 0, &ack, 1))
            return -1;
        double t = MPI_Wtime() - t0;
        if (rank == 0)
            printf("bw size=%zu count=%d MBps=%.2f\n", sizes[i], counts[i],
                   sizes[i] * (double)counts[i] / t / 1e6);
    }
    free(buf);
    return ibc_barrier(c);
}

/* First round trip to `peer` (includes any on-demand connection) and the
 * mean of the next ones. */
static int bench_first(struct ibc_ctx *c, int peer)
{
    char b[8] = {0};
    double t[11];

    if (peer <= 0 || peer >= nprocs)
        return fprintf(stderr, "ibc_bench first: bad peer\n"), -1;
    for (int i = 0; i < 11 && (rank == 0 || rank == peer); i++) {
        double t0 = MPI_Wtime();
        if (rank == 0 ? ibc_send(c, peer, b, 8) || ibc_recv(c, peer, b, 8, NULL)
                      : ibc_recv(c, 0, b, 8, NULL) || ibc_send(c, 0, b, 8))
            return -1;
        t[i] = MPI_Wtime() - t0;
    }
    if (rank == 0) {
        double rest = 0;
        for (int i = 1; i < 11; i++)
            rest += t[i] / 10;
        struct ibc_stats s;
        ibc_get_stats(c, &s);
        printf("first np=%d mode=%s peer=%d first_rtt_us=%.0f later_rtt_us=%.0f dynamic=%u\n",
               nprocs, ibc_mode_name(s.mode), peer, t[0] * 1e6, rest * 1e6, s.conns_dynamic);
    }
    return ibc_barrier(c);
}

int main(int argc, char **argv)
{
    struct ibc_opts o;
    struct ibc_ctx *c;
    int rc = 1;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc < 2 || ibc_opts_from_env(&o) || ibc_init(MPI_COMM_WORLD, &o, &c)) {
        if (argc < 2 && rank == 0)
            fprintf(stderr, "usage: ibc_bench mem|mem-all|lat|bw|first PEER\n");
        MPI_Finalize();
        return 2;
    }
    if (strcmp(argv[1], "mem") == 0 || strcmp(argv[1], "mem-all") == 0)
        rc = bench_mem(c, &o, argv[1][3] == '-');
    else if (strcmp(argv[1], "lat") == 0 && nprocs >= 2)
        rc = bench_lat(c);
    else if (strcmp(argv[1], "bw") == 0 && nprocs >= 2)
        rc = bench_bw(c);
    else if (strcmp(argv[1], "first") == 0 && argc > 2)
        rc = bench_first(c, atoi(argv[2]));
    else if (rank == 0)
        fprintf(stderr, "ibc_bench: unknown benchmark '%s'\n", argv[1]);
    fflush(stdout);
    if (ibc_finalize(c))
        rc = 1;
    MPI_Finalize();
    return rc ? 1 : 0;
}
