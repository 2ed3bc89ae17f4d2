// SPDX-License-Identifier: BSD-3-Clause
/* Own case: a receive type at MPI_BOTTOM whose bytes lie in two arrays
 * far apart, as a code that sends a header and a field together in one
 * struct of absolute addresses does. What lies between the two arrays is
 * not the call's: here the program's own scratch memory, filled by read()
 * right after each call (guarded, the kernel answered EFAULT), in user
 * programs malloc's heap and MPI's and tnbc's own memory (guarded, the
 * trace faulted inside malloc and crashed; a copy of the whole footprint
 * read unmapped memory). A bcast whose root moves from rank to rank (the
 * root's side is the send side, the others' the receive side), read back
 * to front and checked against a pattern the program computes itself. */
#include "tt.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#define HDR 64                  /* longs of header */
#define FIELD 300000            /* longs of field */
#define SCRATCH (4L << 20)      /* bytes of the program's own between them */

static long expect(int from, long i, int it) { return from * 10000000L + i * 3 + it; }

int main(int argc, char **argv)
{
    tt_init(&argc, &argv);
    size_t hdr_bytes = HDR * sizeof(long), field_bytes = FIELD * sizeof(long);
    char *m = mmap(NULL, hdr_bytes + SCRATCH + field_bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    int zero = open("/dev/zero", O_RDONLY);
    if (m == MAP_FAILED || zero < 0)
        MPI_Abort(MPI_COMM_WORLD, 1);
    long *hdr = (long *)m, *field = (long *)(m + hdr_bytes + SCRATCH);
    char *scratch = m + hdr_bytes;
    MPI_Aint at[2];
    int lens[2] = { HDR, FIELD };
    MPI_Datatype types[2] = { MPI_LONG, MPI_LONG }, both;
    MPI_Get_address(hdr, &at[0]);
    MPI_Get_address(field, &at[1]);
    MPI_Type_create_struct(2, lens, at, types, &both);
    MPI_Type_commit(&both);
    long bad = 0, short_reads = 0;
    uint64_t h = 0;
    for (int it = 0; it < 16; it++) {
        int root = it % tt_size;
        if (tt_rank == root)
            for (long i = 0; i < HDR + FIELD; i++)
                *(i < HDR ? &hdr[i] : &field[i - HDR]) = expect(root, i, it);
        memset(scratch, 1, SCRATCH);
        MPI_Bcast(MPI_BOTTOM, 1, both, root, MPI_COMM_WORLD);
        short_reads += read(zero, scratch + SCRATCH / 2, SCRATCH / 4) != SCRATCH / 4;
        for (long i = HDR + FIELD - 1; i >= 0; i--)
            bad += (i < HDR ? hdr[i] : field[i - HDR]) != expect(root, i, it);
        h ^= tt_hash(m, hdr_bytes + SCRATCH + field_bytes);
    }
    MPI_Type_free(&both);
    close(zero);
    tt_out("rank %d: bad %ld short reads %ld hash %016llx\n", tt_rank, bad, short_reads,
           (unsigned long long)h);
    munmap(m, hdr_bytes + SCRATCH + field_bytes);
    tt_finish();
    return 0;
}
