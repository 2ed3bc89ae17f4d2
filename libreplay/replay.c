/* Replay mode: blocking collectives at profiled call sites return early.
 *
 * On entry the call's schedule is built (nbop.c), the send buffer copied,
 * the receive pages guarded (PROT_NONE), the sub-messages that share the
 * buffer's unaligned edge pages completed, and the rest left to the
 * progress thread; the fault handler lets the program continue as soon as
 * the sub-message it touches has landed. Every rank must take the same
 * path for a call, so before transforming a call the ranks agree on it
 * (a small MPI_Alltoall on a private communicator, done only for
 * operations the profile turns on somewhere). Anything not transformed
 * runs the real blocking collective. */
#include "callsite.h"
#include "clock.h"
#include "config.h"
#include "intercept.h"
#include "land.h"
#include "nbop.h"
#include "phases.h"
#include "profile.h"
#include "progress.h"
#include "runinfo.h"
#include "tracedb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

const char tnbc_mode_name[] = "tnbc replay";

struct site_stats {
    const struct tnbc_site *site;
    enum tnbc_op op;
    int64_t calls, early, total_ticks, wait_ns, bytes;
    int warned;
};

static struct {
    int on;                /* a profile is loaded and the machinery runs */
    int can_land;          /* this rank can transform calls */
    struct tnbc_profile *prof;
    MPI_Comm data, agree;  /* private duplicates of MPI_COMM_WORLD */
    int rank, seq;
    int op_on[TNBC_OP_COUNT];
    struct tnbc_site_table stats;   /* of struct site_stats */
    long record_max;
    int trial;             /* TNBC_REPLAY_TRIAL: every other call of a site blocking */
    struct tnbc_db *db;
} R;

static int profile_requested(void) { return tnbc_env_str("TNBC_PROFILE", NULL) != NULL; }

int tnbc_mode_thread_level(int required)
{
    return profile_requested() ? MPI_THREAD_MULTIPLE : required;
}

static void open_summary(void)
{
    const char *dir = tnbc_env_str("TNBC_REPLAY_DIR", NULL);
    struct tnbc_run_info info;
    if (!dir)
        return;
    tnbc_runinfo_collect(&info, "replay");
    R.db = tnbc_rank_db_open(dir, &info);
}

int tnbc_mode_init(int provided)
{
    const char *path = tnbc_env_str("TNBC_PROFILE", NULL), *why = NULL;
    char err[TNBC_PROFILE_ERRLEN];

    PMPI_Comm_rank(MPI_COMM_WORLD, &R.rank);
    if (!path)
        return 0;         /* pass-through */
    R.prof = tnbc_profile_load(path, err, sizeof err);
    if (!R.prof) {
        if (R.rank == 0)
            tnbc_warn("%s; every collective runs blocking", err);
        return 0;
    }
    if (provided < MPI_THREAD_MULTIPLE) {
        if (R.rank == 0)
            tnbc_warn("MPI_THREAD_MULTIPLE is not available (got level %d); every collective runs blocking",
                      provided);
        return 0;
    }
    R.can_land = land_init(&why) == 0;
    if (!R.can_land)
        tnbc_warn("%s; collectives on this rank run blocking", why);
    for (int i = 0; i < R.prof->nsites; i++) {
        int op = tnbc_op_from_name(R.prof->sites[i].op);
        if (op >= 0 && R.prof->sites[i].on)
            R.op_on[op] = 1;
    }
    PMPI_Comm_dup(MPI_COMM_WORLD, &R.data);
    PMPI_Comm_dup(MPI_COMM_WORLD, &R.agree);
    R.record_max = tnbc_env_long("TNBC_REPLAY_RECORD_MAX", 64, 0, 1L << 40);
    R.trial = tnbc_env_bool("TNBC_REPLAY_TRIAL", 0);
    nbop_node_schedule = tnbc_env_bool("TNBC_NODE_SCHEDULE", 1);
    nbop_piece_bytes = tnbc_env_long("TNBC_PIECE", nbop_piece_bytes, 0, 1L << 30);
    int window = (int)tnbc_env_long("TNBC_WINDOW", 8, 1, 1024);
    long sleep_us = tnbc_env_long("TNBC_PROGRESS_SLEEP_US", 200, 1, 100000);
    if (progress_start(window, sleep_us) != 0) {
        tnbc_warn("cannot start the progress thread; every collective runs blocking");
        R.can_land = 0;
    }
    open_summary();
    R.on = 1;
    return 1;
}

/* ---- accounting ---------------------------------------------------------- */

static struct site_stats *stats_for(const struct tnbc_site *site, enum tnbc_op op)
{
    R.stats.row_size = sizeof(struct site_stats);
    struct site_stats *s = tnbc_site_row(&R.stats, site);
    if (s) {
        s->site = site;
        s->op = op;
    }
    return s;
}

static struct site_stats *stats_at(int index)
{
    return (struct site_stats *)R.stats.rows + index;
}

static void record(struct nbop *op)
{
    if (op->site_index < 0)
        return;           /* a call site dladdr could not resolve */
    struct site_stats *st = stats_at(op->site_index);
    int64_t wait = atomic_load(&op->wait_ns);
    st->wait_ns += wait;
    if (!R.db || !op->record)
        return;
    struct tnbc_call_row row = {
        .rank = R.rank, .site = st->site->id, .invocation = (int)op->invocation,
        .op = tnbc_op_name(op->a.op), .comm_size = op->layout.comm_size,
        .comm_rank = op->layout.comm_rank, .root = op->a.root,
        .send_type_size = op->layout.send_type_size, .recv_type_size = op->layout.recv_type_size,
        .send_bytes = (int64_t)op->layout.send.bytes, .recv_bytes = (int64_t)op->layout.recv.bytes,
        .block_bytes = op->layout.recv.block_bytes, .nsub = op->layout.recv.nsub,
        .chunks = op->layout.chunks, .entry_tsc = (int64_t)op->entry_tick,
        .return_tsc = (int64_t)op->return_tick, .wait_ns = wait,
    };
    tnbc_db_call(R.db, &row);
}

/* A trial run's blocking call: a row with wait_ns = -1 (docs/schema.md),
 * so that --measured can compare the cycles after early and after
 * blocking calls of one run. Only who, where and when are filled in. */
static void record_blocking(const struct tnbc_args *a, struct site_stats *st, int64_t invocation,
                            uint64_t entry, uint64_t ret)
{
    if (!R.db || !st->site || st->calls > 2 * R.record_max)
        return;
    int size = 0, rank = 0;
    PMPI_Comm_size(a->comm, &size);
    PMPI_Comm_rank(a->comm, &rank);
    struct tnbc_call_row row = {
        .rank = R.rank, .site = st->site->id, .invocation = (int)invocation,
        .op = tnbc_op_name(a->op), .comm_size = size, .comm_rank = rank, .root = a->root,
        .block_bytes = -1, .entry_tsc = (int64_t)entry, .return_tsc = (int64_t)ret, .wait_ns = -1,
    };
    tnbc_db_begin(R.db);
    tnbc_db_call(R.db, &row);
    tnbc_db_commit(R.db);
}

static void reap(void)
{
    struct nbop *list = progress_take_done();
    if (!list)
        return;
    if (R.db)
        tnbc_db_begin(R.db);
    while (list) {
        struct nbop *next = list->next;
        record(list);
        nbop_free(list);
        list = next;
    }
    if (R.db)
        tnbc_db_commit(R.db);
}

/* ---- the fault path ---------------------------------------------------- */

/* Runs in the faulting thread (signal context) or before a system call,
 * MPI call, free or reuse of the buffer: wait until the data is there. */
static void on_guard_event(struct tnbc_guard *g, int sub, enum tnbc_guard_event ev,
                           enum tnbc_release_reason why, uint64_t tick)
{
    struct nbop *op = g->user;
    (void)ev; (void)why; (void)tick;
    if (atomic_load(&op->sub_done[sub]))
        return;
    uint64_t t0 = tnbc_ns_now();
    progress_urgent(1);
    nbop_wait_sub(op, sub);
    progress_urgent(-1);
    atomic_fetch_add(&op->wait_ns, (long long)(tnbc_ns_now() - t0));
}

/* ---- the collective ----------------------------------------------------- */

/* Lift guards of earlier calls on the memory a blocking call uses (the
 * layout is built only while anything is guarded). */
static void release_reused(const struct tnbc_args *a)
{
    struct tnbc_call_layout l;
    const char *why;
    if (!tnbc_guard_active() || tnbc_layout_build(a, 1, &l, &why) != 0)
        return;
    tnbc_guard_release_layout(&l, TNBC_REL_REUSE);
    tnbc_layout_free(&l);
}

static int blocking(const struct tnbc_args *a, struct site_stats *st, int trial_row)
{
    uint64_t t0 = tnbc_ticks();
    release_reused(a);
    int rc = tnbc_pmpi_collective(a);
    if (st) {
        uint64_t t1 = tnbc_ticks();
        if (trial_row)
            record_blocking(a, st, st->calls, t0, t1);
        st->calls++;
        st->total_ticks += (int64_t)(t1 - t0);
    }
    return rc;
}

/* This rank's candidate for an early return, or NULL with a reason. */
static struct nbop *candidate(const struct tnbc_args *a, const struct tnbc_site *site,
                              const struct tnbc_profile_site **ps, const char **why)
{
    static char msg[TNBC_PROFILE_ERRLEN];
    struct tnbc_call_layout l;
    *ps = tnbc_profile_find(R.prof, site->id, tnbc_op_name(a->op));
    if (!*ps || !(*ps)->on) {
        *why = *ps ? (*ps)->reason : "site not in the profile";
        return NULL;
    }
    if (!R.can_land) {
        *why = "this rank cannot land data in guarded pages";
        return NULL;
    }
    if (tnbc_layout_build(a, (*ps)->chunks > 0 ? (*ps)->chunks : 1, &l, why) != 0)
        return NULL;
    if (!tnbc_call_transformable(a, &l, why)) {
        tnbc_layout_free(&l);
        return NULL;
    }
    int64_t block = tnbc_op_is_chunked(a->op) ? (int64_t)(l.recv.nsub ? l.recv.bytes : l.send.bytes)
                                              : l.recv.nsub ? l.recv.block_bytes : (*ps)->block_bytes;
    if (a->rcounts)
        block = -1;
    int mismatch = tnbc_profile_check(R.prof, *ps, l.comm_size, block, l.comm_rank, NULL, msg, sizeof msg);
    tnbc_layout_free(&l);
    if (mismatch) {
        *why = msg;
        return NULL;
    }
    return nbop_create(a, *ps, R.data, 1 + R.seq % 8000, why);
}


/* The ranks' agreement on a call, and the edge requests that go with it:
 * every rank tells every other whether it can transform the call and, for
 * per-source operations, how that rank's block must be cut for its edge
 * pages, and which node schedule it would follow. One small MPI_Alltoall
 * on a private communicator. Returns 1 when
 * every rank voted yes; `got` then holds what each rank asked of this one. */
static int agree(struct nbop *op, int p, struct edge_req *got)
{
    struct edge_req *out = malloc((size_t)p * sizeof *out);
    int all = op != NULL;
    if (!out) {
        tnbc_warn("out of memory while agreeing on a collective");
        PMPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int i = 0; i < p; i++)
        out[i] = op && op->want ? op->want[i] : (struct edge_req){ .vote = op != NULL };
    PMPI_Alltoall(out, EDGE_REQ_INTS, MPI_INT, got, EDGE_REQ_INTS, MPI_INT, R.agree);
    for (int i = 0; i < p; i++)
        all &= got[i].vote == 1;
    free(out);
    return all;
}

/* The receive sub-messages the program could read without a fault, for
 * operations without edge parts: those with bytes in unguarded edge pages
 * (all of them when nothing could be guarded). Taken before the call is
 * submitted: once it completes, the progress thread lifts the guard and its
 * arrays are gone. */
static int *unguarded_subs(struct nbop *op, int armed, int *n)
{
    int nsub = nbop_guard_layout(op)->nsub;
    int *list = malloc((size_t)(nsub + 1) * sizeof *list);
    *n = 0;
    for (int i = 0; list && i < nsub; i++)
        if (!armed || (!op->per_source && op->guard.cover[i] != TNBC_COVER_GUARDED))
            list[(*n)++] = i;
    return list;
}

static void arm(struct nbop *op, int *armed)
{
    op->guard.layout = nbop_guard_layout(op);
    op->guard.closed_prot = PROT_NONE;
    op->guard.flags = GUARD_WAIT_NEIGHBOURS;
    op->guard.hook = on_guard_event;
    op->guard.user = op;
    *armed = op->guard.layout->nsub && tnbc_guard_arm(&op->guard) > 0;
    for (int i = 0; *armed && i < op->guard.layout->nsub; i++)
        if (atomic_load(&op->sub_done[i]))
            tnbc_guard_open_sub(&op->guard, i);
}

int tnbc_mode_collective(const struct tnbc_args *a, void *caller)
{
    const struct tnbc_profile_site *ps = NULL;
    const char *why = NULL;
    int p = 0, armed;

    if (!R.on || a->comm != MPI_COMM_WORLD || !R.op_on[a->op])
        return blocking(a, NULL, 0);
    reap();
    PMPI_Comm_size(a->comm, &p);
    const struct tnbc_site *site = tnbc_site_of(caller);
    struct site_stats *st = stats_for(site, a->op);
    uint64_t entry = phase_start(), clock = entry;
    /* A trial run votes no on every other call of a site, so that all
     * ranks run it blocking (the agreement keeps them together). */
    int trial_off = R.trial && st && st->calls % 2 == 1 &&
                    (ps = tnbc_profile_find(R.prof, site->id, tnbc_op_name(a->op))) && ps->on;
    struct nbop *op = trial_off ? NULL : candidate(a, site, &ps, &why);
    phase_end(&clock, PHASE_CANDIDATE);
    struct edge_req *got = malloc((size_t)p * sizeof *got);
    if (!got) {
        tnbc_warn("out of memory while agreeing on a collective");
        PMPI_Abort(MPI_COMM_WORLD, 1);
    }
    int all = agree(op, p, got);
    phase_end(&clock, PHASE_AGREE);
    R.seq++;
    if (all && nbop_plan_sends(op, got) != 0) {
        static int warned;
        tnbc_warn_once(warned, "%s at %s: block sizes differ between sender and receiver",
                       tnbc_op_name(a->op), site->id);
        PMPI_Abort(MPI_COMM_WORLD, 1);   /* the blocking collective would fail too */
    }
    free(got);
    if (!all) {
        if (st && !st->warned && ps && ps->on && !trial_off) {
            st->warned = 1;
            tnbc_warn("%s at %s runs blocking: %s", tnbc_op_name(a->op), site->id,
                      op ? "another rank cannot transform it" : why);
        }
        nbop_free(op);
        return blocking(a, st, trial_off);
    }
    tnbc_guard_release_layout(&op->layout, TNBC_REL_REUSE);
    phase_end(&clock, PHASE_PLAN);
    arm(op, &armed);
    op->site_index = site->index;
    op->entry_tick = entry;
    /* The count of all calls at the site, blocking ones included (as in
     * the trace), so that a gap in the recorded calls shows as one. */
    op->invocation = st ? st->calls : 0;
    op->record = st && st->early < R.record_max;
    int nwait;
    int *wait = unguarded_subs(op, armed, &nwait);
    phase_end(&clock, PHASE_ARM);
    /* The copies come before the progress thread starts the call: they
     * need this thread's CPU either way, and copying while the progress
     * thread drives the network made the copying thread wait for its core
     * (measured on the emulated cluster, docs/replay.md); starting after
     * them delays the first message by one copy (~0.1 ms/MiB). */
    nbop_copy_sends(op);
    phase_end(&clock, PHASE_COPY);
    if (op->per_source)
        nbop_land_self(op);
    phase_end(&clock, PHASE_LAND_SELF);
    progress_submit(op);
    if (!wait)
        progress_quiesce();        /* out of memory: complete everything */
    phase_end(&clock, PHASE_SUBMIT);
    progress_urgent(1);
    if (op->per_source)
        nbop_wait_edges(op);
    for (int i = 0; i < nwait; i++)
        nbop_wait_sub(op, wait[i]);
    progress_urgent(-1);
    free(wait);
    phase_end(&clock, PHASE_EDGES);
    phase_call_done();
    op->return_tick = clock;
    if (st) {
        st->calls++;
        st->early++;
        st->total_ticks += (int64_t)(op->return_tick - entry);
        st->bytes += (int64_t)op->layout.recv.bytes;
    }
    return MPI_SUCCESS;
}

void tnbc_mode_quiesce(MPI_Comm *comm)
{
    if (!R.on || comm)
        return;        /* only MPI_COMM_WORLD is transformed */
    progress_quiesce();
    reap();
}

static void write_summary(void)
{
    if (!R.db)
        return;
    tnbc_db_begin(R.db);
    for (int i = 0; i < R.stats.nrows; i++) {
        struct site_stats *s = stats_at(i);
        if (!s->site)
            continue;
        struct tnbc_site_row row = {
            .rank = R.rank, .site = s->site->id, .module = s->site->module,
            .symbol = s->site->symbol, .op = tnbc_op_name(s->op), .offset = s->site->offset,
            .calls = s->calls, .traced = s->early,
            .total_ns = (int64_t)tnbc_ticks_to_ns((uint64_t)s->total_ticks), .bytes = s->bytes,
        };
        tnbc_db_site(R.db, &row);
    }
    tnbc_db_run_finished(R.db, R.rank);
    tnbc_db_commit(R.db);
    tnbc_db_close(R.db);
    R.db = NULL;
}

void tnbc_mode_finalize(void)
{
    if (!R.on)
        return;
    progress_stop();
    reap();
    write_summary();
    phase_report(R.rank);
    PMPI_Comm_free(&R.data);
    PMPI_Comm_free(&R.agree);
    tnbc_profile_free(R.prof);
    R.on = 0;
}
