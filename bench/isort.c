// SPDX-License-Identifier: BSD-3-Clause
/* Integer-sort-like kernel (after NPB IS): every rank draws --keys keys in
 * [0, --maxkey) with a bell-shaped distribution, buckets them by destination
 * rank (rank r owns the key range [r*maxkey/P, (r+1)*maxkey/P)), exchanges the
 * bucket sizes with MPI_Alltoall and the keys with MPI_Alltoallv, then ranks
 * the received keys locally with a counting sort that reads the received
 * buckets in order 0..P-1. Checked: keys globally sorted, each in its owner's
 * range, and the multiset of keys preserved (count and two checksums). */
#include "bench_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sorter {
    int np, rank;
    long nkeys, maxkey, lo, hi;   /* this rank owns keys in [lo, hi) */
    int *keys, *sorted_by_dest, *recv, *hist;
    int *scount, *rcount, *sdispl, *rdispl;
    long nrecv, recv_cap;
};

static int owner(const struct sorter *s, long key)
{
    return (int)(key * s->np / s->maxkey);
}

static void draw_keys(struct sorter *s, long iter)
{
    long q = s->maxkey / 4;
    for (long i = 0; i < s->nkeys; i++) {
        uint64_t h = bench_pattern((uint64_t)s->rank, (uint64_t)iter, (uint64_t)i);
        long k = 0;
        for (int j = 0; j < 4; j++)
            k += (long)((h >> (16 * j) & 0xffff) * (uint64_t)q >> 16);
        s->keys[i] = (int)k;
    }
}

/* Counting sort of this rank's keys by destination; fills scount/sdispl. */
static void bucketize(struct sorter *s)
{
    memset(s->scount, 0, sizeof(int) * (size_t)s->np);
    for (long i = 0; i < s->nkeys; i++)
        s->scount[owner(s, s->keys[i])]++;
    for (int d = 0, off = 0; d < s->np; d++) {
        s->sdispl[d] = off;
        off += s->scount[d];
    }
    int *pos = s->hist; /* scratch: np <= range */
    memcpy(pos, s->sdispl, sizeof(int) * (size_t)s->np);
    for (long i = 0; i < s->nkeys; i++)
        s->sorted_by_dest[pos[owner(s, s->keys[i])]++] = s->keys[i];
}

static double exchange(struct sorter *s)
{
    double t0 = bench_now();
    MPI_Alltoall(s->scount, 1, MPI_INT, s->rcount, 1, MPI_INT, MPI_COMM_WORLD);
    long off = 0;
    for (int p = 0; p < s->np; p++) {
        s->rdispl[p] = (int)off;
        off += s->rcount[p];
    }
    s->nrecv = off;
    if (off > s->recv_cap) { /* grows in the warm-up iteration, as a real code's would */
        free(s->recv);
        s->recv_cap = off + off / 4;
        s->recv = bench_alloc(sizeof(int) * (size_t)s->recv_cap);
    }
    MPI_Alltoallv(s->sorted_by_dest, s->scount, s->sdispl, MPI_INT,
                  s->recv, s->rcount, s->rdispl, MPI_INT, MPI_COMM_WORLD);
    return bench_now() - t0;
}

/* Local ranking: histogram of the owned range, reading buckets 0..P-1 in order,
 * then prefix sums (the rank of key k is hist[k - lo] after the scan). */
static int rank_keys(struct sorter *s)
{
    long range = s->hi - s->lo;
    int bad = 0;
    memset(s->hist, 0, sizeof(int) * (size_t)(range + 1));
    for (int p = 0; p < s->np; p++) {
        const int *b = s->recv + s->rdispl[p];
        for (int i = 0; i < s->rcount[p]; i++) {
            long k = b[i] - s->lo;
            if (k < 0 || k >= range) { bad = 1; continue; }
            s->hist[k + 1]++;
        }
    }
    for (long k = 0; k < range; k++)
        s->hist[k + 1] += s->hist[k];
    return !bad;
}

/* Untimed: rebuild the sorted keys from the ranks, check order and the multiset. */
static int verify(struct sorter *s)
{
    uint64_t mine[3] = { (uint64_t)s->nkeys, 0, 0 }, got[3] = { (uint64_t)s->nrecv, 0, 0 };
    uint64_t a[3], b[3];
    for (long i = 0; i < s->nkeys; i++) {
        mine[1] += (uint64_t)s->keys[i];
        mine[2] += bench_pattern((uint64_t)s->keys[i], 1, 2);
    }
    long first = -1, last = -1, n = 0;
    int ok = s->hist[s->hi - s->lo] == s->nrecv;
    for (long k = 0; ok && k < s->hi - s->lo; k++)
        for (int c = s->hist[k]; c < s->hist[k + 1]; c++, n++) {
            long key = s->lo + k; /* the c-th key in sorted order */
            if (first < 0) first = key;
            if (key < last) ok = 0;
            last = key;
            got[1] += (uint64_t)key;
            got[2] += bench_pattern((uint64_t)key, 1, 2);
        }
    ok &= n == s->nrecv;
    MPI_Allreduce(mine, a, 3, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(got, b, 3, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    ok &= !memcmp(a, b, sizeof a);
    /* Global order: my smallest key is not below the previous rank's largest. */
    long prev_last = -1;
    MPI_Sendrecv(&last, 1, MPI_LONG, s->rank + 1 < s->np ? s->rank + 1 : MPI_PROC_NULL, 0,
                 &prev_last, 1, MPI_LONG, s->rank > 0 ? s->rank - 1 : MPI_PROC_NULL, 0,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    ok &= first < 0 || prev_last <= first;
    return ok;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    struct sorter s = { .nkeys = 1 << 20, .maxkey = 1 << 19 };
    struct bench_common c = { .iters = 5, .warmup = 1 };
    MPI_Comm_rank(MPI_COMM_WORLD, &s.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &s.np);
    for (int i = 1; i < argc; i++) {
        if (bench_common_arg(argc, argv, &i, &c))
            continue;
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--keys")) s.nkeys = bench_parse_long(a, v, 1, 1L << 27);
        else if (!strcmp(a, "--maxkey")) s.maxkey = bench_parse_long(a, v, 4, 1L << 30);
        else bench_usage_error("usage: isort [--keys N] [--maxkey K] [--iters N] [--warmup N] [--corrupt]");
        i++;
    }
    if (s.maxkey % s.np || s.maxkey / s.np < s.np)
        bench_usage_error("--maxkey must be a multiple of the %d ranks and at least %d, got %ld",
                          s.np, s.np * s.np, s.maxkey);
    s.lo = s.rank * (s.maxkey / s.np);
    s.hi = s.lo + s.maxkey / s.np;
    size_t np = (size_t)s.np;
    s.keys = bench_alloc(sizeof(int) * (size_t)s.nkeys);
    s.sorted_by_dest = bench_alloc(sizeof(int) * (size_t)s.nkeys);
    s.recv_cap = 2 * s.nkeys;
    s.recv = bench_alloc(sizeof(int) * (size_t)s.recv_cap);
    s.hist = bench_alloc(sizeof(int) * (size_t)(s.hi - s.lo + 1));
    s.scount = bench_alloc(sizeof(int) * np);
    s.rcount = bench_alloc(sizeof(int) * np);
    s.sdispl = bench_alloc(sizeof(int) * np);
    s.rdispl = bench_alloc(sizeof(int) * np);
    struct bench_times t = bench_times_new(c.iters);
    int ok = 1;
    for (long it = -c.warmup; it < c.iters; it++) {
        draw_keys(&s, it);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = bench_now();
        bucketize(&s);
        double coll = exchange(&s);
        if (c.corrupt && it == 0 && s.rank == s.np - 1 && s.nrecv > 0)
            s.recv[s.nrecv - 1] ^= 1 << 2;
        int in_range = rank_keys(&s);
        double t1 = bench_now();
        ok &= in_range & verify(&s);
        bench_times_put(&t, it, coll, t1 - t0);
    }
    char extra[96];
    snprintf(extra, sizeof extra, "variant=plain keys=%ld maxkey=%ld", s.nkeys, s.maxkey);
    int rc = bench_report("isort", extra, &t, ok, MPI_COMM_WORLD);
    if (!ok)
        fprintf(stderr, "isort: rank %d: keys not sorted or not a permutation of the input\n", s.rank);
    free(s.keys); free(s.sorted_by_dest); free(s.recv); free(s.hist);
    free(s.scount); free(s.rcount); free(s.sdispl); free(s.rdispl);
    bench_times_free(&t);
    MPI_Finalize();
    return rc;
}
