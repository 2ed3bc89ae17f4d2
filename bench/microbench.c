// SPDX-License-Identifier: BSD-3-Clause
/* The design's micro-benchmark: MPI_Alltoall of fixed-size blocks, then
 * computation made of a communication-unrelated part (CURC: --tcurc-us of
 * busy work) and a part that consumes the received blocks (CRC: reads each
 * block --crc-passes times, in the order --order, padded with busy work to
 * --crc-us in total), so that every regime of the overlap model can be set
 * up. The model consumes the data at a rate (RCRC), so each block is
 * consumed in --crc-slices slices, each read and then worked on for its
 * share of the block's time; with one slice a block is read whole first.
 * Work is measured in the thread's CPU time (bench_busy_us): waiting for a
 * block, or losing the core, does not count as work done. The work after
 * a slice's read is its share whatever the read cost: time spent inside
 * the read (an observer's fault handling, the first reads of pages a
 * guard reopened) is the reading's, not the work's, as in a program whose
 * work is a fixed amount of arithmetic. (Counted as work done, a traced
 * run's handler time shortened the work after each block: micro-e's
 * traced blocks were read 120 us apart where the program spends 1.66 ms
 * on each.)
 * --variant ialltoall is the hand-written MPI-3 version: MPI_Ialltoall, the
 * CURC with MPI_Test every --test-us, MPI_Wait, then the CRC.
 * Every received block is checked against the pattern its sender wrote. */
#include "bench_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct opts {
    struct bench_common c;
    long block, passes, slices;
    double tcurc_us, crc_us, test_us;
    const char *order, *variant;
};

static void usage_exit(void)
{
    bench_usage_error("usage: microbench [--block BYTES] [--iters N] [--warmup N] "
                      "[--tcurc-us US] [--crc-us US] [--crc-passes P] [--crc-slices S] "
                      "[--order fwd|rev|perm|LIST] "
                      "[--variant plain|ialltoall] [--test-us US] [--corrupt]");
}

static void parse(int argc, char **argv, struct opts *o)
{
    *o = (struct opts){ .c = { .iters = 5, .warmup = 1 }, .block = 1 << 20, .passes = 1, .slices = 0,
                        .test_us = 100, .order = "fwd", .variant = "plain" };
    for (int i = 1; i < argc; i++) {
        if (bench_common_arg(argc, argv, &i, &o->c))
            continue;
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) usage_exit();
        i++;
        if (!strcmp(a, "--block")) o->block = bench_parse_long(a, v, 8, 1L << 30);
        else if (!strcmp(a, "--crc-passes")) o->passes = bench_parse_long(a, v, 0, 1000);
        else if (!strcmp(a, "--crc-slices")) o->slices = bench_parse_long(a, v, 1, 1 << 20);
        else if (!strcmp(a, "--tcurc-us")) o->tcurc_us = bench_parse_double(a, v, 0, 1e9);
        else if (!strcmp(a, "--crc-us")) o->crc_us = bench_parse_double(a, v, 0, 1e9);
        else if (!strcmp(a, "--test-us")) o->test_us = bench_parse_double(a, v, 0, 1e9);
        else if (!strcmp(a, "--order")) o->order = v;
        else if (!strcmp(a, "--variant")) o->variant = v;
        else usage_exit();
    }
    if (o->block % 8)
        bench_usage_error("--block must be a multiple of 8 bytes, got %ld", o->block);
    if (o->slices == 0)             /* default: 16, fewer for tiny blocks */
        o->slices = o->block / 8 < 16 ? o->block / 8 : 16;
    if (o->slices > o->block / 8)
        bench_usage_error("--crc-slices must be at most --block / 8 (%ld), got %ld",
                          o->block / 8, o->slices);
    if (strcmp(o->variant, "plain") && strcmp(o->variant, "ialltoall"))
        bench_usage_error("--variant must be plain or ialltoall, got '%s'", o->variant);
}

static void test_request(void *arg)
{
    int flag;
    MPI_Test(arg, &flag, MPI_STATUS_IGNORE);
}

static uint64_t value(int src, int dst, long iter, size_t i)
{
    return bench_pattern((uint64_t)src, (uint64_t)dst << 20 ^ (uint64_t)iter, i);
}

/* Read one block `passes` times; the sum is what the CRC "computes". */
static uint64_t consume(const uint64_t *w, size_t n, long passes)
{
    uint64_t s = 0;
    for (long p = 0; p < passes; p++) {
        uint64_t t = 0;
        for (size_t i = 0; i < n; i++)
            t += w[i];
        s = t;
        __asm__ volatile("" : : "r"(s) : "memory"); /* keep every pass */
    }
    return s;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    struct opts o;
    parse(argc, argv, &o);
    int *order = bench_alloc(sizeof(int) * (size_t)np);
    char err[160];
    if (bench_order(o.order, np, order, err, sizeof err))
        bench_usage_error("%s", err);

    size_t words = (size_t)o.block / 8;
    uint64_t *sbuf = bench_alloc((size_t)o.block * (size_t)np);
    uint64_t *rbuf = bench_alloc((size_t)o.block * (size_t)np);
    uint64_t *sums = bench_alloc(sizeof(uint64_t) * (size_t)np);
    struct bench_times t = bench_times_new(o.c.iters);
    int ok = 1, ia = !strcmp(o.variant, "ialltoall");
    double per_block_us = o.crc_us / np;
    double start_sum = 0;   /* until the collective (or MPI_Ialltoall) returned */

    for (long it = -o.c.warmup; it < o.c.iters; it++) {
        for (int d = 0; d < np; d++)
            for (size_t i = 0; i < words; i++)
                sbuf[(size_t)d * words + i] = value(rank, d, it, i);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = bench_now(), coll;
        if (ia) {
            MPI_Request req;
            MPI_Ialltoall(sbuf, (int)o.block, MPI_BYTE, rbuf, (int)o.block, MPI_BYTE,
                          MPI_COMM_WORLD, &req);
            coll = bench_now() - t0;
            start_sum += it >= 0 ? coll : 0;
            bench_busy_us(o.tcurc_us, o.test_us > 0 ? test_request : NULL, &req, o.test_us);
            double w0 = bench_now();
            MPI_Wait(&req, MPI_STATUS_IGNORE);
            coll += bench_now() - w0;
        } else {
            MPI_Alltoall(sbuf, (int)o.block, MPI_BYTE, rbuf, (int)o.block, MPI_BYTE,
                         MPI_COMM_WORLD);
            coll = bench_now() - t0;
            start_sum += it >= 0 ? coll : 0;
            bench_busy_us(o.tcurc_us, NULL, NULL, 0);
        }
        if (o.c.corrupt && it == 0 && rank == np - 1)
            rbuf[(size_t)order[0] * words] ^= 1u << 3;
        for (int k = 0; k < np; k++) {
            /* per_block_us of work per block, slice by slice: the slice's
             * reads, then its share of busy work in CPU time (waiting for
             * data is not work; the reads' own cost is not taken off it) */
            int src = order[k];
            sums[src] = 0;
            for (long j = 0; j < o.slices; j++) {
                size_t lo = words * (size_t)j / (size_t)o.slices;
                size_t hi = words * (size_t)(j + 1) / (size_t)o.slices;
                sums[src] += consume(rbuf + (size_t)src * words + lo, hi - lo, o.passes);
                bench_busy_us(per_block_us / (double)o.slices, NULL, NULL, 0);
            }
        }
        double t2 = bench_now();
        bench_times_put(&t, it, coll, t2 - t0);
        /* Untimed check: every block holds what its sender wrote. */
        for (int s = 0; s < np; s++) {
            const uint64_t *w = rbuf + (size_t)s * words;
            uint64_t want = 0;
            for (size_t i = 0; i < words; i++) {
                uint64_t v = value(s, rank, it, i);
                want += v;
                ok &= w[i] == v;
            }
            ok &= o.passes == 0 || sums[s] == want;
        }
    }
    /* The slowest rank's mean time until the call returned: the blocking
     * call's whole time, tnbc's early return, or MPI_Ialltoall's start. */
    double start_max = 0, start_mean = o.c.iters ? start_sum / (double)o.c.iters : 0;
    MPI_Reduce(&start_mean, &start_max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    char extra[320];
    snprintf(extra, sizeof extra,
             "variant=%s block=%ld tcurc_us=%.0f crc_us=%.0f crc_passes=%ld crc_slices=%ld order=%s "
             "t_return=%.6f",
             o.variant, o.block, o.tcurc_us, o.crc_us, o.passes, o.slices, o.order, start_max);
    int rc = bench_report("microbench", extra, &t, ok, MPI_COMM_WORLD);
    if (!ok)
        fprintf(stderr, "microbench: rank %d: received data does not match what was sent\n", rank);
    free(sbuf); free(rbuf); free(sums); free(order);
    bench_times_free(&t);
    MPI_Finalize();
    return rc;
}
