// SPDX-License-Identifier: BSD-3-Clause
/* 3-D FFT with a 2-D (pencil) decomposition, as in NAS FT and P3DFFT: the
 * ranks form a PR x PC grid (rank = row * PC + col); an N^3 complex grid is
 * held as z-pencils (x split over the grid's rows, y over its columns). The
 * forward transform does the z FFTs, a transpose on the row communicator
 * (z-pencils -> y-pencils), the y FFTs, a transpose on the column
 * communicator (-> x-pencils) and the x FFTs; the inverse goes back the same
 * way. Both transposes are MPI_Alltoall on communicators from
 * MPI_Comm_split, through one function (one call site). The unpacks read the
 * received blocks in order 0..P-1. Checked: 4 spectral coefficients against
 * a direct DFT of the input, and the round trip against the input. */
#include "bench_util.h"

#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef double complex cplx;

struct grid {
    int n, pr, pc, r, c;   /* grid size, process grid, my row and column */
    size_t nx, ny, nz, ny2; /* n/pr x-planes, n/pc y-rows (stage 1); n/pc z (2); n/pr y (3) */
    MPI_Comm row, col;      /* same row (size pc), same column (size pr) */
    cplx *a;                /* z-pencils a[xl][yl][z] */
    cplx *b;                /* y-pencils b[xl][zl][y] */
    cplx *x;                /* x-pencils x[zl][yl2][x] */
    cplx *sbuf, *rbuf;
    cplx *tw;               /* twiddles e^{-2 pi i k / n}, k <= n/2 */
};

/* FFTs of `count` contiguous lines of length n. */
static void lines(cplx *p, size_t count, int n, int sign, const cplx *tw)
{
    for (size_t l = 0; l < count; l++)
        bench_fft(p + l * (size_t)n, n, 1, sign, tw);
}

/* One function for both transposes: one call site, two communicators. */
static double transpose(struct grid *g, MPI_Comm comm, int parts)
{
    size_t local = g->nx * g->ny * (size_t)g->n;
    int cnt = (int)(local / (size_t)parts * 2);
    double t0 = bench_now();
    MPI_Alltoall(g->sbuf, cnt, MPI_DOUBLE, g->rbuf, cnt, MPI_DOUBLE, comm);
    return bench_now() - t0;
}

/* a[xl][yl][z] -> sbuf[c'][xl][yl][zl], z = c'*nz + zl */
static void pack_a(struct grid *g)
{
    size_t n = (size_t)g->n, blk = g->nx * g->ny * g->nz;
    for (int q = 0; q < g->pc; q++)
        for (size_t xy = 0; xy < g->nx * g->ny; xy++)
            memcpy(g->sbuf + q * blk + xy * g->nz, g->a + xy * n + (size_t)q * g->nz,
                   sizeof(cplx) * g->nz);
}

/* rbuf[c'][xl][yl][zl] -> b[xl][zl][y], y = c'*ny + yl */
static void unpack_b(struct grid *g)
{
    size_t n = (size_t)g->n, blk = g->nx * g->ny * g->nz;
    for (int q = 0; q < g->pc; q++) {
        const cplx *r = g->rbuf + q * blk;
        for (size_t xl = 0; xl < g->nx; xl++)
            for (size_t yl = 0; yl < g->ny; yl++)
                for (size_t zl = 0; zl < g->nz; zl++)
                    g->b[(xl * g->nz + zl) * n + (size_t)q * g->ny + yl] = r[(xl * g->ny + yl) * g->nz + zl];
    }
}

/* b[xl][zl][y] -> sbuf[r'][xl][zl][yl2], y = r'*ny2 + yl2 */
static void pack_b(struct grid *g)
{
    size_t n = (size_t)g->n, blk = g->nx * g->nz * g->ny2;
    for (int q = 0; q < g->pr; q++)
        for (size_t xz = 0; xz < g->nx * g->nz; xz++)
            memcpy(g->sbuf + q * blk + xz * g->ny2, g->b + xz * n + (size_t)q * g->ny2,
                   sizeof(cplx) * g->ny2);
}

/* rbuf[r'][xl][zl][yl2] -> x[zl][yl2][xg], xg = r'*nx + xl */
static void unpack_x(struct grid *g)
{
    size_t n = (size_t)g->n, blk = g->nx * g->nz * g->ny2;
    for (int q = 0; q < g->pr; q++) {
        const cplx *r = g->rbuf + q * blk;
        for (size_t xl = 0; xl < g->nx; xl++)
            for (size_t zl = 0; zl < g->nz; zl++)
                for (size_t yl = 0; yl < g->ny2; yl++)
                    g->x[(zl * g->ny2 + yl) * n + (size_t)q * g->nx + xl] = r[(xl * g->nz + zl) * g->ny2 + yl];
    }
}

/* x[zl][yl2][xg] -> sbuf[r'][zl][yl2][xl], xg = r'*nx + xl */
static void pack_x(struct grid *g)
{
    size_t n = (size_t)g->n, blk = g->nx * g->nz * g->ny2;
    for (int q = 0; q < g->pr; q++)
        for (size_t zy = 0; zy < g->nz * g->ny2; zy++)
            memcpy(g->sbuf + q * blk + zy * g->nx, g->x + zy * n + (size_t)q * g->nx,
                   sizeof(cplx) * g->nx);
}

/* rbuf[r'][zl][yl2][xl] -> b[xl][zl][y], y = r'*ny2 + yl2 */
static void unpack_xb(struct grid *g)
{
    size_t n = (size_t)g->n, blk = g->nx * g->nz * g->ny2;
    for (int q = 0; q < g->pr; q++) {
        const cplx *r = g->rbuf + q * blk;
        for (size_t zl = 0; zl < g->nz; zl++)
            for (size_t yl = 0; yl < g->ny2; yl++)
                for (size_t xl = 0; xl < g->nx; xl++)
                    g->b[(xl * g->nz + zl) * n + (size_t)q * g->ny2 + yl] = r[(zl * g->ny2 + yl) * g->nx + xl];
    }
}

/* b[xl][zl][y] -> sbuf[c'][xl][zl][yl], y = c'*ny + yl */
static void pack_ba(struct grid *g)
{
    size_t n = (size_t)g->n, blk = g->nx * g->ny * g->nz;
    for (int q = 0; q < g->pc; q++)
        for (size_t xz = 0; xz < g->nx * g->nz; xz++)
            memcpy(g->sbuf + q * blk + xz * g->ny, g->b + xz * n + (size_t)q * g->ny,
                   sizeof(cplx) * g->ny);
}

/* rbuf[c'][xl][zl][yl] -> a[xl][yl][z], z = c'*nz + zl */
static void unpack_a(struct grid *g)
{
    size_t n = (size_t)g->n, blk = g->nx * g->ny * g->nz;
    for (int q = 0; q < g->pc; q++) {
        const cplx *r = g->rbuf + q * blk;
        for (size_t xl = 0; xl < g->nx; xl++)
            for (size_t zl = 0; zl < g->nz; zl++)
                for (size_t yl = 0; yl < g->ny; yl++)
                    g->a[(xl * g->ny + yl) * n + (size_t)q * g->nz + zl] = r[(xl * g->nz + zl) * g->ny + yl];
    }
}

static void fill_input(struct grid *g)
{
    size_t n = (size_t)g->n;
    for (size_t xl = 0; xl < g->nx; xl++)
        for (size_t yl = 0; yl < g->ny; yl++)
            for (size_t z = 0; z < n; z++)
                g->a[(xl * g->ny + yl) * n + z] =
                    bench_fft_input(g->r * (int)g->nx + (int)xl, g->c * (int)g->ny + (int)yl, (int)z);
}

/* Direct DFT of the input at (kx, ky, kz) compared with the transform's value. */
static int check_coefficient(struct grid *g, int kx, int ky, int kz)
{
    int n = g->n;
    double part[4] = { 0, 0, 0, 0 }, sum[4];
    for (int xl = 0; xl < (int)g->nx; xl++)
        for (int yl = 0; yl < (int)g->ny; yl++)
            for (int z = 0; z < n; z++) {
                int x = g->r * (int)g->nx + xl, y = g->c * (int)g->ny + yl;
                long ph = ((long)kx * x + (long)ky * y + (long)kz * z) % n;
                cplx v = bench_fft_input(x, y, z) * cexp(-2 * M_PI * I * (double)ph / n);
                part[0] += creal(v);
                part[1] += cimag(v);
            }
    if ((size_t)ky / g->ny2 == (size_t)g->r && (size_t)kz / g->nz == (size_t)g->c) {
        size_t zl = (size_t)kz % g->nz, yl = (size_t)ky % g->ny2;
        cplx got = g->x[(zl * g->ny2 + yl) * (size_t)n + (size_t)kx];
        part[2] = creal(got);
        part[3] = cimag(got);
    }
    MPI_Allreduce(part, sum, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    double err = cabs((sum[0] + I * sum[1]) - (sum[2] + I * sum[3]));
    return err <= 1e-6 * sqrt((double)n * n * n);
}

static int check_roundtrip(struct grid *g)
{
    size_t n = (size_t)g->n, total = g->nx * g->ny * n;
    double scale = 1.0 / ((double)n * (double)n * (double)n), worst = 0;
    for (size_t i = 0; i < total; i++) {
        size_t xl = i / (g->ny * n), yl = i / n % g->ny, z = i % n;
        double e = cabs(g->a[i] * scale - bench_fft_input(g->r * (int)g->nx + (int)xl,
                                                g->c * (int)g->ny + (int)yl, (int)z));
        if (!(e <= worst)) /* also catches NaN */
            worst = isnan(e) ? INFINITY : e;
    }
    return worst <= 1e-9;
}

/* The most square PR x PC grid with PR <= PC. */
static void grid_shape(int np, int *pr, int *pc)
{
    *pr = 1;
    for (int d = 1; d * d <= np; d++)
        if (np % d == 0)
            *pr = d;
    *pc = np / *pr;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    struct grid g = { .n = 64 };
    struct bench_common c = { .iters = 3, .warmup = 1 };
    int rank, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    for (int i = 1; i < argc; i++) {
        if (bench_common_arg(argc, argv, &i, &c))
            continue;
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--n")) g.n = (int)bench_parse_long(a, v, 2, 1024);
        else bench_usage_error("usage: pencil [--n N] [--iters N] [--warmup N] [--corrupt]");
        i++;
    }
    grid_shape(np, &g.pr, &g.pc);
    if (g.n & (g.n - 1) || g.n % g.pc || g.n % g.pr)
        bench_usage_error("--n must be a power of two divisible by the %dx%d process grid, got %d",
                          g.pr, g.pc, g.n);
    g.r = rank / g.pc;
    g.c = rank % g.pc;
    g.nx = g.ny2 = (size_t)(g.n / g.pr);
    g.ny = g.nz = (size_t)(g.n / g.pc);
    MPI_Comm_split(MPI_COMM_WORLD, g.r, g.c, &g.row);
    MPI_Comm_split(MPI_COMM_WORLD, g.c, g.r, &g.col);
    size_t n = (size_t)g.n, cells = g.nx * g.ny * n;
    g.a = bench_alloc(sizeof(cplx) * cells);
    g.b = bench_alloc(sizeof(cplx) * cells);
    g.x = bench_alloc(sizeof(cplx) * cells);
    g.sbuf = bench_alloc(sizeof(cplx) * cells);
    g.rbuf = bench_alloc(sizeof(cplx) * cells);
    g.tw = bench_fft_twiddles(g.n);

    struct bench_times t = bench_times_new(c.iters);
    int ok = 1;
    for (long it = -c.warmup; it < c.iters; it++) {
        fill_input(&g);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = bench_now(), coll = 0;
        lines(g.a, g.nx * g.ny, g.n, -1, g.tw);
        pack_a(&g);
        coll += transpose(&g, g.row, g.pc);
        unpack_b(&g);
        lines(g.b, g.nx * g.nz, g.n, -1, g.tw);
        pack_b(&g);
        coll += transpose(&g, g.col, g.pr);
        if (c.corrupt && it == 0 && rank == np - 1)
            ((uint64_t *)g.rbuf)[0] ^= 1ull << 61;
        unpack_x(&g);
        lines(g.x, g.nz * g.ny2, g.n, -1, g.tw);
        double t_fwd = bench_now();
        /* Untimed: the spectrum at a few points against a direct DFT. */
        int ck = check_coefficient(&g, 1, 0, 0) & check_coefficient(&g, 0, g.n - 1, 2) &
                 check_coefficient(&g, 3, g.n / 2, 1) & check_coefficient(&g, g.n - 1, 1, g.n - 1);
        double t1 = bench_now();
        lines(g.x, g.nz * g.ny2, g.n, +1, g.tw);
        pack_x(&g);
        coll += transpose(&g, g.col, g.pr);
        unpack_xb(&g);
        lines(g.b, g.nx * g.nz, g.n, +1, g.tw);
        pack_ba(&g);
        coll += transpose(&g, g.row, g.pc);
        unpack_a(&g);
        lines(g.a, g.nx * g.ny, g.n, +1, g.tw);
        double t2 = bench_now();
        ok &= ck & check_roundtrip(&g);
        bench_times_put(&t, it, coll, (t_fwd - t0) + (t2 - t1));
    }
    char extra[96];
    snprintf(extra, sizeof extra, "variant=plain n=%d grid=%dx%d", g.n, g.pr, g.pc);
    int rc = bench_report("pencil", extra, &t, ok, MPI_COMM_WORLD);
    if (!ok)
        fprintf(stderr, "pencil: rank %d: spectrum or round trip wrong\n", rank);
    MPI_Comm_free(&g.row);
    MPI_Comm_free(&g.col);
    free(g.a); free(g.b); free(g.x); free(g.sbuf); free(g.rbuf); free(g.tw);
    bench_times_free(&t);
    MPI_Finalize();
    return rc;
}
