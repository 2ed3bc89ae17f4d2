// SPDX-License-Identifier: BSD-3-Clause
/* Unit tests for core/range_index: the address → object map that the fault
 * handler searches. Addresses here are plain numbers (the index never
 * dereferences them). Every test leaves the index empty. */
#include "range_index.h"

#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

static struct tnbc_range_obj *new_obj(void)
{
    struct tnbc_range_obj *o = calloc(1, sizeof *o);
    assert_non_null(o);
    atomic_init(&o->pins, 0);
    return o;
}

/* Looks addr up and expects `want` (or NULL), leaving no pin behind. */
static void expect_at(uintptr_t addr, struct tnbc_range_obj *want)
{
    struct tnbc_range_obj *got = tnbc_range_lookup(addr);
    assert_ptr_equal(got, want);
    if (got) {
        assert_int_equal(atomic_load(&got->pins), 1);
        tnbc_range_unpin(got);
        assert_int_equal(atomic_load(&got->pins), 0);
    }
}

static int empty_index(void **state)
{
    (void)state;
    return tnbc_range_count() == 0 ? 0 : -1;
}

static void test_insert_lookup_boundaries(void **state)
{
    (void)state;
    struct tnbc_range_obj *a = new_obj();
    expect_at(1000, NULL);                       /* empty index */
    assert_int_equal(tnbc_range_insert(1000, 2000, a), 0);
    assert_int_equal(tnbc_range_count(), 1);
    expect_at(999, NULL);
    expect_at(1000, a);                          /* start is inside */
    expect_at(1500, a);
    expect_at(1999, a);
    expect_at(2000, NULL);                       /* end is outside */
    expect_at(0, NULL);
    expect_at(UINTPTR_MAX, NULL);
    tnbc_range_remove(a);
    assert_int_equal(tnbc_range_count(), 0);
    expect_at(1500, NULL);
    free(a);
}

static void test_empty_range_refused(void **state)
{
    (void)state;
    struct tnbc_range_obj *a = new_obj();
    assert_int_equal(tnbc_range_insert(2000, 2000, a), -1);
    assert_int_equal(tnbc_range_insert(3000, 2000, a), -1);
    assert_int_equal(tnbc_range_count(), 0);
    free(a);
}

static void test_overlap_refused(void **state)
{
    (void)state;
    struct tnbc_range_obj *a = new_obj(), *b = new_obj(), *c = new_obj(), *x = new_obj();
    assert_int_equal(tnbc_range_insert(1000, 2000, a), 0);
    assert_int_equal(tnbc_range_insert(1500, 2500, x), -1);   /* tail overlaps */
    assert_int_equal(tnbc_range_insert(500, 1001, x), -1);    /* head overlaps by one byte */
    assert_int_equal(tnbc_range_insert(1999, 2001, x), -1);
    assert_int_equal(tnbc_range_insert(1200, 1300, x), -1);   /* inside */
    assert_int_equal(tnbc_range_insert(0, 5000, x), -1);      /* around */
    assert_int_equal(tnbc_range_insert(1000, 2000, x), -1);   /* identical */
    assert_int_equal(tnbc_range_count(), 1);
    /* Adjacent ranges touch but do not overlap. */
    assert_int_equal(tnbc_range_insert(2000, 3000, b), 0);
    assert_int_equal(tnbc_range_insert(0, 1000, c), 0);
    assert_int_equal(tnbc_range_count(), 3);
    expect_at(999, c);
    expect_at(1000, a);
    expect_at(1999, a);
    expect_at(2000, b);
    expect_at(2999, b);
    expect_at(3000, NULL);
    /* A refused insert left nothing behind. */
    tnbc_range_remove(a);
    expect_at(1500, NULL);
    expect_at(1200, NULL);
    tnbc_range_remove(b);
    tnbc_range_remove(c);
    assert_int_equal(tnbc_range_count(), 0);
    free(a); free(b); free(c); free(x);
}

static void test_remove_middle_and_absent(void **state)
{
    (void)state;
    struct tnbc_range_obj *o[3] = { new_obj(), new_obj(), new_obj() };
    struct tnbc_range_obj *never = new_obj();
    for (int i = 0; i < 3; i++)
        assert_int_equal(tnbc_range_insert(100u * (i + 1), 100u * (i + 1) + 50, o[i]), 0);
    tnbc_range_remove(o[1]);
    assert_int_equal(tnbc_range_count(), 2);
    expect_at(100, o[0]);
    expect_at(210, NULL);
    expect_at(320, o[2]);
    tnbc_range_remove(never);                    /* not in the index: harmless */
    assert_int_equal(tnbc_range_count(), 2);
    tnbc_range_remove(o[1]);                     /* twice: harmless */
    assert_int_equal(tnbc_range_count(), 2);
    /* The freed slot can be reused. */
    assert_int_equal(tnbc_range_insert(200, 250, never), 0);
    expect_at(249, never);
    tnbc_range_remove(never);
    tnbc_range_remove(o[0]);
    tnbc_range_remove(o[2]);
    assert_int_equal(tnbc_range_count(), 0);
    for (int i = 0; i < 3; i++)
        free(o[i]);
    free(never);
}

/* Thousands of ranges inserted in a scrambled order (the array grows many
 * times), every one found at its ends and none in the gaps. */
static void test_many_ranges(void **state)
{
    (void)state;
    enum { N = 5000, STRIDE = 64, LEN = 40, BASE = 1 << 20 };
    struct tnbc_range_obj *objs = calloc(N, sizeof *objs);
    assert_non_null(objs);
    for (int k = 0; k < N; k++) {
        int i = (int)(((long)k * 2749) % N);     /* 2749 is prime to N: a permutation */
        assert_int_equal(tnbc_range_insert(BASE + (uintptr_t)i * STRIDE,
                                           BASE + (uintptr_t)i * STRIDE + LEN, &objs[i]), 0);
    }
    assert_int_equal(tnbc_range_count(), N);
    for (int i = 0; i < N; i++) {
        uintptr_t s = BASE + (uintptr_t)i * STRIDE;
        expect_at(s, &objs[i]);
        expect_at(s + LEN - 1, &objs[i]);
        expect_at(s + LEN, NULL);
        expect_at(s + STRIDE - 1, NULL);
    }
    for (int i = 0; i < N; i += 2)
        tnbc_range_remove(&objs[i]);
    assert_int_equal(tnbc_range_count(), N / 2);
    for (int i = 0; i < N; i++)
        expect_at(BASE + (uintptr_t)i * STRIDE + 1, (i & 1) ? &objs[i] : NULL);
    for (int i = 1; i < N; i += 2)
        tnbc_range_remove(&objs[i]);
    assert_int_equal(tnbc_range_count(), 0);
    free(objs);
}

struct visit_log {
    struct tnbc_range_obj *seen[512];
    int n;
    int pinned_ok;
};

static void visit(struct tnbc_range_obj *o, void *arg)
{
    struct visit_log *v = arg;
    if (atomic_load(&o->pins) < 1)
        v->pinned_ok = 0;
    if (v->n < 512)
        v->seen[v->n] = o;
    v->n++;
}

/* tnbc_range_each visits exactly the objects meeting [start, end), in
 * address order, pinned during the call; more than one internal batch (64). */
static void test_each_over_span(void **state)
{
    (void)state;
    enum { N = 200 };
    struct tnbc_range_obj *objs = calloc(N, sizeof *objs);
    struct visit_log v;
    assert_non_null(objs);
    for (int i = 0; i < N; i++)                  /* [i*100, i*100+50) */
        assert_int_equal(tnbc_range_insert((uintptr_t)i * 100, (uintptr_t)i * 100 + 50, &objs[i]), 0);

    memset(&v, 0, sizeof v);
    v.pinned_ok = 1;
    assert_int_equal(tnbc_range_each(0, (uintptr_t)N * 100, visit, &v), N);
    assert_int_equal(v.n, N);
    assert_true(v.pinned_ok);
    for (int i = 0; i < N; i++) {
        assert_ptr_equal(v.seen[i], &objs[i]);
        assert_int_equal(atomic_load(&objs[i].pins), 0);
    }

    /* [150, 1000): 150 is past obj 1's end, 1000 is obj 10's start. */
    memset(&v, 0, sizeof v);
    v.pinned_ok = 1;
    assert_int_equal(tnbc_range_each(150, 1000, visit, &v), 8);
    for (int i = 0; i < 8; i++)
        assert_ptr_equal(v.seen[i], &objs[i + 2]);

    /* [149, 1001) meets obj 1's last byte and obj 10's first. */
    memset(&v, 0, sizeof v);
    assert_int_equal(tnbc_range_each(149, 1001, visit, &v), 10);
    assert_ptr_equal(v.seen[0], &objs[1]);
    assert_ptr_equal(v.seen[9], &objs[10]);

    /* A gap meets nothing. */
    memset(&v, 0, sizeof v);
    assert_int_equal(tnbc_range_each(50, 100, visit, &v), 0);
    assert_int_equal(v.n, 0);

    for (int i = 0; i < N; i++)
        tnbc_range_remove(&objs[i]);
    memset(&v, 0, sizeof v);
    assert_int_equal(tnbc_range_each(0, UINTPTR_MAX, visit, &v), 0);
    free(objs);
}

struct remover {
    struct tnbc_range_obj *obj;
    atomic_int done;
};

static void *remove_thread(void *arg)
{
    struct remover *r = arg;
    tnbc_range_remove(r->obj);
    atomic_store(&r->done, 1);
    return NULL;
}

/* tnbc_range_remove returns only after the last pin is dropped: the owner
 * can free the object while a fault handler was still using it. */
static void test_remove_waits_for_pins(void **state)
{
    (void)state;
    struct tnbc_range_obj *a = new_obj();
    struct remover r = { a, 0 };
    pthread_t t;
    struct timespec pause = { 0, 50 * 1000 * 1000 };

    assert_int_equal(tnbc_range_insert(4096, 8192, a), 0);
    struct tnbc_range_obj *p1 = tnbc_range_lookup(5000), *p2 = tnbc_range_lookup(6000);
    assert_ptr_equal(p1, a);
    assert_ptr_equal(p2, a);
    assert_int_equal(atomic_load(&a->pins), 2);
    assert_int_equal(pthread_create(&t, NULL, remove_thread, &r), 0);
    nanosleep(&pause, NULL);
    assert_int_equal(atomic_load(&r.done), 0);   /* still pinned twice */
    tnbc_range_unpin(p1);
    nanosleep(&pause, NULL);
    assert_int_equal(atomic_load(&r.done), 0);   /* still pinned once */
    /* Already out of the index: new lookups miss it. */
    assert_null(tnbc_range_lookup(5000));
    tnbc_range_unpin(p2);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_int_equal(atomic_load(&r.done), 1);
    assert_int_equal(tnbc_range_count(), 0);
    free(a);
}

struct churn {
    struct tnbc_range_obj *stable;
    atomic_int stop;
    atomic_long lookups;
    long misses;
};

static void *lookup_thread(void *arg)
{
    struct churn *c = arg;
    while (!atomic_load(&c->stop)) {
        long n = atomic_load(&c->lookups);
        struct tnbc_range_obj *o = tnbc_range_lookup(1000000 + (uintptr_t)(n % 1000));
        if (o != c->stable)
            c->misses++;
        if (o)
            tnbc_range_unpin(o);
        atomic_store(&c->lookups, n + 1);
    }
    return NULL;
}

/* Lookups from another thread (a fault handler) always find a stable range
 * while the owner inserts and removes others around it, growing the array. */
static void test_concurrent_lookup_during_churn(void **state)
{
    (void)state;
    enum { ROUNDS = 300, PER = 40 };
    struct churn c = { new_obj(), 0, 0, 0 };
    struct tnbc_range_obj *tmp = calloc(PER, sizeof *tmp);
    pthread_t t;

    assert_non_null(tmp);
    assert_int_equal(tnbc_range_insert(1000000, 1001000, c.stable), 0);
    assert_int_equal(pthread_create(&t, NULL, lookup_thread, &c), 0);
    while (atomic_load(&c.lookups) == 0)
        sched_yield();
    /* At least ROUNDS rounds, and until the reader has overlapped many. */
    for (int r = 0; r < ROUNDS || atomic_load(&c.lookups) < 20000; r++) {
        for (int i = 0; i < PER; i++) {          /* half below, half above */
            uintptr_t at = (i & 1) ? 2000000 + (uintptr_t)i * 10 : 10 + (uintptr_t)i * 10;
            assert_int_equal(tnbc_range_insert(at, at + 5, &tmp[i]), 0);
        }
        for (int i = 0; i < PER; i++)
            tnbc_range_remove(&tmp[i]);
    }
    atomic_store(&c.stop, 1);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_true(atomic_load(&c.lookups) >= 20000);
    assert_int_equal(c.misses, 0);
    tnbc_range_remove(c.stable);
    assert_int_equal(atomic_load(&c.stable->pins), 0);
    assert_int_equal(tnbc_range_count(), 0);
    free(c.stable);
    free(tmp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_insert_lookup_boundaries, empty_index),
        cmocka_unit_test_teardown(test_empty_range_refused, empty_index),
        cmocka_unit_test_teardown(test_overlap_refused, empty_index),
        cmocka_unit_test_teardown(test_remove_middle_and_absent, empty_index),
        cmocka_unit_test_teardown(test_many_ranges, empty_index),
        cmocka_unit_test_teardown(test_each_over_span, empty_index),
        cmocka_unit_test_teardown(test_remove_waits_for_pins, empty_index),
        cmocka_unit_test_teardown(test_concurrent_lookup_during_churn, empty_index),
    };
    return cmocka_run_group_tests_name("range_index", tests, NULL, NULL);
}
