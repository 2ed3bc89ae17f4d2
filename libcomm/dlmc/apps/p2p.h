/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * p2p.h - the point-to-point calls the two applications need, over either
 * the DLMC channel or plain MPI (Open MPI picks its own transport, e.g. the
 * TCP BTL), so the same program measures both.
 *   --transport=dlmc|mpi  (default: $TNBC_P2P, else mpi)
 */
#ifndef TNBC_DLMC_P2P_H
#define TNBC_DLMC_P2P_H

#include <stddef.h>
#include "../chan.h"

struct p2p {
	int rank, size;
	int use_dlmc;
	dlmc_chan *ch;
};

/* Calls MPI_Init; removes --transport from argv.  Exits on error. */
void p2p_init(struct p2p *p, int *argc, char ***argv);
void p2p_send(struct p2p *p, int dst, int tag, const void *buf, size_t len);
void p2p_recv(struct p2p *p, int src, int tag, void *buf, size_t len);
const char *p2p_name(const struct p2p *p);
/* A positive count from the command line; exits with a message if not. */
long p2p_count(const char *s);
/* Parses "-r REPEATS" (default def); returns the index of the first size. */
int p2p_options(int argc, char **argv, long *reps, long def);
void p2p_finalize(struct p2p *p);

#endif
