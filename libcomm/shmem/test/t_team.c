// SPDX-License-Identifier: BSD-3-Clause
/* t_team.c - OpenSHMEM 1.5 teams: world, a strided split, translation, and
 * the team collectives (broadcastmem, fcollectmem, collectmem, alltoallmem,
 * reductions, sync). */
#include "t_common.h"

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    CHECK(shmem_team_my_pe(SHMEM_TEAM_WORLD) == me && shmem_team_n_pes(SHMEM_TEAM_WORLD) == n,
          "world team");
    long *src = shmem_malloc(8 * sizeof(long)), *dst = shmem_calloc(8 * n, sizeof(long));
    for (int i = 0; i < 8; i++)
        src[i] = me * 10 + i;
    shmem_team_sync(SHMEM_TEAM_WORLD);
    CHECK(shmem_broadcastmem(SHMEM_TEAM_WORLD, dst, src, 8 * sizeof(long), n - 1) == 0, "bcast rc");
    CHECK(dst[3] == (n - 1) * 10 + 3, "broadcastmem %ld", dst[3]);
    shmem_fcollectmem(SHMEM_TEAM_WORLD, dst, src, 2 * sizeof(long));
    CHECK(dst[2 * (n - 1) + 1] == (n - 1) * 10 + 1, "fcollectmem");
    shmem_collectmem(SHMEM_TEAM_WORLD, dst, src, (me + 1) * sizeof(long));
    CHECK(dst[n * (n + 1) / 2 - 1] == (n - 1) * 10 + n - 1, "collectmem");
    shmem_alltoallmem(SHMEM_TEAM_WORLD, dst, src, sizeof(long));
    CHECK(dst[n - 1] == (n - 1) * 10 + me, "alltoallmem");
    static long s, r;
    s = me + 1;
    shmem_long_sum_reduce(SHMEM_TEAM_WORLD, &r, &s, 1);
    CHECK(r == (long)n * (n + 1) / 2, "sum_reduce %ld", r);
    static double ds, dr;
    ds = me;
    shmem_double_max_reduce(SHMEM_TEAM_WORLD, &dr, &ds, 1);
    CHECK(dr == n - 1, "max_reduce %g", dr);

    /* odd PEs: start 1, stride 2 */
    shmem_team_t odd;
    int rc = shmem_team_split_strided(SHMEM_TEAM_WORLD, 1, 2, n / 2, NULL, 0, &odd);
    CHECK(rc == 0, "split rc %d", rc);
    if (me % 2) {
        CHECK(odd != SHMEM_TEAM_INVALID && shmem_team_my_pe(odd) == me / 2, "odd team rank");
        CHECK(shmem_team_translate_pe(odd, 0, SHMEM_TEAM_WORLD) == 1, "translate");
        static int is, ir;
        is = 1 << me;
        shmem_int_or_reduce(odd, &ir, &is, 1);
        int want = 0;
        for (int p = 1; p < n; p += 2)
            want |= 1 << p;
        CHECK(ir == want, "or_reduce on the odd team %x want %x", ir, want);
        shmem_team_sync(odd);
        shmem_team_destroy(odd);
    } else {
        CHECK(odd == SHMEM_TEAM_INVALID, "even PE got a team");
    }
    CHECK(shmem_team_translate_pe(SHMEM_TEAM_WORLD, 0, SHMEM_TEAM_WORLD) == 0, "identity");
    CHECK(shmem_team_n_pes(SHMEM_TEAM_INVALID) == -1, "invalid team refused");
    shmem_free(src);
    shmem_free(dst);
    return t_done("t_team");
}
