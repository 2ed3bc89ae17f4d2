// SPDX-License-Identifier: BSD-3-Clause
/* Self-tuning in one run: learning records, the collective decision, the
 * learned profile (autotune.h has the site's lifecycle). */
#include "autotune.h"
#include "crowding.h"

#include "analyzer.h"
#include "clock.h"
#include "config.h"
#include "guard.h"
#include "runinfo.h"

#include <assert.h>
#include <limits.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define LEARN_SPANS 32

/* One learning call: its receive layout under a trace-style guard, and
 * what the hook saw per sub-message. The hook runs in signal context:
 * it only writes this record's arrays (each sub at most once, guard.h). */
struct learn_rec {
    struct tnbc_call_layout layout;
    struct tnbc_guard guard;
    atomic_int next_ord;
    int64_t *ord;            /* [nsub] first-touch rank, -1: not touched */
    int64_t *tick;           /* [nsub] program ticks of the touch or need */
    int64_t *tail;           /* [nsub] program ticks of its tail page's first touch, 0: none
                                (GUARD_TAIL: a block read in several passes is needed whole
                                within its first) */
    unsigned char *need;     /* [nsub] released by io/mpi/reuse/free/finalize: needed then */
    char *cover;             /* [nsub] the trace's guard code ('g', 'p', 'e', 'm') */
    int used;                /* holds a call (guard armed or not) */
    int64_t invocation;
    uint64_t entry, ret;
    int root;
    struct learn_rec *next_live;   /* armed, on the live list */
    /* The rank's collectives that began after this call returned, while
     * its guard was live ((entry, return) program ticks, the first
     * LEARN_SPANS): the analysis takes their time out of TCURC as it does
     * a trace's (analyzer/spans.c). Its first need comes before the guard
     * retires, so no span that counts is missed for want of a live guard. */
    int64_t span[LEARN_SPANS][2];
    int nspan;
};

/* An ON site's current window (autotune.h): per call, its cycle (entry
 * to the next call's entry, ns) and its kind. Invariants: 2 <= every <=
 * AUTO_CHECK_MAX, len == CHECK_BLOCKS * every, 0 <= at <= len; at == len:
 * the window is complete and the next call judges it. */
#define CHECK_BLOCKS 8
#define WINDOW_MAX (CHECK_BLOCKS * AUTO_CHECK_MAX)
enum { KIND_EARLY, KIND_CHECK, KIND_OTHER };

struct auto_window {
    int every, len, at;
    int judging;                       /* the current call judged the last window or decided */
    int settled;                       /* a look found a clear gain: no more checks this window */
    int64_t number;                    /* windows begun (seeds the positions) */
    uint64_t last_entry_ns;            /* the previous call's entry (when at > 0) */
    int64_t cycle[WINDOW_MAX];
    unsigned char kind[WINDOW_MAX];
};

struct auto_site {
    enum auto_phase phase;
    int learned;                       /* agreed learning calls */
    struct learn_rec rec[AUTO_LEARN_MAX];
    struct tnbc_profile *prof;         /* DECIDE's one-site profile */
    struct tnbc_profile *retired;      /* replaced by a verdict, freed at the next call */
    char *reason;                      /* why it is on or off */
    int64_t off_calls, retry_at;       /* agreed calls off; when it learns again */
    struct auto_window win;
    struct tnbc_measured measured;     /* counts over the run, the last verdict's numbers */
    int judged;                        /* a verdict filled in `measured` */
    double agree_ns;                   /* the shortest agreement of its learning calls; 0: none */
    int *lost_order;                   /* the read order a check found no gain with; NULL: none */
    int lost_nsub;
};

static void window_open(struct auto_window *w, int every);
static int lost_before(const struct auto_site *s, const struct tnbc_profile_site *ps);
static void set_verdict(struct auto_site *s, int on, const char *why);

static struct {
    int learn_calls;
    long min_bytes;
    int check_every;
    struct learn_rec *live;            /* armed learning guards */
    struct crowding crowd;             /* this rank's machine */
    double share_override;             /* TNBC_AUTO_COMM_CPU_SHARE; NaN: by machine */
    int machine_decides;               /* machine_decides(), once at configure */
} A = { 2, 65536, 16, NULL, { 1, 1 }, NAN, 0 };

static const struct tnbc_run_info *run_info(void);
static int machine_decides(void);

void autotune_configure(int learn_calls, long min_bytes, int check_every,
                        const struct crowding *crowd)
{
    assert(learn_calls >= 1 && learn_calls <= AUTO_LEARN_MAX);
    assert(check_every >= AUTO_CHECK_MIN && check_every <= AUTO_CHECK_MAX);
    A.learn_calls = learn_calls;
    A.min_bytes = min_bytes;
    A.check_every = check_every;
    A.crowd = *crowd;
    A.share_override = tnbc_env_double("TNBC_AUTO_COMM_CPU_SHARE", NAN, 0, 1);
    /* The machine's copy, mprotect and fault costs (about 25 ms on a VM
     * that shadows the page tables) are measured at start, where the job's
     * start-up absorbs them, not at a site's deciding call inside the
     * program's loop (measured there: that call took 26-32 ms longer);
     * where the machine decides every site, never. */
    A.machine_decides = machine_decides();
    if (!A.machine_decides)
        (void)run_info();
}

/* The whole job runs on one machine whose ranks outnumber its CPUs, and
 * neither TNBC_AUTO_COMM_CPU_SHARE nor TNBC_AUTO_DECIDE says otherwise:
 * every communicator then stays on that machine (on one node, or on nodes
 * that are network namespaces of its kernel), the model's crowded rule
 * (site_cpu_share) turns every site off whatever the learning calls see,
 * and they need neither guards nor the machine's costs. The same on every
 * rank: each counts the job's ranks on its own machine, and all of them
 * are on this one. (A forced decision still learns: a site forced on runs
 * in the read order its learning calls saw.) */
static int machine_decides(void)
{
    int world = 0;
    if (!isnan(A.share_override) || !crowding_crowded(&A.crowd) ||
        strcmp(tnbc_env_str("TNBC_AUTO_DECIDE", "model"), "model") != 0 ||
        PMPI_Comm_size(MPI_COMM_WORLD, &world) != MPI_SUCCESS)
        return 0;
    return A.crowd.ranks == world;
}

int autotune_learn_calls(void)
{
    return A.learn_calls;
}

/* ---- eligibility ------------------------------------------------------- */

/* count elements of t in bytes, LONG_MAX when more. */
static long type_bytes(long count, MPI_Datatype t)
{
    int size = 0;
    if (count <= 0 || PMPI_Type_size(t, &size) != MPI_SUCCESS || size <= 0)
        return 0;
    return count > LONG_MAX / size ? LONG_MAX : count * size;
}

static long sum_counts(const int *counts, int p, MPI_Datatype t)
{
    long n = 0;
    for (int i = 0; counts && i < p; i++)
        n += counts[i] > 0 ? counts[i] : 0;
    return type_bytes(n, t);
}

/* The bytes of one block as every member can compute it: only from the
 * arguments MPI says are significant on that member, whose sizes MPI
 * requires to match between members. */
static long signature_bytes(const struct tnbc_args *a, int p, int rank)
{
    switch (a->op) {
    case TNBC_ALLTOALL:
    case TNBC_ALLGATHER:
    case TNBC_REDUCE_SCATTER_BLOCK:
        return (long)p * type_bytes(a->rcount, a->rtype);
    case TNBC_GATHER:
        return (long)p * (rank == a->root ? type_bytes(a->rcount, a->rtype)
                                          : type_bytes(a->scount, a->stype));
    case TNBC_SCATTER:
        return (long)p * (rank == a->root && a->recvbuf == MPI_IN_PLACE
                              ? type_bytes(a->scount, a->stype)
                              : type_bytes(a->rcount, a->rtype));
    case TNBC_BCAST:
    case TNBC_ALLREDUCE:
    case TNBC_REDUCE:
        return type_bytes(a->rcount, a->rtype);
    case TNBC_ALLGATHERV:
    case TNBC_REDUCE_SCATTER:   /* every member passes the same counts */
        return sum_counts(a->rcounts, p, a->rtype);
    default:
        /* alltoallv, gatherv, scatterv: sizes differ between members;
         * every member takes part. */
        return A.min_bytes;
    }
}

int autotune_eligible(const struct tnbc_args *a)
{
    int inter = 0, p = 0, rank = 0;
    if (PMPI_Comm_test_inter(a->comm, &inter) != MPI_SUCCESS || inter ||
        PMPI_Comm_size(a->comm, &p) != MPI_SUCCESS || PMPI_Comm_rank(a->comm, &rank) != MPI_SUCCESS)
        return 0;
    return p > 1 && signature_bytes(a, p, rank) >= A.min_bytes;
}

int autotune_key(const char *site_id, enum tnbc_op op)
{
    uint32_t h = 2166136261u;            /* FNV-1a 32 */
    for (const unsigned char *c = (const unsigned char *)site_id; *c; c++)
        h = (h ^ *c) * 16777619u;
    h = (h ^ (uint32_t)op) * 16777619u;
    return (int)(h & 0x7fffffff);
}

/* ---- quiet streams ----------------------------------------------------- */

#define QUIET_AFTER 8          /* agreed off calls in a row */
#define QUIET_FIRST 64         /* calls of the first quiet stretch */
#define QUIET_MAX 4096

int autotune_quiet(struct auto_stream *s)
{
    if (s->quiet_left <= 0)
        return 0;
    s->quiet_left--;
    s->quiet_ran++;
    return 1;
}

int autotune_agreed(struct auto_stream *s, int off, int key)
{
    if (key == AUTO_KEY_DIFFER || (s->agreed > 0 && key != s->key))
        s->mixed = 1;
    s->key = key;
    s->agreed++;
    int calls = 1 + (s->mixed ? 0 : s->quiet_ran);
    s->quiet_ran = 0;
    if (!off) {
        s->off_run = 0;
        return calls;
    }
    if (++s->off_run < (s->mixed ? QUIET_AFTER : 1))
        return calls;
    s->off_run = 0;
    s->quiet_left = s->backoff ? s->backoff : QUIET_FIRST;
    s->backoff = s->quiet_left < QUIET_MAX ? 2 * s->quiet_left : QUIET_MAX;
    return calls;
}

void autotune_wake(struct auto_stream *s)
{
    if (s->quiet_left > 0)
        s->backoff = s->quiet_left;   /* the stretch just set never ran: the next is as long */
    s->quiet_left = 0;
    s->off_run = 0;
}

/* ---- sites -------------------------------------------------------------- */

struct auto_site *autotune_site(struct auto_site **slot)
{
    if (!*slot)
        *slot = calloc(1, sizeof **slot);
    return *slot;
}

enum auto_phase autotune_phase(const struct auto_site *s)
{
    return s->phase;
}

const struct tnbc_profile *autotune_profile(const struct auto_site *s)
{
    return s ? s->prof : NULL;
}

const char *autotune_reason(const struct auto_site *s)
{
    return s ? s->reason : NULL;
}

/* ---- learning ------------------------------------------------------------ */

static void learn_hook(struct tnbc_guard *g, int sub, enum tnbc_guard_event ev,
                       enum tnbc_release_reason why, uint64_t tick)
{
    struct learn_rec *r = g->user;
    if (ev == TNBC_EV_TAIL) {
        r->tail[sub] = (int64_t)tick;
    } else if (ev != TNBC_EV_RELEASE) {
        r->ord[sub] = atomic_fetch_add(&r->next_ord, 1);
        r->tick[sub] = (int64_t)tick;
    } else if (why == TNBC_REL_IO || why == TNBC_REL_MPI || why == TNBC_REL_REUSE ||
               why == TNBC_REL_FREE || why == TNBC_REL_FINALIZE) {
        /* As the analyzer reads a trace's releases (analyzer/tracedb.c):
         * the data was needed then (a free too: replay waits there). */
        r->need[sub] = 1;
        r->tick[sub] = (int64_t)tick;
    }
}

static void unlink_live(struct learn_rec *r)
{
    for (struct learn_rec **p = &A.live; *p; p = &(*p)->next_live)
        if (*p == r) {
            *p = r->next_live;
            r->next_live = NULL;
            return;
        }
}

static void rec_disarm(struct learn_rec *r)
{
    if (r->guard.armed) {
        tnbc_guard_disarm(&r->guard, TNBC_REL_DONE);
        unlink_live(r);
    }
}

static void rec_free(struct learn_rec *r)
{
    rec_disarm(r);
    tnbc_layout_free(&r->layout);
    free(r->ord);
    free(r->tick);
    free(r->tail);
    free(r->need);
    free(r->cover);
    memset(r, 0, sizeof *r);
}

void autotune_retire_open(void)
{
    for (struct learn_rec **p = &A.live; *p;) {
        struct learn_rec *r = *p;
        if (tnbc_guard_all_open(&r->guard)) {
            *p = r->next_live;
            r->next_live = NULL;
            tnbc_guard_disarm(&r->guard, TNBC_REL_DONE);
        } else {
            p = &r->next_live;
        }
    }
}

void autotune_span(uint64_t entry, uint64_t ret)
{
    assert(ret >= entry);
    for (struct learn_rec *r = A.live; r; r = r->next_live)
        if (entry >= r->ret && r->nspan < LEARN_SPANS) {
            r->span[r->nspan][0] = (int64_t)entry;
            r->span[r->nspan][1] = (int64_t)ret;
            r->nspan++;
        }
}

static const char guard_codes[] = { [TNBC_COVER_GUARDED] = 'g', [TNBC_COVER_PARTIAL] = 'p',
                                    [TNBC_COVER_EDGE] = 'e', [TNBC_COVER_EMPTY] = 'm' };

/* Chunks a learning call's single-block receive is cut in (the trace's
 * TNBC_CHUNKS default; the analysis maps them onto its own). */
#define LEARN_CHUNKS 4

/* Holds one blocking call's receive layout in r and guards its pages to
 * record the first touches (entry/ret: program ticks). */
static void take_record(struct learn_rec *r, const struct tnbc_args *a, int64_t invocation,
                        uint64_t entry, uint64_t ret)
{
    const char *why;
    rec_free(r);
    r->used = 1;
    r->invocation = invocation;
    r->entry = entry;
    r->ret = ret;
    r->root = a->root;
    if (tnbc_layout_build(a, LEARN_CHUNKS, &r->layout, &why) != 0)
        return;               /* a sample without touches: nothing learned here */
    int n = r->layout.recv.nsub;
    r->ord = malloc((size_t)(n ? n : 1) * sizeof *r->ord);
    r->tick = calloc((size_t)(n ? n : 1), sizeof *r->tick);
    r->tail = calloc((size_t)(n ? n : 1), sizeof *r->tail);
    r->need = calloc((size_t)(n ? n : 1), 1);
    r->cover = malloc((size_t)(n ? n : 1));
    if (!r->ord || !r->tick || !r->tail || !r->need || !r->cover || n == 0) {
        free(r->ord);
        r->ord = NULL;         /* no sub-message records */
        return;
    }
    for (int i = 0; i < n; i++) {
        r->ord[i] = -1;
        r->cover[i] = r->layout.recv.sub[i].bytes ? 'e' : 'm';
    }
    if (A.machine_decides) {  /* the call's sizes only: no touch could change the verdict */
        memset(r->cover, 'o', (size_t)n);  /* the trace's code for a sub-message not guarded */
        return;
    }
    struct tnbc_guard *g = &r->guard;
    g->layout = &r->layout.recv;
    g->closed_prot = PROT_NONE;
    g->flags = GUARD_PRETOUCH | GUARD_TAIL;   /* as the trace: the reads keep their pace,
                                                  and a block's end is seen */
    g->hook = learn_hook;
    g->landed = NULL;
    g->user = r;
    if (tnbc_guard_arm(g) > 0) {
        for (int i = 0; i < n; i++)     /* kept past the disarm */
            r->cover[i] = guard_codes[g->cover[i]];
        r->next_live = A.live;
        A.live = r;
    }
}

void autotune_agreement(struct auto_site *s, uint64_t ns)
{
#ifdef TNBC_TEST_HOOKS
    /* Tests: every agreement seems this much longer, so that its share of
     * the model's Tinit is known (test/auto.sh). */
    ns += (uint64_t)tnbc_env_long("TNBC_TEST_AUTO_AGREE_ADD_US", 0, 0, 1L << 30) * 1000;
#endif
    if (s->agree_ns == 0 || (double)ns < s->agree_ns)
        s->agree_ns = (double)ns;
}

void autotune_learned(struct auto_site *s, const struct tnbc_args *a, int64_t invocation,
                      uint64_t entry, uint64_t ret)
{
    assert(s->phase == AUTO_LEARN && s->learned < A.learn_calls);
    take_record(&s->rec[s->learned++], a, invocation, entry, ret);
    if (s->learned == A.learn_calls)
        s->phase = AUTO_DECIDE;
}

/* ---- the decision: records out, one profile site back -------------------- */

/* A member's records as int64s: a header, then per call a header, per
 * sub-message 7 fields and per span of another collective its entry and
 * return. Doubles travel as their bits. */
enum { HDR_WORLD, HDR_COMM_RANK, HDR_NODE, HDR_NCALLS, HDR_TSC_HZ, HDR_COPY_BW, HDR_MPROTECT,
       HDR_FAULT, HDR_PAGE, HDR_COMM_SIZE, HDR_AGREE_NS, HDR_MACHINE_RANKS, HDR_MACHINE_CPUS,
       HDR_UNGUARDABLE, HDR_MPROTECT_PAGE, HDR_RETOUCH, HDR_INTS };
enum { CALL_INV, CALL_ROOT, CALL_NSUB, CALL_CHUNKS, CALL_SEND, CALL_RECV, CALL_BLOCK,
       CALL_ENTRY, CALL_RET, CALL_NREC, CALL_NSPAN, CALL_INTS };
enum { SUB_IDX, SUB_BYTES, SUB_GUARD, SUB_TOUCHED, SUB_ORD, SUB_TSC, SUB_NEED, SUB_TAIL, SUB_INTS };

static int64_t dbits(double v)
{
    int64_t b;
    memcpy(&b, &v, sizeof b);
    return b;
}

static double bitsd(int64_t b)
{
    double v;
    memcpy(&v, &b, sizeof v);
    return v;
}

/* A tick `skew` times as far after the call's return (tests only: 1
 * elsewhere); 0, no tick, stays 0. */
static int64_t skewed(int64_t tick, uint64_t ret, double skew)
{
    if (!tick || skew == 1)
        return tick;
    return (int64_t)ret + (int64_t)((double)(tick - (int64_t)ret) * skew);
}

/* Measured once, by autotune_configure; where the machine decides every
 * site, the clock and page size alone (no cost is measured or used). */
static const struct tnbc_run_info *run_info(void)
{
    static struct tnbc_run_info info;
    static int have;
    if (!have) {
        if (A.machine_decides) {
            info.tsc_hz = tnbc_ticks_hz();
            info.page_size = (int)tnbc_page_size();
        } else {
            tnbc_runinfo_collect(&info, "auto");
        }
        have = 1;
    }
    return &info;
}

static int64_t *pack_records(const struct auto_site *s, int comm_rank, int comm_size, int node,
                             int *len)
{
    const struct tnbc_run_info *info = run_info();
    int n = HDR_INTS;
    for (int i = 0; i < A.learn_calls; i++)
        n += CALL_INTS + SUB_INTS * (s->rec[i].ord ? s->rec[i].layout.recv.nsub : 0) +
             2 * s->rec[i].nspan;
    int64_t *v = malloc((size_t)n * sizeof *v), *p = v + HDR_INTS;
    if (!v)
        return NULL;
    int world = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &world);
    v[HDR_WORLD] = world;
    v[HDR_COMM_RANK] = comm_rank;
    v[HDR_NODE] = node;
    v[HDR_NCALLS] = 0;
    v[HDR_TSC_HZ] = dbits(info->tsc_hz);
    v[HDR_COPY_BW] = dbits(info->copy_bw);
    v[HDR_MPROTECT] = dbits(info->mprotect_ns);
    v[HDR_FAULT] = dbits(info->fault_ns);
    v[HDR_MPROTECT_PAGE] = dbits(info->mprotect_page_ns);
    v[HDR_RETOUCH] = dbits(info->retouch_ns);
    v[HDR_PAGE] = info->page_size;
    v[HDR_COMM_SIZE] = comm_size;
    v[HDR_AGREE_NS] = dbits(s->agree_ns);
    v[HDR_MACHINE_RANKS] = A.crowd.ranks;
    v[HDR_MACHINE_CPUS] = A.crowd.cpus;
    v[HDR_UNGUARDABLE] = 0;
    double skew = 1;
#ifdef TNBC_TEST_HOOKS
    /* Tests: this rank's touches seem `skew` times later after return, so
     * that members measure differently (they must still agree). */
    if (tnbc_env_long("TNBC_TEST_AUTO_SKEW_RANK", -1, -1, 1L << 20) == world)
        skew = 1000;
#endif
    for (int i = 0; i < A.learn_calls; i++) {
        const struct learn_rec *r = &s->rec[i];
        const struct tnbc_call_layout *l = &r->layout;
        int nrec = r->ord ? l->recv.nsub : 0;
        if (!r->used)
            continue;
        v[HDR_NCALLS]++;
        v[HDR_UNGUARDABLE] += r->guard.refused != NULL;   /* memory the guard refused */
        p[CALL_INV] = r->invocation;
        p[CALL_ROOT] = r->root;
        p[CALL_NSUB] = l->recv.nsub;
        p[CALL_CHUNKS] = l->chunks;
        p[CALL_SEND] = (int64_t)l->send.bytes;
        p[CALL_RECV] = (int64_t)l->recv.bytes;
        p[CALL_BLOCK] = l->recv.nsub ? l->recv.block_bytes : 0;
        p[CALL_ENTRY] = (int64_t)r->entry;
        p[CALL_RET] = (int64_t)r->ret;
        p[CALL_NREC] = nrec;
        p[CALL_NSPAN] = r->nspan;
        p += CALL_INTS;
        for (int j = 0; j < nrec; j++, p += SUB_INTS) {
            const struct tnbc_submsg *sub = &l->recv.sub[j];
            p[SUB_IDX] = sub->idx;
            p[SUB_BYTES] = (int64_t)sub->bytes;
            p[SUB_GUARD] = r->cover[j];
            p[SUB_TOUCHED] = r->ord[j] >= 0;
            p[SUB_ORD] = r->ord[j];
            p[SUB_TSC] = skewed(r->tick[j], r->ret, skew);
            p[SUB_NEED] = r->need[j];
            p[SUB_TAIL] = skewed(r->tail[j], r->ret, skew);
        }
        for (int j = 0; j < r->nspan; j++, p += 2) {
            p[0] = r->span[j][0];
            p[1] = r->span[j][1];
        }
    }
    *len = (int)(p - v);
    return v;
}

static int by_rank_invocation(const void *x, const void *y)
{
    const struct an_call *a = x, *b = y;
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    return a->invocation < b->invocation ? -1 : a->invocation > b->invocation;
}

/* TNBC_AUTO_DECIDE=on|off overrides the model's verdict (rank 0's
 * setting: the text it sends is what every member runs). */
static int force_decision(struct tnbc_profile_site *ps)
{
    const char *force = tnbc_env_str("TNBC_AUTO_DECIDE", "model");
    if (strcmp(force, "model") == 0)
        return 0;
    int on = strcmp(force, "on") == 0;
    if (!on && strcmp(force, "off") != 0) {
        static int warned;
        tnbc_warn_once(warned, "TNBC_AUTO_DECIDE=%s: not model, on or off; the model decides", force);
        return 0;
    }
    char buf[TNBC_PROFILE_ERRLEN];
    snprintf(buf, sizeof buf, "forced %s by TNBC_AUTO_DECIDE (the model: %s %s)", force,
             ps->on ? "on," : "off,", ps->reason ? ps->reason : "");
    char *r = strdup(buf);
    if (!r)
        return -1;
    free(ps->reason);
    ps->reason = r;
    ps->on = on;
    ps->trial = 0;     /* decided by the user, not by the model's timing */
    return 0;
}

/* The CPU share of communication in flight the model counts at a site
 * (an_trace.comm_cpu_share): rank 0's TNBC_AUTO_COMM_CPU_SHARE where set;
 * else all of it where every member is on one node of a crowded machine,
 * or the whole job on one (machine_decides; crowding.h), and none
 * elsewhere (the analyzer's rule without --comm-cpu-share). `why` gets
 * the crowded rule's words (the decision's reason where they turn the
 * site off), or "". */
static double site_cpu_share(const int64_t *all, const int *len, int p, char *why, size_t whylen)
{
    why[0] = 0;
    if (!isnan(A.share_override))
        return A.share_override;
    int one_node = 1;
    for (int m = 0, at = 0; m < p; at += len[m++])
        one_node &= all[at + HDR_NODE] == all[HDR_NODE];
    /* One node, so one machine: every member sent the same counts. */
    const struct crowding machine = { (int)all[HDR_MACHINE_RANKS], (int)all[HDR_MACHINE_CPUS] };
    if (one_node && crowding_crowded(&machine)) {
        crowding_why(why, whylen, p, &machine, "TNBC_AUTO_COMM_CPU_SHARE");
        return 1;
    }
    /* Nodes that are network namespaces of the one crowded machine that
     * runs the whole job (the emulated cluster): their data is TCP through
     * its kernel, on the same CPUs, and the learning calls watched nothing
     * (machine_decides); without this the site went on with no read times,
     * as regime a, and a 4-rank program on 2 CPUs ran 1.56x plain's time. */
    if (A.machine_decides) {
        crowding_why_job(why, whylen, &A.crowd, "TNBC_AUTO_COMM_CPU_SHARE");
        return 1;
    }
    return 0;
}

/* Rank 0's half: every member's records into an an_trace and an_site, the
 * analyzer's site, its profile text. NULL when out of memory. */
static char *analyze_records(const int64_t *all, const int *len, int p, const char *site_id,
                             enum tnbc_op op, int64_t calls, size_t *text_len)
{
    int world_size = 0, ncalls = 0;
    double agree_ns = INFINITY;
    PMPI_Comm_size(MPI_COMM_WORLD, &world_size);
    int64_t unguardable = 0;       /* the most on one member, as the trace's */
    for (int m = 0, at = 0; m < p; at += len[m++]) {
        ncalls += (int)all[at + HDR_NCALLS];
        agree_ns = fmin(agree_ns, bitsd(all[at + HDR_AGREE_NS]));
        if (all[at + HDR_UNGUARDABLE] > unguardable)
            unguardable = all[at + HDR_UNGUARDABLE];
    }
    /* The early return's agreement is a step the trace's Tinit does not
     * see (docs/analyzer.md, --early-cost): every call of the site pays
     * it, measured here on the learning calls. The shortest over members
     * is the round trip itself; the others' also hold their wait for the
     * last member to arrive, which the blocking call pays as well. */
    char crowded[TNBC_PROFILE_ERRLEN];
    struct an_trace t = { .path = "tnbc-auto", .world_size = world_size, .nranks = p,
                          .early_cost_ns = isfinite(agree_ns) && agree_ns > 0 ? agree_ns : 0,
                          .comm_cpu_share = site_cpu_share(all, len, p, crowded, sizeof crowded) };
    t.comm_cpu_why = crowded[0] ? crowded : NULL;
    /* Two learning calls and no trial run after them: a rank's
     * all-or-nothing overlap counts wherever it is (docs/auto.md, u29). */
    t.smallest_rank = 1;
    struct an_site s = { .site = strdup(site_id), .op = strdup(tnbc_op_name(op)),
                         .site_calls = calls, .site_traced = A.learn_calls,
                         .site_unguardable = unguardable };
    struct tnbc_profile *prof = calloc(1, sizeof *prof);
    char (*hosts)[24] = calloc((size_t)p, sizeof *hosts);
    char *text = NULL;
    t.ranks = calloc((size_t)world_size, sizeof *t.ranks);
    s.calls = calloc((size_t)(ncalls ? ncalls : 1), sizeof *s.calls);
    struct an_sub *subs = NULL;
    if (!t.ranks || !s.calls || !s.site || !s.op || !prof || !hosts)
        goto out;
    s.nworld = p;
    s.world = malloc((size_t)p * sizeof *s.world);
    if (!s.world)
        goto out;
    for (int m = 0; m < p; m++)
        s.world[m] = -1;
    for (int m = 0, at = 0; m < p; at += len[m++]) { /* the members first: digest marks near blocks */
        const int64_t *h = all + at;
        int w = (int)h[HDR_WORLD];
        if (w < 0 || w >= world_size || h[HDR_COMM_RANK] < 0 || h[HDR_COMM_RANK] >= p)
            goto out;
        snprintf(hosts[m], sizeof hosts[m], "node%lld", (long long)h[HDR_NODE]);
        t.ranks[w] = (struct an_rank){ .present = 1, .trace_mode = 1, .finished = 1,
                                      .tsc_hz = bitsd(h[HDR_TSC_HZ]), .copy_bw = bitsd(h[HDR_COPY_BW]),
                                      .mprotect_ns = bitsd(h[HDR_MPROTECT]),
                                      .fault_ns = bitsd(h[HDR_FAULT]), .page_size = h[HDR_PAGE],
                                      .mprotect_page_ns = bitsd(h[HDR_MPROTECT_PAGE]),
                                      .retouch_ns = bitsd(h[HDR_RETOUCH]), .host = hosts[m] };
        s.world[h[HDR_COMM_RANK]] = w;
    }
    /* Two passes over the records, as the analyzer reads a trace: every
     * call first (a call's Tcomm can depend on the others' of its
     * invocation, an_site_last_arrival), then each call's sub-messages. */
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1 && an_site_last_arrival(&t, &s) < 0)
            goto out;
        if (pass == 1)
            an_spans_sort(&t);
        for (int m = 0, at = 0, k = 0; m < p; at += len[m++]) {
            const int64_t *h = all + at, *q = h + HDR_INTS;
            int w = (int)h[HDR_WORLD];
            for (int64_t i = 0; i < h[HDR_NCALLS]; i++, k++) {
                int nrec = (int)q[CALL_NREC], nspan = (int)q[CALL_NSPAN];
                const int64_t *spans = q + CALL_INTS + (int64_t)nrec * SUB_INTS;
                struct an_call *c = &s.calls[k];
                if (pass == 0) {
                    *c = (struct an_call){ .call_id = k + 1, .rank = w, .invocation = (int)q[CALL_INV],
                                           .comm_size = (int)h[HDR_COMM_SIZE],
                                           .comm_rank = (int)h[HDR_COMM_RANK], .root = (int)q[CALL_ROOT],
                                           .nsub = (int)q[CALL_NSUB], .chunks = (int)q[CALL_CHUNKS],
                                           .send_bytes = q[CALL_SEND], .recv_bytes = q[CALL_RECV],
                                           .block_bytes = q[CALL_BLOCK], .entry_tsc = q[CALL_ENTRY],
                                           .return_tsc = q[CALL_RET] };
                    s.ncalls++;
                    for (int j = 0; j < nspan; j++)
                        if (an_spans_add(&t, w, spans[2 * j], spans[2 * j + 1]) < 0)
                            goto out;
                    q = spans + 2 * nspan;
                    continue;
                }
                q += CALL_INTS;
                free(subs);
                subs = calloc((size_t)(nrec ? nrec : 1), sizeof *subs);
                if (!subs)
                    goto out;
                for (int j = 0; j < nrec; j++, q += SUB_INTS)
                    subs[j] = (struct an_sub){ .idx = (int)q[SUB_IDX], .bytes = q[SUB_BYTES],
                                               .guard = (char)q[SUB_GUARD],
                                               .touched = (int)q[SUB_TOUCHED], .ord = q[SUB_ORD],
                                               .tsc = q[SUB_TSC], .need = (int)q[SUB_NEED],
                                               .tail_tsc = q[SUB_TOUCHED] ? q[SUB_TAIL] : 0 };
                if (an_call_digest(&t, &s, c, subs, nrec, NULL) < 0)
                    goto out;
                q = spans + 2 * nspan;
            }
        }
    }
    qsort(s.calls, (size_t)s.ncalls, sizeof *s.calls, by_rank_invocation);
    s.site_receiving = an_site_receiving(&s);
    prof->version = TNBC_PROFILE_VERSION;
    prof->world_size = world_size;
    prof->piece_bytes = PIECES_DEFAULT_BYTES;
    prof->source = strdup("tnbc-auto");
    prof->sites = calloc(1, sizeof *prof->sites);
    if (!prof->source || !prof->sites)
        goto out;
    prof->nsites = 1;
    if (an_site_build(&t, &s, &prof->sites[0]) == 0 && force_decision(&prof->sites[0]) == 0)
        text = tnbc_profile_text(prof, text_len);
out:
    free(subs);
    free(hosts);
    an_spans_free(&t);
    an_site_free(&s);
    free(t.ranks);
    tnbc_profile_free(prof);
    return text;
}

static void set_reason(struct auto_site *s, const char *why)
{
    free(s->reason);
    s->reason = strdup(why);
}

/* Every member's n elements of `type` (elem bytes each) at rank 0 of
 * comm, one after another: there the concatenation (malloc'd) and each
 * member's count in *lens (malloc'd); NULL elsewhere, and at rank 0 when
 * it cannot take them (then it says so first and nobody sends). *rc: the
 * first failed MPI call's code, or MPI_SUCCESS. Collective over comm. */
static void *gather_at_root(const void *mine, int n, MPI_Datatype type, size_t elem, MPI_Comm comm,
                            int **lens, int *rc)
{
    int p = 0, me = 0;
    PMPI_Comm_size(comm, &p);
    PMPI_Comm_rank(comm, &me);
    int *len = me == 0 ? calloc((size_t)p, sizeof *len) : NULL;
    int *displ = me == 0 ? calloc((size_t)p, sizeof *displ) : NULL;
    char *all = NULL;
    *lens = NULL;
    *rc = PMPI_Gather(&n, 1, MPI_INT, len, 1, MPI_INT, 0, comm);
    if (*rc == MPI_SUCCESS && me == 0 && len && displ) {
        long total = 0;
        for (int m = 0; m < p; m++) {
            displ[m] = (int)total;
            total += len[m];
        }
        all = total < 0x7fffffff ? malloc((size_t)total * elem + 1) : NULL;
    }
    int take = me != 0 || all != NULL;
    if (*rc == MPI_SUCCESS)
        *rc = PMPI_Bcast(&take, 1, MPI_INT, 0, comm);
    if (*rc == MPI_SUCCESS && take)
        *rc = PMPI_Gatherv(mine, n, type, all, len, displ, type, 0, comm);
    free(displ);
    if (me != 0 || *rc != MPI_SUCCESS || !take) {
        free(all);
        free(len);
        return NULL;
    }
    *lens = len;
    return all;
}

/* Every member's records to rank 0 of `agree`; rank 0's profile text back
 * to all. Returns the text (malloc'd) or NULL, the same on every member
 * unless MPI failed. */
static char *exchange(struct auto_site *s, const char *site_id, enum tnbc_op op, MPI_Comm agree,
                      const int *node_of, int64_t calls, size_t *text_len)
{
    int p = 0, me = 0, mine = 0, rc;
    int *len = NULL;
    PMPI_Comm_size(agree, &p);
    PMPI_Comm_rank(agree, &me);
    int64_t *v = pack_records(s, me, p, node_of ? node_of[me] : me, &mine);
    /* A member out of memory sends nothing: rank 0 then fails. */
    int64_t *all = gather_at_root(v, v ? mine : 0, MPI_INT64_T, sizeof *all, agree, &len, &rc);
    long long n = -1;              /* the text's length; -1: no text */
    char *text = NULL;
    if (rc == MPI_SUCCESS && me == 0) {
        int ok = all != NULL;
        for (int m = 0; ok && m < p; m++)
            ok = len[m] >= HDR_INTS;
        size_t tl = 0;
        text = ok ? analyze_records(all, len, p, site_id, op, calls, &tl) : NULL;
        n = text ? (long long)tl : -1;
    }
    free(v);
    free(len);
    free(all);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Bcast(&n, 1, MPI_LONG_LONG, 0, agree);
    if (rc == MPI_SUCCESS && n >= 0 && me != 0)
        text = malloc((size_t)n + 1);
    /* Every member takes the text or none does: a broadcast's counts
     * must match, and the members must hold the same site. */
    int have = rc == MPI_SUCCESS && n >= 0 && text != NULL, all_have = 0;
    if (rc == MPI_SUCCESS && n >= 0)
        rc = PMPI_Allreduce(&have, &all_have, 1, MPI_INT, MPI_MIN, agree);
    if (rc == MPI_SUCCESS && all_have) {
        rc = PMPI_Bcast(text, (int)n, MPI_CHAR, 0, agree);
        text[n] = 0;
    }
    if (rc != MPI_SUCCESS || !all_have) {
        free(text);
        return NULL;
    }
    *text_len = (size_t)n;
    return text;
}

void autotune_decide(struct auto_site *s, const char *site_id, enum tnbc_op op, MPI_Comm agree,
                     const int *node_of, int64_t calls)
{
    assert(s->phase == AUTO_DECIDE);
    for (int i = 0; i < A.learn_calls; i++)
        rec_disarm(&s->rec[i]);
    size_t len = 0;
    char err[TNBC_PROFILE_ERRLEN];
    char *text = exchange(s, site_id, op, agree, node_of, calls, &len);
    for (int i = 0; i < A.learn_calls; i++)
        rec_free(&s->rec[i]);
    s->phase = AUTO_OFF;
    tnbc_profile_free(s->prof);        /* what an earlier decision learned */
    s->prof = NULL;
    if (!text) {
        set_reason(s, "the analysis of what it learned failed (out of memory or an MPI error)");
        return;
    }
    s->prof = tnbc_profile_parse(text, len, "tnbc-auto", err, sizeof err);
    free(text);
    if (!s->prof || s->prof->nsites != 1) {
        /* Every member parses the same text: a failure here is this
         * member's memory, and it then votes no on every call. */
        set_reason(s, s->prof ? "the analysis gave no site" : err);
        tnbc_profile_free(s->prof);
        s->prof = NULL;
        return;
    }
    const struct tnbc_profile_site *ps = &s->prof->sites[0];
    if (ps->on && lost_before(s, ps)) {
        char why[TNBC_PROFILE_ERRLEN];
        snprintf(why, sizeof why, "its checks found no gain with this read order earlier in "
                 "this run, and the model's on does not outrank that (then: %s)",
                 s->reason ? s->reason : "");
        set_verdict(s, 0, why);
        s->phase = AUTO_OFF;
        return;
    }
    s->phase = ps->on ? AUTO_ON : AUTO_OFF;
    set_reason(s, ps->reason ? ps->reason : "");
    if (s->phase == AUTO_ON) {
        window_open(&s->win, A.check_every);
        s->win.judging = 1;   /* this call goes early, but its cycle holds the decision's cost */
    }
}

/* ---- an ON site checks itself ------------------------------------------- */

/* z at or above this keeps a site on: one-sided p < 0.01. Strict, so that
 * a site that does not gain is seldom kept on by chance. */
#define Z_GAIN 2.326
/* Samples of each kind a window needs to be judged at all. */
#define JUDGE_MIN 3
/* z at or below minus this, at a look inside the window, turns a site off
 * at once: early calls measurably slower (one-sided p < 0.005; stricter
 * than Z_GAIN, since a window is looked at up to 5 times). */
#define Z_LOSS 2.576

static void window_open(struct auto_window *w, int every)
{
    assert(every >= AUTO_CHECK_MIN && every <= AUTO_CHECK_MAX);
    w->every = every;
    w->len = CHECK_BLOCKS * every;
    w->at = 0;
    w->settled = 0;
}

/* Runs of 3 calls or more check with a pair of blocking calls: the first
 * settles (AUTO_CALL_SETTLE), the second is the baseline. A lone blocking
 * call among early ones ran 2-5 ms slower than a plain run's call on the
 * shadow-paging test VM (user program u27, 2 x 1 at 1 Gbit/s: 24.2 ms
 * from call to call after checks, 22.3 after early calls, 19.1 plain in
 * a separate run): MPI's writes into receive pages whose protection the
 * early call before had changed refilled them, and the members came in
 * at the early calls' skew. Against that baseline the site looked like a
 * gain and stayed on, 13% slower than plain. */
static int settles(const struct auto_window *w) { return w->every >= 3; }

/* The checking call's place in run `block` of the window: drawn from the
 * window's number (a splitmix64 step), so that it does not fall in step
 * with a period of the program; never the window's first call (its plan
 * is made before the previous window's verdict) nor its last (the
 * sample), and its settling call neither. */
static int check_offset(const struct auto_window *w, int block)
{
    uint64_t z = (uint64_t)w->number * 0x9e3779b97f4a7c15ull + (uint64_t)block + 1;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    int lo = (block == 0) + settles(w), hi = block == CHECK_BLOCKS - 1 ? w->every - 2 : w->every - 1;
    assert(lo <= hi);
    return lo + (int)(z % (uint64_t)(hi - lo + 1));
}

enum auto_call autotune_plan(const struct auto_site *s)
{
    const struct auto_window *w = &s->win;
    assert(s->phase == AUTO_ON);
    if (w->at == w->len)
        return AUTO_CALL_EARLY;          /* the next window's first call */
    if (w->at == w->len - 1)
        return AUTO_CALL_SAMPLE;
    if (w->settled)
        return AUTO_CALL_EARLY;
    int check = check_offset(w, w->at / w->every), at = w->at % w->every;
    if (at == check)
        return AUTO_CALL_CHECK;
    return settles(w) && at == check - 1 ? AUTO_CALL_SETTLE : AUTO_CALL_EARLY;
}

int autotune_step(const struct auto_site *s)
{
    int step = s->phase == AUTO_ON ? s->win.at % s->win.len : s->learned;
    return (int)s->phase + 4 * step;
}

/* A verdict's decision and reason, in the site and in its profile (which
 * is written out). */
static void set_verdict(struct auto_site *s, int on, const char *why)
{
    set_reason(s, why);
    if (s->prof) {
        struct tnbc_profile_site *ps = &s->prof->sites[0];
        ps->on = on;
        ps->trial = 0;   /* decided by this run's measurement */
        free(ps->reason);
        ps->reason = strdup(why);
    }
}

/* The site off after a verdict. */
static void turn_off(struct auto_site *s, const char *why)
{
    rec_free(&s->rec[0]);     /* the window's sample */
    s->phase = AUTO_OFF;
    s->off_calls = 0;
    set_verdict(s, 0, why);
}

/* A check measured no gain: the site's read order is remembered, so that
 * learning again later does not let the model turn it on with the same
 * order (below, autotune_decide). Every member remembers the same: the
 * verdict and the profile are common. */
static void turn_off_measured(struct auto_site *s, const char *why)
{
    const struct tnbc_profile_site *ps = s->prof ? &s->prof->sites[0] : NULL;
    free(s->lost_order);
    s->lost_order = NULL;
    s->lost_nsub = 0;
    if (ps && ps->order && ps->nsub > 0) {
        s->lost_order = malloc((size_t)ps->nsub * sizeof *s->lost_order);
        if (s->lost_order) {     /* out of memory: the model decides again, as before */
            memcpy(s->lost_order, ps->order, (size_t)ps->nsub * sizeof *s->lost_order);
            s->lost_nsub = ps->nsub;
        }
    }
    turn_off(s, why);
}

/* The model turned on a site whose checks found no gain with the same
 * read order: the measurement outranks the model (as a gain keeps a site
 * on whatever the model says). A user program (u10: an in-place
 * allreduce read after an allgather, 2 x 1 at 1 Gbit/s, 200 calls) was
 * turned off by its check after 48 calls, learned again after 64 off,
 * went on again from the same model and order, and lost 42 calls more. */
static int lost_before(const struct auto_site *s, const struct tnbc_profile_site *ps)
{
    return s->lost_order && ps->order && ps->nsub == s->lost_nsub &&
           memcmp(ps->order, s->lost_order, (size_t)ps->nsub * sizeof *ps->order) == 0;
}

/* The window's sample, analyzed as DECIDE analyzes the learning calls
 * (collective over agree): its site replaces the current one when its
 * order rests on touches, so the site follows a program whose read order
 * changed. The old profile stays valid until the site's next call. */
static void adopt_sample(struct auto_site *s, const char *site_id, enum tnbc_op op, MPI_Comm agree,
                         const int *node_of, int64_t calls)
{
    size_t len = 0;
    char err[TNBC_PROFILE_ERRLEN];
    rec_disarm(&s->rec[0]);
    char *text = exchange(s, site_id, op, agree, node_of, calls, &len);
    rec_free(&s->rec[0]);
    struct tnbc_profile *p = text ? tnbc_profile_parse(text, len, "tnbc-auto", err, sizeof err) : NULL;
    free(text);
    if (!p || p->nsites != 1 || p->sites[0].samples == 0) {
        /* Every member parsed the same text: only this member's memory
         * can differ, and it then keeps the order all held so far, which
         * the agreement's schedule check catches for chunked operations. */
        tnbc_profile_free(p);
        return;
    }
    assert(!s->retired);
    s->retired = s->prof;
    s->prof = p;
}

/* The slowest member's cycle of each of the window's first n calls, by
 * kind: e[] after early calls, b[] after blocking (checking) ones.
 * Collective over agree; every member gets the same. -1 when the MPI call
 * failed (the site is then off). */
static int window_samples(struct auto_site *s, int n, MPI_Comm agree, double *e, int *ne,
                          double *b, int *nb)
{
    const struct auto_window *w = &s->win;
    int64_t slowest[WINDOW_MAX];
    assert(n <= w->at && n <= WINDOW_MAX);
    if (PMPI_Allreduce(w->cycle, slowest, n, MPI_INT64_T, MPI_MAX, agree) != MPI_SUCCESS) {
        turn_off(s, "the self-check's MPI call failed");
        return -1;
    }
    *ne = *nb = 0;
    for (int i = 0; i < n; i++) {
        if (w->kind[i] == KIND_EARLY)
            e[(*ne)++] = (double)slowest[i];
        else if (w->kind[i] == KIND_CHECK)
            b[(*nb)++] = (double)slowest[i];
    }
    return 0;
}

/* A verdict's numbers into the site's `measured`: z, the medians of each
 * kind (e and b are sorted by it) and their difference, the saving per
 * call. */
static void note_measurement(struct auto_site *s, double z, double *e, int ne, double *b, int nb)
{
    struct tnbc_measured *m = &s->measured;
    m->z = z;
    m->cycle_early_ns = an_median(e, ne);
    m->cycle_blocking_ns = an_median(b, nb);
    m->saving_call_ns = m->cycle_blocking_ns - m->cycle_early_ns;
    s->judged = 1;
}

/* Which verdict a test forces (TNBC_TEST_AUTO_VERDICT, sanitizer builds):
 * "gain" or "loss" the window's, "interim-loss" or "interim-gain" the
 * first look inside one (and "interim-gain" the window's too); "" none. */
static const char *forced_verdict(void)
{
#ifdef TNBC_TEST_HOOKS
    return tnbc_env_str("TNBC_TEST_AUTO_VERDICT", "");
#else
    return "";
#endif
}

/* A look inside the window, at the end of each of its runs from the third
 * on: a site whose early calls are measurably slower than its blocking
 * ones turns off now rather than at the window's end (on a node whose
 * cores the ranks already fill, an early return's progress thread takes
 * the program's CPU: a program's cycle grew by half there). Where they
 * are measurably faster, by the same strict rule, the window is settled:
 * its remaining runs check no more (each check forgoes a call's saving:
 * 4 of micro-a's 64 calls at 1 Gbit/s, 0.4 ms of a 0.8 ms gap to
 * offline-tuned); the looks still watch for a loss against the checks
 * taken, and the window's end judges them. Collective over agree, at a
 * call every member reaches at the same step. */
static void interim(struct auto_site *s, MPI_Comm agree)
{
    struct auto_window *w = &s->win;
    double e[WINDOW_MAX], b[WINDOW_MAX];
    int ne, nb;
    char why[TNBC_PROFILE_ERRLEN];
    const char *force = forced_verdict();
    if (window_samples(s, w->at, agree, e, &ne, b, &nb) != 0)
        return;
    int forced = strcmp(force, "interim-loss") == 0, forced_gain = strcmp(force, "interim-gain") == 0;
    if (*force && !forced && !forced_gain)
        return;               /* a test of the window's verdict */
    if (!forced && !forced_gain && (ne < JUDGE_MIN || nb < JUDGE_MIN))
        return;
    double z = an_mann_whitney_z(e, ne, b, nb);
    if (forced_gain || (!forced && z >= Z_LOSS)) {
        w->settled = 1;
        return;
    }
    if (!forced && z > -Z_LOSS)
        return;
    note_measurement(s, z, e, ne, b, nb);
    const struct tnbc_measured *m = &s->measured;
    snprintf(why, sizeof why,
             "measured in this run: %.3f ms from call to call after early calls, %.3f ms after "
             "blocking ones (medians of %d and %d after %d calls; Mann-Whitney z %.2f, %s)",
             m->cycle_early_ns / 1e6, m->cycle_blocking_ns / 1e6, ne, nb, w->at, z,
             forced ? "verdict forced by TNBC_TEST_AUTO_VERDICT" : "early calls are slower");
    turn_off_measured(s, why);
}

/* The window judged: the slowest member's cycle per call, early against
 * blocking. Collective over agree; every member computes the same. */
static void judge(struct auto_site *s, const char *site_id, enum tnbc_op op, MPI_Comm agree,
                  const int *node_of, int64_t calls)
{
    struct auto_window *w = &s->win;
    double e[WINDOW_MAX], b[WINDOW_MAX];
    int ne = 0, nb = 0;
    char why[TNBC_PROFILE_ERRLEN];
    assert(w->at == w->len && w->len <= WINDOW_MAX);
    if (window_samples(s, w->len, agree, e, &ne, b, &nb) != 0)
        return;
    if (ne < JUDGE_MIN || nb < JUDGE_MIN) {
        snprintf(why, sizeof why, "measured in this run: too few calls to compare (%d early, %d blocking in a window of %d)",
                 ne, nb, w->len);
        turn_off(s, why);
        return;
    }
    note_measurement(s, an_mann_whitney_z(e, ne, b, nb), e, ne, b, nb);
    const struct tnbc_measured *m = &s->measured;
    int gain = m->z >= Z_GAIN;
    /* Tests of what follows a verdict, on a machine whose timings would
     * decide otherwise: TNBC_TEST_AUTO_VERDICT=gain|loss. */
    const char *force = forced_verdict();
    int forced = strcmp(force, "gain") == 0 || strcmp(force, "loss") == 0 ||
                 strcmp(force, "interim-gain") == 0;
    if (forced)
        gain = strcmp(force, "loss") != 0;
    snprintf(why, sizeof why,
             "measured in this run: %.3f ms from call to call after early calls, %.3f ms after "
             "blocking ones (medians of %d and %d; Mann-Whitney z %.2f, %s)",
             m->cycle_early_ns / 1e6, m->cycle_blocking_ns / 1e6, ne, nb, m->z,
             forced ? "verdict forced by TNBC_TEST_AUTO_VERDICT" : gain ? "a gain" : "no significant gain");
    if (!gain) {
        turn_off_measured(s, why);
        return;
    }
    adopt_sample(s, site_id, op, agree, node_of, calls);
    set_verdict(s, 1, why);   /* the measurement outranks the model */
}

int autotune_on_begin(struct auto_site *s, uint64_t now_ns, const char *site_id, enum tnbc_op op,
                      MPI_Comm agree, const int *node_of, int64_t calls)
{
    struct auto_window *w = &s->win;
    assert(s->phase == AUTO_ON && w->at <= w->len);
    tnbc_profile_free(s->retired);
    s->retired = NULL;
    if (w->at > 0)
        w->cycle[w->at - 1] = (int64_t)(now_ns - w->last_entry_ns);
    w->last_entry_ns = now_ns;
    if (w->at < w->len) {
        if (w->at % w->every == 0 && w->at / w->every >= 3)
            interim(s, agree);   /* a run ended: a look inside the window */
        return s->phase == AUTO_ON;
    }
    int every = w->every;
    judge(s, site_id, op, agree, node_of, calls);
    w->number++;
    window_open(w, every < AUTO_CHECK_MAX ? 2 * every : AUTO_CHECK_MAX);
    w->judging = 1;           /* this call's cycle holds the verdict's own cost */
    return s->phase == AUTO_ON;
}

void autotune_on_end(struct auto_site *s, enum auto_call plan, int early)
{
    struct auto_window *w = &s->win;
    if (s->phase != AUTO_ON)
        return;
    assert(w->at < w->len);
    int went = plan == AUTO_CALL_EARLY && early;
    w->kind[w->at] = w->judging ? KIND_OTHER
                     : plan == AUTO_CALL_CHECK ? KIND_CHECK : went ? KIND_EARLY : KIND_OTHER;
    w->judging = 0;
    s->measured.early += went;
    s->measured.checked += plan == AUTO_CALL_CHECK || plan == AUTO_CALL_SETTLE;
    w->at++;
}

void autotune_sampled(struct auto_site *s, const struct tnbc_args *a, int64_t invocation,
                      uint64_t entry, uint64_t ret)
{
    take_record(&s->rec[0], a, invocation, entry, ret);
}

void autotune_describe(const struct auto_site *s, char *out, size_t len)
{
    static const char *const names[] = { "learning", "deciding", "on", "off" };
    snprintf(out, len, "%s: %s", names[s->phase], s->reason ? s->reason : "");
}

#define RETRY_FIRST 64         /* calls off before a site learns again (autotune_off_agreed) */
#define RETRY_MAX (1 << 20)

int autotune_off_agreed(struct auto_site *s, int calls)
{
    assert(s->phase == AUTO_OFF && calls >= 1);
    s->off_calls += calls;
    if (s->off_calls < (s->retry_at ? s->retry_at : RETRY_FIRST))
        return 0;
    s->retry_at = s->retry_at ? s->retry_at : RETRY_FIRST;
    s->retry_at = s->retry_at < RETRY_MAX ? 2 * s->retry_at : RETRY_MAX;
    s->off_calls = 0;
    s->learned = 0;
    s->phase = AUTO_LEARN;
    return 1;
}

void autotune_free(struct auto_site *s)
{
    if (!s)
        return;
    for (int i = 0; i < AUTO_LEARN_MAX; i++)
        rec_free(&s->rec[i]);
    tnbc_profile_free(s->prof);
    tnbc_profile_free(s->retired);
    free(s->reason);
    free(s->lost_order);
    free(s);
}

/* ---- the learned profile, out ------------------------------------------- */

/* This rank's learned sites as one profile text (sites shared, not copied). */
static char *own_text(struct auto_site *const *sites, int n, size_t *len)
{
    struct tnbc_profile p = { .version = TNBC_PROFILE_VERSION, .source = "tnbc-auto",
                              .piece_bytes = PIECES_DEFAULT_BYTES };
    PMPI_Comm_size(MPI_COMM_WORLD, &p.world_size);
    p.sites = calloc((size_t)(n ? n : 1), sizeof *p.sites);
    if (!p.sites)
        return NULL;
    for (int i = 0; i < n; i++)
        if (sites[i] && sites[i]->prof) {
            struct tnbc_profile_site *ps = &p.sites[p.nsites++];
            *ps = sites[i]->prof->sites[0];
            ps->has_measured = sites[i]->judged;
            ps->measured = sites[i]->measured;
        }
    char *text = tnbc_profile_text(&p, len);
    free(p.sites);
    return text;
}

/* Rank 0: every rank's text parsed, each (site, op) once, written. */
static int merge_write(const char *all, const int *len, int nranks, const char *path)
{
    struct tnbc_profile out = { .version = TNBC_PROFILE_VERSION, .source = "tnbc-auto",
                                .piece_bytes = PIECES_DEFAULT_BYTES };
    struct tnbc_profile **parts = calloc((size_t)nranks, sizeof *parts);
    char err[TNBC_PROFILE_ERRLEN] = "out of memory";
    int total = 0, rc = -1;
    PMPI_Comm_size(MPI_COMM_WORLD, &out.world_size);
    for (int r = 0, at = 0; parts && r < nranks; at += len[r++]) {
        parts[r] = len[r] > 0 ? tnbc_profile_parse(all + at, (size_t)len[r], "tnbc-auto", err, sizeof err)
                              : NULL;
        total += parts[r] ? parts[r]->nsites : 0;
    }
    out.sites = parts ? calloc((size_t)(total ? total : 1), sizeof *out.sites) : NULL;
    for (int r = 0; out.sites && r < nranks; r++)
        for (int i = 0; parts[r] && i < parts[r]->nsites; i++) {
            const struct tnbc_profile_site *ps = &parts[r]->sites[i];
            int dup = 0;
            for (int j = 0; j < out.nsites && !dup; j++)
                dup = strcmp(out.sites[j].site, ps->site) == 0 && strcmp(out.sites[j].op, ps->op) == 0;
            if (!dup)
                out.sites[out.nsites++] = *ps;
        }
    if (out.sites)
        rc = tnbc_profile_write(&out, path, err, sizeof err);
    if (rc != 0)
        tnbc_warn("cannot write the learned profile: %s", err);
    free(out.sites);
    for (int r = 0; parts && r < nranks; r++)
        tnbc_profile_free(parts[r]);
    free(parts);
    return rc;
}

int autotune_write_profile(struct auto_site *const *sites, int n, const char *path)
{
    int me = 0, p = 0, rc;
    size_t tl = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &me);
    PMPI_Comm_size(MPI_COMM_WORLD, &p);
    char *text = own_text(sites, n, &tl);
    int mine = text && tl <= 0x7fffffff ? (int)tl : 0;
    int *len = NULL;
    char *all = gather_at_root(text, mine, MPI_CHAR, 1, MPI_COMM_WORLD, &len, &rc);
    int out = 0;
    if (me == 0)
        out = all ? merge_write(all, len, p, path) : -1;
    if (me == 0 && rc != MPI_SUCCESS)
        tnbc_warn("cannot gather the learned profile (MPI error %d)", rc);
    free(text);
    free(len);
    free(all);
    return out;
}
