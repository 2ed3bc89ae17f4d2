// SPDX-License-Identifier: BSD-3-Clause
/*
 * Protection keys as the trace guard's way to close pages (guard_keys.h).
 *
 * Lifecycle of a keyed range (the pages of one guard's [lo, hi)):
 *
 *   (none) --tnbc_gkeys_arm--> LIVE --tnbc_gkeys_disarm--> KEPT
 *   KEPT --tnbc_gkeys_arm on the same [lo, hi)--> LIVE
 *   KEPT --its keys needed elsewhere, overlapped, or forget_all--> (none):
 *          its pages get key 0 back
 *
 * Invariants (under `lock`): the ranges are disjoint; no two ranges hold
 * the same key; a LIVE range's keys are on its pages (given at arm) and
 * belong to no other range. A KEPT range's pages may have lost their keys
 * (the program freed and mapped them again): nothing relies on them then,
 * since every arm gives the keys again.
 */
#include "guard_keys.h"

#include "config.h"

#include <assert.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#if defined(__x86_64__) && !defined(__SANITIZE_THREAD__) && defined(SYS_pkey_alloc)
#define HAVE_KEYS 1
#else
#define HAVE_KEYS 0
#endif

#define MAX_KEYS 16           /* x86: keys 0-15; key 0 is every page's */
#define MAX_RANGES 8
#define KEYS_DEFAULT 8        /* leaves the program 7 of the 15 */

/* The rights register: two bits per key, access-disable (AD) and
 * write-disable (WD). */
#define AD_BIT(k) (1u << (2 * (k)))
#define BOTH_BITS(k) (3u << (2 * (k)))

static int pool[MAX_KEYS];             /* keys we were given, ascending */
static int npool;
static long keys_wanted = -1;          /* TNBC_TRACE_KEYS as read */
static atomic_uint pool_mask;          /* bit k: key k is ours */
#if HAVE_KEYS
static atomic_uint pool_rights;        /* their rights bits (rights_bits) */
#endif

struct keyed_range {
    uintptr_t lo, hi;
    uint32_t keys;                     /* bit k: key k is on some page */
    int live;                          /* a guard holds it */
    int doomed;                        /* its memory was freed while live */
    unsigned long used;                /* arm count at its last arm (LRU) */
    unsigned long call;                /* collectives seen at its last arm */
};
static struct keyed_range ranges[MAX_RANGES];
static int nranges;
static unsigned long arms;
static unsigned long calls;            /* tnbc_gkeys_collective */
/* A kept range not armed again within this many collectives is given key
 * 0 back: past the traced calls, keys stay on no page for long. */
#define KEEP_CALLS 64
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static int key_pages(uintptr_t a, size_t len, int key)
{
#ifdef SYS_pkey_mprotect
    return (int)syscall(SYS_pkey_mprotect, (void *)a, len, PROT_READ | PROT_WRITE, key);
#else
    (void)a; (void)len; (void)key;
    return -1;
#endif
}

#if HAVE_KEYS
static inline uint32_t rdpkru(void)
{
    uint32_t eax, edx;
    __asm__ volatile(".byte 0x0f,0x01,0xee" : "=a"(eax), "=d"(edx) : "c"(0));
    return eax;
}

static inline void wrpkru(uint32_t v)
{
    __asm__ volatile(".byte 0x0f,0x01,0xef" : : "a"(v), "c"(0), "d"(0) : "memory");
}

/* Where the saved rights sit in a signal frame's XSAVE area: the offset
 * of state component 9 (CPUID leaf 0xD, sub-leaf 9). */
static unsigned pkru_offset;

static void find_pkru_offset(void)
{
    unsigned eax, ebx, ecx, edx;
    __asm__ volatile("cpuid" : "=a"(eax), "=b"(ebx), "=c"(ecx), "=d"(edx) : "a"(0xd), "c"(9));
    pkru_offset = eax >= 4 ? ebx : 0;
}

/* The frame's saved rights, or NULL when it has none (no XSAVE frame, or
 * one without the rights component). Offsets in the FXSAVE area: the
 * software-reserved bytes at 464 (magic, extended size, features, XSAVE
 * size: struct _fpx_sw_bytes), the XSAVE header's XSTATE_BV at 512. A
 * component whose XSTATE_BV bit is clear is in its initial state (rights
 * 0) and its bytes are not meaningful: written out, and the bit set, so
 * that sigreturn loads what we leave there. */
static uint32_t *frame_pkru(void *ucv)
{
    ucontext_t *uc = ucv;
    unsigned char *fp = (unsigned char *)uc->uc_mcontext.fpregs;
    uint32_t magic, size;
    uint64_t features, bv;
    if (!fp || !pkru_offset)
        return NULL;
    memcpy(&magic, fp + 464, sizeof magic);
    memcpy(&features, fp + 472, sizeof features);
    memcpy(&size, fp + 480, sizeof size);
    if (magic != 0x46505853u || !(features & (1ull << 9)) || pkru_offset + 4 > size)
        return NULL;
    memcpy(&bv, fp + 512, sizeof bv);
    if (!(bv & (1ull << 9))) {
        uint32_t zero = 0;
        memcpy(fp + pkru_offset, &zero, sizeof zero);
        bv |= 1ull << 9;
        memcpy(fp + 512, &bv, sizeof bv);
    }
    return (uint32_t *)(void *)(fp + pkru_offset);
}

/* Allows (open) or denies access to the keys whose rights bits are `bits`
 * in the frame's saved rights; 0, or -1 when the frame has none. */
static int frame_change(void *uc, uint32_t bits, int open)
{
    uint32_t *pkru = frame_pkru(uc);
    if (!pkru)
        return -1;
    *pkru = open ? *pkru & ~bits : *pkru | (bits & 0x55555555u);
    return 0;
}
#endif

/* ---- the pool, taken before any thread exists ---------------------------- */

static uint32_t rights_bits(uint32_t keys)
{
    uint32_t bits = 0;
    for (int k = 1; k < MAX_KEYS; k++)
        if (keys >> k & 1)
            bits |= BOTH_BITS(k);
    return bits;
}

void tnbc_gkeys_reserve(void)
{
#if HAVE_KEYS
    long want = tnbc_env_long("TNBC_TRACE_KEYS", KEYS_DEFAULT, 0, MAX_KEYS - 1);
    uint32_t mask = 0;
    keys_wanted = want;
    while (npool < want) {
        /* Rights 0: this thread, and every thread it starts from now on,
         * may access pages with the key. */
        int k = (int)syscall(SYS_pkey_alloc, 0, 0);
        if (k <= 0 || k >= MAX_KEYS)
            break;
        pool[npool++] = k;
        mask |= 1u << k;
    }
    atomic_store(&pool_mask, mask);
    atomic_store(&pool_rights, rights_bits(mask));
    if (npool)
        find_pkru_offset();
#endif
}

int tnbc_gkeys_ours(int pkey)
{
    return pkey > 0 && pkey < MAX_KEYS && (atomic_load(&pool_mask) >> pkey & 1);
}

int tnbc_gkeys_any(void)
{
    return atomic_load(&pool_mask) != 0;
}

void tnbc_gkeys_handler_enter(void)
{
#if HAVE_KEYS
    uint32_t rights = atomic_load(&pool_rights);
    if (rights)
        wrpkru(rdpkru() & ~rights);
#endif
}


int tnbc_gkeys_allow_in_frame(int pkey, void *uc)
{
#if HAVE_KEYS
    if (tnbc_gkeys_ours(pkey))
        return frame_change(uc, BOTH_BITS(pkey), 1);
#else
    (void)pkey; (void)uc;
#endif
    return -1;
}

/* ---- the self-test ---------------------------------------------------------- */

#if HAVE_KEYS
static __thread int selftest_phase;        /* 1: its fault expected; 2: seen */
static __thread sigjmp_buf *selftest_env;
static int selftest_key;
#endif

int tnbc_gkeys_selftest_fault(const siginfo_t *si, void *uc)
{
#if HAVE_KEYS
    if (!selftest_phase || si->si_code != SEGV_PKUERR)
        return 0;
    if (selftest_phase == 1) {
        selftest_phase = 2;
        if (frame_change(uc, BOTH_BITS(selftest_key), 1) == 0)
            return 1;
    }
    siglongjmp(*selftest_env, 1);    /* the edit did not take: keys unusable */
#else
    (void)si; (void)uc;
    return 0;
#endif
}

#if HAVE_KEYS
/* A page with one of our keys, denied, read once: the handler must see the
 * fault and let the read through by editing the frame. */
static int selftest(void)
{
    size_t ps = tnbc_page_size();
    char *p = mmap(NULL, ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    volatile int ok = 0;
    if (p == MAP_FAILED)
        return 0;
    p[0] = 42;
    selftest_key = pool[0];
    if (key_pages((uintptr_t)p, ps, selftest_key) == 0) {
        sigjmp_buf env;
        uint32_t saved = rdpkru();
        selftest_env = &env;
        if (sigsetjmp(env, 1) == 0) {
            selftest_phase = 1;
            wrpkru(saved | AD_BIT(selftest_key));
            ok = *(volatile char *)p == 42 && selftest_phase == 2;
        }
        selftest_phase = 0;
        wrpkru(saved);
    }
    munmap(p, ps);
    return ok;
}
#endif

int tnbc_gkeys_usable(void)
{
    static int usable = -1;
    pthread_mutex_lock(&lock);
    if (usable < 0) {
#if HAVE_KEYS
        usable = npool > 0 && pkru_offset && selftest();
        if (npool > 0 && !usable)
            tnbc_warn("protection keys do not work here; the trace closes pages with mprotect");
#else
        usable = 0;
#endif
    }
    pthread_mutex_unlock(&lock);
    return usable;
}

/* ---- the program's threads ------------------------------------------------- */

static atomic_int init_phase;          /* tnbc_gkeys_mpi_init */
static atomic_int program_threads;     /* sticky: the program started one */
static atomic_long arms_keyed, arms_mprotect;

void tnbc_gkeys_mpi_init(int inside)
{
    atomic_store(&init_phase, inside ? 1 : 2);
}

static void forget_for_threads(void);

void tnbc_gkeys_thread_created(void)
{
    if (atomic_load(&init_phase) == 1)     /* MPI's own, started in MPI_Init */
        return;
    if (!atomic_exchange(&program_threads, 1) && atomic_load(&pool_mask))
        forget_for_threads();
}

const char *tnbc_gkeys_summary(void)
{
    long k = atomic_load(&arms_keyed), m = atomic_load(&arms_mprotect);
    if (keys_wanted == 0)
        return "mprotect (TNBC_TRACE_KEYS=0)";
    if (!atomic_load(&pool_mask) || !tnbc_gkeys_usable())
        return "mprotect (no protection keys here)";
    if (!k)
        return atomic_load(&program_threads) ? "mprotect (the program runs threads of its own)"
                                              : "mprotect";
    if (!m)
        return "keys";
    return atomic_load(&program_threads) ? "keys, then mprotect (the program started a thread)"
                                         : "keys, and mprotect where keys did not fit";
}

/* ---- planning a guard's keys ------------------------------------------------ */

#define NO_SUB (-1)
#define SHARED (-2)

/* For each protected page: the order index of the one sub-message on it,
 * NO_SUB or SHARED. O(pages): sub-messages do not interleave. */
static int *page_owners(const struct tnbc_guard *g, size_t npages)
{
    size_t ps = tnbc_page_size();
    int *own = malloc(npages * sizeof *own);
    if (!own)
        return NULL;
    for (size_t i = 0; i < npages; i++)
        own[i] = NO_SUB;
    for (int k = 0; k < g->layout->nsub; k++) {
        const struct tnbc_submsg *u = &g->layout->sub[g->order[k]];
        if (!u->bytes)
            continue;
        uintptr_t a = tnbc_page_down((uintptr_t)g->layout->base + u->offset);
        uintptr_t b = tnbc_page_up((uintptr_t)g->layout->base + u->offset + u->bytes);
        a = a < g->lo ? g->lo : a;
        b = b > g->hi ? g->hi : b;
        for (uintptr_t p = a; p < b; p += ps) {
            int *o = &own[(p - g->lo) / ps];
            *o = *o == NO_SUB || *o == k ? k : SHARED;
        }
    }
    return own;
}

/* Units in page order: a new one at every change of owner and at every
 * shared page. Fills key[] with the unit's index + 1 (0: no sub-message);
 * the number of units, or -1 past `max`. */
static int plan_units(const int *own, size_t npages, unsigned char *key, int max)
{
    int units = 0;
    for (size_t i = 0; i < npages; i++) {
        if (own[i] == NO_SUB) {
            key[i] = 0;
            continue;
        }
        if (i == 0 || own[i] == SHARED || own[i] != own[i - 1])
            if (++units > max)
                return -1;
        key[i] = (unsigned char)units;
    }
    return units;
}

/* ---- the ranges ----------------------------------------------------------- */

/* Key 0 given back to pages outside the lock (tnbc_guard_memory_ok takes
 * the maps' lock, under which the maps' own frees reach the free wrapper
 * and so tnbc_gkeys_released): collected under it, done after. */
struct reset {
    uintptr_t lo, hi;
    int check;
};
struct resets {
    struct reset v[2 * MAX_RANGES + 2];
    int n;
};

static void add_reset(struct resets *z, uintptr_t lo, uintptr_t hi, int check)
{
    if (lo < hi && z->n < (int)(sizeof z->v / sizeof z->v[0]))
        z->v[z->n++] = (struct reset){ lo, hi, check };
}

/* `check`: only where the pages are still the program's private writable
 * memory (else unmapped behind the wrappers' backs and mapped again as
 * something else, which has key 0 already and must keep its protection). */
static void do_resets(const struct resets *z)
{
    for (int i = 0; i < z->n; i++) {
        const char *why;
        if (!z->v[i].check || tnbc_guard_memory_ok(z->v[i].lo, z->v[i].hi, &why))
            (void)key_pages(z->v[i].lo, z->v[i].hi - z->v[i].lo, 0);
    }
}

static atomic_int kept;        /* nranges, for the wrappers' quick test */
/* The span from the lowest range's lo to the highest's hi (empty when
 * there is none), so that a free() elsewhere, the common case, takes no
 * lock: the C library's allocator frees at every call of MPI's and the
 * trace's own. Like `kept`, read without the lock. */
static _Atomic uintptr_t hull_lo, hull_hi;

/* Under the lock, after the list changed. */
static void list_changed(void)
{
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    for (int i = 0; i < nranges; i++) {
        lo = ranges[i].lo < lo ? ranges[i].lo : lo;
        hi = ranges[i].hi > hi ? ranges[i].hi : hi;
    }
    atomic_store(&hull_lo, lo);
    atomic_store(&hull_hi, hi);
    atomic_store(&kept, nranges);
}

/* Takes range i off the list (the last moves into its place). */
static void unlist(int i)
{
    assert(!ranges[i].live);
    ranges[i] = ranges[--nranges];
    list_changed();
}

/* Drops range i, its pages but [keep_lo, keep_hi) to be given key 0. */
static void drop_range(int i, struct resets *z, uintptr_t keep_lo, uintptr_t keep_hi)
{
    struct keyed_range *r = &ranges[i];
    add_reset(z, r->lo, r->hi < keep_lo ? r->hi : keep_lo, 1);
    add_reset(z, r->lo > keep_hi ? r->lo : keep_hi, r->hi, 1);
    unlist(i);
}

/* The least recently armed kept range but `except`, or -1. */
static int oldest_kept(int except)
{
    int oldest = -1;
    for (int i = 0; i < nranges; i++)
        if (i != except && !ranges[i].live && (oldest < 0 || ranges[i].used < ranges[oldest].used))
            oldest = i;
    return oldest;
}

static uint32_t keys_held(int except)
{
    uint32_t m = 0;
    for (int i = 0; i < nranges; i++)
        if (i != except)
            m |= ranges[i].keys;
    return m;
}

/* Picks `n` keys for range *self, in its keys: its own of before first,
 * then free ones, then those of the least recently armed kept ranges,
 * which are dropped. 0, or -1 when live ranges hold too many. */
static int pick_keys(int *self, int n, struct resets *z)
{
    for (;;) {
        uint32_t mine = ranges[*self].keys, taken = keys_held(*self);
        uint32_t have = mine;
        for (int j = 0; j < npool && __builtin_popcount(have) < n; j++)
            if (!(taken >> pool[j] & 1))
                have |= 1u << pool[j];
        if (__builtin_popcount(have) >= n) {
            ranges[*self].keys = have;
            return 0;
        }
        int oldest = oldest_kept(*self);
        if (oldest < 0)
            return -1;
        if (*self == nranges - 1)
            *self = oldest;        /* drop_range moves the last into the hole */
        drop_range(oldest, z, 0, 0);
    }
}

/* The index of [lo, hi)'s range, made if need be (overlapping kept ranges
 * dropped: the new keys cover their pages inside); -1 when a live one
 * overlaps or there is no room. */
static int range_for(uintptr_t lo, uintptr_t hi, struct resets *z)
{
    for (int i = 0; i < nranges;) {
        struct keyed_range *r = &ranges[i];
        if (r->lo == lo && r->hi == hi)
            return r->live ? -1 : i;
        if (r->lo < hi && lo < r->hi) {
            if (r->live)
                return -1;
            drop_range(i, z, lo, hi);
            continue;
        }
        i++;
    }
    if (nranges == MAX_RANGES) {
        int oldest = oldest_kept(-1);
        if (oldest < 0)
            return -1;
        drop_range(oldest, z, 0, 0);
    }
    ranges[nranges++] = (struct keyed_range){ .lo = lo, .hi = hi };
    list_changed();
    return nranges - 1;
}

/* Gives every run of pages its key: unit u the u-th of `keys` (ascending,
 * so that the same layout gets the same keys and the kernel changes
 * nothing), pages of no sub-message key 0. */
static int apply_keys(struct tnbc_guard *g, uint32_t keys, size_t npages)
{
    size_t ps = tnbc_page_size();
    int by_unit[MAX_KEYS + 1] = { 0 };
    int u = 1;
    for (int k = 1; k < MAX_KEYS; k++)
        if (keys >> k & 1)
            by_unit[u++] = k;
    for (size_t i = 0; i < npages; i++)
        g->page_key[i] = (unsigned char)by_unit[g->page_key[i]];
    for (size_t i = 0; i < npages;) {
        size_t j = i + 1;
        while (j < npages && g->page_key[j] == g->page_key[i])
            j++;
        if (key_pages(g->lo + i * ps, (j - i) * ps, g->page_key[i]) != 0)
            return -1;
        i = j;
    }
    return 0;
}

/* Under the lock: a live range for g with `units` keys; the keys, or 0. */
static uint32_t take_range(struct tnbc_guard *g, int units, struct resets *z)
{
    int r = range_for(g->lo, g->hi, z);
    if (r < 0)
        return 0;
    if (pick_keys(&r, units, z) != 0) {
        if (!ranges[r].keys)          /* made just now: unmade, no page touched */
            drop_range(r, z, ranges[r].lo, ranges[r].hi);
        return 0;
    }
    uint32_t keys = 0;                /* only the keys the units use stay */
    for (int k = 1, n = 0; k < MAX_KEYS && n < units; k++)
        if (ranges[r].keys >> k & 1) {
            keys |= 1u << k;
            n++;
        }
    ranges[r].keys = keys;
    ranges[r].live = 1;
    ranges[r].doomed = 0;
    ranges[r].used = ++arms;
    ranges[r].call = calls;
    return keys;
}

static int find_range(uintptr_t lo, uintptr_t hi)
{
    for (int i = 0; i < nranges; i++)
        if (ranges[i].lo == lo && ranges[i].hi == hi)
            return i;
    return -1;
}

int tnbc_gkeys_arm(struct tnbc_guard *g)
{
    size_t npages = (g->hi - g->lo) / tnbc_page_size();
    struct resets z = { .n = 0 };
    uint32_t keys = 0;
    assert(g->closed_prot == PROT_NONE && !g->interleaved && !g->landed);
    g->keyed = 0;
    g->key_bits = 0;
    g->page_key = NULL;
    if (!tnbc_gkeys_usable() || npages == 0 || atomic_load(&program_threads)) {
        atomic_fetch_add(&arms_mprotect, 1);
        return 0;
    }
    int *own = page_owners(g, npages);
    g->page_key = malloc(npages);
    int units = own && g->page_key ? plan_units(own, npages, g->page_key, npool) : -1;
    free(own);
    if (units > 0) {
        pthread_mutex_lock(&lock);
        keys = take_range(g, units, &z);
        pthread_mutex_unlock(&lock);
    }
    /* The dropped ranges' keys off their pages before the keys go on
     * these: a kept page with one of them would let this thread's touch of
     * the new guard's unit through (tnbc_gkeys_allow_in_frame). */
    do_resets(&z);
    if (keys && apply_keys(g, keys, npages) == 0) {
        g->key_bits = rights_bits(keys);
        g->keyed = 1;
        atomic_fetch_add(&arms_keyed, 1);
        return 1;
    }
    atomic_fetch_add(&arms_mprotect, 1);
    if (keys) {
        z.n = 0;
        pthread_mutex_lock(&lock);
        int r = find_range(g->lo, g->hi);
        if (r >= 0) {
            ranges[r].live = 0;
            drop_range(r, &z, 0, 0);
        }
        pthread_mutex_unlock(&lock);
        do_resets(&z);
    }
    free(g->page_key);
    g->page_key = NULL;
    return 0;
}

void tnbc_gkeys_disarm(struct tnbc_guard *g)
{
    struct resets z = { .n = 0 };
    if (!g->keyed)
        return;
    pthread_mutex_lock(&lock);
    int r = find_range(g->lo, g->hi);
    if (r >= 0) {
        ranges[r].live = 0;
        if (ranges[r].doomed)      /* its memory was handed back meanwhile */
            drop_range(r, &z, 0, 0);
    }
    pthread_mutex_unlock(&lock);
    do_resets(&z);
    free(g->page_key);
    g->page_key = NULL;
    g->keyed = 0;
    g->key_bits = 0;
}

/* Drops the kept ranges last armed more than `idle` collectives ago (0:
 * all of them), giving their pages key 0; `doom_live`: live ones are
 * dropped at their lift. `tick` counts a collective first. */
static void sweep(unsigned long idle, int doom_live, int tick)
{
    struct resets z = { .n = 0 };
    pthread_mutex_lock(&lock);
    calls += (unsigned long)tick;
    for (int i = 0; i < nranges;) {
        struct keyed_range *r = &ranges[i];
        if (r->live)
            r->doomed |= doom_live;
        if (r->live || calls - r->call < idle)
            i++;
        else
            drop_range(i, &z, 0, 0);
    }
    pthread_mutex_unlock(&lock);
    do_resets(&z);
}

void tnbc_gkeys_forget_all(void)
{
    sweep(0, 0, 0);
}

void tnbc_gkeys_collective(void)
{
    if (atomic_load(&pool_mask))
        sweep(KEEP_CALLS + 1, 0, 1);
}

/* A thread of the program's: kept ranges lose their keys now, live ones
 * at their lift (it inherited its creator's rights, which may deny
 * them). */
static void forget_for_threads(void)
{
    sweep(0, 1, 0);
}

int tnbc_gkeys_kept(void)
{
    return atomic_load(&kept);
}

/* The wrappers call this before the program frees, unmaps, moves or
 * reprotects [addr, addr + len): kept ranges there go (their pages, still
 * the program's read-write memory at this point, given key 0 unless they
 * are being unmapped), and live ones go at their lift. */
void tnbc_gkeys_released(const void *addr, size_t len, int unmapping)
{
    struct resets z;           /* (not zeroed before the quick test: 400 bytes per free) */
    uintptr_t lo = tnbc_page_down((uintptr_t)addr), hi = tnbc_page_up((uintptr_t)addr + len);
    if (!addr || !len || !atomic_load(&kept) || hi <= atomic_load(&hull_lo) ||
        lo >= atomic_load(&hull_hi))
        return;
    z.n = 0;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < nranges;) {
        struct keyed_range *r = &ranges[i];
        if (r->lo >= hi || lo >= r->hi) {
            i++;
        } else if (r->live) {
            r->doomed = 1;
            i++;
        } else {
            if (!unmapping)
                add_reset(&z, r->lo > lo ? r->lo : lo, r->hi < hi ? r->hi : hi, 0);
            unlist(i);
        }
    }
    pthread_mutex_unlock(&lock);
    do_resets(&z);
}

/* ---- opening and closing ------------------------------------------------------ */

int tnbc_gkeys_set(const struct tnbc_guard *g, uintptr_t a, uintptr_t b, int open, void *uc)
{
#if HAVE_KEYS
    size_t ps = tnbc_page_size();
    uint32_t bits = 0;
    assert(g->keyed);
    a = a < g->lo ? g->lo : a;
    b = b > g->hi ? g->hi : b;
    if (a == g->lo && b == g->hi) {
        bits = g->key_bits;
    } else {
        for (uintptr_t p = a; p < b; p += ps) {
            int k = g->page_key[(p - g->lo) / ps];
            if (k)
                bits |= BOTH_BITS(k);
        }
    }
    if (!bits)
        return 0;
    if (!uc) {
        uint32_t v = rdpkru();
        wrpkru(open ? v & ~bits : v | (bits & 0x55555555u));   /* access-disable bits */
        return 0;
    }
    if (frame_change(uc, bits, open) == 0)
        return 0;
    /* No rights in the frame to edit (not seen where the self-test passed):
     * an opening gives the pages key 0, for every thread. */
    return open ? key_pages(a, b - a, 0) : -1;
#else
    (void)g; (void)a; (void)b; (void)open; (void)uc;
    return -1;
#endif
}
