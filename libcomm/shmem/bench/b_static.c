// SPDX-License-Identifier: BSD-3-Clause
/*
 * b_static.c - static (global) data against heap data, same operations:
 * 8-byte p rate and non-fetching atomic add rate (WINDOW operations then
 * shmem_quiet, repeated for SECS; clock_gettime, so each timing covers
 * thousands of operations), fetch_add latency, 8-byte put+quiet latency and
 * 64 KiB / 1 MiB get latency. Active PE n-1, target PE 0.
 * Usage: b_static [LABEL [SECS]]; one line per value: "LABEL what region value unit".
 */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WINDOW 4096
#define BIG (1 << 20)

static long s_slots[WINDOW];
static long s_counter;
static char s_big[BIG];

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void measure(const char *label, const char *region, long *slots, long *counter,
                    char *big, char *local, double secs, int tgt)
{
    long done = 0;
    double t0 = now(), t;
    do {
        for (int i = 0; i < WINDOW; i++)
            shmem_long_p(&slots[i], i, tgt);
        shmem_quiet();
        done += WINDOW;
    } while ((t = now() - t0) < secs);
    printf("%s p_rate %s %.2f Mmsg/s\n", label, region, done / t / 1e6);
    done = 0;
    t0 = now();
    do {
        for (int i = 0; i < WINDOW; i++)
            shmem_long_atomic_add(counter, 1, tgt);
        shmem_quiet();
        done += WINDOW;
    } while ((t = now() - t0) < secs);
    printf("%s add_rate %s %.2f Mops/s\n", label, region, done / t / 1e6);
    long iters = 20000;
    t0 = now();
    for (long i = 0; i < iters; i++)
        (void)shmem_long_atomic_fetch_add(counter, 1, tgt);
    printf("%s fetch_add_latency %s %.3f us\n", label, region, (now() - t0) / iters * 1e6);
    t0 = now();
    for (long i = 0; i < iters; i++) {
        shmem_putmem(slots, local, 8, tgt);
        shmem_quiet();
    }
    printf("%s put8_latency %s %.3f us\n", label, region, (now() - t0) / iters * 1e6);
    size_t sizes[2] = {65536, BIG};
    for (int k = 0; k < 2; k++) {
        iters = k ? 100 : 1000;
        shmem_getmem(local, big, sizes[k], tgt);
        t0 = now();
        for (long i = 0; i < iters; i++)
            shmem_getmem(local, big, sizes[k], tgt);
        printf("%s get%zuK_latency %s %.2f us\n", label, sizes[k] >> 10, region,
               (now() - t0) / iters * 1e6);
    }
}

int main(int argc, char **argv)
{
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    const char *label = argc > 1 ? argv[1] : "tnbc";
    double secs = argc > 2 ? atof(argv[2]) : 0.2;
    long *h_slots = shmem_malloc(WINDOW * sizeof(long));
    long *h_counter = shmem_calloc(1, sizeof(long));
    char *h_big = shmem_malloc(BIG), *local = malloc(BIG);
    memset(local, 1, BIG);
    shmem_barrier_all();
    if (me == n - 1 && n > 1) {
        measure(label, "heap", h_slots, h_counter, h_big, local, secs, 0);
        measure(label, "static", s_slots, &s_counter, s_big, local, secs, 0);
        fflush(stdout);
    }
    shmem_barrier_all();
    shmem_free(h_slots);
    shmem_free(h_counter);
    shmem_free(h_big);
    free(local);
    shmem_finalize();
    return 0;
}
