// SPDX-License-Identifier: BSD-3-Clause
/*
 * init.c - start-up and shut-down: communicators, the symmetric heap windows,
 * the static-data window, the choice of transport per PE.
 *
 * Transport (TNBC_SHMEM_TRANSPORT): "auto" maps the heaps of the PEs on this
 * node and reaches them by load/store, the others by MPI RMA; "rma" reaches
 * every other PE by MPI RMA (the SHMEM-over-MPI baseline, and the way to test
 * the RMA path on one machine).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct shmemi_state shmemi = {
    .comm = MPI_COMM_NULL, .am_comm = MPI_COMM_NULL, .node_comm = MPI_COMM_NULL,
    .shm_win = MPI_WIN_NULL,
    .reg = {{.win = MPI_WIN_NULL}, {.win = MPI_WIN_NULL}},
};

#define DEFAULT_HEAP (128u << 20)

static int env_choice(const char *name, const char *a, const char *b)
{
    const char *s = getenv(name);
    if (!s || !*s || !strcmp(s, a))
        return 0;
    if (!strcmp(s, b))
        return 1;
    shmemi_warn("%s=%s: expected %s or %s; using %s", name, s, a, b, a);
    return 0;
}

/* The heap base is aligned to SHMEMI_HEAP_ALIGN on every PE, so shmem_align
 * up to that alignment gives the same offset everywhere (larger ones work
 * when the bases happen to agree modulo the alignment: heap.c checks). The
 * padding is address space only: untouched pages cost no memory. */
static char *align_up(char *p, size_t a)
{
    return (char *)(((uintptr_t)p + a - 1) & ~(uintptr_t)(a - 1));
}

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n, size);
    if (!p)
        shmemi_fatal("out of memory at start-up");
    return p;
}

/* Transport "rma": the heap comes from MPI_Win_allocate, which lets the MPI
 * library use its fastest path (Open MPI's osc/ucx is ~100x slower on
 * MPI_Win_create memory on one node). Each PE's aligned base lies at its own
 * distance from its window's start: shift[pe] remembers it. */
static void alloc_rma_heap(size_t size)
{
    struct shmemi_region *h = &shmemi.reg[SHMEMI_HEAP];
    char *raw;
    h->peer = xcalloc(shmemi.npes, sizeof(char *));
    h->shift = xcalloc(shmemi.npes, sizeof(MPI_Aint));
    if (MPI_Win_allocate((MPI_Aint)(size + SHMEMI_HEAP_ALIGN), 1, MPI_INFO_NULL,
                         shmemi.comm, &raw, &h->win) != MPI_SUCCESS)
        shmemi_fatal("cannot allocate a %zu-byte symmetric heap window%s", size,
                     shmemi.threads ? " (under SHMEM_THREAD_MULTIPLE: Open MPI's osc "
                     "pt2pt refuses windows; ask for a lower thread level)" : "");
    MPI_Win_lock_all(MPI_MODE_NOCHECK, h->win);
    h->base = align_up(raw, SHMEMI_HEAP_ALIGN);
    h->size = size;
    MPI_Aint mine = h->base - raw;
    MPI_Allgather(&mine, 1, MPI_AINT, h->shift, 1, MPI_AINT, shmemi.comm);
    h->peer[shmemi.me] = h->base;
}

/* Maps the heap of every PE on this node; returns how many PEs are mapped.
 * Remembers each PE's rank on this node (-1: another node) for static.c. */
static int map_node_heaps(size_t size, int use_shm)
{
    MPI_Info info;
    char *base;
    int node_size, mapped = 0;
    struct shmemi_region *h = &shmemi.reg[SHMEMI_HEAP];
    int *node_of = xcalloc(shmemi.npes, sizeof(int));
    shmemi.node_rank = xcalloc(shmemi.npes, sizeof(int));
    h->peer = xcalloc(shmemi.npes, sizeof(char *));

    MPI_Comm_split_type(shmemi.comm, MPI_COMM_TYPE_SHARED, shmemi.me,
                        MPI_INFO_NULL, &shmemi.node_comm);
    MPI_Comm_size(shmemi.node_comm, &node_size);
    int node_rank, leader = shmemi.me;
    MPI_Comm_rank(shmemi.node_comm, &node_rank);
    MPI_Bcast(&leader, 1, MPI_INT, 0, shmemi.node_comm);
    MPI_Allgather(&leader, 1, MPI_INT, node_of, 1, MPI_INT, shmemi.comm);
    MPI_Allgather(&node_rank, 1, MPI_INT, shmemi.node_rank, 1, MPI_INT, shmemi.comm);

    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_shared_noncontig", "true");
    if (MPI_Win_allocate_shared((MPI_Aint)(size + SHMEMI_HEAP_ALIGN), 1, info,
                                shmemi.node_comm, &base, &shmemi.shm_win) != MPI_SUCCESS)
        shmemi_fatal("cannot allocate a %zu-byte symmetric heap in shared memory "
                     "(lower SHMEM_SYMMETRIC_SIZE; with --mca osc, include sm)", size);
    MPI_Info_free(&info);
    /* each PE maps a peer's segment at its own address, so the padding that
     * aligns a base must come from the segment's owner */
    MPI_Aint *pad = xcalloc(shmemi.npes, sizeof(MPI_Aint));
    MPI_Aint mypad = align_up(base, SHMEMI_HEAP_ALIGN) - base;
    MPI_Allgather(&mypad, 1, MPI_AINT, pad, 1, MPI_AINT, shmemi.comm);
    base += mypad;
    h->base = base;
    h->size = size;
    for (int pe = 0; pe < shmemi.npes; pe++) {
        if (node_of[pe] != leader)
            shmemi.node_rank[pe] = -1;
        if (pe == shmemi.me) {
            h->peer[pe] = base;
        } else if (use_shm && node_of[pe] == leader) {
            MPI_Aint sz;
            int du;
            char *p;
            MPI_Win_shared_query(shmemi.shm_win, shmemi.node_rank[pe], &sz, &du, &p);
            h->peer[pe] = p + pad[pe];
        }
        mapped += h->peer[pe] != NULL;
    }
    free(pad);
    free(node_of);
    return mapped;
}

/* One window over a region, locked once for the whole run. */
static void expose(int r, const char *what)
{
    struct shmemi_region *g = &shmemi.reg[r];
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "same_disp_unit", "true");
    int rc = MPI_Win_create(g->base, (MPI_Aint)g->size, 1, info, shmemi.comm, &g->win);
    MPI_Info_free(&info);
    if (rc != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING];
        int len;
        MPI_Error_string(rc, msg, &len);
        shmemi_fatal("MPI_Win_create for the %s failed (%s); with the TCP BTL "
                     "use --mca osc sm,pt2pt%s", what, msg,
                     shmemi.threads ? " and a thread level below SHMEM_THREAD_MULTIPLE" : "");
    }
    MPI_Win_lock_all(MPI_MODE_NOCHECK, g->win);
}

static void setup_static(int use_rma)
{
    struct shmemi_region *d = &shmemi.reg[SHMEMI_DATA];
    unsigned long sz[2] = {0, 0}, mm[2];
    int on = !env_choice("TNBC_SHMEM_STATIC", "1", "0");
    if (on && shmemi_static_range(&d->base, &d->size) == 0) {
        sz[0] = d->size;
        sz[1] = ~(unsigned long)d->size;
    }
    /* every PE must run the same executable: same segment size everywhere */
    MPI_Allreduce(sz, mm, 2, MPI_UNSIGNED_LONG, MPI_MAX, shmemi.comm);
    if (mm[0] != ~mm[1] || mm[0] == 0) {
        if (on && shmemi.me == 0)
            shmemi_warn("static data differs between PEs (or was not found); "
                        "only the symmetric heap is symmetric");
        d->base = NULL;
        d->size = 0;
        return;
    }
    d->peer = xcalloc(shmemi.npes, sizeof(char *));
    d->peer[shmemi.me] = d->base;
    int mapped = 1, all_mapped;
    if (!use_rma && shmemi.npes > 1)
        mapped = shmemi_static_share();
    MPI_Allreduce(&mapped, &all_mapped, 1, MPI_INT, MPI_MIN, shmemi.comm);
    shmemi.amo_local[SHMEMI_DATA] = all_mapped == shmemi.npes;
    if (!shmemi.amo_local[SHMEMI_DATA])
        expose(SHMEMI_DATA, "static data");
}

int shmem_init_thread(int requested, int *provided)
{
    int up = 0, got = MPI_THREAD_SINGLE;
    if (shmemi.initialized) {
        if (provided)
            *provided = requested;
        return 0;
    }
    MPI_Initialized(&up);
    if (!up) {
        /* Open MPI 4.1's osc/rdma crashes on an atomic aimed at the calling
         * process (mca_btl_vader_emu_acswap); prefer the other components
         * unless the user chose. */
        setenv("OMPI_MCA_osc", "sm,ucx,pt2pt", 0);
        int want = requested == SHMEM_THREAD_MULTIPLE ? MPI_THREAD_MULTIPLE
                   : requested == SHMEM_THREAD_SERIALIZED ? MPI_THREAD_SERIALIZED
                                                          : MPI_THREAD_FUNNELED;
        if (MPI_Init_thread(NULL, NULL, want, &got) != MPI_SUCCESS)
            return -1;
        shmemi.own_mpi = 1;
    } else {
        MPI_Query_thread(&got);
    }
    /* the level MPI gives, never more: SERIALIZED needs no lock here since
     * calls never overlap; MULTIPLE turns on the RMA lock (util.c) */
    int level = got >= MPI_THREAD_MULTIPLE ? SHMEM_THREAD_MULTIPLE
                : got == MPI_THREAD_SERIALIZED ? SHMEM_THREAD_SERIALIZED
                : got == MPI_THREAD_FUNNELED ? SHMEM_THREAD_FUNNELED
                                              : SHMEM_THREAD_SINGLE;
    if (level > requested)
        level = requested < SHMEM_THREAD_SINGLE ? SHMEM_THREAD_SINGLE : requested;
    if (provided)
        *provided = level;
    shmemi.thread_level = level;
    shmemi.threads = level == SHMEM_THREAD_MULTIPLE;
    MPI_Comm_dup(MPI_COMM_WORLD, &shmemi.comm);
    MPI_Comm_dup(MPI_COMM_WORLD, &shmemi.am_comm);
    MPI_Comm_set_errhandler(shmemi.comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(shmemi.comm, &shmemi.me);
    MPI_Comm_size(shmemi.comm, &shmemi.npes);
    shmemi.initialized = 1;

    shmemi.on_error_skip = env_choice("TNBC_SHMEM_ON_ERROR", "abort", "skip");
    int use_rma = env_choice("TNBC_SHMEM_TRANSPORT", "auto", "rma");
    size_t heap = shmemi_env_size("SHMEM_SYMMETRIC_SIZE", DEFAULT_HEAP);
    heap = (heap + 4095) & ~(size_t)4095;   /* < SIZE_MAX >> 1: env_size checks */

    int mapped = 1, all_mapped;
    if (use_rma)
        alloc_rma_heap(heap);
    else
        mapped = map_node_heaps(heap, 1);
    MPI_Allreduce(&mapped, &all_mapped, 1, MPI_INT, MPI_MIN, shmemi.comm);
    shmemi.amo_local[SHMEMI_HEAP] = all_mapped == shmemi.npes;
    for (int r = 0; r < SHMEMI_NREGIONS; r++) {
        shmemi.reg[r].dirty = calloc(shmemi.npes, 1);
        shmemi.reg[r].dirty_list = calloc(shmemi.npes, sizeof(int));
        if (!shmemi.reg[r].dirty || !shmemi.reg[r].dirty_list)
            shmemi_fatal("out of memory at start-up");
    }
    if (!shmemi.amo_local[SHMEMI_HEAP] && shmemi.reg[SHMEMI_HEAP].win == MPI_WIN_NULL)
        expose(SHMEMI_HEAP, "symmetric heap");
    setup_static(use_rma);
    shmemi.rma_progress = shmemi.npes > 1;
    shmemi_heap_init(0);
    shmemi_am_init();
    shmemi_team_init();
    /* Programs in the start_pes style never call shmem_finalize. */
    static int registered;
    if (!registered++)
        atexit(shmem_finalize);
    MPI_Barrier(shmemi.comm);
    return 0;
}

void shmem_init(void)
{
    if (shmem_init_thread(SHMEM_THREAD_SINGLE, NULL) != 0)
        shmemi_fatal("MPI initialisation failed");
}

void start_pes(int npes)
{
    (void)npes;
    shmem_init();
}

void shmem_query_thread(int *provided)
{
    *provided = shmemi.thread_level;
}

void shmem_finalize(void)
{
    if (!shmemi.initialized)
        return;
    shmem_barrier_all();
    shmemi_am_fini();
    shmemi_coll_fini();
    shmemi_team_fini();
    for (int r = 0; r < SHMEMI_NREGIONS; r++) {
        if (shmemi.reg[r].win != MPI_WIN_NULL) {
            MPI_Win_unlock_all(shmemi.reg[r].win);
            MPI_Win_free(&shmemi.reg[r].win);
        }
    }
    if (shmemi.shm_win != MPI_WIN_NULL)
        MPI_Win_free(&shmemi.shm_win);
    if (shmemi.node_comm != MPI_COMM_NULL)
        MPI_Comm_free(&shmemi.node_comm);
    MPI_Comm_free(&shmemi.am_comm);
    MPI_Comm_free(&shmemi.comm);
    shmemi_static_unshare();
    free(shmemi.node_rank);
    shmemi.node_rank = NULL;
    for (int r = 0; r < SHMEMI_NREGIONS; r++) {
        struct shmemi_region *g = &shmemi.reg[r];
        free(g->dirty);
        free(g->dirty_list);
        free(g->peer);
        free(g->shift);
        g->dirty = NULL;
        g->dirty_list = NULL;
        g->peer = NULL;
        g->shift = NULL;
    }
    shmemi.initialized = 0;
    if (shmemi.own_mpi)
        MPI_Finalize();
}

void shmem_global_exit(int status)
{
    fflush(stdout);
    MPI_Abort(MPI_COMM_WORLD, status);
    exit(status);
}

int shmem_my_pe(void) { return shmemi.me; }
int shmem_n_pes(void) { return shmemi.npes; }
int _my_pe(void) { return shmemi.me; }
int _num_pes(void) { return shmemi.npes; }

int shmem_pe_accessible(int pe)
{
    return pe >= 0 && pe < shmemi.npes;
}

int shmem_addr_accessible(const void *addr, int pe)
{
    if (!shmem_pe_accessible(pe))
        return 0;
    for (int r = 0; r < SHMEMI_NREGIONS; r++) {
        uintptr_t off = (uintptr_t)addr - (uintptr_t)shmemi.reg[r].base;
        if (off < shmemi.reg[r].size)
            return 1;
    }
    return 0;
}

void *shmem_ptr(const void *dest, int pe)
{
    if (!shmem_pe_accessible(pe))
        return NULL;
    if (pe == shmemi.me)
        return (void *)dest;
    for (int r = 0; r < SHMEMI_NREGIONS; r++) {
        const struct shmemi_region *g = &shmemi.reg[r];
        uintptr_t off = (uintptr_t)dest - (uintptr_t)g->base;
        if (off < g->size)
            return g->peer && g->peer[pe] ? g->peer[pe] + off : NULL;
    }
    return NULL;
}

void shmem_info_get_version(int *major, int *minor)
{
    *major = SHMEM_MAJOR_VERSION;
    *minor = SHMEM_MINOR_VERSION;
}

void shmem_info_get_name(char *name)
{
    strncpy(name, SHMEM_VENDOR_STRING, SHMEM_MAX_NAME_LEN - 1);
    name[SHMEM_MAX_NAME_LEN - 1] = '\0';
}
