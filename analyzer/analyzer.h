/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tnbc-analyze internals: trace database -> per-site profile.
 *
 * Pipeline per (site, op): load its traced calls (tracedb.c), derive the
 * receive order and its agreement (order.c), the model terms (model.c),
 * the decision and chunking (decide.c), the priorities and the node
 * schedule (prio.c); analyze.c strings them together.
 */
#ifndef TNBC_ANALYZER_H
#define TNBC_ANALYZER_H

#include <stddef.h>
#include <stdint.h>

#include "pieces.h"   /* PIECES_DEFAULT_BYTES: a read in replay waits for this much */
#include "profile.h"
#include "tracedb.h"  /* TNBC_SCHEMA_VERSION: the one the libraries write */

/* Thresholds of the analysis (docs/analyzer.md says why these values). */
#define AN_STABLE_TAU 0.8      /* an order "explains" samples at this mean tau */
#define AN_RANK_GAIN 0.2       /* a rank's own order must beat the shared one by this */
#define AN_RANK_MIN_SAMPLES 2  /* ... on at least this many of its traced calls */
#define AN_NO_CURC 0.02        /* TCURC below this fraction of Tcomm: "no CURC" */
#define AN_MIN_GAIN 0.02       /* a saving below this fraction of Tcomm is not worth it */
#define AN_TINY_BYTES 256      /* break-even sub-message size (design, 6.1.1) */
#define AN_SMALL_BYTES 4096    /* above this most of the time can be hidden */
#define AN_MIN_CHUNK 4096      /* chunks are not made smaller than this */
/* What a trace may hold, beyond which a row is refused as damaged rather
 * than computed with: byte counts up to 1 PiB, clock ticks up to 2^62
 * (48 years at 3 GHz), so that sums and differences of them never
 * overflow an int64_t. */
#define AN_MAX_BYTES (INT64_C(1) << 50)
#define AN_MAX_TICKS (INT64_C(1) << 62)
#define AN_BLOCK_RANGE_MAX 4   /* one-size ops: block sizes up to this far apart share a decision */
/* Confidence (fidelity.c): the observer's share of the time after the call
 * and the single steps per call at which it reaches 0; below
 * AN_MIN_CONFIDENCE a site is turned off. */
#define AN_MAX_OBSERVER 1.0
#define AN_MAX_STEPS 1024.0
#define AN_MIN_CONFIDENCE 0.5

/* Per-rank facts from the `run` table. */
struct an_rank {
    int present;
    int trace_mode;  /* mode = 'trace' */
    int finished;
    double tsc_hz, copy_bw, mprotect_ns, fault_ns;
    int64_t page_size;
    char *host;
    int machine_ranks, machine_cpus; /* schema 3 (crowding.h); 0: not counted */
    double mprotect_page_ns, retouch_ns; /* schema 4 (guard.h); 0: not measured */
};

struct an_platform;

/* An early return measured in a replay run (the summary's early_cost,
 * read for --measured): per site and rank, the mean over its early calls
 * of the eight steps the call took before the program went on, the
 * agreement counted as the shortest over the site's ranks (the others'
 * is mostly their wait for the last member, which blocking has too). */
struct an_early {
    char *site, *op;
    int rank;
    double in_call_ns;
};

struct an_trace {
    void *db;        /* sqlite3 * */
    const char *path;
    /* Share of a CPU that communication in flight takes from the program
     * it overlaps (kernel TCP work, progress): a saving shrinks by it.
     * Measured by the user (tnbc-analyze --comm-cpu-share); 0: none. */
    double comm_cpu_share;
    /* Why the share is what it is, for a decision it turns off (tnbc auto:
     * the machine's ranks and CPUs); NULL: the user's --comm-cpu-share. */
    const char *comm_cpu_why;
    /* 1: a site whose members share one node of a crowded machine (the
     * trace's run rows, crowding.h) counts a share of 1, whatever
     * comm_cpu_share says: tnbc-analyze without --comm-cpu-share and
     * --platform (tnbc auto decides that rule itself). */
    int crowded_rule;
    /* 1: a site's saving is the smallest rank's (each rank's lower median
     * over its calls) rather than the critical path's (model.c): tnbc
     * auto, which learns from 2 calls and has no trial run after it. */
    int smallest_rank;
    /* --early-cost: the early return's steps that Tinit's terms do not
     * count (profile lookup, agreement, plan, own block landed, hand-off),
     * as measured with TNBC_REPLAY_PHASES; added to every call's Tinit. */
    double early_cost_ns;
    /* --measured: the early returns measured in that run (an_early_read);
     * a call of a listed site and rank takes its in-call part of Tinit from
     * there instead of from the model's terms and early_cost_ns. Owned. */
    struct an_early *early;
    int nearly;
    /* --platform: Tcomm projected onto it (platform.h); NULL: as traced. */
    const struct an_platform *platform;
    /* Every recorded call as (rank, entry, return), sorted (spans.c); NULL
     * without a database (tnbc auto's learned site). Owned. */
    struct an_span *spans;
    int nspans;
    int schema_version; /* meta's, 1 to TNBC_SCHEMA_VERSION */
    /* meta trace_tail_calls: a site's traced calls from this invocation
     * on watched no tail pages (struct an_tails); -1: every one did (a
     * trace made before the row). */
    int64_t tail_calls;
    int world_size;
    int nranks;      /* ranks present in `run` */
    struct an_rank *ranks; /* [world_size] */
};

/* One receive sub-message of a traced call, as read; only while its call
 * is being read: the call keeps a digest (an_call_digest). */
struct an_sub {
    int idx;
    int64_t bytes;
    char guard;      /* 'g'uarded, 'p'artial, 'e'dge, 'm' empty, 'o'ff */
    int touched;     /* has a first touch with an order */
    int64_t ord, tsc;
    int64_t tail_tsc; /* first touch of its last whole page (schema 5), 0: not seen */
    int need;        /* released by io/mpi/reuse/finalize: data needed at tsc */
    int near;        /* from a member on this rank's node while other members'
                      * data crosses a link: there at once (digest.c) */
};

struct an_call {
    int64_t call_id;
    int rank, invocation, comm_size, comm_rank, root, nsub, chunks;
    int64_t send_bytes, recv_bytes, block_bytes, entry_tsc, return_tsc;
    /* Digest of the receive sub-messages (digest.c), so that memory grows
     * with the touched blocks, not with every row of the trace. */
    int nrecv;           /* receive sub-messages recorded */
    int k;               /* of which touched by the code */
    int *seq;            /* [k] their indices, first touched first */
    double tcurc_ns, rcrc, tinit_ns; /* this call's model terms (model.c) */
    /* Its rank's early return at this site as measured in replay (the
     * eight steps, an_trace.early); NAN: not measured, the model's terms. */
    double measured_in_call_ns;
    double own_ns;       /* the overlap this rank can get (an_call_own_overlap), NAN: n/a */
    double reach_ns;     /* from return, when the plain run's rank went on to its next
                          * collective: the next recorded call's entry, at least its
                          * reading's end (digest.c); NAN where own_ns is */
    double proj_tcomm_ns; /* Tcomm on the --platform (platform.c); < 0: as traced */
    double last_tcomm_ns; /* the least time a member spent in this invocation
                           * (an_site_last_arrival); 0: this rank's own */
    int sizes_known;     /* nrecv == nsub with indices 0..nsub-1 */
    uint64_t vhash;      /* tnbc_profile_vhash of the sizes when known */
};

struct an_site {
    char *site, *op;
    int ncalls;
    struct an_call *calls;  /* sorted by rank, invocation */
    int64_t site_calls, site_traced; /* max over ranks from `site` */
    int64_t site_unsafe;  /* calls replay would run blocking for their datatype and op */
    int64_t site_unguardable; /* traced calls (most on one rank) whose receive
                                 buffer the guard may not protect */
    int64_t site_receiving; /* traced calls with data to receive (most on one
                               rank: a bcast's root receives nothing) */
    int64_t site_interleaved; /* traced calls (most on one rank) whose receive
                                 blocks interleave with none but the own one
                                 in whole protected pages: nothing to guard */
    int *world;           /* [nworld]: each member's world rank, -1 unknown (an_site_world) */
    int nworld;
    /* Under an_trace.crowded_rule, the members share a node of a crowded
     * machine (an_site_world): the words for the decision; "" otherwise. */
    char crowded[320];
};

/* spans.c: of a rank's program time between `from` and `to` (ticks), the
 * ticks inside recorded calls that began and ended in it. A trace's spans
 * are loaded from its call rows; others are added one by one and then
 * sorted (each (rank, entry, return) kept once) before the first query. */
int an_spans_load(struct an_trace *t);
int an_spans_add(struct an_trace *t, int rank, int64_t entry, int64_t ret);
void an_spans_sort(struct an_trace *t);
void an_spans_free(struct an_trace *t);
int64_t an_spans_within(const struct an_trace *t, int rank, int64_t from, int64_t to);
/* The entry of the rank's first recorded call at or after `from`; -1: none. */
int64_t an_spans_next_entry(const struct an_trace *t, int rank, int64_t from);

/* tracedb.c */
int an_trace_open(struct an_trace *t, const char *path, char *err, size_t errlen);
/* Whether the query gives a row (0 also when it cannot be prepared):
 * which tables and columns an older file has. */
int an_has_row(const struct an_trace *t, const char *sql);
/* A replay summary (tnbc run --summary, merged): the same schema, every
 * rank in replay mode. */
int an_replay_open(struct an_trace *t, const char *path, char *err, size_t errlen);
/* A measured run's site rows where no rank's call went early: *calls the
 * most calls of a rank, and into fb the fallback counts ('reason:N ...',
 * docs/schema.md) of the rank with the most. 1 when the site was called
 * and no call went early, 0 when some went early or there is no row, -1
 * with err. */
int an_site_never_early(struct an_trace *t, const char *site, const char *op, int64_t *calls,
                        char *fb, size_t fblen, char *err, size_t errlen);
/* Which call-to-call cycles an_site_cycle_ns takes: all, or in a trial
 * replay run (TNBC_REPLAY_TRIAL, blocking calls' rows have wait_ns -1)
 * those that start at an early or at a blocking call. */
enum an_cycle_kind { AN_CYCLE_ALL, AN_CYCLE_AFTER_EARLY, AN_CYCLE_AFTER_BLOCKING };
/* Median over invocations of the slowest rank's time from one call's entry
 * at the site to the next's; returns how many cycles, or -1 with err. */
int an_site_cycle_ns(struct an_trace *t, const char *site, const char *op, enum an_cycle_kind kind,
                     double *out, char *err, size_t errlen);
/* The same cycles one by one: the slowest rank's time from the entry of
 * call `invocation` at the site to the next call's entry, and whether
 * call `invocation` ran blocking in a trial run (its row's wait_ns < 0). */
struct an_cycle {
    int64_t invocation;
    double ns;
    int blocking;
};
/* Into *out (a new array of *n in invocation order; caller frees);
 * returns *n, or -1 with err. */
int an_site_cycles(struct an_trace *t, const char *site, const char *op, struct an_cycle **out,
                   int *n, char *err, size_t errlen);
/* The replay summary's early_cost rows with early calls, into *out (a
 * new array of *n, caller frees with an_early_free); none when the summary
 * predates the table. Returns 0, or -1 with err. */
int an_early_read(struct an_trace *replay, struct an_early **out, int *n, char *err,
                  size_t errlen);
void an_early_free(struct an_early *e, int n);
/* The measured early return of site/op on rank (mean of the steps per
 * early call); NAN when the run measured none. */
double an_early_in_call_ns(const struct an_trace *t, const char *site, const char *op, int rank);
/* Decisions checked against a replay run with the profile (measured.c). */
int an_measured(struct tnbc_profile *p, struct an_trace *trace, struct an_trace *replay,
                char *err, size_t errlen);
void an_trace_close(struct an_trace *t);
/* The distinct (site, op) pairs of trace-mode calls; caller frees. */
int an_trace_sites(struct an_trace *t, char ***sites, char ***ops, int *n, char *err,
                   size_t errlen);
/* The most traced calls with data to receive on one rank (s->calls sorted
 * by rank): site_receiving. */
int64_t an_site_receiving(const struct an_site *s);
int an_site_load(struct an_trace *t, const char *site, const char *op, struct an_site *s,
                 char *err, size_t errlen);
void an_site_free(struct an_site *s);

/* order.c: samples are the orders of first touches of one call. */
struct an_sample {
    int rank;
    int k;           /* touched blocks */
    int *seq;        /* [k] block indices, first touched first */
};
struct an_agreement {
    double identical, tau;
    int64_t samples;
};
double an_kendall(const struct an_sample *s, const int *pos_in_order);
void an_agreement(const struct an_sample *v, int n, const int *order, int nsub,
                  struct an_agreement *out);
int an_borda(const struct an_sample *v, int n, int nsub, int *order_out);
/* Fill site order, agreement, order kind and per-rank orders. */
int an_orders(const struct an_sample *v, int n, int nsub, int per_rank,
              struct tnbc_profile_site *ps);

/* digest.c: qsort comparator of `const struct an_sub *`s, first touched
 * first; and filling c's digest from its n sub-messages (sorted by idx). */
int an_sub_by_ord(const void *a, const void *b);
/* s->world, from the site's calls (its communicator's members), and
 * s->crowded; 0, or -1 out of memory. Before the site's calls are digested. */
int an_site_world(const struct an_trace *t, struct an_site *s);
/* Tail shares carried from a rank's calls whose tail pages the trace
 * watched to its later calls at the same site: the trace watches them in
 * each site's first TNBC_TRACE_TAIL_CALLS traced calls only (docs/trace.md,
 * "Tail pages"). Per read position, the smallest share seen (model.c,
 * need_shares); for one site's calls in (rank, invocation) order. Owned
 * by the caller: zeroed with `calls` set to start, an_tails_free after. */
struct an_tails {
    int64_t calls;     /* invocations below this one watched tails */
    int rank;          /* whose shares these are (n == 0: none yet) */
    int n, cap;
    double *share;     /* [n] by read position; 1: needed at the end of its reading */
};
void an_tails_free(struct an_tails *m);
/* tails: NULL where every traced call watched its tails (a trace without
 * meta trace_tail_calls). */
int an_call_digest(const struct an_trace *t, const struct an_site *s, struct an_call *c,
                   struct an_sub *subs, int n, struct an_tails *tails);

/* model.c */
void an_call_terms(const struct an_call *c, const struct an_sub *subs, int n,
                   const struct an_rank *r, double *tcurc_ns, double *rcrc, double *tinit_ns);
/* The overlap the call's own rank can get, block by block: its local block
 * is there at once, the remote ones arrive in its read order at the rate
 * the wire gave them in the trace, and each read block takes bytes/RCRC.
 * Until Tcomm the program's work runs at 1 - `share` of its speed (the
 * CPU the communication takes). Chunked operations: every chunk comes
 * over the wire, in read order, and is read once it has landed whole.
 * NAN when the call received nothing. */
double an_call_own_overlap(const struct an_call *c, const struct an_sub *subs, int n,
                           const struct an_rank *r, double share, double *reads_ns,
                           struct an_tails *tails);
struct an_model_in {
    double tcomm_ns, dcomm, tcurc_ns, rcrc, tinit_ns;
};
void an_model_eval(const struct an_model_in *in, int64_t calls, struct tnbc_model *m);
int an_model_site(const struct an_trace *t, const struct an_site *s, struct tnbc_model *m);
/* Sets each call's last_tcomm_ns (model.c) once the site's calls are
 * loaded, before their sub-messages are digested; -1 without memory. */
int an_site_last_arrival(const struct an_trace *t, struct an_site *s);
/* The CPU share of communication in flight for the site's calls: the
 * trace's, or on the --platform its projection (platform.h). */
double an_call_share(const struct an_trace *t, const struct an_site *s, const struct an_call *c);
double an_site_share(const struct an_trace *t, const struct an_site *s);
double an_median(double *v, int n);

/* stats.c: one-sided Mann-Whitney z of "x tends to be smaller than y";
 * z >= 2.326 is p < 0.01. 0 when a sample is empty. */
double an_mann_whitney_z(const double *x, int nx, const double *y, int ny);

/* decide.c */
int an_chunks(int64_t block_bytes, int traced_chunks);
/* Sets ps->on and ps->reason. Returns 1 when the verdict rests on the
 * model's timings (Tcomm, Tinit, TCURC, RCRC: what a trace of low fidelity
 * gets wrong), 0 when it rests on the call's shape alone. tinit_modelled:
 * no call's Tinit holds an early return measured in replay (--measured):
 * the saving must then exceed Tinit itself. */
int an_decide(struct tnbc_profile_site *ps, int64_t sub_bytes, const char *inconsistent,
              double comm_cpu_share, const char *cpu_why, int tinit_modelled);

/* prio.c */
int an_priorities(struct tnbc_profile_site *ps, const char *receives);
int an_nodes(const struct an_trace *t, const struct an_site *s, struct tnbc_profile_site *ps);

/* fidelity.c: what the trace of a site could not measure cleanly. */
struct an_fidelity {
    int known;             /* the trace has a fidelity table with rows here */
    int calls;
    double steps, faults;  /* medians per traced call */
    double observer_share; /* median of (observer_ns - refill_ns) / span_ns: estimated */
    double refill_share;   /* median of refill_ns / span_ns: measured, not in the confidence */
    int64_t dropped;       /* touch events lost, all calls */
    double confidence;     /* an_confidence; NAN when unknown */
};
double an_confidence(const struct an_fidelity *f);
int an_site_fidelity(struct an_trace *t, const struct an_site *s, struct an_fidelity *f,
                     char *err, size_t errlen);
/* Record the confidence in ps. Below AN_MIN_CONFIDENCE a verdict that rests
 * on the timings (timed, from an_decide) is the trace's to answer for, on or
 * off: the site is off and the reason says the trace cannot support it. */
void an_fidelity_decide(struct tnbc_profile_site *ps, const struct an_fidelity *f, int timed);

/* analyze.c */
/* One profile site from the calls of one (site, op), on every rank (the
 * trace's, or those a run learned in place: libreplay/autotune.c). t->db
 * may be NULL: no fidelity table, nothing known of the observer. 0, or -1
 * when out of memory. */
int an_site_build(struct an_trace *t, struct an_site *s, struct tnbc_profile_site *ps);
int an_analyze(struct an_trace *t, struct tnbc_profile *p, char *err, size_t errlen);

#endif
