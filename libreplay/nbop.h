/* SPDX-License-Identifier: BSD-3-Clause */
/* A transformed (early-returning) collective call in flight.
 *
 * Lifecycle (op->state; one owner at a time, nbop_set_state asserts each
 * transition):
 *
 *     NBOP_PLANNED ----(agreement says blocking)----> nbop_free
 *          |  application thread: plan sends, land its own block (its
 *          |  pages still open), arm the receive guard, copy sends
 *          v  progress_submit: the op and its guard pass to the progress thread
 *     NBOP_IN_FLIGHT   progress thread posts steps, lands sub-messages and
 *          |           opens them; the fault handler and release wrappers
 *          |           only wait for sub_done[] and open sub-messages
 *          v  the last guard sub-message has landed and the last send
 *          |  from the caller's own pages is done: the progress thread
 *          |  disarms both guards (their ranges leave the index)
 *     NBOP_RETIRED     no page of the call is guarded any more; sends from
 *          |           the copy or chunk collectives may still be in flight
 *          v  every step done
 *     NBOP_DONE        on the done list; the application thread reaps it
 *                      (accounts and nbop_free)
 *
 * Invariants: the guards are armed only in PLANNED (after arm) and
 * IN_FLIGHT; after submission only the progress thread disarms them; only the
 * application thread frees an op, and only a PLANNED or DONE one. A new
 * call whose pages meet a live guard waits for that op to reach RETIRED
 * (nbop_wait_retired) before arming its own guard, so a finished call's
 * ranges never block the next call on the same pages.
 *
 * The call is a schedule in the LibNBC sense, kept as data: receive steps
 * (one per sub-message, landing in a private shadow of the receive buffer;
 * a derived receive type's sub-messages land only their type map's bytes),
 * send steps (from a private copy of the send buffer, so the caller may
 * write it at once, or from the caller's own pages held read-only until
 * they are sent: send_guard.h), or, for the single-block operations, one non-blocking
 * collective per chunk. Every step carries the priority the profile gave
 * its sub-message; the progress thread starts them in that order. */
#ifndef TNBC_NBOP_H
#define TNBC_NBOP_H

#include "collective.h"
#include "guard.h"
#include "pieces.h"

#include <stdatomic.h>
#include <stdint.h>

struct tnbc_profile_site;

enum step_kind {
    STEP_RECV, STEP_SEND, STEP_CHUNK,
    STEP_TOKEN_IN,    /* node schedule: the previous rank of my node is done */
    STEP_TOKEN_OUT,   /* node schedule: tell the next rank of my node */
};

/* A per-source block travels as the bytes that fall in its first page
 * (head) and its last page (tail) where the receiver shares them with
 * another block or leaves them unguarded, and the rest (body) in pieces
 * (pieces.h). Head and tail are sent first; those in unguarded pages (the
 * receive buffer's partial first and last page) and in pages holding the
 * own block are waited for before the call returns (step.edge_wait), the
 * others as any piece, by the fault handler. The body is what overlaps. */
enum part { PART_BODY, PART_HEAD, PART_TAIL };

/* What a receiver asks of each sender, exchanged when the ranks agree on
 * a call: its vote, and how that sender's block is to be cut. Plain ints,
 * exchanged as EDGE_REQ_INTS MPI_INTs. */
struct edge_req {
    int vote;
    struct piece_cut cut;
    int nodes_hash;       /* the schedule this rank would follow: per-source
                             operations, the node schedule's (tokens.c);
                             chunked ones, the chunks' (op->order_hash) */
    int auto_key;         /* TNBC_AUTO: the call's site and operation
                             (autotune_key), and the site's phase; 0 else */
    int auto_phase;
};
#define EDGE_REQ_INTS ((int)(sizeof(struct edge_req) / sizeof(int)))

struct step {
    enum step_kind kind;
    int sub;              /* receive sub-message (a piece, for per-source
                             operations) it completes; -1 for sends */
    int part;             /* PART_BODY, or an edge part, sent first */
    int edge_wait;        /* a receive the call waits for before it returns
                             (op->edges_left): an edge part in an unguarded
                             page or in one holding the own block */
    int gated;            /* a send that waits for the node's token */
    const char *src;      /* sends: the bytes in the caller's buffer */
    int peer;
    int prio;             /* 0 = first */
    char *buf;            /* shadow or send copy, where this part starts */
    int count;
    MPI_Datatype type;
    long chunk_first;     /* STEP_CHUNK, chain piece: first element (and count) */
    int chain;            /* a bcast chain's piece (plan_chunked.c): a
                             receive counts toward its chunk (sub) */
    int after;            /* a relayed send: 1 + the index of the receive
                             it forwards (posted once that is done); 0 */
    int in_place;         /* a send from the caller's write-protected pages
                             (buf == src; send_guard.h), not from the copy */
    int posted, done;
};

enum nbop_state { NBOP_PLANNED, NBOP_IN_FLIGHT, NBOP_RETIRED, NBOP_DONE };

struct nbop {
    atomic_uint state;             /* enum nbop_state; a futex word */
    int subs_left;                 /* progress thread: guard sub-messages not landed */
    struct tnbc_args a;
    struct tnbc_call_layout layout;
    struct tnbc_layout pieces;     /* per-source: the receive side cut in pieces */
    struct tnbc_guard guard;       /* receive side, over nbop_guard_layout() */
    /* Send side (send_guard.h): the caller's send pages held read-only
     * while steps send from them instead of from a copy. */
    struct tnbc_guard send_guard;
    int sends_in_place;            /* progress thread: such steps not done */
    atomic_uint sends_pending;     /* futex word: 1 until the last of them is */
    atomic_llong send_wait_ns;     /* the program's waits for them (a write,
                                      a reuse, a release) */
    int64_t send_in_place_bytes;   /* what they send: not copied */
    int may_send_in_place;         /* set by the caller before the copy */
    MPI_Comm comm;                 /* private duplicate */
    int tag;
    char *shadow, *sendcopy;       /* private receive / send memory */
    char *vrecv, *vsend;           /* recvbuf / sendbuf as seen inside them */
    /* Derived datatypes: a receive type that is not dense (dtype.h) lands
     * by its runs only (land_typed.h), per sub-message's elements; a send
     * type that is not dense is packed (MPI_Pack) for per-source
     * operations, whose blocks then travel as bytes like dense ones. */
    struct typemap *rmap;          /* the receive type's runs; NULL: dense */
    char *packcopy;                /* a derived send type's packed blocks */
    long *send_at;                 /* per destination, its packed block's
                                      offset in packcopy; NULL: dense */
    int send_whole;                /* a receiver takes its block with its
                                      type (piece_cut.typed): the send copy
                                      is filled whole, the block sent typed */
    MPI_Datatype own_rtype, own_stype;  /* duplicates of derived types, which
                                      a.rtype/a.stype then are: the program
                                      may free its own once the call returned */
    int nsteps, cap_steps;
    struct step *steps;            /* sorted: receives first, then by prio */
    MPI_Request *reqs;             /* [nsteps] (room for cap_reqs) */
    int *completed;                /* [nsteps] MPI_Testsome's indices */
    int cap_reqs;
    int planned;                   /* steps ordered, arrays ready (once) */
    atomic_uint *sub_done;         /* futex words, one per guard sub-message */
    atomic_uint edges_left;        /* head/tail parts not landed (futex word) */
    atomic_uint started;           /* the progress thread started its first
                                      steps (futex word; progress_wait_started) */
    struct edge_req *want;         /* [comm_size] this rank's requests */
    int per_source;                /* steps are planned in two halves */
    int self_sub;                  /* this rank's own block, landed by the caller; -1 */
    int self_piece;                /* its piece (it travels as one) */
    int token_from, token_to;      /* node schedule neighbours, -1 if none */
    int nodes_hash;                /* of the site's node table; 0 if none */
    int token_ok;                  /* progress thread: my turn on the node */
    uint64_t turn_ns;              /* least length of my turn (tokens.c), 0: none */
    uint64_t turn_end_ns;          /* progress thread: when it may end, 0 until it began */
    const struct tnbc_profile_site *site_prio;
    int remaining;                 /* steps not done (progress thread only) */
    atomic_llong wait_ns;          /* time the program waited in faults */
    /* The progress thread's landings of remote pieces (nbop_step_landed);
     * read by the caller's thread after progress_take_done hands the op
     * back. */
    uint64_t land_ticks;
    int64_t land_bytes;
    int site_index;
    uint64_t entry_tick, return_tick;
    int64_t invocation;            /* the call's 0-based count at its site */
    int record;                    /* write a call row at reap time */
    int node_phase;
    int chain_left[64];            /* bcast chain: per chunk, pieces not received */
    unsigned order_hash;           /* chunked ops: the schedule every rank must share */
    int *scatter_cd;               /* scatter(v) at the root: per chunk, p counts
                                      then p displacements (nbop_scatter_chunk) */
    struct nbop *next;
};

/* The sub-messages the receive guard and sub_done[] count: the pieces of
 * per-source operations, the chunks of the others. */
const struct tnbc_layout *nbop_guard_layout(const struct nbop *op);

/* Builds this rank's side of the schedule: receive steps and the edge
 * requests in op->want (per-source operations), or the chunk steps. `site`
 * gives priorities and chunking; node_of the members' node map (comms.h).
 * Returns NULL with *why set when this call
 * cannot run early-returning here. */
struct nbop *nbop_create(const struct tnbc_args *a, const struct tnbc_profile_site *site,
                         MPI_Comm priv, const int *node_of, int tag, const char **why);
/* Per-source operations: adds the send steps, split as each destination
 * asked (got[d] is destination d's request). The node schedule is followed
 * only when every rank would follow the same one (the ranks may have been
 * sent to different sites of the profile, e.g. a root that gathers in
 * place at another line). Returns 0, or -1. */
int nbop_plan_sends(struct nbop *op, const struct edge_req *got);
/* Copies the send parts from the caller's buffer into the private copy,
 * highest priority first; where op->may_send_in_place, those that lie in
 * the send buffer's whole pages are sent from there instead, the pages
 * held read-only until they are sent (send_guard.h). Called before the
 * call is submitted to the progress thread (the submission's lock
 * publishes the bytes); the design overlaps the copy with the first
 * blocks, replay.c says why it does not. Returns the number of parts sent
 * in place. */
int nbop_copy_sends(struct nbop *op);
/* The tag a point-to-point step travels with. */
int nbop_step_tag(const struct nbop *op, const struct step *s);
/* Copies this rank's own block (per-source operations) from its send
 * buffer into the receive buffer; called by the application thread before
 * the guard is armed (nbop_arm then leaves the pages only it covers open). */
void nbop_land_self(struct nbop *op);
/* Blocks until every head/tail part has landed. */
void nbop_wait_edges(struct nbop *op);
/* Called by the progress thread when step i has completed: lands the
 * guard sub-message it received (if any) from the shadow, counts an edge
 * part, completes and opens the sub-message, or counts a send from the
 * caller's pages; retires the op (disarms its guards) after the last. */
void nbop_step_landed(struct nbop *op, int i);
/* Frees a PLANNED op (after disarming its guard) or a DONE one. */
void nbop_free(struct nbop *op);
/* Moves op from state `from` to `to` (asserted) and wakes waiters. */
void nbop_set_state(struct nbop *op, enum nbop_state from, enum nbop_state to);
/* Blocks until op has reached NBOP_RETIRED (or later). */
void nbop_wait_retired(struct nbop *op);
/* Waits until every earlier op whose guard (receive or send side) meets
 * the pages of `lay` has retired, so a new guard can be armed on them. */
void nbop_retire_overlapping(const struct tnbc_layout *lay);
/* Progress thread: counts the guard sub-messages still to land, and
 * retires the op (disarms its guards) when none is left and no send reads
 * the caller's pages. Called once at pickup; nbop_step_landed counts them
 * down. */
void nbop_pickup(struct nbop *op);
/* Marks guard sub-message `sub` complete and wakes waiters. */
void nbop_sub_complete(struct nbop *op, int sub);
/* Blocks (async-signal-safe) until guard sub-message `sub` is complete. */
void nbop_wait_sub(struct nbop *op, int sub);
/* Is guard sub-message `sub` complete? Async-signal-safe. */
int nbop_sub_is_done(const struct nbop *op, int sub);
/* Arms the receive guard of a PLANNED op over nbop_guard_layout(), with
 * `hook` for the fault path (g->user is the op), after waiting for every
 * earlier op whose guard meets those pages to retire. Sub-messages complete
 * by then (no step delivers them, or the own block) are open from the
 * start, and the pages only they cover are not protected. 1 when armed, 0
 * when nothing could be guarded. */
int nbop_arm(struct nbop *op, tnbc_guard_hook hook);
/* Would the guard keep anything from the program once the call returns?
 * 1 when some sub-message still to arrive lies wholly in the receive
 * buffer's whole pages (the own block, copied in by the call, does not
 * count), or when there is nothing to receive. 0 when every byte to come
 * lies in edge pages the guard leaves open, so the call would wait for
 * all its data: a buffer under two pages, or a derived receive type whose
 * blocks interleave across the whole buffer (a transpose through a
 * resized vector) in a buffer that does not start on a page. */
int nbop_guards_something(const struct nbop *op);
/* The receive sub-messages the program could read without a fault: those
 * with bytes in unguarded edge pages (all of them when nothing was armed):
 * chunks, per-source edge parts (nbop_wait_edges waits for them too) and
 * the whole blocks of a derived receive type that reach an edge page. Taken before the op is submitted
 * (then its guard's arrays may go at any time). A malloc'd list of *n
 * indices, NULL when out of memory. */
int *nbop_unguarded_subs(const struct nbop *op, int armed, int *n);

/* The reason nbop_create gives when an allocation failed (so the caller
 * can count it apart from unsupported forms). */
extern const char nbop_oom[];

/* Called once at start, before any op: body pieces of about piece_bytes
 * bytes (0: one per block; default PIECES_DEFAULT_BYTES), and the node
 * schedule (digest 000: one process's highest-priority blocks get the
 * node's network to themselves at a time): 1 to use the profile's node
 * phases (the default), 0 to ignore them. */
void nbop_configure(long piece_bytes, int node_schedule, double turn_pace);

/* Scatter(v): the counts and displacements (elements of the send type)
 * that chunk `c` (a step's peer) sends to each rank, at the root; NULL
 * elsewhere. Reduce_scatter(_block): every rank's count in chunk c, and
 * (displs[0]) where chunk c starts in the packed send copy. */
const int *nbop_scatter_counts(const struct nbop *op, int c);
const int *nbop_scatter_displs(const struct nbop *op, int c);

/* A datatype's extent in bytes. */
MPI_Aint nbop_extent(MPI_Datatype t);


#endif
