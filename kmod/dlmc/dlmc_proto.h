/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * dlmc_proto.h - DLMC wire format, checksum and selective-repeat window
 * arithmetic.
 *
 * This header is pure computation on integers and byte buffers: the kernel
 * module uses it on live frames and the user-space unit tests compile the very
 * same code, so the parts most likely to be subtly wrong (validation, window
 * edges, sequence wrap-around) are tested outside the VM.
 *
 * Every endpoint draws a random epoch when it is bound; DATA frames carry
 * the sender's and ACKs echo it back, so a connection notices when the
 * remote endpoint was closed and opened again under the same address (and
 * starts over at sequence 0), and a sender ignores ACKs meant for an
 * earlier incarnation of itself.
 *
 * A DLMC frame is an Ethernet header (EtherType 0x080A by default) followed by
 * struct dlmc_hdr and frag_len payload bytes.  All header fields are
 * big-endian.  The checksum is computed over header and payload with the csum
 * field counted as zero.
 */
#ifndef DLMC_PROTO_H
#define DLMC_PROTO_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/string.h>
#include <asm/byteorder.h>
#define dlmc_be16(x)	be16_to_cpu(x)
#define dlmc_be32(x)	be32_to_cpu(x)
#define dlmc_be64(x)	be64_to_cpu(x)
#define dlmc_tobe16(x)	cpu_to_be16(x)
#define dlmc_tobe32(x)	cpu_to_be32(x)
#define dlmc_tobe64(x)	cpu_to_be64(x)
#define dlmc_le32(x)	le32_to_cpu(x)
#else
#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <endian.h>
typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;
#define dlmc_be16(x)	be16toh(x)
#define dlmc_be32(x)	be32toh(x)
#define dlmc_be64(x)	be64toh(x)
#define dlmc_tobe16(x)	htobe16(x)
#define dlmc_tobe32(x)	htobe32(x)
#define dlmc_tobe64(x)	htobe64(x)
#define dlmc_le32(x)	le32toh(x)
#define __packed	__attribute__((__packed__))	/* the kernel's spelling, for user space */
#endif

#define DLMC_VERSION		1
#define DLMC_ETHERTYPE		0x080A
/* Frames in flight per connection; one bit each in a u64 bitmap. */
#define DLMC_WINDOW		64

enum dlmc_type {
	DLMC_T_DATA = 1,
	DLMC_T_ACK = 2,
};

/*
 * DATA: the receiver should acknowledge at once (last fragment, or a
 * periodic request so the sender's window keeps moving).
 */
#define DLMC_F_ACKREQ		0x0001
#define DLMC_F_ALL		DLMC_F_ACKREQ

/*
 * Every field is naturally aligned relative to the header start; the header
 * itself may sit at any address (after a 14-byte Ethernet header), hence
 * packed, and it is always read through dlmc_hdr_decode().
 */
struct dlmc_hdr {
	__u8	version;
	__u8	type;
	__be16	flags;
	__be16	dst_ep;
	__be16	src_ep;
	__be64	sack;		/* ACK: bit i set = seq + i received */
	__be32	seq;		/* DATA: frame number; ACK: next expected */
	__be32	tag;		/* DATA: user tag of the message */
	__be32	msg_len;	/* DATA: total message length */
	__be32	frag_off;	/* DATA: offset of this fragment */
	__be16	frag_len;	/* DATA: payload bytes after the header */
	__be16	epoch;		/* DATA: sender's incarnation; ACK: echoed */
	__be32	csum;
} __packed;

#define DLMC_HDR_LEN		((unsigned int)sizeof(struct dlmc_hdr))

/* Host-order view of a header; what the rest of the code works with. */
struct dlmc_info {
	u8 type;
	u16 flags;
	u16 dst_ep;
	u16 src_ep;
	u64 sack;
	u32 seq;
	u32 tag;
	u32 msg_len;
	u32 frag_off;
	u16 frag_len;
	u16 epoch;
};

enum dlmc_frame_err {
	DLMC_OK = 0,
	DLMC_E_SHORT,		/* shorter than a header or than frag_len */
	DLMC_E_VERSION,
	DLMC_E_TYPE,
	DLMC_E_FLAGS,		/* unknown flag */
	DLMC_E_LEN,		/* fragment outside its message */
	DLMC_E_CSUM,
	DLMC_E_NR
};

/*
 * Checksum: 32-bit little-endian words summed into a 64-bit accumulator,
 * folded at the end.  Addition commutes, so partial sums over pieces that
 * start at multiples of 4 bytes combine by plain addition: the sender sums
 * the payload outside its lock and adds the header later.  A flipped bit in
 * any byte always changes the sum.
 */
static inline u64 dlmc_csum_add(u64 acc, const void *data, size_t len)
{
	const u8 *p = data;
	u32 w;

	for (; len >= 4; p += 4, len -= 4) {
		memcpy(&w, p, 4);
		acc += dlmc_le32(w);
	}
	if (len) {
		w = 0;
		memcpy(&w, p, len);
		acc += dlmc_le32(w);
	}
	return acc;
}

static inline u32 dlmc_csum_fold(u64 acc)
{
	while (acc >> 32)
		acc = (acc & 0xffffffffULL) + (acc >> 32);
	return (u32)acc;
}

/*
 * Fill hdr from info; csum is computed over hdr plus a payload whose partial
 * sum (dlmc_csum_add from 0) is payload_sum.
 */
static inline void dlmc_hdr_encode(struct dlmc_hdr *hdr,
				   const struct dlmc_info *in, u64 payload_sum)
{
	memset(hdr, 0, sizeof(*hdr));
	hdr->version = DLMC_VERSION;
	hdr->type = in->type;
	hdr->flags = dlmc_tobe16(in->flags);
	hdr->dst_ep = dlmc_tobe16(in->dst_ep);
	hdr->src_ep = dlmc_tobe16(in->src_ep);
	hdr->sack = dlmc_tobe64(in->sack);
	hdr->seq = dlmc_tobe32(in->seq);
	hdr->tag = dlmc_tobe32(in->tag);
	hdr->msg_len = dlmc_tobe32(in->msg_len);
	hdr->frag_off = dlmc_tobe32(in->frag_off);
	hdr->frag_len = dlmc_tobe16(in->frag_len);
	hdr->epoch = dlmc_tobe16(in->epoch);
	hdr->csum = dlmc_tobe32(dlmc_csum_fold(dlmc_csum_add(payload_sum, hdr,
							     sizeof(*hdr))));
}

/*
 * Validate a received frame (starting at the DLMC header, len bytes, which
 * may include Ethernet padding after the payload) and decode its header.
 * Nothing in the frame is trusted before this returns DLMC_OK.
 */
static inline enum dlmc_frame_err dlmc_hdr_decode(const void *frame,
						  size_t len,
						  struct dlmc_info *out)
{
	struct dlmc_hdr h;
	u64 acc;
	u32 csum_le;

	if (len < DLMC_HDR_LEN)
		return DLMC_E_SHORT;
	memcpy(&h, frame, sizeof(h));
	if (h.version != DLMC_VERSION)
		return DLMC_E_VERSION;
	if (h.type != DLMC_T_DATA && h.type != DLMC_T_ACK)
		return DLMC_E_TYPE;
	out->type = h.type;
	out->flags = dlmc_be16(h.flags);
	out->dst_ep = dlmc_be16(h.dst_ep);
	out->src_ep = dlmc_be16(h.src_ep);
	out->sack = dlmc_be64(h.sack);
	out->seq = dlmc_be32(h.seq);
	out->tag = dlmc_be32(h.tag);
	out->msg_len = dlmc_be32(h.msg_len);
	out->frag_off = dlmc_be32(h.frag_off);
	out->frag_len = dlmc_be16(h.frag_len);
	out->epoch = dlmc_be16(h.epoch);
	if (out->flags & ~DLMC_F_ALL)
		return DLMC_E_FLAGS;
	if (len - DLMC_HDR_LEN < out->frag_len)
		return DLMC_E_SHORT;
	if (out->type == DLMC_T_DATA) {
		if ((u64)out->frag_off + out->frag_len > out->msg_len)
			return DLMC_E_LEN;
		if (out->frag_len == 0 && out->msg_len != 0)
			return DLMC_E_LEN;
	} else if (out->frag_len || out->msg_len || out->frag_off) {
		return DLMC_E_LEN;
	}
	/* Sum everything, then take the stored checksum word back out. */
	acc = dlmc_csum_add(0, frame, DLMC_HDR_LEN + out->frag_len);
	memcpy(&csum_le, &h.csum, 4);
	acc -= dlmc_le32(csum_le);
	if (dlmc_csum_fold(acc) != dlmc_be32(h.csum))
		return DLMC_E_CSUM;
	return DLMC_OK;
}

/* Payload bytes per frame on a link with this MTU (0 if too small). */
static inline unsigned int dlmc_frag_max(unsigned int mtu)
{
	unsigned int m;

	if (mtu <= DLMC_HDR_LEN)
		return 0;
	m = mtu - DLMC_HDR_LEN;
	return m > 0xffff ? 0xffff : m;
}

/*
 * Sender window: frames una .. nxt-1 are in flight; bit i of acked is set
 * when una + i has been selectively acknowledged (bit 0 is always clear).
 */
struct dlmc_txwin {
	u32 una;
	u32 nxt;
	u64 acked;
};

static inline unsigned int dlmc_txwin_inflight(const struct dlmc_txwin *w)
{
	return w->nxt - w->una;
}

static inline unsigned int dlmc_txwin_space(const struct dlmc_txwin *w)
{
	return DLMC_WINDOW - dlmc_txwin_inflight(w);
}

static inline bool dlmc_txwin_is_acked(const struct dlmc_txwin *w, u32 seq)
{
	u32 i = seq - w->una;

	return i >= dlmc_txwin_inflight(w) || ((w->acked >> i) & 1);
}

static inline u64 dlmc_low_bits(unsigned int n)
{
	return n >= 64 ? ~0ULL : (1ULL << n) - 1;
}

/*
 * Apply an ACK (cumulative next-expected cum plus sack bitmap relative to
 * cum).  Returns -1 for an ACK that does not fit the window (stale or
 * forged), else the number of frames the window slid.  *newly gets the
 * frames acknowledged for the first time, bit i = old una + i, so the
 * caller can free exactly those.
 */
static inline int dlmc_txwin_ack(struct dlmc_txwin *w, u32 cum, u64 sack,
				 u64 *newly)
{
	unsigned int inflight = dlmc_txwin_inflight(w);
	unsigned int adv = cum - w->una;
	unsigned int n = 0;
	u64 mark;

	*newly = 0;
	if (adv > inflight)
		return -1;
	mark = dlmc_low_bits(adv);
	/* Bit 0 would be cum itself, which by definition did not arrive. */
	if (adv < 64)
		mark |= (sack & ~1ULL) << adv;
	mark &= dlmc_low_bits(inflight);
	*newly = mark & ~w->acked;
	w->acked |= mark;
	while (n < 64 && ((w->acked >> n) & 1))
		n++;
	w->una += n;
	w->acked = n >= 64 ? 0 : w->acked >> n;
	return (int)n;
}

/*
 * Receiver window: nxt is the next frame to deliver in order; bit i of held
 * is set when nxt + i is buffered (out of order).
 */
struct dlmc_rxwin {
	u32 nxt;
	u64 held;
};

enum dlmc_rx_verdict {
	DLMC_RX_NEW,		/* buffer it */
	DLMC_RX_DUP,		/* delivered or buffered already: discard */
	DLMC_RX_OUTSIDE,	/* beyond the window: discard */
};

static inline enum dlmc_rx_verdict dlmc_rxwin_accept(struct dlmc_rxwin *w,
						     u32 seq)
{
	u32 i = seq - w->nxt;

	/* Serial-number arithmetic: "behind" is the lower half of the space. */
	if (i >= 0x80000000u)
		return DLMC_RX_DUP;
	if (i >= DLMC_WINDOW)
		return DLMC_RX_OUTSIDE;
	if ((w->held >> i) & 1)
		return DLMC_RX_DUP;
	w->held |= 1ULL << i;
	return DLMC_RX_NEW;
}

/* If frame nxt is buffered, consume it (caller delivers seq nxt - 1). */
static inline bool dlmc_rxwin_pop(struct dlmc_rxwin *w)
{
	if (!(w->held & 1))
		return false;
	w->held >>= 1;
	w->nxt++;
	return true;
}

#endif /* DLMC_PROTO_H */
