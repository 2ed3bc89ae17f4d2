// SPDX-License-Identifier: BSD-3-Clause
/*
 * an_spans_add / an_spans_sort / an_spans_within on spans worked by hand:
 * the ticks inside calls of one rank that began and ended between two
 * instants, each call counted once however often it was added (tnbc
 * auto's learning calls each keep the collectives after them).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "analyzer.h"

/* Rank 0: calls at [100, 150] and [200, 260]; rank 1: [120, 300]. */
static void add_three(struct an_trace *t)
{
    assert_int_equal(an_spans_add(t, 0, 200, 260), 0);
    assert_int_equal(an_spans_add(t, 1, 120, 300), 0);
    assert_int_equal(an_spans_add(t, 0, 100, 150), 0);
}

static void within_counts_whole_calls_of_the_rank(void **state)
{
    (void)state;
    struct an_trace t = { 0 };
    add_three(&t);
    an_spans_sort(&t);
    assert_int_equal(an_spans_within(&t, 0, 90, 270), 50 + 60);
    assert_int_equal(an_spans_within(&t, 0, 90, 250), 50);      /* the second ends after */
    assert_int_equal(an_spans_within(&t, 0, 110, 270), 60);     /* the first began before */
    assert_int_equal(an_spans_within(&t, 1, 0, 1000), 180);
    assert_int_equal(an_spans_within(&t, 2, 0, 1000), 0);
    assert_int_equal(an_spans_within(&t, 0, 270, 90), 0);       /* an empty stretch */
    an_spans_free(&t);
    assert_null(t.spans);
    assert_int_equal(t.nspans, 0);
}

static void repeats_count_once(void **state)
{
    (void)state;
    struct an_trace t = { 0 };
    add_three(&t);
    add_three(&t);
    assert_int_equal(an_spans_add(&t, 0, 100, 150), 0);
    an_spans_sort(&t);
    assert_int_equal(t.nspans, 3);
    assert_int_equal(an_spans_within(&t, 0, 90, 270), 110);
    assert_int_equal(an_spans_within(&t, 1, 0, 1000), 180);
    an_spans_free(&t);
}

/* Past the first allocation (16) and a doubling: every span kept. */
static void grows(void **state)
{
    (void)state;
    struct an_trace t = { 0 };
    for (int i = 0; i < 100; i++)
        assert_int_equal(an_spans_add(&t, 0, 10 * i, 10 * i + 3), 0);
    an_spans_sort(&t);
    assert_int_equal(t.nspans, 100);
    assert_int_equal(an_spans_within(&t, 0, 0, 1000), 300);
    assert_int_equal(an_spans_within(&t, 0, 5, 95), 9 * 3);     /* calls 1..9: [90, 93] ends in it */
    an_spans_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(within_counts_whole_calls_of_the_rank),
        cmocka_unit_test(repeats_count_once),
        cmocka_unit_test(grows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
