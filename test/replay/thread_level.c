// SPDX-License-Identifier: BSD-3-Clause
/* A plain MPI program that asks for MPI_THREAD_FUNNELED and exchanges
 * blocks with MPI_Alltoall in a loop (used by test/replay.sh, "no cost when
 * off"). With "report" as the second argument, rank 0 also prints the
 * thread level MPI granted and whether a thread named tnbc-progress runs in
 * the process, read from /proc/self/task after the loop.
 * Usage: thread_level ITERATIONS [report] */
#include <dirent.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK_INTS 65536    /* 256 KiB per peer */

static int progress_thread_running(void)
{
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    int found = 0;
    if (!d)
        return -1;
    while ((e = readdir(d)) != NULL) {
        char path[300], comm[64] = "";
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (f && fgets(comm, sizeof comm, f))
            found |= strncmp(comm, "tnbc-progress", 13) == 0;
        if (f)
            fclose(f);
    }
    closedir(d);
    return found;
}

int main(int argc, char **argv)
{
    int provided = -1, rank, size, iters = argc > 1 ? atoi(argv[1]) : 4;
    int report = argc > 2 && strcmp(argv[2], "report") == 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int *sb = malloc((size_t)size * BLOCK_INTS * sizeof *sb);
    int *rb = malloc((size_t)size * BLOCK_INTS * sizeof *rb);
    if (!sb || !rb)
        MPI_Abort(MPI_COMM_WORLD, 1);
    long long sum = 0;
    for (int it = 0; it < iters; it++) {
        for (long i = 0; i < (long)size * BLOCK_INTS; i++)
            sb[i] = (int)(rank * 1000003L + it * 7919L + i);
        MPI_Alltoall(sb, BLOCK_INTS, MPI_INT, rb, BLOCK_INTS, MPI_INT, MPI_COMM_WORLD);
        for (int k = size - 1; k >= 0; k--)          /* read the blocks backwards */
            for (long i = 0; i < BLOCK_INTS; i++)
                sum += rb[(long)k * BLOCK_INTS + i] % 977;
    }
    long long total = 0;
    MPI_Reduce(&sum, &total, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("thread_level: checksum %lld\n", total);
        if (report)
            printf("provided %s progress_thread %d\n",
                   provided == MPI_THREAD_FUNNELED ? "funneled" :
                   provided == MPI_THREAD_MULTIPLE ? "multiple" : "other",
                   progress_thread_running());
    }
    free(sb);
    free(rb);
    MPI_Finalize();
    return 0;
}
