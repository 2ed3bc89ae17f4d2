// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_proto.c - host unit tests for the code the kernel module shares with
 * user space (kmod/dlmc/dlmc_proto.h: checksum, frame validation, window
 * arithmetic) and for the library's address helpers.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "../../../kmod/dlmc/dlmc_proto.h"
#include "../dlmc.h"

/* A DATA frame with payload; returns its length. */
static size_t make_frame(uint8_t *f, const struct dlmc_info *in)
{
	uint8_t *payload = f + DLMC_HDR_LEN;

	for (unsigned int i = 0; i < in->frag_len; i++)
		payload[i] = (uint8_t)(i * 31 + 7);
	dlmc_hdr_encode((struct dlmc_hdr *)f, in,
			dlmc_csum_add(0, payload, in->frag_len));
	return DLMC_HDR_LEN + in->frag_len;
}

static const struct dlmc_info data0 = {
	.type = DLMC_T_DATA, .flags = DLMC_F_ACKREQ, .dst_ep = 7, .src_ep = 3,
	.seq = 0xfffffffe, .tag = 42, .msg_len = 5000, .frag_off = 1460,
	.frag_len = 1001, .epoch = 0xbeef,
};

static void test_header_size(void **s)
{
	(void)s;
	assert_int_equal(DLMC_HDR_LEN, 40);
	assert_int_equal(offsetof(struct dlmc_hdr, sack) % 8, 0);
	assert_int_equal(offsetof(struct dlmc_hdr, csum) % 4, 0);
}

static void test_roundtrip(void **s)
{
	uint8_t f[2048];
	struct dlmc_info out;
	size_t len = make_frame(f, &data0);

	(void)s;
	assert_int_equal(dlmc_hdr_decode(f, len, &out), DLMC_OK);
	assert_int_equal(out.seq, data0.seq);
	assert_int_equal(out.tag, 42);
	assert_int_equal(out.msg_len, 5000);
	assert_int_equal(out.frag_off, 1460);
	assert_int_equal(out.frag_len, 1001);
	assert_int_equal(out.dst_ep, 7);
	assert_int_equal(out.src_ep, 3);
	assert_int_equal(out.epoch, 0xbeef);
	/* Ethernet padding after the payload is allowed. */
	assert_int_equal(dlmc_hdr_decode(f, len + 20, &out), DLMC_OK);
}

/* Any single damaged byte, header or payload, is caught. */
static void test_every_byte_flip_detected(void **s)
{
	uint8_t f[2048];
	struct dlmc_info out;
	size_t len = make_frame(f, &data0);

	(void)s;
	for (size_t i = 0; i < len; i++) {
		for (int bit = 0; bit < 8; bit += 3) {
			f[i] ^= (uint8_t)(1 << bit);
			assert_int_not_equal(dlmc_hdr_decode(f, len, &out), DLMC_OK);
			f[i] ^= (uint8_t)(1 << bit);
		}
	}
	assert_int_equal(dlmc_hdr_decode(f, len, &out), DLMC_OK);
}

static void test_malformed(void **s)
{
	uint8_t f[2048];
	struct dlmc_info out, in;
	size_t len;

	(void)s;
	len = make_frame(f, &data0);
	assert_int_equal(dlmc_hdr_decode(f, DLMC_HDR_LEN - 1, &out), DLMC_E_SHORT);
	assert_int_equal(dlmc_hdr_decode(f, len - 1, &out), DLMC_E_SHORT);
	f[0] = 9;
	assert_int_equal(dlmc_hdr_decode(f, len, &out), DLMC_E_VERSION);
	make_frame(f, &data0);
	f[1] = 77;
	assert_int_equal(dlmc_hdr_decode(f, len, &out), DLMC_E_TYPE);

	in = data0;
	in.flags = 0x80;
	len = make_frame(f, &in);
	assert_int_equal(dlmc_hdr_decode(f, len, &out), DLMC_E_FLAGS);

	in = data0;
	in.frag_off = 4500;	/* 4500 + 1001 > 5000 */
	len = make_frame(f, &in);
	assert_int_equal(dlmc_hdr_decode(f, len, &out), DLMC_E_LEN);

	in = data0;
	in.frag_off = 0xffffff00u;	/* would wrap in 32 bits */
	in.msg_len = 0xffffffffu;
	len = make_frame(f, &in);
	assert_int_equal(dlmc_hdr_decode(f, len, &out), DLMC_E_LEN);

	in = data0;
	in.frag_len = 0;	/* empty fragment of a non-empty message */
	len = make_frame(f, &in);
	assert_int_equal(dlmc_hdr_decode(f, len, &out), DLMC_E_LEN);

	in = (struct dlmc_info){ .type = DLMC_T_ACK, .frag_len = 4 };
	len = make_frame(f, &in);
	assert_int_equal(dlmc_hdr_decode(f, len, &out), DLMC_E_LEN);

	in = (struct dlmc_info){ .type = DLMC_T_DATA };	/* empty message: fine */
	len = make_frame(f, &in);
	assert_int_equal(dlmc_hdr_decode(f, len, &out), DLMC_OK);
}

static void test_csum_split(void **s)
{
	uint8_t buf[103];

	(void)s;
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 13 + 1);
	/* Sums over pieces split at multiples of 4 add up. */
	assert_int_equal(dlmc_csum_fold(dlmc_csum_add(0, buf, sizeof(buf))),
			 dlmc_csum_fold(dlmc_csum_add(dlmc_csum_add(0, buf, 40),
						      buf + 40, 63)));
	assert_int_equal(dlmc_csum_fold(0x1ffffffffULL), 1);
}

static void test_frag_max(void **s)
{
	(void)s;
	assert_int_equal(dlmc_frag_max(1500), 1460);
	assert_int_equal(dlmc_frag_max(40), 0);
	assert_int_equal(dlmc_frag_max(65535), 65495);
	assert_int_equal(dlmc_frag_max(200000), 0xffff);
}

static void test_txwin_basic(void **s)
{
	struct dlmc_txwin w = { .una = 0xfffffff0u, .nxt = 0xfffffff0u };
	u64 newly;

	(void)s;
	for (int i = 0; i < DLMC_WINDOW; i++)
		w.nxt++;
	assert_int_equal(dlmc_txwin_space(&w), 0);
	/* Cumulative ACK of 3 frames plus selective ACK of cum+2 and cum+4. */
	assert_int_equal(dlmc_txwin_ack(&w, 0xfffffff3u, 0x14, &newly), 3);
	assert_int_equal(newly, 0x7 | (0x14ull << 3));
	assert_int_equal(w.una, 0xfffffff3u);
	assert_true(dlmc_txwin_is_acked(&w, 0xfffffff5u));
	assert_false(dlmc_txwin_is_acked(&w, 0xfffffff4u));
	/* The same ACK again frees nothing. */
	assert_int_equal(dlmc_txwin_ack(&w, 0xfffffff3u, 0x14, &newly), 0);
	assert_int_equal(newly, 0);
	/* Filling the hole slides over the selectively acked frames too. */
	assert_int_equal(dlmc_txwin_ack(&w, 0xfffffff5u, 0, &newly), 3);
	assert_int_equal(w.una, 0xfffffff6u);
	assert_int_equal(dlmc_txwin_inflight(&w), DLMC_WINDOW - 6);
	/* Across the wrap-around: acknowledge everything. */
	assert_int_equal(dlmc_txwin_ack(&w, w.nxt, 0, &newly), DLMC_WINDOW - 6);
	assert_int_equal(dlmc_txwin_inflight(&w), 0);
}

static void test_txwin_rejects_forged(void **s)
{
	struct dlmc_txwin w = { .una = 100, .nxt = 110 };
	u64 newly;

	(void)s;
	assert_int_equal(dlmc_txwin_ack(&w, 111, 0, &newly), -1);	/* beyond nxt */
	assert_int_equal(dlmc_txwin_ack(&w, 99, 0, &newly), -1);	/* stale */
	/* SACK bits past nxt are ignored. */
	assert_int_equal(dlmc_txwin_ack(&w, 100, ~0ull, &newly), 0);
	assert_int_equal(newly, 0x3feull);
	assert_int_equal(w.acked, 0x3feull);
	assert_int_equal(dlmc_txwin_ack(&w, 101, 0, &newly), 10);
	assert_int_equal(w.una, 110);
	assert_int_equal(w.acked, 0);
}

static void test_rxwin(void **s)
{
	struct dlmc_rxwin w = { .nxt = 0xfffffffeu };

	(void)s;
	assert_int_equal(dlmc_rxwin_accept(&w, 0xffffffffu), DLMC_RX_NEW);
	assert_false(dlmc_rxwin_pop(&w));		/* hole at nxt */
	assert_int_equal(dlmc_rxwin_accept(&w, 0xffffffffu), DLMC_RX_DUP);
	assert_int_equal(dlmc_rxwin_accept(&w, 0xfffffffeu + DLMC_WINDOW),
			 DLMC_RX_OUTSIDE);
	assert_int_equal(dlmc_rxwin_accept(&w, 0xfffffffeu), DLMC_RX_NEW);
	assert_true(dlmc_rxwin_pop(&w));
	assert_true(dlmc_rxwin_pop(&w));
	assert_false(dlmc_rxwin_pop(&w));
	assert_int_equal(w.nxt, 0);
	assert_int_equal(dlmc_rxwin_accept(&w, 0xfffffffeu), DLMC_RX_DUP);
	assert_int_equal(dlmc_rxwin_accept(&w, 0x80000000u), DLMC_RX_DUP);
	assert_int_equal(dlmc_rxwin_accept(&w, DLMC_WINDOW - 1), DLMC_RX_NEW);
	assert_int_equal(w.held, 1ull << 63);
}

/* Sender and receiver windows agree under loss: everything is eventually
 * delivered once, in order, with only lost frames resent. */
static void test_arq_simulation(void **s)
{
	struct dlmc_txwin tw = { .una = 5, .nxt = 5 };
	struct dlmc_rxwin rw = { .nxt = 5 };
	uint32_t delivered = 5, sent = 0, target = 5 + 1000;
	u64 newly;
	unsigned int rng = 12345;

	(void)s;
	while (delivered < target) {
		/* Send new frames into the window, then resend unacked ones. */
		while (dlmc_txwin_space(&tw) && tw.nxt < target)
			tw.nxt++;
		for (uint32_t q = tw.una; q != tw.nxt; q++) {
			if (dlmc_txwin_is_acked(&tw, q))
				continue;
			sent++;
			rng = rng * 1103515245u + 12345u;
			if ((rng >> 16) % 10 == 0)
				continue;	/* 10% loss */
			if (dlmc_rxwin_accept(&rw, q) == DLMC_RX_NEW)
				while (dlmc_rxwin_pop(&rw))
					assert_int_equal(delivered++, rw.nxt - 1);
		}
		rng = rng * 1103515245u + 12345u;
		if ((rng >> 16) % 10 != 0)	/* ACKs are lost too */
			assert_true(dlmc_txwin_ack(&tw, rw.nxt, rw.held, &newly) >= 0);
	}
	assert_int_equal(rw.nxt, target);
	assert_true(sent < 1000 * 13 / 10);	/* only lost frames resent */
}

static void test_addr(void **s)
{
	struct dlmc_addr a, b;
	char buf[40];

	(void)s;
	assert_int_equal(dlmc_addr_parse("02:00:0a:ff:00:01/513", &a), 0);
	assert_int_equal(a.ep, 513);
	assert_int_equal(a.mac[3], 0xff);
	dlmc_addr_format(&a, buf, sizeof(buf));
	assert_string_equal(buf, "02:00:0a:ff:00:01/513");
	assert_int_equal(dlmc_addr_parse(buf, &b), 0);
	assert_true(dlmc_addr_equal(&a, &b));
	assert_int_not_equal(dlmc_addr_parse("02:00:0a:ff:00:01", &a), 0);
	assert_int_not_equal(dlmc_addr_parse("02:00:0a:ff:00:01/70000", &a), 0);
	assert_int_not_equal(dlmc_addr_parse("02:00:0a:ff:00:01/5x", &a), 0);
	assert_int_not_equal(dlmc_addr_parse(NULL, &a), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_header_size),
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_every_byte_flip_detected),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_csum_split),
		cmocka_unit_test(test_frag_max),
		cmocka_unit_test(test_txwin_basic),
		cmocka_unit_test(test_txwin_rejects_forged),
		cmocka_unit_test(test_rxwin),
		cmocka_unit_test(test_arq_simulation),
		cmocka_unit_test(test_addr),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
