// SPDX-License-Identifier: BSD-3-Clause
/* tool_util.c - see tool_util.h. */
#include "tool_util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

static void die(const char *what, const char *arg)
{
	fprintf(stderr, "dlmc: %s: %s\n", what, arg);
	exit(2);
}

long tool_long(const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0)
		die("not a non-negative number", s);
	return v;
}

size_t tool_size(const char *s)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || s[0] == '-')
		die("bad size", s);
	if (*end == 'K' || *end == 'k')
		v <<= 10, end++;
	else if (*end == 'M' || *end == 'm')
		v <<= 20, end++;
	if (*end || v > (1ull << 30))
		die("bad size", s);
	return (size_t)v;
}

struct dlmc_addr tool_addr(const char *s)
{
	struct dlmc_addr a;

	if (dlmc_addr_parse(s, &a))
		die("bad address (want aa:bb:cc:dd:ee:ff/ep)", s);
	return a;
}

dlmc *tool_open(const char *ifname, const char *ep)
{
	long e = tool_long(ep);
	dlmc *d;
	int rc;

	if (e > 65535)
		die("endpoint out of range", ep);
	rc = dlmc_open(ifname, (uint16_t)e, &d);
	if (rc) {
		fprintf(stderr, "dlmc: open %s/%ld: %s\n", ifname, e, dlmc_strerror(rc));
		exit(1);
	}
	return d;
}

void *tool_alloc(size_t len)
{
	void *p = malloc(len ? len : 1);

	if (!p)
		die("out of memory", "");
	memset(p, 0, len);
	return p;
}

int tool_print_stats(void)
{
	static const char *names[] = {
		"tx_frames", "tx_retrans", "tx_acks", "rx_frames", "rx_acks",
		"rx_dup", "rx_outside", "rx_bad_csum", "rx_bad_hdr",
		"rx_bad_proto", "rx_no_ep", "rx_nomem", "inj_lost",
		"inj_corrupt", "msgs_sent", "msgs_recv",
	};
	struct dlmc_stats st;
	uint64_t *v = (uint64_t *)&st;
	int fd = open(DLMC_DEV_PATH, O_RDWR);

	_Static_assert(sizeof(names) / sizeof(names[0]) == sizeof(st) / 8,
		       "one name per counter");
	if (fd < 0 || ioctl(fd, DLMC_IOC_STATS, &st) < 0) {
		perror("dlmc: stats");
		return 1;
	}
	close(fd);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		printf("%s %llu\n", names[i], (unsigned long long)v[i]);
	return 0;
}

double tool_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}
