// SPDX-License-Identifier: BSD-3-Clause
/*
 * libFuzzer target for what the DLMC module does with frames off the wire
 * (kmod/dlmc/dlmc_proto.h, shared with the kernel):
 *
 * - the input's frame part goes through dlmc_hdr_decode: refused with a
 *   known reason, or decoded into a header whose fragment lies inside the
 *   frame and inside its message; a decoded frame encoded again decodes to
 *   the same header;
 * - the rest is a script of window operations (receive: accept a sequence
 *   number near the window, deliver in order; send: send, apply an ACK
 *   with any cumulative number and SACK bits), checked step by step
 *   against a plain model of sets: every frame is delivered exactly once
 *   and in order, and the sender frees exactly the frames acknowledged.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../../kmod/dlmc/dlmc_proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int cond)
{
	if (!cond)
		abort();
}

static void frame_part(const uint8_t *f, size_t len)
{
	struct dlmc_info in, again;
	enum dlmc_frame_err e;

	memset(&in, 0, sizeof in);          /* padding too: compared whole */
	memset(&again, 0, sizeof again);
	e = dlmc_hdr_decode(f, len, &in);

	check(e >= DLMC_OK && e <= DLMC_E_CSUM);
	if (e != DLMC_OK)
		return;
	check(DLMC_HDR_LEN + (size_t)in.frag_len <= len);
	check(in.type == DLMC_T_DATA || in.type == DLMC_T_ACK);
	if (in.type == DLMC_T_DATA)
		check((uint64_t)in.frag_off + in.frag_len <= in.msg_len);

	uint8_t *copy = malloc(DLMC_HDR_LEN + (size_t)in.frag_len);
	check(copy != NULL);
	memcpy(copy + DLMC_HDR_LEN, f + DLMC_HDR_LEN, in.frag_len);
	dlmc_hdr_encode((struct dlmc_hdr *)copy, &in,
			dlmc_csum_add(0, copy + DLMC_HDR_LEN, in.frag_len));
	check(dlmc_hdr_decode(copy, DLMC_HDR_LEN + (size_t)in.frag_len, &again) == DLMC_OK);
	check(memcmp(&in, &again, sizeof in) == 0);
	free(copy);
}

/* Sequence numbers are tracked relative to the first one, which the script
 * chooses near the 32-bit wrap. */
#define SPAN 4096

struct model {
	struct dlmc_rxwin rx;
	struct dlmc_txwin tx;
	u32 base;
	uint8_t held[SPAN];      /* receiver: accepted, not yet delivered */
	uint8_t seen[SPAN];      /* receiver: accepted once, ever */
	uint8_t acked[SPAN];     /* sender: acknowledged */
	u32 delivered;           /* receiver: frames delivered, in order */
	u32 sent;                /* sender: frames sent */
	u32 una;                 /* sender: first not acknowledged */
};

static void rx_accept(struct model *m, int delta)
{
	u32 seq = m->rx.nxt + (u32)delta;
	u32 rel = seq - m->base;
	enum dlmc_rx_verdict want, got;

	if (delta < 0)
		want = DLMC_RX_DUP;
	else if (delta >= DLMC_WINDOW)
		want = DLMC_RX_OUTSIDE;
	else if (rel < SPAN && m->seen[rel])
		want = DLMC_RX_DUP;
	else
		want = DLMC_RX_NEW;
	if (want == DLMC_RX_NEW && rel >= SPAN)
		return;                 /* beyond the model's span: not asked */
	got = dlmc_rxwin_accept(&m->rx, seq);
	check(got == want);
	if (got == DLMC_RX_NEW) {
		check(!m->seen[rel]);   /* exactly once */
		m->seen[rel] = m->held[rel] = 1;
	}
}

static void rx_pop(struct model *m)
{
	u32 rel = m->delivered;
	int want = rel < SPAN && m->held[rel];

	check(dlmc_rxwin_pop(&m->rx) == (want != 0));
	if (want) {
		m->held[rel] = 0;
		m->delivered++;
	}
	check(m->rx.nxt - m->base == m->delivered);   /* in order */
}

static void tx_send(struct model *m)
{
	if (!dlmc_txwin_space(&m->tx) || m->sent >= SPAN)
		return;
	m->tx.nxt++;
	m->sent++;
}

static void tx_ack(struct model *m, int delta, u64 sack)
{
	u32 cum = m->tx.una + (u32)delta, old = m->una;
	u32 inflight = m->sent - m->una;
	u64 newly, want_newly = 0;
	int slid = dlmc_txwin_ack(&m->tx, cum, sack, &newly);

	if (delta < 0 || (u32)delta > inflight) {
		check(slid == -1 && newly == 0);
		return;
	}
	for (u32 i = 0; i < inflight; i++) {
		u32 s = old + i;
		int ack = i < (u32)delta ||
			  (i > (u32)delta && i - (u32)delta < 64 &&
			   ((sack >> (i - (u32)delta)) & 1));

		if (ack && !m->acked[s]) {
			m->acked[s] = 1;
			want_newly |= 1ULL << i;
		}
	}
	check(newly == want_newly);
	while (m->una < m->sent && m->acked[m->una])
		m->una++;
	check(slid == (int)(m->una - old));
	check(m->tx.una - m->base == m->una && m->tx.nxt - m->base == m->sent);
	for (u32 i = 0; i < m->sent - m->una; i++)
		check(dlmc_txwin_is_acked(&m->tx, m->base + m->una + i) ==
		      (m->acked[m->una + i] != 0));
}

static void window_part(const uint8_t *p, size_t n)
{
	static struct model m;
	size_t i = 0;

	memset(&m, 0, sizeof m);
	m.base = n >= 1 ? 0xffffffffu - p[0] : 0;   /* crosses the wrap soon */
	m.rx.nxt = m.tx.una = m.tx.nxt = m.base;
	for (i = 1; i + 1 < n;) {
		uint8_t op = p[i++];
		int8_t d = (int8_t)p[i++];

		switch (op & 3) {
		case 0: rx_accept(&m, d); break;
		case 1: rx_pop(&m); break;
		case 2: tx_send(&m); break;
		default: {
			u64 sack = 0;

			if (i + 8 <= n) {
				memcpy(&sack, p + i, 8);
				i += 8;
			}
			tx_ack(&m, d, sack);
		}
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* First byte: how much of the rest is the frame (in 8-byte units). */
	size_t flen = size ? (size_t)data[0] * 8 : 0;

	if (!size)
		return 0;
	if (flen > size - 1)
		flen = size - 1;
	frame_part(data + 1, flen);
	window_part(data + 1 + flen, size - 1 - flen);
	return 0;
}
