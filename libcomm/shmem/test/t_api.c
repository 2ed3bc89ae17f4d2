// SPDX-License-Identifier: BSD-3-Clause
/* t_api.c - conformance of the OpenSHMEM 1.5 families added for issue #23,
 * each checked against values computed here from the PE numbers:
 * contexts (created, default, from a team with team PE numbers; C11 forms
 * with a context), shmem_sync in both forms, SHMEM_TEAM_SHARED, split_2d,
 * team_ptr, team_get_config, typed and generic team collectives and
 * alltoalls, reductions for every 1.5 type (and the generic form), the
 * wait/test array family, non-blocking fetching atomics, alltoalls32/64,
 * deprecated names, the C11 bitwise generic on int32_t, malloc_with_hints,
 * pcontrol, version. */
#include <complex.h>
#include <string.h>
#include "t_common.h"

static int me, n;
static long pSync[SHMEM_ALLTOALLS_SYNC_SIZE];

static void contexts(void)
{
    int peer = (me + 1) % n;
    long *x = shmem_calloc(16, sizeof(long));
    uint64_t *sg = shmem_calloc(1, sizeof(uint64_t));
    shmem_ctx_t ctx;
    CHECK(shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx) == 0 && ctx != SHMEM_CTX_INVALID, "ctx_create");
    shmem_team_t team;
    CHECK(shmem_ctx_get_team(ctx, &team) == 0 && team == SHMEM_TEAM_WORLD, "ctx team");
    long v = 100 + me;
    shmem_ctx_long_put(ctx, &x[0], &v, 1, peer);
    shmem_ctx_long_p(ctx, &x[1], 200 + me, peer);
    shmem_ctx_long_atomic_add(ctx, &x[2], me + 1, 0);
    shmem_put(ctx, &x[3], &v, 1, peer);                  /* C11 with a context */
    shmem_p(SHMEM_CTX_DEFAULT, &x[4], 300 + me, peer);
    shmem_atomic_add(ctx, &x[5], 2, 0);
    shmem_ctx_quiet(ctx);
    shmem_barrier_all();
    int from = (me + n - 1) % n;
    CHECK(x[0] == 100 + from && x[1] == 200 + from && x[3] == 100 + from &&
          x[4] == 300 + from, "ctx puts: %ld %ld %ld %ld", x[0], x[1], x[3], x[4]);
    if (me == 0)
        CHECK(x[2] == (long)n * (n + 1) / 2 && x[5] == 2L * n, "ctx atomics %ld %ld", x[2], x[5]);
    CHECK(shmem_ctx_long_g(ctx, &x[0], peer) == 100 + me, "ctx g");
    CHECK(shmem_g(ctx, &x[1], peer) == 200 + me, "C11 g with a context");
    long f = -1;
    shmem_ctx_long_atomic_fetch_add_nbi(ctx, &f, &x[6], 5, peer);
    shmem_ctx_quiet(ctx);
    CHECK(f == 0, "fetch_add_nbi fetched %ld", f);
    long sv = 77 + me;
    shmem_ctx_put64_signal(ctx, &x[8], &sv, 1, sg, 1, SHMEM_SIGNAL_ADD, peer);
    shmem_signal_wait_until(sg, SHMEM_CMP_EQ, 1);
    CHECK(x[8] == 77 + from, "ctx put64_signal: %ld", x[8]);
    shmem_ctx_destroy(ctx);

    /* a context on the even PEs' team numbers its PEs 0, 1, ... */
    shmem_team_t even;
    shmem_team_config_t cfg = {.num_contexts = 3}, got = {0};
    shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, (n + 1) / 2, &cfg,
                             SHMEM_TEAM_NUM_CONTEXTS, &even);
    shmem_barrier_all();
    if (even != SHMEM_TEAM_INVALID) {
        CHECK(shmem_team_get_config(even, SHMEM_TEAM_NUM_CONTEXTS, &got) == 0 &&
              got.num_contexts == 3, "team_get_config: %d", got.num_contexts);
        shmem_ctx_t tc;
        CHECK(shmem_team_create_ctx(even, 0, &tc) == 0, "team_create_ctx");
        int tn = shmem_team_n_pes(even), tme = shmem_team_my_pe(even);
        shmem_ctx_long_p(tc, &x[7], 1000 + me, (tme + 1) % tn);   /* team PE numbers */
        shmem_ctx_quiet(tc);
        shmem_team_sync(even);
        int tfrom = (tme + tn - 1) % tn;
        CHECK(x[7] == 1000 + 2 * tfrom, "team ctx p landed %ld, want %d", x[7], 1000 + 2 * tfrom);
        shmem_team_t t2;
        shmem_ctx_get_team(tc, &t2);
        CHECK(t2 == even, "team of a team context");
        shmem_ctx_destroy(tc);
        shmem_team_destroy(even);
    } else {
        CHECK(me % 2 == 1, "even PE %d got no team", me);
    }
    shmem_barrier_all();
    shmem_free(x);
    shmem_free(sg);
}

static void teams(void)
{
    const char *tr = getenv("TNBC_SHMEM_TRANSPORT");
    int rma = tr && !strcmp(tr, "rma");
    int sn = shmem_team_n_pes(SHMEM_TEAM_SHARED);
    CHECK(sn == (rma ? 1 : n), "SHMEM_TEAM_SHARED has %d PEs (one node)", sn);
    CHECK(shmem_team_translate_pe(SHMEM_TEAM_SHARED, shmem_team_my_pe(SHMEM_TEAM_SHARED),
                                  SHMEM_TEAM_WORLD) == me, "shared -> world");
    long *y = shmem_malloc(sizeof(long));
    *y = 7 * me;
    shmem_barrier_all();
    int last = sn - 1;
    long *p = shmem_team_ptr(SHMEM_TEAM_SHARED, y, last);
    int wl = shmem_team_translate_pe(SHMEM_TEAM_SHARED, last, SHMEM_TEAM_WORLD);
    CHECK(p && *p == 7L * wl, "team_ptr to shared PE %d", last);
    CHECK(shmem_team_ptr(SHMEM_TEAM_WORLD, y, n + 3) == NULL, "team_ptr outside the team");

    /* 2-D: rows of 2 */
    shmem_team_t xt, yt;
    CHECK(shmem_team_split_2d(SHMEM_TEAM_WORLD, 2, NULL, 0, &xt, NULL, 0, &yt) == 0, "split_2d");
    int xs = (me / 2 == (n - 1) / 2) ? n - 2 * (me / 2) : 2;
    CHECK(shmem_team_n_pes(xt) == xs && shmem_team_my_pe(xt) == me % 2, "x team %d/%d",
          shmem_team_my_pe(xt), shmem_team_n_pes(xt));
    int ys = (n - me % 2 + 1) / 2;
    CHECK(shmem_team_n_pes(yt) == ys && shmem_team_my_pe(yt) == me / 2, "y team %d/%d",
          shmem_team_my_pe(yt), shmem_team_n_pes(yt));
    int s = me, sum = -1;
    shmem_int_sum_reduce(yt, &sum, &s, 1);
    int want = 0;
    for (int q = me % 2; q < n; q += 2)
        want += q;
    CHECK(sum == want, "sum over a column: %d want %d", sum, want);
    CHECK(shmem_sync(yt) == 0, "shmem_sync(team)");
    shmem_sync(0, 0, n, pSync);                  /* the deprecated form */
    shmem_team_destroy(xt);
    shmem_team_destroy(yt);
    shmem_barrier_all();
    shmem_free(y);
}

static void collectives(void)
{
    int *b = shmem_malloc(4 * sizeof(int)), src[4] = {me, me + 1, me + 2, me + 3};
    shmem_int_broadcast(SHMEM_TEAM_WORLD, b, src, 4, n - 1);
    CHECK(b[0] == n - 1 && b[3] == n + 2, "int_broadcast from %d: %d %d", n - 1, b[0], b[3]);
    long *fc = shmem_malloc(2 * n * sizeof(long)), two[2] = {10L * me, 10L * me + 1};
    shmem_fcollect(SHMEM_TEAM_WORLD, fc, two, 2);             /* generic */
    int bad = 0;
    for (int q = 0; q < n; q++)
        bad += fc[2 * q] != 10L * q || fc[2 * q + 1] != 10L * q + 1;
    CHECK(bad == 0, "fcollect");
    /* collect: PE q gives q + 1 shorts valued q */
    short *cd = shmem_malloc(n * (n + 1) / 2 * sizeof(short)), cs[8];
    for (int i = 0; i <= me; i++)
        cs[i] = (short)me;
    shmem_short_collect(SHMEM_TEAM_WORLD, cd, cs, (size_t)me + 1);
    bad = 0;
    for (int q = 0, k = 0; q < n; q++)
        for (int i = 0; i <= q; i++)
            bad += cd[k++] != q;
    CHECK(bad == 0, "short_collect");
    /* alltoall: block for PE j holds 100 * me + j */
    double *ad = shmem_malloc(n * sizeof(double)), as[8];
    for (int j = 0; j < n; j++)
        as[j] = 100.0 * me + j;
    shmem_double_alltoall(SHMEM_TEAM_WORLD, ad, as, 1);
    bad = 0;
    for (int j = 0; j < n; j++)
        bad += ad[j] != 100.0 * j + me;
    CHECK(bad == 0, "double_alltoall");
    /* alltoalls: 2 elements per PE, source stride 3, dest stride 2 */
    long *ss = shmem_calloc(3 * 2 * n, sizeof(long)), *sd = shmem_calloc(2 * 2 * n, sizeof(long));
    for (int j = 0; j < n; j++)
        for (int k = 0; k < 2; k++)
            ss[(j * 2 + k) * 3] = 1000L * me + 10 * j + k;
    shmem_long_alltoalls(SHMEM_TEAM_WORLD, sd, ss, 2, 3, 2);
    bad = 0;
    for (int j = 0; j < n; j++)
        for (int k = 0; k < 2; k++)
            bad += sd[(j * 2 + k) * 2] != 1000L * j + 10 * me + k || sd[(j * 2 + k) * 2 + 1] != 0;
    CHECK(bad == 0, "long_alltoalls");
    /* the same through the active-set alltoalls64 */
    memset(sd, 0, 2 * 2 * n * sizeof(long));
    shmem_barrier_all();
    shmem_alltoalls64(sd, ss, 2, 3, 2, 0, 0, n, pSync);
    bad = 0;
    for (int j = 0; j < n; j++)
        for (int k = 0; k < 2; k++)
            bad += sd[(j * 2 + k) * 2] != 1000L * j + 10 * me + k;
    CHECK(bad == 0, "alltoalls64");
    int32_t *s32 = shmem_calloc(n, sizeof(int32_t)), *d32 = shmem_calloc(n, sizeof(int32_t));
    for (int j = 0; j < n; j++)
        s32[j] = me * 16 + j;
    shmem_barrier_all();
    shmem_alltoalls32(d32, s32, 1, 1, 1, 0, 0, n, pSync);
    bad = 0;
    for (int j = 0; j < n; j++)
        bad += d32[j] != j * 16 + me;
    CHECK(bad == 0, "alltoalls32");
    shmem_barrier_all();
    shmem_free(b); shmem_free(fc); shmem_free(cd); shmem_free(ad);
    shmem_free(ss); shmem_free(sd); shmem_free(s32); shmem_free(d32);
}

/* Every reduction type: PE q contributes q + 1 (sum, prod, min, max) and
 * the bit 1 << q (and, or, xor); expected values from closed forms. */
#define RED_ARITH(T, N)                                                        \
    {                                                                          \
        T *d = shmem_malloc(2 * sizeof(T)), s[2] = {(T)(me + 1), (T)(me + 1)}; \
        long fact = 1;                                                         \
        for (int q = 1; q <= n; q++)                                           \
            fact *= q;                                                         \
        shmem_##N##_sum_reduce(SHMEM_TEAM_WORLD, d, s, 2);                     \
        CHECK(d[0] == (T)(n * (n + 1) / 2) && d[1] == d[0], #N " sum");        \
        shmem_##N##_prod_reduce(SHMEM_TEAM_WORLD, d, s, 1);                    \
        CHECK(d[0] == (T)fact, #N " prod");                                    \
        shmem_##N##_min_reduce(SHMEM_TEAM_WORLD, d, s, 1);                     \
        CHECK(d[0] == (T)1, #N " min");                                        \
        shmem_##N##_max_reduce(SHMEM_TEAM_WORLD, d, s, 1);                     \
        CHECK(d[0] == (T)n, #N " max");                                        \
        shmem_free(d);                                                         \
    }
#define RED_BIT(T, N)                                                          \
    {                                                                          \
        T *d = shmem_malloc(sizeof(T)), s = (T)(1u << me), a = (T)(s | 0x40);  \
        shmem_##N##_or_reduce(SHMEM_TEAM_WORLD, d, &s, 1);                     \
        CHECK(*d == (T)((1u << n) - 1), #N " or");                             \
        shmem_##N##_xor_reduce(SHMEM_TEAM_WORLD, d, &s, 1);                    \
        CHECK(*d == (T)((1u << n) - 1), #N " xor");                            \
        shmem_##N##_and_reduce(SHMEM_TEAM_WORLD, d, &a, 1);                    \
        CHECK(*d == (T)(n == 1 ? a : 0x40), #N " and");                        \
        shmem_free(d);                                                         \
    }

static void reductions(void)
{
    SHMEMI_TEAM_MINMAX_TYPES(RED_ARITH)
    SHMEMI_TEAM_BIT_TYPES(RED_BIT)
    double _Complex *cd = shmem_malloc(sizeof *cd), cs = (me + 1) + 1.0 * I * me;
    shmem_complexd_sum_reduce(SHMEM_TEAM_WORLD, cd, &cs, 1);
    CHECK(creal(*cd) == n * (n + 1) / 2 && cimag(*cd) == n * (n - 1) / 2, "complexd sum");
    float _Complex *cf = shmem_malloc(sizeof *cf), fs = 1.0f * I;
    shmem_complexf_prod_reduce(SHMEM_TEAM_WORLD, cf, &fs, 1);   /* i^n */
    float re = n % 4 == 0 ? 1 : n % 4 == 2 ? -1 : 0, im = n % 4 == 1 ? 1 : n % 4 == 3 ? -1 : 0;
    CHECK(crealf(*cf) == re && cimagf(*cf) == im, "complexf prod");
    double _Complex *ta = shmem_malloc(sizeof *ta);
    shmem_complexd_sum_to_all(ta, &cs, 1, 0, 0, n, NULL, pSync);
    CHECK(creal(*ta) == n * (n + 1) / 2, "complexd sum_to_all");
    long *g = shmem_malloc(sizeof(long)), gs = me;
    shmem_max_reduce(SHMEM_TEAM_WORLD, g, &gs, 1);           /* generic */
    CHECK(*g == n - 1, "generic max_reduce");
    unsigned char *u = shmem_malloc(1), us = (unsigned char)(1u << me);
    shmem_or_reduce(SHMEM_TEAM_WORLD, u, &us, 1);
    CHECK(*u == (1u << n) - 1, "generic or_reduce");
    shmem_free(cd); shmem_free(cf); shmem_free(ta); shmem_free(g); shmem_free(u);
}

static void waits(void)
{
    int peer = (me + 1) % n;
    long *iv = shmem_calloc(4, sizeof(long));
    int status[4] = {0, 0, 1, 0};
    size_t idx[4];
    long vals[4] = {1, 2, 3, 4};
    CHECK(shmem_long_test_any(iv, 4, status, SHMEM_CMP_NE, 0) == SIZE_MAX, "test_any none");
    CHECK(shmem_long_test_all(iv, 4, status, SHMEM_CMP_EQ, 0) == 1, "test_all zeros");
    shmem_barrier_all();
    shmem_long_p(&iv[3], 4, peer);
    shmem_quiet();
    CHECK(shmem_long_wait_until_any(iv, 4, status, SHMEM_CMP_NE, 0) == 3, "wait_until_any");
    shmem_barrier_all();     /* nobody sets [0]/[1] before every PE has seen [3] only */
    shmem_long_p(&iv[0], 1, peer);
    shmem_long_p(&iv[1], 2, peer);
    shmem_quiet();
    shmem_long_wait_until_all_vector(iv, 4, status, SHMEM_CMP_EQ, vals);   /* [2] excluded */
    CHECK(iv[0] == 1 && iv[1] == 2 && iv[3] == 4, "wait_until_all_vector");
    size_t k = shmem_long_test_some(iv, 4, idx, status, SHMEM_CMP_GE, 2);
    CHECK(k == 2 && idx[0] == 1 && idx[1] == 3, "test_some: %zu", k);
    k = shmem_long_wait_until_some_vector(iv, 4, idx, NULL, SHMEM_CMP_EQ, vals);
    CHECK(k == 3 && idx[2] == 3, "wait_until_some_vector: %zu", k);
    CHECK(shmem_long_test_any_vector(iv, 4, NULL, SHMEM_CMP_EQ, vals) == 0, "test_any_vector");
    CHECK(shmem_long_test_all_vector(iv, 4, NULL, SHMEM_CMP_EQ, vals) == 0, "test_all_vector: [2] differs");
    shmem_long_wait_until_all(iv, 4, status, SHMEM_CMP_GT, 0);
    CHECK(shmem_wait_until_any(iv, 4, NULL, SHMEM_CMP_EQ, 2L) == 1, "generic wait_until_any");
    shmem_barrier_all();
    shmem_free(iv);
}

static void atomics(void)
{
    int peer = (me + 1) % n;
    int64_t *w = shmem_calloc(4, sizeof(int64_t));
    int32_t *w32 = shmem_calloc(2, sizeof(int32_t));
    *w32 = 0x0f;
    shmem_barrier_all();
    int64_t f = -1;
    shmem_int64_atomic_fetch_inc_nbi(&f, &w[0], 0);
    shmem_int64_atomic_compare_swap_nbi(&f, &w[1], 0, 5, peer);
    shmem_quiet();
    CHECK(f == 0 || f == 5, "compare_swap_nbi fetched %lld", (long long)f);
    int32_t f32 = -1;
    shmem_atomic_fetch_and_nbi(&f32, w32, 0x3c, me);      /* C11 on int32_t */
    shmem_quiet();
    CHECK(f32 == 0x0f && *w32 == 0x0c, "fetch_and_nbi on int32_t: %d %d", f32, *w32);
    CHECK(shmem_atomic_fetch_or(w32, 0x1, me) == 0x0c && *w32 == 0x0d, "C11 fetch_or on int32_t");
    shmem_atomic_xor(w32, 0x1, me);
    CHECK(*w32 == 0x0c, "C11 xor on int32_t");
    shmem_barrier_all();
    if (me == 0)
        CHECK(w[0] == n, "fetch_inc_nbi total %lld", (long long)w[0]);
    /* deprecated names still in 1.5 */
    CHECK(shmem_int64_swap(&w[2], 9, peer) == 0, "int64_swap old value");
    CHECK(shmem_int32_finc(&w32[1], me) == 0 && w32[1] == 1, "int32_finc");
    shmem_barrier_all();
    CHECK(shmem_int64_fetch(&w[2], me) == 9, "int64_fetch");
    /* the deprecated C11 generic names */
    shmem_add(&w[3], 2L, me);
    CHECK(shmem_fadd(&w[3], 3L, me) == 2 && shmem_finc(&w[3], me) == 5 &&
          shmem_fetch(&w[3], me) == 6, "generic add/fadd/finc/fetch");
    CHECK(shmem_cswap(&w[3], 6L, 1L, me) == 6 && shmem_swap(&w[3], 8L, me) == 1, "generic cswap/swap");
    float *fl = shmem_malloc(sizeof(float));
    shmem_float_set(fl, 2.5f, me);
    CHECK(shmem_float_fetch(fl, me) == 2.5f, "float_set/fetch");
    shmem_clear_cache_inv();
    shmem_udcflush_line(fl);
    shmem_barrier_all();
    shmem_free(w); shmem_free(w32); shmem_free(fl);
}

int main(void)
{
    shmem_init();
    me = shmem_my_pe();
    n = shmem_n_pes();
    int maj = 0, min = 0;
    shmem_info_get_version(&maj, &min);
    CHECK(maj == 1 && min == 5, "version %d.%d", maj, min);
    shmem_pcontrol(1);
    void *h = shmem_malloc_with_hints(64, SHMEM_MALLOC_ATOMICS_REMOTE | SHMEM_MALLOC_SIGNAL_REMOTE);
    CHECK(h != NULL, "malloc_with_hints");
    contexts();
    teams();
    collectives();
    reductions();
    waits();
    atomics();
    shmem_free(h);
    return t_done("t_api");
}
