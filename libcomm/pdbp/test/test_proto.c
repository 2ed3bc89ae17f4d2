// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_proto.c - MESP encoding round trips, and rejection of malformed
 * messages: hand-made bad ones, then fuzz-style random bytes and random
 * mutations of valid messages (run under ASan to catch any overread).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../proto.h"

static void roundtrip_control(void **st)
{
    (void)st;
    uint8_t b[PDBP_CTRL_MAX];
    struct pdbp_msg m;
    const char *why = NULL;

    struct pdbp_urmsg ur = { .reqid = 7, .op = PDBP_UR_LOOKUP, .host = 3, .name = "sink" };
    size_t n = pdbp_enc_ur(b, &ur);
    assert_int_equal(pdbp_msg_parse(b, n, &m, &why), 0);
    assert_int_equal(m.type, PDBP_URMSG);
    assert_int_equal(m.u.ur.reqid, 7);
    assert_int_equal(m.u.ur.host, 3);
    assert_string_equal(m.u.ur.name, "sink");

    struct pdbp_damsg da = { .reqid = 9, .op = PDBP_DA_ANSWER, .host = 1,
                             .status = -5, .value = 0x10002 };
    n = pdbp_enc_da(b, &da);
    assert_int_equal(pdbp_msg_parse(b, n, &m, &why), 0);
    assert_int_equal(m.u.da.status, -5);
    assert_int_equal(m.u.da.value, 0x10002);

    struct pdbp_hinfomsg hi = { .host = 2, .nhosts = 4, .block_size = 262144,
                                .max_blocks = 99, .init_real = 4, .row_cap = 32,
                                .hostname = "node2" };
    n = pdbp_enc_hinfo(b, &hi);
    assert_int_equal(pdbp_msg_parse(b, n, &m, &why), 0);
    assert_int_equal(m.u.hi.block_size, 262144);
    assert_int_equal(m.u.hi.row_cap, 32);
    assert_string_equal(m.u.hi.hostname, "node2");

    struct pdbp_mbinfomsg mb = { .op = PDBP_MB_BIND, .host = 1, .gp = 65537,
                                 .pipe = 3, .reqid = 11, .name = "gp" };
    n = pdbp_enc_mbinfo(b, &mb);
    assert_int_equal(pdbp_msg_parse(b, n, &m, &why), 0);
    assert_int_equal(m.u.mb.gp, 65537);
    assert_int_equal(m.u.mb.pipe, 3);

    struct pdbp_bpmsg bp = { .op = PDBP_BP_CREDIT, .host = 2, .credits = 5, .real = 12 };
    n = pdbp_enc_bp(b, &bp);
    assert_int_equal(pdbp_msg_parse(b, n, &m, &why), 0);
    assert_int_equal(m.u.bp.credits, 5);
    assert_true(n <= PDBP_CTRL_MAX);
}

static size_t make_remote(uint8_t *blk, int nrec)
{
    size_t used = pdbp_remote_begin(blk, 1, 42);
    for (int i = 0; i < nrec; i++) {
        char payload[40];
        memset(payload, 'a' + i, sizeof(payload));
        used = pdbp_remote_append(blk, used, 0x10000 + i, 0x20000 + i, payload,
                                  (uint32_t)(10 + i));
    }
    pdbp_remote_end(blk, used, (uint16_t)nrec);
    return used;
}

static void roundtrip_data(void **st)
{
    (void)st;
    uint8_t blk[4096];
    struct pdbp_msg m;
    const char *why = NULL;
    size_t n = make_remote(blk, 3);
    assert_int_equal(pdbp_msg_parse(blk, n, &m, &why), 0);
    assert_int_equal(m.type, PDBP_REMOTEMSG);
    assert_int_equal(m.u.remote.nrec, 3);
    assert_int_equal(m.u.remote.seq, 42);
    uint32_t off = 0;
    struct pdbp_record r;
    for (int i = 0; i < 3; i++) {
        assert_int_equal(pdbp_remote_next(&m, &off, &r), 1);
        assert_int_equal(r.src, 0x10000 + i);
        assert_int_equal(r.dst, 0x20000 + i);
        assert_int_equal(r.len, 10 + i);
        assert_int_equal(r.data[0], 'a' + i);
    }
    assert_int_equal(pdbp_remote_next(&m, &off, &r), 0);

    n = pdbp_enc_local(blk, 5, 6, "hello", 5);
    assert_int_equal(pdbp_msg_parse(blk, n, &m, &why), 0);
    assert_int_equal(m.type, PDBP_LOCALMSG);
    assert_int_equal(m.u.local.len, 5);
    assert_memory_equal(m.u.local.data, "hello", 5);

    /* an empty RemoteMsg is well formed */
    n = make_remote(blk, 0);
    assert_int_equal(pdbp_msg_parse(blk, n, &m, &why), 0);
}

/* Each bad message must be refused, with a reason. */
static void expect_bad(const uint8_t *b, size_t n, const char *reason_part)
{
    struct pdbp_msg m;
    const char *why = NULL;
    assert_int_equal(pdbp_msg_parse(b, n, &m, &why), -1);
    assert_non_null(why);
    if (reason_part && !strstr(why, reason_part))
        fail_msg("reason '%s' does not mention '%s'", why, reason_part);
}

static void rejects_bad(void **st)
{
    (void)st;
    uint8_t b[4096], c[4096];
    struct pdbp_damsg da = { .reqid = 1, .op = PDBP_DA_ANSWER };
    size_t n = pdbp_enc_da(b, &da);

    expect_bad(b, 0, "shorter");
    expect_bad(b, 7, "shorter");
    memcpy(c, b, n); c[0] = 0x00; expect_bad(c, n, "magic");
    memcpy(c, b, n); c[1] = PDBP_VERSION + 1; expect_bad(c, n, "version");
    memcpy(c, b, n); c[2] = 99; expect_bad(c, n, "type");
    memcpy(c, b, n); c[3] = 1; expect_bad(c, n, "flags");
    memcpy(c, b, n); c[4] = 200; expect_bad(c, n, "length");
    expect_bad(b, n - 1, "length");
    memcpy(c, b, n); c[n] = 0; expect_bad(c, n + 1, "trailing");
    memcpy(c, b, n); c[4] = 15; expect_bad(c, n - 1, "wrong length");
    memcpy(c, b, n); c[PDBP_HDR_LEN + 4] = 77; expect_bad(c, n, "operation");

    struct pdbp_urmsg ur = { .reqid = 1, .op = PDBP_UR_LOOKUP, .name = "x" };
    n = pdbp_enc_ur(b, &ur);
    memset(b + PDBP_HDR_LEN + 8, 'z', 48);        /* no NUL in the name */
    expect_bad(b, n, "name");

    struct pdbp_hinfomsg hi = { .host = 4, .nhosts = 4 };
    n = pdbp_enc_hinfo(b, &hi);
    expect_bad(b, n, "range");

    /* RemoteMsg: wrong count, record overrunning, inner header wrong */
    n = make_remote(b, 2);
    memcpy(c, b, n); c[PDBP_HDR_LEN + 2] = 3; expect_bad(c, n, "count");
    size_t rec0 = PDBP_HDR_LEN + PDBP_REMOTE_FIXED;
    memcpy(c, b, n); c[rec0 + 4] = 0xff; expect_bad(c, n, NULL);
    memcpy(c, b, n); c[rec0 + 2] = PDBP_DAMSG; expect_bad(c, n, "UDataMsg");
    memcpy(c, b, n); c[rec0 + PDBP_HDR_LEN + 3] = 0x80; expect_bad(c, n, "negative");
    memcpy(c, b, n); c[rec0 + 3] = 0; expect_bad(c, n, "no route");    /* first record */
    memcpy(c, b, n); c[rec0 + 3] = 0x03; expect_bad(c, n, "flags");
    memcpy(c, b, n); c[rec0] = 0x00; expect_bad(c, n, "magic");
    expect_bad(b, n - 3, NULL);                    /* cut in the middle */
}

/* Records with the route of the record before them carry none: 8 bytes of
 * overhead instead of 16; a change of route carries it again. */
static void short_records(void **st)
{
    (void)st;
    uint8_t blk[4096];
    size_t used = pdbp_remote_begin(blk, 1, 7);
    static const int32_t src[] = { 0x10001, 0x10001, 0x10001, 0x10002, 0x10002 };
    static const int32_t dst[] = { 0x20005, 0x20005, 0x20005, 0x20005, 0x20005 };
    for (int i = 0; i < 5; i++) {
        int route = i == 0 || src[i] != src[i - 1] || dst[i] != dst[i - 1];
        size_t end = pdbp_remote_record(blk, used, src[i], dst[i], 3, route);
        assert_int_equal(end - used, PDBP_HDR_LEN + (route ? PDBP_ROUTE_LEN : 0) + 3);
        memset(blk + end - 3, '0' + i, 3);
        used = end;
    }
    pdbp_remote_end(blk, used, 5);
    struct pdbp_msg m;
    const char *why = NULL;
    assert_int_equal(pdbp_msg_parse(blk, used, &m, &why), 0);
    uint32_t off = 0;
    struct pdbp_record r;
    for (int i = 0; i < 5; i++) {
        assert_int_equal(pdbp_remote_next(&m, &off, &r), 1);
        assert_int_equal(r.src, src[i]);
        assert_int_equal(r.dst, dst[i]);
        assert_int_equal(r.len, 3);
        assert_memory_equal(r.data, i == 0 ? "000" : i == 1 ? "111" : i == 2 ? "222" :
                                    i == 3 ? "333" : "444", 3);
    }
    assert_int_equal(pdbp_remote_next(&m, &off, &r), 0);
}

static uint64_t rng = 88172645463325252ull;
static uint32_t xrand(void)
{
    rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
    return (uint32_t)rng;
}

/* A parse that succeeds must only describe bytes inside the buffer. */
static void check_parsed_inside(const uint8_t *b, size_t n, const struct pdbp_msg *m)
{
    if (m->type == PDBP_REMOTEMSG) {
        uint32_t off = 0, k = 0;
        struct pdbp_record r;
        while (pdbp_remote_next(m, &off, &r)) {
            assert_true(r.data >= b && r.data + r.len <= b + n);
            k++;
        }
        assert_int_equal(k, m->u.remote.nrec);
    } else if (m->type == PDBP_LOCALMSG) {
        assert_true(m->u.local.data + m->u.local.len <= b + n);
    }
}

static void fuzz_random_bytes(void **st)
{
    (void)st;
    size_t accepted = 0;
    for (int it = 0; it < 200000; it++) {
        size_t n = xrand() % 96;
        uint8_t *b = malloc(n ? n : 1);   /* exact size: ASan sees overreads */
        for (size_t i = 0; i < n; i++)
            b[i] = (uint8_t)xrand();
        if (n >= 4 && (xrand() & 1)) {    /* often a plausible header */
            b[0] = PDBP_MAGIC; b[1] = PDBP_VERSION; b[3] = 0;
        }
        struct pdbp_msg m;
        const char *why = NULL;
        if (pdbp_msg_parse(b, n, &m, &why) == 0) {
            accepted++;
            check_parsed_inside(b, n, &m);
        } else {
            assert_non_null(why);
        }
        free(b);
    }
    /* random bytes almost never form a message; the test is for crashes */
    assert_true(accepted < 200000 / 10);
}

static void fuzz_mutations(void **st)
{
    (void)st;
    uint8_t bases[2][512] = { { 0 } };
    size_t bns[2] = { make_remote(bases[0], 4), 0 };
    /* the second: records sharing a route (no route of their own) */
    size_t u = pdbp_remote_begin(bases[1], 1, 9);
    for (int i = 0; i < 4; i++)
        u = pdbp_remote_record(bases[1], u, 0x10000, 0x20000 + (i == 3), (uint32_t)(5 + i),
                               i == 0 || i == 3);
    pdbp_remote_end(bases[1], u, 4);
    bns[1] = u;
    int rejected = 0;
    for (int it = 0; it < 100000; it++) {
        const uint8_t *base = bases[it & 1];
        size_t bn = bns[it & 1];
        size_t n = bn;
        if (xrand() % 4 == 0)
            n = xrand() % (bn + 8);       /* truncated or padded */
        uint8_t *b = malloc(n ? n : 1);
        memcpy(b, base, n < bn ? n : bn);
        for (size_t i = bn; i < n; i++)
            b[i] = (uint8_t)xrand();
        int flips = 1 + xrand() % 4;
        for (int f = 0; f < flips && n; f++)
            b[xrand() % n] ^= (uint8_t)(1u << (xrand() % 8));
        struct pdbp_msg m;
        const char *why = NULL;
        if (pdbp_msg_parse(b, n, &m, &why) == 0)
            check_parsed_inside(b, n, &m);
        else
            rejected++;
        free(b);
    }
    assert_true(rejected > 50000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(roundtrip_control),
        cmocka_unit_test(roundtrip_data),
        cmocka_unit_test(rejects_bad),
        cmocka_unit_test(short_records),
        cmocka_unit_test(fuzz_random_bytes),
        cmocka_unit_test(fuzz_mutations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
