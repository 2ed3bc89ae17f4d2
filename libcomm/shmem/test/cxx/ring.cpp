// ring.cpp - the headers compile as C++ and the generic names work as C++
// overloads: each PE puts its number to the next PE (shmem_p, through a
// context), every PE adds me + 1 to a counter of every type on every PE
// (shmem_atomic_add with and without a context; fetch_add_nbi), the
// totals are n(n+1)/2, a team reduction, shmem_sync(team), wait_until.
#include <shmem.h>
#include <shmemx.h>
#include <pshmem.h>
#include <cstdio>

static long box;
static int fails;

#define ADD_ALL(T)                                                             \
    {                                                                          \
        static T remote;                                                       \
        T old = 0;                                                             \
        remote = 0;                                                            \
        shmem_barrier_all();                                                   \
        for (int pe = 0; pe < n; pe++) {                                       \
            if (pe % 2)                                                        \
                shmem_atomic_add(SHMEM_CTX_DEFAULT, &remote, (T)(me + 1), pe); \
            else                                                               \
                shmem_atomic_fetch_add_nbi(&old, &remote, (T)(me + 1), pe);    \
        }                                                                      \
        shmem_quiet();                                                         \
        shmem_barrier_all();                                                   \
        if (remote != (T)(n * (n + 1) / 2) || old > (T)(n * (n + 1) / 2)) {    \
            std::printf("PE %d: %s total wrong\n", me, #T);                    \
            fails++;                                                           \
        }                                                                      \
    }

int main()
{
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    shmem_ctx_t ctx;
    if (shmem_ctx_create(0, &ctx) != 0)
        ctx = SHMEM_CTX_DEFAULT;
    shmem_p(ctx, &box, (long)me, (me + 1) % n);
    shmem_ctx_quiet(ctx);
    shmem_wait_until(&box, SHMEM_CMP_EQ, (long)((me + n - 1) % n));
    if (shmem_g(&box, (me + 1) % n) != me) {
        std::printf("PE %d: shmem_g\n", me);
        fails++;
    }
    ADD_ALL(int) ADD_ALL(long) ADD_ALL(long long) ADD_ALL(unsigned int)
    ADD_ALL(unsigned long) ADD_ALL(unsigned long long) ADD_ALL(int32_t)
    ADD_ALL(int64_t) ADD_ALL(uint32_t) ADD_ALL(uint64_t) ADD_ALL(size_t)
    ADD_ALL(ptrdiff_t)
    int *sum = static_cast<int *>(shmem_malloc(sizeof(int))), one = 1;
    shmem_sum_reduce(SHMEM_TEAM_WORLD, sum, &one, 1);
    shmem_sync(SHMEM_TEAM_WORLD);
    if (*sum != n) {
        std::printf("PE %d: sum %d\n", me, *sum);
        fails++;
    }
    shmem_free(sum);
    if (ctx != SHMEM_CTX_DEFAULT)
        shmem_ctx_destroy(ctx);
    shmem_finalize();
    return fails ? 1 : 0;
}
