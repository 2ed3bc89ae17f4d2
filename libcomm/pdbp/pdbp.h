/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pdbp.h - Pipe Dynamic Buffer Pool: streams between generalized processes
 * (GPs) over MPI without writing MPI.
 *
 * Model (design paper 003):
 *   host  = one MPI rank running the PDBP runtime (pools, threads, pipes);
 *   GP    = a generalized process registered on a host: NGP (CPU memory) or
 *           SGP (device memory, copied through the device interface pdbp_dev.h);
 *   pipe  = borrowed from the host's pipe pool while a GP communicates: a write
 *           side (served by a writer thread) and a read side.
 *
 * Typical use, on every host:
 *
 *   pdbp_init(&argc, &argv);                  // collective: init sequence
 *   prcsReg("cam0", PDBP_NGP, &me);
 *   pdbp_lookup("sink", &peer, 5000);          // name -> GP id (management node)
 *   prcsApplyPipe(me, &p);
 *   sendData(p, peer, buf, len);               // copies; returns when queued
 *   recvData(p, &src, buf, cap, &len, -1);     // waits for the next message
 *   prcsReleasePipe(me, p);
 *   prcsFree(me);
 *   pdbp_finalize();                           // collective
 *
 * Every call returns PDBP_OK (0) or a negative enum pdbp_rc; pdbp_strerror()
 * names it. Messages between two GPs arrive in the order they were sent.
 * Thread safety: any thread may call any function after pdbp_init; a GP
 * typically sends from one thread and receives from another on its pipe
 * (a GP that only sends while its peer only sends would block once the
 * pools are full, exactly like two blocking MPI_Sends).
 *
 * sendData copies buf (through the device interface for an SGP) into the
 * pipe and returns; it waits only when the write pipe or the pools are full
 * (back-pressure). A message is at most pdbp_max_message() bytes.
 * recvData: *src on entry selects the sender (PDBP_ANY: any; src NULL: any),
 * on return names it; timeout_ms -1 waits forever, 0 polls. A message larger
 * than cap stays queued, *len tells its size and PDBP_E_TRUNC is returned.
 */
#ifndef PDBP_H
#define PDBP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Global GP id: host << 16 | index on that host. */
typedef int32_t pdbp_gp_t;
/* Pipe handle: host-local index into the pipe table. */
typedef int32_t pdbp_pipe_t;

#define PDBP_ANY      ((pdbp_gp_t)-1)  /* recvData: from any source GP */
#define PDBP_NAME_MAX 48               /* GP name length, including NUL */

enum pdbp_gp_kind {
    PDBP_NGP = 0, /* normal GP: buffers are host memory */
    PDBP_SGP = 1, /* stream GP: buffers are device memory */
};

enum pdbp_rc {
    PDBP_OK         = 0,
    PDBP_E_ARG      = -1,  /* bad argument (NULL, unknown handle, bad kind) */
    PDBP_E_STATE    = -2,  /* not initialized, or already */
    PDBP_E_NOPIPE   = -3,  /* the pipe pool has no free pipe */
    PDBP_E_TOOBIG   = -4,  /* message larger than pdbp_max_message() */
    PDBP_E_NOTFOUND = -5,  /* no GP with that name */
    PDBP_E_TIMEOUT  = -6,  /* nothing arrived in time */
    PDBP_E_PROTO    = -7,  /* malformed message (rejected) */
    PDBP_E_MPI      = -8,  /* an MPI call failed */
    PDBP_E_NOMEM    = -9,  /* out of memory */
    PDBP_E_TRUNC    = -10, /* recvData buffer too small; message kept */
    PDBP_E_LIMIT    = -11, /* configured block limit too small */
    PDBP_E_DEVICE   = -12, /* device transfer failed */
};

/* Host runtime: collective over MPI_COMM_WORLD. Calls MPI_Init_thread
 * (MPI_THREAD_MULTIPLE) when MPI is not yet initialized, and then
 * pdbp_finalize() calls MPI_Finalize. Runs the initialization sequence with
 * the management nodes (hosts 0 and 1). */
int pdbp_init(int *argc, char ***argv);
int pdbp_finalize(void);

/* The six calls of the communication programming interface (CPI). */
int prcsReg(const char *name, int kind, pdbp_gp_t *gp);
int prcsApplyPipe(pdbp_gp_t gp, pdbp_pipe_t *pipe);
int sendData(pdbp_pipe_t pipe, pdbp_gp_t dst, const void *buf, size_t len);
int recvData(pdbp_pipe_t pipe, pdbp_gp_t *src, void *buf, size_t cap,
             size_t *len, int timeout_ms);
int prcsReleasePipe(pdbp_gp_t gp, pdbp_pipe_t pipe);
int prcsFree(pdbp_gp_t gp);

/* Name service of the management node; waits up to timeout_ms (-1: forever)
 * for the name to be registered. Survives a management-node failover. */
int pdbp_lookup(const char *name, pdbp_gp_t *gp, int timeout_ms);

/* Waits until every message sendData queued on the pipe has left the host
 * (remote) or reached the destination's read pipe (local). */
int pdbp_flush(pdbp_pipe_t pipe);

int pdbp_host(void);          /* this host's index, or -1 */
int pdbp_nhosts(void);        /* hosts in the communication domain */
size_t pdbp_max_message(void);
const char *pdbp_strerror(int rc);

struct pdbp_stats {
    uint64_t pool_bytes;      /* user memory blocks allocated on this host */
    uint32_t blocks;          /* blocks allocated */
    uint32_t blocks_limit;    /* configured limit (TNBC_PDBP_MAX_BLOCKS) */
    uint32_t limit_hits;      /* growths refused because the limit was hit */
    uint32_t grows;           /* sub-pool growths by the threshold algorithm */
    uint32_t send_real;       /* real elements over all send sub-pools */
    uint32_t recv_real;       /* real elements over all receive sub-pools */
    uint64_t rejected;        /* malformed messages rejected */
    uint64_t sent_msgs, recv_msgs, local_msgs;
    uint64_t waits;           /* times a sender waited for space (back-pressure) */
    int mnode;                /* host currently acting as management node */
    /* timing counters of the data path (cumulative since pdbp_init) */
    uint64_t blocks_sent;     /* blocks (RemoteMsgs) sent */
    uint64_t block_bytes_sent;/* their bytes: / blocks_sent = mean block fill */
    double send_mpi_s;        /* seconds from MPI_Isend of a block to its completion
                                 being seen, summed over blocks (they overlap) */
    uint64_t no_credit;       /* times a sender passed over a ready block: no credit */
    uint64_t blocks_recv;     /* blocks received */
    double recv_mpi_s;        /* seconds from MPI_Imrecv of a block to its
                                 completion being seen, summed (they overlap) */
    uint64_t direct_msgs;     /* sendData copied straight into a send block */
    uint32_t max_inflight;    /* most blocks in flight to one host at once */
    uint32_t max_recv_posted; /* most blocks from one host being received at once
                                 (receives posted, or assembled from pieces and
                                 queued behind them) */
};
int pdbp_get_stats(struct pdbp_stats *st);

#ifdef __cplusplus
}
#endif
#endif
