// SPDX-License-Identifier: BSD-3-Clause
/* Unit tests for core/guard_keys: trace guards that close pages with
 * protection keys (GUARD_KEYS) instead of mprotect.
 *
 * What must hold: first touches come out as with mprotect (order, kinds,
 * single steps on shared pages), the program's data is untouched, the
 * pages' protection never changes (read back from /proc/self/maps), their
 * keys are given again at every arm (a mapping made anew since has none)
 * and taken back when forgotten (/proc/self/smaps "ProtectionKey"), and a
 * thread or signal handler whose rights deny a key no guard holds is let
 * through. Where the CPU or kernel has no keys, every test is skipped,
 * saying so. */
#include "clock.h"
#include "guard.h"
#include "guard_keys.h"

#include <dlfcn.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include "proc_maps.h"

#define MAX_EVENTS 64

struct event { int sub, ev; };
static struct event evs[MAX_EVENTS];
static atomic_int nev;

static void hook(struct tnbc_guard *g, int sub, enum tnbc_guard_event ev,
                 enum tnbc_release_reason why, uint64_t tick)
{
    (void)g; (void)why; (void)tick;
    int i = atomic_fetch_add(&nev, 1);
    if (i < MAX_EVENTS)
        evs[i] = (struct event){ sub, (int)ev };
}

static size_t ps;
static int keys_here;
static struct sigaction ours_segv, ours_trap;
typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);
static sigaction_fn real_sigaction;      /* libc's: guard.c's own interposes */

static struct {
    char *map;
    size_t len;
    struct tnbc_submsg sub[32];
    struct tnbc_layout lay;
    struct tnbc_guard g;
} F;

static char pattern(size_t i) { return (char)(i % 251 + 1); }
static char rd(const char *p) { return *(const volatile char *)p; }
static void wr(char *p, char v) { *(volatile char *)p = v; }

static char *map_pages(size_t n)
{
    F.len = n * ps;
    F.map = mmap(NULL, F.len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(F.map != MAP_FAILED);
    for (size_t i = 0; i < F.len; i++)
        F.map[i] = pattern(i);
    return F.map;
}

/* n sub-messages of `each` bytes back to back from map + skip. */
static void arm_layout(size_t skip, int n, size_t each, unsigned flags)
{
    for (int i = 0; i < n; i++)
        F.sub[i] = (struct tnbc_submsg){ .offset = (size_t)i * each, .bytes = each, .idx = i, .peer = i };
    F.lay = (struct tnbc_layout){ .base = F.map + skip, .span = (size_t)n * each,
                                  .bytes = (size_t)n * each, .block_bytes = (long)each,
                                  .nsub = n, .sub = F.sub };
    memset(&F.g, 0, sizeof F.g);
    F.g.layout = &F.lay;
    F.g.closed_prot = PROT_NONE;
    F.g.flags = flags;
    F.g.hook = hook;
    assert_true(tnbc_guard_arm(&F.g) > 0);
}



#define RW (PROT_READ | PROT_WRITE)

/* First in every test: cmocka counts a skip() in the test itself as a
 * skip, where one in the setup function is a failed setup. */
#define NEED_KEYS(state) \
    do { \
        (void)(state); \
        if (!keys_here) \
            skip(); \
    } while (0)

static int setup(void **state)
{
    (void)state;
    if (!keys_here)
        return 0;
    /* cmocka installs its own SIGSEGV handler around every test. */
    real_sigaction(SIGSEGV, &ours_segv, NULL);
    real_sigaction(SIGTRAP, &ours_trap, NULL);
    memset(&F, 0, sizeof F);
    atomic_store(&nev, 0);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    tnbc_guard_disarm(&F.g, TNBC_REL_DONE);
    tnbc_gkeys_forget_all();
    if (F.map)
        munmap(F.map, F.len);
    F.map = NULL;
    return tnbc_guard_active() == 0 ? 0 : -1;
}

/* Three blocks of 2.5 pages at +24 B (every boundary inside a page), read
 * in the order 2, 0, 1: the events say so, the pages stay read-write for
 * the kernel, and every byte is what it was, or what was written. */
static void test_keys_order_unaligned(void **state)
{
    NEED_KEYS(state);
    size_t each = 2 * ps + ps / 2;
    char *b = map_pages(9) + 24;
    arm_layout(24, 3, each, GUARD_KEYS | GUARD_NO_STEP);
    assert_int_equal(F.g.keyed, 1);
    for (size_t p = 0; p < F.len; p += ps)
        assert_int_equal(prot_at(F.map + p), RW);
    assert_int_not_equal(key_at(b + each + ps), 0);

    assert_int_equal(rd(b + 2 * each + each / 2), pattern(24 + 2 * each + each / 2));
    wr(b + ps + 100, 'w');
    assert_int_equal(rd(b + each + ps), pattern(24 + each + ps));
    assert_int_equal(atomic_load(&nev), 3);
    assert_int_equal(evs[0].sub, 2);
    assert_int_equal(evs[0].ev, TNBC_EV_READ);
    assert_int_equal(evs[1].sub, 0);
    assert_int_equal(evs[1].ev, TNBC_EV_WRITE);
    assert_int_equal(evs[2].sub, 1);
    for (size_t i = 0; i < 3 * each; i++)
        assert_int_equal(rd(b + i), i == ps + 100 ? 'w' : pattern(24 + i));
    assert_int_equal(atomic_load(&nev), 3);     /* second touches are silent */
    tnbc_guard_disarm(&F.g, TNBC_REL_DONE);
    assert_int_equal(atomic_load(&nev), 3);
}

/* Four blocks on one page: the page is opened for one instruction at a
 * time, so each block's first touch is seen, as with mprotect. */
static void test_keys_single_step_shared_page(void **state)
{
    NEED_KEYS(state);
    size_t q = ps / 4;
    char *b = map_pages(1);
    arm_layout(0, 4, q, GUARD_KEYS);
    assert_int_equal(F.g.keyed, 1);
    assert_int_equal(rd(b + 1 * q + 5), pattern(q + 5));
    assert_int_equal(rd(b + 1 * q + 6), pattern(q + 6));
    wr(b + 3 * q + 1, 'z');
    assert_int_equal(rd(b + 0 * q), pattern(0));
    assert_int_equal(rd(b + 2 * q + q - 1), pattern(3 * q - 1));
    assert_int_equal(rd(b + 3 * q + 1), 'z');
    assert_int_equal(atomic_load(&nev), 4);
    int want[4] = { 1, 3, 0, 2 };
    for (int i = 0; i < 4; i++)
        assert_int_equal(evs[i].sub, want[i]);
    assert_int_equal(evs[1].ev, TNBC_EV_WRITE);
    assert_true(F.g.steps > 0);
}

/* More units than keys: the guard closes with mprotect, as before. */
static void test_keys_too_many_units_use_mprotect(void **state)
{
    NEED_KEYS(state);
    char *b = map_pages(20);
    arm_layout(0, 20, ps, GUARD_KEYS);
    assert_int_equal(F.g.keyed, 0);
    assert_int_equal(prot_at(b + 5 * ps), PROT_NONE);
    assert_int_equal(rd(b + 5 * ps), pattern(5 * ps));
    assert_int_equal(atomic_load(&nev), 1);
    assert_int_equal(evs[0].sub, 5);
}

/* The program frees the buffer and maps the same addresses again between
 * two calls: the second arm gives the keys again, and its touches are
 * seen. */
static void test_keys_given_again_after_remap(void **state)
{
    NEED_KEYS(state);
    char *b = map_pages(4);
    arm_layout(0, 2, 2 * ps, GUARD_KEYS);
    assert_int_equal(rd(b), pattern(0));
    assert_int_equal(rd(b + 2 * ps), pattern(2 * ps));
    tnbc_guard_disarm(&F.g, TNBC_REL_DONE);
    assert_int_equal(atomic_load(&nev), 2);

    assert_int_equal(munmap(b, F.len), 0);
    char *again = mmap(b, F.len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    assert_ptr_equal(again, b);
    assert_int_equal(key_at(b), 0);
    for (size_t i = 0; i < F.len; i++)
        b[i] = pattern(i);
    arm_layout(0, 2, 2 * ps, GUARD_KEYS);
    assert_int_equal(F.g.keyed, 1);
    assert_int_not_equal(key_at(b), 0);
    assert_int_equal(rd(b + 2 * ps + 1), pattern(2 * ps + 1));
    assert_int_equal(atomic_load(&nev), 3);
    assert_int_equal(evs[2].sub, 1);
}

/* Keys stay on the pages after the lift (the next call needs no change of
 * the mappings) and go when forgotten. */
static void test_keys_kept_then_forgotten(void **state)
{
    NEED_KEYS(state);
    char *b = map_pages(4);
    arm_layout(0, 2, 2 * ps, GUARD_KEYS);
    int k = key_at(b);
    assert_true(k > 0);
    tnbc_guard_disarm(&F.g, TNBC_REL_DONE);
    assert_int_equal(key_at(b), k);
    assert_int_equal(rd(b + 3 * ps), pattern(3 * ps));
    tnbc_gkeys_forget_all();
    assert_int_equal(key_at(b), 0);
    assert_int_equal(prot_at(b), RW);
}

/* Memory handed back to the allocator (the free wrapper) loses its keys
 * at once: it may hold anyone's data next, a signal handler's included;
 * a live range's go at its lift. */
static void test_keys_released_memory(void **state)
{
    NEED_KEYS(state);
    char *b = map_pages(8);
    arm_layout(0, 2, 2 * ps, GUARD_KEYS);
    tnbc_guard_disarm(&F.g, TNBC_REL_DONE);
    assert_true(key_at(b) > 0);
    assert_int_equal(tnbc_gkeys_kept(), 1);
    tnbc_gkeys_released(b + ps, ps, 0);
    assert_int_equal(key_at(b + ps), 0);
    assert_int_equal(tnbc_gkeys_kept(), 0);
    assert_int_equal(prot_at(b + ps), RW);

    arm_layout(0, 2, 2 * ps, GUARD_KEYS);
    assert_true(key_at(b) > 0);
    tnbc_gkeys_released(b, 4 * ps, 0);          /* freed while armed */
    assert_true(key_at(b) > 0);
    tnbc_guard_disarm(&F.g, TNBC_REL_DONE);
    assert_int_equal(key_at(b), 0);
    assert_int_equal(key_at(b + 3 * ps), 0);
    assert_int_equal(tnbc_gkeys_kept(), 0);
}

static volatile sig_atomic_t handler_read;
static char *volatile handler_at;

static void usr1(int sig)
{
    (void)sig;
    handler_read = rd(handler_at);
}

/* A signal handler runs with the kernel's default rights, which deny
 * every key but 0: its read of a kept keyed page (no guard armed) is let
 * through, and so is one of a page whose block is still closed: that is
 * the program's first touch. */
static void test_keys_signal_handler_reads(void **state)
{
    NEED_KEYS(state);
    struct sigaction sa = { .sa_handler = usr1 }, old;
    sigemptyset(&sa.sa_mask);
    assert_int_equal(sigaction(SIGUSR1, &sa, &old), 0);
    char *b = map_pages(4);
    arm_layout(0, 2, 2 * ps, GUARD_KEYS);
    handler_at = b + 2 * ps + 7;
    raise(SIGUSR1);
    assert_int_equal(handler_read, pattern(2 * ps + 7));
    assert_int_equal(atomic_load(&nev), 1);
    assert_int_equal(evs[0].sub, 1);
    tnbc_guard_disarm(&F.g, TNBC_REL_DONE);
    handler_at = b + 5;
    handler_read = 0;
    raise(SIGUSR1);
    assert_int_equal(handler_read, pattern(5));
    sigaction(SIGUSR1, &old, NULL);
}

static void *read_byte(void *arg)
{
    return (void *)(intptr_t)rd(arg);
}

/* Run last: it ends the use of keys in this process. Only the arming
 * thread's rights deny the keys, so once the program starts a thread of
 * its own (the creation wrapper says so, as here): the thread, which
 * inherits its creator's rights, has its first touch of a closed block
 * seen; the live range loses its keys at the lift; later guards close
 * with mprotect, which every thread sees. */
static void test_keys_off_once_the_program_starts_threads(void **state)
{
    NEED_KEYS(state);
    char *b = map_pages(4);
    pthread_t t;
    void *got;
    arm_layout(0, 2, 2 * ps, GUARD_KEYS);
    assert_int_equal(F.g.keyed, 1);
    tnbc_gkeys_thread_created();
    assert_int_equal(pthread_create(&t, NULL, read_byte, b + 2 * ps + 3), 0);
    assert_int_equal(pthread_join(t, &got), 0);
    assert_int_equal((char)(intptr_t)got, pattern(2 * ps + 3));
    assert_int_equal(atomic_load(&nev), 1);
    assert_int_equal(evs[0].sub, 1);
    tnbc_guard_disarm(&F.g, TNBC_REL_DONE);
    assert_int_equal(key_at(b), 0);
    assert_int_equal(tnbc_gkeys_kept(), 0);

    arm_layout(0, 2, 2 * ps, GUARD_KEYS);
    assert_int_equal(F.g.keyed, 0);
    assert_int_equal(prot_at(b), PROT_NONE);
    assert_int_equal(pthread_create(&t, NULL, read_byte, b + 1), 0);
    assert_int_equal(pthread_join(t, &got), 0);
    assert_int_equal((char)(intptr_t)got, pattern(1));
    assert_int_equal(atomic_load(&nev), 3);       /* the lift released sub 0 before */
    assert_int_equal(evs[2].sub, 0);
    assert_int_equal(evs[2].ev, TNBC_EV_READ);
    tnbc_guard_disarm(&F.g, TNBC_REL_DONE);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_keys_order_unaligned),
        T(test_keys_single_step_shared_page),
        T(test_keys_too_many_units_use_mprotect),
        T(test_keys_given_again_after_remap),
        T(test_keys_kept_then_forgotten),
        T(test_keys_released_memory),
        T(test_keys_signal_handler_reads),
        T(test_keys_off_once_the_program_starts_threads),      /* last */
    };
    ps = tnbc_page_size();
    setenv("TNBC_TRACE_KEYS", "15", 1);
    tnbc_gkeys_reserve();          /* before any thread, as the trace does */
    tnbc_clock_init();
    if (tnbc_guard_init() != 0)
        return 1;
    real_sigaction = (sigaction_fn)dlsym(RTLD_NEXT, "sigaction");
    if (!real_sigaction)
        return 1;
    real_sigaction(SIGSEGV, NULL, &ours_segv);
    real_sigaction(SIGTRAP, NULL, &ours_trap);
    keys_here = tnbc_gkeys_usable();
    if (!keys_here)
        print_message("# no protection keys here (CPU, kernel or build): every test skipped\n");
    return cmocka_run_group_tests(tests, NULL, NULL);
}
