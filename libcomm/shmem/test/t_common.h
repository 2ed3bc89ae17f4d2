/* SPDX-License-Identifier: BSD-3-Clause */
/* t_common.h - tiny assertion helpers for the multi-PE tests. Every failed
 * CHECK prints the PE, the line and the condition; t_done() returns this
 * PE's own exit status (non-zero when any of its checks failed), which the
 * launcher (mpirun) turns into the job's status. The verdict takes nothing
 * from the library under test: a reduction or barrier that is wrong cannot
 * hide a failed check, not even a failed check of itself. */
#ifndef T_COMMON_H
#define T_COMMON_H
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>

static int t_failures;
#define CHECK(cond, ...)                                                        \
    do {                                                                        \
        if (!(cond)) {                                                          \
            t_failures++;                                                       \
            fprintf(stderr, "PE %d: %s:%d: CHECK(%s) failed: ", shmem_my_pe(),  \
                    __FILE__, __LINE__, #cond);                                 \
            fprintf(stderr, __VA_ARGS__);                                       \
            fputc('\n', stderr);                                                \
        }                                                                       \
    } while (0)

static int t_done(const char *name)
{
    int me = shmem_my_pe(), n = shmem_n_pes();
    if (t_failures)
        printf("%s: PE %d of %d: %d failed checks\n", name, me, n, t_failures);
    else if (me == 0)
        printf("%s: %d PEs, PE 0: 0 failed checks (each PE's own status decides)\n", name, n);
    fflush(stdout);
    shmem_barrier_all();
    shmem_finalize();
    return t_failures != 0;
}
#endif
