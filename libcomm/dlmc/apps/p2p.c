// SPDX-License-Identifier: BSD-3-Clause
/* p2p.c - see p2p.h.  Any failure aborts the job with a one-line message. */
#include "p2p.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void p2p_fail(const struct p2p *p, const char *what, int rc)
{
	fprintf(stderr, "rank %d: %s: %s\n", p->rank, what, dlmc_strerror(rc));
	MPI_Abort(MPI_COMM_WORLD, 1);
}

static int p2p_parse(const char *v)
{
	if (!strcmp(v, "dlmc"))
		return 1;
	if (!strcmp(v, "mpi"))
		return 0;
	fprintf(stderr, "p2p: transport '%s' unknown (want dlmc or mpi)\n", v);
	exit(2);
}

void p2p_init(struct p2p *p, int *argc, char ***argv)
{
	const char *env = getenv("TNBC_P2P");
	int i, j, rc;

	memset(p, 0, sizeof(*p));
	p->use_dlmc = env ? p2p_parse(env) : 0;
	for (i = j = 1; i < *argc; i++) {
		if (!strncmp((*argv)[i], "--transport=", 12))
			p->use_dlmc = p2p_parse((*argv)[i] + 12);
		else
			(*argv)[j++] = (*argv)[i];
	}
	*argc = j;
	MPI_Init(argc, argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &p->rank);
	MPI_Comm_size(MPI_COMM_WORLD, &p->size);
	if (p->use_dlmc) {
		rc = dlmc_chan_init(MPI_COMM_WORLD, &p->ch);
		if (rc)
			p2p_fail(p, "DLMC channel", rc);
	}
}

void p2p_send(struct p2p *p, int dst, int tag, const void *buf, size_t len)
{
	int rc;

	if (p->use_dlmc) {
		rc = dlmc_chan_send(p->ch, dst, tag, buf, len);
		if (rc)
			p2p_fail(p, "send", rc);
		return;
	}
	if (len > INT_MAX)
		p2p_fail(p, "send", -75 /* EOVERFLOW */);
	MPI_Send(buf, (int)len, MPI_BYTE, dst, tag, MPI_COMM_WORLD);
}

void p2p_recv(struct p2p *p, int src, int tag, void *buf, size_t len)
{
	size_t got = 0;
	int rc;

	if (p->use_dlmc) {
		rc = dlmc_chan_recv(p->ch, src, tag, buf, len, NULL, &got);
		if (rc)
			p2p_fail(p, "recv", rc);
		if (got != len)
			p2p_fail(p, "recv: short message", -5 /* EIO */);
		return;
	}
	MPI_Recv(buf, (int)len, MPI_BYTE, src, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

const char *p2p_name(const struct p2p *p)
{
	return p->use_dlmc ? "dlmc" : "mpi";
}

void p2p_finalize(struct p2p *p)
{
	if (p->use_dlmc) {
		int rc = dlmc_chan_finalize(p->ch);

		if (rc)
			p2p_fail(p, "finalize", rc);
	}
	MPI_Finalize();
}

long p2p_count(const char *s)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (end == s || *end || v <= 0) {
		fprintf(stderr, "'%s' is not a positive number\n", s);
		exit(2);
	}
	return v;
}

int p2p_options(int argc, char **argv, long *reps, long def)
{
	int opt;

	*reps = def;
	while ((opt = getopt(argc, argv, "r:")) != -1) {
		if (opt != 'r') {
			fprintf(stderr, "usage: %s [--transport=dlmc|mpi] [-r REPEATS] SIZE...\n",
				argv[0]);
			exit(2);
		}
		*reps = p2p_count(optarg);
	}
	return optind;
}
