// SPDX-License-Identifier: BSD-3-Clause
/* Unit tests for core/guard: page protection of sub-messages, the SIGSEGV /
 * SIGTRAP handlers, release before system calls, and chaining of foreign
 * faults to the handler that was there before.
 *
 * Buffers are mmap'ed pages; layouts are written by hand so every byte's
 * sub-message and every page's state is known. Page protections are read
 * back from /proc/self/maps.
 *
 * cmocka installs its own SIGSEGV handler around every test with signal(),
 * which goes straight to the kernel; every test therefore first puts the
 * guard's handlers back (reclaim()) as they were after tnbc_guard_init. */
#include "clock.h"
#include "guard.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "proc_maps.h"

#define REARM_MAX 20          /* TNBC_TRACE_REARM_MAX for this process */
#define MAX_EVENTS 256

/* ---- event log (written from the signal handler) ----------------------- */

struct event {
    struct tnbc_guard *g;
    int sub, ev, why;
    uint64_t tick;
};
static struct event evs[MAX_EVENTS];
static atomic_int nev;

static uint64_t hook_spin_ticks;   /* test_program_time: work done in the hook */

/* Busy for `ticks`: the program's (or a hook's) own work, on the CPU. */
static void spin_ticks(uint64_t ticks)
{
    for (uint64_t t0 = tnbc_ticks(); tnbc_ticks() - t0 < ticks;)
        ;
}

static void hook(struct tnbc_guard *g, int sub, enum tnbc_guard_event ev,
                 enum tnbc_release_reason why, uint64_t tick)
{
    spin_ticks(hook_spin_ticks);
    int i = atomic_fetch_add(&nev, 1);
    if (i < MAX_EVENTS)
        evs[i] = (struct event){ g, sub, (int)ev, (int)why, tick };
}

static void expect_event(int i, int sub, enum tnbc_guard_event ev, enum tnbc_release_reason why)
{
    assert_true(i < atomic_load(&nev));
    assert_int_equal(evs[i].sub, sub);
    assert_int_equal(evs[i].ev, ev);
    if (ev == TNBC_EV_RELEASE)
        assert_int_equal(evs[i].why, why);
}

/* Events i..i+n-1 are RELEASE(why) of exactly the subs in want[] (any order). */
static void expect_released_set(int i, const int *want, int n, enum tnbc_release_reason why)
{
    assert_int_equal(atomic_load(&nev), i + n);
    for (int k = 0; k < n; k++) {
        int found = 0;
        for (int j = i; j < i + n; j++)
            if (evs[j].sub == want[k]) {
                assert_int_equal(evs[j].ev, TNBC_EV_RELEASE);
                assert_int_equal(evs[j].why, why);
                found++;
            }
        assert_int_equal(found, 1);
    }
}

/* ---- the handler that was there before tnbc_guard_init ------------------ */

static sigjmp_buf jb;
static volatile sig_atomic_t jb_armed, prev_calls, other_calls, plain_calls;
static void *volatile prev_addr;
static volatile int prev_code;

static void recover_or_die(void)
{
    if (jb_armed) {
        jb_armed = 0;
        siglongjmp(jb, 1);
    }
    static const char msg[] = "test_guard: unexpected SIGSEGV\n";
    ssize_t w = write(2, msg, sizeof msg - 1);
    (void)w;
    _exit(3);
}

static void prev_segv(int sig, siginfo_t *si, void *ctx)
{
    (void)sig; (void)ctx;
    prev_calls++;
    prev_addr = si->si_addr;
    prev_code = si->si_code;
    recover_or_die();
}

static void other_segv(int sig, siginfo_t *si, void *ctx)
{
    (void)sig; (void)si; (void)ctx;
    other_calls++;
    recover_or_die();
}

static void plain_segv(int sig)
{
    (void)sig;
    plain_calls++;
    recover_or_die();
}

/* Runs `stmt`, which is expected to fault outside every guard; evaluates
 * to 1 when a chained handler recovered from it. */
#define FAULTS(stmt) (sigsetjmp(jb, 1) == 0 ? (jb_armed = 1, (stmt), jb_armed = 0, 0) : 1)

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);
static sigaction_fn real_sigaction;      /* libc's (or a sanitizer's), not guard.c's */
static struct sigaction ours_segv, ours_trap;

static struct sigaction prev_sa;         /* the program's: prev_segv */

/* Before each test: the guard's handlers in the kernel, and the program's
 * handler as the one they chain to. cmocka's signal() either displaced
 * ours (glibc) or, where signal() goes through sigaction (TSan), became
 * the chained handler. */
static int interposed;                   /* guard.c defines sigaction here */

static void reclaim(void)
{
    real_sigaction(SIGSEGV, &ours_segv, NULL);
    real_sigaction(SIGTRAP, &ours_trap, NULL);
    if (interposed)
        sigaction(SIGSEGV, &prev_sa, NULL);   /* guard.c's: sets the chain target */
}

/* Tests of the sigaction interposition itself need it to be there (a build
 * may leave sigaction to a sanitizer that intercepts it). */
static void need_interposition(void)
{
    if (!interposed) {
        print_message("# sigaction is not interposed in this build\n");
        skip();
    }
}

/* ---- buffers, layouts, page state --------------------------------------- */

static size_t ps;

struct fixture {
    char *map;
    size_t map_len;
    struct tnbc_submsg sub[64];
    struct tnbc_layout lay;
    struct tnbc_guard g, g2;
};
static struct fixture F;

static char pattern(size_t i) { return (char)(i % 251 + 1); }

/* n pages, read-write, filled with pattern(offset). */
static char *map_pages(size_t n)
{
    F.map_len = n * ps;
    F.map = mmap(NULL, F.map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(F.map != MAP_FAILED);
    for (size_t i = 0; i < F.map_len; i++)
        F.map[i] = pattern(i);
    return F.map;
}

/* n sub-messages of `each` bytes back to back from base. */
static struct tnbc_layout *even_layout(char *base, int n, size_t each)
{
    for (int i = 0; i < n; i++)
        F.sub[i] = (struct tnbc_submsg){ .offset = (size_t)i * each, .bytes = each, .idx = i, .peer = i };
    F.lay = (struct tnbc_layout){ .base = base, .span = (size_t)n * each,
                                  .bytes = (size_t)n * each, .block_bytes = (long)each,
                                  .nsub = n, .sub = F.sub };
    return &F.lay;
}

static void setup_guard(struct tnbc_guard *g, const struct tnbc_layout *l, int prot, unsigned flags)
{
    memset(g, 0, sizeof *g);
    g->layout = l;
    g->closed_prot = prot;
    g->flags = flags;
    g->hook = hook;
    g->user = &F;
}

/* The usual start of a test: the guard's handlers back in place, `pages`
 * fresh pages, and an armed guard over nsub sub-messages of `each` bytes
 * from the first byte. */
static char *guarded_pages(size_t pages, int nsub, size_t each, int prot, unsigned flags)
{
    reclaim();
    char *b = map_pages(pages);
    setup_guard(&F.g, even_layout(b, nsub, each), prot, flags);
    assert_true(tnbc_guard_arm(&F.g) > 0);
    return b;
}


#define RW (PROT_READ | PROT_WRITE)

static char rd(const char *p) { return *(const volatile char *)p; }
static void wr(char *p, char v) { *(volatile char *)p = v; }

static int setup(void **state)
{
    (void)state;
    memset(&F, 0, sizeof F);
    atomic_store(&nev, 0);
    prev_calls = other_calls = plain_calls = 0;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    reclaim();
    tnbc_guard_disarm(&F.g, TNBC_REL_DONE);
    tnbc_guard_disarm(&F.g2, TNBC_REL_DONE);
    if (F.map)
        munmap(F.map, F.map_len);
    F.map = NULL;
    return tnbc_guard_active() == 0 && tnbc_range_count() == 0 ? 0 : -1;
}

/* ---- tests -------------------------------------------------------------- */

/* One page per sub-message: touches in a known order come out in exactly
 * that order, once each, with the access kind; pages open one by one. */
static void test_page_subs_order_and_kinds(void **state)
{
    (void)state;
    char *b = guarded_pages(4, 4, ps, PROT_NONE, 0);
    assert_int_equal(F.g.hi - F.g.lo, (4 * ps));
    assert_int_equal(tnbc_guard_active(), 1);
    assert_int_equal(tnbc_range_count(), 1);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(F.g.cover[i], TNBC_COVER_GUARDED);
        assert_int_equal(prot_at(b + (size_t)i * ps), PROT_NONE);
    }

    assert_int_equal(rd(b + 2 * ps + 7), pattern(2 * ps + 7));
    assert_int_equal(prot_at(b + 2 * ps), RW);
    assert_int_equal(prot_at(b + 1 * ps), PROT_NONE);
    wr(b + 0 * ps + 100, 'w');
    assert_int_equal(prot_at(b), RW);
    assert_int_equal(rd(b + 3 * ps + ps - 1), pattern(4 * ps - 1));
    wr(b + 1 * ps, 'x');
    assert_int_equal(atomic_load(&nev), 4);
    expect_event(0, 2, TNBC_EV_READ, 0);
    expect_event(1, 0, TNBC_EV_WRITE, 0);
    expect_event(2, 3, TNBC_EV_READ, 0);
    expect_event(3, 1, TNBC_EV_WRITE, 0);
    for (int i = 0; i < 4; i++) {
        assert_ptr_equal(evs[i].g, &F.g);
        assert_true(evs[i].tick > 0);
        if (i)
            assert_true(evs[i].tick >= evs[i - 1].tick);
        assert_int_equal(prot_at(b + (size_t)i * ps), RW);
    }

    /* Second touches are free and silent; the data is what was written. */
    for (size_t i = 0; i < 4 * ps; i += 512)
        (void)rd(b + i);
    assert_int_equal(rd(b + 100), 'w');
    assert_int_equal(rd(b + ps), 'x');
    assert_int_equal(atomic_load(&nev), 4);
    tnbc_guard_disarm(&F.g, TNBC_REL_DONE);
    assert_int_equal(atomic_load(&nev), 4);           /* nothing left to release */
    assert_int_equal(tnbc_guard_active(), 0);
    assert_int_equal(tnbc_range_count(), 0);
}

/* Four sub-messages share one page: each first touch is reported exactly
 * once, and the page is re-protected after each single-stepped access until
 * the last one is touched. */
static void test_subpage_exact_rearm(void **state)
{
    (void)state;
    size_t q = ps / 4;
    char *b = guarded_pages(1, 4, q, PROT_NONE, 0);
    assert_int_equal(F.g.hi - F.g.lo, ps);

    assert_int_equal(rd(b + 1 * q + 5), pattern(q + 5));
    assert_int_equal(prot_at(b), PROT_NONE);          /* re-armed after one step */
    assert_int_equal(rd(b + 1 * q + 6), pattern(q + 6)); /* again: no event */
    assert_int_equal(atomic_load(&nev), 1);
    wr(b + 3 * q + 1, 'z');
    assert_int_equal(prot_at(b), PROT_NONE);
    assert_int_equal(rd(b + 0 * q), pattern(0));
    assert_int_equal(prot_at(b), PROT_NONE);
    assert_int_equal(rd(b + 2 * q + q - 1), pattern(3 * q - 1));
    assert_int_equal(prot_at(b), RW);                 /* all four open */
    assert_int_equal(rd(b + 3 * q + 1), 'z');         /* the stepped store landed */

    assert_int_equal(atomic_load(&nev), 4);
    expect_event(0, 1, TNBC_EV_READ, 0);
    expect_event(1, 3, TNBC_EV_WRITE, 0);
    expect_event(2, 0, TNBC_EV_READ, 0);
    expect_event(3, 2, TNBC_EV_READ, 0);
}

/* One unaligned 8-byte load across the boundary of two page-sized
 * sub-messages reports both, lower first. */
static void test_access_straddling_two_pages(void **state)
{
    (void)state;
    char *b = guarded_pages(2, 2, ps, PROT_NONE, 0);
    uint64_t x, want;
    memcpy(&x, (void *)(volatile char *)(b + ps - 4), sizeof x);
    for (int i = 0; i < 8; i++)
        ((char *)&want)[i] = pattern(ps - 4 + (size_t)i);
    assert_memory_equal(&x, &want, sizeof x);
    assert_int_equal(atomic_load(&nev), 2);
    expect_event(0, 0, TNBC_EV_READ, 0);
    expect_event(1, 1, TNBC_EV_READ, 0);
}

/* An unaligned buffer: its first and last pages stay open (edge pages) and
 * each sub-message's cover class says how much of it is guarded. */
static void test_edge_pages_and_cover(void **state)
{
    (void)state;
    reclaim();
    char *m = map_pages(4), *b = m + 100;
    size_t q = 3 * ps / 4;
    struct tnbc_layout *l = even_layout(b, 4, q);
    F.sub[4] = (struct tnbc_submsg){ .idx = 4, .peer = 4 };   /* an empty block */
    l->nsub = 5;
    l->span = 3 * ps;
    setup_guard(&F.g, l, PROT_NONE, 0);
    assert_int_equal(tnbc_guard_arm(&F.g), (long)(2 * ps));
    assert_ptr_equal((void *)F.g.lo, m + ps);
    assert_ptr_equal((void *)F.g.hi, m + 3 * ps);
    assert_int_equal(F.g.cover[0], TNBC_COVER_EDGE);     /* [100, 100+q) in page 0 */
    assert_int_equal(F.g.cover[1], TNBC_COVER_PARTIAL);  /* pages 0-1 */
    assert_int_equal(F.g.cover[2], TNBC_COVER_GUARDED);  /* pages 1-2 */
    assert_int_equal(F.g.cover[3], TNBC_COVER_PARTIAL);  /* pages 2-3 */
    assert_int_equal(F.g.cover[4], TNBC_COVER_EMPTY);
    assert_int_equal(prot_at(m), RW);
    assert_int_equal(prot_at(m + ps), PROT_NONE);
    assert_int_equal(prot_at(m + 2 * ps), PROT_NONE);
    assert_int_equal(prot_at(m + 3 * ps), RW);

    /* Edge bytes: no fault, no event. */
    (void)rd(b);                       /* sub 0 */
    (void)rd(m + ps - 1);              /* sub 1's head in page 0 */
    wr(m + 3 * ps + 50, 'e');          /* sub 3's tail in page 3 */
    assert_int_equal(atomic_load(&nev), 0);
    /* Guarded bytes: 3, 1, 2. */
    (void)rd(m + 3 * ps - 1);          /* sub 3 in page 2 */
    (void)rd(m + ps);                  /* sub 1 in page 1 */
    assert_int_equal(prot_at(m + ps), PROT_NONE);   /* sub 2 still closed there */
    wr(b + 2 * q + 1, 'g');            /* sub 2 */
    assert_int_equal(atomic_load(&nev), 3);
    expect_event(0, 3, TNBC_EV_READ, 0);
    expect_event(1, 1, TNBC_EV_READ, 0);
    expect_event(2, 2, TNBC_EV_WRITE, 0);
    assert_int_equal(prot_at(m + ps), RW);
    assert_int_equal(prot_at(m + 2 * ps), RW);
}

/* A buffer without one whole page cannot be guarded: arm says 0. */
static void test_nothing_to_guard(void **state)
{
    (void)state;
    char *m = map_pages(2);
    setup_guard(&F.g, even_layout(m + 100, 2, ps / 2), PROT_NONE, 0);
    assert_int_equal(tnbc_guard_arm(&F.g), 0);
    assert_int_equal(F.g.armed, 0);
    assert_int_equal(tnbc_guard_active(), 0);
    tnbc_guard_disarm(&F.g, TNBC_REL_DONE);          /* safe on an unarmed guard */
    assert_int_equal(atomic_load(&nev), 0);
    assert_int_equal(prot_at(m + ps), RW);
}

/* The kernel cannot read a guarded page (EFAULT, no signal); releasing the
 * range first makes write() work, and reports exactly that sub-message. */
static void test_release_range_for_io(void **state)
{
    (void)state;
    reclaim();
    char *b = map_pages(4), back[4096 * 4];
    int fd[2];
    assert_true(ps <= sizeof back);
    setup_guard(&F.g, even_layout(b, 4, ps), PROT_NONE, 0);
    assert_true(tnbc_guard_arm(&F.g) > 0);
    assert_int_equal(pipe(fd), 0);

    errno = 0;
    assert_int_equal(write(fd[1], b + 2 * ps, ps), -1);
    assert_int_equal(errno, EFAULT);
    assert_int_equal(atomic_load(&nev), 0);

    assert_int_equal(tnbc_guard_release_range(b + 2 * ps + 10, 100, TNBC_REL_IO), 1);
    assert_int_equal(atomic_load(&nev), 1);
    expect_event(0, 2, TNBC_EV_RELEASE, TNBC_REL_IO);
    assert_int_equal(prot_at(b + 2 * ps), RW);
    assert_int_equal(prot_at(b + 1 * ps), PROT_NONE);
    assert_int_equal(prot_at(b + 3 * ps), PROT_NONE);
    assert_int_equal(write(fd[1], b + 2 * ps, ps), (ssize_t)ps);
    assert_int_equal(read(fd[0], back, ps), (ssize_t)ps);
    for (size_t i = 0; i < ps; i++)
        assert_int_equal(back[i], pattern(2 * ps + i));

    /* Two pages at once; again the same range: nothing more to release. */
    assert_int_equal(tnbc_guard_release_range(b, 2 * ps, TNBC_REL_MPI), 2);
    expect_released_set(1, (int[]){ 0, 1 }, 2, TNBC_REL_MPI);
    assert_int_equal(tnbc_guard_release_range(b, 2 * ps, TNBC_REL_MPI), 0);
    assert_int_equal(prot_at(b + 3 * ps), PROT_NONE);
    /* Nothing guarded there / degenerate arguments. */
    assert_int_equal(tnbc_guard_release_range(b + 4 * ps, ps, TNBC_REL_IO), 0);
    assert_int_equal(tnbc_guard_release_range(b + 3 * ps, 0, TNBC_REL_IO), 0);
    assert_int_equal(tnbc_guard_release_range(NULL, ps, TNBC_REL_IO), 0);
    assert_int_equal(atomic_load(&nev), 3);
    /* The last one is still traced normally. */
    (void)rd(b + 3 * ps);
    expect_event(3, 3, TNBC_EV_READ, 0);
    close(fd[0]);
    close(fd[1]);
}

/* Sub-page sub-messages: a release covers whole pages, so exactly the
 * sub-messages on the pages the range meets are released. */
static void test_release_range_subpage(void **state)
{
    (void)state;
    size_t q = ps / 4;
    char *b = guarded_pages(2, 8, q, PROT_NONE, 0);
    assert_int_equal(tnbc_guard_release_range(b + q + 10, 10, TNBC_REL_IO), 4);
    expect_released_set(0, (int[]){ 0, 1, 2, 3 }, 4, TNBC_REL_IO);
    assert_int_equal(prot_at(b), RW);
    assert_int_equal(prot_at(b + ps), PROT_NONE);
    (void)rd(b + 6 * q);
    expect_event(4, 6, TNBC_EV_READ, 0);
}

/* A sub-message over two pages released through its first page only: its
 * second page still faults, but silently (no second event), and works. */
static void test_release_part_of_a_sub(void **state)
{
    (void)state;
    char *b = guarded_pages(8, 4, 2 * ps, PROT_NONE, 0);
    assert_int_equal(tnbc_guard_release_range(b + 2 * ps, 1, TNBC_REL_IO), 1);
    expect_event(0, 1, TNBC_EV_RELEASE, TNBC_REL_IO);
    assert_int_equal(prot_at(b + 2 * ps), RW);
    assert_int_equal(prot_at(b + 3 * ps), PROT_NONE);
    assert_int_equal(rd(b + 3 * ps + 9), pattern(3 * ps + 9));
    assert_int_equal(atomic_load(&nev), 1);
    assert_int_equal(prot_at(b + 3 * ps), RW);
}

/* Disarm releases exactly the untouched sub-messages and restores RW; the
 * guard can be armed again afterwards. */
static void test_disarm_releases_rest(void **state)
{
    (void)state;
    char *b = guarded_pages(4, 4, ps, PROT_NONE, 0);
    (void)rd(b + ps);
    tnbc_guard_disarm(&F.g, TNBC_REL_FINALIZE);
    assert_int_equal(atomic_load(&nev), 4);
    expect_event(0, 1, TNBC_EV_READ, 0);
    expect_event(1, 0, TNBC_EV_RELEASE, TNBC_REL_FINALIZE);
    expect_event(2, 2, TNBC_EV_RELEASE, TNBC_REL_FINALIZE);
    expect_event(3, 3, TNBC_EV_RELEASE, TNBC_REL_FINALIZE);
    for (int i = 0; i < 4; i++)
        assert_int_equal(prot_at(b + (size_t)i * ps), RW);
    assert_int_equal(F.g.armed, 0);
    assert_int_equal(tnbc_guard_active(), 0);
    assert_int_equal(tnbc_range_count(), 0);
    tnbc_guard_disarm(&F.g, TNBC_REL_FINALIZE);      /* twice: no-op */
    assert_int_equal(atomic_load(&nev), 4);

    assert_true(tnbc_guard_arm(&F.g) > 0);           /* reusable */
    wr(b + 3 * ps, 1);
    expect_event(4, 3, TNBC_EV_WRITE, 0);
}

/* The lift changes only pages the guard still holds closed: where every
 * page opened at its sub-messages' touches, it makes no system call (a
 * page the test itself made read-only since stays so), and a page still
 * closed (a tail never reached, a shared page stepped and closed again)
 * is opened. */
static void test_lift_opens_only_closed_pages(void **state)
{
    (void)state;
    char *b = guarded_pages(4, 4, ps, PROT_NONE, 0);
    for (int i = 0; i < 4; i++)
        (void)rd(b + (size_t)i * ps);
    assert_int_equal(mprotect(b + 2 * ps, ps, PROT_READ), 0);     /* not through the guard */
    tnbc_guard_disarm(&F.g, TNBC_REL_DONE);
    assert_int_equal(prot_at(b + 2 * ps), PROT_READ);
    assert_int_equal(prot_at(b + 3 * ps), RW);
    assert_int_equal(mprotect(b, 4 * ps, RW), 0);

    setup_guard(&F.g, even_layout(b, 1, 4 * ps), PROT_NONE, GUARD_TAIL);
    assert_true(tnbc_guard_arm(&F.g) > 0);
    (void)rd(b);                                                  /* its tail, page 3, stays closed */
    assert_int_equal(prot_at(b + 2 * ps), RW);
    assert_int_equal(prot_at(b + 3 * ps), PROT_NONE);
    tnbc_guard_disarm(&F.g, TNBC_REL_DONE);
    for (int i = 0; i < 4; i++)
        assert_int_equal(prot_at(b + (size_t)i * ps), RW);

    size_t q = ps / 4;                                            /* one page, four sub-messages */
    setup_guard(&F.g, even_layout(b, 4, q), PROT_NONE, 0);
    assert_true(tnbc_guard_arm(&F.g) > 0);
    (void)rd(b + q + 1);                                          /* stepped, closed again */
    assert_int_equal(prot_at(b), PROT_NONE);
    tnbc_guard_disarm(&F.g, TNBC_REL_DONE);
    assert_int_equal(prot_at(b), RW);
    assert_int_equal(rd(b + 3 * q), pattern(3 * q));
}

/* GUARD_WAIT_NEIGHBOURS (replay): a touch on a shared page releases the
 * other closed sub-messages on it (reason neighbour) instead of stepping. */
static void test_wait_neighbours(void **state)
{
    (void)state;
    size_t q = ps / 4;
    char *b = guarded_pages(2, 8, q, PROT_NONE, GUARD_WAIT_NEIGHBOURS);
    (void)rd(b + 2 * q);
    expect_event(0, 2, TNBC_EV_READ, 0);
    expect_released_set(1, (int[]){ 0, 1, 3 }, 3, TNBC_REL_NEIGHBOUR);
    assert_int_equal(prot_at(b), RW);
    assert_int_equal(prot_at(b + ps), PROT_NONE);    /* the other page is untouched */
    (void)rd(b);
    assert_int_equal(atomic_load(&nev), 4);
    wr(b + 7 * q, 1);
    expect_event(4, 7, TNBC_EV_WRITE, 0);
    expect_released_set(5, (int[]){ 4, 5, 6 }, 3, TNBC_REL_NEIGHBOUR);
}

/* Replay's tnbc_guard_open_sub: no event; a page opens once every
 * sub-message on it is open. */
static void test_open_sub(void **state)
{
    (void)state;
    size_t q = ps / 4;
    char *b = guarded_pages(2, 8, q, PROT_NONE, GUARD_WAIT_NEIGHBOURS);
    tnbc_guard_open_sub(&F.g, 0);
    tnbc_guard_open_sub(&F.g, 3);
    tnbc_guard_open_sub(&F.g, 1);
    assert_int_equal(prot_at(b), PROT_NONE);
    tnbc_guard_open_sub(&F.g, 2);
    assert_int_equal(prot_at(b), RW);
    assert_int_equal(prot_at(b + ps), PROT_NONE);
    (void)rd(b + q);
    assert_int_equal(atomic_load(&nev), 0);
    tnbc_guard_open_sub(&F.g, 6);
    (void)rd(b + 5 * q);
    expect_event(0, 5, TNBC_EV_READ, 0);
    expect_released_set(1, (int[]){ 4, 7 }, 2, TNBC_REL_NEIGHBOUR);
}

/* Sub-messages whose footprints interleave (derived receive types: a
 * struct of absolute addresses, a column type): sub 0 spans pages 0-5
 * and sub 1 (page 1) and sub 2 (page 3) lie inside it. Opening sub 0
 * opens only the pages no closed sub-message shares; each other page
 * opens with the last of its sub-messages. Before, the interior of a
 * sub-message's footprint was opened whole, and the program read sub 2's
 * page before its data had arrived. */
static void test_open_sub_interleaved(void **state)
{
    (void)state;
    reclaim();
    char *b = map_pages(6);
    F.sub[0] = (struct tnbc_submsg){ .offset = 0, .bytes = 6 * ps, .idx = 0 };
    F.sub[1] = (struct tnbc_submsg){ .offset = ps, .bytes = ps, .idx = 1, .peer = 1 };
    F.sub[2] = (struct tnbc_submsg){ .offset = 3 * ps, .bytes = ps, .idx = 2, .peer = 2 };
    F.lay = (struct tnbc_layout){ .base = b, .span = 6 * ps, .bytes = 8 * ps, .nsub = 3, .sub = F.sub };
    setup_guard(&F.g, &F.lay, PROT_NONE, GUARD_WAIT_NEIGHBOURS);
    assert_true(tnbc_guard_arm(&F.g) > 0);
    assert_int_equal(F.g.interleaved, 1);
    tnbc_guard_open_sub(&F.g, 0);
    int want0[6] = { RW, PROT_NONE, RW, PROT_NONE, RW, RW };
    for (int p = 0; p < 6; p++)
        assert_int_equal(prot_at(b + (size_t)p * ps), want0[p]);
    tnbc_guard_open_sub(&F.g, 2);
    assert_int_equal(prot_at(b + 3 * ps), RW);
    assert_int_equal(prot_at(b + ps), PROT_NONE);
    tnbc_guard_open_sub(&F.g, 1);
    assert_int_equal(prot_at(b + ps), RW);
    assert_int_equal(atomic_load(&nev), 0);
    /* Blocks side by side, sharing at most their edge pages: not interleaved. */
    tnbc_guard_disarm(&F.g, TNBC_REL_DONE);
    reclaim();
    b = map_pages(4);
    setup_guard(&F.g, even_layout(b, 3, ps + ps / 2), PROT_NONE, GUARD_WAIT_NEIGHBOURS);
    assert_true(tnbc_guard_arm(&F.g) > 0);
    assert_int_equal(F.g.interleaved, 0);
}

/* Replay's own block, copied in before arming (g->landed): open from the
 * start, no event for it, and the pages only it covers never protected;
 * pages it shares with a closed sub-message are. Three sub-messages of 2.5
 * pages from page 0 (sub 0: 0-2.5, sub 1: 2.5-5, sub 2: 5-7.5): sub 1, landed,
 * shares page 2 with sub 0 and covers pages 3 and 4 alone. */
static int sub1_landed(const struct tnbc_guard *g, int sub)
{
    (void)g;
    return sub == 1;
}

static void test_landed_at_arm(void **state)
{
    (void)state;
    reclaim();
    char *b = map_pages(8);
    setup_guard(&F.g, even_layout(b, 3, 5 * ps / 2), PROT_NONE, GUARD_WAIT_NEIGHBOURS);
    F.g.landed = sub1_landed;
    assert_true(tnbc_guard_arm(&F.g) > 0);
    assert_int_equal(prot_at(b + ps), PROT_NONE);          /* sub 0 only */
    assert_int_equal(prot_at(b + 2 * ps), PROT_NONE);      /* subs 0 and 1 */
    assert_int_equal(prot_at(b + 3 * ps), RW);             /* sub 1 only */
    assert_int_equal(prot_at(b + 4 * ps), RW);             /* sub 1 only */
    assert_int_equal(prot_at(b + 5 * ps), PROT_NONE);      /* sub 2 */
    assert_int_equal(rd(b + 3 * ps), pattern(3 * ps));
    assert_int_equal(atomic_load(&nev), 0);
    (void)rd(b + 5 * ps + 1);                              /* sub 2: its event only */
    expect_event(0, 2, TNBC_EV_READ, 0);
    assert_int_equal(atomic_load(&nev), 1);
    (void)rd(b);
    expect_event(1, 0, TNBC_EV_READ, 0);
    assert_int_equal(atomic_load(&nev), 2);
}

/* A send-side guard (read-only): reads pass, the first write is reported. */
static void test_send_side_readonly(void **state)
{
    (void)state;
    char *b = guarded_pages(4, 4, ps, PROT_READ, 0);
    assert_int_equal(prot_at(b), PROT_READ);
    for (size_t i = 0; i < 4 * ps; i += 256)
        assert_int_equal(rd(b + i), pattern(i));
    assert_int_equal(atomic_load(&nev), 0);
    wr(b + 3 * ps + 1, 'S');
    assert_int_equal(atomic_load(&nev), 1);
    expect_event(0, 3, TNBC_EV_WRITE, 0);
    assert_int_equal(prot_at(b + 3 * ps), RW);
    assert_int_equal(prot_at(b + 2 * ps), PROT_READ);
    assert_int_equal(rd(b + 3 * ps + 1), 'S');
}

/* Two guards may not cover the same pages; the first keeps working. */
static void test_overlapping_guard_refused(void **state)
{
    (void)state;
    char *b = guarded_pages(4, 4, ps, PROT_NONE, 0);
    setup_guard(&F.g2, &F.lay, PROT_READ, 0);
    assert_int_equal(tnbc_guard_arm(&F.g2), -1);
    assert_int_equal(F.g2.armed, 0);
    assert_int_equal(tnbc_guard_active(), 1);
    assert_int_equal(prot_at(b), PROT_NONE);
    (void)rd(b + ps);
    assert_int_equal(atomic_load(&nev), 1);
    assert_ptr_equal(evs[0].g, &F.g);
}

/* After TNBC_TRACE_REARM_MAX single steps on one page, the page stays open
 * and its untouched sub-messages are released with reason limit. */
static void test_rearm_limit(void **state)
{
    (void)state;
    size_t q = ps / 4;
    char *b = guarded_pages(1, 4, q, PROT_NONE, 0);
    for (int i = 0; i < REARM_MAX; i++) {
        (void)rd(b + (size_t)i);
        assert_int_equal(prot_at(b), PROT_NONE);
    }
    assert_int_equal(atomic_load(&nev), 1);
    (void)rd(b);                                      /* one step too many */
    assert_int_equal(prot_at(b), RW);
    expect_event(0, 0, TNBC_EV_READ, 0);
    expect_released_set(1, (int[]){ 1, 2, 3 }, 3, TNBC_REL_LIMIT);
}

/* GUARD_NO_STEP: the shared page's first fault records its sub-message,
 * releases the page's other untouched ones (limit) and opens the page: no
 * single step. tnbc_guard_may_step says whether stepping could happen. */
static void test_no_step(void **state)
{
    (void)state;
    size_t q = ps / 4;
    char *b = guarded_pages(1, 4, q, PROT_NONE, GUARD_NO_STEP);
    assert_true(tnbc_guard_may_step(&F.g));
    (void)rd(b + 2 * q + 5);
    assert_int_equal(prot_at(b), RW);
    assert_int_equal(atomic_load(&F.g.steps), 0);
    expect_event(0, 2, TNBC_EV_READ, 0);
    expect_released_set(1, (int[]){ 0, 1, 3 }, 3, TNBC_REL_LIMIT);
}

/* Blocks with pages of their own never need a single step. */
static void test_may_step_own_pages(void **state)
{
    (void)state;
    (void)guarded_pages(4, 4, ps, PROT_NONE, 0);
    assert_false(tnbc_guard_may_step(&F.g));
}

/* Program time leaves out the handlers: a hook that works 2 ms at each of
 * the four first touches takes at least 8 ms of wall time that program
 * time does not see, whatever else the machine does meanwhile (which
 * both clocks see); and program time never runs backwards across the
 * single-stepped reads in between. No timing ratio is asserted. */
static void test_program_time(void **state)
{
    (void)state;
#if defined(__SANITIZE_THREAD__)
    print_message("# TSan build: the single step's kernel share is not measured (guard.c)\n");
    skip();
#endif
    size_t q = ps / 4;
    assert_true(tnbc_guard_measure_fault_ns() > 0);   /* as the trace does at start */
    char *b = guarded_pages(1, 4, q, PROT_NONE, 0);
    uint64_t spin = (uint64_t)(tnbc_ticks_hz() * 2e-3);
    hook_spin_ticks = spin;
    uint64_t w0 = tnbc_ticks(), p0 = tnbc_program_ticks(), last = p0;
    for (int sub = 0; sub < 4; sub++)
        for (int i = 0; i < 4; i++) {       /* the first read faults, the rest step */
            (void)rd(b + (size_t)sub * q + (size_t)i);
            uint64_t now = tnbc_program_ticks();
            assert_true(now >= last);
            last = now;
        }
    hook_spin_ticks = 0;
    uint64_t wall = tnbc_ticks() - w0, program = tnbc_program_ticks() - p0;
    print_message("# 4 hooks of 2 ms and 12 stepped reads: %.1f us wall, %.1f us program\n",
                  tnbc_ticks_to_ns(wall) / 1e3, tnbc_ticks_to_ns(program) / 1e3);
    assert_int_equal(atomic_load(&nev), 4);
    assert_true(program <= wall);
    assert_true(wall - program >= 4 * spin);
}

/* Program time never runs backwards, whatever kernel share a handler
 * charges: a read of program time between two handlers is a point the
 * next handler's "before" may not reach back past. The charge here is
 * larger than all time ever passed (as a kernel share measured while the
 * machine was busy can be), so the check does not depend on the load. */
static void test_program_time_monotonic(void **state)
{
    (void)state;
    tnbc_ticks_lost_since(tnbc_ticks(), 0);          /* a handler exits */
    spin_ticks(1000);                                 /* the program runs on */
    uint64_t before = tnbc_program_ticks();
    tnbc_ticks_lost_since(tnbc_ticks(), UINT64_MAX / 4); /* the next handler */
    uint64_t after = tnbc_program_ticks();
    print_message("# program time before %llu, after %llu\n",
                  (unsigned long long)before, (unsigned long long)after);
    assert_true(after >= before);
}

static void *read_program_time(void *out)
{
    *(uint64_t *)out = tnbc_program_ticks();
    return NULL;
}

/* Causal order only, no timing: a thread started between two reads of
 * the main thread reads a program time between them. */
static void assert_thread_reads_between(void)
{
    uint64_t before = tnbc_program_ticks(), in_thread = 0;
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, read_program_time, &in_thread), 0);
    assert_int_equal(pthread_join(th, NULL), 0);
    uint64_t after = tnbc_program_ticks();
    print_message("# main %llu, thread %llu, main %llu\n", (unsigned long long)before,
                  (unsigned long long)in_thread, (unsigned long long)after);
    assert_true(before <= in_thread);
    assert_true(in_thread <= after);
}

/* Program time is one clock for all threads: a thread started after the
 * main thread lost time to tnbc reads a time between the main thread's
 * reads before and after it (with a clock per thread, the new one ran
 * ahead by all the main thread's lost time: a first touch in a reader
 * thread looked milliseconds later than it was). */
static void test_program_time_one_clock(void **state)
{
    (void)state;
    uint64_t t = tnbc_ticks();
    spin_ticks((uint64_t)(tnbc_ticks_hz() * 20e-3));
    tnbc_ticks_lost_since(t, 0);              /* 20 ms of "observer" time */
    assert_thread_reads_between();
}

/* The stall of program time after an over-charge (a handler's kernel
 * share estimated larger than the time that passed) holds for every
 * thread: a thread started then reads no earlier a time than the main
 * thread's last. With a stall per thread the new thread read the
 * unstalled clock, the over-charge (here 2 ms: a charge reaching back
 * over the program's run since the last handler) before the main
 * thread's read; a loaded CI run met it by a preemption at that point. */
static void test_program_time_one_clock_after_overcharge(void **state)
{
    (void)state;
    tnbc_ticks_lost_since(tnbc_ticks(), 0);              /* a handler exits */
    spin_ticks((uint64_t)(tnbc_ticks_hz() * 2e-3));       /* the program runs 2 ms */
    (void)tnbc_program_ticks();                           /* and reads its time */
    tnbc_ticks_lost_since(tnbc_ticks(), UINT64_MAX / 4);  /* a charge back over it all */
    assert_thread_reads_between();
}

/* A fault that is not ours (a PROT_NONE page nobody guards, an unmapped
 * page) reaches the SIGSEGV handler installed before tnbc_guard_init. */
static void test_foreign_fault_chained(void **state)
{
    (void)state;
    char *b = guarded_pages(4, 2, ps, PROT_NONE, 0);   /* a live guard elsewhere */
    char *none = mmap(NULL, ps, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(none != MAP_FAILED);

    assert_int_equal(FAULTS(rd(none + 3)), 1);
    assert_int_equal(prev_calls, 1);
    assert_ptr_equal(prev_addr, none + 3);
    assert_int_equal(prev_code, SEGV_ACCERR);

    munmap(none, ps);
    assert_int_equal(FAULTS(rd(none)), 1);
    assert_int_equal(prev_calls, 2);
    assert_int_equal(prev_code, SEGV_MAPERR);

    /* A page of the buffer beyond the guard is not ours either. */
    mprotect(b + 3 * ps, ps, PROT_NONE);
    assert_int_equal(FAULTS(wr(b + 3 * ps, 1)), 1);
    assert_int_equal(prev_calls, 3);
    mprotect(b + 3 * ps, ps, RW);

    /* Ours still works after siglongjmp'ing out of the chain. */
    (void)rd(b);
    assert_int_equal(atomic_load(&nev), 1);
    assert_int_equal(prev_calls, 3);
}

static int kernel_handler_is_ours(void)
{
    struct sigaction now;
    real_sigaction(SIGSEGV, NULL, &now);
    return (now.sa_flags & SA_SIGINFO) && now.sa_sigaction == ours_segv.sa_sigaction;
}

/* sigaction() after tnbc_guard_init sees and replaces the chained handler;
 * ours stays installed in the kernel. */
static void test_sigaction_interposed(void **state)
{
    (void)state;
    need_interposition();
    reclaim();
    struct sigaction old, sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = other_segv;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);

    assert_int_equal(sigaction(SIGSEGV, NULL, &old), 0);
    assert_ptr_equal(old.sa_sigaction, prev_segv);
    assert_int_equal(sigaction(SIGSEGV, &sa, &old), 0);
    assert_ptr_equal(old.sa_sigaction, prev_segv);
    assert_true(kernel_handler_is_ours());

    char *b = map_pages(2);
    setup_guard(&F.g, even_layout(b, 1, ps), PROT_NONE, 0);
    assert_true(tnbc_guard_arm(&F.g) > 0);
    (void)rd(b);
    assert_int_equal(atomic_load(&nev), 1);           /* guarded fault: ours */
    mprotect(b + ps, ps, PROT_NONE);
    assert_int_equal(FAULTS(rd(b + ps)), 1);          /* foreign: the new one */
    assert_int_equal(other_calls, 1);
    assert_int_equal(prev_calls, 0);
    mprotect(b + ps, ps, RW);

    old.sa_sigaction = prev_segv;                     /* put the first one back */
    assert_int_equal(sigaction(SIGSEGV, &old, &sa), 0);
    assert_ptr_equal(sa.sa_sigaction, other_segv);
    assert_true(kernel_handler_is_ours());
}

/* signal() is the other way to install a handler; it must not displace
 * the guard's handler either (same contract as sigaction). */
static void test_signal_keeps_ours(void **state)
{
    (void)state;
    need_interposition();
    char *b = guarded_pages(1, 1, ps, PROT_NONE, 0);
    signal(SIGSEGV, plain_segv);
    int displaced = !kernel_handler_is_ours();
    int reached_plain = FAULTS(rd(b));
    reclaim();
    if (displaced || reached_plain)
        fail_msg("signal(SIGSEGV, h) after tnbc_guard_init replaced the guard's handler "
                 "(a guarded touch went to h: %d); glibc's signal() does not go through "
                 "the interposed sigaction()", (int)plain_calls);
    assert_int_equal(atomic_load(&nev), 1);
}

/* With no handler before ours (SIG_DFL), a fault that is not ours kills the
 * process with SIGSEGV as it would without tracing, whether the kernel
 * raised it (bad access) or someone sent it (raise, kill). Run in a child. */
static int child_dies_of_segv(int how)
{
    pid_t pid = fork();
    if (pid == 0) {
        struct sigaction dfl;
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        reclaim();
        sigaction(SIGSEGV, &dfl, NULL);     /* the chained handler: default */
        alarm(3);                           /* a hang ends as SIGALRM */
        if (how == 0)
            (void)rd((char *)F.map + F.map_len);   /* unmapped (see caller) */
        else
            raise(SIGSEGV);
        _exit(0);                           /* survived: wrong */
    }
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) != pid)
        return -1;
    if (WIFEXITED(st))
        return 100 + WEXITSTATUS(st);
    return WIFSIGNALED(st) ? WTERMSIG(st) : -1;
}

static void test_chain_default_kills(void **state)
{
    (void)state;
    need_interposition();
    reclaim();
    char *b = map_pages(2);
    munmap(b + ps, ps);                     /* so F.map + ps is unmapped */
    F.map_len = ps;
    int got = child_dies_of_segv(0);
    if (got == SIGALRM)
        fail_msg("a bad access with SIG_DFL before the guard's handler hung the child: "
                 "chain() restores SIG_DFL with signal(), which here (TSan) goes through "
                 "the interposed sigaction() and only replaces the chained handler, so "
                 "the fault repeats forever");
    assert_int_equal(got, SIGSEGV);
    /* A raised SIGSEGV does not fault again when the handler returns:
     * re-executing the instruction is not enough to get the default action. */
    got = child_dies_of_segv(1);
    if (got != SIGSEGV)
        fail_msg("raise(SIGSEGV) with SIG_DFL before the guard's handler: child %s %d "
                 "instead of being killed by SIGSEGV (chain() restores SIG_DFL but only "
                 "re-raises signals other than SIGSEGV)",
                 got >= 100 ? "exited with" : "got signal", got >= 100 ? got - 100 : got);
}

/* Send-side sub-messages may alias (MPI_Alltoallv with equal send
 * displacements is legal): a write to bytes shared by several sub-messages
 * is the first touch of all of them, and opens the page. */
static void test_aliased_send_subs(void **state)
{
    (void)state;
    reclaim();
    char *b = map_pages(1);
    struct tnbc_layout *l = even_layout(b, 4, ps);
    for (int i = 0; i < 4; i++)
        F.sub[i].offset = 0;                /* all four blocks are the same bytes */
    l->span = ps;
    setup_guard(&F.g, l, PROT_READ, 0);
    assert_true(tnbc_guard_arm(&F.g) > 0);
    wr(b + 8, 'a');
    int n = atomic_load(&nev), rearms = atomic_load(&F.g.page_rearms[0]);
    if (n != 4 || prot_at(b) != RW)
        fail_msg("one write to bytes of 4 aliased sub-messages: %d event(s), page %s, "
                 "%d single step(s); want 4 events and the page open", n,
                 prot_at(b) == RW ? "open" : "still protected", rearms);
    for (int i = 0; i < 4; i++)
        assert_int_equal(evs[i].ev, TNBC_EV_WRITE);
}

struct toucher {
    char *b;
    int first, step, n;
};

static void *touch_thread(void *arg)
{
    struct toucher *t = arg;
    for (int i = t->first; i < t->n; i += t->step)
        (void)rd(t->b + (size_t)i * ps + 1);
    return NULL;
}

/* Two threads fault on different pages of one guard at the same time:
 * every sub-message is reported exactly once. */
static void test_two_threads(void **state)
{
    (void)state;
    reclaim();
    enum { N = 32 };
    char *b = map_pages(N);
    pthread_t t[2];
    struct toucher tt[2] = { { b, 0, 2, N }, { b, 1, 2, N } };
    int seen[N] = { 0 };
    setup_guard(&F.g, even_layout(b, N, ps), PROT_NONE, 0);
    assert_true(tnbc_guard_arm(&F.g) > 0);
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&t[i], NULL, touch_thread, &tt[i]), 0);
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_join(t[i], NULL), 0);
    assert_int_equal(atomic_load(&nev), N);
    for (int i = 0; i < N; i++) {
        assert_int_equal(evs[i].ev, TNBC_EV_READ);
        seen[evs[i].sub]++;
    }
    for (int i = 0; i < N; i++)
        assert_int_equal(seen[i], 1);
}

/* GUARD_TAIL: a sub-message's first touch opens its pages but the last
 * whole page only it fills; the first touch there is reported once
 * (TNBC_EV_TAIL) and opens it. Sub 0: pages 0-3, sub 1: pages 4-7, sub 2:
 * 1.5 pages (8-9.5: one whole page, no tail). A first touch on the tail
 * page itself reports both at once. */
static void test_tail_page(void **state)
{
    (void)state;
    reclaim();
    char *b = map_pages(10);
    even_layout(b, 3, 4 * ps);
    F.sub[2].bytes = 3 * ps / 2;
    F.lay.span = F.lay.bytes = 9 * ps + ps / 2;
    setup_guard(&F.g, &F.lay, PROT_NONE, GUARD_TAIL);
    assert_true(tnbc_guard_arm(&F.g) > 0);
    assert_int_equal(rd(b + ps + 5), pattern(ps + 5));          /* sub 0, page 1 */
    expect_event(0, 0, TNBC_EV_READ, 0);
    assert_int_equal(atomic_load(&nev), 1);
    assert_int_equal(prot_at(b), RW);
    assert_int_equal(prot_at(b + 2 * ps), RW);
    assert_int_equal(prot_at(b + 3 * ps), PROT_NONE);            /* its tail */
    assert_int_equal(prot_at(b + 4 * ps), PROT_NONE);            /* sub 1 */
    assert_int_equal(rd(b + 3 * ps + 7), pattern(3 * ps + 7));
    expect_event(1, 0, TNBC_EV_TAIL, 0);
    assert_int_equal(atomic_load(&nev), 2);
    assert_int_equal(prot_at(b + 3 * ps), RW);
    (void)rd(b + 3 * ps + 9);                                    /* once */
    assert_int_equal(atomic_load(&nev), 2);
    assert_int_equal(rd(b + 7 * ps), pattern(7 * ps));           /* sub 1 at its tail */
    expect_event(2, 1, TNBC_EV_READ, 0);
    expect_event(3, 1, TNBC_EV_TAIL, 0);
    assert_true(evs[3].tick == evs[2].tick);
    for (int p = 4; p < 8; p++)
        assert_int_equal(prot_at(b + (size_t)p * ps), RW);
    (void)rd(b + 8 * ps);                                        /* sub 2: no tail */
    expect_event(4, 2, TNBC_EV_READ, 0);
    assert_int_equal(atomic_load(&nev), 5);
}

/* A fault handler that looked a guard up and then waited (in its hook,
 * for data) past that guard's lift must not open the pages afterwards:
 * by then a later guard (the next call on the same buffer) may have
 * closed them for data that has not arrived. The toucher's handler waits
 * in the first guard's hook while another thread lifts that guard (its
 * removal waits for the handler's pin, but the guard has left the index
 * and the next guard is armed); let go, the toucher must fault again and
 * meet the second guard's hook before it reads. Seen as stale data read
 * by a program's signal thread (torture case signal_thread, MPICH, under
 * load): the late opening left the new call's page readable. */
static atomic_int gate_in, gate_go;
static __thread int gate_here;       /* this thread's first hook call waits */

static void gate_hook(struct tnbc_guard *g, int sub, enum tnbc_guard_event ev,
                      enum tnbc_release_reason why, uint64_t tick)
{
    if (gate_here) {
        gate_here = 0;
        atomic_store(&gate_in, 1);
        while (!atomic_load(&gate_go))
            sched_yield();
    }
    hook(g, sub, ev, why, tick);
}

static void *gated_toucher(void *arg)
{
    gate_here = 1;
    return (void *)(intptr_t)rd((char *)arg + 1);
}

static void *lifter(void *arg)
{
    tnbc_guard_disarm(arg, TNBC_REL_DONE);
    return NULL;
}

static void test_late_handler_after_lift(void **state)
{
    (void)state;
    pthread_t toucher, lift;
    char *b = guarded_pages(2, 1, 2 * ps, PROT_NONE, GUARD_WAIT_NEIGHBOURS);
    F.g.hook = gate_hook;
    atomic_store(&gate_in, 0);
    atomic_store(&gate_go, 0);
    assert_int_equal(pthread_create(&toucher, NULL, gated_toucher, b), 0);
    while (!atomic_load(&gate_in))
        sched_yield();
    assert_int_equal(pthread_create(&lift, NULL, lifter, &F.g), 0);
    while (tnbc_range_count() != 0)      /* lifted: out of the index */
        sched_yield();
    /* The next call on the same pages: new data not arrived yet. */
    setup_guard(&F.g2, even_layout(b, 1, 2 * ps), PROT_NONE, GUARD_WAIT_NEIGHBOURS);
    assert_true(tnbc_guard_arm(&F.g2) > 0);
    int before = atomic_load(&nev);
    atomic_store(&gate_go, 1);
    void *got;
    assert_int_equal(pthread_join(toucher, &got), 0);
    assert_int_equal(pthread_join(lift, NULL), 0);
    assert_int_equal((int)(intptr_t)got, pattern(1));
    int met_second = 0;
    for (int i = before; i < atomic_load(&nev) && i < MAX_EVENTS; i++)
        met_second |= evs[i].g == &F.g2 && evs[i].ev == TNBC_EV_READ;
    assert_true(met_second);
}

/* The self-measurements used for the model's Tinit give positive numbers
 * and leave nothing armed. */
static void test_measure_costs(void **state)
{
    (void)state;
    reclaim();
    double mp = tnbc_guard_measure_mprotect_ns(), fault = tnbc_guard_measure_fault_ns();
    print_message("# mprotect %.0f ns, fault %.0f ns\n", mp, fault);
    assert_true(mp > 0);
    assert_true(fault > 0);
    assert_int_equal(tnbc_guard_active(), 0);
    assert_int_equal(tnbc_range_count(), 0);
}

/* ---- which memory may be guarded ------------------------------------------ */

static char rbuf_static[16 * 4096];

static int memory_ok(const void *p, size_t len, const char **why)
{
    *why = NULL;
    return tnbc_guard_memory_ok((uintptr_t)p, (uintptr_t)p + len, why);
}

static void test_memory_kinds(void **state)
{
    (void)state;
    const char *why;
    char *anon = mmap(NULL, 4 * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    char *shared = mmap(NULL, 4 * ps, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    FILE *f = tmpfile();
    assert_non_null(f);
    assert_int_equal(ftruncate(fileno(f), (off_t)(4 * ps)), 0);
    char *file = mmap(NULL, 4 * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE, fileno(f), 0);
    char *sfile = mmap(NULL, 4 * ps, PROT_READ | PROT_WRITE, MAP_SHARED, fileno(f), 0);
    char *ro = mmap(NULL, 4 * ps, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    char *heap = malloc(64 * ps);
    volatile char on_stack[3 * 4096];
    assert_true(anon != MAP_FAILED && shared != MAP_FAILED && file != MAP_FAILED && heap &&
                sfile != MAP_FAILED && ro != MAP_FAILED);
    tnbc_guard_maps_changed(anon, 4 * ps);        /* as the mmap wrapper does */
    tnbc_guard_maps_changed(shared, 4 * ps);
    tnbc_guard_maps_changed(file, 4 * ps);
    tnbc_guard_maps_changed(sfile, 4 * ps);
    tnbc_guard_maps_changed(ro, 4 * ps);

    assert_true(memory_ok(anon, 4 * ps, &why));
    assert_true(memory_ok(heap + ps, 32 * ps, &why));
    assert_false(memory_ok(shared, ps, &why));
    assert_non_null(strstr(why, "shared"));
    assert_false(memory_ok(sfile + ps, ps, &why));
    assert_false(memory_ok(ro, ps, &why));              /* not writable */
    char *rwx = mmap(NULL, 2 * ps, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(rwx != MAP_FAILED);
    tnbc_guard_maps_changed(rwx, 2 * ps);
    assert_false(memory_ok(rwx, 2 * ps, &why));         /* executable: a JIT's heap */
    assert_non_null(strstr(why, "executable"));
    munmap(rwx, 2 * ps);
    tnbc_guard_maps_changed(rwx, 2 * ps);
    assert_true(memory_ok(file + ps, ps, &why));        /* a private copy of a file */
    assert_true(memory_ok(rbuf_static, sizeof rbuf_static, &why));   /* .bss */
    assert_false(memory_ok((const char *)on_stack + 1024, 4096, &why));   /* [stack] */
    assert_non_null(why);

    /* Part private anonymous, part shared: refused. */
    char *two = mmap(NULL, 2 * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(two != MAP_FAILED);
    tnbc_guard_maps_changed(two, 2 * ps);
    assert_true(memory_ok(two, 2 * ps, &why));
    assert_true(mmap(two + ps, ps, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED,
                     -1, 0) == two + ps);
    tnbc_guard_maps_changed(two + ps, ps);
    assert_false(memory_ok(two, 2 * ps, &why));
    assert_true(memory_ok(two, ps, &why));
    /* Made read-only by the program: refused. */
    assert_int_equal(mprotect(two, ps, PROT_READ), 0);
    tnbc_guard_maps_changed(two, ps);           /* as the mprotect wrapper does */
    assert_false(memory_ok(two, ps, &why));
    assert_int_equal(mprotect(two, ps, PROT_READ | PROT_WRITE), 0);
    tnbc_guard_maps_changed(two, ps);
    assert_true(memory_ok(two, ps, &why));

    /* Gone: refused. */
    munmap(two, 2 * ps);
    tnbc_guard_maps_changed(two, 2 * ps);        /* as the munmap wrapper does */
    assert_false(memory_ok(two, ps, &why));
    /* A mapping made behind our back (no wrapper saw it): the cached map
     * lacks it and is read again. */
    char *late = mmap(NULL, ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(late != MAP_FAILED);
    assert_true(memory_ok(late, ps, &why));
    munmap(late, ps);
    tnbc_guard_maps_changed(late, ps);

    /* A registered thread stack, wherever it lies, is never guarded. */
    tnbc_guard_stack_add((uintptr_t)anon + ps, (uintptr_t)anon + 3 * ps);
    assert_false(memory_ok(anon, 2 * ps, &why));
    assert_non_null(strstr(why, "stack"));
    assert_true(memory_ok(anon + 3 * ps, ps, &why));
    tnbc_guard_stack_remove((uintptr_t)anon + ps);
    assert_true(memory_ok(anon, 4 * ps, &why));

    /* tnbc_guard_arm applies the same rule: nothing armed on shared memory. */
    struct tnbc_submsg sub[1] = { { .bytes = 2 * ps } };
    struct tnbc_layout l = { .base = shared, .span = 2 * ps, .nsub = 1, .sub = sub };
    struct tnbc_guard g;
    setup_guard(&g, &l, PROT_NONE, 0);
    assert_int_equal(tnbc_guard_arm(&g), 0);
    assert_int_equal(g.armed, 0);
    assert_int_equal(tnbc_guard_active(), 0);

    free(heap);
    munmap(anon, 4 * ps);
    munmap(shared, 4 * ps);
    munmap(file, 4 * ps);
    munmap(sfile, 4 * ps);
    munmap(ro, 4 * ps);
    fclose(f);
}

/* Huge pages: mprotect cannot close 4 KiB of a huge page, so the guard
 * would fail on every call; they are refused up front. The lines are as
 * the kernel writes them (6.1): anonymous MAP_HUGETLB memory, and a
 * private mapping of a file on a hugetlbfs mount (libhugetlbfs's heap). */
static void test_memory_huge_pages(void **state)
{
    (void)state;
    const char *mounts = "proc /proc proc rw,nosuid 0 0\n"
                         "hugetlbfs /dev/hugepages hugetlbfs rw,relatime,pagesize=2M 0 0\n"
                         "hugetlbfs /mnt/huge\\040pages hugetlbfs rw,pagesize=1G 0 0\n";
    const char *anon_huge = "7f2a40000000-7f2a40400000 rw-p 00000000 00:10 40123"
                            "                      /anon_hugepage (deleted)";
    const char *file_huge = "7f2a40400000-7f2a40800000 rw-p 00000000 00:2e 17"
                            "                         /dev/hugepages/libhugetlbfs.tmp.Yx2 (deleted)";
    const char *why = tnbc_guard_map_line_unfit(anon_huge, mounts);
    assert_non_null(why);
    assert_non_null(strstr(why, "huge pages"));
    why = tnbc_guard_map_line_unfit(file_huge, mounts);
    assert_non_null(why);
    assert_non_null(strstr(why, "huge pages"));
    /* The same file where no hugetlbfs is mounted: an ordinary file copy. */
    assert_null(tnbc_guard_map_line_unfit(file_huge, "proc /proc proc rw 0 0\n"));
    /* A directory whose name only starts like the mount point's. */
    assert_null(tnbc_guard_map_line_unfit(
        "7f2a40400000-7f2a40800000 rw-p 00000000 08:01 99   /dev/hugepagesx/data", mounts));
    /* A mount point the kernel escaped is left out, not misread. */
    assert_null(tnbc_guard_map_line_unfit(
        "7f2a40400000-7f2a40800000 rw-p 00000000 08:01 99   /mnt/huge pages/x", mounts));
    /* Shared huge pages: refused for being shared, the first reason. */
    why = tnbc_guard_map_line_unfit("7f2a40000000-7f2a40200000 rw-s 00000000 00:10 4 "
                                    "  /anon_hugepage (deleted)", mounts);
    assert_non_null(why);
    assert_non_null(strstr(why, "shared"));
    /* Ordinary lines, as before. */
    assert_null(tnbc_guard_map_line_unfit("55d0c8a1b000-55d0c8a3c000 rw-p 00000000 00:00 0"
                                          "          [heap]", mounts));
    assert_null(tnbc_guard_map_line_unfit("7f2a3c000000-7f2a3c021000 rw-p 00000000 00:00 0 ",
                                          mounts));
    assert_non_null(tnbc_guard_map_line_unfit("7ffd1a2b3000-7ffd1a2d4000 rw-p 00000000 00:00 0"
                                              "          [stack]", mounts));
    assert_non_null(tnbc_guard_map_line_unfit("7f2a3c000000-7f2a3c021000 r--p 00000000 00:00 0 ",
                                              mounts));
    /* Executable and writable (a JIT's code heap): the guard would give
     * it back without its execute right. */
    why = tnbc_guard_map_line_unfit("7f2a3c000000-7f2a3c021000 rwxp 00000000 00:00 0 ", mounts);
    assert_non_null(why);
    assert_non_null(strstr(why, "executable"));
    assert_string_equal(tnbc_guard_map_line_unfit("not a map line", mounts), "unparsable");
    assert_string_equal(tnbc_guard_map_line_unfit("7f2a3c000000-7f2a3c021000 rw", mounts),
                        "unparsable");

    /* The live path, where the machine has huge pages reserved
     * (/proc/sys/vm/nr_hugepages): the same refusal from the real map. */
    size_t huge = 2u << 20;
    char *h = mmap(NULL, huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB,
                   -1, 0);
    if (h == MAP_FAILED) {
        fprintf(stderr, "test_memory_huge_pages: no huge pages reserved here: "
                        "the live MAP_HUGETLB check did not run (the map lines above did)\n");
        return;
    }
    h[0] = 1;
    tnbc_guard_maps_changed(h, huge);
    assert_false(memory_ok(h, 64 * 1024, &why));
    assert_non_null(strstr(why, "huge pages"));
    munmap(h, huge);
    tnbc_guard_maps_changed(h, huge);
}

/* The cached map is read again only for a range a recorded change meets:
 * a program that maps and unmaps scratch memory every iteration must not
 * pay a read of /proc/self/maps at every call on its other buffers. */
static void test_maps_cache_per_range(void **state)
{
    (void)state;
    const char *why;
    char *buf = mmap(NULL, 8 * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(buf != MAP_FAILED);
    tnbc_guard_maps_changed(buf, 8 * ps);
    assert_true(memory_ok(buf, 8 * ps, &why));
    unsigned reads = tnbc_guard_maps_reads();

    /* Scratch mapped and unmapped elsewhere: the table still holds for buf. */
    for (int i = 0; i < 3; i++) {
        char *scratch = mmap(NULL, 16 * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        assert_true(scratch != MAP_FAILED);
        tnbc_guard_maps_changed(scratch, 16 * ps);
        assert_true(memory_ok(buf, 8 * ps, &why));
        munmap(scratch, 16 * ps);
        tnbc_guard_maps_changed(scratch, 16 * ps);
        assert_true(memory_ok(buf + ps, 2 * ps, &why));
    }
    assert_int_equal(tnbc_guard_maps_reads(), reads);

    /* A change inside buf: read again, and the new truth seen. */
    assert_true(mmap(buf + 7 * ps, ps, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED,
                     -1, 0) == buf + 7 * ps);
    tnbc_guard_maps_changed(buf + 7 * ps, ps);
    assert_true(memory_ok(buf, 7 * ps, &why));          /* before the change: still cached */
    assert_int_equal(tnbc_guard_maps_reads(), reads);
    assert_false(memory_ok(buf + 6 * ps, 2 * ps, &why));
    assert_int_equal(tnbc_guard_maps_reads(), reads + 1);

    /* More changes than the list holds: the whole table goes stale. */
    reads = tnbc_guard_maps_reads();
    for (int i = 0; i < 40; i++)
        tnbc_guard_maps_changed((char *)0x1000 + (size_t)i * 2 * ps, ps);
    assert_true(memory_ok(buf, ps, &why));
    assert_int_equal(tnbc_guard_maps_reads(), reads + 1);
    assert_true(memory_ok(buf, ps, &why));
    assert_int_equal(tnbc_guard_maps_reads(), reads + 1);
    munmap(buf, 8 * ps);
    tnbc_guard_maps_changed(buf, 8 * ps);
}

/* Pages a live guard closed show in the map without write access; read
 * again while the guard holds them (the previous call's data still in
 * flight), they still count as private writable memory. Pages closed by
 * anyone else do not, nor do a guard's pages once it is gone and the
 * program closes them itself. */
static void test_memory_closed_by_guard(void **state)
{
    (void)state;
    const char *why;
    char *b = guarded_pages(4, 4, ps, PROT_NONE, 0);
    assert_int_equal(prot_at(b + ps), PROT_NONE);
    char *other = mmap(NULL, 2 * ps, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(other != MAP_FAILED);
    tnbc_guard_maps_changed(other, 2 * ps);
    unsigned reads = tnbc_guard_maps_reads();
    for (int i = 0; i < 40; i++)          /* the whole table stale: read again */
        tnbc_guard_maps_changed((char *)0x1000 + (size_t)i * 2 * ps, ps);
    assert_true(memory_ok(b, 4 * ps, &why));
    assert_true(memory_ok(b + ps + 17, 2 * ps, &why));
    assert_int_equal(tnbc_guard_maps_reads(), reads + 1);
    assert_true(tnbc_guard_holds((uintptr_t)b, (uintptr_t)b + 4 * ps));
    assert_false(tnbc_guard_holds((uintptr_t)b, (uintptr_t)b + 5 * ps));
    assert_false(memory_ok(other, ps, &why));              /* closed by the program */
    assert_non_null(strstr(why, "writable"));
    tnbc_guard_disarm(&F.g, TNBC_REL_DONE);
    assert_false(tnbc_guard_holds((uintptr_t)b, (uintptr_t)b + ps));
    assert_int_equal(mprotect(b, ps, PROT_READ), 0);
    tnbc_guard_maps_changed(b, ps);
    assert_false(memory_ok(b, 2 * ps, &why));              /* read-only now, no guard */
    munmap(other, 2 * ps);
    tnbc_guard_maps_changed(other, 2 * ps);
}

/* Linux 6.11 and later answer for one range (PROCMAP_QUERY): a buffer
 * glibc mapped behind the wrappers' back (a fresh malloc of a large
 * block) is asked about alone, not by reading the whole table, and the
 * table keeps the answer. */
static void test_maps_query_fresh_range(void **state)
{
    (void)state;
    const char *why;
    char *warm = mmap(NULL, ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(warm != MAP_FAILED);
    tnbc_guard_maps_changed(warm, ps);
    assert_true(memory_ok(warm, ps, &why));
    if (!tnbc_guard_maps_query()) {
        munmap(warm, ps);
        skip();      /* a kernel before 6.11: the whole table each time (other tests) */
    }
    unsigned reads = tnbc_guard_maps_reads(), whole = tnbc_guard_maps_whole_reads();
    /* Not announced to the table, as glibc's own mmap of a large block. */
    char *fresh = mmap(NULL, 64 * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    char *shared = mmap(NULL, 4 * ps, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    assert_true(fresh != MAP_FAILED && shared != MAP_FAILED);
    assert_true(memory_ok(fresh + 100, 60 * ps, &why));
    assert_int_equal(tnbc_guard_maps_reads(), reads + 1);
    assert_true(memory_ok(fresh, 64 * ps, &why));             /* kept: not asked again */
    assert_int_equal(tnbc_guard_maps_reads(), reads + 1);
    assert_false(memory_ok(shared, 4 * ps, &why));            /* the same verdicts */
    assert_non_null(strstr(why, "shared"));
    /* Half of it replaced by a shared mapping, announced: asked again. */
    assert_true(mmap(fresh + 32 * ps, 32 * ps, PROT_READ | PROT_WRITE,
                     MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == fresh + 32 * ps);
    tnbc_guard_maps_changed(fresh + 32 * ps, 32 * ps);
    assert_true(memory_ok(fresh, 32 * ps, &why));
    assert_false(memory_ok(fresh + 31 * ps, 2 * ps, &why));
    assert_non_null(strstr(why, "shared"));
    munmap(fresh, 64 * ps);
    tnbc_guard_maps_changed(fresh, 64 * ps);
    assert_false(memory_ok(fresh, ps, &why));                 /* gone */
    assert_int_equal(tnbc_guard_maps_whole_reads(), whole);
    munmap(shared, 4 * ps);
    munmap(warm, ps);
    tnbc_guard_maps_changed(warm, ps);
}

/* The same verdicts from the whole table, as on kernels before 6.11. */
static void whole_table(void (*test)(void **), void **state)
{
    int was = tnbc_guard_maps_query();
    tnbc_guard_maps_use_query(0);
    test(state);
    tnbc_guard_maps_use_query(was);
}
static void test_memory_kinds_whole(void **state) { whole_table(test_memory_kinds, state); }
static void test_memory_closed_by_guard_whole(void **state) { whole_table(test_memory_closed_by_guard, state); }
static void test_maps_cache_per_range_whole(void **state) { whole_table(test_maps_cache_per_range, state); }

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_page_subs_order_and_kinds),
        T(test_subpage_exact_rearm),
        T(test_access_straddling_two_pages),
        T(test_edge_pages_and_cover),
        T(test_nothing_to_guard),
        T(test_release_range_for_io),
        T(test_release_range_subpage),
        T(test_release_part_of_a_sub),
        T(test_disarm_releases_rest),
        T(test_lift_opens_only_closed_pages),
        T(test_wait_neighbours),
        T(test_open_sub),
        T(test_open_sub_interleaved),
        T(test_landed_at_arm),
        T(test_send_side_readonly),
        T(test_overlapping_guard_refused),
        T(test_rearm_limit),
        T(test_no_step),
        T(test_may_step_own_pages),
        T(test_program_time),
        T(test_program_time_monotonic),
        T(test_program_time_one_clock),
        T(test_program_time_one_clock_after_overcharge),
        T(test_foreign_fault_chained),
        T(test_sigaction_interposed),
        T(test_signal_keeps_ours),
        T(test_chain_default_kills),
        T(test_aliased_send_subs),
        T(test_two_threads),
        T(test_late_handler_after_lift),
        T(test_tail_page),
        T(test_measure_costs),
        T(test_memory_kinds),
        T(test_memory_huge_pages),
        T(test_memory_closed_by_guard),
        T(test_maps_cache_per_range),
        T(test_maps_query_fresh_range),
        T(test_memory_kinds_whole),
        T(test_memory_closed_by_guard_whole),
        T(test_maps_cache_per_range_whole),
    };
    char rearm[16];

    ps = tnbc_page_size();
    real_sigaction = (sigaction_fn)dlsym(RTLD_NEXT, "sigaction");
    Dl_info self, sa_info;
    interposed = dladdr((void *)main, &self) && dladdr((void *)sigaction, &sa_info) &&
                 strcmp(self.dli_fname, sa_info.dli_fname) == 0;
    if (!real_sigaction) {
        fprintf(stderr, "test_guard: no sigaction after ours\n");
        return 1;
    }
    /* The program's own handler, installed before the guard's. */
    memset(&prev_sa, 0, sizeof prev_sa);
    prev_sa.sa_sigaction = prev_segv;
    prev_sa.sa_flags = SA_SIGINFO;
    sigemptyset(&prev_sa.sa_mask);
    if (sigaction(SIGSEGV, &prev_sa, NULL) != 0)
        return 1;
    snprintf(rearm, sizeof rearm, "%d", REARM_MAX);
    setenv("TNBC_TRACE_REARM_MAX", rearm, 1);
    tnbc_clock_init();
    if (tnbc_guard_init() != 0 || tnbc_guard_init() != 0)   /* idempotent */
        return 1;
    real_sigaction(SIGSEGV, NULL, &ours_segv);
    real_sigaction(SIGTRAP, NULL, &ours_trap);
    if (ours_segv.sa_sigaction == prev_segv) {
        fprintf(stderr, "test_guard: tnbc_guard_init did not install its handler\n");
        return 1;
    }
    return cmocka_run_group_tests_name("guard", tests, NULL, NULL);
}
