// SPDX-License-Identifier: BSD-3-Clause
/*
 * dlmc_bad IF - feeds /dev/dlmc bad arguments and checks each is refused
 * with the documented error, and that the endpoint still works afterwards.
 * Traffic goes to the endpoint's own address (local delivery), so one
 * interface is enough.  Prints one line per check; exit status = failures.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../dlmc.h"
#include "pattern.h"

static int failures;

static void expect(const char *name, int got, int want)
{
	if (got == want) {
		printf("ok   %s\n", name);
	} else {
		printf("FAIL %s: got %d (%s), want %d (%s)\n", name, got,
		       strerror(got < 0 ? -got : got), want, strerror(-want));
		failures++;
	}
}

static int ioc(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) < 0 ? -errno : 0;
}

static int dev_open(void)
{
	int fd = open(DLMC_DEV_PATH, O_RDWR);

	if (fd < 0) {
		perror("dlmc_bad: " DLMC_DEV_PATH);
		exit(1);
	}
	return fd;
}

static struct dlmc_bind bind_arg(const char *ifname, unsigned int ep)
{
	struct dlmc_bind b;

	memset(&b, 0, sizeof(b));
	snprintf(b.ifname, sizeof(b.ifname), "%s", ifname);
	b.ep = (uint16_t)ep;
	return b;
}

static struct dlmc_send send_arg(const struct dlmc_bind *self, const void *buf,
				 uint32_t len)
{
	struct dlmc_send s;

	memset(&s, 0, sizeof(s));
	s.buf = (uintptr_t)buf;
	s.len = len;
	memcpy(s.dst_mac, self->mac, DLMC_ALEN);
	s.dst_ep = self->ep;
	return s;
}

static struct dlmc_recv recv_arg(void *buf, uint32_t cap)
{
	struct dlmc_recv r;

	memset(&r, 0, sizeof(r));
	r.buf = (uintptr_t)buf;
	r.cap = cap;
	r.flags = DLMC_ANY_SRC | DLMC_ANY_TAG | DLMC_NONBLOCK;
	return r;
}

static void check_unbound(void)
{
	int fd = dev_open();
	struct dlmc_send s;
	struct dlmc_recv r;
	struct dlmc_flush f = { 0, 0 };

	memset(&s, 0, sizeof(s));
	memset(&r, 0, sizeof(r));
	expect("send before bind", ioc(fd, DLMC_IOC_SEND, &s), -ENOTCONN);
	expect("recv before bind", ioc(fd, DLMC_IOC_RECV, &r), -ENOTCONN);
	expect("flush before bind", ioc(fd, DLMC_IOC_FLUSH, &f), -ENOTCONN);
	close(fd);
}

static void check_bind(const char *ifname)
{
	int fd = dev_open(), fd2 = dev_open();
	struct dlmc_bind b = bind_arg(ifname, 10);

	memset(b.ifname, 'x', sizeof(b.ifname));
	expect("bind: name without NUL", ioc(fd, DLMC_IOC_BIND, &b), -EINVAL);
	b = bind_arg(ifname, 10);
	b.pad = 1;
	expect("bind: padding set", ioc(fd, DLMC_IOC_BIND, &b), -EINVAL);
	b = bind_arg("nosuchif0", 10);
	expect("bind: no such interface", ioc(fd, DLMC_IOC_BIND, &b), -ENODEV);
	b = bind_arg("lo", 10);
	expect("bind: not Ethernet", ioc(fd, DLMC_IOC_BIND, &b), -EPROTONOSUPPORT);
	expect("bind: NULL argument", ioc(fd, DLMC_IOC_BIND, NULL), -EFAULT);
	expect("bind: unmapped argument", ioc(fd, DLMC_IOC_BIND, (void *)8), -EFAULT);
	b = bind_arg(ifname, 10);
	expect("bind", ioc(fd, DLMC_IOC_BIND, &b), 0);
	expect("bind twice", ioc(fd, DLMC_IOC_BIND, &b), -EBUSY);
	b = bind_arg(ifname, 10);
	expect("bind: endpoint taken", ioc(fd2, DLMC_IOC_BIND, &b), -EADDRINUSE);
	expect("unknown ioctl", ioc(fd, _IO(DLMC_IOC_MAGIC, 99), NULL), -ENOTTY);
	expect("stats: bad pointer", ioc(fd, DLMC_IOC_STATS, (void *)8), -EFAULT);
	close(fd);
	b = bind_arg(ifname, 10);
	expect("bind after the owner closed", ioc(fd2, DLMC_IOC_BIND, &b), 0);
	close(fd2);
}

static void check_send(int fd, const struct dlmc_bind *self)
{
	static char buf[4096];
	struct dlmc_send s;
	long pg = sysconf(_SC_PAGESIZE);
	char *hole;

	expect("send: unmapped argument", ioc(fd, DLMC_IOC_SEND, (void *)8), -EFAULT);
	s = send_arg(self, NULL, 100);
	expect("send: NULL buffer", ioc(fd, DLMC_IOC_SEND, &s), -EFAULT);
	s = send_arg(self, (void *)0xffff888000000000ull, 100);
	expect("send: kernel address", ioc(fd, DLMC_IOC_SEND, &s), -EFAULT);
	s = send_arg(self, buf, 0x7fffffff);
	expect("send: longer than max_msg", ioc(fd, DLMC_IOC_SEND, &s), -EMSGSIZE);
	s = send_arg(self, buf, 100);
	s.done = 101;
	expect("send: done > len", ioc(fd, DLMC_IOC_SEND, &s), -EINVAL);
	s.done = 50;
	expect("send: continuation of nothing", ioc(fd, DLMC_IOC_SEND, &s), -EINVAL);
	s = send_arg(self, buf, 100);
	s.flags = 0x80;
	expect("send: unknown flag", ioc(fd, DLMC_IOC_SEND, &s), -EINVAL);
	s = send_arg(self, buf, 100);
	s.dst_mac[0] = 0x01;
	expect("send: multicast destination", ioc(fd, DLMC_IOC_SEND, &s), -EINVAL);
	memset(s.dst_mac, 0, DLMC_ALEN);
	expect("send: zero destination", ioc(fd, DLMC_IOC_SEND, &s), -EINVAL);

	/* A buffer with an unmapped page in the middle. */
	hole = mmap(NULL, 3 * pg, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (hole == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	munmap(hole + pg, pg);
	s = send_arg(self, hole, 3 * pg);
	expect("send: hole in buffer", ioc(fd, DLMC_IOC_SEND, &s) < 0 ? -EFAULT : 0,
	       -EFAULT);
	munmap(hole, pg);
	munmap(hole + 2 * pg, pg);
}

static void check_recv(int fd, const struct dlmc_bind *self)
{
	static uint8_t out[1000], in[1000];
	struct dlmc_send s = send_arg(self, out, sizeof(out));
	struct dlmc_recv r;
	struct dlmc_flush f = { 5000, 0 };
	uint8_t *ro;
	int rc;

	r = recv_arg(in, sizeof(in));
	expect("recv: nothing there", ioc(fd, DLMC_IOC_RECV, &r), -EAGAIN);
	expect("recv: unmapped argument", ioc(fd, DLMC_IOC_RECV, (void *)8), -EFAULT);
	r.flags |= 0x100;
	expect("recv: unknown flag", ioc(fd, DLMC_IOC_RECV, &r), -EINVAL);

	pattern_fill(out, sizeof(out), 0);
	rc = ioctl(fd, DLMC_IOC_SEND, &s);
	expect("send to self", rc == (int)sizeof(out) ? 0 : -errno, 0);
	f.pad = 1;
	expect("flush: padding set", ioc(fd, DLMC_IOC_FLUSH, &f), -EINVAL);
	f.pad = 0;
	expect("flush", ioc(fd, DLMC_IOC_FLUSH, &f), 0);

	r = recv_arg(in, 10);
	r.flags &= ~DLMC_NONBLOCK;
	expect("recv: buffer too small", ioc(fd, DLMC_IOC_RECV, &r), -EMSGSIZE);
	expect("recv: too small reports the length", (int)r.len, (int)sizeof(out));
	r = recv_arg(NULL, sizeof(in));
	expect("recv: NULL buffer", ioc(fd, DLMC_IOC_RECV, &r), -EFAULT);
	r = recv_arg((void *)0xffff888000000000ull, sizeof(in));
	expect("recv: kernel address", ioc(fd, DLMC_IOC_RECV, &r), -EFAULT);
	ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	r = recv_arg(ro, sizeof(in));
	expect("recv: read-only buffer", ioc(fd, DLMC_IOC_RECV, &r), -EFAULT);
	munmap(ro, 4096);

	/* None of that lost the message. */
	r = recv_arg(in, sizeof(in));
	expect("recv after the failures", ioc(fd, DLMC_IOC_RECV, &r), 0);
	expect("message intact", (int)pattern_check(in, sizeof(in), 0), (int)sizeof(in));
	r = recv_arg(in, sizeof(in));
	expect("received exactly once", ioc(fd, DLMC_IOC_RECV, &r), -EAGAIN);
}

int main(int argc, char **argv)
{
	struct dlmc_bind self;
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: dlmc_bad IFNAME\n");
		return 2;
	}
	check_unbound();
	check_bind(argv[1]);
	fd = dev_open();
	self = bind_arg(argv[1], 11);
	if (ioc(fd, DLMC_IOC_BIND, &self)) {
		perror("dlmc_bad: bind");
		return 1;
	}
	check_send(fd, &self);
	check_recv(fd, &self);
	close(fd);
	printf("%d failure(s)\n", failures);
	return failures ? 1 : 0;
}
