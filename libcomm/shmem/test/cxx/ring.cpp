// ring.cpp - the headers compile as C++ (extern "C", no _Generic) and a
// C++ program links and runs: each PE puts its number to the next PE,
// reduces over a team and uses a context.
#include <shmem.h>
#include <shmemx.h>
#include <cstdio>

static long box;

int main()
{
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    shmem_ctx_t ctx;
    if (shmem_ctx_create(0, &ctx) != 0)
        ctx = SHMEM_CTX_DEFAULT;
    shmem_ctx_long_p(ctx, &box, me, (me + 1) % n);
    shmem_ctx_quiet(ctx);
    shmem_barrier_all();
    int *sum = static_cast<int *>(shmem_malloc(sizeof(int))), one = 1;
    shmem_int_sum_reduce(SHMEM_TEAM_WORLD, sum, &one, 1);
    shmem_sync(SHMEM_TEAM_WORLD);
    int ok = box == (me + n - 1) % n && *sum == n;
    if (!ok)
        std::printf("PE %d: box %ld sum %d\n", me, box, *sum);
    shmem_free(sum);
    if (ctx != SHMEM_CTX_DEFAULT)
        shmem_ctx_destroy(ctx);
    shmem_finalize();
    return ok ? 0 : 1;
}
