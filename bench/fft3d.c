// SPDX-License-Identifier: BSD-3-Clause
/* FFT-like kernel (after NPB FT): a 3-D complex FFT of an N^3 grid split in
 * x-slabs over the ranks. Each iteration does the forward transform (y and z
 * FFTs locally, an MPI_Alltoall transpose, the unpack that reads the received
 * blocks in order 0..P-1, then the x FFTs) and the inverse transform (the same
 * way back). Checked: a few spectral coefficients against a direct DFT of the
 * input, and the round trip against the input. */
#include "bench_util.h"

#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef double complex cplx;

struct grid {
    int n, np, rank, nl;   /* nl = n / np: x-planes here, and y-rows after transpose */
    cplx *a;               /* x-slab layout a[xl][y][z] */
    cplx *b;               /* y-slab layout b[yl][z][x] */
    cplx *sbuf, *rbuf;     /* np blocks of nl*nl*n */
    cplx *tw;              /* twiddles e^{-2 pi i k / n}, k < n/2 */
};

static void yz_ffts(struct grid *g, int sign)
{
    size_t n = (size_t)g->n;
    for (int xl = 0; xl < g->nl; xl++) {
        cplx *p = g->a + (size_t)xl * n * n;
        for (size_t y = 0; y < n; y++)
            bench_fft(p + y * n, g->n, 1, sign, g->tw);
        for (size_t z = 0; z < n; z++)
            bench_fft(p + z, g->n, n, sign, g->tw);
    }
}

/* a[xl][y][z] -> sbuf[q][xl][yl][z], y = q*nl + yl */
static void pack_a(struct grid *g)
{
    size_t n = (size_t)g->n, nl = (size_t)g->nl, blk = nl * nl * n;
    for (int q = 0; q < g->np; q++)
        for (size_t xl = 0; xl < nl; xl++)
            memcpy(g->sbuf + q * blk + xl * nl * n, g->a + xl * n * n + (size_t)q * nl * n,
                   sizeof(cplx) * nl * n);
}

/* rbuf[p][xl][yl][z] -> b[yl][z][x], x = p*nl + xl, blocks read in order 0..P-1 */
static void unpack_b(struct grid *g)
{
    size_t n = (size_t)g->n, nl = (size_t)g->nl, blk = nl * nl * n;
    for (int p = 0; p < g->np; p++) {
        const cplx *r = g->rbuf + p * blk;
        for (size_t xl = 0; xl < nl; xl++)
            for (size_t yl = 0; yl < nl; yl++)
                for (size_t z = 0; z < n; z++)
                    g->b[(yl * n + z) * n + (size_t)p * nl + xl] = r[(xl * nl + yl) * n + z];
    }
}

/* b[yl][z][x] -> sbuf[p][yl][z][xl], x = p*nl + xl */
static void pack_b(struct grid *g)
{
    size_t n = (size_t)g->n, nl = (size_t)g->nl, blk = nl * nl * n;
    for (int p = 0; p < g->np; p++)
        for (size_t yz = 0; yz < nl * n; yz++)
            memcpy(g->sbuf + p * blk + yz * nl, g->b + yz * n + (size_t)p * nl, sizeof(cplx) * nl);
}

/* rbuf[q][yl][z][xl] -> a[xl][y][z], y = q*nl + yl, blocks read in order 0..P-1 */
static void unpack_a(struct grid *g)
{
    size_t n = (size_t)g->n, nl = (size_t)g->nl, blk = nl * nl * n;
    for (int q = 0; q < g->np; q++) {
        const cplx *r = g->rbuf + q * blk;
        for (size_t yl = 0; yl < nl; yl++)
            for (size_t z = 0; z < n; z++)
                for (size_t xl = 0; xl < nl; xl++)
                    g->a[(xl * n + (size_t)q * nl + yl) * n + z] = r[(yl * n + z) * nl + xl];
    }
}

static double transpose(struct grid *g)
{
    int cnt = g->nl * g->nl * g->n * 2;
    double t0 = bench_now();
    MPI_Alltoall(g->sbuf, cnt, MPI_DOUBLE, g->rbuf, cnt, MPI_DOUBLE, MPI_COMM_WORLD);
    return bench_now() - t0;
}

static void fill_input(struct grid *g)
{
    size_t n = (size_t)g->n;
    for (int xl = 0; xl < g->nl; xl++)
        for (size_t y = 0; y < n; y++)
            for (size_t z = 0; z < n; z++)
                g->a[((size_t)xl * n + y) * n + z] = bench_fft_input(g->rank * g->nl + xl, (int)y, (int)z);
}

/* Direct DFT of the input at (kx, ky, kz) compared with the transform's value. */
static int check_coefficient(struct grid *g, int kx, int ky, int kz)
{
    int n = g->n;
    double part[4] = { 0, 0, 0, 0 }, sum[4];
    for (int xl = 0; xl < g->nl; xl++) {
        int x = g->rank * g->nl + xl;
        for (int y = 0; y < n; y++)
            for (int z = 0; z < n; z++) {
                long ph = ((long)kx * x + (long)ky * y + (long)kz * z) % n;
                cplx v = bench_fft_input(x, y, z) * cexp(-2 * M_PI * I * (double)ph / n);
                part[0] += creal(v);
                part[1] += cimag(v);
            }
    }
    if (ky / g->nl == g->rank) {
        cplx got = g->b[((size_t)(ky % g->nl) * (size_t)n + (size_t)kz) * (size_t)n + (size_t)kx];
        part[2] = creal(got);
        part[3] = cimag(got);
    }
    MPI_Allreduce(part, sum, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    double err = cabs((sum[0] + I * sum[1]) - (sum[2] + I * sum[3]));
    return err <= 1e-6 * sqrt((double)n * n * n);
}

static int check_roundtrip(struct grid *g)
{
    size_t n = (size_t)g->n, total = (size_t)g->nl * n * n;
    double scale = 1.0 / ((double)n * (double)n * (double)n), worst = 0;
    for (size_t i = 0; i < total; i++) {
        size_t xl = i / (n * n), y = i / n % n, z = i % n;
        double e = cabs(g->a[i] * scale - bench_fft_input(g->rank * g->nl + (int)xl, (int)y, (int)z));
        if (!(e <= worst)) /* also catches NaN */
            worst = isnan(e) ? INFINITY : e;
    }
    return worst <= 1e-9;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    struct grid g = { .n = 64 };
    struct bench_common c = { .iters = 3, .warmup = 1 };
    MPI_Comm_rank(MPI_COMM_WORLD, &g.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g.np);
    for (int i = 1; i < argc; i++) {
        if (bench_common_arg(argc, argv, &i, &c))
            continue;
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--n")) g.n = (int)bench_parse_long(a, v, 2, 1024);
        else bench_usage_error("usage: fft3d [--n N] [--iters N] [--warmup N] [--corrupt]");
        i++;
    }
    if (g.n & (g.n - 1) || g.n % g.np)
        bench_usage_error("--n must be a power of two divisible by the %d ranks, got %d", g.np, g.n);
    g.nl = g.n / g.np;
    size_t n = (size_t)g.n, cells = (size_t)g.nl * n * n;
    g.a = bench_alloc(sizeof(cplx) * cells);
    g.b = bench_alloc(sizeof(cplx) * cells);
    g.sbuf = bench_alloc(sizeof(cplx) * cells);
    g.rbuf = bench_alloc(sizeof(cplx) * cells);
    g.tw = bench_fft_twiddles(g.n);

    struct bench_times t = bench_times_new(c.iters);
    int ok = 1;
    for (long it = -c.warmup; it < c.iters; it++) {
        fill_input(&g);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = bench_now(), coll = 0;
        yz_ffts(&g, -1);
        pack_a(&g);
        coll += transpose(&g);
        if (c.corrupt && it == 0 && g.rank == g.np - 1)
            ((uint64_t *)g.rbuf)[0] ^= 1ull << 61;
        unpack_b(&g);
        for (size_t yz = 0; yz < (size_t)g.nl * n; yz++)
            bench_fft(g.b + yz * n, g.n, 1, -1, g.tw);
        double t_fwd = bench_now();
        /* Untimed: the spectrum at a few points against a direct DFT. */
        int ck = check_coefficient(&g, 1, 0, 0) & check_coefficient(&g, 0, g.n - 1, 2) &
                 check_coefficient(&g, 3, g.n / 2, 1) & check_coefficient(&g, g.n - 1, 1, g.n - 1);
        double t1 = bench_now();
        for (size_t yz = 0; yz < (size_t)g.nl * n; yz++)
            bench_fft(g.b + yz * n, g.n, 1, +1, g.tw);
        pack_b(&g);
        coll += transpose(&g);
        unpack_a(&g);
        yz_ffts(&g, +1);
        double t2 = bench_now();
        ok &= ck & check_roundtrip(&g);
        bench_times_put(&t, it, coll, (t_fwd - t0) + (t2 - t1));
    }
    char extra[96];
    snprintf(extra, sizeof extra, "variant=plain n=%d", g.n);
    int rc = bench_report("fft3d", extra, &t, ok, MPI_COMM_WORLD);
    if (!ok)
        fprintf(stderr, "fft3d: rank %d: spectrum or round trip wrong\n", g.rank);
    free(g.a); free(g.b); free(g.sbuf); free(g.rbuf); free(g.tw);
    bench_times_free(&t);
    MPI_Finalize();
    return rc;
}
