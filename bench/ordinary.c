// SPDX-License-Identifier: BSD-3-Clause
/* An ordinary MPI program, as users write it: send and receive buffers of P
 * blocks from plain malloc (not page-aligned, so adjacent blocks share
 * pages; --aligned puts them on page boundaries), MPI_Alltoall of --block B
 * bytes per peer, then --passes multiply-add passes over each received
 * block, the blocks taken in the order (3i+1) mod P, after --curc-us of
 * unrelated work (CPU time). --iters N iterations. --threads T: the
 * passes run in T threads the program creates after each call, thread t
 * taking the t-th, (t+T)-th, ... block of that order (as a program that
 * hands the received data to a fresh team of threads does).
 *
 * It measures itself: per iteration the cycle (alltoall + work) and the
 * compute phase's consumption rate (received bytes over the time from the
 * first block read to the last one's end, i.e. what the trace calls RCRC),
 * taken as the slowest rank's cycle and the median rank's rate. Rank 0
 * prints one line
 *   ORDINARY block=B aligned=0|1 np=P iters=N head=H cycle_head=S cycle_rest=S
 *            rate_head=B/s rate_rest=B/s curc_head=S curc_rest=S checksum=X
 * (curc: the time from the call's return to the first read, i.e. CURC)
 * where "head" is the median over iterations 1..H-1 (iteration 0 sets up
 * connections) and "rest" over H..N-1: a tool that observes only the
 * first calls of a site can be compared with the same run unobserved. The
 * checksum depends only on the data, so runs with and without a tool must
 * print the same one. After each iteration's timed part every rank checks
 * every received element against the pattern its sender used (--corrupt
 * changes one element first, to show the check fails), and at the end rank 0
 * also prints the RESULT line of the other applications (bench_util.h:
 * t_coll the alltoall, t_total the cycle), so bench/run-apps can run it. */
#include "bench_util.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct opts {
    long block, iters, head, passes, threads;
    double curc_us;
    int aligned, corrupt;
};

static void parse(int argc, char **argv, struct opts *o)
{
    *o = (struct opts){ .block = 64 << 10, .iters = 40, .head = 8, .passes = 16, .threads = 0 };
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--aligned")) {
            o->aligned = 1;
            continue;
        }
        if (!strcmp(a, "--corrupt")) {
            o->corrupt = 1;
            continue;
        }
        if (!v)
            bench_usage_error("usage: ordinary [--block B] [--iters N] [--head H] [--passes K] "
                              "[--curc-us US] [--threads T] [--aligned] [--corrupt]");
        if (!strcmp(a, "--block")) o->block = bench_parse_long(a, v, 8, 64L << 20);
        else if (!strcmp(a, "--iters")) o->iters = bench_parse_long(a, v, 3, 1000000);
        else if (!strcmp(a, "--head")) o->head = bench_parse_long(a, v, 2, 1000000);
        else if (!strcmp(a, "--passes")) o->passes = bench_parse_long(a, v, 1, 1000);
        else if (!strcmp(a, "--curc-us")) o->curc_us = bench_parse_double(a, v, 0, 1e9);
        else if (!strcmp(a, "--threads")) o->threads = bench_parse_long(a, v, 1, 64);
        else bench_usage_error("ordinary: unknown option '%s'", a);
        i++;
    }
    if (o->block % 8)
        bench_usage_error("--block must be a multiple of 8, got %ld", o->block);
    if (o->head >= o->iters)
        bench_usage_error("--head (%ld) must be below --iters (%ld)", o->head, o->iters);
}

/* P*B bytes as a user would get them: malloc'd and 24 bytes in, so no
 * block starts on a page; or page-aligned. `raw` is what to free. */
static double *alloc_blocks(size_t bytes, int aligned, void **raw)
{
    if (aligned) {
        size_t ps = (size_t)sysconf(_SC_PAGESIZE);
        if (posix_memalign(raw, ps, bytes) != 0)
            bench_fail("out of memory (%zu B)", bytes);
        return *raw;
    }
    *raw = bench_alloc(bytes + 24);
    return (double *)((char *)*raw + 24);
}

static double to_unit(uint64_t x) { return (double)(x >> 11) * 0x1p-53; }

/* Element j of what rank `from` sends rank `to` in iteration `it`. */
static double sent_value(int from, int to, long it, size_t nd, size_t j)
{
    return to_unit(bench_pattern((uint64_t)from, (uint64_t)to, (uint64_t)it * nd + j));
}

/* Multiply-add passes over one block; four chains so the loads, not the
 * latency of one chain, set the pace. */
static void consume(const double *x, size_t n, long passes, double acc[4])
{
    for (long p = 0; p < passes; p++)
        for (size_t j = 0; j + 3 < n; j += 4) {
            acc[0] = acc[0] * 0.5 + x[j];
            acc[1] = acc[1] * 0.5 + x[j + 1];
            acc[2] = acc[2] * 0.5 + x[j + 2];
            acc[3] = acc[3] * 0.5 + x[j + 3];
        }
}

/* The k-th block the program reads: the order (3k+1) mod P. */
static int block_in_order(int k, int np) { return (3 * k + 1) % np; }

/* The passes of one reader thread: blocks t, t+T, ... of the order. */
struct reader {
    const double *rbuf;
    size_t nd;
    int np, t, nthreads;
    long passes;
    double start, acc[4];
};

static void *read_share(void *arg)
{
    struct reader *r = arg;
    r->start = bench_now();
    for (int k = r->t; k < r->np; k += r->nthreads)
        consume(r->rbuf + (size_t)block_in_order(k, r->np) * r->nd, r->nd, r->passes, r->acc);
    return NULL;
}

/* The passes in `nthreads` fresh threads; returns when the first began,
 * and adds the threads' sums into acc (in thread order: the same sum every
 * run). */
static double consume_threaded(const double *rbuf, size_t nd, int np, long passes,
                               int nthreads, double acc[4])
{
    pthread_t th[64];
    struct reader r[64];
    double first = 0;
    for (int t = 0; t < nthreads; t++) {
        r[t] = (struct reader){ .rbuf = rbuf, .nd = nd, .np = np, .t = t,
                                .nthreads = nthreads, .passes = passes };
        if (pthread_create(&th[t], NULL, read_share, &r[t]) != 0)
            bench_fail("cannot create a reader thread");
    }
    for (int t = 0; t < nthreads; t++) {
        pthread_join(th[t], NULL);
        if (t == 0 || r[t].start < first)
            first = r[t].start;
        for (int i = 0; i < 4; i++)
            acc[i] += r[t].acc[i];
    }
    return first;
}

/* Every element of every block received in iteration `it` is the one its
 * sender wrote (main's fill: the pattern of sender, receiver, index). */
static int received_ok(const double *rbuf, size_t nd, int np, int rank, long it)
{
    for (int src = 0; src < np; src++)
        for (size_t j = 0; j < nd; j++)
            if (rbuf[(size_t)src * nd + j] != sent_value(src, rank, it, nd, j))
                return 0;
    return 1;
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, long n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_dbl);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
    struct opts o;
    int rank, np;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    parse(argc, argv, &o);

    size_t nd = (size_t)o.block / 8, total = (size_t)np * (size_t)o.block;
    void *sraw, *rraw;
    double *sbuf = alloc_blocks(total, o.aligned, &sraw);
    double *rbuf = alloc_blocks(total, o.aligned, &rraw);
    double *cycle = bench_alloc(sizeof(double) * (size_t)o.iters);
    double *rate = bench_alloc(sizeof(double) * (size_t)o.iters);
    double *curc = bench_alloc(sizeof(double) * (size_t)o.iters);
    double acc[4] = { 0, 0, 0, 0 };
    struct bench_times times = bench_times_new(o.iters);
    int check_ok = 1;

    for (long it = 0; it < o.iters; it++) {
        for (int d = 0; d < np; d++)
            for (size_t j = 0; j < nd; j++)
                sbuf[(size_t)d * nd + j] = sent_value(rank, d, it, nd, j);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = bench_now();
        MPI_Alltoall(sbuf, (int)nd, MPI_DOUBLE, rbuf, (int)nd, MPI_DOUBLE, MPI_COMM_WORLD);
        double ret = bench_now();
        if (o.corrupt && it == 0 && rank == np - 1)
            rbuf[nd / 2] += 1.0;
        if (o.curc_us > 0)
            bench_busy_us(o.curc_us, NULL, NULL, 0);
        double c0 = bench_now();
        if (o.threads > 0) {
            c0 = consume_threaded(rbuf, nd, np, o.passes, (int)o.threads, acc);
        } else {
            for (int k = 0; k < np; k++)
                consume(rbuf + (size_t)block_in_order(k, np) * nd, nd, o.passes, acc);
        }
        double t1 = bench_now();
        cycle[it] = t1 - t0;
        rate[it] = t1 > c0 ? (double)total / (t1 - c0) : 0;
        curc[it] = c0 - ret;
        bench_times_put(&times, it, ret - t0, t1 - t0);
        if (check_ok && !received_ok(rbuf, nd, np, rank, it)) {
            fprintf(stderr, "ordinary: rank %d: iteration %ld received wrong data\n", rank, it);
            check_ok = 0;
        }
    }

    /* The slowest rank's cycle per iteration; each rank's median rate. */
    double *slowest = bench_alloc(sizeof(double) * (size_t)o.iters);
    MPI_Reduce(cycle, slowest, (int)o.iters, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    enum { NV = 5 };
    double mine[NV] = { median(rate + 1, o.head - 1), median(rate + o.head, o.iters - o.head),
                        median(curc + 1, o.head - 1), median(curc + o.head, o.iters - o.head),
                        acc[0] + acc[1] + acc[2] + acc[3] };
    double *all = bench_alloc(sizeof(double) * NV * (size_t)np);
    MPI_Gather(mine, NV, MPI_DOUBLE, all, NV, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        double *col = bench_alloc(sizeof(double) * (size_t)np), med[NV - 1], checksum = 0;
        for (int v = 0; v < NV - 1; v++) {      /* the median rank's */
            for (int r = 0; r < np; r++)
                col[r] = all[NV * r + v];
            med[v] = median(col, np);
        }
        for (int r = 0; r < np; r++)   /* rank order: the same sum every run */
            checksum += all[NV * r + NV - 1];
        printf("ORDINARY block=%ld aligned=%d np=%d iters=%ld head=%ld cycle_head=%.6f "
               "cycle_rest=%.6f rate_head=%.4e rate_rest=%.4e curc_head=%.6f curc_rest=%.6f "
               "checksum=%.17g\n",
               o.block, o.aligned, np, o.iters, o.head, median(slowest + 1, o.head - 1),
               median(slowest + o.head, o.iters - o.head), med[0], med[1], med[2], med[3],
               checksum);
        free(col);
    }
    char extra[64];
    snprintf(extra, sizeof extra, "block=%ld aligned=%d", o.block, o.aligned);
    int status = bench_report("ordinary", extra, &times, check_ok, MPI_COMM_WORLD);
    bench_times_free(&times);
    free(all);
    free(slowest);
    free(curc);
    free(rate);
    free(cycle);
    free(sraw);
    free(rraw);
    MPI_Finalize();
    return status;
}
