// SPDX-License-Identifier: BSD-3-Clause
/* Own case: receive types whose blocks interleave in memory, so that one
 * source's footprint (first to last byte) spans pages that hold other
 * sources' bytes: an allgather into MPI_BOTTOM with a struct of absolute
 * addresses (two arrays, each rank's block half in each, the program's
 * own data between them), and an
 * alltoall received as columns of a matrix (a vector type resized to one
 * element: every page holds every source's bytes), once into a page-aligned
 * matrix (every column lies in the buffer's whole pages: guarded, early)
 * and once into a malloc'd one (the first and last columns reach the
 * partial end pages, and so do all the others: nothing could be guarded,
 * so tnbc runs it blocking and says why). The program reads the
 * received data at once and checks every element against a pattern it
 * computes itself. Replay once opened all of a landed source's pages but
 * its first and last, and the code read other sources' bytes there
 * before they had arrived (4 ranks). */
#include "tt.h"

#define N 20000      /* doubles per rank in each of the two arrays */
#define ROWS 512     /* matrix rows; one column per rank */
#define GAP 300      /* doubles of other data between the two arrays (less than a
                        * page: a page or more between a call's bytes is never
                        * guarded, far_struct.c) */

static double expect(int from, int i, int it) { return from * 1e6 + i * 0.5 + it; }

int main(int argc, char **argv)
{
    tt_init(&argc, &argv);
    int np = tt_size;
    /* Both arrays in one allocation, with the program's own data between
     * them (written right after the call), so that the whole footprint is
     * heap memory tnbc may guard wherever malloc puts it. */
    double *mine = malloc(2 * N * sizeof *mine);
    double *arena = malloc(((size_t)2 * np * N + GAP) * sizeof *arena);
    double *lo = arena, *gap = arena + (size_t)np * N, *hi = gap + GAP;
    MPI_Aint disp[2];
    MPI_Get_address(lo, &disp[0]);
    MPI_Get_address(hi, &disp[1]);
    int lens[2] = { N, N };
    MPI_Datatype types[2] = { MPI_DOUBLE, MPI_DOUBLE }, st, abs_t, col, cols;
    MPI_Type_create_struct(2, lens, disp, types, &st);
    MPI_Type_create_resized(st, 0, N * (MPI_Aint)sizeof(double), &abs_t);
    MPI_Type_commit(&abs_t);
    MPI_Type_vector(ROWS, 1, np, MPI_DOUBLE, &col);
    MPI_Type_create_resized(col, 0, sizeof(double), &cols);
    MPI_Type_commit(&cols);
    double *s = malloc((size_t)ROWS * np * sizeof *s), *m = malloc((size_t)ROWS * np * sizeof *m);
    double *ma = aligned_alloc(4096, (size_t)ROWS * np * sizeof *ma);
    long bad = 0;
    uint64_t h = 0;
    for (int it = 0; it < 20; it++) {
        for (int i = 0; i < 2 * N; i++)
            mine[i] = expect(tt_rank, i, it);
        MPI_Allgather(mine, 2 * N, MPI_DOUBLE, MPI_BOTTOM, 1, abs_t, MPI_COMM_WORLD);
        for (int i = 0; i < GAP; i++)        /* not received: the program's own */
            gap[i] = it + i;
        for (int r = 0; r < np; r++)
            for (int i = 0; i < N; i++)
                bad += lo[(size_t)r * N + i] != expect(r, i, it) || hi[(size_t)r * N + i] != expect(r, N + i, it);
        h ^= tt_hash(arena, ((size_t)2 * np * N + GAP) * sizeof *arena);

        for (int d = 0; d < np; d++)         /* block d: ROWS values for rank d */
            for (int i = 0; i < ROWS; i++)
                s[(size_t)d * ROWS + i] = expect(tt_rank, d * ROWS + i, it);
        MPI_Alltoall(s, ROWS, MPI_DOUBLE, ma, 1, cols, MPI_COMM_WORLD);
        MPI_Alltoall(s, ROWS, MPI_DOUBLE, m, 1, cols, MPI_COMM_WORLD);
        for (int i = 0; i < ROWS; i++)       /* row by row: every source in turn */
            for (int r = 0; r < np; r++)
                bad += m[(size_t)i * np + r] != expect(r, tt_rank * ROWS + i, it) ||
                       ma[(size_t)i * np + r] != expect(r, tt_rank * ROWS + i, it);
        h ^= tt_hash(m, (size_t)ROWS * np * sizeof *m) ^ tt_hash(ma, (size_t)ROWS * np * sizeof *ma) * 3;
    }
    tt_out("rank %d bad %ld hash %016llx\n", tt_rank, bad, (unsigned long long)h);
    MPI_Type_free(&abs_t);
    MPI_Type_free(&st);
    MPI_Type_free(&cols);
    MPI_Type_free(&col);
    free(arena);
    free(mine);
    free(s);
    free(m);
    free(ma);
    tt_finish();
    return 0;
}
