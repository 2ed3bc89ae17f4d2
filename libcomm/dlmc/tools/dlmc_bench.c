// SPDX-License-Identifier: BSD-3-Clause
/*
 * dlmc_bench - latency and bandwidth, 64 B .. 16 MiB, over raw DLMC
 * endpoints or over TCP sockets, with the same program and protocol:
 *
 *   dlmc_bench dlmc-server IF EP          dlmc_bench dlmc-client IF EP SERVER
 *   dlmc_bench tcp-server PORT            dlmc_bench tcp-client IP PORT
 *
 * For each size the client runs bench_iters() round trips (latency = half
 * the mean round trip) and then streams bench_stream() messages that the
 * server acknowledges with one small message at the end (bandwidth).
 * The client prints one line per size.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../dlmc.h"
#include "bench_sizes.h"
#include "tool_util.h"

struct link {
	const char *name;
	int fd;				/* TCP */
	dlmc *d;			/* DLMC */
	struct dlmc_addr peer;
};

static void fail(const char *what, int err)
{
	fprintf(stderr, "dlmc_bench: %s: %s\n", what, strerror(err < 0 ? -err : err));
	exit(1);
}

static void xfer(struct link *l, void *buf, size_t len, int sending)
{
	if (l->d) {
		struct dlmc_status st;
		int rc = sending ? dlmc_send(l->d, &l->peer, 0, buf, len)
				 : dlmc_recv(l->d, NULL, 0, DLMC_ANY_TAG, buf, len, &st);

		if (rc)
			fail(sending ? "send" : "recv", rc);
		if (!sending)
			l->peer = st.src;	/* the server learns the client */
		return;
	}
	for (size_t done = 0; done < len;) {
		ssize_t n = sending ? send(l->fd, (char *)buf + done, len - done, 0)
				    : recv(l->fd, (char *)buf + done, len - done, MSG_WAITALL);

		if (n <= 0)
			fail(sending ? "send" : "recv", n < 0 ? errno : EPIPE);
		done += (size_t)n;
	}
}

/* Both sides run the same sequence; the client starts each exchange. */
static void run(struct link *l, int client)
{
	uint8_t *buf = tool_alloc(BENCH_MAX);
	char ack = 1;

	for (size_t s = BENCH_MIN; s <= BENCH_MAX; s *= 4) {
		int iters = bench_iters(s), k = bench_stream(s);
		double t0, lat, bw;

		xfer(l, buf, s, client);	/* warm-up */
		xfer(l, buf, s, !client);
		t0 = tool_now();
		for (int i = 0; i < iters; i++) {
			xfer(l, buf, s, client);
			xfer(l, buf, s, !client);
		}
		lat = (tool_now() - t0) / iters / 2;
		t0 = tool_now();
		for (int i = 0; i < k; i++)
			xfer(l, buf, s, client);
		xfer(l, &ack, 1, !client);
		bw = (double)s * k / (tool_now() - t0);
		if (client)
			printf("%s size=%zu latency_us=%.1f bandwidth_MBps=%.2f\n",
			       l->name, s, lat * 1e6, bw / 1e6);
		fflush(stdout);
	}
	free(buf);
}

static int tcp_setup(struct link *l, const char *ip, const char *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	int one = 1, fd = socket(AF_INET, SOCK_STREAM, 0), s;

	a.sin_port = htons((uint16_t)tool_long(port));
	if (ip && inet_pton(AF_INET, ip, &a.sin_addr) != 1)
		fail("bad IPv4 address", EINVAL);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ip) {
		for (int i = 0; connect(fd, (struct sockaddr *)&a, sizeof(a)); i++) {
			if (i == 100)
				fail("connect", errno);
			usleep(50000);
		}
		s = fd;
	} else {
		if (bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 1))
			fail("listen", errno);
		s = accept(fd, NULL, NULL);
		if (s < 0)
			fail("accept", errno);
		close(fd);
	}
	setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	l->fd = s;
	l->name = "tcp";
	return 0;
}

int main(int argc, char **argv)
{
	struct link l = { .fd = -1 };
	const char *m = argc > 1 ? argv[1] : "";

	if (!strcmp(m, "tcp-server") && argc == 3) {
		tcp_setup(&l, NULL, argv[2]);
		run(&l, 0);
	} else if (!strcmp(m, "tcp-client") && argc == 4) {
		tcp_setup(&l, argv[2], argv[3]);
		run(&l, 1);
	} else if (!strcmp(m, "dlmc-server") && argc == 4) {
		l.d = tool_open(argv[2], argv[3]);
		l.name = "dlmc";
		run(&l, 0);
	} else if (!strcmp(m, "dlmc-client") && argc == 5) {
		l.d = tool_open(argv[2], argv[3]);
		l.peer = tool_addr(argv[4]);
		l.name = "dlmc";
		run(&l, 1);
		dlmc_flush(l.d, 10000);
	} else {
		fprintf(stderr, "usage: dlmc_bench dlmc-server IF EP | dlmc-client IF EP SERVER |"
			" tcp-server PORT | tcp-client IP PORT\n");
		return 2;
	}
	if (l.d)
		dlmc_close(l.d);
	if (l.fd >= 0)
		close(l.fd);
	return 0;
}
