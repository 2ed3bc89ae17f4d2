// SPDX-License-Identifier: BSD-3-Clause
/* Derived datatypes on every transformed operation, in the combinations
 * that take different paths in replay (libreplay/plan_source.c): a dense
 * sender with a derived receiver, a derived (packed) sender with a dense
 * receiver, derived on both sides, blocks whose footprints interleave (a
 * matrix transpose received with a column type), and scatter with
 * different types of one size at root and receivers. (Reductions on
 * derived types run blocking: Open MPI refuses predefined operations on
 * them.)
 *
 * The vector type v3 holds 2 ints of every 3 (the third is a hole). Before
 * each call the receive buffer is all SENT; after it the program reads it
 * back to front, checks every element against the pattern (computed here,
 * not by MPI) and every hole for SENT, then writes the hole (the program
 * owns it while the call is in flight). Prints one line per operation with
 * a hash of its receive buffer, then "dtypes_ops: ok".
 * Usage: dtypes_ops [ROUNDS] (2 to 16 ranks). */
#include "ct.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define SENT (-7)
#define NV 6000          /* v3 elements per block */
#define R 64             /* transpose: rows per rank */

struct rec { int i; char gap[4]; double d; };

static long bad;
static int rank, size;

static int pat(int from, int to, long i, int round)
{
    return (int)((from * 7919L + to * 131L + i * 31 + round * 17) % 100003);
}

static void report(const char *what, const void *p, size_t n)
{
    /* Every rank's hash, in rank order, from rank 0. */
    uint64_t h = ct_hash(p, n), all[16];
    MPI_Gather(&h, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("%s", what);
        for (int r = 0; r < size; r++)
            printf(" %016llx", (unsigned long long)all[r]);
        printf("\n");
    }
}

static void fill(int *b, long n, int v)
{
    for (long i = 0; i < n; i++)
        b[i] = v;
}

/* n v3 elements at b (3n ints): element k's two ints are want(k, 0/1);
 * holes must be SENT, and are then written. Read back to front. */
static void check_v3(int *b, long n, int (*want)(long k, int j, void *), void *arg)
{
    for (long i = 3 * n - 1; i >= 0; i--) {
        if (i % 3 == 2) {
            bad += b[i] != SENT;
            b[i] = 1;
        } else {
            bad += b[i] != want(i / 3, (int)(i % 3), arg);
        }
    }
}

struct blocks { int round, per; };   /* per: v3 elements per source block */

/* Element k of a buffer of per-source blocks of `per` elements: block
 * k / per came from rank k / per, whose send pattern is pat(src, me, .). */
static int from_blocks(long k, int j, void *arg)
{
    struct blocks *b = arg;
    int src = (int)(k / b->per);
    return pat(src, rank, 2 * (k % b->per) + j, b->round);
}

static int from_allgather(long k, int j, void *arg)
{
    struct blocks *b = arg;
    return pat((int)(k / b->per), 0, 2 * (k % b->per) + j, b->round);
}

/* The send side: n v3 elements (or 2n ints, dense) of pat(me, to, .). */
static void put_v3(int *b, long n, int to, int round)
{
    for (long i = 0; i < 3 * n; i++)
        b[i] = i % 3 == 2 ? -1000 : pat(rank, to, 2 * (i / 3) + i % 3, round);
}

static void put_dense(int *b, long n2, int to, int round)
{
    for (long i = 0; i < n2; i++)
        b[i] = pat(rank, to, i, round);
}

/* alltoall: dense ints -> v3; v3 (packed) -> dense ints; v3 -> v3. */
static void alltoalls(MPI_Datatype v3, int round)
{
    long per = NV;
    int *s = malloc((size_t)size * 3 * per * sizeof *s), *r = malloc((size_t)size * 3 * per * sizeof *r);
    struct blocks bl = { round, (int)per };
    /* dense -> v3 */
    for (int d = 0; d < size; d++)
        put_dense(s + d * 2 * per, 2 * per, d, round);
    fill(r, size * 3 * per, SENT);
    MPI_Alltoall(s, (int)(2 * per), MPI_INT, r, (int)per, v3, MPI_COMM_WORLD);
    check_v3(r, size * per, from_blocks, &bl);
    report("alltoall int->v3", r, (size_t)size * 3 * per * sizeof *r);
    /* v3 -> dense */
    for (int d = 0; d < size; d++)
        put_v3(s + d * 3 * per, per, d, round);
    fill(r, size * 2 * per, SENT);
    MPI_Alltoall(s, (int)per, v3, r, (int)(2 * per), MPI_INT, MPI_COMM_WORLD);
    for (long i = size * 2 * per - 1; i >= 0; i--)
        bad += r[i] != pat((int)(i / (2 * per)), rank, i % (2 * per), round);
    report("alltoall v3->int", r, (size_t)size * 2 * per * sizeof *r);
    /* v3 -> v3 */
    fill(r, size * 3 * per, SENT);
    MPI_Alltoall(s, (int)per, v3, r, (int)per, v3, MPI_COMM_WORLD);
    check_v3(r, size * per, from_blocks, &bl);
    report("alltoall v3->v3", r, (size_t)size * 3 * per * sizeof *r);
    free(s);
    free(r);
}

/* alltoallv of a struct type (int, hole, double): rank d gets 500 + 100 d
 * records from every rank, at displacements with a gap of 7 records. */
static void alltoallv_struct(MPI_Datatype rec_t, int round)
{
    int sc[16], sd[16], rc[16], rd[16], ns = 0, nr = 0;
    for (int k = 0; k < size; k++) {
        sc[k] = 500 + 100 * k;
        sd[k] = ns;
        ns += sc[k] + 7;
        rc[k] = 500 + 100 * rank;
        rd[k] = nr;
        nr += rc[k] + 7;
    }
    struct rec *s = malloc((size_t)ns * sizeof *s), *r = malloc((size_t)nr * sizeof *r);
    for (int k = 0; k < size; k++)
        for (int i = 0; i < sc[k]; i++) {
            s[sd[k] + i].i = pat(rank, k, i, round);
            s[sd[k] + i].d = pat(rank, k, i, round) / 4.0;
        }
    memset(r, 0x5a, (size_t)nr * sizeof *r);
    MPI_Alltoallv(s, sc, sd, rec_t, r, rc, rd, rec_t, MPI_COMM_WORLD);
    unsigned char hole[sizeof(struct rec)];
    memset(hole, 0x5a, sizeof hole);
    for (int k = size - 1; k >= 0; k--)
        for (int i = rc[k] + 6; i >= 0; i--) {
            struct rec *x = &r[rd[k] + i];
            if (i >= rc[k]) {                   /* the gap between blocks */
                bad += memcmp(x, hole, sizeof *x) != 0;
                continue;
            }
            bad += x->i != pat(k, rank, i, round) || x->d != pat(k, rank, i, round) / 4.0 ||
                   memcmp(x->gap, hole, sizeof x->gap) != 0;
            x->gap[0] = 1;
        }
    report("alltoallv struct", r, (size_t)nr * sizeof *r);
    free(s);
    free(r);
}

/* A transpose: each rank holds R rows of an R x (size R) int matrix and
 * sends block d (its R columns) to rank d with a column-block type; the
 * receiver puts the block from s as R columns of its rows with the same
 * type, so every block's footprint spans nearly the whole buffer. The
 * matrix starts on a page (R x n ints are whole pages), so every block
 * lies in whole pages and replay guards them all; malloc'd, every block
 * would reach the partial first page and the call would run blocking
 * (nothing to guard; torture case interleaved_types). */
static void transpose(MPI_Datatype cols, int round)
{
    long n = (long)size * R;
    size_t rbytes = ((size_t)(R * n + 1) * sizeof(int) + 4095) & ~(size_t)4095;
    int *s = malloc((size_t)(R * n) * sizeof *s), *r = aligned_alloc(4096, rbytes);
    for (long i = 0; i < R; i++)
        for (long j = 0; j < n; j++)
            s[i * n + j] = pat(rank, 0, i * n + j, round);
    fill(r, R * n + 1, SENT);
    MPI_Alltoall(s, 1, cols, r, 1, cols, MPI_COMM_WORLD);
    bad += r[R * n] != SENT;          /* the byte after the buffer */
    /* r[i][src R + j] = s_src[i][rank R + j] */
    for (long i = R - 1; i >= 0; i--)
        for (long j = n - 1; j >= 0; j--) {
            int src = (int)(j / R);
            bad += r[i * n + j] != pat(src, 0, i * n + rank * R + j % R, round);
        }
    report("alltoall transpose", r, (size_t)(R * n) * sizeof *r);
    free(s);
    free(r);
}

static void gathers(MPI_Datatype v3, MPI_Datatype c2, int round)
{
    long per = NV;
    int *s = malloc((size_t)3 * per * sizeof *s), *r = malloc((size_t)size * 3 * per * sizeof *r);
    struct blocks bl = { round, (int)per };
    /* allgather v3 -> v3 */
    put_v3(s, per, 0, round);
    fill(r, size * 3 * per, SENT);
    MPI_Allgather(s, (int)per, v3, r, (int)per, v3, MPI_COMM_WORLD);
    check_v3(r, size * per, from_allgather, &bl);
    report("allgather v3", r, (size_t)size * 3 * per * sizeof *r);
    /* gatherv c2 -> v3 at root 1, blocks in reverse order */
    int root = 1 % size, counts[16], displs[16];
    for (int k = 0; k < size; k++) {
        counts[k] = (int)per;
        displs[k] = (int)((size - 1 - k) * per);
    }
    put_dense(s, 2 * per, 0, round);
    fill(r, size * 3 * per, SENT);
    MPI_Gatherv(s, (int)per, c2, r, counts, displs, v3, root, MPI_COMM_WORLD);
    if (rank == root) {
        for (long i = 3 * size * per - 1; i >= 0; i--) {
            long k = i / 3, blk = size - 1 - k / per;
            if (i % 3 == 2) {
                bad += r[i] != SENT;
                r[i] = 1;
            } else {
                bad += r[i] != pat((int)blk, 0, 2 * (k % per) + i % 3, round);
            }
        }
    }
    report("gatherv c2->v3", r, (size_t)size * 3 * per * sizeof *r);
    free(s);
    free(r);
}

/* scatter: the root sends v3, the others receive c2 (same size, other
 * layout); scatterv: v3 on both sides. */
static void scatters(MPI_Datatype v3, MPI_Datatype c2, int round)
{
    long per = NV;
    int root = 2 % size, *s = malloc((size_t)size * 3 * per * sizeof *s), *r = malloc((size_t)3 * per * sizeof *r);
    for (int d = 0; d < size; d++)
        put_v3(s + d * 3 * per, per, d, round);
    fill(r, 3 * per, SENT);
    MPI_Scatter(s, (int)per, v3, r, (int)per, c2, root, MPI_COMM_WORLD);
    for (long i = 3 * per - 1; i >= 0; i--)
        bad += r[i] != (i < 2 * per ? pat(root, rank, i, round) : SENT);
    report("scatter v3->c2", r, (size_t)3 * per * sizeof *r);
    int counts[16], displs[16];
    for (int k = 0; k < size; k++) {
        counts[k] = (int)per;
        displs[k] = (int)(k * per);
    }
    fill(r, 3 * per, SENT);
    MPI_Scatterv(s, counts, displs, v3, r, (int)per, v3, root, MPI_COMM_WORLD);
    struct blocks bl = { round, (int)per };
    for (long i = 3 * per - 1; i >= 0; i--) {
        if (i % 3 == 2) {
            bad += r[i] != SENT;
            r[i] = 1;
        } else {
            bad += r[i] != pat(root, rank, 2 * (i / 3) + i % 3, bl.round);
        }
    }
    report("scatterv v3", r, (size_t)3 * per * sizeof *r);
    free(s);
    free(r);
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 2;
    ct_init(&argc, &argv, &rank, &size);
    ct_require(size >= 2 && size <= 16, rank, "dtypes_ops", "2 to 16 ranks");
    MPI_Datatype vec, v3, c2, rec_raw, rec_t, colblock, cols;
    MPI_Type_vector(1, 2, 3, MPI_INT, &vec);
    MPI_Type_create_resized(vec, 0, 3 * sizeof(int), &v3);
    MPI_Type_contiguous(2, MPI_INT, &c2);
    int bl[2] = { 1, 1 };
    MPI_Aint disp[2] = { offsetof(struct rec, i), offsetof(struct rec, d) };
    MPI_Datatype types[2] = { MPI_INT, MPI_DOUBLE };
    MPI_Type_create_struct(2, bl, disp, types, &rec_raw);
    MPI_Type_create_resized(rec_raw, 0, sizeof(struct rec), &rec_t);
    /* R rows of R ints, row stride size R ints; one element per rank,
     * the next one R ints further on. */
    MPI_Type_vector(R, R, size * R, MPI_INT, &colblock);
    MPI_Type_create_resized(colblock, 0, R * sizeof(int), &cols);
    MPI_Datatype *all[] = { &v3, &c2, &rec_t, &cols };
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        MPI_Type_commit(all[i]);
    for (int round = 0; round < rounds; round++) {
        alltoalls(v3, round);
        alltoallv_struct(rec_t, round);
        transpose(cols, round);
        gathers(v3, c2, round);
        scatters(v3, c2, round);
    }
    int status = ct_verdict("dtypes_ops", bad, rank);
    MPI_Type_free(&vec);
    MPI_Type_free(&rec_raw);
    MPI_Type_free(&colblock);
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        MPI_Type_free(all[i]);
    MPI_Finalize();
    return status;
}
