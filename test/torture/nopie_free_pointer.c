// SPDX-License-Identifier: BSD-3-Clause
/* A non-PIE executable that keeps malloc and free in a table of function
 * pointers, as Python's allocator does: the executable then holds
 * canonical PLT entries for them, which dlsym(RTLD_DEFAULT, "free")
 * returns although every call reaches tnbc's free. tnbc must not take
 * that for a program defining free() itself (own_alloc.c): the calls go
 * early, and buffers freed through the table right after the call are
 * released as through free(). Built with -no-pie (test/module.mk). */
#include "tt.h"

struct allocator {
    void *(*alloc)(size_t);
    void (*release)(void *);
};
static struct allocator mem;

#define BLK (1 << 20)

int main(int argc, char **argv)
{
    tt_init(&argc, &argv);
    mem.alloc = malloc;              /* addresses taken in code: canonical PLT entries */
    mem.release = free;
    size_t n = (size_t)BLK * (size_t)tt_size;
    for (int it = 0; it < 6; it++) {
        char *s = mem.alloc(n), *r = mem.alloc(n + 100);
        for (size_t i = 0; i < n; i++)
            s[i] = (char)(i * 7 + (size_t)tt_rank + (size_t)it);
        MPI_Alltoall(s, BLK, MPI_CHAR, r + 100, BLK, MPI_CHAR, MPI_COMM_WORLD);
        uint64_t h = tt_hash(r + 100 + (size_t)(tt_size - 1) * BLK, BLK);   /* the last block only */
        mem.release(r);                  /* the rest freed unread */
        mem.release(s);
        char *z = mem.alloc(n + 100);    /* often the same memory */
        memset(z, 'z', n + 100);
        size_t bad = 0;
        for (size_t i = 0; i < n + 100; i++)
            bad += z[i] != 'z';
        tt_out("rank %d it %d %016llx bad %zu\n", tt_rank, it, (unsigned long long)h, bad);
        mem.release(z);
    }
    tt_finish();
    return 0;
}
