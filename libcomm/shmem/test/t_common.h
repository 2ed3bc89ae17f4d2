/* t_common.h - tiny assertion helpers for the multi-PE tests. Every failed
 * CHECK prints the PE, the line and the condition; t_done() sums failures
 * over all PEs and returns the exit status. */
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

static int t_sum_fail, t_fail_in;
static int t_done(const char *name)
{
    t_fail_in = t_failures;
    shmem_barrier_all();
    shmem_int_sum_to_all(&t_sum_fail, &t_fail_in, 1, 0, 0, shmem_n_pes(), NULL, NULL);
    if (shmem_my_pe() == 0)
        printf("%s: %d PEs, %d failed checks\n", name, shmem_n_pes(), t_sum_fail);
    int rc = t_sum_fail != 0;
    shmem_finalize();
    return rc;
}
#endif
