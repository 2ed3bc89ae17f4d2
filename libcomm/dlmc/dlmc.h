/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dlmc.h - user library for the DLMC kernel module (/dev/dlmc).
 *
 * An endpoint is an (interface, number) pair in the caller's network
 * namespace; its address on the wire is (MAC, number).  Messages are
 * delivered reliably, once, and in order between two endpoints.  Every call
 * returns 0 (or a count) on success and a negative errno on failure;
 * dlmc_strerror() turns that into text.
 */
#ifndef TNBC_DLMC_H
#define TNBC_DLMC_H

#include <stddef.h>
#include <stdint.h>

#include "../../kmod/dlmc/dlmc_uapi.h"

#define DLMC_DEV_PATH	"/dev/dlmc"

struct dlmc_addr {
	uint8_t mac[DLMC_ALEN];
	uint16_t ep;
};

struct dlmc_status {
	struct dlmc_addr src;
	uint32_t tag;
	size_t len;
};

typedef struct dlmc dlmc;

/* A non-blocking operation; owned by the caller, valid until complete. */
struct dlmc_req {
	int kind;		/* internal */
	int done;		/* 1 once complete */
	int err;		/* negative errno if it failed */
	struct dlmc_send send;
	struct dlmc_recv recv;
	struct dlmc_status status;
};

int dlmc_open(const char *ifname, uint16_t ep, dlmc **out);
int dlmc_close(dlmc *d);
const struct dlmc_addr *dlmc_self(const dlmc *d);
/* Payload bytes per frame on this endpoint's link. */
size_t dlmc_frag_size(const dlmc *d);
int dlmc_fd(const dlmc *d);

int dlmc_send(dlmc *d, const struct dlmc_addr *dst, uint32_t tag,
	      const void *buf, size_t len);
/* src NULL: any source; flags may add DLMC_ANY_TAG. */
int dlmc_recv(dlmc *d, const struct dlmc_addr *src, uint32_t tag, int flags,
	      void *buf, size_t cap, struct dlmc_status *st);

int dlmc_isend(dlmc *d, const struct dlmc_addr *dst, uint32_t tag,
	       const void *buf, size_t len, struct dlmc_req *req);
int dlmc_irecv(dlmc *d, const struct dlmc_addr *src, uint32_t tag, int flags,
	       void *buf, size_t cap, struct dlmc_req *req);
/* 1 complete, 0 not yet, <0 error. */
int dlmc_test(dlmc *d, struct dlmc_req *req);
int dlmc_wait(dlmc *d, struct dlmc_req *req);
int dlmc_waitall(dlmc *d, struct dlmc_req *reqs, int n);

/*
 * Before sleeping in a blocking recv, poll for this many microseconds (an
 * MPI library's progress loop does the same; a sleeping receiver pays a
 * wake-up per message).  Default: $TNBC_DLMC_SPIN_US, else 0.
 */
void dlmc_set_spin(dlmc *d, unsigned int usec);

/* Wait until everything sent is acknowledged (0 ms: no limit). */
int dlmc_flush(dlmc *d, unsigned int timeout_ms);
int dlmc_stats(dlmc *d, struct dlmc_stats *st);

/* "aa:bb:cc:dd:ee:ff/ep" */
int dlmc_addr_parse(const char *s, struct dlmc_addr *a);
void dlmc_addr_format(const struct dlmc_addr *a, char *buf, size_t size);
int dlmc_addr_equal(const struct dlmc_addr *a, const struct dlmc_addr *b);
const char *dlmc_strerror(int err);

#endif /* TNBC_DLMC_H */
