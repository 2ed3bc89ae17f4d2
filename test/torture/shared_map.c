// SPDX-License-Identifier: BSD-3-Clause
/* Case 6: receive buffers in shared mappings: a MAP_SHARED file, a shared
 * anonymous mapping and an MPI_Win_allocate_shared window. */
#include "tt.h"
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    tt_init(&argc, &argv);
    size_t ps = (size_t)sysconf(_SC_PAGESIZE), bytes = 32 * ps;
    int n = (int)(bytes / sizeof(int)), per = n / tt_size;
    FILE *f = tmpfile();
    if (!f || ftruncate(fileno(f), (off_t)bytes) != 0)
        MPI_Abort(MPI_COMM_WORLD, 1);
    int *file = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fileno(f), 0);
    int *anon = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int *win_mem;
    MPI_Win win;
    MPI_Win_allocate_shared((MPI_Aint)bytes, 1, MPI_INFO_NULL, node, &win_mem, &win);
    int *s = malloc(bytes);
    int *bufs[3] = { file, anon, win_mem };
    for (int it = 0; it < 3; it++) {
        for (int b = 0; b < 3; b++) {
            for (int i = 0; i < n; i++)
                s[i] = tt_rank * 13 + it * 100 + b + i;
            MPI_Alltoall(s, per, MPI_INT, bufs[b], per, MPI_INT, MPI_COMM_WORLD);
            tt_out("rank %d it %d buf %d %016llx\n", tt_rank, it, b,
                   (unsigned long long)tt_hash(bufs[b], (size_t)per * tt_size * sizeof(int)));
            for (int i = 0; i < n; i++)
                s[i] = tt_rank == 0 ? it + b + i : 0;
            if (tt_rank == 0)
                memcpy(bufs[b], s, bytes);
            MPI_Bcast(bufs[b], n, MPI_INT, 0, MPI_COMM_WORLD);
            tt_out("rank %d it %d bcast %d %016llx\n", tt_rank, it, b,
                   (unsigned long long)tt_hash(bufs[b], bytes));
        }
    }
    MPI_Win_free(&win);
    MPI_Comm_free(&node);
    tt_finish();
    return 0;
}
