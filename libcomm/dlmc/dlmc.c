// SPDX-License-Identifier: BSD-3-Clause
/*
 * dlmc.c - user library over /dev/dlmc: one ioctl per operation; the
 * non-blocking forms keep their progress in struct dlmc_req and move it
 * with non-blocking ioctls, sleeping in poll() when nothing can move.
 */
#include "dlmc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

struct dlmc {
	int fd;
	struct dlmc_addr self;
	size_t frag;
	unsigned int spin_us;
};

enum { REQ_SEND = 1, REQ_RECV = 2 };

static int dlmc_ioctl(int fd, unsigned long cmd, void *arg)
{
	int rc;

	do {
		rc = ioctl(fd, cmd, arg);
	} while (rc < 0 && errno == EINTR);
	return rc < 0 ? -errno : rc;
}

static unsigned int dlmc_spin_env(void)
{
	const char *s = getenv("TNBC_DLMC_SPIN_US");
	char *end;
	unsigned long v;

	if (!s)
		return 0;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || v > 1000000) {
		fprintf(stderr, "tnbc dlmc: TNBC_DLMC_SPIN_US='%s' is not 0..1000000; using 0\n", s);
		return 0;
	}
	return (unsigned int)v;
}

static double dlmc_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* Non-blocking attempts for up to spin_us, then the blocking call. */
static int dlmc_recv_ioctl(dlmc *d, struct dlmc_recv *r)
{
	double end;
	int rc;

	if (d->spin_us && !(r->flags & DLMC_NONBLOCK)) {
		end = dlmc_now_us() + d->spin_us;
		r->flags |= DLMC_NONBLOCK;
		do {
			rc = dlmc_ioctl(d->fd, DLMC_IOC_RECV, r);
		} while (rc == -EAGAIN && dlmc_now_us() < end);
		r->flags &= ~DLMC_NONBLOCK;
		if (rc != -EAGAIN)
			return rc;
	}
	return dlmc_ioctl(d->fd, DLMC_IOC_RECV, r);
}

int dlmc_open(const char *ifname, uint16_t ep, dlmc **out)
{
	struct dlmc_bind b;
	dlmc *d;
	int rc;

	*out = NULL;
	if (!ifname || strlen(ifname) >= sizeof(b.ifname))
		return -EINVAL;
	memset(&b, 0, sizeof(b));
	strcpy(b.ifname, ifname);
	b.ep = ep;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->fd = open(DLMC_DEV_PATH, O_RDWR | O_CLOEXEC);
	if (d->fd < 0) {
		rc = -errno;
		free(d);
		return rc;
	}
	rc = dlmc_ioctl(d->fd, DLMC_IOC_BIND, &b);
	if (rc < 0) {
		close(d->fd);
		free(d);
		return rc;
	}
	memcpy(d->self.mac, b.mac, DLMC_ALEN);
	d->self.ep = ep;
	d->frag = b.frag_max;
	d->spin_us = dlmc_spin_env();
	*out = d;
	return 0;
}

void dlmc_set_spin(dlmc *d, unsigned int usec)
{
	d->spin_us = usec > 1000000 ? 1000000 : usec;
}

int dlmc_close(dlmc *d)
{
	int rc = 0;

	if (!d)
		return 0;
	if (close(d->fd) < 0)
		rc = -errno;
	free(d);
	return rc;
}

const struct dlmc_addr *dlmc_self(const dlmc *d) { return &d->self; }
size_t dlmc_frag_size(const dlmc *d) { return d->frag; }
int dlmc_fd(const dlmc *d) { return d->fd; }

static int dlmc_send_prep(struct dlmc_send *s, const struct dlmc_addr *dst,
			  uint32_t tag, const void *buf, size_t len)
{
	if (!dst || (len && !buf))
		return -EINVAL;
	if (len > UINT32_MAX)
		return -EMSGSIZE;
	memset(s, 0, sizeof(*s));
	s->buf = (uintptr_t)buf;
	s->len = (uint32_t)len;
	s->tag = tag;
	memcpy(s->dst_mac, dst->mac, DLMC_ALEN);
	s->dst_ep = dst->ep;
	return 0;
}

/* Push s forward; returns 1 when all accepted, 0 if the window is full. */
static int dlmc_send_step(dlmc *d, struct dlmc_send *s)
{
	int rc = dlmc_ioctl(d->fd, DLMC_IOC_SEND, s);

	if (rc == -EAGAIN)
		return 0;
	if (rc < 0)
		return rc;
	s->done = (uint32_t)rc;
	return s->done == s->len;
}

int dlmc_send(dlmc *d, const struct dlmc_addr *dst, uint32_t tag,
	      const void *buf, size_t len)
{
	struct dlmc_send s;
	int rc = dlmc_send_prep(&s, dst, tag, buf, len);

	while (rc == 0)		/* a signal may cut a blocking send short */
		rc = dlmc_send_step(d, &s);
	return rc < 0 ? rc : 0;
}

static void dlmc_recv_prep(struct dlmc_recv *r, const struct dlmc_addr *src,
			   uint32_t tag, int flags, void *buf, size_t cap)
{
	memset(r, 0, sizeof(*r));
	r->buf = (uintptr_t)buf;
	r->cap = cap > UINT32_MAX ? UINT32_MAX : (uint32_t)cap;
	r->tag = tag;
	r->flags = (uint32_t)flags & (DLMC_ANY_TAG | DLMC_NONBLOCK);
	if (src) {
		memcpy(r->src_mac, src->mac, DLMC_ALEN);
		r->src_ep = src->ep;
	} else {
		r->flags |= DLMC_ANY_SRC;
	}
}

static void dlmc_recv_status(const struct dlmc_recv *r, struct dlmc_status *st)
{
	if (!st)
		return;
	memcpy(st->src.mac, r->src_mac, DLMC_ALEN);
	st->src.ep = r->src_ep;
	st->tag = r->tag;
	st->len = r->len;
}

int dlmc_recv(dlmc *d, const struct dlmc_addr *src, uint32_t tag, int flags,
	      void *buf, size_t cap, struct dlmc_status *st)
{
	struct dlmc_recv r;
	int rc;

	dlmc_recv_prep(&r, src, tag, flags, buf, cap);
	rc = dlmc_recv_ioctl(d, &r);
	if (rc == 0 || rc == -EMSGSIZE)
		dlmc_recv_status(&r, st);
	return rc;
}

int dlmc_isend(dlmc *d, const struct dlmc_addr *dst, uint32_t tag,
	       const void *buf, size_t len, struct dlmc_req *req)
{
	int rc;

	memset(req, 0, sizeof(*req));
	req->kind = REQ_SEND;
	rc = dlmc_send_prep(&req->send, dst, tag, buf, len);
	if (rc < 0)
		return rc;
	req->send.flags = DLMC_NONBLOCK;
	rc = dlmc_test(d, req);
	return rc < 0 ? rc : 0;
}

int dlmc_irecv(dlmc *d, const struct dlmc_addr *src, uint32_t tag, int flags,
	       void *buf, size_t cap, struct dlmc_req *req)
{
	int rc;

	memset(req, 0, sizeof(*req));
	req->kind = REQ_RECV;
	dlmc_recv_prep(&req->recv, src, tag, flags | DLMC_NONBLOCK, buf, cap);
	rc = dlmc_test(d, req);
	return rc < 0 ? rc : 0;
}

int dlmc_test(dlmc *d, struct dlmc_req *req)
{
	int rc;

	if (req->done)
		return req->err ? req->err : 1;
	if (req->kind == REQ_SEND) {
		rc = dlmc_send_step(d, &req->send);
	} else if (req->kind == REQ_RECV) {
		rc = dlmc_recv_ioctl(d, &req->recv);
		if (rc == 0 || rc == -EMSGSIZE)
			dlmc_recv_status(&req->recv, &req->status);
		rc = rc == -EAGAIN ? 0 : rc == 0 ? 1 : rc;
	} else {
		rc = -EINVAL;
	}
	if (rc != 0) {
		req->done = 1;
		req->err = rc < 0 ? rc : 0;
	}
	return rc;
}

int dlmc_waitall(dlmc *d, struct dlmc_req *reqs, int n)
{
	struct pollfd pfd = { .fd = d->fd, .events = POLLIN };
	int i, pending, first_err = 0;

	for (;;) {
		pending = 0;
		for (i = 0; i < n; i++) {
			int rc = dlmc_test(d, &reqs[i]);

			if (rc == 0)
				pending++;
			else if (rc < 0 && !first_err)
				first_err = rc;
		}
		if (!pending)
			return first_err;
		/* Woken by arrivals; the short timeout covers send windows. */
		if (poll(&pfd, 1, 1) < 0 && errno != EINTR)
			return -errno;
	}
}

int dlmc_wait(dlmc *d, struct dlmc_req *req)
{
	/* One request: let the kernel block instead of polling. */
	if (!req->done && req->kind == REQ_SEND) {
		req->send.flags = 0;
	} else if (!req->done && req->kind == REQ_RECV) {
		req->recv.flags &= ~DLMC_NONBLOCK;
	}
	return dlmc_waitall(d, req, 1);
}

int dlmc_flush(dlmc *d, unsigned int timeout_ms)
{
	struct dlmc_flush f = { .timeout_ms = timeout_ms };

	return dlmc_ioctl(d->fd, DLMC_IOC_FLUSH, &f);
}

int dlmc_stats(dlmc *d, struct dlmc_stats *st)
{
	return dlmc_ioctl(d->fd, DLMC_IOC_STATS, st);
}

int dlmc_addr_parse(const char *s, struct dlmc_addr *a)
{
	unsigned int m[DLMC_ALEN], ep;
	char tail;
	int i;

	if (!s || sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x/%u%c", &m[0], &m[1],
			 &m[2], &m[3], &m[4], &m[5], &ep, &tail) != 7 ||
	    ep > UINT16_MAX)
		return -EINVAL;
	for (i = 0; i < DLMC_ALEN; i++)
		a->mac[i] = (uint8_t)m[i];
	a->ep = (uint16_t)ep;
	return 0;
}

void dlmc_addr_format(const struct dlmc_addr *a, char *buf, size_t size)
{
	snprintf(buf, size, "%02x:%02x:%02x:%02x:%02x:%02x/%u", a->mac[0],
		 a->mac[1], a->mac[2], a->mac[3], a->mac[4], a->mac[5], a->ep);
}

int dlmc_addr_equal(const struct dlmc_addr *a, const struct dlmc_addr *b)
{
	return a->ep == b->ep && memcmp(a->mac, b->mac, DLMC_ALEN) == 0;
}

const char *dlmc_strerror(int err)
{
	if (err == -ENOENT)
		return "/dev/dlmc missing (module not loaded?)";
	return strerror(err < 0 ? -err : err);
}
