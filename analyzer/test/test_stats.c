// SPDX-License-Identifier: BSD-3-Clause
/*
 * an_mann_whitney_z against values worked by hand from the textbook
 * definition (U counts pairs with x < y, ties 1/2; mean nx*ny/2; variance
 * nx*ny*(nx+ny+1)/12; continuity correction 1/2), e.g. x = {1,2,3},
 * y = {4,5,6}: U = 9, z = (9 - 4.5 - 0.5) / sqrt(5.25) = 1.74574 (one-sided
 * p = 0.0404, as scipy.stats.mannwhitneyu(..., alternative='less',
 * method='asymptotic', use_continuity=True) reports).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "analyzer.h"

static void separated_samples(void **state)
{
    (void)state;
    const double x[] = { 1, 2, 3 }, y[] = { 4, 5, 6 };
    assert_float_equal(an_mann_whitney_z(x, 3, y, 3), 1.745743, 1e-5);
    /* The other way round: x tends to be larger, z is negative. */
    assert_float_equal(an_mann_whitney_z(y, 3, x, 3), -2.182179, 1e-5);
}

static void ties_count_half(void **state)
{
    (void)state;
    const double x[] = { 1, 2 }, y[] = { 2, 3 };
    /* U = 1 + 1 + 0.5 + 1 = 3.5; z = (3.5 - 2 - 0.5) / sqrt(20 / 12) */
    assert_float_equal(an_mann_whitney_z(x, 2, y, 2), 0.774597, 1e-5);
}

/* Ten against ten, separated: z = (100 - 50 - 0.5) / sqrt(175) = 3.74185,
 * past the 2.326 that keeps a tnbc auto site on. */
static void larger_samples(void **state)
{
    (void)state;
    double x[10], y[10];
    for (int i = 0; i < 10; i++) {
        x[i] = 9 - i;       /* order does not matter */
        y[i] = 10 + i;
    }
    double z = an_mann_whitney_z(x, 10, y, 10);
    assert_float_equal(z, 3.741848, 1e-5);
    assert_true(z >= 2.326);
}

static void empty_sample_is_no_evidence(void **state)
{
    (void)state;
    const double x[] = { 1 };
    assert_float_equal(an_mann_whitney_z(x, 1, x, 0), 0, 0);
    assert_float_equal(an_mann_whitney_z(x, 0, x, 1), 0, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(separated_samples),
        cmocka_unit_test(ties_count_half),
        cmocka_unit_test(larger_samples),
        cmocka_unit_test(empty_sample_is_no_evidence),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
