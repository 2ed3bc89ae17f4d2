/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * internal.h - state and helpers shared by the tnbc-shmem sources.
 *
 * Two regions are symmetric: the heap (MPI_Win_allocate_shared on each node,
 * exposed to all PEs by MPI_Win_create) and the executable's static data
 * (.data/.bss, exposed by MPI_Win_create). A remote address is a local
 * address in one of them; its offset from the region base is the same on
 * every PE.
 */
#ifndef SHMEMI_INTERNAL_H
#define SHMEMI_INTERNAL_H

#include <limits.h>
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "shmem.h"
#include "shmemx.h"

enum shmemi_region_id { SHMEMI_HEAP = 0, SHMEMI_DATA = 1, SHMEMI_NREGIONS };

struct shmemi_region {
    char *base;          /* this PE's copy */
    size_t size;
    MPI_Win win;         /* MPI_WIN_NULL when no PE needs RMA on it */
    MPI_Aint *shift;     /* [pe]: pe's base - pe's window start (NULL: all 0) */
    char **peer;         /* [pe]: pe's copy mapped here, NULL when not */
    char *dirty;         /* [pe]: MPI operations outstanding to pe */
    int *dirty_list;     /* the PEs marked in dirty, ndirty of them */
    int ndirty;
};

struct shmemi_state {
    int initialized;
    int me, npes;
    MPI_Comm comm;       /* duplicate of MPI_COMM_WORLD: collectives */
    MPI_Comm am_comm;    /* duplicate: active messages and remote segment puts */
    MPI_Comm node_comm;
    MPI_Win shm_win;     /* the node's shared heap window */
    int own_mpi;         /* we called MPI_Init, so we finalize */
    int amo_local[SHMEMI_NREGIONS]; /* every PE's copy mapped: CPU atomics */
    int threads;         /* SHMEM_THREAD_MULTIPLE: the RMA path takes rma_lock */
    int thread_level;    /* what shmem_init_thread provided */
    int *node_rank;      /* [pe]: rank in node_comm, -1 on another node */
    int on_error_skip;   /* TNBC_SHMEM_ON_ERROR=skip: refuse and go on */
    int rma_progress;    /* MPI RMA in use: poke MPI progress when waiting */
    struct shmemi_region reg[SHMEMI_NREGIONS];
};

extern struct shmemi_state shmemi;

/* Where one remote access lands. */
struct shmemi_target {
    char *local;         /* load/store address, or NULL: use MPI on win */
    MPI_Win win;
    MPI_Aint off;
    int region;
};

int shmemi_bad_access(const char *op, const void *addr, size_t n, int pe);

/* Resolves [addr, addr+n) on pe. Returns 0, or -1 after refusing it (the
 * caller then does nothing). Inline: it is on every put and get. */
static inline int shmemi_xlate(const char *op, const void *addr, size_t n,
                               int pe, struct shmemi_target *t)
{
    uintptr_t a = (uintptr_t)addr;
    if ((unsigned)pe >= (unsigned)shmemi.npes)
        goto bad;
    for (int r = 0; r < SHMEMI_NREGIONS; r++) {
        const struct shmemi_region *g = &shmemi.reg[r];
        uintptr_t off = a - (uintptr_t)g->base;
        if (off < g->size && n <= g->size - off) {
            t->off = (MPI_Aint)off + (g->shift ? g->shift[pe] : 0);
            t->win = g->win;
            t->region = r;
            if (pe == shmemi.me)
                t->local = (char *)addr;
            else if (g->peer && g->peer[pe])
                t->local = g->peer[pe] + off;
            else
                t->local = NULL;
            return 0;
        }
    }
bad:
    *t = (struct shmemi_target){NULL, MPI_WIN_NULL, 0, 0};
    return shmemi_bad_access(op, addr, n, pe);
}

/* n elements of size bytes, or SIZE_MAX when the product overflows: no
 * region holds SIZE_MAX bytes, so shmemi_xlate then refuses the access like
 * any other one that leaves the symmetric regions. */
static inline size_t shmemi_nbytes(size_t n, size_t size)
{
    size_t b;
    return __builtin_mul_overflow(n, size, &b) ? SIZE_MAX : b;
}

/* Bytes spanned by nelems (> 0) elements of elsize at stride st (> 0, in
 * elements): ((nelems - 1) * st + 1) * elsize. Returns -1 when a step
 * overflows or the span exceeds PTRDIFF_MAX, else 0 with *bytes set. */
static inline int shmemi_span(ptrdiff_t st, size_t elsize, size_t nelems, size_t *bytes)
{
    size_t b;
    if (__builtin_mul_overflow(nelems - 1, (size_t)st, &b) ||
        __builtin_add_overflow(b, 1, &b) || __builtin_mul_overflow(b, elsize, &b) ||
        b > (size_t)PTRDIFF_MAX)
        return -1;
    *bytes = b;
    return 0;
}

/* Refuses an operation after a one-line message: ends the job, or with
 * TNBC_SHMEM_ON_ERROR=skip returns -1 so that the caller drops it. */
int shmemi_refuse(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Under SHMEM_THREAD_MULTIPLE every MPI RMA call and the state it shares
 * (bounce buffer, pending-target lists, message queues) is used under one
 * recursive lock; the load/store path takes no lock. */
void shmemi_lock(void);
void shmemi_unlock(void);

void shmemi_check_init(const char *fn);
void shmemi_fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void shmemi_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
size_t shmemi_env_size(const char *name, size_t dflt);

/* rma.c: the MPI halves of put and get; the bounce buffer for small puts */
const void *shmemi_bounce(const void *src, size_t n);
void shmemi_bounce_reset(void);
void shmemi_put_rma(const struct shmemi_target *t, const void *src, size_t n,
                    int pe, int nbi);
void shmemi_get_rma(const struct shmemi_target *t, void *dest, size_t n,
                    int pe, int nbi);
void shmemi_iput(void *dest, const void *src, ptrdiff_t dst, ptrdiff_t sst,
                 size_t elsize, size_t nelems, int pe);
void shmemi_iget(void *dest, const void *src, ptrdiff_t dst, ptrdiff_t sst,
                 size_t elsize, size_t nelems, int pe);
/* Remembers that pe has MPI operations outstanding on a region's window, so
 * quiet flushes exactly those targets. */
static inline void shmemi_mark_pending(int region, int pe)
{
    struct shmemi_region *g = &shmemi.reg[region];
    if (!g->dirty[pe]) {
        g->dirty[pe] = 1;
        g->dirty_list[g->ndirty++] = pe;
    }
}

/* amo.c: integer atomics on 4- or 8-byte words; returns the old value. */
enum shmemi_amo_op { AMO_FETCH, AMO_SET, AMO_SWAP, AMO_CSWAP, AMO_ADD,
                     AMO_AND, AMO_OR, AMO_XOR };
uint64_t shmemi_amo(enum shmemi_amo_op op, void *dest, size_t size,
                    uint64_t value, uint64_t cond, int pe, int want_old);

/* sync.c */
void shmemi_progress(void);
void shmemi_mpi_progress(void);
void shmemi_quiet(void);
void shmemi_barrier_world(void);

/* heap.c */
int shmemi_heap_init(size_t reserved);
void *shmemi_heap_alloc(size_t align, size_t size);
void shmemi_heap_release(void *p);
size_t shmemi_heap_block_size(const void *p);

/* am.c: active messages and everything else that travels as a message. */
enum { SHMEMI_TAG_SEG = 30000, SHMEMI_TAG_GETTO = 30001 };
void shmemi_am_init(void);
void shmemi_am_fini(void);
int shmemi_am_poll(void);
void shmemi_msg_send(int pe, int tag, const void *hdr, size_t hlen,
                     const void *data, size_t len);
long shmemi_msg_balance(void);   /* sent minus processed, this PE */

/* seg.c, getto.c: message handlers called by shmemi_am_poll */
void shmemi_seg_deliver(int src, const char *buf, size_t len);
void shmemi_getto_deliver(int src, const char *buf, size_t len);

/* static.c */
#define SHMEMI_HEAP_ALIGN ((size_t)2 << 20)
int shmemi_static_range(char **base, size_t *size);
int shmemi_static_share(void);     /* returns how many PEs' copies are mapped */
void shmemi_static_unshare(void);

/* MPI datatypes of the reduction types, by their OpenSHMEM names */
#define MPI_T_short MPI_SHORT
#define MPI_T_int MPI_INT
#define MPI_T_long MPI_LONG
#define MPI_T_longlong MPI_LONG_LONG
#define MPI_T_float MPI_FLOAT
#define MPI_T_double MPI_DOUBLE
#define MPI_T_longdouble MPI_LONG_DOUBLE
#if CHAR_MIN < 0
#define MPI_T_char MPI_SIGNED_CHAR
#else
#define MPI_T_char MPI_UNSIGNED_CHAR
#endif
#define MPI_T_schar MPI_SIGNED_CHAR
#define MPI_T_uchar MPI_UNSIGNED_CHAR
#define MPI_T_ushort MPI_UNSIGNED_SHORT
#define MPI_T_uint MPI_UNSIGNED
#define MPI_T_ulong MPI_UNSIGNED_LONG
#define MPI_T_ulonglong MPI_UNSIGNED_LONG_LONG
#define MPI_T_int8 MPI_INT8_T
#define MPI_T_int16 MPI_INT16_T
#define MPI_T_int32 MPI_INT32_T
#define MPI_T_int64 MPI_INT64_T
#define MPI_T_uint8 MPI_UINT8_T
#define MPI_T_uint16 MPI_UINT16_T
#define MPI_T_uint32 MPI_UINT32_T
#define MPI_T_uint64 MPI_UINT64_T
_Static_assert(sizeof(size_t) == 8 && sizeof(ptrdiff_t) == 8, "size_t is 64 bits");
#define MPI_T_size MPI_UINT64_T
#define MPI_T_ptrdiff MPI_INT64_T
#define MPI_T_complexf MPI_C_FLOAT_COMPLEX
#define MPI_T_complexd MPI_C_DOUBLE_COMPLEX
#define MPI_OP_and MPI_BAND
#define MPI_OP_or MPI_BOR
#define MPI_OP_xor MPI_BXOR
#define MPI_OP_sum MPI_SUM
#define MPI_OP_prod MPI_PROD
#define MPI_OP_min MPI_MIN
#define MPI_OP_max MPI_MAX

/* coll.c */
void shmemi_coll_fini(void);
/* Byte count of a collective as an MPI int count, or -1 after a message
 * when it does not fit (MPI counts are int; a wrapped count would move the
 * wrong amount of data). */
int shmemi_coll_count(const char *fn, size_t nelems, size_t size);
/* Strided all-to-all on comm: block j of src (nelems elements of size at
 * stride sst) goes to PE j, whose dest receives it as block me (stride dst). */
int shmemi_alltoalls(MPI_Comm comm, void *dest, const void *src, ptrdiff_t dst,
                     ptrdiff_t sst, size_t nelems, size_t size);

int shmemi_collectv(MPI_Comm c, const char *fn, void *dest, const void *src,
                    size_t bytes);

/* team.c: world PE number of a team's PE pe, or -1 */
int shmemi_team_world_pe(shmem_team_t team, int pe);
/* team.c */
void shmemi_team_init(void);
void shmemi_team_fini(void);

/* Put and get: inline so that a store to a mapped PE costs a range check
 * and a memcpy, the message-rate path. */
static inline void shmemi_put(void *dest, const void *src, size_t n, int pe, int nbi)
{
    struct shmemi_target t;
    if (n == 0 || shmemi_xlate("put", dest, n, pe, &t))
        return;
    if (t.local)
        memcpy(t.local, src, n);
    else
        shmemi_put_rma(&t, src, n, pe, nbi);
}

static inline void shmemi_get(void *dest, const void *src, size_t n, int pe, int nbi)
{
    struct shmemi_target t;
    if (n == 0 || shmemi_xlate("get", src, n, pe, &t))
        return;
    if (t.local)
        memcpy(dest, t.local, n);
    else
        shmemi_get_rma(&t, dest, n, pe, nbi);
}

#endif
