// SPDX-License-Identifier: BSD-3-Clause
/* Cost of landing received data in guarded pages (docs/replay.md).
 *
 *   land_cost [REPS]
 *
 * For buffer sizes from 4 KiB to 16 MiB: a plain memcpy into writable
 * pages (what the blocking collective's copy costs), a write through
 * /proc/self/mem into PROT_NONE pages (what libreplay does), and opening
 * the pages, copying and closing them again (fast, but it would let the
 * program see a half-written block: not an option, shown for scale). */
#include "land.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 20;
    const char *why;
    if (land_init(&why) != 0) {
        fprintf(stderr, "land_cost: %s\n", why);
        return 1;
    }
    printf("%10s %14s %14s %14s %8s\n", "bytes", "memcpy GB/s", "procmem GB/s", "mprotect GB/s", "ratio");
    for (size_t n = 4096; n <= (16u << 20); n *= 4) {
        char *src = malloc(n);
        char *dst = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        memset(src, 7, n);
        memset(dst, 1, n);
        double t0 = now();
        for (int r = 0; r < reps; r++) {
            memcpy(dst, src, n);
            __asm__ volatile("" ::: "memory");
        }
        double t_copy = (now() - t0) / reps;
        mprotect(dst, n, PROT_NONE);
        t0 = now();
        for (int r = 0; r < reps; r++)
            land(dst, src, n);
        double t_land = (now() - t0) / reps;
        t0 = now();
        for (int r = 0; r < reps; r++) {
            mprotect(dst, n, PROT_READ | PROT_WRITE);
            memcpy(dst, src, n);
            mprotect(dst, n, PROT_NONE);
        }
        double t_prot = (now() - t0) / reps;
        mprotect(dst, n, PROT_READ);
        if (memcmp(dst, src, n) != 0) {
            fprintf(stderr, "land_cost: data did not land\n");
            return 1;
        }
        printf("%10zu %14.2f %14.2f %14.2f %8.2f\n", n, n / t_copy / 1e9, n / t_land / 1e9,
               n / t_prot / 1e9, t_land / t_copy);
        munmap(dst, n);
        free(src);
    }
    return 0;
}
