// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_pool.c - the dynamic double buffer pool: the threshold algorithm's
 * numbers (DF, SU, RSR, m = (RSR-1)*curSize), ring order across growth,
 * the block limit, a full sub-pool (back-pressure) and in-order freeing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "../pool.h"

static void threshold_numbers(void **st)
{
    (void)st;
    struct pdbp_grow g;
    /* real 4 of 16, 3 used: DF .25, SU .75, RSR 3, m = 2*4 = 8 */
    assert_int_equal(pdbp_threshold(4, 16, 3, 0.5, &g), 8);
    assert_float_equal(g.df, 0.25, 1e-12);
    assert_float_equal(g.su, 0.75, 1e-12);
    assert_float_equal(g.rsr, 3.0, 1e-12);
    assert_float_equal(g.m, 8.0, 1e-12);
    /* real 12: m = 2*12 = 24, capped by the 4 virtual elements left */
    assert_int_equal(pdbp_threshold(12, 16, 9, 0.5, &g), 4);
    assert_float_equal(g.m, 24.0, 1e-12);
    /* SU = .5 is not above the threshold .5 */
    assert_int_equal(pdbp_threshold(4, 16, 2, 0.5, &g), 0);
    assert_float_equal(g.su, 0.5, 1e-12);
    /* SU .25 > .2 but RSR 1/3 < 1: m negative, no growth */
    assert_int_equal(pdbp_threshold(4, 16, 1, 0.2, &g), 0);
    assert_true(g.m < 0);
    /* DF = 1: nothing to grow into */
    assert_int_equal(pdbp_threshold(16, 16, 15, 0.5, &g), 0);
    assert_float_equal(g.df, 1.0, 1e-12);
    /* fractional m rounds up: RSR 5/3, m = 8*2/3 = 5.33 -> 6 */
    assert_int_equal(pdbp_threshold(8, 32, 5, 0.5, &g), 6);
    assert_float_equal(g.m, 16.0 / 3.0, 1e-12);
    /* a higher threshold keeps the same load from growing */
    assert_int_equal(pdbp_threshold(8, 32, 5, 0.7, &g), 0);
}

static void grow_keeps_ring_order(void **st)
{
    (void)st;
    struct pdbp_umb u;
    struct pdbp_row r;
    assert_int_equal(pdbp_umb_init(&u, 64, 100, 0), 0);
    assert_int_equal(pdbp_row_init(&r, 16, 4, &u), 0);
    assert_int_equal(u.nblocks, 4);
    for (int i = 0; i < 3; i++)
        assert_int_equal(pdbp_row_acquire(&r, &u, 0.5), i);
    /* recv at the CRE with 3 of 4 used: grows by 8 */
    assert_int_equal(pdbp_row_acquire(&r, &u, 0.5), 3);
    assert_true(r.last.checked);
    assert_int_equal(r.last.added, 8);
    assert_int_equal(r.real, 12);
    assert_int_equal(u.nblocks, 12);
    assert_int_equal(r.grows, 1);
    /* the next element is the first new one, not element 0 */
    assert_int_equal(pdbp_row_acquire(&r, &u, 0.5), 4);
    /* consume 0..4 in order; elements come back in ring order */
    for (uint32_t i = 0; i < 5; i++)
        assert_int_equal(pdbp_row_done(&r, i), 1);
    assert_int_equal(r.used, 0);
    for (int i = 5; i < 12; i++)
        assert_int_equal(pdbp_row_acquire(&r, &u, 0.5), i);
    /* the CRE check at 11 saw used = 6 of 12: SU .5, no growth; wraps */
    assert_int_equal(r.real, 12);
    assert_int_equal(pdbp_row_acquire(&r, &u, 0.5), 0);
    pdbp_row_destroy(&r);
    pdbp_umb_destroy(&u);
}

static void limit_and_backpressure(void **st)
{
    (void)st;
    struct pdbp_umb u;
    struct pdbp_row r;
    assert_int_equal(pdbp_umb_init(&u, 64, 6, 3), 0);
    assert_int_equal(pdbp_row_init(&r, 16, 4, &u), 0);
    for (int i = 0; i < 4; i++)
        assert_true(pdbp_row_acquire(&r, &u, 0.5) >= 0);
    /* wanted 8, only 2 blocks under the limit */
    assert_int_equal(r.last.wanted, 8);
    assert_int_equal(r.last.added, 2);
    assert_int_equal(u.limit_hits, 1);
    assert_int_equal(r.real, 6);
    assert_int_equal(pdbp_row_acquire(&r, &u, 0.5), 4);
    assert_int_equal(pdbp_row_acquire(&r, &u, 0.5), 5);
    /* full: the caller must wait (back-pressure), nothing is overwritten */
    assert_int_equal(pdbp_row_acquire(&r, &u, 0.5), -1);
    assert_int_equal(pdbp_row_done(&r, 0), 1);
    assert_int_equal(pdbp_row_acquire(&r, &u, 0.5), 0);
    /* a row cannot even start when the limit is below its initial size */
    struct pdbp_row r2;
    assert_int_equal(pdbp_row_init(&r2, 16, 4, &u), -1);
    pdbp_row_destroy(&r2);
    pdbp_row_destroy(&r);
    pdbp_umb_destroy(&u);
}

static void out_of_order_done(void **st)
{
    (void)st;
    struct pdbp_umb u;
    struct pdbp_row r;
    assert_int_equal(pdbp_umb_init(&u, 64, 10, 0), 0);
    assert_int_equal(pdbp_row_init(&r, 4, 4, &u), 0);
    for (int i = 0; i < 3; i++)
        pdbp_row_acquire(&r, &u, 0.9);
    assert_int_equal(pdbp_row_done(&r, 1), 0);  /* head 0 still held */
    assert_int_equal(pdbp_row_done(&r, 2), 0);
    assert_int_equal(pdbp_row_done(&r, 0), 3);  /* all three freed */
    assert_int_equal(r.used, 0);
    assert_int_equal(r.send, 3);
    pdbp_row_destroy(&r);
    pdbp_umb_destroy(&u);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(threshold_numbers),
        cmocka_unit_test(grow_keeps_ring_order),
        cmocka_unit_test(limit_and_backpressure),
        cmocka_unit_test(out_of_order_done),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
