// SPDX-License-Identifier: BSD-3-Clause
/*
 * b_irregular.c - irregular kernels of design paper 002, strong scaling.
 *
 * A distributed table X (TABLE longs in all) and, per PE, a fixed list of
 * random global indices (REFS in all, split over the PEs), as in the gather of
 * NPB UA. Each iteration reads X at every index (gather), then every PE adds 1
 * at each of its indices (scatter-add). Gather, three ways:
 *   get        blocking shmem_long_g per remote element
 *   prefetch   shmem_long_get_nbi per element, one shmem_quiet, then compute
 *   owner-put  after a first exchange of the index lists, each owner puts the
 *              values into the requesters' buffers (shmem_long_put_nbi per
 *              element) and shmem_barrier_all completes them
 *   owner-put-packed  the same, one shmem_putmem per requester
 * Scatter-add, two ways:
 *   amo        shmem_long_atomic_add per element
 *   am         one active message per owner per batch; the handler adds
 * GUPS (HPCC RandomAccess, xor updates): amo per update vs am batches.
 * Every kernel checks its result. Output: "<kernel> np=<n> <ms/iter> ms ...".
 */
#include <shmem.h>
#include <shmemx.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static long TABLE = 1L << 20, REFS = 1L << 17;
static int ITERS = 4;
static int me, npes;
static long nloc, mloc, mmax;
static long *X, *idx, *buf, *rbuf, *inbox, *incount, *cnt, *pairs;
static long bad;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static unsigned long long lcg(unsigned long long *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return *s >> 17;
}

static void reset_table(void)
{
    for (long i = 0; i < nloc; i++)
        X[i] = me * nloc + i;
    shmem_barrier_all();
}

/* The expected sum of the gathered values when X[g] == g + it. */
static void check_sum(const char *what, long sum, int it)
{
    long want = 0;
    for (long k = 0; k < mloc; k++)
        want += idx[k] + it;
    if (sum != want) {
        bad++;
        fprintf(stderr, "PE %d: %s: sum %ld want %ld\n", me, what, sum, want);
    }
}

static void report(const char *what, double t, long refs_per_iter)
{
    static double tmax, tloc;
    static long bsum, bloc;
    tloc = t;
    bloc = bad;
    shmem_double_max_to_all(&tmax, &tloc, 1, 0, 0, npes, NULL, NULL);
    shmem_long_sum_to_all(&bsum, &bloc, 1, 0, 0, npes, NULL, NULL);
    if (me == 0)
        printf("%-18s np=%d %9.3f ms/iter %8.2f Mref/s %s\n", what, npes,
               tmax / ITERS * 1e3, refs_per_iter * ITERS / tmax / 1e6,
               bsum ? "WRONG" : "ok");
    bad = 0;
}

static long local_sum(const long *v, long n)
{
    long s = 0;
    for (long i = 0; i < n; i++)
        s += v[i];
    return s;
}

static void bump_table(void)
{
    for (long i = 0; i < nloc; i++)
        X[i]++;
    shmem_barrier_all();
}

static void gather_get(void)
{
    reset_table();
    double t = 0;
    for (int it = 0; it < ITERS; it++) {
        double t0 = now();
        long sum = 0;
        for (long k = 0; k < mloc; k++) {
            long g = idx[k], o = g / nloc, off = g % nloc;
            sum += o == me ? X[off] : shmem_long_g(&X[off], (int)o);
        }
        shmem_barrier_all();
        t += now() - t0;
        check_sum("get", sum, it);
        bump_table();
    }
    report("gather get", t, REFS);
}

static void gather_prefetch(void)
{
    reset_table();
    double t = 0;
    for (int it = 0; it < ITERS; it++) {
        double t0 = now();
        for (long k = 0; k < mloc; k++) {
            long g = idx[k], o = g / nloc, off = g % nloc;
            if (o == me)
                buf[k] = X[off];
            else
                shmem_long_get_nbi(&buf[k], &X[off], 1, (int)o);
        }
        shmem_quiet();
        long sum = local_sum(buf, mloc);
        shmem_barrier_all();
        t += now() - t0;
        check_sum("prefetch", sum, it);
        bump_table();
    }
    report("gather prefetch", t, REFS);
}

/* First time only: every requester tells each owner which offsets it wants
 * and where (its slot). inbox[r][2*q] = offset, inbox[r][2*q+1] = slot. */
static void exchange_requests(void)
{
    long *fill = calloc(npes, sizeof(long));
    memset(cnt, 0, npes * sizeof(long));
    for (long k = 0; k < mloc; k++)
        cnt[idx[k] / nloc]++;
    for (long k = 0; k < mloc; k++) {
        long o = idx[k] / nloc, q = fill[o]++;
        pairs[(o * mmax + q) * 2] = idx[k] % nloc;
        pairs[(o * mmax + q) * 2 + 1] = k;
    }
    for (int o = 0; o < npes; o++) {
        shmem_putmem(&inbox[(long)me * mmax * 2], &pairs[(long)o * mmax * 2],
                     cnt[o] * 2 * sizeof(long), o);
        shmem_long_p(&incount[me], cnt[o], o);
    }
    shmem_barrier_all();
    free(fill);
}

static void gather_owner_put(int packed)
{
    reset_table();
    double t = 0;
    for (int it = 0; it < ITERS; it++) {
        double t0 = now();
        for (int r = 0; r < npes; r++) {
            const long *in = &inbox[(long)r * mmax * 2];
            if (packed) {
                long *stage = &pairs[(long)r * mmax];   /* reuse as staging */
                for (long q = 0; q < incount[r]; q++)
                    stage[q] = X[in[2 * q]];
                shmem_putmem(&rbuf[(long)me * mmax], stage, incount[r] * sizeof(long), r);
            } else {
                for (long q = 0; q < incount[r]; q++)
                    shmem_long_put_nbi(&buf[in[2 * q + 1]], &X[in[2 * q]], 1, r);
            }
        }
        shmem_barrier_all();
        long sum = 0;
        if (packed)
            for (int o = 0; o < npes; o++)
                sum += local_sum(&rbuf[(long)o * mmax], cnt[o]);
        else
            sum = local_sum(buf, mloc);
        t += now() - t0;
        check_sum(packed ? "owner-put-packed" : "owner-put", sum, it);
        bump_table();
    }
    report(packed ? "gather owner-put*" : "gather owner-put", t, REFS);
}

/* ---- scatter-add and GUPS with atomics or active messages ---- */
#define BATCH 1024
static int h_add, h_xor;
static long *outq;      /* [npes][BATCH] pending offsets (or offset,value) */
static int *outn;

static void add_handler(int src, const void *data, size_t len)
{
    const long *off = data;
    (void)src;
    for (size_t i = 0; i < len / sizeof(long); i++)
        X[off[i]] += 1;
}

static void xor_handler(int src, const void *data, size_t len)
{
    const long *p = data;
    (void)src;
    for (size_t i = 0; i + 1 < len / sizeof(long); i += 2)
        X[p[i]] ^= p[i + 1];
}

static void queue(int o, int h, const long *w, int nw)
{
    long *q = &outq[(long)o * BATCH];
    if (outn[o] + nw > BATCH) {
        shmemx_send(o, h, q, outn[o] * sizeof(long));
        outn[o] = 0;
    }
    memcpy(&q[outn[o]], w, nw * sizeof(long));
    outn[o] += nw;
}

static void flush_queues(int h)
{
    for (int o = 0; o < npes; o++)
        if (outn[o]) {
            shmemx_send(o, h, &outq[(long)o * BATCH], outn[o] * sizeof(long));
            outn[o] = 0;
        }
}

static void check_scatter(const char *what)
{
    static long s, tot;
    s = local_sum(X, nloc);
    shmem_long_sum_to_all(&tot, &s, 1, 0, 0, npes, NULL, NULL);
    long base = (TABLE - 1) * TABLE / 2;   /* sum of the reset values */
    if (tot != base + REFS * ITERS) {
        bad++;
        if (me == 0)
            fprintf(stderr, "%s: table sum %ld want %ld\n", what, tot, base + REFS * ITERS);
    }
}

static void scatter(int am)
{
    reset_table();
    double t0 = now();
    for (int it = 0; it < ITERS; it++) {
        for (long k = 0; k < mloc; k++) {
            long g = idx[k], o = g / nloc, off = g % nloc;
            if (am)
                queue((int)o, h_add, &off, 1);
            else
                shmem_long_atomic_add(&X[off], 1, (int)o);
        }
        if (am)
            flush_queues(h_add);
        shmem_barrier_all();
    }
    double t = now() - t0;
    check_scatter(am ? "scatter am" : "scatter amo");
    report(am ? "scatter-add am" : "scatter-add amo", t, REFS);
}

static void gups(int am)
{
    reset_table();
    unsigned long long s = 12345 + me;
    long updates = REFS;      /* per iteration, all PEs together */
    double t0 = now();
    for (int it = 0; it < ITERS; it++) {
        for (long k = 0; k < updates / npes; k++) {
            long g = (long)(lcg(&s) % (unsigned long long)(nloc * npes)), o = g / nloc;
            long w[2] = {g % nloc, (long)s};
            if (am)
                queue((int)o, h_xor, w, 2);
            else
                shmem_int64_atomic_xor(&X[w[0]], w[1], (int)o);
        }
        if (am)
            flush_queues(h_xor);
        shmem_barrier_all();
    }
    double t = now() - t0;
    /* each update applied twice cancels out: replay to verify */
    s = 12345 + me;
    for (int it = 0; it < ITERS; it++)
        for (long k = 0; k < updates / npes; k++) {
            long g = (long)(lcg(&s) % (unsigned long long)(nloc * npes)), o = g / nloc;
            shmem_int64_atomic_xor(&X[g % nloc], (long)s, (int)o);
        }
    shmem_barrier_all();
    for (long i = 0; i < nloc; i++)
        if (X[i] != me * nloc + i) {
            bad++;
            break;
        }
    report(am ? "gups am" : "gups amo", t, updates / npes * npes);
}

int main(int argc, char **argv)
{
    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    if (argc > 1) TABLE = atol(argv[1]);
    if (argc > 2) REFS = atol(argv[2]);
    if (argc > 3) ITERS = atoi(argv[3]);
    const char *only = argc > 4 ? argv[4] : "all";
    nloc = TABLE / npes;
    TABLE = nloc * npes;
    mloc = REFS / npes;
    REFS = mloc * npes;
    mmax = mloc;
    X = shmem_malloc(nloc * sizeof(long));
    buf = shmem_malloc(mmax * sizeof(long));
    rbuf = shmem_malloc(npes * mmax * sizeof(long));
    inbox = shmem_malloc(npes * mmax * 2 * sizeof(long));
    incount = shmem_calloc(npes, sizeof(long));
    idx = malloc(mloc * sizeof(long));
    cnt = malloc(npes * sizeof(long));
    pairs = malloc(npes * mmax * 2 * sizeof(long));
    outq = malloc(npes * BATCH * sizeof(long));
    outn = calloc(npes, sizeof(int));
    if (!X || !buf || !rbuf || !inbox || !incount || !idx || !pairs || !outq) {
        if (me == 0)
            fprintf(stderr, "b_irregular: out of memory (raise SHMEM_SYMMETRIC_SIZE)\n");
        shmem_global_exit(1);
    }
    unsigned long long s = 777 + me;
    for (long k = 0; k < mloc; k++)
        idx[k] = (long)(lcg(&s) % (unsigned long long)TABLE);
    h_add = shmemx_register_handler(add_handler);
    h_xor = shmemx_register_handler(xor_handler);
    if (me == 0)
        printf("# table %ld longs, %ld refs/iter, %d iters, %d PEs\n", TABLE, REFS, ITERS, npes);
    int all = !strcmp(only, "all");
    if (all || !strcmp(only, "gather")) {
        gather_get();
        gather_prefetch();
        exchange_requests();
        gather_owner_put(0);
        gather_owner_put(1);
    }
    if (all || !strcmp(only, "scatter")) {
        scatter(0);
        scatter(1);
    }
    if (all || !strcmp(only, "gups")) {
        gups(0);
        gups(1);
    }
    shmem_finalize();
    return 0;
}
