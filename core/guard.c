// SPDX-License-Identifier: BSD-3-Clause
#include "guard.h"
#include "altstack.h"
#include "clock.h"
#include "config.h"
#include "cpu_relax.h"
#include "futex.h"
#include "guard_keys.h"

#include <assert.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#if defined(__x86_64__)
#define HAVE_SINGLE_STEP 1
#define EFLAGS_TF 0x100
#else
#define HAVE_SINGLE_STEP 0
#endif

static size_t page_size;
static int installed;
static struct sigaction prev_segv, prev_trap;
static atomic_int armed_guards;
static atomic_uint disarms;          /* guards lifted so far, ever */
static long rearm_max = 4096;
static int step_exact;               /* TNBC_TRACE_EXACT: step every shared page */
/* The kernel's share of one of our SIGSEGVs and SIGTRAPs (delivery,
 * sigreturn, the access's retry or single step), measured by
 * tnbc_guard_measure_fault_ns; at a handler's exit it is counted with the
 * handler's own time as time not the program's (tnbc_ticks_lost_since). */
static uint64_t segv_ticks, trap_ticks;

/* Pages opened for one single-stepped instruction, per thread. An
 * instruction can fault on at most a few pages (one access straddling two,
 * or a string instruction's source and destination). */
#define MAX_PENDING 4
struct pending {
    struct tnbc_guard *g;
    uintptr_t page;
};
static __thread struct pending pend[MAX_PENDING];
static __thread int npend;

static const char *const reason_names[TNBC_REL_COUNT] = {
    "io", "mpi", "free", "reuse", "finalize", "limit", "neighbour", "done",
};

const char *tnbc_release_reason_name(enum tnbc_release_reason r)
{
    return (r >= 0 && r < TNBC_REL_COUNT) ? reason_names[r] : "?";
}

size_t tnbc_page_size(void)
{
    if (!page_size)
        page_size = (size_t)sysconf(_SC_PAGESIZE);
    return page_size;
}

int tnbc_guard_active(void) { return atomic_load(&armed_guards); }

struct held { uintptr_t lo, hi, covered; };

static void add_held(struct tnbc_range_obj *obj, void *arg)
{
    const struct tnbc_guard *g = (const struct tnbc_guard *)obj;   /* obj is first */
    struct held *h = arg;
    uintptr_t a = g->lo > h->lo ? g->lo : h->lo, b = g->hi < h->hi ? g->hi : h->hi;
    if (a < b)
        h->covered += b - a;
}

int tnbc_guard_holds(uintptr_t lo, uintptr_t hi)
{
    struct held h = { lo, hi, 0 };
    if (lo >= hi || !tnbc_guard_active())
        return 0;
    tnbc_range_each(lo, hi, add_held, &h);
    return h.covered == hi - lo;          /* the ranges never overlap */
}

int tnbc_guard_all_open(const struct tnbc_guard *g)
{
    if (!g->armed)
        return 1;
    for (int i = 0; i < g->layout->nsub; i++)
        if (!atomic_load(&g->open[i]))
            return 0;
    return 1;
}

/* mprotect straight to the kernel: the program's mprotect is interposed
 * (wrap_libc.c) to lift guards first, which must not happen to ours. */
#ifdef TNBC_TEST_HOOKS
/* Test builds (SAN=...): TNBC_TEST_FAIL_MPROTECT=N makes every N-th of our
 * mprotects fail with ENOMEM, as the kernel's do when the process's
 * mappings reach vm.max_map_count (every guard splits them). Read once by
 * tnbc_guard_init. */
static long fail_mprotect_every;
static atomic_long mprotect_calls;
#endif

/* The memory protection key that TNBC_PROT_KEYED closes pages with (-1:
 * none; tnbc_guard_use_pkey). While there is one, every opening gives the
 * pages key 0 back: mprotect alone would leave them keyed. */
static int guard_pkey = -1;

void tnbc_guard_use_pkey(int key) { guard_pkey = key; }

static int raw_mprotect(uintptr_t a, size_t len, int prot)
{
#ifdef TNBC_TEST_HOOKS
    if (fail_mprotect_every > 0 && (atomic_fetch_add(&mprotect_calls, 1) + 1) % fail_mprotect_every == 0) {
        errno = ENOMEM;
        return -1;
    }
#endif
    assert(prot != TNBC_PROT_KEYED || guard_pkey >= 0);
    if (prot == TNBC_PROT_KEYED)
        return (int)syscall(SYS_pkey_mprotect, (void *)a, len, PROT_READ | PROT_WRITE, guard_pkey);
    if (guard_pkey >= 0 && prot == (PROT_READ | PROT_WRITE))
        return (int)syscall(SYS_pkey_mprotect, (void *)a, len, prot, 0);
    return (int)syscall(SYS_mprotect, (void *)a, len, prot);
}

/* The guard's lock is a spinlock also taken by the fault handler: a signal
 * handler that touched the guard while its thread holds the lock would
 * spin for ever, so asynchronous signals stay blocked while it is held
 * (the fault handler runs with them blocked already, see tnbc_guard_init). */
static sigset_t async_signals;

/* Straight to the kernel: async-signal-safe, and not our interposed
 * pthread_sigmask. (glibc's sigfillset leaves out its internal signals.) */
static void raw_sigmask(int how, const sigset_t *set, sigset_t *old)
{
    syscall(SYS_rt_sigprocmask, how, set, old, (size_t)(_NSIG / 8));
}

/* Set while this thread runs our SIGSEGV/SIGTRAP handler, whose mask
 * blocks asynchronous signals already: no system calls needed then. */
static __thread int in_handler;
/* The interrupted context while in_handler: a keyed guard opens and closes
 * pages in its saved rights (guard_keys.h). */
static __thread void *handler_frame;

/* The guard's lock is held across an mprotect (3-35 us) by the program's
 * threads (faults) and the progress thread (pages of landed pieces)
 * alike. Where they share a CPU, a waiter that spins keeps a holder that
 * was preempted after its system call off that CPU for the rest of a time
 * slice; so a waiter spins briefly, then sleeps in the kernel until the
 * holder wakes it (a futex: async-signal-safe, no allocation). States of
 * g->lock: 0 free, 1 held, 2 held and someone may sleep on it (U.
 * Drepper, "Futexes Are Tricky", mutex2). */
#define GUARD_LOCK_SPINS 64

static int lock_cas(atomic_int *l, int from, int to)
{
    return atomic_compare_exchange_strong_explicit(l, &from, to, memory_order_acquire, memory_order_relaxed);
}

static void lock_take(atomic_int *l)
{
    for (int i = 0; i < GUARD_LOCK_SPINS; i++) {
        if (lock_cas(l, 0, 1))
            return;
        cpu_relax();
    }
    /* From here the lock is marked contended while this thread holds it,
     * so that its release wakes whoever sleeps behind it. */
    while (atomic_exchange_explicit(l, 2, memory_order_acquire) != 0)
        tnbc_futex_wait(l, 2);
}

static void lock_give(atomic_int *l)
{
    if (atomic_exchange_explicit(l, 0, memory_order_release) == 2)
        tnbc_futex_wake(l, 1);
}

static sigset_t guard_lock(struct tnbc_guard *g)
{
    sigset_t old;
    if (!in_handler)
        raw_sigmask(SIG_BLOCK, &async_signals, &old);
    else
        sigemptyset(&old);      /* unused: guard_unlock leaves the mask alone */
    lock_take(&g->lock);
    return old;
}

static void guard_unlock(struct tnbc_guard *g, const sigset_t *old)
{
    assert(atomic_load(&g->lock) != 0);
    lock_give(&g->lock);
    if (!in_handler)
        raw_sigmask(SIG_SETMASK, old, NULL);
}

static uintptr_t sub_start(const struct tnbc_guard *g, int s)
{
    return (uintptr_t)g->layout->base + g->layout->sub[s].offset;
}

static uintptr_t sub_end(const struct tnbc_guard *g, int s)
{
    return sub_start(g, s) + g->layout->sub[s].bytes;
}

/* Calls fn(g, s, arg) for every non-empty sub-message meeting [a, b);
 * stops early when fn returns non-zero and returns that value. */
static int overlapping(struct tnbc_guard *g, uintptr_t a, uintptr_t b,
                       int (*fn)(struct tnbc_guard *, int, void *), void *arg)
{
    int lo = 0, hi = g->layout->nsub;
    size_t reach = g->max_bytes;     /* bounds the backwards walk */
    while (lo < hi) {      /* first in offset order starting at or after b */
        int mid = (lo + hi) / 2;
        if (sub_start(g, g->order[mid]) < b)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (int i = lo - 1; i >= 0; i--) {
        int s = g->order[i];
        if (sub_start(g, s) + reach <= a)
            break;
        if (g->layout->sub[s].bytes && sub_end(g, s) > a) {
            int rc = fn(g, s, arg);
            if (rc)
                return rc;
        }
    }
    return 0;
}

static int is_closed(struct tnbc_guard *g, int s, void *arg)
{
    (void)arg;
    return !atomic_load(&g->open[s]);
}

/* Single-step policy (trace). A page must stay protected while one of its
 * closed sub-messages could have its first touch there and nowhere else.
 * A sub-message with a page of its own shows its first touch on that page
 * at the latest, so a shared page is not kept closed (and every access to
 * it single-stepped) for its sake: the order is not ambiguous, and its
 * first touch is late by at most the accesses to its part of the shared
 * page. Stepping every access made an ordinary program's traced calls
 * hundreds of times slower than its plain ones (docs/trace.md, "Cost").
 * Replay (GUARD_WAIT_NEIGHBOURS) needs the data, not the order: strict. */
static int is_needed_closed(struct tnbc_guard *g, int s, void *arg)
{
    if (!is_closed(g, s, arg))
        return 0;
    return (g->flags & GUARD_WAIT_NEIGHBOURS) || step_exact || !g->alone || !g->alone[s];
}

static int page_ready(struct tnbc_guard *g, uintptr_t page)
{
    return !overlapping(g, page, page + page_size, is_needed_closed, NULL);
}

/* Clips [*a, *b) to the guard's range; whether anything is left. */
static int clip(const struct tnbc_guard *g, uintptr_t *a, uintptr_t *b)
{
    if (*a < g->lo)
        *a = g->lo;
    if (*b > g->hi)
        *b = g->hi;
    return *a < *b;
}

/* 0, or -1 when the kernel refused (see open_whole). */
static int set_prot(struct tnbc_guard *g, uintptr_t a, uintptr_t b, int prot)
{
    if (!clip(g, &a, &b))
        return 0;
    if (g->keyed)
        return tnbc_gkeys_set(g, a, b, prot == (PROT_READ | PROT_WRITE), in_handler ? handler_frame : NULL);
    return raw_mprotect(a, b - a, prot);
}

static atomic_int open_errno;       /* the last refusal's, for open_whole's message */

/* mprotect refused to open [a, b). Pages the program has unmapped (freed
 * memory whose guard is still registered) have nothing to open, and the
 * kernel says ENOMEM for them as it does for too many mappings: go page by
 * page, each tried twice, and skip the unmapped ones (mincore fails on
 * them). 0, or -1 when a mapped page stays closed. */
static int open_mapped_pages(uintptr_t a, uintptr_t b)
{
    for (uintptr_t p = a; p < b; p += page_size) {
        if (raw_mprotect(p, page_size, PROT_READ | PROT_WRITE) == 0 ||
            raw_mprotect(p, page_size, PROT_READ | PROT_WRITE) == 0)
            continue;
        int why = errno;
        if (tnbc_page_unmapped(p))
            continue;
        atomic_store(&open_errno, why);
        return -1;
    }
    return 0;
}

/* GUARD_PRETOUCH: [a, b) was just opened under the guard's lock, and
 * nothing else changes its protection while the lock is held (guards never
 * overlap, and the program's own mprotect releases the guard first). Not
 * the program's bytes to check: sanitizers look away. */
__attribute__((no_sanitize("address", "thread", "undefined")))
static void pretouch(uintptr_t a, uintptr_t b)
{
    for (uintptr_t p = a; p < b; p += page_size)
        (void)*(volatile const char *)p;
}

/* Records [a, b)'s pages (within the guard's) as closed or open by this
 * guard's mprotect (tnbc_guard.page_closed). */
static void mark_closed(struct tnbc_guard *g, uintptr_t a, uintptr_t b, unsigned char closed)
{
    if (!g->page_closed || !clip(g, &a, &b))
        return;
    memset(g->page_closed + (a - g->lo) / page_size, closed, (b - a) / page_size);
}

/* Whether no page of g is closed by its mprotect; under its lock. */
static int all_pages_open(const struct tnbc_guard *g)
{
    size_t n = (g->hi - g->lo) / page_size;
    if (!g->page_closed)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (g->page_closed[i])
            return 0;
    return 1;
}

/* Opens [a, b) of the guard under its lock. 0, or -1 (see open_whole). */
static int open_range(struct tnbc_guard *g, uintptr_t a, uintptr_t b)
{
    if (!clip(g, &a, &b))
        return 0;
    /* Keyed: this thread's rights, no lock (the keys are fixed while the
     * guard is armed), and no pre-touch (no page table changed; and the
     * handler runs with the kernel's default rights, which deny them). */
    if (g->keyed)
        return set_prot(g, a, b, PROT_READ | PROT_WRITE);
    sigset_t mask = guard_lock(g);
    if (g->lifted) {       /* every page opened already; see tnbc_guard.lifted */
        guard_unlock(g, &mask);
        return 0;
    }
    int rc = raw_mprotect(a, b - a, PROT_READ | PROT_WRITE);
    if (rc == 0 && (g->flags & GUARD_PRETOUCH) && in_handler) {
        uint64_t t0 = tnbc_ticks();
        pretouch(a, b);     /* only where every page opened: none unmapped */
        atomic_fetch_add(&g->refill_ticks, tnbc_ticks() - t0);
    } else if (rc != 0)
        rc = open_mapped_pages(a, b);
    if (rc == 0)
        mark_closed(g, a, b, 0);
    guard_unlock(g, &mask);
    return rc;
}

static void open_whole(struct tnbc_guard *g, uint64_t tick);

/* Opens [a, b)'s pages whose every sub-message is open, in runs;
 * whether `page` was among them. */
static int open_ready_runs(struct tnbc_guard *g, uintptr_t a, uintptr_t b, uintptr_t page)
{
    int hit = 0;
    for (uintptr_t p = a; p < b;) {
        if (!page_ready(g, p)) {
            p += page_size;
            continue;
        }
        uintptr_t q = p + page_size;
        while (q < b && page_ready(g, q))
            q += page_size;
        if (open_range(g, p, q) == 0)    /* refused: the fault path tries again */
            hit |= p <= page && page < q;
        p = q;
    }
    return hit;
}

/* Opens sub-message s's pages whose every sub-message is open; whether
 * `page` was among them. Unless the guard is interleaved, its interior
 * pages hold no other sub-message and only the first and last may be
 * shared: two checks, one mprotect. */
static int open_ready_pages_of(struct tnbc_guard *g, int s, uintptr_t page)
{
    uintptr_t a = tnbc_page_down(sub_start(g, s)), b = tnbc_page_up(sub_end(g, s));
    if (!clip(g, &a, &b))
        return 0;
    if (g->interleaved)
        return open_ready_runs(g, a, b, page);
    if (!page_ready(g, a))
        a += page_size;
    if (b > a && !page_ready(g, b - page_size))
        b -= page_size;
    uintptr_t tail = g->tail ? atomic_load(&g->tail[s]) : 0;
    if (tail > a && tail < b && page != tail) {     /* its tail stays closed */
        if (open_range(g, a, tail) != 0 || open_range(g, tail + page_size, b) != 0)
            return 0;
        return a <= page && page < b;
    }
    if (a >= b || open_range(g, a, b) != 0)   /* refused: the fault path tries again */
        return 0;
    return a <= page && page < b;
}

static void open_ready_pages(struct tnbc_guard *g, int s)
{
    (void)open_ready_pages_of(g, s, 0);
}

/* Marks s open, calling the hook first if it was closed. */
static void expose(struct tnbc_guard *g, int s, enum tnbc_guard_event ev,
                   enum tnbc_release_reason why, uint64_t tick)
{
    if (atomic_load(&g->open[s]))
        return;
    g->hook(g, s, ev, why, tick);
    atomic_store(&g->open[s], 1);
}

struct expose_arg {
    enum tnbc_release_reason why;
    uint64_t tick;
};

static int expose_released(struct tnbc_guard *g, int s, void *arg)
{
    struct expose_arg *e = arg;
    expose(g, s, TNBC_EV_RELEASE, e->why, e->tick);
    return 0;
}

/* Opens `page` for the faulting instruction only: the SIGTRAP that follows
 * it re-protects the page. Returns 0 when the single step was set up. */
static int open_for_one_instruction(struct tnbc_guard *g, uintptr_t page, void *ctx)
{
#if HAVE_SINGLE_STEP
    ucontext_t *uc = ctx;
    if (npend >= MAX_PENDING ||
        atomic_fetch_add(&g->page_rearms[(page - g->lo) / page_size], 1) >= rearm_max)
        return -1;
    atomic_fetch_add(&g->steps, 1);
    atomic_fetch_add(&g->obj.pins, 1);    /* held until the trap */
    pend[npend].g = g;
    pend[npend].page = page;
    npend++;
    if (open_range(g, page, page + page_size) != 0) {
        npend--;              /* no single step on a page still closed */
        tnbc_range_unpin(&g->obj);
        return -1;
    }
    uc->uc_mcontext.gregs[REG_EFL] |= EFLAGS_TF;
    return 0;
#else
    (void)g; (void)page; (void)ctx;
    return -1;
#endif
}

static enum tnbc_guard_event fault_kind(void *ctx)
{
#if defined(__x86_64__)
    ucontext_t *uc = ctx;
    return (uc->uc_mcontext.gregs[REG_ERR] & 2) ? TNBC_EV_WRITE : TNBC_EV_READ;
#else
    (void)ctx;
    return TNBC_EV_ACCESS;
#endif
}

struct touch_arg {
    enum tnbc_guard_event ev;
    uint64_t tick;
    uintptr_t page;       /* the faulting page */
    int page_opened;      /* opened with a touched sub-message's pages */
};

/* A touched byte may belong to several sub-messages (aliased send blocks):
 * it is the first touch of each of them. */
static int expose_touched(struct tnbc_guard *g, int s, void *arg)
{
    struct touch_arg *t = arg;
    expose(g, s, t->ev, TNBC_REL_DONE, t->tick);
    uintptr_t tail = t->page;
    if (g->tail && atomic_compare_exchange_strong(&g->tail[s], &tail, 0))
        g->hook(g, s, TNBC_EV_TAIL, TNBC_REL_DONE, t->tick);
    t->page_opened |= open_ready_pages_of(g, s, t->page);
    return 0;
}

static void handle_fault(struct tnbc_guard *g, uintptr_t addr, void *ctx)
{
    uintptr_t page = tnbc_page_down(addr);
    uint64_t tick = tnbc_program_ticks();
    struct touch_arg t = { fault_kind(ctx), tick, page, 0 };

    atomic_fetch_add(&g->faults, 1);
    overlapping(g, addr, addr + 1, expose_touched, &t);
    if (t.page_opened)      /* one mprotect per fault, not two */
        return;
    if (page_ready(g, page)) {
        if (open_range(g, page, page + page_size) != 0)
            open_whole(g, tick);
        return;
    }
    /* The page still holds closed sub-messages (or the fault was in a gap
     * between blocks, i.e. unrelated data of the program). */
    int no_step = (g->flags & GUARD_WAIT_NEIGHBOURS) || ((g->flags & GUARD_NO_STEP) && !step_exact);
    if (!no_step && open_for_one_instruction(g, page, ctx) == 0)
        return;
    struct expose_arg e = {
        (g->flags & GUARD_WAIT_NEIGHBOURS) ? TNBC_REL_NEIGHBOUR : TNBC_REL_LIMIT, tick
    };
    overlapping(g, page, page + page_size, expose_released, &e);
    if (open_range(g, page, page + page_size) != 0)
        open_whole(g, tick);
}

/* The kernel refused to open a page the program needs (ENOMEM: the
 * process's mappings are at vm.max_map_count, and every guard splits
 * them). Wait for every sub-message of the guard, then open all its pages
 * at once, which merges mappings instead of splitting them: the call has
 * then simply waited for its data (said once). Refused even that, nothing
 * can make the program's data readable: say so and abort, rather than
 * fault for ever or let it read what has not arrived. Signal context or
 * not; async-signal-safe. */
static void open_whole(struct tnbc_guard *g, uint64_t tick)
{
    static atomic_int said;
    struct expose_arg e = { TNBC_REL_LIMIT, tick };
    if (!atomic_exchange(&said, 1))
        tnbc_write_stderr(atomic_load(&open_errno) == ENOMEM
                              ? "tnbc: mprotect could not open guarded pages (ENOMEM: too many memory "
                                "mappings?); the calls concerned wait for all their data\n"
                              : "tnbc: mprotect could not open guarded pages (not ENOMEM); the calls "
                                "concerned wait for all their data\n");
    overlapping(g, g->lo, g->hi, expose_released, &e);
    for (int tries = 0; tries < 8; tries++)
        if (open_range(g, g->lo, g->hi) == 0)
            return;
    tnbc_write_stderr("tnbc: mprotect cannot open guarded pages of the program's buffer; aborting\n");
    abort();
}

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);
#if defined(__SANITIZE_THREAD__)
/* ThreadSanitizer intercepts sigaction itself and delivers signals through
 * its own handler: go through it, and leave sigaction alone. */
static sigaction_fn real_sigaction_fn(void) { return sigaction; }
#else
static sigaction_fn real_sigaction_fn(void)
{
    static sigaction_fn fn;
    if (!fn)
        fn = (sigaction_fn)dlsym(RTLD_NEXT, "sigaction");
    return fn;
}
#endif

static void chain(int sig, siginfo_t *si, void *ctx, struct sigaction *prev)
{
    if (prev->sa_flags & SA_RESETHAND) {     /* one shot (sysv_signal): as the kernel would */
        struct sigaction once = *prev;
        prev->sa_handler = SIG_DFL;
        prev->sa_flags &= ~(SA_SIGINFO | SA_RESETHAND);
        once.sa_flags &= ~SA_RESETHAND;
        chain(sig, si, ctx, &once);
        return;
    }
    if (prev->sa_flags & SA_SIGINFO) {
        if (prev->sa_sigaction) {
            prev->sa_sigaction(sig, si, ctx);
            return;
        }
    } else if (prev->sa_handler != SIG_DFL && prev->sa_handler != SIG_IGN) {
        prev->sa_handler(sig);
        return;
    }
    /* Default action: reinstate it; the faulting instruction runs again and
     * the kernel delivers the signal with its usual effect. */
    real_sigaction_fn()(sig, &(struct sigaction){ .sa_handler = SIG_DFL }, NULL);
    if (sig != SIGSEGV || si->si_code <= 0)     /* sent, not a fault: it will not recur */
        raise(sig);
}

/* A fault on a guarded page can race with another thread lifting that
 * guard (the replay progress thread does so when a call completes): the
 * page is open again but the guard is gone from the index by the time we
 * look. Such a fault is retried once, with nothing changed; a fault that
 * repeats at the same address with no guard lifted in between is real. */
static __thread uintptr_t retry_addr;
static __thread unsigned retry_disarms;

static int lifted_meanwhile(uintptr_t addr)
{
    unsigned now = atomic_load(&disarms);
    if (retry_addr == addr && retry_disarms == now)
        return 0;
    retry_addr = addr;
    retry_disarms = now;
    return 1;
}

/* Set around a copy that writes the program's pages directly (land.c):
 * a fault there, on a page the program unmapped behind the C library's
 * back, jumps back to the copy's caller instead of ending the process. */
static __thread sigjmp_buf *fault_escape;

void tnbc_guard_fault_escape(sigjmp_buf *env) { fault_escape = env; }

/* A fault on a closed page of ours: PROT_NONE, PROT_READ (trace's send
 * side) or our protection key. Not si_pkey: the kernel reads the page's
 * key when it reports the fault, and the progress thread may have given
 * it key 0 back by then (seen: SEGV_PKUERR with si_pkey 0 on a page being
 * opened); the range lookup decides whose page it is. */
static int guard_fault(const siginfo_t *si)
{
    return si->si_code == SEGV_ACCERR ||
           (si->si_code == SEGV_PKUERR && (guard_pkey >= 0 || tnbc_gkeys_any()));
}

static void on_segv(int sig, siginfo_t *si, void *ctx)
{
    int saved = errno;
    uintptr_t addr = (uintptr_t)si->si_addr;
    tnbc_gkeys_handler_enter();
    if (tnbc_gkeys_selftest_fault(si, ctx))
        return;
    if (fault_escape && si->si_code > 0)
        siglongjmp(*fault_escape, 1);
    if (guard_fault(si)) {
        uint64_t entry = tnbc_ticks();
        struct tnbc_range_obj *obj = tnbc_range_lookup(addr);
        if (obj) {
            in_handler++;
            handler_frame = ctx;
            handle_fault((struct tnbc_guard *)obj, addr, ctx);
            handler_frame = NULL;
            in_handler--;
            tnbc_range_unpin(obj);
            retry_addr = 0;
            tnbc_ticks_lost_since(entry, segv_ticks);
            errno = saved;
            return;
        }
        /* One of the trace's keys on a page no armed guard holds: a thread
         * whose rights still deny it (a guard lifted by another thread; a
         * signal handler, which runs with the kernel's default rights). */
        if (si->si_code == SEGV_PKUERR && tnbc_gkeys_allow_in_frame(si->si_pkey, ctx) == 0) {
            errno = saved;
            return;
        }
        if (atomic_load(&disarms) && lifted_meanwhile(addr)) {
            errno = saved;
            return;
        }
    }
    errno = saved;
    chain(sig, si, ctx, &prev_segv);
}

static void on_trap(int sig, siginfo_t *si, void *ctx)
{
    tnbc_gkeys_handler_enter();
#if HAVE_SINGLE_STEP
    if (npend > 0) {
        int saved = errno;
        uint64_t entry = tnbc_ticks();
        ucontext_t *uc = ctx;
        in_handler++;
        handler_frame = ctx;
        for (int i = 0; i < npend; i++) {
            struct tnbc_guard *g = pend[i].g;
            uintptr_t page = pend[i].page;
            sigset_t mask = guard_lock(g);
            int rearm = !g->lifted && !page_ready(g, page);
            int open = rearm && set_prot(g, page, page + page_size, g->closed_prot) != 0;
            if (rearm && !open && !g->keyed)
                mark_closed(g, page, page + page_size, 1);
            guard_unlock(g, &mask);
            if (open) {       /* could not close it again: its data must be there first */
                struct expose_arg e = { TNBC_REL_LIMIT, tnbc_program_ticks() };
                overlapping(g, page, page + page_size, expose_released, &e);
            }
            tnbc_range_unpin(&g->obj);
        }
        npend = 0;
        handler_frame = NULL;
        in_handler--;
        uc->uc_mcontext.gregs[REG_EFL] &= ~EFLAGS_TF;
        tnbc_ticks_lost_since(entry, trap_ticks);
        errno = saved;
        return;
    }
#endif
    chain(sig, si, ctx, &prev_trap);
}

/* sigaction as the rest of the process sees it: while our handlers are
 * installed, a program (or library) that installs its own SIGSEGV/SIGTRAP
 * handler becomes the handler we chain to, instead of displacing ours. */
#if !defined(__SANITIZE_THREAD__)
int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    struct sigaction *mine = sig == SIGSEGV ? &prev_segv : sig == SIGTRAP ? &prev_trap : NULL;
    if (installed && !mine && act) {
        /* A handler that runs with SIGSEGV blocked could not take a
         * guard's fault (see unblock_ours). */
        struct sigaction copy = *act;
        sigdelset(&copy.sa_mask, SIGSEGV);
        sigdelset(&copy.sa_mask, SIGTRAP);
        return real_sigaction_fn()(sig, &copy, old);
    }
    if (!installed || !mine)
        return real_sigaction_fn()(sig, act, old);
    if (old)
        *old = *mine;
    if (act)
        *mine = *act;
    return 0;
}

/* glibc's signal() installs handlers without calling sigaction(), so it is
 * routed through ours too (BSD semantics, as glibc's). */
static sighandler_t signal_via_sigaction(int sig, sighandler_t h)
{
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = h;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(sig, &sa, &old) != 0)
        return SIG_ERR;
    return old.sa_handler;     /* shares its storage with sa_sigaction */
}

sighandler_t signal(int sig, sighandler_t h) { return signal_via_sigaction(sig, h); }
sighandler_t bsd_signal(int sig, sighandler_t h) { return signal_via_sigaction(sig, h); }

/* The other ways glibc offers to install a handler, which do not go through
 * sigaction() either: System V's one-shot sysv_signal, and sigset (whose
 * SIG_HOLD would block the signal: SIGSEGV/SIGTRAP are never blocked, see
 * below). Other signals go to glibc's own. */
typedef sighandler_t (*handler_fn)(int, sighandler_t);

static sighandler_t sysv_via_sigaction(int sig, sighandler_t h, const char *real)
{
    if (!installed || (sig != SIGSEGV && sig != SIGTRAP)) {
        handler_fn fn = (handler_fn)dlsym(RTLD_NEXT, real);
        return fn ? fn(sig, h) : SIG_ERR;
    }
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = h;
    sa.sa_flags = SA_RESETHAND | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    if (sigaction(sig, &sa, &old) != 0)
        return SIG_ERR;
    return old.sa_handler;
}

sighandler_t sysv_signal(int sig, sighandler_t h) { return sysv_via_sigaction(sig, h, "sysv_signal"); }
sighandler_t __sysv_signal(int sig, sighandler_t h) { return sysv_via_sigaction(sig, h, "__sysv_signal"); }

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
sighandler_t sigset(int sig, sighandler_t h)
{
    if (!installed || (sig != SIGSEGV && sig != SIGTRAP)) {
        handler_fn fn = (handler_fn)dlsym(RTLD_NEXT, "sigset");
        return fn ? fn(sig, h) : SIG_ERR;
    }
    struct sigaction sa, old;
    if (h == SIG_HOLD) {
        if (sigaction(sig, NULL, &old) != 0)
            return SIG_ERR;
        return old.sa_handler;
    }
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = h;
    sigemptyset(&sa.sa_mask);
    if (sigaction(sig, &sa, &old) != 0)
        return SIG_ERR;
    return old.sa_handler;
}
#pragma GCC diagnostic pop

/* A thread with SIGSEGV blocked cannot take a guard's fault (the kernel
 * kills the process instead), so while our handlers are installed the
 * synchronous signals we use are taken out of every mask the program sets.
 * A fault is synchronous: blocking it has no defined use in a correct
 * program (POSIX leaves a blocked SIGSEGV from a fault undefined). */
typedef int (*mask_fn)(int, const sigset_t *, sigset_t *);
static mask_fn real_sigprocmask, real_pthread_sigmask;

static const sigset_t *unblock_ours(int how, const sigset_t *set, sigset_t *copy)
{
    if (!installed || !set || how == SIG_UNBLOCK)
        return set;
    *copy = *set;
    sigdelset(copy, SIGSEGV);
    sigdelset(copy, SIGTRAP);
    return copy;
}

int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
    sigset_t copy;
    if (!real_sigprocmask)
        real_sigprocmask = (mask_fn)dlsym(RTLD_NEXT, "sigprocmask");
    return real_sigprocmask(how, unblock_ours(how, set, &copy), old);
}

int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
    sigset_t copy;
    if (!real_pthread_sigmask)
        real_pthread_sigmask = (mask_fn)dlsym(RTLD_NEXT, "pthread_sigmask");
    return real_pthread_sigmask(how, unblock_ours(how, set, &copy), old);
}

/* Looked up at load time: both may be called first from a signal handler. */
__attribute__((constructor)) static void lookup_signal_fns(void)
{
    real_sigprocmask = (mask_fn)dlsym(RTLD_NEXT, "sigprocmask");
    real_pthread_sigmask = (mask_fn)dlsym(RTLD_NEXT, "pthread_sigmask");
}
#endif

/* Handlers installed before ours (before MPI_Init) may block SIGSEGV or
 * SIGTRAP while they run: that is taken out of their masks. */
static void unblock_ours_in_handlers(void)
{
    for (int sig = 1; sig < NSIG; sig++) {
        struct sigaction sa;
        if (sig == SIGSEGV || sig == SIGTRAP || sig == SIGKILL || sig == SIGSTOP ||
            real_sigaction_fn()(sig, NULL, &sa) != 0)
            continue;
        if (sa.sa_handler == SIG_DFL || sa.sa_handler == SIG_IGN ||
            (!sigismember(&sa.sa_mask, SIGSEGV) && !sigismember(&sa.sa_mask, SIGTRAP)))
            continue;
        sigdelset(&sa.sa_mask, SIGSEGV);
        sigdelset(&sa.sa_mask, SIGTRAP);
        real_sigaction_fn()(sig, &sa, NULL);
    }
}

/* The main thread's stack, as far as it may grow (its rlimit), so that
 * stack buffers are refused without reading /proc/self/maps. Other
 * threads register theirs when they start (wrap_libc.c). */
static void register_main_stack(void)
{
    pthread_attr_t attr;
    void *lo;
    size_t size;
    if (getpid() != (pid_t)syscall(SYS_gettid) || pthread_getattr_np(pthread_self(), &attr) != 0)
        return;
    if (pthread_attr_getstack(&attr, &lo, &size) == 0)
        tnbc_guard_stack_add((uintptr_t)lo, (uintptr_t)lo + size);
    pthread_attr_destroy(&attr);
}

/* Every pending sub-message lands and every guard is lifted (before a
 * fork, and before the landing's descriptor is closed or replaced). */
static void release_all(void)
{
    /* The whole user address space (below 2^62: no page rounding overflow). */
    tnbc_guard_release_range((void *)tnbc_page_size(), (size_t)1 << 62, TNBC_REL_IO);
}

static _Atomic int reserved_fd = -1;

void tnbc_guard_reserve_fd(int fd) { atomic_store(&reserved_fd, fd); }

void tnbc_guard_fds_closing(long lo, long hi)
{
    int fd = atomic_load(&reserved_fd);
    if (fd >= 0 && fd >= lo && fd <= hi && tnbc_guard_active()) {
        atomic_store(&reserved_fd, -1);   /* the landing checks it again first */
        release_all();
    }
}

void tnbc_async_signals(sigset_t *set)
{
    sigfillset(set);
    sigdelset(set, SIGSEGV);
    sigdelset(set, SIGBUS);
    sigdelset(set, SIGILL);
    sigdelset(set, SIGFPE);
    sigdelset(set, SIGTRAP);
}

int tnbc_guard_init(void)
{
    struct sigaction sa;
    if (installed)
        return 0;
    tnbc_page_size();
    rearm_max = tnbc_env_long("TNBC_TRACE_REARM_MAX", 4096, 0, 1L << 30);
#ifdef TNBC_TEST_HOOKS
    fail_mprotect_every = tnbc_env_long("TNBC_TEST_FAIL_MPROTECT", 0, 0, 1L << 30);
#endif
    step_exact = tnbc_env_bool("TNBC_TRACE_EXACT", 0);
    /* Asynchronous signals wait while our handlers run: a program's signal
     * handler that touches a guarded buffer would otherwise find the
     * interrupted handler's guard lock held (and spin for ever). */
    tnbc_async_signals(&async_signals);
    memset(&sa, 0, sizeof sa);
    /* On an alternate stack (altstack.h): the faulting thread's own may be
     * guarded memory, a fiber's stack from malloc. */
    if (tnbc_altstack_add() != 0)
        tnbc_warn("no alternate signal stack: a fault on a stack in guarded memory would kill the process");
    sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
    sa.sa_mask = async_signals;
    sa.sa_sigaction = on_segv;
    if (real_sigaction_fn()(SIGSEGV, &sa, &prev_segv) != 0) {
        tnbc_warn("cannot install the SIGSEGV handler: %s", strerror(errno));
        return -1;
    }
    sa.sa_sigaction = on_trap;
    if (real_sigaction_fn()(SIGTRAP, &sa, &prev_trap) != 0) {
        real_sigaction_fn()(SIGSEGV, &prev_segv, NULL);
        tnbc_warn("cannot install the SIGTRAP handler: %s", strerror(errno));
        return -1;
    }
    /* A forked child gets the guarded pages but no progress thread and no
     * handler state worth having: every guard is lifted (data landed)
     * before the fork, in the forking thread. */
    unblock_ours_in_handlers();
    register_main_stack();
    static int atfork_done;
    if (!atfork_done && pthread_atfork(release_all, NULL, NULL) == 0)
        atfork_done = 1;
    installed = 1;
    return 0;
}

static int compare_offsets(const void *a, const void *b, void *layout)
{
    const struct tnbc_layout *l = layout;
    size_t x = l->sub[*(const int *)a].offset, y = l->sub[*(const int *)b].offset;
    return x < y ? -1 : x > y;
}

static enum tnbc_sub_cover cover_of(const struct tnbc_guard *g, int s)
{
    uintptr_t a = sub_start(g, s), b = sub_end(g, s);
    if (a == b)
        return TNBC_COVER_EMPTY;
    if (a >= g->hi || b <= g->lo)
        return TNBC_COVER_EDGE;
    return (a >= g->lo && b <= g->hi) ? TNBC_COVER_GUARDED : TNBC_COVER_PARTIAL;
}

static void free_arrays(struct tnbc_guard *g)
{
    free(g->order);
    free((void *)g->open);
    free(g->cover);
    free(g->alone);
    free((void *)g->page_rearms);
    free(g->page_closed);
    g->page_closed = NULL;
    free((void *)g->tail);
    g->tail = NULL;
    g->alone = NULL;
    g->order = NULL;
    g->open = NULL;
    g->cover = NULL;
    g->page_rearms = NULL;
}

static int count_sub(struct tnbc_guard *g, int s, void *arg)
{
    (void)g; (void)s;
    ++*(int *)arg;
    return 0;
}

/* g->alone (see guard.h): the sub's first whole protected page holds no
 * other sub-message. Needs g->order. */
static int mark_alone(struct tnbc_guard *g)
{
    int n = g->layout->nsub;
    g->alone = calloc((size_t)n, 1);
    if (!g->alone)
        return -1;
    for (int s = 0; s < n; s++) {
        uintptr_t a = tnbc_page_up(sub_start(g, s)), b = tnbc_page_down(sub_end(g, s));
        int subs = 0;
        if (clip(g, &a, &b) && a + page_size <= b)
            overlapping(g, a, a + page_size, count_sub, &subs);
        g->alone[s] = subs == 1;
    }
    return 0;
}

int tnbc_guard_may_step(const struct tnbc_guard *g)
{
    if (!g->armed || !g->alone)
        return 0;
    for (int s = 0; s < g->layout->nsub; s++) {
        if (sub_end(g, s) == sub_start(g, s))
            continue;
        uintptr_t a = tnbc_page_down(sub_start(g, s)), b = tnbc_page_up(sub_end(g, s));
        if (clip(g, &a, &b) && !g->alone[s])     /* on a protected page, none its own */
            return 1;
    }
    return 0;
}

static int other_sub(struct tnbc_guard *g, int s, void *arg)
{
    (void)g;
    return s != *(int *)arg;
}

/* g->interleaved (see guard.h). Needs g->order and g->max_bytes. */
static void mark_interleaved(struct tnbc_guard *g)
{
    g->interleaved = 0;
    for (int s = 0; s < g->layout->nsub && !g->interleaved; s++) {
        uintptr_t a = tnbc_page_down(sub_start(g, s)) + page_size, b = tnbc_page_up(sub_end(g, s)) - page_size;
        if (g->layout->sub[s].bytes && a < b)
            g->interleaved = overlapping(g, a, b, other_sub, &s) != 0;
    }
}

/* GUARD_TAIL: each closed sub-message's last whole page, where it has
 * another whole page before it. Needs g->open and g->interleaved. 0, or
 * -1 when out of memory. */
static int mark_tails(struct tnbc_guard *g)
{
    int n = g->layout->nsub;
    if (!(g->flags & GUARD_TAIL) || g->interleaved)
        return 0;
    _Atomic uintptr_t *tail = calloc((size_t)n, sizeof *tail);
    if (!tail)
        return -1;
    for (int s = 0; s < n; s++) {
        uintptr_t first = tnbc_page_up(sub_start(g, s)), last = tnbc_page_down(sub_end(g, s));
        if (!atomic_load(&g->open[s]) && last >= first + 2 * page_size &&
            last - page_size >= g->lo && last <= g->hi)
            atomic_store(&tail[s], last - page_size);
    }
    g->tail = tail;
    return 0;
}

/* Protects [lo, hi) but for the whole pages of sub-messages open at arm
 * (g->landed) that no closed one meets: replay's own block of an alltoall,
 * copied in before arming, is half the buffer at 2 ranks, and protecting
 * it only to open it again cost two mprotects of it per call. Needs
 * g->order and g->open. 0, or -1 when an mprotect failed. */
static int protect_closed(struct tnbc_guard *g)
{
    uintptr_t at = g->lo;
    for (int k = 0; g->landed && k < g->layout->nsub; k++) {
        int s = g->order[k];
        if (!atomic_load(&g->open[s]))
            continue;
        uintptr_t a = tnbc_page_up(sub_start(g, s)), b = tnbc_page_down(sub_end(g, s));
        clip(g, &a, &b);
        if (a < at)
            a = at;
        if (a >= b || overlapping(g, a, b, is_closed, NULL))
            continue;
        if (a > at && raw_mprotect(at, a - at, g->closed_prot) != 0)
            return -1;
        mark_closed(g, at, a, 1);
        at = b;
    }
    if (at < g->hi && raw_mprotect(at, g->hi - at, g->closed_prot) != 0)
        return -1;
    mark_closed(g, at, g->hi, 1);
    return 0;
}

int tnbc_layout_whole_pages(const struct tnbc_layout *l, uintptr_t *lo, uintptr_t *hi)
{
    *lo = tnbc_page_up((uintptr_t)l->base);
    *hi = tnbc_page_down((uintptr_t)l->base + l->span);
    return *lo < *hi;
}

long tnbc_guard_arm(struct tnbc_guard *g)
{
    const struct tnbc_layout *l = g->layout;
    int n = l->nsub;

    tnbc_page_size();
    g->armed = 0;
    g->lifted = 0;
    g->keyed = 0;
    g->page_key = NULL;
    int whole = tnbc_layout_whole_pages(l, &g->lo, &g->hi);
    g->order = NULL;
    g->open = NULL;
    g->cover = NULL;
    g->page_rearms = NULL;
    g->page_closed = NULL;
    g->tail = NULL;
    g->alone = NULL;
    g->refused = NULL;
    atomic_store(&g->faults, 0);
    atomic_store(&g->steps, 0);
    if (!l->base || !whole || n <= 0)
        return 0;
    const char *why = tnbc_page_holes_reason;
    if (l->page_holes || !tnbc_guard_memory_ok(g->lo, g->hi, &why)) {
        static int warned;
        tnbc_warn_once(warned, "not guarded: %s", why);
        g->refused = why;
        return 0;
    }
    g->order = malloc((size_t)n * sizeof *g->order);
    g->open = calloc((size_t)n, sizeof *g->open);
    g->cover = malloc((size_t)n);
    g->page_rearms = calloc((g->hi - g->lo) / page_size, sizeof *g->page_rearms);
    g->page_closed = calloc((g->hi - g->lo) / page_size, 1);
    if (!g->order || !g->open || !g->cover || !g->page_rearms || !g->page_closed)
        goto fail;
    g->max_bytes = 0;
    for (int i = 0; i < n; i++) {
        g->order[i] = i;
        if (l->sub[i].bytes > g->max_bytes)
            g->max_bytes = l->sub[i].bytes;
        g->cover[i] = (unsigned char)cover_of(g, i);
        atomic_store(&g->open[i], (g->cover[i] != TNBC_COVER_GUARDED &&
                                   g->cover[i] != TNBC_COVER_PARTIAL) ||
                                      (g->landed && g->landed(g, i)));
    }
    qsort_r(g->order, (size_t)n, sizeof *g->order, compare_offsets, (void *)l);
    if (mark_alone(g) != 0)
        goto fail;
    mark_interleaved(g);
    if (mark_tails(g) != 0)
        goto fail;
    atomic_store(&g->lock, 0);
    atomic_store(&g->obj.pins, 0);
    if (tnbc_range_insert(g->lo, g->hi, &g->obj) != 0)
        goto fail;               /* overlaps a live guard */
    if ((g->flags & GUARD_KEYS) && g->closed_prot == PROT_NONE && !g->interleaved && !g->landed &&
        tnbc_gkeys_arm(g)) {
        free((void *)g->tail);      /* no page of it is closed yet: nobody faults */
        g->tail = NULL;
        tnbc_gkeys_set(g, g->lo, g->hi, 0, NULL);    /* closed for this thread */
    }
    else if (protect_closed(g) != 0) {
        /* A failed mprotect may have closed part of the range: open it
         * again before anyone can fault on it with no guard to answer. */
        for (int tries = 0; raw_mprotect(g->lo, g->hi - g->lo, PROT_READ | PROT_WRITE) != 0; tries++)
            if (tries == 8) {
                tnbc_write_stderr("tnbc: mprotect cannot reopen a buffer it failed to guard; aborting\n");
                abort();
            }
        tnbc_range_remove(&g->obj);
        goto fail;
    }
    g->armed = 1;
    atomic_fetch_add(&armed_guards, 1);
    return (long)(g->hi - g->lo);
fail:
    free_arrays(g);
    return -1;
}

void tnbc_guard_disarm(struct tnbc_guard *g, enum tnbc_release_reason why)
{
    if (!g->armed)
        return;
    uint64_t tick = tnbc_program_ticks();
    for (int s = 0; s < g->layout->nsub; s++)
        expose(g, s, TNBC_EV_RELEASE, why, tick);
    /* Every sub-message is open now, so no single step closes a page
     * again: pages all open stay so until `lifted`. */
    int opened = 0;
    if (!g->keyed) {
        sigset_t mask = guard_lock(g);
        opened = all_pages_open(g);
        guard_unlock(g, &mask);
    }
    if (!opened && open_range(g, g->lo, g->hi) != 0)
        open_whole(g, tick);
    if (!g->keyed) {
        sigset_t mask = guard_lock(g);
        g->lifted = 1;
        guard_unlock(g, &mask);
    }
    tnbc_range_remove(&g->obj);
    tnbc_gkeys_disarm(g);
    atomic_fetch_add(&disarms, 1);
    g->armed = 0;
    atomic_fetch_sub(&armed_guards, 1);
    free_arrays(g);
}

struct release_arg {
    uintptr_t a, b;
    enum tnbc_release_reason why;
    int released;
    int reading;        /* tnbc_guard_release_range_read */
};

static int count_closed_exposed(struct tnbc_guard *g, int s, void *arg)
{
    struct release_arg *r = arg;
    if (!atomic_load(&g->open[s])) {
        expose(g, s, TNBC_EV_RELEASE, r->why, tnbc_program_ticks());
        r->released++;
    }
    return 0;
}

static void release_in_guard(struct tnbc_range_obj *obj, void *arg)
{
    struct tnbc_guard *g = (struct tnbc_guard *)obj;
    struct release_arg *r = arg;
    if (r->reading && g->closed_prot == PROT_READ)
        return;           /* the kernel may read its closed pages */
    overlapping(g, r->a, r->b, count_closed_exposed, r);
    if (open_range(g, r->a, r->b) != 0)
        open_whole(g, tnbc_program_ticks());
}

static _Thread_local int release_exempt;   /* tnbc_guard_thread_exempt */

void tnbc_guard_thread_exempt(void) { release_exempt = 1; }

static int release_range(const void *addr, size_t len, enum tnbc_release_reason why, int reading)
{
    if (!addr || len == 0 || atomic_load(&armed_guards) == 0 || release_exempt)
        return 0;
    struct release_arg r = { .a = tnbc_page_down((uintptr_t)addr),
                             .b = tnbc_page_up((uintptr_t)addr + len), .why = why, .reading = reading };
    tnbc_range_each(r.a, r.b, release_in_guard, &r);
    return r.released;
}

int tnbc_guard_release_range(const void *addr, size_t len, enum tnbc_release_reason why)
{
    return release_range(addr, len, why, 0);
}

int tnbc_guard_release_range_read(const void *addr, size_t len, enum tnbc_release_reason why)
{
    return release_range(addr, len, why, 1);
}

static void note_owner_lifts(struct tnbc_range_obj *obj, void *arg)
{
    if (((struct tnbc_guard *)obj)->flags & GUARD_OWNER_LIFTS)
        *(int *)arg = 1;
}

void tnbc_guard_release_range_lifted(const void *addr, size_t len, enum tnbc_release_reason why)
{
    tnbc_guard_release_range(addr, len, why);
    if (!addr || len == 0 || atomic_load(&armed_guards) == 0 || release_exempt)
        return;
    uintptr_t a = tnbc_page_down((uintptr_t)addr), b = tnbc_page_up((uintptr_t)addr + len);
    for (;;) {
        int live = 0;
        tnbc_range_each(a, b, note_owner_lifts, &live);
        if (!live)
            return;
        struct timespec ts = { 0, 20 * 1000 };   /* the lift follows the opening within microseconds */
        nanosleep(&ts, NULL);
    }
}

void tnbc_guard_release_layout(const struct tnbc_call_layout *l, enum tnbc_release_reason why)
{
    if (l->recv.base)
        tnbc_guard_release_range(l->recv.base, l->recv.span, why);
    if (l->send.base)
        tnbc_guard_release_range(l->send.base, l->send.span, why);
}

void tnbc_guard_open_sub(struct tnbc_guard *g, int sub)
{
    if (!g->armed)
        return;
    atomic_store(&g->open[sub], 1);
    open_ready_pages(g, sub);
}

/* ---- self-measurement ------------------------------------------------- */

static uint64_t median_ticks(uint64_t *v, int n);

/* One page closed and opened in turn: the median of 9 batches of 50 calls
 * (a preemption in one batch is not mprotect's cost). One mean over 2000
 * calls took 7 ms of every start on a VM that shadows the page tables. */
double tnbc_guard_measure_mprotect_ns(void)
{
    enum { BATCHES = 9, CALLS = 50 };
    size_t ps = tnbc_page_size();
    uint64_t batch[BATCHES];
    void *p = mmap(NULL, ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return 0;
    *(volatile char *)p = 1;
    for (int b = 0; b < BATCHES; b++) {
        uint64_t t0 = tnbc_ticks();
        for (int i = 0; i < CALLS; i++)
            if (raw_mprotect((uintptr_t)p, ps, (i & 1) ? PROT_READ | PROT_WRITE : PROT_NONE) != 0) {
                munmap(p, ps);
                return 0;              /* not measured: the model leaves the term out */
            }
        batch[b] = tnbc_ticks() - t0;
    }
    munmap(p, ps);
    return tnbc_ticks_to_ns(median_ticks(batch, BATCHES)) / CALLS;
}

static void null_hook(struct tnbc_guard *g, int sub, enum tnbc_guard_event ev,
                      enum tnbc_release_reason why, uint64_t tick)
{
    (void)g; (void)sub; (void)ev; (void)why; (void)tick;
}

/* A guard over `pages` pages at p cut in `nsub` equal sub-messages. */
static int arm_probe(struct tnbc_guard *g, struct tnbc_layout *l, struct tnbc_submsg *sub,
                     char *p, int pages, int nsub)
{
    size_t ps = tnbc_page_size(), each = (size_t)pages * ps / (size_t)nsub;
    for (int i = 0; i < nsub; i++)
        sub[i] = (struct tnbc_submsg){ .offset = (size_t)i * each, .bytes = each, .idx = i, .peer = -1 };
    *l = (struct tnbc_layout){ .base = p, .span = (size_t)pages * ps, .nsub = nsub, .sub = sub };
    *g = (struct tnbc_guard){ .layout = l, .closed_prot = PROT_NONE, .hook = null_hook };
    return tnbc_guard_arm(g) > 0;
}

/* The middle of v[0..n) (sorted in place; n small). The kernel's share of
 * a signal is a fixed cost; a preemption during one of the probes is not
 * part of it, and the mean of a probe on a loaded machine took it in:
 * over-subtracted from program time, it made a 16 KiB block's consumption
 * rate look 2x too fast. */
static uint64_t median_ticks(uint64_t *v, int n)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
            uint64_t t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    return n > 0 ? v[n / 2] : 0;
}

/* The kernel's share of a single step (fault, then trap): reads of one
 * half of a page whose other half stays untouched. Needs segv_ticks. */
static void measure_step(char *p)
{
    enum { STEPS = 16 };
    struct tnbc_submsg sub[2];
    struct tnbc_layout l;
    struct tnbc_guard g;
    int steps = rearm_max - 1 < STEPS ? (int)rearm_max - 1 : STEPS;
#if defined(__SANITIZE_THREAD__)
    /* ThreadSanitizer defers the trap to its own safe point, which breaks
     * a single step taken here (tracing under TSan is for races, not
     * timing): the trap's kernel share is left at 0. */
    steps = 0;
#endif
    if (!HAVE_SINGLE_STEP || steps < 1 || !arm_probe(&g, &l, sub, p, 1, 2))
        return;
    uint64_t each[STEPS];
    trap_ticks = 0;
    for (int i = 0; i < steps; i++) {
        uint64_t p0 = tnbc_program_ticks();
        (void)((volatile char *)p)[i];
        each[i] = tnbc_program_ticks() - p0;
    }
    uint64_t per_step = median_ticks(each, steps);
    trap_ticks = per_step > segv_ticks ? per_step - segv_ticks : 0;
    tnbc_guard_disarm(&g, TNBC_REL_DONE);
}

/* Cost of one fault through our handler: a guarded page per sub-message,
 * each touched once; and, on the way, the kernel's share of our signals
 * (what program time leaves out, clock.h). Requires tnbc_guard_init(). */
double tnbc_guard_measure_fault_ns(void)
{
    enum { PAGES = 64 };
    size_t ps = tnbc_page_size();
    struct tnbc_submsg sub[PAGES];
    struct tnbc_layout l;
    struct tnbc_guard g;
    char *p = mmap(NULL, PAGES * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    double ns = 0;

    if (p == MAP_FAILED || !installed)
        return 0;
    memset(p, 0, PAGES * ps);
    if (arm_probe(&g, &l, sub, p, PAGES, PAGES)) {
        uint64_t each[PAGES], wall[PAGES];
        segv_ticks = 0;
        for (int i = 0; i < PAGES; i++) {
            uint64_t w0 = tnbc_ticks(), p0 = tnbc_program_ticks();
            ((volatile char *)p)[(size_t)i * ps] += 1;
            each[i] = tnbc_program_ticks() - p0;
            wall[i] = tnbc_ticks() - w0;
        }
        /* The median too: one preemption made a rank's mean 445 ms. */
        ns = tnbc_ticks_to_ns(median_ticks(wall, PAGES));
        /* The handlers' own time is already not the program's: what is
         * left of each access is the kernel's share of its fault. */
        segv_ticks = median_ticks(each, PAGES);
        tnbc_guard_disarm(&g, TNBC_REL_DONE);
        measure_step(p);
    }
    munmap(p, PAGES * ps);
    return ns;
}

/* One round of tnbc_guard_measure_page_costs over `pages` populated
 * pages at p: the ticks of closing and opening them (two mprotects) and
 * of the first reads after, less those of reading them once more. -1,
 * touching nothing, when an mprotect failed (the pages may be closed). */
static int page_cost_round(char *p, int pages, uint64_t *mprotect_ticks, uint64_t *retouch_ticks)
{
    size_t ps = tnbc_page_size();
    volatile char sink = 0;
    uint64_t t0 = tnbc_ticks();
    if (raw_mprotect((uintptr_t)p, (size_t)pages * ps, PROT_NONE) != 0 ||
        raw_mprotect((uintptr_t)p, (size_t)pages * ps, PROT_READ | PROT_WRITE) != 0)
        return -1;
    uint64_t t1 = tnbc_ticks();
    for (int i = 0; i < pages; i++)
        sink += p[(size_t)i * ps];
    uint64_t t2 = tnbc_ticks();
    for (int i = 0; i < pages; i++)
        sink += p[(size_t)i * ps];
    uint64_t t3 = tnbc_ticks();
    (void)sink;
    *mprotect_ticks = t1 - t0;
    *retouch_ticks = t2 - t1 > t3 - t2 ? (t2 - t1) - (t3 - t2) : 0;
    return 0;
}

void tnbc_guard_measure_page_costs(double *mprotect_page_ns, double *retouch_ns)
{
    enum { PAGES = 64, ROUNDS = 7 };
    size_t ps = tnbc_page_size();
    uint64_t mp[ROUNDS], rt[ROUNDS];
    *mprotect_page_ns = *retouch_ns = 0;
    char *p = mmap(NULL, PAGES * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return;
    memset(p, 1, PAGES * ps);
    for (int i = 0; i < ROUNDS; i++)
        if (page_cost_round(p, PAGES, &mp[i], &rt[i]) != 0) {
            munmap(p, PAGES * ps);      /* not measured: the model leaves the terms out */
            return;
        }
    munmap(p, PAGES * ps);
    /* Medians: a preemption in one round is not a page's cost. */
    *mprotect_page_ns = tnbc_ticks_to_ns(median_ticks(mp, ROUNDS)) / (2.0 * PAGES);
    *retouch_ns = tnbc_ticks_to_ns(median_ticks(rt, ROUNDS)) / PAGES;
}
