/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rt.h - the PDBP host runtime shared by its parts (internal).
 *
 * One MPI rank is one host. Its threads:
 *   receiver   - the only thread that receives: data blocks into the receive
 *                sub-pools, control messages (credits, answers, management);
 *   senders    - the thread pool that sends sealed send sub-pool blocks;
 *   writers    - one per pipe: moves queued sendData messages into the send
 *                sub-pool of the destination host, or straight to a local GP;
 *   manager    - on the management nodes: heartbeats and failover.
 * Pool, pipe and GP state is guarded by rt.mu; no MPI call is made with it
 * held, so a blocked MPI call never stalls the other threads, and no user
 * data is copied with it held: a copy into a block reserves its record under
 * the lock and fills it after (the block is not sent while copies are in
 * flight).
 */
#ifndef PDBP_RT_H
#define PDBP_RT_H

#include <mpi.h>
#include <pthread.h>
#include <stdint.h>

#include "cfg.h"
#include "dev.h"
#include "pdbp.h"
#include "pool.h"
#include "proto.h"

#define PDBP_TAG_DATA 1
#define PDBP_TAG_CTRL 2
#define PDBP_TAG_HEAD 3            /* first piece of a block sent in pieces */
#define PDBP_TAG_MORE 4            /* its following pieces, in order */
#define PDBP_MAX_GP   256          /* GPs per host */
#define PDBP_NPEND    64           /* control requests waiting at once */

#define GP_HOST(g)  ((int)((uint32_t)(g) >> 16))
#define GP_INDEX(g) ((int)((g) & 0xffff))

/* A record delivered to a GP's read pipe; points into a receive block. */
struct pdbp_rq {
    struct pdbp_rq *next;
    int row;                 /* receive sub-pool (source host) */
    uint32_t slot;
    const uint8_t *data;
    uint32_t len;
    pdbp_gp_t src;
};

struct pdbp_gpent {
    int used;
    char name[PDBP_NAME_MAX];
    int kind;
    const struct pdbp_dev_ops *dev;
    int pipe;                /* bound pipe or -1 */
    struct pdbp_rq *head, *tail;
    pthread_cond_t cv;       /* a record arrived */
};

/* A message waiting in a write pipe. */
struct pdbp_wq {
    struct pdbp_wq *next;
    pdbp_gp_t src, dst;
    uint32_t len;
    uint8_t data[];
};

enum { PIPE_FREE = 0, PIPE_BOUND = 1 };

struct pdbp_pipe {
    int state;
    pdbp_gp_t gp;
    struct pdbp_wq *head, *tail;
    size_t bytes;            /* queued in the write pipe */
    int writing;             /* the writer holds a message */
    int direct;              /* sendData copies straight into a send block */
    int quit;
    uint32_t uses;           /* times bound (pipe reuse) */
    pthread_t writer;
    pthread_cond_t cv_work, cv_room;
};

/* Management-node tables (host table in hinfo; GP bindings in names). */
struct pdbp_name {
    char name[PDBP_NAME_MAX];
    pdbp_gp_t gp;
    int pipe;
};

struct pdbp_pend {
    uint32_t reqid;
    int done, status, value;
};

struct pdbp_rt {
    int inited, own_mpi;
    MPI_Comm comm, bcomm;    /* traffic / barrier, both dups of WORLD */
    int host, nhosts;
    struct pdbp_cfg cfg;
    pthread_mutex_t mu;

    /* DDBP */
    struct pdbp_umb umb;
    struct pdbp_row *sm, *rm; /* [nhosts] send / receive sub-pools */
    int *open;               /* [nhosts] send element being packed, or -1 */
    pdbp_gp_t *last_src, *last_dst; /* [nhosts] route of the open block's last record */
    uint32_t *credits;       /* [nhosts] receive elements granted by host j */
    uint32_t *seq;           /* [nhosts] blocks sent to host j */
    uint8_t *row_busy;       /* [nhosts] a sender is posting a block of this row */
    uint32_t *inflight;      /* [nhosts] blocks posted (MPI_Isend) to host j, not yet complete */
    uint32_t *pfill;         /* [nhosts] fill of the open block when last looked at */
    double *pfill_t;         /* [nhosts] when that fill was first seen */
    uint32_t *unacked;       /* [nhosts] blocks posted to j whose credit has not come back */
    double *ack_t;           /* [nhosts] last block posted to j or credit from j */
    int cur_dst;             /* destination the senders serve first (xfer.c) */
    double cur_idle;         /* since when nothing was added to it (-1: not looked) */
    uint32_t cur_fill;       /* fill of its open block when last looked at */
    pthread_cond_t cv_send, cv_space;
    pthread_t receiver, manager, *senders;
    int stop_senders, stop_manager, send_stops;
    int hold_senders;        /* test hook: senders post nothing while set */

    /* pipes and GPs */
    struct pdbp_pipe *pipes;
    struct pdbp_gpent gps[PDBP_MAX_GP];
    const struct pdbp_dev_ops *sgp_dev;

    /* control */
    pthread_cond_t cv_ctrl;
    struct pdbp_pend pend[PDBP_NPEND];
    uint32_t next_reqid;
    int mnode;               /* host acting as management node */
    int mnode_failed;        /* test hook: this host's management service is dead */
    double last_hb;          /* backup: time of the last heartbeat */
    int nhinfo;
    struct pdbp_hinfomsg *hinfo; /* [nhosts], on management nodes */
    uint8_t *hseen;
    struct pdbp_name *names;
    int nnames, names_cap;

    struct pdbp_stats st;
};

extern struct pdbp_rt pdbp_rt;

/* time.c-style helper */
double pdbp_now(void);
void pdbp_deadline(struct timespec *ts, int ms);

/* control messages (mnode.c) */
int pdbp_ctrl_send(int dest, const void *buf, size_t n);
int pdbp_ctrl_call(int dest, const void *buf, size_t n, uint32_t reqid,
                   int timeout_ms, int *status, int *value);
uint32_t pdbp_new_reqid(void);
void pdbp_on_ctrl(int src, const uint8_t *buf, int n);
int pdbp_mnode_call(uint8_t *buf, size_t n, uint32_t reqid, int *status,
                    int *value);
int pdbp_init_sequence(void);
int pdbp_manager_start(void);
void pdbp_manager_stop(void);
void pdbp_mnode_free(void);

/* data path (xfer.c) */
int pdbp_xfer_start(void);
void pdbp_xfer_stop(void);
void pdbp_receiver_stop(void);
int pdbp_put_remote(pdbp_gp_t src, pdbp_gp_t dst, const void *data, uint32_t len);
uint8_t *pdbp_reserve_remote(pdbp_gp_t src, pdbp_gp_t dst, uint32_t len,
                             uint32_t *slot);
void pdbp_reserve_done(pdbp_gp_t dst, uint32_t slot);
int pdbp_put_local(pdbp_gp_t src, pdbp_gp_t dst, const void *data, uint32_t len);
void pdbp_consumed(int row, uint32_t slot);
int pdbp_drain_sends(int timeout_ms);
void pdbp_reject(int src, const char *what, const char *why);

/* pipes (pipe.c) */
int pdbp_pipes_start(void);
void pdbp_pipes_stop(void);

/* test hooks (used by the MPI tests only) */
int pdbp_test_inject(int host, int tag, const void *buf, size_t n);
void pdbp_test_fail_mnode(void);
void pdbp_test_hold_senders(int on);

#endif
