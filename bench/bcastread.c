// SPDX-License-Identifier: BSD-3-Clause
/* Bcast kernel: the root broadcasts --bytes with MPI_Bcast; every rank then
 * consumes the buffer as --chunks equal chunks in a fixed non-trivial order
 * (--order, default 3,1,2,0), spending --crc-us of work (CPU time) in total
 * on them after --tcurc-us of unrelated work. --variant ibcast is the hand-written MPI-3
 * version (MPI_Ibcast, the unrelated work with MPI_Test, MPI_Wait).
 * Checked: every chunk holds what the root wrote. */
#include "bench_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_request(void *arg)
{
    int flag;
    MPI_Test(arg, &flag, MPI_STATUS_IGNORE);
}

static uint64_t chunk_sum(const uint64_t *w, size_t n)
{
    uint64_t s = 0;
    for (size_t i = 0; i < n; i++)
        s += w[i];
    return s;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, np;
    struct bench_common c = { .iters = 5, .warmup = 1 };
    long bytes = 4L << 20, chunks = 4, root = 0;
    double tcurc_us = 0, crc_us = 0;
    const char *order_spec = "3,1,2,0", *variant = "plain";
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    for (int i = 1; i < argc; i++) {
        if (bench_common_arg(argc, argv, &i, &c))
            continue;
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) bench_usage_error("%s needs a value", a);
        if (!strcmp(a, "--bytes")) bytes = bench_parse_long(a, v, 8, 1L << 30);
        else if (!strcmp(a, "--chunks")) chunks = bench_parse_long(a, v, 1, 4096);
        else if (!strcmp(a, "--root")) root = bench_parse_long(a, v, 0, np - 1);
        else if (!strcmp(a, "--tcurc-us")) tcurc_us = bench_parse_double(a, v, 0, 1e9);
        else if (!strcmp(a, "--crc-us")) crc_us = bench_parse_double(a, v, 0, 1e9);
        else if (!strcmp(a, "--order")) order_spec = v;
        else if (!strcmp(a, "--variant")) variant = v;
        else bench_usage_error("usage: bcastread [--bytes B] [--chunks M] [--order LIST] [--root R] "
                               "[--tcurc-us US] [--crc-us US] [--variant plain|ibcast] "
                               "[--iters N] [--warmup N] [--corrupt]");
        i++;
    }
    if (bytes % (8 * chunks))
        bench_usage_error("--bytes must be a multiple of 8 * --chunks, got %ld", bytes);
    if (strcmp(variant, "plain") && strcmp(variant, "ibcast"))
        bench_usage_error("--variant must be plain or ibcast, got '%s'", variant);
    int *order = bench_alloc(sizeof(int) * (size_t)chunks);
    char err[160];
    if (bench_order(order_spec, (int)chunks, order, err, sizeof err))
        bench_usage_error("%s", err);

    size_t words = (size_t)bytes / 8, cw = words / (size_t)chunks;
    uint64_t *buf = bench_alloc((size_t)bytes), *sums = bench_alloc(sizeof(uint64_t) * (size_t)chunks);
    struct bench_times t = bench_times_new(c.iters);
    int ok = 1, ib = !strcmp(variant, "ibcast");
    for (long it = -c.warmup; it < c.iters; it++) {
        if (rank == root)
            for (size_t i = 0; i < words; i++)
                buf[i] = bench_pattern((uint64_t)it, 5, i);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = bench_now(), coll;
        if (ib) {
            MPI_Request req;
            MPI_Ibcast(buf, (int)bytes, MPI_BYTE, (int)root, MPI_COMM_WORLD, &req);
            coll = bench_now() - t0;
            bench_busy_us(tcurc_us, test_request, &req, 100);
            double w0 = bench_now();
            MPI_Wait(&req, MPI_STATUS_IGNORE);
            coll += bench_now() - w0;
        } else {
            MPI_Bcast(buf, (int)bytes, MPI_BYTE, (int)root, MPI_COMM_WORLD);
            coll = bench_now() - t0;
            bench_busy_us(tcurc_us, NULL, NULL, 0);
        }
        if (c.corrupt && it == 0 && rank == np - 1)
            buf[(size_t)order[0] * cw] ^= 1u << 5;
        for (long k = 0; k < chunks; k++) {
            /* The chunk's work whatever its read cost (a wait, an observer's
             * faults: the reading's time, not the work's; microbench.c). */
            sums[order[k]] = chunk_sum(buf + (size_t)order[k] * cw, cw);
            bench_busy_us(crc_us / (double)chunks, NULL, NULL, 0);
        }
        double t1 = bench_now();
        for (long c = 0; c < chunks; c++) { /* untimed check */
            uint64_t want = 0;
            for (size_t i = (size_t)c * cw; i < (size_t)(c + 1) * cw; i++) {
                uint64_t v = bench_pattern((uint64_t)it, 5, i);
                want += v;
                ok &= buf[i] == v;
            }
            ok &= sums[c] == want;
        }
        bench_times_put(&t, it, coll, t1 - t0);
    }
    char extra[192];
    snprintf(extra, sizeof extra, "variant=%s bytes=%ld chunks=%ld order=%s tcurc_us=%.0f crc_us=%.0f",
             variant, bytes, chunks, order_spec, tcurc_us, crc_us);
    int rc = bench_report("bcastread", extra, &t, ok, MPI_COMM_WORLD);
    if (!ok)
        fprintf(stderr, "bcastread: rank %d: broadcast data differs from the root's\n", rank);
    free(buf); free(sums); free(order);
    bench_times_free(&t);
    MPI_Finalize();
    return rc;
}
