// SPDX-License-Identifier: BSD-3-Clause
/*
 * b_putget.c - 8-byte put message rate and put/get latency, 8 B to 1 MiB.
 * Written against the standard OpenSHMEM API only, so the same source is
 * built with tnbc-oshcc and with Open MPI's oshcc and compared in one run.
 *
 * The active PE is the last one and the target PE 0 (with 2 PEs: 1 -> 0).
 *   rate:  W non-blocking 8-byte puts then shmem_quiet, repeated
 *   put:   shmem_putmem + shmem_quiet (time to remote completion)
 *   get:   blocking shmem_getmem
 * Output: one line per measurement: "<impl> <what> <bytes> <value> <unit>".
 */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAXB (1 << 20)
#define WINDOW 4096

static const size_t sizes[] = {8, 64, 512, 4096, 32768, 262144, MAXB};
#define NSIZES (int)(sizeof sizes / sizeof sizes[0])

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes(), act = n - 1, tgt = 0;
    const char *impl = argc > 1 ? argv[1] : "shmem";
    double secs = argc > 2 ? atof(argv[2]) : 0.5;
    char *heap = shmem_malloc(MAXB);
    long *slots = shmem_malloc(WINDOW * sizeof(long));
    char *local = malloc(MAXB);
    memset(local, 1, MAXB);
    shmem_barrier_all();
    if (me == act && n > 1) {
        /* message rate: as many windows as fit in secs */
        long v = 42, done = 0;
        double t0 = now(), t;
        do {
            for (int i = 0; i < WINDOW; i++)
                shmem_long_put_nbi(&slots[i], &v, 1, tgt);
            shmem_quiet();
            done += WINDOW;
        } while ((t = now() - t0) < secs);
        printf("%s put_nbi_rate 8 %.2f Mmsg/s\n", impl, done / t / 1e6);
        done = 0;
        t0 = now();
        do {
            for (int i = 0; i < WINDOW; i++)
                shmem_long_p(&slots[i], v, tgt);
            shmem_quiet();
            done += WINDOW;
        } while ((t = now() - t0) < secs);
        printf("%s p_rate 8 %.2f Mmsg/s\n", impl, done / t / 1e6);
        for (int op = 0; op < 2; op++)
            for (int si = 0; si < NSIZES; si++) {
                size_t b = sizes[si];
                long iters = b >= 65536 ? 200 : 2000;
                for (int warm = 0; warm < 10; warm++)
                    shmem_getmem(local, heap, b, tgt);
                t0 = now();
                for (long i = 0; i < iters; i++) {
                    if (op == 0) {
                        shmem_putmem(heap, local, b, tgt);
                        shmem_quiet();
                    } else {
                        shmem_getmem(local, heap, b, tgt);
                    }
                }
                t = now() - t0;
                printf("%s %s_latency %zu %.2f us\n", impl, op ? "get" : "put", b,
                       t / iters * 1e6);
            }
        fflush(stdout);
    }
    shmem_barrier_all();
    shmem_free(heap);
    shmem_free(slots);
    free(local);
    shmem_finalize();
    return 0;
}
