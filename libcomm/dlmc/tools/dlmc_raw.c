// SPDX-License-Identifier: BSD-3-Clause
/*
 * dlmc_raw IF DST - injects hand-made DLMC frames from an AF_PACKET socket
 * on IF toward endpoint DST (aa:bb:cc:dd:ee:ff/ep, on the other end of the
 * link), and checks from the module's counters that each malformed one was
 * counted in the right class and dropped.  Finishes with one valid
 * single-frame messages (tags 0 and 1, 1000 bytes, patterns 0 and 1, the
 * first one also sent twice), which the receiver at DST must get intact.  Exit status = failures.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../../../kmod/dlmc/dlmc_proto.h"
#include "../dlmc.h"
#include "pattern.h"
#include "tool_util.h"

struct raw {
	int sock, dev;
	struct sockaddr_ll to;
	uint8_t src[6];
	struct dlmc_addr dst;
};

static int failures;

static uint64_t counter(struct raw *r, size_t idx)
{
	struct dlmc_stats st;

	if (ioctl(r->dev, DLMC_IOC_STATS, &st) < 0) {
		perror("dlmc_raw: stats");
		exit(1);
	}
	return ((uint64_t *)&st)[idx];
}

#define C(field) (offsetof(struct dlmc_stats, field) / 8)

/* Ethernet header + DLMC header (info) + payload; returns frame length. */
static size_t build(struct raw *r, uint8_t *f, const struct dlmc_info *in,
		    const uint8_t *payload, size_t plen)
{
	struct ether_header *eh = (struct ether_header *)f;

	memcpy(eh->ether_dhost, r->dst.mac, 6);
	memcpy(eh->ether_shost, r->src, 6);
	eh->ether_type = htons(DLMC_ETHERTYPE);
	memcpy(f + 14 + DLMC_HDR_LEN, payload, plen);
	dlmc_hdr_encode((struct dlmc_hdr *)(f + 14), in,
			dlmc_csum_add(0, payload, plen));
	return 14 + DLMC_HDR_LEN + plen;
}

/* Send the frame and wait (bounded) for counter idx to move by one. */
static void inject(struct raw *r, const char *name, const uint8_t *f,
		   size_t len, size_t idx)
{
	uint64_t before = counter(r, idx), now = before;

	if (sendto(r->sock, f, len, 0, (struct sockaddr *)&r->to,
		   sizeof(r->to)) != (ssize_t)len) {
		printf("FAIL %s: sendto: %s\n", name, strerror(errno));
		failures++;
		return;
	}
	for (int i = 0; i < 300 && now == before; i++) {
		usleep(10000);
		now = counter(r, idx);
	}
	if (now == before + 1) {
		printf("ok   %s\n", name);
	} else {
		printf("FAIL %s: counter moved by %llu, want 1\n", name,
		       (unsigned long long)(now - before));
		failures++;
	}
}

static void open_raw(struct raw *r, const char *ifname, const char *dst)
{
	struct ifreq ifr;

	r->dst = tool_addr(dst);
	r->sock = socket(AF_PACKET, SOCK_RAW, htons(DLMC_ETHERTYPE));
	r->dev = open(DLMC_DEV_PATH, O_RDWR);
	if (r->sock < 0 || r->dev < 0) {
		perror("dlmc_raw: socket or " DLMC_DEV_PATH);
		exit(1);
	}
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(r->sock, SIOCGIFHWADDR, &ifr) < 0) {
		perror("dlmc_raw: SIOCGIFHWADDR");
		exit(1);
	}
	memcpy(r->src, ifr.ifr_hwaddr.sa_data, 6);
	memset(&r->to, 0, sizeof(r->to));
	r->to.sll_family = AF_PACKET;
	r->to.sll_ifindex = (int)if_nametoindex(ifname);
	r->to.sll_halen = 6;
	memcpy(r->to.sll_addr, r->dst.mac, 6);
}

int main(int argc, char **argv)
{
	static uint8_t f[2048], payload[1000];
	struct raw r;
	struct dlmc_info in;
	size_t len;

	if (argc != 3) {
		fprintf(stderr, "usage: dlmc_raw IFNAME aa:bb:cc:dd:ee:ff/ep\n");
		return 2;
	}
	open_raw(&r, argv[1], argv[2]);
	pattern_fill(payload, sizeof(payload), 0);
	in = (struct dlmc_info){ .type = DLMC_T_DATA, .flags = DLMC_F_ACKREQ,
		.dst_ep = r.dst.ep, .src_ep = 4242, .msg_len = 1000,
		.frag_len = 1000 };

	len = build(&r, f, &in, payload, 1000);
	inject(&r, "shorter than a header", f, 14 + 20, C(rx_bad_hdr));
	inject(&r, "payload cut short", f, len - 10, C(rx_bad_hdr));
	f[14] = 2;
	inject(&r, "unknown version", f, len, C(rx_bad_hdr));
	f[14] = DLMC_VERSION;
	f[15] = 9;
	inject(&r, "unknown type", f, len, C(rx_bad_hdr));
	f[15] = DLMC_T_DATA;
	f[14 + 100] ^= 0x40;
	inject(&r, "damaged payload", f, len, C(rx_bad_csum));
	len = build(&r, f, &in, payload, 1000);
	f[14 + 9] ^= 1;		/* inside the SACK field */
	inject(&r, "damaged header", f, len, C(rx_bad_csum));

	in.flags = 0x100;
	len = build(&r, f, &in, payload, 1000);
	inject(&r, "unknown flag", f, len, C(rx_bad_hdr));
	in.flags = DLMC_F_ACKREQ;
	in.frag_off = 500;
	len = build(&r, f, &in, payload, 1000);
	inject(&r, "fragment outside its message", f, len, C(rx_bad_hdr));
	in.frag_off = 0;
	in.dst_ep = (uint16_t)(r.dst.ep + 1);
	len = build(&r, f, &in, payload, 1000);
	inject(&r, "no such endpoint", f, len, C(rx_no_ep));
	in.dst_ep = r.dst.ep;
	in.seq = 1000;
	len = build(&r, f, &in, payload, 1000);
	inject(&r, "beyond the receive window", f, len, C(rx_outside));
	in.seq = 0;
	in.src_ep = 4243;
	in.msg_len = 2000;
	in.frag_off = 1000;
	len = build(&r, f, &in, payload, 1000);
	inject(&r, "middle fragment with no start", f, len, C(rx_bad_proto));

	len = build(&r, f, &(struct dlmc_info){ .type = DLMC_T_ACK,
		.dst_ep = r.dst.ep, .src_ep = 4244, .seq = 7 }, payload, 0);
	inject(&r, "ACK from a stranger", f, len, C(rx_bad_proto));

	in = (struct dlmc_info){ .type = DLMC_T_DATA, .flags = DLMC_F_ACKREQ,
		.dst_ep = r.dst.ep, .src_ep = 4242, .msg_len = 1000,
		.frag_len = 1000 };
	len = build(&r, f, &in, payload, 1000);
	inject(&r, "valid message delivered", f, len, C(msgs_recv));
	inject(&r, "its duplicate discarded", f, len, C(rx_dup));
	in.seq = 1;
	in.tag = 1;
	pattern_fill(payload, sizeof(payload), 1);
	len = build(&r, f, &in, payload, 1000);
	inject(&r, "next message delivered", f, len, C(msgs_recv));
	printf("%d failure(s)\n", failures);
	return failures ? 1 : 0;
}
