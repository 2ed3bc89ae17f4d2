// SPDX-License-Identifier: BSD-3-Clause
/* Unit tests for core/altstack: a thread gets an alternate signal stack of
 * its own unless it has one, keeps the program's, gives its own back; and
 * a handler with SA_ONSTACK then serves a fault whose stack pointer lies in
 * protected memory (a fiber's stack), which the kernel cannot otherwise
 * deliver. */
#include "altstack.h"

#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>
#include <cmocka.h>

static stack_t current(void)
{
    stack_t s;
    assert_int_equal(sigaltstack(NULL, &s), 0);
    return s;
}

/* Sanitizers give every thread an alternate stack of their own: the tests
 * that start from none put it aside and back. */
static stack_t set_aside(void)
{
    stack_t was = current(), off = { .ss_flags = SS_DISABLE };
    assert_int_equal(sigaltstack(&off, NULL), 0);
    return was;
}

static void put_back(const stack_t *was)
{
    if (!(was->ss_flags & SS_DISABLE))
        assert_int_equal(sigaltstack(was, NULL), 0);
}

static void test_add_remove(void **state)
{
    (void)state;
    stack_t was = set_aside();
    assert_true(current().ss_flags & SS_DISABLE);
    assert_int_equal(tnbc_altstack_add(), 0);
    stack_t s = current();
    assert_false(s.ss_flags & SS_DISABLE);
    assert_true(s.ss_size >= 64 * 1024);
    assert_int_equal(tnbc_altstack_add(), 0);            /* once per thread */
    assert_ptr_equal(current().ss_sp, s.ss_sp);
    tnbc_altstack_remove();
    assert_true(current().ss_flags & SS_DISABLE);
    tnbc_altstack_remove();                               /* nothing left to do */
    put_back(&was);
}

/* The program's own alternate stack: installed, and dropped again. */
static void *programs_install(void)
{
    size_t size = 64 * 1024;
    void *mine = malloc(size);
    assert_non_null(mine);
    stack_t ss = { .ss_sp = mine, .ss_size = size, .ss_flags = 0 };
    assert_int_equal(sigaltstack(&ss, NULL), 0);
    return mine;
}

static void programs_drop(void *mine)
{
    assert_ptr_equal(current().ss_sp, mine);
    stack_t off = { .ss_flags = SS_DISABLE };
    assert_int_equal(sigaltstack(&off, NULL), 0);
    free(mine);
}

static void test_keeps_the_programs(void **state)
{
    (void)state;
    stack_t was = set_aside();
    void *mine = programs_install();
    assert_int_equal(tnbc_altstack_add(), 0);
    assert_ptr_equal(current().ss_sp, mine);
    tnbc_altstack_remove();
    programs_drop(mine);
    put_back(&was);
}

/* Replaced by the program after ours: ours goes, the program's stays. */
static void test_replaced_by_the_program(void **state)
{
    (void)state;
    stack_t was = set_aside();
    assert_int_equal(tnbc_altstack_add(), 0);
    void *mine = programs_install();
    tnbc_altstack_remove();
    programs_drop(mine);
    put_back(&was);
}

static void *in_thread(void *arg)
{
    (void)arg;
    stack_t was = set_aside(), before = current();
    int rc = tnbc_altstack_add();
    stack_t during = current();
    tnbc_altstack_remove();
    stack_t after = current();
    put_back(&was);
    return (void *)(intptr_t)((before.ss_flags & SS_DISABLE) && rc == 0 &&
                              !(during.ss_flags & SS_DISABLE) && (after.ss_flags & SS_DISABLE));
}

static void test_per_thread(void **state)
{
    (void)state;
    pthread_t t;
    void *ok = NULL;
    assert_int_equal(pthread_create(&t, NULL, in_thread, NULL), 0);
    assert_int_equal(pthread_join(t, &ok), 0);
    assert_true(ok != NULL);
}

/* A fiber whose stack's lower half is protected: its deep frame faults
 * with the stack pointer in the protected pages; the handler (on the
 * alternate stack) opens them and the fiber goes on. */
#define FIBER_STACK (256 * 1024)
static char *fiber_stack;
static ucontext_t main_ctx, fiber_ctx;
static volatile int faults;
static volatile double fiber_sum;

static void open_stack(int sig, siginfo_t *si, void *ctx)
{
    (void)sig; (void)si; (void)ctx;
    faults++;
    mprotect(fiber_stack, FIBER_STACK / 2, PROT_READ | PROT_WRITE);
}

static void __attribute__((noinline)) deep(void)
{
    volatile double big[(FIBER_STACK / 2 + 16384) / sizeof(double)];
    for (size_t i = 0; i < sizeof big / sizeof *big; i += 512)
        big[i] = (double)i;
    fiber_sum = big[512];
}

static void fiber(void)
{
    mprotect(fiber_stack, FIBER_STACK / 2, PROT_NONE);
    deep();
}

static void test_fault_on_a_protected_stack(void **state)
{
    (void)state;
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = open_stack;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    assert_int_equal(sigaction(SIGSEGV, &sa, &old), 0);
    stack_t was = set_aside();
    assert_int_equal(tnbc_altstack_add(), 0);
    fiber_stack = mmap(NULL, FIBER_STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(fiber_stack != MAP_FAILED);
    getcontext(&fiber_ctx);
    fiber_ctx.uc_stack.ss_sp = fiber_stack;
    fiber_ctx.uc_stack.ss_size = FIBER_STACK;
    fiber_ctx.uc_link = &main_ctx;
    makecontext(&fiber_ctx, fiber, 0);
    assert_int_equal(swapcontext(&main_ctx, &fiber_ctx), 0);
    assert_true(faults >= 1);
    assert_true(fiber_sum == 512.0);
    tnbc_altstack_remove();
    put_back(&was);
    sigaction(SIGSEGV, &old, NULL);
    munmap(fiber_stack, FIBER_STACK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_add_remove),
        cmocka_unit_test(test_keeps_the_programs),
        cmocka_unit_test(test_replaced_by_the_program),
        cmocka_unit_test(test_per_thread),
        cmocka_unit_test(test_fault_on_a_protected_stack),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
