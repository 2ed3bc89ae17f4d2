/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * chan.h - MPI-style point-to-point channel over DLMC for ranks started by
 * mpirun.  MPI is used only to exchange endpoint addresses at start-up;
 * every message after that travels on DLMC frames.
 *
 * Environment:
 *   TNBC_DLMC_IF       interface(s), comma-separated; each rank binds the
 *                      first one present in its network namespace (required)
 *   TNBC_DLMC_EP_BASE  endpoint of rank 0; rank r uses base + r (default 1000)
 */
#ifndef TNBC_DLMC_CHAN_H
#define TNBC_DLMC_CHAN_H

#include <mpi.h>
#include <stddef.h>

#include "dlmc.h"

#define DLMC_CHAN_ANY	(-1)

typedef struct dlmc_chan dlmc_chan;

int dlmc_chan_init(MPI_Comm comm, dlmc_chan **out);
int dlmc_chan_rank(const dlmc_chan *c);
int dlmc_chan_size(const dlmc_chan *c);
int dlmc_chan_send(dlmc_chan *c, int dst, int tag, const void *buf, size_t len);
/* src/tag may be DLMC_CHAN_ANY; src_out/len_out may be NULL. */
int dlmc_chan_recv(dlmc_chan *c, int src, int tag, void *buf, size_t cap,
		   int *src_out, size_t *len_out);
int dlmc_chan_isend(dlmc_chan *c, int dst, int tag, const void *buf,
		    size_t len, struct dlmc_req *req);
int dlmc_chan_irecv(dlmc_chan *c, int src, int tag, void *buf, size_t cap,
		    struct dlmc_req *req);
int dlmc_chan_waitall(dlmc_chan *c, struct dlmc_req *reqs, int n);
/* Flush, synchronise all ranks, close.  Collective. */
int dlmc_chan_finalize(dlmc_chan *c);

#endif
