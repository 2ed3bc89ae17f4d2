/* A transformed (early-returning) collective call in flight.
 *
 * The call is a schedule in the LibNBC sense, kept as data: receive steps
 * (one per sub-message, landing in a private shadow of the receive buffer),
 * send steps (from a private copy of the send buffer, so the caller may
 * write it at once), or, for the single-block operations, one non-blocking
 * collective per chunk. Every step carries the priority the profile gave
 * its sub-message; the progress thread starts them in that order. */
#ifndef TNBC_NBOP_H
#define TNBC_NBOP_H

#include "collective.h"
#include "guard.h"

#include <stdatomic.h>
#include <stdint.h>

struct tnbc_profile_site;

enum step_kind { STEP_RECV, STEP_SEND, STEP_CHUNK };

struct step {
    enum step_kind kind;
    int sub;              /* receive sub-message it completes; -1 for sends */
    int peer;
    int prio;             /* 0 = first */
    char *buf;            /* shadow or send copy, at the block's start */
    int count;
    MPI_Datatype type;
    long chunk_first;     /* STEP_CHUNK: first element and count */
    int posted, done;
};

struct nbop {
    struct tnbc_args a;
    struct tnbc_call_layout layout;
    struct tnbc_guard guard;       /* receive side */
    MPI_Comm comm;                 /* private duplicate */
    int tag;
    char *shadow, *sendcopy;       /* private receive / send memory */
    char *vrecv, *vsend;           /* recvbuf / sendbuf as seen inside them */
    int nsteps;
    struct step *steps;            /* sorted: receives first, then by prio */
    MPI_Request *reqs;             /* [nsteps] */
    atomic_uint *sub_done;         /* futex words, one per receive sub */
    int remaining;                 /* steps not done (progress thread only) */
    atomic_llong wait_ns;          /* time the program waited in faults */
    int site_index;
    uint64_t entry_tick, return_tick;
    int record;                    /* write a call row at reap time */
    int node_phase;
    struct nbop *next;
};

/* Builds the schedule. `site` gives priorities and chunking. Returns NULL
 * with *why set when this call cannot run early-returning. */
struct nbop *nbop_create(const struct tnbc_args *a, const struct tnbc_profile_site *site,
                         MPI_Comm priv, int tag, const char **why);
void nbop_free(struct nbop *op);
/* Marks receive sub-message `sub` complete and wakes waiters. */
void nbop_sub_complete(struct nbop *op, int sub);
/* Blocks (async-signal-safe) until receive sub-message `sub` is complete. */
void nbop_wait_sub(struct nbop *op, int sub);

/* Exact reductions only: 1 when the blocking and the chunked non-blocking
 * algorithms must give bit-identical results for this type and op. */
int nbop_reduction_is_exact(MPI_Datatype type, MPI_Op op);

#endif
