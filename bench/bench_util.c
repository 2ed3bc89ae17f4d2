// SPDX-License-Identifier: BSD-3-Clause
/* Helpers shared by the benchmark applications (see bench_util.h). */
#include "bench_util.h"

#include <complex.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double bench_cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void bench_busy_us(double us, void (*poll)(void *), void *arg, double poll_us)
{
    double end = bench_cpu_now() + us * 1e-6, next = 0;
    for (;;) {
        double c = bench_cpu_now();
        if (c >= end)
            break;
        double t = poll ? bench_now() : 0;
        if (poll && t >= next) {
            poll(arg);
            end += bench_cpu_now() - c;      /* communication is not work */
            next = t + poll_us * 1e-6;
        }
    }
}

static int my_rank(void)
{
    int init = 0, r = 0;
    MPI_Initialized(&init);
    if (init)
        MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

void bench_usage_error(const char *fmt, ...)
{
    if (my_rank() == 0) {
        va_list ap;
        va_start(ap, fmt);
        fputs("error: ", stderr);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        va_end(ap);
    }
    MPI_Finalize();
    exit(2);
}

void bench_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "error (rank %d): ", my_rank());
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    MPI_Abort(MPI_COMM_WORLD, 2);
    exit(2);
}

void *bench_alloc(size_t bytes)
{
    void *p = NULL;
    /* Page alignment keeps whole blocks on whole pages, as large real buffers are. */
    if (posix_memalign(&p, 4096, bytes ? bytes : 1) != 0)
        bench_fail("cannot allocate %zu bytes", bytes);
    memset(p, 0, bytes);
    return p;
}

long bench_parse_long(const char *opt, const char *s, long lo, long hi)
{
    char *end;
    errno = 0;
    long v = s ? strtol(s, &end, 10) : 0;
    if (!s || errno || end == s || *end || v < lo || v > hi)
        bench_usage_error("%s needs an integer in [%ld, %ld], got '%s'", opt, lo, hi, s ? s : "");
    return v;
}

double bench_parse_double(const char *opt, const char *s, double lo, double hi)
{
    char *end;
    errno = 0;
    double v = s ? strtod(s, &end) : 0;
    if (!s || errno || end == s || *end || !(v >= lo && v <= hi))
        bench_usage_error("%s needs a number in [%g, %g], got '%s'", opt, lo, hi, s ? s : "");
    return v;
}

static int parse_list(const char *spec, int n, int *order)
{
    const char *p = spec;
    for (int i = 0; i < n; i++) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < 0 || v >= n)
            return -1;
        order[i] = (int)v;
        p = end;
        if (i < n - 1) {
            if (*p != ',')
                return -1;
            p++;
        }
    }
    return *p ? -1 : 0;
}

int bench_order(const char *spec, int n, int *order, char *err, size_t errlen)
{
    if (n < 1) {
        snprintf(err, errlen, "order: no blocks");
        return -1;
    }
    if (!strcmp(spec, "fwd") || !strcmp(spec, "rev")) {
        for (int i = 0; i < n; i++)
            order[i] = spec[0] == 'f' ? i : n - 1 - i;
    } else if (!strcmp(spec, "perm")) {
        for (int i = 0; i < n; i++)
            order[i] = i;
        for (int i = n - 1; i > 0; i--) { /* Fisher-Yates with a fixed seed */
            int j = (int)(bench_pattern(7, 11, (uint64_t)i) % (uint64_t)(i + 1));
            int t = order[i]; order[i] = order[j]; order[j] = t;
        }
    } else if (parse_list(spec, n, order) != 0) {
        snprintf(err, errlen, "order '%s': expected fwd, rev, perm or %d indices like 3,1,2,0", spec, n);
        return -1;
    }
    char *seen = calloc((size_t)n, 1);
    int bad = !seen;
    for (int i = 0; !bad && i < n; i++)
        bad = seen[order[i]]++ != 0;
    free(seen);
    if (bad) {
        snprintf(err, errlen, "order '%s' is not a permutation of 0..%d", spec, n - 1);
        return -1;
    }
    return 0;
}

struct bench_times bench_times_new(long iters)
{
    return (struct bench_times){ .iters = (int)iters,
                                 .coll = bench_alloc(sizeof(double) * (size_t)iters),
                                 .total = bench_alloc(sizeof(double) * (size_t)iters) };
}

void bench_times_free(struct bench_times *t)
{
    free(t->coll);
    free(t->total);
}

int bench_common_arg(int argc, char **argv, int *i, struct bench_common *c)
{
    const char *a = argv[*i], *v = *i + 1 < argc ? argv[*i + 1] : NULL;
    if (!strcmp(a, "--corrupt"))
        c->corrupt = 1;
    else if (!strcmp(a, "--iters"))
        c->iters = bench_parse_long(a, v, 1, 100000), ++*i;
    else if (!strcmp(a, "--warmup"))
        c->warmup = bench_parse_long(a, v, 0, 1000), ++*i;
    else
        return 0;
    return 1;
}

int bench_report(const char *app, const char *extra, const struct bench_times *t,
                 int check_ok, MPI_Comm comm)
{
    int rank, np, all_ok = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &np);
    int n = t->iters;
    double *buf = bench_alloc(sizeof(double) * 2 * (size_t)(n ? n : 1));
    double *mx = bench_alloc(sizeof(double) * 2 * (size_t)(n ? n : 1));
    for (int i = 0; i < n; i++) {
        buf[i] = t->coll[i];
        buf[n + i] = t->total[i];
    }
    double *mn = bench_alloc(sizeof(double) * (size_t)(n ? n : 1));
    MPI_Reduce(buf, mx, 2 * n, MPI_DOUBLE, MPI_MAX, 0, comm);
    /* The rank that reached the collective last spent the least time in
     * it: the communication left once every rank was in. The others' time
     * there also holds their wait for it, which is work of that rank's
     * (on a CPU two ranks share, most of the difference). */
    MPI_Reduce(buf, mn, n, MPI_DOUBLE, MPI_MIN, 0, comm);
    MPI_Allreduce(&check_ok, &all_ok, 1, MPI_INT, MPI_LAND, comm);
    if (rank == 0) {
        if (getenv("BENCH_DUMP_ITERS"))   /* per iteration, to see spread and modes */
            for (int i = 0; i < n; i++)
                printf("ITER %d coll=%.6f total=%.6f\n", i, mx[i], mx[n + i]);
        double coll = 0, last = 0, total = 0, tmin = n ? mx[n] : 0;
        for (int i = 0; i < n; i++) {
            coll += mx[i];
            last += mn[i];
            total += mx[n + i];
            if (mx[n + i] < tmin)
                tmin = mx[n + i];
        }
        printf("RESULT app=%s %s np=%d iters=%d t_coll=%.6f t_coll_last=%.6f t_total=%.6f "
               "t_total_min=%.6f check=%s\n",
               app, extra, np, n, n ? coll / n : 0, n ? last / n : 0, n ? total / n : 0, tmin,
               all_ok ? "ok" : "fail");
        fflush(stdout);
    }
    free(buf);
    free(mx);
    free(mn);
    return all_ok ? 0 : 1;
}

/* ---- the FFT kernel of fft3d and pencil ---------------------------------- */

typedef double complex cplx;

void bench_fft(cplx *v, int n, size_t s, int sign, const cplx *tw)
{
    for (int i = 1, j = 0; i < n; i++) { /* bit reversal */
        int bit = n >> 1;
        for (; j & bit; bit >>= 1)
            j ^= bit;
        j ^= bit;
        if (i < j) {
            cplx t = v[i * s]; v[i * s] = v[j * s]; v[j * s] = t;
        }
    }
    for (int len = 2; len <= n; len <<= 1) {
        int step = n / len;
        for (int i = 0; i < n; i += len)
            for (int k = 0; k < len / 2; k++) {
                cplx w = sign < 0 ? tw[k * step] : conj(tw[k * step]);
                cplx u = v[(i + k) * s], t = w * v[(i + k + len / 2) * s];
                v[(i + k) * s] = u + t;
                v[(i + k + len / 2) * s] = u - t;
            }
    }
}

cplx *bench_fft_twiddles(int n)
{
    cplx *tw = bench_alloc(sizeof(cplx) * ((size_t)n / 2 + 1));
    for (size_t k = 0; k < (size_t)n / 2 + 1; k++)
        tw[k] = cexp(-2 * M_PI * I * (double)k / (double)n);
    return tw;
}

cplx bench_fft_input(int x, int y, int z)
{
    uint64_t h = bench_pattern((uint64_t)x, (uint64_t)y, (uint64_t)z);
    return ((double)(h & 0xffff) / 32768.0 - 1.0) + I * ((double)(h >> 48) / 32768.0 - 1.0);
}
