// SPDX-License-Identifier: BSD-3-Clause
/*
 * dlmc_tool - drives the DLMC module in the VM tests.
 *
 *   dlmc_tool addr IF EP                 print this endpoint's address
 *   dlmc_tool send IF EP DST N SIZE...   send messages [$TNBC_DLMC_FIRST, N)
 *   dlmc_tool recv IF EP N SIZE...       receive and verify N messages
 *   dlmc_tool flood IF EP DST            send until killed
 *   dlmc_tool sink IF EP                 receive until killed
 *   dlmc_tool stats                      print the global counters
 *
 * Message i has length SIZE[i % count] and contents pattern_fill(i); the
 * receiver checks order (exactly once, in order), length and every byte.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../dlmc.h"
#include "pattern.h"
#include "tool_util.h"

static int cmd_addr(char **av)
{
	dlmc *d = tool_open(av[0], av[1]);
	char s[40];

	dlmc_addr_format(dlmc_self(d), s, sizeof(s));
	printf("%s\n", s);
	return dlmc_close(d) ? 1 : 0;
}

static size_t max_size(char **sizes, int n)
{
	size_t m = 0;

	for (int i = 0; i < n; i++)
		if (tool_size(sizes[i]) > m)
			m = tool_size(sizes[i]);
	return m;
}

/* TNBC_DLMC_FIRST: start a send at message i (a second sender continues). */
static long first_index(void)
{
	const char *s = getenv("TNBC_DLMC_FIRST");

	return s ? tool_long(s) : 0;
}

static int cmd_send(char **av, int ac)
{
	struct dlmc_addr dst = tool_addr(av[2]);
	long n = tool_long(av[3]);
	char **sizes = av + 4;
	int ns = ac - 4;
	uint8_t *buf = tool_alloc(max_size(sizes, ns));	/* checks every size */
	dlmc *d = tool_open(av[0], av[1]);
	int rc = 0;

	for (long i = first_index(); i < n && !rc; i++) {
		size_t len = tool_size(sizes[i % ns]);

		pattern_fill(buf, len, (uint32_t)i);
		rc = dlmc_send(d, &dst, (uint32_t)i, buf, len);
		if (rc)
			fprintf(stderr, "send %ld (%zu B): %s\n", i, len, dlmc_strerror(rc));
	}
	if (!rc) {
		rc = dlmc_flush(d, 60000);
		if (rc)
			fprintf(stderr, "flush: %s\n", dlmc_strerror(rc));
	}
	printf("sent %ld messages, rc %d\n", n, rc);
	dlmc_close(d);
	free(buf);
	return rc ? 1 : 0;
}

static int check_msg(long i, const uint8_t *buf, const struct dlmc_status *st,
		     size_t want)
{
	size_t bad;

	if (st->tag != (uint32_t)i) {
		fprintf(stderr, "message %ld: got tag %u (lost, duplicated or reordered)\n",
			i, st->tag);
		return 1;
	}
	if (st->len != want) {
		fprintf(stderr, "message %ld: %zu bytes, want %zu\n", i, st->len, want);
		return 1;
	}
	bad = pattern_check(buf, want, (uint32_t)i);
	if (bad != want) {
		fprintf(stderr, "message %ld (%zu B): byte %zu wrong\n", i, want, bad);
		return 1;
	}
	return 0;
}

/* TNBC_DLMC_LINGER_MS, default 1000. */
static unsigned int linger_ms(void)
{
	const char *s = getenv("TNBC_DLMC_LINGER_MS");

	return s ? (unsigned int)tool_long(s) : 1000;
}

static int cmd_recv(char **av, int ac)
{
	long n = tool_long(av[2]);
	char **sizes = av + 3;
	int ns = ac - 3;
	size_t cap = max_size(sizes, ns);
	uint8_t *buf = tool_alloc(cap);
	dlmc *d = tool_open(av[0], av[1]);
	struct dlmc_status st;
	uint64_t sum = 0;
	int rc = 0;

	for (long i = 0; i < n && !rc; i++) {
		size_t want = tool_size(sizes[i % ns]);

		rc = dlmc_recv(d, NULL, 0, DLMC_ANY_TAG, buf, cap, &st);
		if (rc) {
			fprintf(stderr, "recv %ld: %s\n", i, dlmc_strerror(rc));
			break;
		}
		rc = check_msg(i, buf, &st, want);
		sum ^= pattern_fnv(buf, st.len) + (uint64_t)i;
	}
	printf("received %ld messages, checksum %016llx, %s\n", n,
	       (unsigned long long)sum, rc ? "FAILED" : "all intact");
	/*
	 * Stay open a little: if our last ACK was lost, the sender resends its
	 * last frames and needs an endpoint here to acknowledge them (what
	 * TCP's TIME_WAIT does for its last ACK).
	 */
	usleep(linger_ms() * 1000);
	dlmc_close(d);
	free(buf);
	return rc ? 1 : 0;
}

static int cmd_flood(char **av)
{
	dlmc *d = tool_open(av[0], av[1]);
	struct dlmc_addr dst = tool_addr(av[2]);
	size_t len = 256 * 1024;
	uint8_t *buf = tool_alloc(len);

	for (uint32_t i = 0;; i++) {
		int rc = dlmc_send(d, &dst, i, buf, (i % 7) * len / 7);

		if (rc) {
			fprintf(stderr, "flood: %s\n", dlmc_strerror(rc));
			return 1;
		}
	}
}

static int cmd_sink(char **av)
{
	dlmc *d = tool_open(av[0], av[1]);
	size_t cap = 1 << 20;
	uint8_t *buf = tool_alloc(cap);

	for (;;) {
		int rc = dlmc_recv(d, NULL, 0, DLMC_ANY_TAG, buf, cap, NULL);

		if (rc && rc != -EMSGSIZE) {
			fprintf(stderr, "sink: %s\n", dlmc_strerror(rc));
			return 1;
		}
	}
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "";
	char **av = argv + 2;
	int ac = argc - 2;

	if (!strcmp(cmd, "addr") && ac == 2)
		return cmd_addr(av);
	if (!strcmp(cmd, "send") && ac >= 5)
		return cmd_send(av, ac);
	if (!strcmp(cmd, "recv") && ac >= 4)
		return cmd_recv(av, ac);
	if (!strcmp(cmd, "flood") && ac == 3)
		return cmd_flood(av);
	if (!strcmp(cmd, "sink") && ac == 2)
		return cmd_sink(av);
	if (!strcmp(cmd, "stats") && ac == 0)
		return tool_print_stats();
	fprintf(stderr, "usage: dlmc_tool addr|send|recv|flood|sink|stats ... (see source header)\n");
	return 2;
}
