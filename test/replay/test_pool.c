// SPDX-License-Identifier: BSD-3-Clause
/* Unit tests for libreplay/pool: the private buffers of transformed calls
 * are reused from call to call, also when the program's sizes drift (a
 * fresh buffer costs page faults on every page: libreplay/pool.c). */
#include "pool.h"
#include "guard.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#define MIB ((size_t)1 << 20)

static void is_page_aligned(const char *p)
{
    assert_non_null(p);
    assert_int_equal((uintptr_t)p % (uintptr_t)tnbc_page_size(), 0);
}

/* The same size again: the same buffer. */
static void test_reuse(void **state)
{
    (void)state;
    char *a = pool_get(MIB);
    is_page_aligned(a);
    a[MIB - 1] = 1;           /* all of it is usable */
    pool_put(a);
    char *b = pool_get(MIB);
    assert_ptr_equal(a, b);
    pool_put(b);
}

/* Sizes that grow a little each call (u21's load balancer): the buffer
 * given back still serves the next, slightly larger request. */
static void test_drifting_sizes(void **state)
{
    (void)state;
    char *first = pool_get(3 * MIB / 2);
    pool_put(first);
    for (size_t n = 3 * MIB / 2; n < 3 * MIB / 2 + MIB / 8; n += MIB / 64) {
        char *p = pool_get(n);
        is_page_aligned(p);
        p[n - 1] = 2;
        assert_ptr_equal(p, first);
        pool_put(p);
    }
}

/* Four slots, filled with small buffers; a larger one given back replaces
 * the smallest, and a request for its size gets it; a small request does
 * not take a buffer more than twice too large. */
static void test_keeps_the_largest(void **state)
{
    (void)state;
    char *small[4], *big = pool_get(8 * MIB);
    for (int i = 0; i < 4; i++)
        small[i] = pool_get((size_t)(i + 1) * 64 * 1024);
    for (int i = 0; i < 4; i++)
        pool_put(small[i]);
    pool_put(big);
    char *again = pool_get(8 * MIB);
    assert_ptr_equal(again, big);
    pool_put(again);
    char *tiny = pool_get(4096);
    assert_ptr_not_equal(tiny, big);
    pool_put(tiny);
    char *half = pool_get(5 * MIB);       /* 8 MiB is within twice: reused */
    assert_ptr_equal(half, big);
    pool_put(half);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reuse),
        cmocka_unit_test(test_drifting_sizes),
        cmocka_unit_test(test_keeps_the_largest),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
