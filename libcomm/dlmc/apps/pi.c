// SPDX-License-Identifier: BSD-3-Clause
/*
 * dlmc_pi - computes pi by the midpoint rule on 4/(1+x^2), the design's
 * short-message application: rank 0 sends each rank the interval count,
 * ranks send back one double.  Run time is mostly message latency.
 *
 *   mpirun -np P dlmc_pi [--transport=dlmc|mpi] [-r REPEATS] N...
 *
 * Prints one line per N; exits non-zero if a result is wrong.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "p2p.h"

enum { TAG_N = 1, TAG_SUM = 2 };

static double partial(long n, int rank, int size)
{
	double h = 1.0 / (double)n, s = 0.0;

	for (long i = rank; i < n; i += size) {
		double x = h * ((double)i + 0.5);

		s += 4.0 / (1.0 + x * x);
	}
	return s * h;
}

/* One computation of pi with n intervals; rank 0 returns the value. */
static double pi_once(struct p2p *p, long n)
{
	double sum, part;

	if (p->rank == 0) {
		for (int r = 1; r < p->size; r++)
			p2p_send(p, r, TAG_N, &n, sizeof(n));
		sum = partial(n, 0, p->size);
		for (int r = 1; r < p->size; r++) {
			p2p_recv(p, r, TAG_SUM, &part, sizeof(part));
			sum += part;
		}
		return sum;
	}
	p2p_recv(p, 0, TAG_N, &n, sizeof(n));
	part = partial(n, p->rank, p->size);
	p2p_send(p, 0, TAG_SUM, &part, sizeof(part));
	return 0;
}

int main(int argc, char **argv)
{
	struct p2p p;
	long reps;
	int bad = 0;

	p2p_init(&p, &argc, &argv);
	for (int a = p2p_options(argc, argv, &reps, 10); a < argc; a++) {
		long n = p2p_count(argv[a]);
		double pi = 0, t0, t;

		MPI_Barrier(MPI_COMM_WORLD);
		t0 = MPI_Wtime();
		for (long k = 0; k < reps; k++)
			pi = pi_once(&p, n);
		t = (MPI_Wtime() - t0) / (double)reps;
		if (p.rank == 0) {
			double err = fabs(pi - M_PI);

			printf("pi transport=%s ranks=%d n=%ld pi=%.12f err=%.2e time_us=%.1f\n",
			       p2p_name(&p), p.size, n, pi, err, t * 1e6);
			if (err > 1.0 / (double)n)
				bad = 1;
		}
	}
	p2p_finalize(&p);
	return bad;
}
