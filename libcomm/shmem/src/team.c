// SPDX-License-Identifier: BSD-3-Clause
/*
 * team.c - OpenSHMEM 1.5 teams: SHMEM_TEAM_WORLD, SHMEM_TEAM_SHARED, strided
 * and 2-D splits. A team is an MPI communicator plus the map between team PE
 * numbers and world PE numbers (both directions), and the team-based
 * collectives and reductions on it.
 */
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"

struct shmemi_team {
    MPI_Comm comm;
    int size, my_pe;
    int *world_of;               /* [team pe] world pe */
    int *team_of;                /* [world pe] team pe, -1 if not a member */
    shmem_team_config_t config;
};

static struct shmemi_team world_team = {MPI_COMM_NULL, 0, -1, NULL, NULL, {0}};
static struct shmemi_team shared_team = {MPI_COMM_NULL, 0, -1, NULL, NULL, {0}};
shmem_team_t SHMEM_TEAM_WORLD = &world_team;
shmem_team_t SHMEM_TEAM_SHARED = &shared_team;

/* Fills t from its communicator (collective over comm). */
static void fill(struct shmemi_team *t, MPI_Comm comm, const shmem_team_config_t *cfg,
                 long mask)
{
    t->comm = comm;
    MPI_Comm_size(comm, &t->size);
    MPI_Comm_rank(comm, &t->my_pe);
    t->world_of = malloc(sizeof(int) * (size_t)t->size);
    t->team_of = malloc(sizeof(int) * (size_t)shmemi.npes);
    if (!t->world_of || !t->team_of)
        shmemi_fatal("out of memory for a team");
    MPI_Allgather(&shmemi.me, 1, MPI_INT, t->world_of, 1, MPI_INT, comm);
    for (int i = 0; i < shmemi.npes; i++)
        t->team_of[i] = -1;
    for (int i = 0; i < t->size; i++)
        t->team_of[t->world_of[i]] = i;
    t->config.num_contexts = cfg && (mask & SHMEM_TEAM_NUM_CONTEXTS) ? cfg->num_contexts : 0;
}

static void unfill(struct shmemi_team *t)
{
    if (t->comm != MPI_COMM_NULL && t->comm != shmemi.comm)
        MPI_Comm_free(&t->comm);
    free(t->world_of);
    free(t->team_of);
    *t = (struct shmemi_team){MPI_COMM_NULL, 0, -1, NULL, NULL, {0}};
}

/* World: every PE. Shared: the PEs whose memory this PE reaches by load and
 * store (its node with transport auto; only itself with transport rma). */
void shmemi_team_init(void)
{
    fill(&world_team, shmemi.comm, NULL, 0);
    MPI_Comm c;
    int color = shmemi.me;
    if (shmemi.node_comm != MPI_COMM_NULL && shmemi.reg[SHMEMI_HEAP].peer) {
        int leader = shmemi.me;
        MPI_Bcast(&leader, 1, MPI_INT, 0, shmemi.node_comm);
        color = leader;
        /* a node where some peer is not mapped (should not happen) falls
         * back to singletons */
        for (int pe = 0; pe < shmemi.npes; pe++)
            if (shmemi.node_rank[pe] >= 0 && !shmemi.reg[SHMEMI_HEAP].peer[pe])
                color = shmemi.me;
    }
    MPI_Comm_split(shmemi.comm, color, shmemi.me, &c);
    fill(&shared_team, c, NULL, 0);
}

void shmemi_team_fini(void)
{
    world_team.comm = MPI_COMM_NULL;    /* shmemi.comm is freed by init.c */
    unfill(&world_team);
    unfill(&shared_team);
}

static int bad_team(const char *fn, shmem_team_t t)
{
    shmemi_check_init(fn);
    if (t && t->comm != MPI_COMM_NULL)
        return 0;
    fprintf(stderr, "tnbc-shmem: error PE %d: %s: invalid team\n", shmemi.me, fn);
    return 1;
}

int shmemi_team_world_pe(shmem_team_t t, int pe)
{
    if (!t || t->comm == MPI_COMM_NULL || pe < 0 || pe >= t->size)
        return -1;
    return t->world_of[pe];
}

int shmem_team_my_pe(shmem_team_t t)
{
    return bad_team("shmem_team_my_pe", t) ? -1 : t->my_pe;
}

int shmem_team_n_pes(shmem_team_t t)
{
    return bad_team("shmem_team_n_pes", t) ? -1 : t->size;
}

int shmem_team_get_config(shmem_team_t t, long mask, shmem_team_config_t *config)
{
    if (bad_team("shmem_team_get_config", t) || !config)
        return -1;
    if (mask & SHMEM_TEAM_NUM_CONTEXTS)
        config->num_contexts = t->config.num_contexts;
    return 0;
}

int shmem_team_translate_pe(shmem_team_t src, int pe, shmem_team_t dest)
{
    if (!src || !dest || src->comm == MPI_COMM_NULL || dest->comm == MPI_COMM_NULL ||
        pe < 0 || pe >= src->size)
        return -1;
    return dest->team_of[src->world_of[pe]];
}

void *shmem_team_ptr(shmem_team_t t, const void *dest, int pe)
{
    int w = shmemi_team_world_pe(t, pe);
    return w < 0 ? NULL : shmem_ptr(dest, w);
}

static shmem_team_t new_team(MPI_Comm c, const shmem_team_config_t *cfg, long mask)
{
    struct shmemi_team *t = calloc(1, sizeof *t);
    if (!t)
        shmemi_fatal("out of memory");
    fill(t, c, cfg, mask);
    return t;
}

int shmem_team_split_strided(shmem_team_t parent, int start, int stride, int size,
                             const shmem_team_config_t *config, long mask,
                             shmem_team_t *out)
{
    *out = SHMEM_TEAM_INVALID;
    if (bad_team("shmem_team_split_strided", parent))
        return -1;
    /* stride 0 is legal with size 1 (1.5); negative strides are not */
    if (size < 1 || stride < (size == 1 ? 0 : 1) || start < 0 || start >= parent->size ||
        start + (long)(size - 1) * stride >= parent->size) {
        fprintf(stderr, "tnbc-shmem: error PE %d: shmem_team_split_strided(%d, %d, %d): "
                "does not fit the parent's %d PEs\n", shmemi.me, start, stride, size,
                parent->size);
        return -1;
    }
    /* collective over the parent: members get a communicator, others NULL */
    int prel = parent->my_pe - start;
    int member = prel >= 0 && (stride ? prel % stride == 0 && prel / stride < size
                                      : prel == 0);
    MPI_Comm c;
    MPI_Comm_split(parent->comm, member ? 0 : MPI_UNDEFINED, prel, &c);
    if (member)
        *out = new_team(c, config, mask);
    return 0;
}

/* x-teams are the rows of an xrange-wide grid of the parent's PEs, y-teams
 * its columns. */
int shmem_team_split_2d(shmem_team_t parent, int xrange,
                        const shmem_team_config_t *xcfg, long xmask, shmem_team_t *xteam,
                        const shmem_team_config_t *ycfg, long ymask, shmem_team_t *yteam)
{
    *xteam = *yteam = SHMEM_TEAM_INVALID;
    if (bad_team("shmem_team_split_2d", parent))
        return -1;
    if (xrange < 1) {
        fprintf(stderr, "tnbc-shmem: error PE %d: shmem_team_split_2d: xrange %d < 1\n",
                shmemi.me, xrange);
        return -1;
    }
    if (xrange > parent->size)
        xrange = parent->size;
    int me = parent->my_pe;
    MPI_Comm cx, cy;
    MPI_Comm_split(parent->comm, me / xrange, me % xrange, &cx);
    MPI_Comm_split(parent->comm, me % xrange, me / xrange, &cy);
    *xteam = new_team(cx, xcfg, xmask);
    *yteam = new_team(cy, ycfg, ymask);
    return 0;
}

void shmem_team_destroy(shmem_team_t t)
{
    if (t && t != SHMEM_TEAM_WORLD && t != SHMEM_TEAM_SHARED && t->comm != MPI_COMM_NULL) {
        unfill(t);
        free(t);
    }
}

int shmem_team_sync(shmem_team_t t)
{
    if (bad_team("shmem_team_sync", t))
        return -1;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    return MPI_Barrier(t->comm) == MPI_SUCCESS ? 0 : -1;
}

int shmem_broadcastmem(shmem_team_t t, void *dest, const void *src, size_t n, int root)
{
    if (bad_team("shmem_broadcast", t) || root < 0 || root >= t->size)
        return -1;
    int c = shmemi_coll_count("shmem_broadcast", n, 1);
    if (c < 0)
        return -1;
    if (t->my_pe == root && dest != src)
        memmove(dest, src, n);      /* 1.5: the root's dest is updated too */
    return MPI_Bcast(dest, c, MPI_BYTE, root, t->comm) == MPI_SUCCESS ? 0 : -1;
}

int shmem_fcollectmem(shmem_team_t t, void *dest, const void *src, size_t n)
{
    if (bad_team("shmem_fcollect", t))
        return -1;
    int c = shmemi_coll_count("shmem_fcollect", n, (size_t)t->size);
    if (c < 0)
        return -1;
    c /= t->size;
    return MPI_Allgather(src, c, MPI_BYTE, dest, c, MPI_BYTE, t->comm) ==
           MPI_SUCCESS ? 0 : -1;
}

int shmem_collectmem(shmem_team_t t, void *dest, const void *src, size_t n)
{
    if (bad_team("shmem_collect", t))
        return -1;
    return shmemi_collectv(t->comm, "shmem_collect", dest, src, n);
}

int shmem_alltoallmem(shmem_team_t t, void *dest, const void *src, size_t n)
{
    if (bad_team("shmem_alltoall", t))
        return -1;
    int c = shmemi_coll_count("shmem_alltoall", n, (size_t)t->size);
    if (c < 0)
        return -1;
    c /= t->size;
    return MPI_Alltoall(src, c, MPI_BYTE, dest, c, MPI_BYTE, t->comm) ==
           MPI_SUCCESS ? 0 : -1;
}

int shmem_alltoallsmem(shmem_team_t t, void *dest, const void *src, ptrdiff_t dst,
                       ptrdiff_t sst, size_t n)
{
    if (bad_team("shmem_alltoalls", t))
        return -1;
    return shmemi_alltoalls(t->comm, dest, src, dst, sst, n, 1);
}

#define DEFINE_TEAM_COLL(T, N)                                                 \
    int shmem_##N##_broadcast(shmem_team_t t, T *d, const T *s, size_t n, int root) \
    { return shmem_broadcastmem(t, d, s, shmemi_nbytes(n, sizeof(T)), root); } \
    int shmem_##N##_collect(shmem_team_t t, T *d, const T *s, size_t n)        \
    { return shmem_collectmem(t, d, s, shmemi_nbytes(n, sizeof(T))); }         \
    int shmem_##N##_fcollect(shmem_team_t t, T *d, const T *s, size_t n)       \
    { return shmem_fcollectmem(t, d, s, shmemi_nbytes(n, sizeof(T))); }        \
    int shmem_##N##_alltoall(shmem_team_t t, T *d, const T *s, size_t n)       \
    { return shmem_alltoallmem(t, d, s, shmemi_nbytes(n, sizeof(T))); }        \
    int shmem_##N##_alltoalls(shmem_team_t t, T *d, const T *s, ptrdiff_t dst, \
                              ptrdiff_t sst, size_t n)                         \
    {                                                                          \
        if (bad_team("shmem_alltoalls", t))                                    \
            return -1;                                                         \
        return shmemi_alltoalls(t->comm, d, s, dst, sst, n, sizeof(T));        \
    }
SHMEMI_RMA_TYPES(DEFINE_TEAM_COLL)

static int team_reduce(shmem_team_t t, void *dest, const void *src, size_t n,
                       MPI_Datatype dt, MPI_Op op)
{
    if (bad_team("shmem_reduce", t))
        return -1;
    if (n > INT_MAX) {
        shmemi_refuse("reduction of %zu elements refused: more than %d", n, INT_MAX);
        return -1;
    }
    return MPI_Allreduce(dest == src ? MPI_IN_PLACE : src, dest, (int)n, dt, op,
                         t->comm) == MPI_SUCCESS ? 0 : -1;
}

#define DEFINE_REDUCE(T, N, OP)                                                \
    int shmem_##N##_##OP##_reduce(shmem_team_t t, T *d, const T *s, size_t n)  \
    { return team_reduce(t, d, s, n, MPI_T_##N, MPI_OP_##OP); }
#define DEFINE_BIT_REDUCE(T, N) SHMEMI_BIT_OPS(DEFINE_REDUCE, T, N)
#define DEFINE_MINMAX_REDUCE(T, N)                                             \
    SHMEMI_MINMAX_OPS(DEFINE_REDUCE, T, N) SHMEMI_SUMPROD_OPS_(DEFINE_REDUCE, T, N)
#define DEFINE_SUMPROD_REDUCE(T, N) SHMEMI_SUMPROD_OPS_(DEFINE_REDUCE, T, N)
SHMEMI_TEAM_BIT_TYPES(DEFINE_BIT_REDUCE)
SHMEMI_TEAM_MINMAX_TYPES(DEFINE_MINMAX_REDUCE)
SHMEMI_COMPLEX_TYPES(DEFINE_SUMPROD_REDUCE)
