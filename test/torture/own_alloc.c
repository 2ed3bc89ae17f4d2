// SPDX-License-Identifier: BSD-3-Clause
/* A program that defines malloc, free, calloc and realloc itself (as one
 * with an allocator linked into it does; here they forward to the C
 * library's entry points). Its free() is the process's, not tnbc's: a
 * receive buffer freed right after the call, or the send buffer, is handed
 * back without tnbc seeing it, and the C library may unmap it (a 4 MiB
 * block is mmap'd) while data is still being landed into it or sent from
 * it. Replay must notice and run every call blocking, saying why. Each
 * iteration frees both buffers at once and mallocs and writes a buffer of
 * the same size (often the same memory), which must keep what was written. */
#include "tt.h"

extern void *__libc_malloc(size_t);
extern void __libc_free(void *);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
void *malloc(size_t n) { return __libc_malloc(n); }
void free(void *p) { __libc_free(p); }
void *calloc(size_t a, size_t b) { return __libc_calloc(a, b); }
void *realloc(void *p, size_t n) { return __libc_realloc(p, n); }

#define BLK (2 << 20)

int main(int argc, char **argv)
{
    tt_init(&argc, &argv);
    size_t n = (size_t)BLK * (size_t)tt_size;
    for (int it = 0; it < 6; it++) {
        char *s = malloc(n), *r = malloc(n);
        for (size_t i = 0; i < n; i++)
            s[i] = (char)(i * 3 + (size_t)tt_rank + (size_t)it);
        MPI_Alltoall(s, BLK, MPI_CHAR, r, BLK, MPI_CHAR, MPI_COMM_WORLD);
        uint64_t h = tt_hash(r, it & 1 ? n : 4096);   /* all of it, or its first page */
        free(r);
        free(s);
        char *z = malloc(n);
        memset(z, 'z', n);
        size_t bad = 0;
        for (int pass = 0; pass < 4; pass++)           /* a while later, still 'z' */
            for (size_t i = (size_t)pass; i < n; i += 4)
                bad += z[i] != 'z';
        tt_out("rank %d it %d %016llx bad %zu\n", tt_rank, it, (unsigned long long)h, bad);
        free(z);
    }
    tt_finish();
    return 0;
}
