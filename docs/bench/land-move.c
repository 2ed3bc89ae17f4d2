// SPDX-License-Identifier: BSD-3-Clause
/* Landing by moving the pages aside, against /proc/self/mem (docs/replay.md,
 * "Landing"): per round, a receive range of n bytes is closed, landed in
 * 32 KiB pieces and opened piece by piece, both ways in turn:
 *   procmem: PROT_NONE, each piece written through /proc/self/mem, then
 *            its pages opened with mprotect (what libreplay does);
 *   move:    PROT_NONE, the pages moved aside with mremap(MREMAP_DONTUNMAP)
 *            and made writable there, each piece memcpy'd in and its pages
 *            moved back with mremap(MREMAP_FIXED).
 * Prints, per way, the close ("arm"), the landing and the opening in us.
 * Not part of the build:
 *   cc -O2 -o land-move docs/bench/land-move.c && ./land-move 1048576 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#define MREMAP_DONTUNMAP 4
static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}
int main(int argc, char **argv) {
    size_t ps = 4096, n = argc > 1 ? atol(argv[1]) : 1 << 20, piece = 32768;
    char *buf = malloc(n + 2 * ps);
    char *a = (char *)(((unsigned long)buf + ps - 1) & ~(ps - 1));
    memset(buf, 7, n + 2 * ps);
    char *src = malloc(n);
    memset(src, 3, n);
    int fd = open("/proc/self/mem", O_RDWR);
    int reps = 300;
    double A[2] = {0}, L[2] = {0}, O[2] = {0};
    for (int r = 0; r < reps; r++) {
        for (int m = 0; m < 2; m++) {
            memset(src, r + m, n);
            double t0 = now();
            char *side = NULL;
            mprotect(a, n, PROT_NONE);
            if (m) {
                side = mremap(a, n, n, MREMAP_MAYMOVE | MREMAP_DONTUNMAP);
                if (side == MAP_FAILED) {
                    perror("mremap");
                    return 1;
                }
                mprotect(side, n, PROT_READ | PROT_WRITE);
            }
            double t1 = now();
            for (size_t off = 0; off < n; off += piece) {
                if (m)
                    memcpy(side + off, src + off, piece);
                else if (pwrite(fd, src + off, piece, (off_t)(unsigned long)(a + off)) !=
                         (ssize_t)piece) {
                    perror("pw");
                    return 1;
                }
            }
            double t2 = now();
            for (size_t off = 0; off < n; off += piece) {
                if (m) {
                    if (mremap(side + off, piece, piece, MREMAP_MAYMOVE | MREMAP_FIXED, a + off) ==
                        MAP_FAILED) {
                        perror("back");
                        return 1;
                    }
                } else
                    mprotect(a + off, piece, PROT_READ | PROT_WRITE);
            }
            double t3 = now();
            if (a[0] != (char)(r + m) || a[n - 1] != (char)(r + m)) {
                printf("bad\n");
                return 1;
            }
            A[m] += t1 - t0;
            L[m] += t2 - t1;
            O[m] += t3 - t2;
        }
    }
    for (int m = 0; m < 2; m++)
        printf("%s n=%zu: arm %.1f land %.1f (%.2f GB/s) open %.1f total %.1f us\n",
               m ? "move   " : "procmem", n, A[m] / reps * 1e6, L[m] / reps * 1e6,
               n / (L[m] / reps) / 1e9, O[m] / reps * 1e6, (A[m] + L[m] + O[m]) / reps * 1e6);
    /* memcpy reference into open pages */
    double t0 = now();
    for (int r = 0; r < reps; r++) {
        memset(src, r, 1);
        memcpy(a, src, n);
    }
    printf("memcpy %.2f GB/s\n", n / ((now() - t0) / reps) / 1e9);
    return 0;
}
