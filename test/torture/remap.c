// SPDX-License-Identifier: BSD-3-Clause
/* Own case: memory games right after the call: mremap moves the received
 * buffer (to grow it), munmap + mmap at the same address, and a buffer
 * handed back with free() and allocated again at once. */
#include "tt.h"
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    tt_init(&argc, &argv);
    size_t ps = (size_t)sysconf(_SC_PAGESIZE), bytes = 32 * ps;
    int n = (int)(bytes / sizeof(int)), per = n / tt_size;
    int *s = malloc(bytes);
    for (int it = 0; it < 3; it++) {
        int *t = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        for (int i = 0; i < n; i++)
            s[i] = tt_rank * 31 + it * 1000 + i;
        MPI_Alltoall(s, per, MPI_INT, t, per, MPI_INT, MPI_COMM_WORLD);
        int *m = mremap(t, bytes, 4 * bytes, MREMAP_MAYMOVE);
        if (m == MAP_FAILED)
            perror("mremap");
        tt_out("rank %d it %d mremap %016llx\n", tt_rank, it,
               m == MAP_FAILED ? 0ULL : (unsigned long long)tt_hash(m, (size_t)per * tt_size * sizeof(int)));
        if (m != MAP_FAILED)
            munmap(m, 4 * bytes);

        t = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        MPI_Alltoall(s, per, MPI_INT, t, per, MPI_INT, MPI_COMM_WORLD);
        munmap(t, bytes);
        int *again = mmap(t, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
        for (int i = 0; i < n; i++)
            again[i] = -i;
        for (volatile int spin = 0; spin < 200000; spin++)
            ;
        tt_out("rank %d it %d remapped %016llx\n", tt_rank, it,
               (unsigned long long)tt_hash(again, bytes));
        munmap(again, bytes);

        int *h = malloc(bytes);
        MPI_Alltoall(s, per, MPI_INT, h, per, MPI_INT, MPI_COMM_WORLD);
        free(h);
        int *h2 = malloc(bytes);
        for (int i = 0; i < n; i++)
            h2[i] = i * 3;
        for (volatile int spin = 0; spin < 200000; spin++)
            ;
        tt_out("rank %d it %d realloced %016llx\n", tt_rank, it,
               (unsigned long long)tt_hash(h2, bytes));
        free(h2);

        int *g = malloc(bytes);         /* realloc'ed (moved) right after the call */
        MPI_Alltoall(s, per, MPI_INT, g, per, MPI_INT, MPI_COMM_WORLD);
        g = realloc(g, 8 * bytes);
        tt_out("rank %d it %d grown %016llx\n", tt_rank, it,
               (unsigned long long)tt_hash(g, (size_t)per * tt_size * sizeof(int)));
        free(g);
    }
    tt_finish();
    return 0;
}
