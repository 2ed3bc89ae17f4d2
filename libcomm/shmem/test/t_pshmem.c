// SPDX-License-Identifier: BSD-3-Clause
/* t_pshmem: the profiling interface. Run with the ptool tool (preloaded
 * libptool.so or linked statically with libtnbc-shmem.a), which wraps
 * shmem_int_put and shmem_barrier_all and forwards to pshmem_: the tool
 * sees exactly the calls made here, the data still arrives, and a direct
 * pshmem_ call bypasses the tool. Without the tool the test fails: it must
 * not pass vacuously. */
#include "t_common.h"
#include <pshmem.h>

#define K 5         /* puts per round */
#define NBAR 3      /* barriers per round */

/* defined by the tool; weak so that a run without it is reported, not a
 * link or load error */
void ptool_counts(long out[2]) __attribute__((weak));

static int dest[K + 1];

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    int right = (me + 1) % npes, left = (me + npes - 1) % npes;
    if (!ptool_counts) {
        fprintf(stderr, "PE %d: the ptool tool is not loaded\n", me);
        shmem_global_exit(1);
    }
    /* the sender's known pattern: element k from PE p is 1000 p + k */
    int src[K + 1];
    for (int k = 0; k <= K; k++)
        src[k] = 1000 * me + k;

    long c0[2], c1[2], c2[2];
    ptool_counts(c0);
    for (int k = 0; k < K; k++)
        shmem_int_put(&dest[k], &src[k], 1, right);
    for (int b = 0; b < NBAR; b++)
        shmem_barrier_all();
    ptool_counts(c1);
    CHECK(c1[0] - c0[0] == K, "tool saw %ld int_put calls, want %d", c1[0] - c0[0], K);
    CHECK(c1[1] - c0[1] == NBAR, "tool saw %ld barrier_all calls, want %d",
          c1[1] - c0[1], NBAR);
    for (int k = 0; k < K; k++)
        CHECK(dest[k] == 1000 * left + k, "dest[%d] = %d, want %d", k, dest[k],
              1000 * left + k);

    /* the name-shifted entry points do the work without the tool */
    pshmem_int_put(&dest[K], &src[K], 1, right);
    pshmem_barrier_all();
    ptool_counts(c2);
    CHECK(c2[0] == c1[0] && c2[1] == c1[1], "pshmem_ calls were counted: %ld/%ld -> %ld/%ld",
          c1[0], c1[1], c2[0], c2[1]);
    CHECK(dest[K] == 1000 * left + K, "dest[%d] = %d, want %d", K, dest[K], 1000 * left + K);
    return t_done("t_pshmem");
}
