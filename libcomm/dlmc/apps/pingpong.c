// SPDX-License-Identifier: BSD-3-Clause
/*
 * dlmc_pingpong - the same latency/bandwidth sweep as dlmc_bench, between
 * ranks 0 and 1 of an MPI job, over the DLMC channel or over MPI itself
 * (e.g. Open MPI's TCP BTL):
 *
 *   mpirun -np 2 dlmc_pingpong --transport=dlmc|mpi
 */
#include <stdio.h>
#include <stdlib.h>

#include "p2p.h"
#include "../tools/bench_sizes.h"

int main(int argc, char **argv)
{
	struct p2p p;
	unsigned char *buf, ack = 1;

	p2p_init(&p, &argc, &argv);
	buf = calloc(1, BENCH_MAX);
	if (!buf || p.size != 2) {
		fprintf(stderr, "dlmc_pingpong: needs 2 ranks and %u bytes\n", BENCH_MAX);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	int me = p.rank, other = 1 - p.rank;

	for (size_t s = BENCH_MIN; s <= BENCH_MAX; s *= 4) {
		int iters = bench_iters(s), k = bench_stream(s);
		double t0 = 0, lat, bw;

		for (int i = -1; i < iters; i++) {	/* i = -1: warm-up */
			if (i == 0)
				t0 = MPI_Wtime();
			if (me == 0) {
				p2p_send(&p, other, 1, buf, s);
				p2p_recv(&p, other, 1, buf, s);
			} else {
				p2p_recv(&p, other, 1, buf, s);
				p2p_send(&p, other, 1, buf, s);
			}
		}
		lat = (MPI_Wtime() - t0) / iters / 2;
		t0 = MPI_Wtime();
		for (int i = 0; i < k; i++) {
			if (me == 0)
				p2p_send(&p, other, 2, buf, s);
			else
				p2p_recv(&p, other, 2, buf, s);
		}
		if (me == 0)
			p2p_recv(&p, other, 3, &ack, 1);
		else
			p2p_send(&p, other, 3, &ack, 1);
		bw = (double)s * k / (MPI_Wtime() - t0);
		if (me == 0)
			printf("mpi-%s size=%zu latency_us=%.1f bandwidth_MBps=%.2f\n",
			       p2p_name(&p), s, lat * 1e6, bw / 1e6);
		fflush(stdout);
	}
	free(buf);
	p2p_finalize(&p);
	return 0;
}
