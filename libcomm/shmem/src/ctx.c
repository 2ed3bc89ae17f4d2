// SPDX-License-Identifier: BSD-3-Clause
/*
 * ctx.c - OpenSHMEM 1.5 communication contexts.
 *
 * Every context shares the default context's completion: there is one set
 * of pending targets per region, and shmem_ctx_quiet/fence on any context
 * complete every operation of the PE. That is all a created context promises
 * and more (its quiet may also wait for other contexts' operations, never
 * less). Thread safety is that of the library's thread level: the RMA path
 * is locked under SHMEM_THREAD_MULTIPLE, so SERIALIZED/PRIVATE options need
 * nothing extra. A context created from a team takes that team's PE
 * numbers: ctx operations translate them to world PE numbers first.
 */
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"

struct shmemi_ctx {
    long options;
    shmem_team_t team;      /* NULL: SHMEM_TEAM_WORLD */
};

static struct shmemi_ctx default_ctx = {0, NULL};
shmem_ctx_t SHMEM_CTX_DEFAULT = &default_ctx;
int shmem_team_create_ctx(shmem_team_t team, long options, shmem_ctx_t *ctx)
{
    shmemi_check_init("shmem_team_create_ctx");
    if (!ctx)
        return -1;
    *ctx = SHMEM_CTX_INVALID;
    if (!team || shmem_team_n_pes(team) < 0)
        return -1;
    struct shmemi_ctx *c = malloc(sizeof *c);
    if (!c)
        return -1;
    *c = (struct shmemi_ctx){options, team == SHMEM_TEAM_WORLD ? NULL : team};
    *ctx = c;
    return 0;
}

int shmem_ctx_create(long options, shmem_ctx_t *ctx)
{
    return shmem_team_create_ctx(SHMEM_TEAM_WORLD, options, ctx);
}

void shmem_ctx_destroy(shmem_ctx_t ctx)
{
    if (!ctx || ctx == SHMEM_CTX_DEFAULT)
        return;
    shmemi_quiet();      /* 1.5: destroy completes the context's operations */
    free(ctx);
}

int shmem_ctx_get_team(shmem_ctx_t ctx, shmem_team_t *team)
{
    if (!team)
        return -1;
    if (!ctx) {
        *team = SHMEM_TEAM_INVALID;
        return -1;
    }
    *team = ctx->team ? ctx->team : SHMEM_TEAM_WORLD;
    return 0;
}

void shmem_ctx_fence(shmem_ctx_t ctx) { (void)ctx; shmemi_quiet(); }
void shmem_ctx_quiet(shmem_ctx_t ctx) { (void)ctx; shmemi_quiet(); }

/* World PE number of pe on ctx; -1 (refused by the operation with "no such
 * PE") for an invalid context or a PE outside its team. */
static inline int cpe(shmem_ctx_t ctx, int pe)
{
    if (!ctx) {
        fprintf(stderr, "tnbc-shmem: error PE %d: operation on SHMEM_CTX_INVALID\n",
                shmemi.me);
        return -1;
    }
    return ctx->team ? shmemi_team_world_pe(ctx->team, pe) : pe;
}

#define DEFINE_CTX_RMA(T, N)                                                   \
    void shmem_ctx_##N##_put(shmem_ctx_t c, T *d, const T *s, size_t n, int pe) \
    { shmem_##N##_put(d, s, n, cpe(c, pe)); }                                  \
    void shmem_ctx_##N##_get(shmem_ctx_t c, T *d, const T *s, size_t n, int pe) \
    { shmem_##N##_get(d, s, n, cpe(c, pe)); }                                  \
    void shmem_ctx_##N##_put_nbi(shmem_ctx_t c, T *d, const T *s, size_t n, int pe) \
    { shmem_##N##_put_nbi(d, s, n, cpe(c, pe)); }                              \
    void shmem_ctx_##N##_get_nbi(shmem_ctx_t c, T *d, const T *s, size_t n, int pe) \
    { shmem_##N##_get_nbi(d, s, n, cpe(c, pe)); }                              \
    void shmem_ctx_##N##_p(shmem_ctx_t c, T *d, T v, int pe)                   \
    { shmem_##N##_p(d, v, cpe(c, pe)); }                                       \
    T shmem_ctx_##N##_g(shmem_ctx_t c, const T *s, int pe)                     \
    { return shmem_##N##_g(s, cpe(c, pe)); }                                   \
    void shmem_ctx_##N##_iput(shmem_ctx_t c, T *d, const T *s, ptrdiff_t dst,  \
                              ptrdiff_t sst, size_t n, int pe)                 \
    { shmem_##N##_iput(d, s, dst, sst, n, cpe(c, pe)); }                       \
    void shmem_ctx_##N##_iget(shmem_ctx_t c, T *d, const T *s, ptrdiff_t dst,  \
                              ptrdiff_t sst, size_t n, int pe)                 \
    { shmem_##N##_iget(d, s, dst, sst, n, cpe(c, pe)); }                       \
    void shmem_ctx_##N##_put_signal(shmem_ctx_t c, T *d, const T *s, size_t n, \
                                    uint64_t *sig, uint64_t sv, int op, int pe) \
    { shmem_##N##_put_signal(d, s, n, sig, sv, op, cpe(c, pe)); }              \
    void shmem_ctx_##N##_put_signal_nbi(shmem_ctx_t c, T *d, const T *s,       \
                                        size_t n, uint64_t *sig, uint64_t sv,  \
                                        int op, int pe)                        \
    { shmem_##N##_put_signal_nbi(d, s, n, sig, sv, op, cpe(c, pe)); }
SHMEMI_RMA_TYPES(DEFINE_CTX_RMA)

#define DEFINE_CTX_SIZED(B, S)                                                 \
    void shmem_ctx_put##B(shmem_ctx_t c, void *d, const void *s, size_t n, int pe) \
    { shmem_put##B(d, s, n, cpe(c, pe)); }                                     \
    void shmem_ctx_get##B(shmem_ctx_t c, void *d, const void *s, size_t n, int pe) \
    { shmem_get##B(d, s, n, cpe(c, pe)); }                                     \
    void shmem_ctx_put##B##_nbi(shmem_ctx_t c, void *d, const void *s, size_t n, \
                                int pe)                                        \
    { shmem_put##B##_nbi(d, s, n, cpe(c, pe)); }                               \
    void shmem_ctx_get##B##_nbi(shmem_ctx_t c, void *d, const void *s, size_t n, \
                                int pe)                                        \
    { shmem_get##B##_nbi(d, s, n, cpe(c, pe)); }                               \
    void shmem_ctx_iput##B(shmem_ctx_t c, void *d, const void *s, ptrdiff_t dst, \
                           ptrdiff_t sst, size_t n, int pe)                    \
    { shmem_iput##B(d, s, dst, sst, n, cpe(c, pe)); }                          \
    void shmem_ctx_iget##B(shmem_ctx_t c, void *d, const void *s, ptrdiff_t dst, \
                           ptrdiff_t sst, size_t n, int pe)                    \
    { shmem_iget##B(d, s, dst, sst, n, cpe(c, pe)); }                          \
    void shmem_ctx_put##B##_signal(shmem_ctx_t c, void *d, const void *s, size_t n, \
                                   uint64_t *sig, uint64_t sv, int op, int pe) \
    { shmem_put##B##_signal(d, s, n, sig, sv, op, cpe(c, pe)); }               \
    void shmem_ctx_put##B##_signal_nbi(shmem_ctx_t c, void *d, const void *s,  \
                                       size_t n, uint64_t *sig, uint64_t sv,   \
                                       int op, int pe)                         \
    { shmem_put##B##_signal_nbi(d, s, n, sig, sv, op, cpe(c, pe)); }
SHMEMI_SIZES(DEFINE_CTX_SIZED)

void shmem_ctx_putmem(shmem_ctx_t c, void *d, const void *s, size_t n, int pe)
{ shmem_putmem(d, s, n, cpe(c, pe)); }
void shmem_ctx_getmem(shmem_ctx_t c, void *d, const void *s, size_t n, int pe)
{ shmem_getmem(d, s, n, cpe(c, pe)); }
void shmem_ctx_putmem_nbi(shmem_ctx_t c, void *d, const void *s, size_t n, int pe)
{ shmem_putmem_nbi(d, s, n, cpe(c, pe)); }
void shmem_ctx_getmem_nbi(shmem_ctx_t c, void *d, const void *s, size_t n, int pe)
{ shmem_getmem_nbi(d, s, n, cpe(c, pe)); }
void shmem_ctx_putmem_signal(shmem_ctx_t c, void *d, const void *s, size_t n,
                             uint64_t *sig, uint64_t sv, int op, int pe)
{ shmem_putmem_signal(d, s, n, sig, sv, op, cpe(c, pe)); }
void shmem_ctx_putmem_signal_nbi(shmem_ctx_t c, void *d, const void *s, size_t n,
                                 uint64_t *sig, uint64_t sv, int op, int pe)
{ shmem_putmem_signal_nbi(d, s, n, sig, sv, op, cpe(c, pe)); }

#define DEFINE_CTX_AMO_EXT(T, N)                                               \
    T shmem_ctx_##N##_atomic_fetch(shmem_ctx_t c, const T *s, int pe)          \
    { return shmem_##N##_atomic_fetch(s, cpe(c, pe)); }                        \
    void shmem_ctx_##N##_atomic_set(shmem_ctx_t c, T *d, T v, int pe)          \
    { shmem_##N##_atomic_set(d, v, cpe(c, pe)); }                              \
    T shmem_ctx_##N##_atomic_swap(shmem_ctx_t c, T *d, T v, int pe)            \
    { return shmem_##N##_atomic_swap(d, v, cpe(c, pe)); }                      \
    void shmem_ctx_##N##_atomic_fetch_nbi(shmem_ctx_t c, T *f, const T *s, int pe) \
    { shmem_##N##_atomic_fetch_nbi(f, s, cpe(c, pe)); }                        \
    void shmem_ctx_##N##_atomic_swap_nbi(shmem_ctx_t c, T *f, T *d, T v, int pe) \
    { shmem_##N##_atomic_swap_nbi(f, d, v, cpe(c, pe)); }
#define DEFINE_CTX_AMO(T, N)                                                   \
    T shmem_ctx_##N##_atomic_compare_swap(shmem_ctx_t c, T *d, T cn, T v, int pe) \
    { return shmem_##N##_atomic_compare_swap(d, cn, v, cpe(c, pe)); }          \
    T shmem_ctx_##N##_atomic_fetch_add(shmem_ctx_t c, T *d, T v, int pe)       \
    { return shmem_##N##_atomic_fetch_add(d, v, cpe(c, pe)); }                 \
    void shmem_ctx_##N##_atomic_add(shmem_ctx_t c, T *d, T v, int pe)          \
    { shmem_##N##_atomic_add(d, v, cpe(c, pe)); }                              \
    T shmem_ctx_##N##_atomic_fetch_inc(shmem_ctx_t c, T *d, int pe)            \
    { return shmem_##N##_atomic_fetch_inc(d, cpe(c, pe)); }                    \
    void shmem_ctx_##N##_atomic_inc(shmem_ctx_t c, T *d, int pe)               \
    { shmem_##N##_atomic_inc(d, cpe(c, pe)); }                                 \
    void shmem_ctx_##N##_atomic_compare_swap_nbi(shmem_ctx_t c, T *f, T *d,    \
                                                 T cn, T v, int pe)            \
    { shmem_##N##_atomic_compare_swap_nbi(f, d, cn, v, cpe(c, pe)); }          \
    void shmem_ctx_##N##_atomic_fetch_inc_nbi(shmem_ctx_t c, T *f, T *d, int pe) \
    { shmem_##N##_atomic_fetch_inc_nbi(f, d, cpe(c, pe)); }                    \
    void shmem_ctx_##N##_atomic_fetch_add_nbi(shmem_ctx_t c, T *f, T *d, T v,  \
                                              int pe)                          \
    { shmem_##N##_atomic_fetch_add_nbi(f, d, v, cpe(c, pe)); }
#define DEFINE_CTX_AMO_BIT(T, N)                                               \
    T shmem_ctx_##N##_atomic_fetch_and(shmem_ctx_t c, T *d, T v, int pe)       \
    { return shmem_##N##_atomic_fetch_and(d, v, cpe(c, pe)); }                 \
    void shmem_ctx_##N##_atomic_and(shmem_ctx_t c, T *d, T v, int pe)          \
    { shmem_##N##_atomic_and(d, v, cpe(c, pe)); }                              \
    T shmem_ctx_##N##_atomic_fetch_or(shmem_ctx_t c, T *d, T v, int pe)        \
    { return shmem_##N##_atomic_fetch_or(d, v, cpe(c, pe)); }                  \
    void shmem_ctx_##N##_atomic_or(shmem_ctx_t c, T *d, T v, int pe)           \
    { shmem_##N##_atomic_or(d, v, cpe(c, pe)); }                               \
    T shmem_ctx_##N##_atomic_fetch_xor(shmem_ctx_t c, T *d, T v, int pe)       \
    { return shmem_##N##_atomic_fetch_xor(d, v, cpe(c, pe)); }                 \
    void shmem_ctx_##N##_atomic_xor(shmem_ctx_t c, T *d, T v, int pe)          \
    { shmem_##N##_atomic_xor(d, v, cpe(c, pe)); }                              \
    void shmem_ctx_##N##_atomic_fetch_and_nbi(shmem_ctx_t c, T *f, T *d, T v, int pe) \
    { shmem_##N##_atomic_fetch_and_nbi(f, d, v, cpe(c, pe)); }                 \
    void shmem_ctx_##N##_atomic_fetch_or_nbi(shmem_ctx_t c, T *f, T *d, T v, int pe) \
    { shmem_##N##_atomic_fetch_or_nbi(f, d, v, cpe(c, pe)); }                  \
    void shmem_ctx_##N##_atomic_fetch_xor_nbi(shmem_ctx_t c, T *f, T *d, T v, int pe) \
    { shmem_##N##_atomic_fetch_xor_nbi(f, d, v, cpe(c, pe)); }
SHMEMI_AMO_EXT_TYPES(DEFINE_CTX_AMO_EXT)
SHMEMI_AMO_TYPES(DEFINE_CTX_AMO)
SHMEMI_AMO_BIT_TYPES(DEFINE_CTX_AMO_BIT)
