// SPDX-License-Identifier: BSD-3-Clause
/*
 * chan.c - rank-addressed channel over the DLMC library (see chan.h).
 */
#include "chan.h"

#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct dlmc_chan {
	MPI_Comm comm;
	int rank, size;
	dlmc *d;
	struct dlmc_addr *peers;	/* indexed by rank */
};

/* First interface of the comma-separated list present here. */
static int chan_pick_if(const char *list, char *out, size_t size)
{
	char buf[256], *save = NULL, *tok;

	if (!list || !*list || strlen(list) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, list);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (strlen(tok) < size && if_nametoindex(tok)) {
			strcpy(out, tok);
			return 0;
		}
	}
	return -ENODEV;
}

static int chan_ep_base(long *base)
{
	const char *s = getenv("TNBC_DLMC_EP_BASE");
	char *end;

	*base = 1000;
	if (!s)
		return 0;
	errno = 0;
	*base = strtol(s, &end, 10);
	if (errno || end == s || *end || *base < 0 || *base > 65535) {
		fprintf(stderr, "tnbc dlmc: TNBC_DLMC_EP_BASE='%s' is not an endpoint number (0-65535)\n", s);
		return -EINVAL;
	}
	return 0;
}

static int chan_open(dlmc_chan *c)
{
	const char *list = getenv("TNBC_DLMC_IF");
	char ifname[DLMC_IFNAMSIZ];
	long base;
	int rc = chan_ep_base(&base);

	if (rc)
		return rc;
	if (base + c->rank > 65535) {
		fprintf(stderr, "tnbc dlmc: endpoint %ld + rank %d exceeds 65535\n", base, c->rank);
		return -EINVAL;
	}
	rc = chan_pick_if(list, ifname, sizeof(ifname));
	if (rc) {
		fprintf(stderr, "tnbc dlmc: TNBC_DLMC_IF='%s' names no interface here\n",
			list ? list : "");
		return rc;
	}
	rc = dlmc_open(ifname, (uint16_t)(base + c->rank), &c->d);
	if (rc)
		fprintf(stderr, "tnbc dlmc: rank %d: open %s: %s\n", c->rank, ifname,
			dlmc_strerror(rc));
	return rc;
}

int dlmc_chan_init(MPI_Comm comm, dlmc_chan **out)
{
	dlmc_chan *c = calloc(1, sizeof(*c));
	int rc, all;

	*out = NULL;
	if (!c)
		return -ENOMEM;
	c->comm = comm;
	MPI_Comm_rank(comm, &c->rank);
	MPI_Comm_size(comm, &c->size);
	c->peers = calloc((size_t)c->size, sizeof(*c->peers));
	rc = c->peers ? chan_open(c) : -ENOMEM;
	/* Everyone fails together rather than some ranks waiting forever. */
	MPI_Allreduce(&rc, &all, 1, MPI_INT, MPI_MIN, comm);
	if (all < 0) {
		dlmc_close(c->d);
		free(c->peers);
		free(c);
		return rc ? rc : all;
	}
	MPI_Allgather(dlmc_self(c->d), sizeof(struct dlmc_addr), MPI_BYTE,
		      c->peers, sizeof(struct dlmc_addr), MPI_BYTE, comm);
	*out = c;
	return 0;
}

int dlmc_chan_rank(const dlmc_chan *c) { return c->rank; }
int dlmc_chan_size(const dlmc_chan *c) { return c->size; }

static int chan_rank_of(const dlmc_chan *c, const struct dlmc_addr *a)
{
	for (int r = 0; r < c->size; r++)
		if (dlmc_addr_equal(&c->peers[r], a))
			return r;
	return -1;
}

static int chan_check_peer(const dlmc_chan *c, int r, int any_ok)
{
	return (r >= 0 && r < c->size) || (any_ok && r == DLMC_CHAN_ANY) ? 0 : -EINVAL;
}

int dlmc_chan_send(dlmc_chan *c, int dst, int tag, const void *buf, size_t len)
{
	if (chan_check_peer(c, dst, 0) || tag < 0)
		return -EINVAL;
	return dlmc_send(c->d, &c->peers[dst], (uint32_t)tag, buf, len);
}

int dlmc_chan_recv(dlmc_chan *c, int src, int tag, void *buf, size_t cap,
		   int *src_out, size_t *len_out)
{
	struct dlmc_status st;
	int rc;

	if (chan_check_peer(c, src, 1) || tag < DLMC_CHAN_ANY)
		return -EINVAL;
	rc = dlmc_recv(c->d, src == DLMC_CHAN_ANY ? NULL : &c->peers[src],
		       (uint32_t)tag, tag == DLMC_CHAN_ANY ? DLMC_ANY_TAG : 0,
		       buf, cap, &st);
	if (rc)
		return rc;
	if (src_out)
		*src_out = chan_rank_of(c, &st.src);
	if (len_out)
		*len_out = st.len;
	return 0;
}

int dlmc_chan_isend(dlmc_chan *c, int dst, int tag, const void *buf,
		    size_t len, struct dlmc_req *req)
{
	if (chan_check_peer(c, dst, 0) || tag < 0)
		return -EINVAL;
	return dlmc_isend(c->d, &c->peers[dst], (uint32_t)tag, buf, len, req);
}

int dlmc_chan_irecv(dlmc_chan *c, int src, int tag, void *buf, size_t cap,
		    struct dlmc_req *req)
{
	if (chan_check_peer(c, src, 1) || tag < DLMC_CHAN_ANY)
		return -EINVAL;
	return dlmc_irecv(c->d, src == DLMC_CHAN_ANY ? NULL : &c->peers[src],
			  (uint32_t)tag, tag == DLMC_CHAN_ANY ? DLMC_ANY_TAG : 0,
			  buf, cap, req);
}

int dlmc_chan_waitall(dlmc_chan *c, struct dlmc_req *reqs, int n)
{
	return dlmc_waitall(c->d, reqs, n);
}

int dlmc_chan_finalize(dlmc_chan *c)
{
	int rc;

	if (!c)
		return 0;
	rc = dlmc_flush(c->d, 30000);
	MPI_Barrier(c->comm);
	dlmc_close(c->d);
	free(c->peers);
	free(c);
	return rc;
}
