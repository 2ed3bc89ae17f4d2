// SPDX-License-Identifier: BSD-3-Clause
/* MPI_Reduce_scatter_block (int sum) and MPI_Reduce_scatter (long max,
 * different counts per rank), each also in place, on MPI_COMM_WORLD and on
 * a half from MPI_Comm_split; and one double-sum Reduce_scatter_block,
 * which must run blocking (its last bits could differ). Every element is
 * checked against the reduction computed here from the members' patterns,
 * read back to front. Prints "redscat: ok".
 * Usage: redscat [ROUNDS] (an even number of ranks, at most 64). */
#include "ct.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define B 20000   /* elements per rank and block */

static int pat(int from, long i, int round) { return (int)((from * 7919L + i * 31 + round) % 100003); }

static long bad;

__attribute__((noinline)) static void rsb(const int *s, int *r, MPI_Comm c)
{
    MPI_Reduce_scatter_block(s, r, B, MPI_INT, MPI_SUM, c);
}
__attribute__((noinline)) static void rsb_ip(int *r, MPI_Comm c)
{
    MPI_Reduce_scatter_block(MPI_IN_PLACE, r, B, MPI_INT, MPI_SUM, c);
}
__attribute__((noinline)) static void rs(const long *s, long *r, const int *cnt, MPI_Comm c)
{
    MPI_Reduce_scatter(s, r, cnt, MPI_LONG, MPI_MAX, c);
}
__attribute__((noinline)) static void rs_ip(long *r, const int *cnt, MPI_Comm c)
{
    MPI_Reduce_scatter(MPI_IN_PLACE, r, cnt, MPI_LONG, MPI_MAX, c);
}
__attribute__((noinline)) static void rsb_double(const double *s, double *r, MPI_Comm c)
{
    MPI_Reduce_scatter_block(s, r, B, MPI_DOUBLE, MPI_SUM, c);
}

static void round_on(MPI_Comm comm, const int *w, int round, void *sbuf, void *rbuf)
{
    int n, me, cnt[64];
    long first = 0, total = 0;
    MPI_Comm_size(comm, &n);
    MPI_Comm_rank(comm, &me);
    int *si = sbuf, *ri = rbuf;
    long *sl = sbuf, *rl = rbuf;
    double *sd = sbuf, *rd = rbuf;
    /* int sum, out of place, then in place */
    for (int ip = 0; ip < 2; ip++) {
        int *src = ip ? ri : si;
        for (long i = 0; i < (long)n * B; i++)
            src[i] = pat(w[me], i, round + ip);
        ip ? rsb_ip(ri, comm) : rsb(si, ri, comm);
        for (long i = B - 1; i >= 0; i--) {
            int want = 0;
            for (int k = 0; k < n; k++)
                want += pat(w[k], (long)me * B + i, round + ip);
            bad += ri[i] != want;
        }
    }
    /* long max with counts B - 5003k: out of place, then in place */
    for (int k = 0; k < n; k++) {
        cnt[k] = B - 5003 * k > 3 ? B - 5003 * k : 3;
        if (k < me)
            first += cnt[k];
        total += cnt[k];
    }
    for (int ip = 0; ip < 2; ip++) {
        long *src = ip ? rl : sl;
        for (long i = 0; i < total; i++)
            src[i] = (long)pat(w[me], i, round + 2 + ip) * (w[me] % 2 ? -1 : 1);
        ip ? rs_ip(rl, cnt, comm) : rs(sl, rl, cnt, comm);
        for (long i = cnt[me] - 1; i >= 0; i--) {
            long want = -(1L << 40);
            for (int k = 0; k < n; k++) {
                long v = (long)pat(w[k], first + i, round + 2 + ip) * (w[k] % 2 ? -1 : 1);
                want = v > want ? v : want;
            }
            bad += rl[i] != want;
        }
    }
    /* double sum: blocking, and exactly MPI's own result; the values are
     * small integers, so any order of addition gives the same */
    for (long i = 0; i < (long)n * B; i++)
        sd[i] = pat(w[me], i, round);
    rsb_double(sd, rd, comm);
    for (long i = B - 1; i >= 0; i--) {
        double want = 0;
        for (int k = 0; k < n; k++)
            want += pat(w[k], (long)me * B + i, round);
        bad += rd[i] != want;
    }
}

int main(int argc, char **argv)
{
    int rank, size, rounds = argc > 1 ? atoi(argv[1]) : 2;
    ct_init(&argc, &argv, &rank, &size);
    size_t bytes = (size_t)size * B * sizeof(double);
    void *sbuf = malloc(bytes), *rbuf = malloc(bytes);
    int world[64], half[32];
    if (!sbuf || !rbuf)
        MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Comm h;
    ct_halves("redscat", rank, size, world, half, &h);
    for (int round = 0; round < rounds; round++) {
        round_on(MPI_COMM_WORLD, world, round, sbuf, rbuf);
        round_on(h, half, round, sbuf, rbuf);
    }
    MPI_Comm_free(&h);
    int status = ct_verdict("redscat", bad, rank);
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return status;
}
