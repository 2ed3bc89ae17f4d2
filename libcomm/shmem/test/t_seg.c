/* t_seg.c - counted segments: shmem_sync_seg waits exactly for the expected
 * number of puts, over several phases, with no barrier in between. */
#include <string.h>
#include "t_common.h"

#define PHASES 5
#define K 4     /* puts per sender per phase */

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    long *data = shmem_calloc((size_t)n * K * PHASES, sizeof(long));
    /* this PE expects K puts from each other PE per phase */
    int seg = shmem_register_seg(data, (size_t)n * K * PHASES * sizeof(long), (long)K * (n - 1));
    CHECK(seg >= 0, "register_seg");
    for (int ph = 0; ph < PHASES; ph++) {
        for (int pe = 0; pe < n; pe++) {
            if (pe == me)
                continue;
            for (int k = 0; k < K; k++) {
                long v = ph * 10000 + me * 100 + k;
                shmem_put_seg(seg, &data[(ph * n + me) * K + k], &v, sizeof v, pe);
            }
        }
        shmem_sync_seg(seg);     /* no barrier: only my own count */
        for (int p = 0; p < n; p++)
            for (int k = 0; k < K && p != me; k++) {
                long want = ph * 10000 + p * 100 + k, got = data[(ph * n + p) * K + k];
                CHECK(got == want, "phase %d from %d: %ld want %ld", ph, p, got, want);
            }
    }
    shmem_barrier_all();
    CHECK(shmemx_seg_count(seg) == 0, "count after last phase %ld", shmemx_seg_count(seg));
    /* refusals: outside the segment, unknown segment, non-heap registration */
    long v = 1, priv[2];
    shmem_put_seg(seg, data - 1, &v, sizeof v, (me + 1) % n);
    shmem_put_seg(seg + 7, data, &v, sizeof v, (me + 1) % n);
    int bad = shmem_register_seg(priv, sizeof priv, 1);
    CHECK(bad == -1, "non-heap segment accepted");
    shmem_barrier_all();
    CHECK(shmemx_seg_count(seg) == 0, "refused puts were counted");
    shmem_free(data);
    return t_done("t_seg");
}
