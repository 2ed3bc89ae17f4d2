// SPDX-License-Identifier: BSD-3-Clause
/* yield_crowded: when a rank's progress thread shares its CPUs (expected
 * values worked out by hand from the rule: the node's ranks spread evenly
 * over its CPUs, each with a progress thread). */
#include "yield.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

static void bound_to_one_core(void **state)
{
    (void)state;
    assert_true(yield_crowded(1, 64, 1));      /* rank and thread on one core */
    assert_true(yield_crowded(1, 1, 1));
}

static void unbound_with_room(void **state)
{
    (void)state;
    assert_false(yield_crowded(16, 16, 2));    /* 4 threads on 16 CPUs */
    assert_false(yield_crowded(16, 16, 8));    /* 16 on 16 */
    assert_true(yield_crowded(16, 16, 9));     /* 18 on 16 */
    assert_true(yield_crowded(2, 2, 2));       /* this VM, 2 ranks unbound */
}

static void bound_to_a_socket(void **state)
{
    (void)state;
    assert_false(yield_crowded(8, 16, 8));     /* 4 ranks per socket of 8 */
    assert_true(yield_crowded(8, 16, 16));     /* 8 ranks per socket of 8 */
}

static void nonsense_is_no(void **state)
{
    (void)state;
    assert_false(yield_crowded(0, 16, 2));
    assert_false(yield_crowded(4, 16, 0));
    assert_true(yield_crowded(4, 0, 4));       /* online unknown: taken as mine */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bound_to_one_core),
        cmocka_unit_test(unbound_with_room),
        cmocka_unit_test(bound_to_a_socket),
        cmocka_unit_test(nonsense_is_no),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
