/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tnbc profile: what the analyzer decided for each collective call site,
 * read by the replay runtime. The file format is profiles/FORMAT.md.
 *
 * Shared by tnbc-analyze (writer) and libtnbc-replay (reader). No function
 * here exits or prints: every failure comes back as -1/NULL with a one-line
 * message in the caller's buffer, "FILE:LINE: what is wrong".
 *
 * Priorities are small integers, 0 = highest (the block read first).
 * A priority of -1 means "no such block" (e.g. a gather's non-root ranks
 * receive nothing, and send only to the root).
 */
#ifndef TNBC_PROFILE_H
#define TNBC_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#define TNBC_PROFILE_VERSION 1
#define TNBC_PROFILE_ERRLEN 512 /* enough for any message of this library */

/* How the receive order of a site was chosen. */
enum tnbc_order_kind {
    TNBC_ORDER_CONSENSUS, /* all ranks (and invocations) agree well enough */
    TNBC_ORDER_PER_RANK,  /* ranks disagree; stable per-rank orders kept */
    TNBC_ORDER_DEFAULT    /* no stable order: the operation's default order */
};

/* The design's model (digest 000, eq. 1 and 3). Times in ns, rates in
 * bytes per second; INFINITY where a term is unbounded (no touch at all:
 * TCURC; a single touch or all touches at once: RCRC). */
struct tnbc_model {
    double tcomm_ns;      /* blocking collective time (median) */
    double dcomm;         /* receive bytes per call (median) */
    double rcomm;         /* dcomm / tcomm */
    double tcurc_ns;      /* return -> first touch of received data (median) */
    double rcrc;          /* rate the code consumes received data (median) */
    double tinit_ns;      /* early-return cost: copy + guard + faults + edges */
    double toverlap_ns;   /* min(tcomm - tinit, tcurc + tcomm*rcomm/rcrc), >= 0 */
    double saving_call_ns;/* predicted saving per call: toverlap, or less (slowest rank, CPU share) */
    double saving_run_ns; /* per call times the site's calls per rank */
    char regime;          /* 'a'..'e' as in the design's Figure 1 */
};

/* A self-tuning run's in-run comparison (libreplay/autotune.c): the
 * cycle from one call's entry to the next call's, the slowest rank's,
 * after calls that went early and after calls run blocking to check. */
struct tnbc_measured {
    int64_t early;           /* calls that went early */
    int64_t checked;         /* calls run blocking to check */
    double cycle_early_ns;   /* median cycle after early calls (last window) */
    double cycle_blocking_ns;/* median cycle after checking calls (last window) */
    double saving_call_ns;   /* cycle_blocking_ns - cycle_early_ns (may be < 0) */
    double z;                /* Mann-Whitney z of "early is faster" (last window) */
};

/* One node (host) of a site's communicator: its ranks in the order they
 * get the node's network (phase 0 first). Present only for per-source
 * operations whose ranks share a node. */
struct tnbc_profile_node {
    char *host;
    int nranks;
    int *ranks; /* ranks in the communicator, phase order */
};

struct tnbc_profile_site {
    char *site;          /* call-site id, the trace's `site` (module+0xOFF...) */
    char *op;            /* "alltoall", "bcast", ... as in the trace schema */
    int line;            /* line of its `site` header in the file */
    int comm_size;
    int64_t block_bytes; /* per-source ops: bytes per source block, -1 for the
                            v-variants (sizes may vary call to call);
                            single-block ops: the whole block (the call's
                            receive bytes), -1 where it varies by rank */
    int chunks;          /* m for single-block ops (bcast, allreduce, reduce,
                            scatter, scatterv), else 0 */
    int nsub;            /* receive sub-messages: chunks, or comm_size */
    int64_t calls;       /* invocations per rank (max over ranks) */
    int64_t traced;      /* traced invocations per rank (max over ranks) */
    int on;              /* decision: 1 = run non-blocking, 0 = blocking */
    char *reason;        /* why, one line */
    enum tnbc_order_kind order_kind;
    int *order;          /* [nsub] block indices, first-read first */
    double agree_identical; /* fraction of traced orders identical to it */
    double agree_tau;       /* mean Kendall tau of traced orders against it */
    int64_t samples;        /* traced orders the agreement is over */
    int **rank_order;    /* [comm_size], NULL where the rank uses `order` */
    /* Priorities: use tnbc_profile_recv_prio/send_prio. Per-source ops hold
     * one row per rank ([comm_size * nsub], [comm_size * nsend]); chunked
     * ops one row shared by every rank ([nsub], [nsend]): chunk j's priority
     * at every receiver and at every sender/forwarder. */
    int *recv_prio;
    int *send_prio;
    int nsend;           /* comm_size for per-source ops, chunks otherwise */
    int nvhash;          /* v-variants: ranks with stable per-source sizes */
    int *vhash_rank;     /* [nvhash] */
    uint64_t *vhash;     /* [nvhash] tnbc_profile_vhash of those sizes */
    int nnodes;
    struct tnbc_profile_node *nodes;
    struct tnbc_model model;
    /* The analyzer's confidence in the trace (written as a comment line,
     * so readers need not know it): set when has_confidence. */
    int has_confidence;
    double confidence, fid_observer_share, fid_steps;
    int64_t fid_dropped;
    /* What a self-tuning run (tnbc auto) measured while the site was on:
     * set when has_measured (the optional `measured` line). */
    int has_measured;
    struct tnbc_measured measured;
    /* A site whose receive block size varied between traced calls where
     * the operation has one size per call (block_bytes -1 then): the
     * smallest and largest traced sizes, the optional `block_range` line;
     * set when has_block_range. tnbc_profile_check accepts sizes within a
     * factor TNBC_PROFILE_RANGE_SLACK of them. Invariant when set:
     * block_bytes == -1 and 0 <= block_min <= block_max. */
    int has_block_range;
    int64_t block_min, block_max;
    /* The optional `trial` line: the site is off by the model's timing
     * alone (not for safety, size or the machine), so a trial run
     * (TNBC_REPLAY_TRIAL=1) runs it as if on, half its calls blocking,
     * and `tnbc analyze --measured` decides it from what that run timed.
     * It means something only while the site is off: the reader drops a
     * `trial` line on a site that is on (left by a hand edit of its
     * decision), and the writer writes none there. */
    int trial;
    int trial_line;      /* the reader saw a `trial` line (only one is allowed) */
};

/* How far outside its traced sizes (`block_range`) a running call's block
 * may be and still be taken for the site: the model's terms scale with the
 * bytes, and stand for sizes near those the trace saw. */
#define TNBC_PROFILE_RANGE_SLACK 2

/* The piece size (bytes) of a profile without a `piece` line: the one
 * every analyzer before that line assumed (libreplay/pieces.h's
 * PIECES_DEFAULT_BYTES). At most TNBC_PROFILE_PIECE_MAX. */
#define TNBC_PROFILE_PIECE_DEFAULT 32768L
#define TNBC_PROFILE_PIECE_MAX (1L << 30)

struct tnbc_profile {
    char *path;          /* as given to load (for messages) */
    int version;
    int world_size;
    char *source;        /* trace database it was made from (informational) */
    char *program;       /* "NAME ID" of the first `# program NAME ID` comment, or NULL */
    long piece_bytes;    /* body piece size the analyzer assumed (`piece` line;
                            TNBC_PROFILE_PIECE_DEFAULT when absent) */
    int nsites;
    struct tnbc_profile_site *sites;
    /* Open-addressing hash set of site indices by (site, op), built by the
     * reader (index_cap a power of two); NULL: tnbc_profile_find scans. */
    int *index;
    size_t index_cap;
};

/* The hash of (site, op) that the index is built with. */
uint64_t tnbc_profile_site_hash(const char *site, const char *op);

/* Read a profile file. NULL on error with "PATH:LINE: ..." in err. */
struct tnbc_profile *tnbc_profile_load(const char *path, char *err, size_t errlen);

/* Parse a profile held in memory; name stands for the file in messages.
 * Never reads past buf[len-1]; a NUL inside the buffer is an error. */
struct tnbc_profile *tnbc_profile_parse(const char *buf, size_t len, const char *name,
                                        char *err, size_t errlen);

void tnbc_profile_free(struct tnbc_profile *p);

/* The site with this id and op, or NULL. */
const struct tnbc_profile_site *tnbc_profile_find(const struct tnbc_profile *p,
                                                  const char *site, const char *op);

/* Does the running call match the site? block_bytes as in the site's
 * field: bytes per source block for per-source ops (anything for v-variants,
 * whose profile says -1), the call's whole receive bytes for single-block
 * ops; -1 where the call has no such size (it receives nothing, or a
 * v-variant). A site with a `block_range` takes sizes within a factor
 * TNBC_PROFILE_RANGE_SLACK of it. src_bytes: this rank's per-source receive bytes for v-variants
 * (checked against the rank's vhash when the profile has one), else NULL.
 * 0 if it matches; -1 with "PATH:LINE: site S op: ...; running it blocking"
 * in err, and the caller runs that call blocking. */
int tnbc_profile_check(const struct tnbc_profile *p, const struct tnbc_profile_site *s,
                       int comm_size, int64_t block_bytes, int rank,
                       const int64_t *src_bytes, char *err, size_t errlen);

/* Priority (0 = highest, -1 = no block) of receive block `idx` at `rank`,
 * and of the block `rank` sends to destination (or chunk) `j`. */
int tnbc_profile_recv_prio(const struct tnbc_profile_site *s, int rank, int idx);
int tnbc_profile_send_prio(const struct tnbc_profile_site *s, int rank, int j);

/* Phase of `rank` within its node (0 = gets the network first); 0 when the
 * site has no node schedule or the rank is alone on its node. */
int tnbc_profile_node_phase(const struct tnbc_profile_site *s, int rank);

/* FNV-1a 64 over the sizes as 8-byte little-endian integers (FORMAT.md). */
uint64_t tnbc_profile_vhash(const int64_t *bytes, int n);

/* p as the text tnbc_profile_write writes, in memory (malloc'd, *len
 * bytes, NUL-terminated); NULL when out of memory. */
char *tnbc_profile_text(const struct tnbc_profile *p, size_t *len);

/* Write p to path (atomically: PATH.tmp then rename). 0 or -1 with err. */
int tnbc_profile_write(const struct tnbc_profile *p, const char *path, char *err,
                       size_t errlen);

/* 1 for the single-block ops the trace splits into chunks, else 0. */
int tnbc_profile_op_is_chunked(const char *op);
/* 1 for an op name of the trace schema, else 0. */
int tnbc_profile_op_known(const char *op);

#endif
