// SPDX-License-Identifier: BSD-3-Clause
/* ptool.c - a minimal profiling tool over the pshmem_ interface, as a real
 * one (a tracer, a call counter) is written: it defines shmem_int_put and
 * shmem_barrier_all, counts the calls and forwards them to pshmem_. Used
 * preloaded (libptool.so) and linked into a static program with
 * libtnbc-shmem.a (t_pshmem_static); t_pshmem reads the counts through
 * ptool_counts(). */
#include <pshmem.h>

static long n_put, n_barrier;

void shmem_int_put(int *dest, const int *source, size_t nelems, int pe)
{
    n_put++;
    pshmem_int_put(dest, source, nelems, pe);
}

void shmem_barrier_all(void)
{
    n_barrier++;
    pshmem_barrier_all();
}

/* the counts so far: [0] shmem_int_put calls, [1] shmem_barrier_all calls */
void ptool_counts(long out[2]);
void ptool_counts(long out[2])
{
    out[0] = n_put;
    out[1] = n_barrier;
}
