/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * dlmc_uapi.h - ioctl interface of /dev/dlmc, shared with user space.
 *
 * One open file is one endpoint: DLMC_IOC_BIND attaches it to an Ethernet
 * interface of the caller's network namespace and an endpoint number; every
 * other call acts on that endpoint only.  All structures have fixed-size
 * fields and explicit padding so 32- and 64-bit callers agree.
 */
#ifndef DLMC_UAPI_H
#define DLMC_UAPI_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define DLMC_DEV_NAME		"dlmc"
#define DLMC_IFNAMSIZ		16
#define DLMC_ALEN		6

struct dlmc_bind {
	char	ifname[DLMC_IFNAMSIZ];	/* in: NUL-terminated */
	__u16	ep;			/* in: endpoint number */
	__u16	frag_max;		/* out: payload bytes per frame */
	__u32	mtu;			/* out: interface MTU */
	__u8	mac[DLMC_ALEN];		/* out: interface address */
	__u16	pad;			/* must be zero */
};

/* Flags for send and recv. */
#define DLMC_NONBLOCK		0x1	/* return -EAGAIN instead of waiting */
#define DLMC_ANY_SRC		0x2	/* recv: ignore src_mac/src_ep */
#define DLMC_ANY_TAG		0x4	/* recv: ignore tag */

/*
 * Send len bytes at buf as one message.  done is how much of it earlier
 * calls accepted (0 for a new message); the call returns the new total.  A
 * blocking call returns len; a DLMC_NONBLOCK call returns what fitted in
 * the window (or -EAGAIN if nothing did), and the caller continues with the
 * same arguments and done set to the return value.
 */
struct dlmc_send {
	__u64	buf;
	__u32	len;
	__u32	done;
	__u32	tag;
	__u32	flags;
	__u8	dst_mac[DLMC_ALEN];
	__u16	dst_ep;
};

/*
 * Receive the oldest complete message matching the filter into buf (cap
 * bytes).  On success len/src/tag describe it.  If cap is too small the call
 * fails with -EMSGSIZE, fills len, and leaves the message queued.
 */
struct dlmc_recv {
	__u64	buf;
	__u32	cap;
	__u32	flags;
	__u32	tag;			/* in: filter; out: tag received */
	__u32	len;			/* out */
	__u8	src_mac[DLMC_ALEN];	/* in: filter; out: sender */
	__u16	src_ep;			/* in: filter; out: sender */
};

/* Wait until every frame sent from this endpoint is acknowledged. */
struct dlmc_flush {
	__u32	timeout_ms;
	__u32	pad;
};

/* Counters; global ones cover all endpoints and frames with no endpoint. */
struct dlmc_stats {
	__u64	tx_frames;	/* data frames built */
	__u64	tx_retrans;	/* data frames sent again */
	__u64	tx_acks;
	__u64	rx_frames;	/* valid data frames received */
	__u64	rx_acks;	/* valid ACKs received */
	__u64	rx_dup;		/* duplicates discarded */
	__u64	rx_outside;	/* beyond the receive window */
	__u64	rx_bad_csum;
	__u64	rx_bad_hdr;	/* short, version, type, flags, length */
	__u64	rx_bad_proto;	/* valid frame breaking the protocol */
	__u64	rx_no_ep;	/* no such endpoint here */
	__u64	rx_nomem;	/* endpoint buffer full: dropped, resent */
	__u64	inj_lost;	/* frames dropped by loss_ppm */
	__u64	inj_corrupt;	/* frames damaged by corrupt_ppm */
	__u64	msgs_sent;
	__u64	msgs_recv;
};

#define DLMC_IOC_MAGIC		0xD1
#define DLMC_IOC_BIND		_IOWR(DLMC_IOC_MAGIC, 1, struct dlmc_bind)
#define DLMC_IOC_SEND		_IOW(DLMC_IOC_MAGIC, 2, struct dlmc_send)
#define DLMC_IOC_RECV		_IOWR(DLMC_IOC_MAGIC, 3, struct dlmc_recv)
#define DLMC_IOC_FLUSH		_IOW(DLMC_IOC_MAGIC, 4, struct dlmc_flush)
#define DLMC_IOC_STATS		_IOR(DLMC_IOC_MAGIC, 5, struct dlmc_stats)

#endif /* DLMC_UAPI_H */
