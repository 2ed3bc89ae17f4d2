/* SPDX-License-Identifier: BSD-3-Clause */
/* Helpers shared by the benchmark applications: clock, busy work, argument
 * parsing, access orders, data pattern and the machine-readable result line.
 * The applications are plain MPI programs; nothing here knows about tnbc. */
#ifndef BENCH_UTIL_H
#define BENCH_UTIL_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

double bench_now(void);
/* CPU time of the calling thread, seconds. */
double bench_cpu_now(void);

/* Fixed work: spin until this thread has spent `us` microseconds of CPU in
 * the loop, without touching memory. Time the thread waits or loses to
 * other threads (a progress thread, the kernel's network work) does not
 * count, so it lengthens the work as it would real computation. Calls
 * `poll(arg)` about every `poll_us` microseconds of wall time when given
 * (e.g. MPI_Test); the CPU time spent in it does not count as work. */
void bench_busy_us(double us, void (*poll)(void *), void *arg, double poll_us);

/* Strict number parsing: exits the program with a one-line error on bad input. */
long bench_parse_long(const char *opt, const char *s, long lo, long hi);
double bench_parse_double(const char *opt, const char *s, double lo, double hi);

/* Fill order[0..n) from "fwd", "rev", "perm" (fixed pseudo-random, the same
 * on every rank) or an explicit list "3,1,2,0". Returns 0, or -1 with a
 * message in err when the spec is not a permutation of 0..n-1. */
int bench_order(const char *spec, int n, int *order, char *err, size_t errlen);

/* Deterministic 64-bit value for (a, b, c): the data every rank sends. */
static inline uint64_t bench_pattern(uint64_t a, uint64_t b, uint64_t c)
{
    uint64_t x = a * 0x9E3779B97F4A7C15ull ^ (b + 0x632BE59BD9B4E019ull) * 0xC2B2AE3D27D4EB4Full;
    x ^= c + 0x165667B19E3779F9ull + (x << 6) + (x >> 2);
    x ^= x >> 31; x *= 0xBF58476D1CE4E5B9ull; x ^= x >> 29;
    return x;
}

/* Per-iteration times of this rank; bench_report reduces them (max over
 * ranks per iteration, then mean and min over iterations) and rank 0 prints
 *   RESULT app=NAME <extra> np=P iters=I t_coll=S t_total=S t_total_min=S check=ok|fail
 * Returns the process exit status (0 when every rank's check passed). */
struct bench_times {
    int iters;
    double *coll;   /* time in the collective phase, per iteration */
    double *total;  /* collective + computation after it, per iteration */
};
struct bench_times bench_times_new(long iters);
void bench_times_free(struct bench_times *t);

/* Record iteration `it` (negative: a warm-up iteration, not recorded). */
static inline void bench_times_put(struct bench_times *t, long it, double coll, double total)
{
    if (it >= 0 && it < t->iters) {
        t->coll[it] = coll;
        t->total[it] = total;
    }
}

/* Options every application takes: --iters N, --warmup N, --corrupt. */
struct bench_common {
    long iters, warmup;
    int corrupt;
};

/* When argv[*i] is a common option, consume it (and its value: *i advances)
 * and return 1; else return 0. */
int bench_common_arg(int argc, char **argv, int *i, struct bench_common *c);

int bench_report(const char *app, const char *extra, const struct bench_times *t,
                 int check_ok, MPI_Comm comm);

/* Bad command line (the same on every rank): rank 0 prints one line, every
 * rank finalizes and exits with status 2. */
void bench_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* Failure on one rank (no memory): print one line and abort the job. */
void bench_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

void *bench_alloc(size_t bytes);

/* The FFT kernel of fft3d and pencil, in double _Complex (this header does
 * not include <complex.h>, whose macro I would reach every application).
 * bench_fft: in-place radix-2 FFT of v[0], v[s], ..., v[(n-1)s] (n a power
 * of two); sign -1 forward, +1 inverse (unscaled); tw from
 * bench_fft_twiddles(n). */
void bench_fft(double _Complex *v, int n, size_t s, int sign, const double _Complex *tw);
/* e^{-2 pi i k / n} for k <= n/2, allocated (bench_alloc; free() it). */
double _Complex *bench_fft_twiddles(int n);
/* The input grid's value at (x, y, z): the same on every rank. */
double _Complex bench_fft_input(int x, int y, int z);

#endif
