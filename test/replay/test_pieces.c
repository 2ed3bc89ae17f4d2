// SPDX-License-Identifier: BSD-3-Clause
/* Unit tests for libreplay/pieces: how a per-source block is cut into edge
 * parts and body pieces. Checked over many random buffer geometries: the
 * parts cover the block exactly once, in order; head and tail are exactly
 * the block's bytes in the unguarded first and last page; every body
 * boundary but the block's own falls on the piece size in the receiver's
 * address space (so a piece's pages hold nothing else); no block has more
 * than PIECES_MAX body pieces; and the sender's check accepts the cut for
 * the block's size and refuses it for any other. */
#include "pieces.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#define PAGE 4096u

static size_t rnd(size_t n) { return n ? (size_t)random() % n : 0; }

/* One geometry: checks every property above; returns the body pieces. */
static int check_one(uintptr_t base, size_t span, size_t off, size_t bytes, size_t want)
{
    struct piece_cut c;
    uintptr_t lo = (base + PAGE - 1) / PAGE * PAGE, hi = (base + span) / PAGE * PAGE;
    uintptr_t a = base + off, b = a + bytes;

    pieces_cut(base, span, off, bytes, PAGE, want, &c);
    assert_int_equal(pieces_check(&c, (long)bytes), 0);
    if (lo >= hi) {
        assert_int_equal(c.head, (int)bytes);
        return 0;
    }
    /* head: bytes below lo; tail: bytes at or above hi. */
    size_t below = a < lo ? (b < lo ? b : lo) - a : 0;
    size_t above = b > hi ? b - (a > hi ? a : hi) : 0;
    assert_int_equal(c.head, (int)below);
    assert_int_equal(c.tail, (int)above);

    long body = (long)bytes - c.head - c.tail, expect = 0;
    int n = pieces_count(&c);
    assert_true(n <= PIECES_MAX);
    assert_true(body == 0 ? n == 0 : n >= 1);
    for (int k = 0; k < n; k++) {
        long po, len;
        pieces_body(&c, k, &po, &len);
        assert_int_equal(po, expect);               /* contiguous, in order */
        assert_true(len > 0 && len <= c.piece);
        uintptr_t start = a + (uintptr_t)c.head + (uintptr_t)po;
        if (k > 0)
            assert_int_equal(start % (uintptr_t)c.piece, 0);
        if (want && k > 0 && k + 1 < n)
            assert_true((size_t)len >= want);        /* never finer than asked */
        expect += len;
    }
    assert_int_equal(expect, body);
    if (body)
        assert_int_equal(c.piece % PAGE, 0);
    /* A sender whose block has another size must refuse the cut. */
    assert_int_not_equal(pieces_check(&c, (long)bytes + 1), 0);
    if (bytes)
        assert_int_not_equal(pieces_check(&c, (long)bytes - 1), 0);
    return n;
}

static void test_random_geometries(void **state)
{
    (void)state;
    srandom(7);
    for (int i = 0; i < 200000; i++) {
        uintptr_t base = 0x10000000u + rnd(3 * PAGE);
        size_t span = 1 + rnd(i % 3 ? 64 * PAGE : 4096 * PAGE);
        size_t off = rnd(span), bytes = rnd(span - off + 1);
        size_t want = i % 5 == 0 ? 0 : (1 + rnd(8)) * (i % 2 ? PAGE : 1000);
        check_one(base, span, off, bytes, want);
    }
}

static void test_one_piece_when_asked_for_none(void **state)
{
    (void)state;
    /* A 1 MiB block inside a larger buffer, want 0: the body is one piece. */
    assert_int_equal(check_one(0x100000, 8u << 20, 1u << 20, 1u << 20, 0), 1);
}

static void test_page_pieces(void **state)
{
    (void)state;
    /* A page-aligned 64 KiB body cut in pages: 16 pieces. */
    assert_int_equal(check_one(0x100000, 1u << 20, 64 * 1024, 64 * 1024, PAGE), 16);
    /* The same, unaligned: the first piece runs to the next page. */
    assert_int_equal(check_one(0x100000, 1u << 20, 64 * 1024 + 100, 64 * 1024, PAGE), 17);
}

static void test_large_block_bounded(void **state)
{
    (void)state;
    /* 1 GiB in 4 KiB pieces would be 262144 pieces: capped. */
    int n = check_one(0x100000, (size_t)1 << 31, PAGE, (size_t)1 << 30, PAGE);
    assert_true(n > PIECES_MAX / 2 && n <= PIECES_MAX);
}

static void test_check_refuses_nonsense(void **state)
{
    (void)state;
    /* Each cut as received, and the block size its sender has. */
    struct { struct piece_cut cut; long sender_bytes; } bad[] = {
        { { 1000, -1, 0, 100, 4096, 0 }, 1000 }, { { 1000, 0, -1, 100, 4096, 0 }, 1000 },
        { { 1000, 0, 0, 0, 4096, 0 }, 1000 },    { { 1000, 0, 0, 100, 0, 0 }, 1000 },
        { { 1000, 0, 0, 5000, 4096, 0 }, 1000 }, { { 1000, 600, 600, 100, 4096, 0 }, 1000 },
        { { 100000, 0, 0, 1, 1, 0 }, 100000 },   /* 100000 pieces */
        { { 999, 10, 20, 969, 4096, 0 }, 1000 }, /* another size */
        { { 1000, 0, 0, 200, 100, 0 }, 1000 },   /* first piece longer than the rest */
        { { 1000, 0, 0, 1000, 1000, 2 }, 1000 }, /* typed is 0 or 1 */
        { { 1000, 10, 0, 990, 990, 1 }, 1000 },  /* typed: no edge parts */
        { { 1000, 0, 0, 500, 500, 1 }, 1000 },   /* typed: the block whole */
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        assert_int_not_equal(pieces_check(&bad[i].cut, bad[i].sender_bytes), 0);
    struct piece_cut good = { 1000, 10, 20, 970, 4096, 0 };
    assert_int_equal(pieces_check(&good, 1000), 0);
    assert_int_equal(pieces_count(&good), 1);
    struct piece_cut whole = { 1000, 0, 0, 1000, 1000, 1 };   /* a derived receive type */
    assert_int_equal(pieces_check(&whole, 1000), 0);
    assert_int_equal(pieces_count(&whole), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_geometries),
        cmocka_unit_test(test_one_piece_when_asked_for_none),
        cmocka_unit_test(test_page_pieces),
        cmocka_unit_test(test_large_block_bounded),
        cmocka_unit_test(test_check_refuses_nonsense),
    };
    return cmocka_run_group_tests_name("pieces", tests, NULL, NULL);
}
