// SPDX-License-Identifier: BSD-3-Clause
/* Cost of tnbc_guard_memory_ok on memory the cached map has not seen,
 * asked per range (PROCMAP_QUERY, Linux 6.11+) and by reading the whole
 * of /proc/self/maps, in an MPI process (MPI's own mappings make the
 * table long). Each round maps a fresh 4 MiB range and keeps every other
 * one, so the ranges are new and the map grows; the table is not told
 * (as with glibc's own mmap of a large block). Prints, per way, how many
 * times the kernel was asked and the mean time per ask. */
#include "clock.h"
#include "guard.h"

#include <mpi.h>
#include <stdio.h>
#include <sys/mman.h>
#include <time.h>

enum { ROUNDS = 200, BYTES = 4 << 20 };

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int map_lines(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    int n = 0;
    char line[512];
    while (f && fgets(line, sizeof line, f))
        n++;
    if (f)
        fclose(f);
    return n;
}

static int rounds(int query)
{
    const char *why;
    double spent = 0;
    unsigned asked = tnbc_guard_maps_reads();
    tnbc_guard_maps_use_query(query);
    for (int i = 0; i < ROUNDS; i++) {
        char *p = mmap(NULL, BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            return -1;
        double t0 = now_us();
        int ok = tnbc_guard_memory_ok((uintptr_t)p, (uintptr_t)p + BYTES, &why);
        spent += now_us() - t0;
        if (!ok) {
            fprintf(stderr, "maps_query: fresh private memory refused: %s\n", why);
            return -1;
        }
        if (i % 2)
            munmap(p, BYTES);
    }
    asked = tnbc_guard_maps_reads() - asked;
    printf("%s: kernel asked %u times in %d checks of a fresh 4 MiB range, %.1f us per ask, "
           "%d mappings at the end%s\n",
           query ? "per range" : "whole map", asked, ROUNDS, asked ? spent / asked : 0.0, map_lines(),
           query && !tnbc_guard_maps_query() ? " (kernel before 6.11: whole map)" : "");
    return 0;
}

int main(int argc, char **argv)
{
    const char *why;
    MPI_Init(&argc, &argv);
    tnbc_clock_init();
    (void)tnbc_guard_memory_ok(1 << 20, 2 << 20, &why);   /* the first, whole read */
    int rc = rounds(1) || rounds(0);
    MPI_Finalize();
    return rc ? 1 : 0;
}
