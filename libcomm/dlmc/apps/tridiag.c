// SPDX-License-Identifier: BSD-3-Clause
/*
 * dlmc_tridiag - solves a diagonally dominant tridiagonal system of N
 * unknowns on P ranks, the design's long-message application.  Rank 0
 * holds the system; it sends each rank its block of the four bands (long
 * messages), each rank solves its block for three right-hand sides (data,
 * left and right coupling), rank 0 solves the 2P reduced system of block
 * end values and returns them, and the ranks send their solution blocks
 * back (long messages).  Rank 0 checks the answer against the known one.
 *
 *   mpirun -np P dlmc_tridiag [--transport=dlmc|mpi] [-r REPEATS] N...
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "p2p.h"

enum { TAG_BANDS = 10, TAG_ENDS = 11, TAG_COUPLE = 12, TAG_X = 13 };

struct block {
	long lo, m;			/* first row, rows */
	double *a, *b, *c, *d;		/* bands and right-hand side */
	double *y, *u, *v;		/* local solutions */
};

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p) {
		fprintf(stderr, "dlmc_tridiag: out of memory\n");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	return p;
}

static void block_range(long n, int size, int r, long *lo, long *m)
{
	long q = n / size, rem = n % size;

	*lo = r * q + (r < rem ? r : rem);
	*m = q + (r < rem);
}

static double x_true(long i) { return sin(0.001 * (double)i) + 1.0; }

/* Rank 0: the whole system, with d = A * x_true. */
static void make_system(long n, double *a, double *b, double *c, double *d)
{
	for (long i = 0; i < n; i++) {
		a[i] = i ? -1.0 : 0.0;
		c[i] = i + 1 < n ? -1.0 : 0.0;
		b[i] = 4.0 + 0.5 * cos((double)i);
	}
	for (long i = 0; i < n; i++)
		d[i] = b[i] * x_true(i) + (i ? a[i] * x_true(i - 1) : 0) +
		       (i + 1 < n ? c[i] * x_true(i + 1) : 0);
}

/* Thomas algorithm on the block for three right-hand sides at once. */
static void block_solve(struct block *k)
{
	long m = k->m;
	double *cp = xmalloc(m * sizeof(double));

	for (long i = 0; i < m; i++) {
		k->u[i] = 0;
		k->v[i] = 0;
		k->y[i] = k->d[i];
	}
	k->u[0] = -k->a[0];		/* coupling to the previous block */
	k->v[m - 1] = -k->c[m - 1];	/* coupling to the next block */
	for (long i = 0; i < m; i++) {
		double sub = i ? k->a[i] : 0.0;
		double den = k->b[i] - (i ? sub * cp[i - 1] : 0.0);

		cp[i] = i + 1 < m ? k->c[i] / den : 0.0;
		if (i) {
			k->y[i] -= sub * k->y[i - 1];
			k->u[i] -= sub * k->u[i - 1];
			k->v[i] -= sub * k->v[i - 1];
		}
		k->y[i] /= den;
		k->u[i] /= den;
		k->v[i] /= den;
	}
	for (long i = m - 2; i >= 0; i--) {
		k->y[i] -= cp[i] * k->y[i + 1];
		k->u[i] -= cp[i] * k->u[i + 1];
		k->v[i] -= cp[i] * k->v[i + 1];
	}
	free(cp);
}

/* Gaussian elimination with partial pivoting on a small dense system. */
static void dense_solve(int n, double *M, double *rhs)
{
	for (int col = 0; col < n; col++) {
		int piv = col;

		for (int r = col + 1; r < n; r++)
			if (fabs(M[r * n + col]) > fabs(M[piv * n + col]))
				piv = r;
		for (int j = 0; j < n; j++) {
			double t = M[col * n + j];

			M[col * n + j] = M[piv * n + j];
			M[piv * n + j] = t;
		}
		double t = rhs[col];

		rhs[col] = rhs[piv];
		rhs[piv] = t;
		for (int r = col + 1; r < n; r++) {
			double f = M[r * n + col] / M[col * n + col];

			for (int j = col; j < n; j++)
				M[r * n + j] -= f * M[col * n + j];
			rhs[r] -= f * rhs[col];
		}
	}
	for (int r = n - 1; r >= 0; r--) {
		for (int j = r + 1; j < n; j++)
			rhs[r] -= M[r * n + j] * rhs[j];
		rhs[r] /= M[r * n + r];
	}
}

/*
 * Unknowns f_p (first value of block p) and l_p (last):
 *   f_p = y0 + u0 l_{p-1} + v0 f_{p+1},  l_p = ym + um l_{p-1} + vm f_{p+1}.
 * ends[6p..6p+5] = y0 ym u0 um v0 vm of block p.  Returns z = (f_0 l_0 ...).
 */
static double *reduced_solve(int P, const double *ends)
{
	int n = 2 * P;
	double *M = calloc((size_t)n * n, sizeof(double)), *z = xmalloc(n * sizeof(double));

	for (int p = 0; p < P; p++) {
		const double *e = ends + 6 * p;

		for (int k = 0; k < 2; k++) {
			int row = 2 * p + k;

			M[row * n + row] = 1.0;
			z[row] = e[k];
			if (p > 0)
				M[row * n + 2 * p - 1] -= e[2 + k];
			if (p + 1 < P)
				M[row * n + 2 * p + 2] -= e[4 + k];
		}
	}
	dense_solve(n, M, z);
	free(M);
	return z;
}

static void block_alloc(struct block *k)
{
	double *all = xmalloc(7 * k->m * sizeof(double));

	k->a = all;
	k->b = all + k->m;
	k->c = all + 2 * k->m;
	k->d = all + 3 * k->m;
	k->y = all + 4 * k->m;
	k->u = all + 5 * k->m;
	k->v = all + 6 * k->m;
}

/* One distributed solve; on rank 0, x receives the solution. */
static void solve(struct p2p *p, long n, double *A, double *x)
{
	struct block k;
	double ends[6], couple[2] = { 0, 0 };

	block_range(n, p->size, p->rank, &k.lo, &k.m);
	block_alloc(&k);
	if (p->rank == 0) {
		for (int r = 1; r < p->size; r++) {
			long lo, m;

			block_range(n, p->size, r, &lo, &m);
			for (int band = 0; band < 4; band++)
				p2p_send(p, r, TAG_BANDS, A + band * n + lo, m * sizeof(double));
		}
		for (int band = 0; band < 4; band++)
			memcpy(k.a + band * k.m, A + band * n, k.m * sizeof(double));
	} else {
		for (int band = 0; band < 4; band++)
			p2p_recv(p, 0, TAG_BANDS, k.a + band * k.m, k.m * sizeof(double));
	}
	block_solve(&k);
	ends[0] = k.y[0]; ends[1] = k.y[k.m - 1];
	ends[2] = k.u[0]; ends[3] = k.u[k.m - 1];
	ends[4] = k.v[0]; ends[5] = k.v[k.m - 1];
	if (p->rank == 0) {
		double *all = xmalloc(6 * p->size * sizeof(double)), *z;

		memcpy(all, ends, sizeof(ends));
		for (int r = 1; r < p->size; r++)
			p2p_recv(p, r, TAG_ENDS, all + 6 * r, sizeof(ends));
		z = reduced_solve(p->size, all);
		for (int r = 1; r < p->size; r++) {
			double cr[2] = { z[2 * r - 1], r + 1 < p->size ? z[2 * r + 2] : 0 };

			p2p_send(p, r, TAG_COUPLE, cr, sizeof(cr));
		}
		couple[1] = p->size > 1 ? z[2] : 0;
		free(all);
		free(z);
	} else {
		p2p_send(p, 0, TAG_ENDS, ends, sizeof(ends));
		p2p_recv(p, 0, TAG_COUPLE, couple, sizeof(couple));
	}
	for (long i = 0; i < k.m; i++)
		k.y[i] += k.u[i] * couple[0] + k.v[i] * couple[1];
	if (p->rank == 0) {
		memcpy(x, k.y, k.m * sizeof(double));
		for (int r = 1; r < p->size; r++) {
			long lo, m;

			block_range(n, p->size, r, &lo, &m);
			p2p_recv(p, r, TAG_X, x + lo, m * sizeof(double));
		}
	} else {
		p2p_send(p, 0, TAG_X, k.y, k.m * sizeof(double));
	}
	free(k.a);
}

static int run_size(struct p2p *p, long n, long reps)
{
	double *A = NULL, *x = NULL, t0, t, err = 0;

	if (n < 2L * p->size) {
		if (p->rank == 0)
			fprintf(stderr, "dlmc_tridiag: N=%ld needs at least 2 rows per rank\n", n);
		return 1;
	}
	if (p->rank == 0) {
		A = xmalloc(4 * n * sizeof(double));
		x = xmalloc(n * sizeof(double));
		make_system(n, A, A + n, A + 2 * n, A + 3 * n);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	for (long r = 0; r < reps; r++)
		solve(p, n, A, x);
	t = (MPI_Wtime() - t0) / (double)reps;
	if (p->rank == 0) {
		for (long i = 0; i < n; i++)
			err = fmax(err, fabs(x[i] - x_true(i)));
		printf("tridiag transport=%s ranks=%d n=%ld bytes_moved=%ld max_err=%.2e time_ms=%.2f\n",
		       p2p_name(p), p->size, n, 5 * n * (long)sizeof(double), err, t * 1e3);
	}
	free(A);
	free(x);
	return p->rank == 0 && !(err < 1e-9);
}

int main(int argc, char **argv)
{
	struct p2p p;
	long reps;
	int bad = 0;

	p2p_init(&p, &argc, &argv);
	for (int a = p2p_options(argc, argv, &reps, 3); a < argc; a++)
		bad |= run_size(&p, p2p_count(argv[a]), reps);
	p2p_finalize(&p);
	return bad;
}
