// SPDX-License-Identifier: BSD-3-Clause
/* t_seg.c - counted segments: shmemx_sync_seg waits exactly for the expected
 * number of puts, over several phases, with no barrier in between. Counts
 * carry no phase, and a PE can run one phase ahead of a slow one, so the
 * phases alternate between two segments (double buffering). */
#include <string.h>
#include "t_common.h"
#include <shmemx.h>

#define PHASES 5
#define K 4     /* puts per sender per phase */

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    long *data = shmem_calloc((size_t)n * K * PHASES, sizeof(long));
    /* this PE expects K puts from each other PE per phase */
    size_t len = (size_t)n * K * PHASES * sizeof(long);
    int segs[2] = {shmemx_register_seg(data, len, (long)K * (n - 1)),
                   shmemx_register_seg(data, len, (long)K * (n - 1))};
    int seg = segs[0];
    CHECK(segs[0] >= 0 && segs[1] == segs[0] + 1, "register_seg %d %d", segs[0], segs[1]);
    for (int ph = 0; ph < PHASES; ph++) {
        for (int pe = 0; pe < n; pe++) {
            if (pe == me)
                continue;
            for (int k = 0; k < K; k++) {
                long v = ph * 10000 + me * 100 + k;
                shmemx_put_seg(segs[ph % 2], &data[(ph * n + me) * K + k], &v, sizeof v, pe);
            }
        }
        shmemx_sync_seg(segs[ph % 2]);     /* no barrier: only my own count */
        for (int p = 0; p < n; p++)
            for (int k = 0; k < K && p != me; k++) {
                long want = ph * 10000 + p * 100 + k, got = data[(ph * n + p) * K + k];
                CHECK(got == want, "phase %d from %d: %ld want %ld", ph, p, got, want);
            }
    }
    shmem_barrier_all();
    CHECK(shmemx_seg_count(segs[0]) == 0 && shmemx_seg_count(segs[1]) == 0,
          "count after last phase %ld", shmemx_seg_count(seg));
    /* refusals: outside the segment, unknown segment, non-heap registration */
    long v = 1, priv[2];
    shmemx_put_seg(seg, data - 1, &v, sizeof v, (me + 1) % n);
    shmemx_put_seg(seg + 9, data, &v, sizeof v, (me + 1) % n);
    int bad = shmemx_register_seg(priv, sizeof priv, 1);
    CHECK(bad == -1, "non-heap segment accepted");
    shmem_barrier_all();
    CHECK(shmemx_seg_count(seg) == 0, "refused puts were counted");
    shmem_free(data);
    return t_done("t_seg");
}
