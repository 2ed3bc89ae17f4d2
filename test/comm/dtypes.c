// SPDX-License-Identifier: BSD-3-Clause
/* Derived datatypes with holes: MPI_Bcast of a vector type (every other
 * int of each group), of a struct type (int, gap, double; resized to leave
 * a hole after it), and MPI_Alltoall of a vector type. Before each call the
 * receivers fill their whole buffer with a sentinel; after it they check
 * every element of the type map against the root's (or sender's) pattern
 * and every hole for the sentinel, writing into the holes first (the
 * program may use them while the call is in flight). Prints "dtypes: ok".
 * Usage: dtypes [ROUNDS] (any number of ranks, at most 64). */
#include "ct.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>

#define N 12000        /* vector blocks (Bcast), struct elements */
#define NA 3000        /* vector blocks per destination (Alltoall) */
#define SENT (-7)

struct rec { int i; char gap[4]; double d; char pad[8]; };   /* pad: resized hole */

static long bad;
static int pat(int from, int to, long i, int round) { return (int)((from * 7919L + to * 131L + i * 31 + round) % 100003); }

__attribute__((noinline)) static void bc(void *b, int n, MPI_Datatype t, int root, MPI_Comm c)
{
    MPI_Bcast(b, n, t, root, c);
}
__attribute__((noinline)) static void a2a(const void *s, void *r, int n, MPI_Datatype t, MPI_Comm c)
{
    MPI_Alltoall(s, n, t, r, n, t, c);
}

int main(int argc, char **argv)
{
    int rank, size, rounds = argc > 1 ? atoi(argv[1]) : 2;
    ct_init(&argc, &argv, &rank, &size);
    /* vector: 2 of every 3 ints (stride 3), one element = 1 block */
    MPI_Datatype vec, rec_raw, rec_t;
    MPI_Type_vector(1, 2, 3, MPI_INT, &vec);
    MPI_Datatype vec3;
    MPI_Type_create_resized(vec, 0, 3 * sizeof(int), &vec3);
    MPI_Type_commit(&vec3);
    int bl[2] = { 1, 1 };
    MPI_Aint disp[2] = { offsetof(struct rec, i), offsetof(struct rec, d) };
    MPI_Datatype types[2] = { MPI_INT, MPI_DOUBLE };
    MPI_Type_create_struct(2, bl, disp, types, &rec_raw);
    MPI_Type_create_resized(rec_raw, 0, sizeof(struct rec), &rec_t);
    MPI_Type_commit(&rec_t);
    int *v = malloc((size_t)N * 3 * sizeof *v);
    struct rec *r = malloc((size_t)N * sizeof *r);
    int *as = malloc((size_t)size * NA * 3 * sizeof *as), *ar = malloc((size_t)size * NA * 3 * sizeof *ar);
    if (!v || !r || !as || !ar)
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (int round = 0; round < rounds; round++) {
        int root = round % size;
        /* Bcast of the vector type */
        for (long i = 0; i < 3L * N; i++)
            v[i] = rank == root && i % 3 != 2 ? pat(root, 0, i, round) : SENT;
        bc(v, N, vec3, root, MPI_COMM_WORLD);
        for (long i = 3L * N - 1; i >= 0; i--) {
            if (i % 3 == 2) {
                bad += v[i] != SENT;
                v[i] = 1;          /* the program's own use of the hole */
            } else {
                bad += v[i] != pat(root, 0, i, round);
            }
        }
        /* Bcast of the struct type */
        for (long i = 0; i < N; i++) {
            memset(&r[i], 0x5a, sizeof r[i]);
            if (rank == root) {
                r[i].i = pat(root, 1, i, round);
                r[i].d = pat(root, 2, i, round) / 8.0;
            }
        }
        bc(r, N, rec_t, root, MPI_COMM_WORLD);
        for (long i = N - 1; i >= 0; i--) {
            char hole[8];
            memset(hole, 0x5a, sizeof hole);
            bad += r[i].i != pat(root, 1, i, round) || r[i].d != pat(root, 2, i, round) / 8.0 ||
                   memcmp(r[i].gap, hole, sizeof r[i].gap) != 0 || memcmp(r[i].pad, hole, sizeof r[i].pad) != 0;
            r[i].pad[0] = 1;
        }
        /* Alltoall of the vector type: NA elements to each rank */
        for (long k = 0; k < size; k++)
            for (long i = 0; i < 3L * NA; i++) {
                as[k * 3 * NA + i] = i % 3 != 2 ? pat(rank, (int)k, i, round) : SENT;
                ar[k * 3 * NA + i] = SENT;
            }
        a2a(as, ar, NA, vec3, MPI_COMM_WORLD);
        for (long k = size - 1; k >= 0; k--)
            for (long i = 3L * NA - 1; i >= 0; i--)
                bad += ar[k * 3 * NA + i] != (i % 3 != 2 ? pat((int)k, rank, i, round) : SENT);
    }
    int status = ct_verdict("dtypes", bad, rank);
    MPI_Type_free(&vec);
    MPI_Type_free(&vec3);
    MPI_Type_free(&rec_raw);
    MPI_Type_free(&rec_t);
    free(v); free(r); free(as); free(ar);
    MPI_Finalize();
    return status;
}
