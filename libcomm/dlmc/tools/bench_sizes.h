/* SPDX-License-Identifier: BSD-3-Clause */
/* bench_sizes.h - message sizes and repetition counts shared by the
 * socket-level and MPI-level benchmarks, so their tables line up. */
#ifndef TNBC_DLMC_BENCH_SIZES_H
#define TNBC_DLMC_BENCH_SIZES_H

#include <stddef.h>

#define BENCH_MIN	64
#define BENCH_MAX	(16u << 20)

/* Round trips for the latency of size s (fewer for big messages). */
static inline int bench_iters(size_t s)
{
	size_t n = (1u << 20) / (s ? s : 1);

	return n > 50 ? 50 : n < 2 ? 2 : (int)n;
}

/* Messages streamed back to back for the bandwidth of size s. */
static inline int bench_stream(size_t s)
{
	size_t n = (4u << 20) / (s ? s : 1);

	return n > 100 ? 100 : n < 2 ? 2 : (int)n;
}

#endif
