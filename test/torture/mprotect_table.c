// SPDX-License-Identifier: BSD-3-Clause
/* Case 5: the program makes the received table read-only with mprotect
 * right after the call, then reads it; later it makes it writable again,
 * and also maps fresh memory over part of it (MAP_FIXED) and discards
 * another part with madvise(MADV_DONTNEED). */
#include "tt.h"
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    tt_init(&argc, &argv);
    size_t ps = (size_t)sysconf(_SC_PAGESIZE), bytes = 64 * ps;
    int n = (int)(bytes / sizeof(int)), per = n / tt_size;
    int *s = malloc(bytes);
    int *t = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    for (int it = 0; it < 4; it++) {
        for (int i = 0; i < n; i++)
            s[i] = tt_rank * 7 + it * 1000 + i;
        MPI_Alltoall(s, per, MPI_INT, t, per, MPI_INT, MPI_COMM_WORLD);
        switch (it) {
        case 0: case 1:
            mprotect(t, bytes, PROT_READ);
            tt_out("rank %d it %d ro %016llx\n", tt_rank, it,
                   (unsigned long long)tt_hash(t, (size_t)per * tt_size * sizeof(int)));
            mprotect(t, bytes, PROT_READ | PROT_WRITE);
            break;
        case 2:   /* the first half discarded: reads as zeros */
            madvise(t, bytes / 2, MADV_DONTNEED);
            tt_out("rank %d it %d dontneed %016llx\n", tt_rank, it,
                   (unsigned long long)tt_hash(t, (size_t)per * tt_size * sizeof(int)));
            break;
        case 3:   /* fresh zero pages over the second half */
            mmap((char *)t + bytes / 2, bytes / 2, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
            tt_out("rank %d it %d fixed %016llx\n", tt_rank, it,
                   (unsigned long long)tt_hash(t, (size_t)per * tt_size * sizeof(int)));
            break;
        }
    }
    tt_finish();
    return 0;
}
