// SPDX-License-Identifier: BSD-3-Clause
/* Replay mode: blocking collectives at profiled call sites return early.
 *
 * On entry the call's schedule is built (nbop.c), the send buffer copied,
 * the receive pages guarded (PROT_NONE), the sub-messages that share the
 * buffer's unaligned edge pages completed, and the rest left to the
 * progress thread; the fault handler lets the program continue as soon as
 * the sub-message it touches has landed. Every rank must take the same
 * path for a call, so before transforming a call the ranks agree on it
 * (a small MPI_Alltoall on a private communicator, done only for
 * operations the profile turns on somewhere). Any intra-communicator
 * qualifies: its sites are told apart by shape (comm_shape.h) and it gets
 * its own private duplicates (comms.c). Anything not transformed runs the
 * real blocking collective, and its reason is counted per site
 * (enum fallback, the summary's site.fallback).
 *
 * No cost when off: the thread level is raised to MPI_THREAD_MULTIPLE, the
 * private communicators made and the agreement run only when the profile
 * turns on a site of a module this process has loaded (decided before
 * MPI_Init_thread from the profile, then made common to all ranks with one
 * MPI_Allreduce at initialisation); the progress thread starts on the
 * first call that goes early.
 *
 * Programs that ask for MPI_THREAD_MULTIPLE: the runtime's per-call state
 * (site table, summary, buffer pool, progress submissions) is used by one
 * thread at a time, the one whose collective holds the token (taken at
 * the call's start, given back at its end, never waited for). Threads may
 * take turns: main, then a worker while main waits for it, then main
 * again (an OpenMP `single`, a program that hands its exchange to a
 * fresh thread), and every call may go early; an early call's data may
 * be read by any thread (the guard is the process's). A collective that
 * finds the token taken overlaps another thread's: that stops this rank's
 * machinery for good (said once per rank): that call and every later one
 * on the rank take part in the agreement where the others hold one, vote
 * no (auto: send a key no site has), and run blocking, touching only
 * their communicator's own state,
 * which no two threads use at once (MPI forbids concurrent collectives on
 * one communicator). No lock is held across an agreement, so two ranks
 * whose threads reach their collectives in different orders cannot
 * deadlock. */
#include "activity.h"
#include "autotune.h"
#include "callsite.h"
#include "clock.h"
#include "comm_shape.h"
#include "comms.h"
#include "config.h"
#include "crowding.h"
#include "identity.h"
#include "inplace.h"
#include "intercept.h"
#include "land.h"
#include "nbop.h"
#include "phases.h"
#include "profile.h"
#include "progress.h"
#include "runinfo.h"
#include "send_guard.h"
#include "tracedb.h"
#include "yield.h"

#include <assert.h>
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

const char tnbc_mode_name[] = "tnbc replay";

/* Why a call at a site ran blocking (counted per site, written to the
 * summary's site.fallback as "name:count ..."; docs/schema.md). */
enum fallback {
    FB_OFF,            /* the profile turns the site off */
    FB_NOT_PROFILED,   /* the site is not in the profile */
    FB_MISMATCH,       /* size, communicator or rank differ from the profile's */
    FB_UNSUPPORTED,    /* a form not transformed (MPI_IN_PLACE, datatype, op...) */
    FB_NO_MEMORY,      /* an allocation failed on this rank */
    FB_CANNOT_LAND,    /* this rank cannot write into guarded pages */
    FB_NO_THREAD,      /* the progress thread could not be started */
    FB_OTHER_RANK,     /* this rank could, another could not */
    FB_TRIAL,          /* TNBC_REPLAY_TRIAL: half the calls blocking (trial_blocking) */
    FB_GUARD,          /* agreed, but the pages could not be guarded: the
                          call waited for all its data before returning */
    FB_AGREE_FAILED,   /* the agreement's MPI call failed */
    FB_UNSAFE,         /* tnbc_call_transformable: derived type, inexact
                          reduction, stack or shared memory, overlap */
    FB_NOTHING_TO_GUARD, /* no block still to arrive lies in whole pages
                          (nbop_guards_something): the call would wait for all of it */
    FB_SCHEDULE,       /* the ranks' chunk schedules differ */
    FB_LEARN,          /* TNBC_AUTO: learning the site's read order, or deciding */
    FB_CHECK,          /* TNBC_AUTO: an ON site's call run blocking to compare */
    FB_RANKS_DIFFER,   /* TNBC_AUTO: the members call from different sites,
                          or are at different steps of one site's learning */
    FB_STOPPED,        /* after a thread stop: the `(stopped)` rows only */
    FB_COUNT
};

static const char *const fallback_names[FB_COUNT] = {
    [FB_OFF] = "off", [FB_NOT_PROFILED] = "not-profiled", [FB_MISMATCH] = "profile-mismatch",
    [FB_UNSUPPORTED] = "unsupported", [FB_NO_MEMORY] = "no-memory",
    [FB_CANNOT_LAND] = "cannot-land", [FB_NO_THREAD] = "no-progress-thread",
    [FB_OTHER_RANK] = "other-rank", [FB_TRIAL] = "trial", [FB_GUARD] = "guard-conflict",
    [FB_AGREE_FAILED] = "agreement-failed", [FB_NOTHING_TO_GUARD] = "nothing-to-guard",
    [FB_UNSAFE] = "unsafe", [FB_SCHEDULE] = "schedule-differs", [FB_LEARN] = "learning",
    [FB_RANKS_DIFFER] = "ranks-differ", [FB_CHECK] = "checking", [FB_STOPPED] = "stopped",
};

struct site_stats {
    const struct tnbc_site *site;
    enum tnbc_op op;
    int64_t calls, early, total_ticks, wait_ns, bytes;
    int64_t fallback[FB_COUNT];   /* blocking calls by reason */
    struct phase_sums steps;      /* the early returns' steps */
    uint64_t land_ticks;          /* the progress thread's landings (reaped ops) */
    int64_t land_bytes;
    int warned;
    int64_t send_balance_ns;      /* copies saved minus the program's waits for
                                     sends from its pages; below 0 the site
                                     copies them (send_guard.h) */
    struct auto_site *au;         /* TNBC_AUTO: what the site learned */
};

static struct {
    int on;                /* a profile is loaded and the machinery runs */
    int passive;           /* off everywhere, but counting calls for the summary */
    int loaded;            /* the profile was read (before MPI_Init_thread) */
    int yield_set;         /* yield_when_crowded() set Open MPI's variable */
    int push_first;        /* TNBC_PUSH_FIRST: 1, 0, or -1 by the site's regime */
    int wants_on;          /* it turns on a site of a module loaded here */
    const char *foreign_free;  /* tnbc_foreign_free(): this rank runs blocking */
    int user_level;        /* the thread level the program asked for */
    int multiple;          /* it asked for MPI_THREAD_MULTIPLE: the token */
    char prof_err[TNBC_PROFILE_ERRLEN];
    char identity[TNBC_PROFILE_ERRLEN + 256]; /* why the profile's sites are off, or "" */
    struct tnbc_profile *prof;
    int window;            /* progress thread settings, for its lazy start */
    long sleep_us;
    int progress_batch;     /* TNBC_PROGRESS_BATCH: the thread under SCHED_BATCH */
    int thread_failed;
    int rank;
    int op_on[TNBC_OP_COUNT];
    struct tnbc_site_table stats;   /* of struct site_stats */
    long record_max;
    int trial;             /* TNBC_REPLAY_TRIAL: half the calls of a site blocking */
    int trial_sites;       /* ... and this many `trial` sites of the profile run as on */
    int autotune;          /* TNBC_AUTO: sites learned in this run (autotune.h) */
    int auto_out;          /* every rank: TNBC_AUTO_PROFILE_OUT names the file */
    int any_auto;          /* some rank runs tnbc auto (TNBC_AUTO) */
    struct tnbc_db *db;
} R;

/* Is the object file named `module` (a call-site id's basename) loaded? */
struct module_query { const char *name; size_t len; int found; };

static int match_module(struct dl_phdr_info *info, size_t size, void *arg)
{
    struct module_query *q = arg;
    const char *path = info->dlpi_name && *info->dlpi_name ? info->dlpi_name
                                                           : program_invocation_name;
    const char *base = strrchr(path, '/');
    (void)size;
    base = base ? base + 1 : path;
    q->found |= strlen(base) == q->len && strncmp(base, q->name, q->len) == 0;
    return q->found;
}

static int site_module_loaded(const char *id)
{
    struct module_query q = { id, tnbc_site_module_len(id), 0 };
    if (q.len == 1 && id[0] == '?')
        return 1;      /* an unresolved site: cannot tell, assume it may match */
    dl_iterate_phdr(match_module, &q);
    return q.found;
}

/* Memory handed back behind tnbc's back may be unmapped and mapped again
 * while a landing or a send from its pages is under way: such a rank runs
 * as without tnbc (and candidate() says no where other ranks run). */
static void refuse_foreign_free(void)
{
    R.foreign_free = R.wants_on ? tnbc_foreign_free() : NULL;
    if (R.foreign_free)
        R.wants_on = 0;
}

/* A trial run (TNBC_REPLAY_TRIAL=1) runs the sites the analyzer marked
 * `trial` (off by the model's timing alone) as if on, so that half their
 * calls are timed early and `tnbc analyze --measured` decides them from
 * the run rather than the model. Returns how many. */
static int trial_sites_on(struct tnbc_profile *prof)
{
    int n = 0;
    if (!prof || !R.trial)
        return 0;
    for (int i = 0; i < prof->nsites; i++) {
        struct tnbc_profile_site *s = &prof->sites[i];
        assert(!s->trial || !s->on);
        if (s->trial) {
            s->on = 1;
            s->trial = 0;     /* on now: trial_blocking counts it among the on sites */
            n++;
        }
    }
    return n;
}

/* Whether a trial run's call number `n` of an on site runs blocking: bit
 * b of n, where b = TRIAL_FIRST_BIT + the site's place among the
 * profile's on sites (0, 1, ...) modulo TRIAL_BITS. The first site runs
 * 4 calls early, then 4 blocking, the second 8 and 8, the third 16 and
 * 16, the fourth 32 and 32, the fifth as the first. So call n and call n
 * + 2^b of a site (bit b clear in n) differ in that site's state alone:
 * in a loop that calls several sites once each, `tnbc analyze --measured`
 * compares the cycles after such pairs, and the other sites' gains do not
 * show as this site's (with every site alternating in step, a site that
 * gained nothing took the gain of the one beside it: analyzer/measured.c).
 * And a pair's two calls stand at the same place in the program where it
 * calls the site 1, 2 or 4 times per iteration: the cycle after a call
 * spans the code up to the next, which differs from one call of an
 * iteration to the next (fft3d's forward and backward transposes), and
 * alternating calls took that difference for the early return's (a
 * 340 ms "gain" in a run 3% slower). Sites whose places are equal modulo
 * TRIAL_BITS share a pattern and are told apart no better than with
 * every site alternating in step; the longest pattern (32 calls each
 * way) stays within the calls a summary records (TNBC_REPLAY_RECORD_MAX,
 * 64). Every rank reads the same profile, so all compute the same. */
#define TRIAL_FIRST_BIT 2
#define TRIAL_BITS 4
static int trial_blocking(const struct tnbc_profile *prof, const struct tnbc_profile_site *ps,
                          int64_t n)
{
    int k = 0;
    for (const struct tnbc_profile_site *s = prof->sites; s < ps; s++)
        k += s->on != 0;
    return (int)(((uint64_t)n >> (TRIAL_FIRST_BIT + k % TRIAL_BITS)) & 1);
}

/* Reads TNBC_PROFILE once, before MPI_Init_thread: whether any of its
 * sites that are on can be reached from this process decides the thread
 * level. Errors are reported by tnbc_mode_init, once the rank is known. */
static void load_profile(void)
{
    const char *path = tnbc_env_str("TNBC_PROFILE", NULL);
    if (R.loaded)
        return;
    if (!path) {
        /* Without a profile, TNBC_AUTO learns one: the machinery runs. */
        R.autotune = R.wants_on = tnbc_env_bool("TNBC_AUTO", 0);
        R.loaded = R.autotune;
        refuse_foreign_free();
        return;
    }
    R.loaded = 1;
    R.prof = tnbc_profile_load(path, R.prof_err, sizeof R.prof_err);
    identity_check(R.prof, R.identity, sizeof R.identity);
    /* Read here, once (a bad value is said once): the trial sites decide
     * whether any site is on, hence the thread level, before MPI starts. */
    R.trial = tnbc_env_bool("TNBC_REPLAY_TRIAL", 0);
    R.trial_sites = trial_sites_on(R.prof);
    for (int i = 0; R.prof && i < R.prof->nsites && !R.wants_on; i++)
        R.wants_on = R.prof->sites[i].on && tnbc_op_from_name(R.prof->sites[i].op) >= 0 &&
                     site_module_loaded(R.prof->sites[i].site);
    refuse_foreign_free();
}

int tnbc_mode_thread_level(int required)
{
    load_profile();
    R.user_level = required;
    if (R.wants_on)
        R.yield_set = yield_when_crowded();
    return R.wants_on && required < MPI_THREAD_MULTIPLE ? MPI_THREAD_MULTIPLE : required;
}

static void open_summary(void)
{
    const char *dir = tnbc_env_str("TNBC_REPLAY_DIR", NULL);
    struct tnbc_run_info info;
    if (!dir)
        return;
    tnbc_clock_init();     /* the summary's stamps and tsc_hz */
    tnbc_runinfo_collect(&info, "replay");
    R.db = tnbc_rank_db_open(dir, &info);
}

static void drain(void);

/* Every rank must take part in the agreement or none: one MPI_Allreduce
 * over what each rank's profile asks for (a rank may not have loaded the
 * module of a site) and whether it could set itself up. A program that
 * asked for MPI_THREAD_MULTIPLE passes a token between its threads (top of file).
 * Returns 1 when the machinery runs on every rank. */
static int all_ranks_on(int provided)
{
    int mine[3] = { R.wants_on, -(R.autotune && tnbc_env_str("TNBC_AUTO_PROFILE_OUT", NULL) != NULL),
                    R.autotune };
    int all[3] = { 0, 0, 0 };
    if (PMPI_Allreduce(mine, all, 3, MPI_INT, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS) {
        tnbc_warn("cannot agree on the profile at start; every collective runs blocking");
        return 0;
    }
    R.auto_out = all[1] == -1;     /* (MAX of negated flags: every rank has one) */
    R.any_auto = all[2];
    R.multiple = R.user_level == MPI_THREAD_MULTIPLE;
    if (!all[0])
        return 0;
    if (provided < MPI_THREAD_MULTIPLE) {
        /* Still votes (no) in every agreement, so the others are not left waiting. */
        tnbc_warn("MPI_THREAD_MULTIPLE is not available (got level %d); collectives on this rank run blocking",
                  provided);
        return 1;
    }
    const char *why = NULL;
    if (land_init(&why) != 0)
        tnbc_warn("%s; collectives on this rank run blocking", why);
    return 1;
}

/* Profiles without a `piece` line mean the pieces every analyzer assumed. */
_Static_assert(TNBC_PROFILE_PIECE_DEFAULT == PIECES_DEFAULT_BYTES,
               "profiles/profile.h and libreplay/pieces.h disagree on the default piece");

/* Body pieces of the size the analyzer assumed when it predicted the
 * savings (the profile's `piece` line), unless TNBC_PIECE says otherwise;
 * then rank 0 says once that it overrides the profile. */
static long piece_bytes(void)
{
    long prof = R.prof ? R.prof->piece_bytes : PIECES_DEFAULT_BYTES;
    if (!tnbc_env_str("TNBC_PIECE", NULL))
        return prof;
    long env = tnbc_env_long("TNBC_PIECE", prof, 0, TNBC_PROFILE_PIECE_MAX);
    if (R.rank == 0)
        tnbc_warn("TNBC_PIECE=%ld overrides the profile's piece size (%ld bytes)", env, prof);
    return env;
}

/* Sends in flight per call, in pieces of `piece` bytes: 2 MiB, enough
 * to keep a link busy while the progress thread waits for a CPU the
 * program's threads also want (docs/replay.md, "The send window"; 8
 * pieces of 32 KiB starved a node's link there). TNBC_WINDOW overrides. */
static int send_window(long piece)
{
    const long bytes = 2L << 20;
    long n = piece > 0 ? bytes / piece : 64;
    n = n < 8 ? 8 : n > 1024 ? 1024 : n;
    return (int)tnbc_env_long("TNBC_WINDOW", n, 1, 1024);
}

int tnbc_mode_init(int provided)
{
    PMPI_Comm_rank(MPI_COMM_WORLD, &R.rank);
    load_profile();
    if (!tnbc_env_str("TNBC_PROFILE", NULL) && !R.autotune)
        return 0;         /* pass-through */
    if (!R.prof && !R.autotune && R.rank == 0)
        tnbc_warn("%s; every collective runs blocking", R.prof_err);
    if (R.identity[0] && R.rank == 0)
        tnbc_warn("warning: %s", R.identity);
    if (R.foreign_free)
        tnbc_warn("every collective on this rank runs blocking: %s", R.foreign_free);
    if (!all_ranks_on(provided)) {
        /* Off everywhere: exactly as without tnbc (no thread, no agreement).
         * With a summary asked for, the calls are still counted per site,
         * all blocking with their reason (passive: a hash probe per call). */
        if (R.prof)
            open_summary();
        R.passive = R.db != NULL;
        return R.passive;
    }
    tnbc_clock_init();     /* before anything is timed: not for the pass-through */
    for (int i = 0; R.autotune && i < TNBC_OP_COUNT; i++)
        R.op_on[i] = 1;
    /* Collective: where any rank runs auto, every rank that got here
     * (a rank's TNBC_AUTO is its own; 136 bytes per rank, once). */
    struct crowding crowd = { 1, 1 };
    if (R.any_auto && crowding_measure(MPI_COMM_WORLD, &crowd) != 0 && R.rank == 0)
        tnbc_warn("cannot count the ranks per machine; auto takes every machine as not crowded");
    if (R.autotune)
        autotune_configure((int)tnbc_env_long("TNBC_AUTO_LEARN", 2, 1, AUTO_LEARN_MAX),
                           tnbc_env_long("TNBC_AUTO_MIN_BYTES", 65536, 0, 1L << 40),
                           (int)tnbc_env_long("TNBC_AUTO_CHECK", 16, AUTO_CHECK_MIN, AUTO_CHECK_MAX),
                           &crowd);
    for (int i = 0; R.prof && i < R.prof->nsites; i++) {
        int op = tnbc_op_from_name(R.prof->sites[i].op);
        if (op >= 0 && R.prof->sites[i].on)
            R.op_on[op] = 1;
    }
    comms_init(drain, sizeof(struct edge_req));
    R.record_max = tnbc_env_long("TNBC_REPLAY_RECORD_MAX", 64, 0, 1L << 40);
    if (R.yield_set && R.rank == 0)
        tnbc_warn("Open MPI polls yielding the CPU (OMPI_MCA_mpi_yield_when_idle=1, set by tnbc): the "
                  "progress threads share the ranks' CPUs; set it to 0 to keep busy polling");
    if (R.trial && R.trial_sites && R.rank == 0)
        tnbc_warn("trial run: %d site(s) the analyzer turned off by its timing alone run as on, "
                  "half their calls blocking", R.trial_sites);
    long piece = piece_bytes();
    nbop_configure(piece, tnbc_env_bool("TNBC_NODE_SCHEDULE", 1),
                   tnbc_env_double("TNBC_TURN_PACE", 0.7, 0, 4));
    send_guard_configure();
    R.window = send_window(piece);
    R.sleep_us = tnbc_env_long("TNBC_PROGRESS_SLEEP_US", 200, 1, 100000);
    R.progress_batch = tnbc_env_bool("TNBC_PROGRESS_BATCH", 1);
    R.push_first = tnbc_env_str("TNBC_PUSH_FIRST", NULL) ? tnbc_env_bool("TNBC_PUSH_FIRST", 0) : -1;
    open_summary();
    if (R.db)
        activity_init();
    R.on = 1;
    return 1;
}

/* The progress thread, started on the first call that may go early. Under
 * a lock: two threads of the program may make their first such call at
 * once (on two communicators), and two progress threads would share its
 * queue while MPI_Finalize stops only one (a hang). */
static int ensure_progress_thread(void)
{
    static pthread_mutex_t start = PTHREAD_MUTEX_INITIALIZER;
    int rc = 0;
    pthread_mutex_lock(&start);
    if (!progress_running() && (R.thread_failed || progress_start(R.window, R.sleep_us, R.progress_batch) != 0)) {
        if (!R.thread_failed)
            tnbc_warn("cannot start the progress thread; collectives on this rank run blocking");
        R.thread_failed = 1;
        rc = -1;
    }
    pthread_mutex_unlock(&start);
    return rc;
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
    st->land_ticks += op->land_ticks;
    st->land_bytes += op->land_bytes;
    send_guard_account(&st->send_balance_ns, op);
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
    if (nbop_sub_is_done(op, sub))
        return;
    uint64_t t0 = progress_wait_begin();
    nbop_wait_sub(op, sub);
    atomic_fetch_add(&op->wait_ns, (long long)progress_wait_end(t0));
    activity_wait(op, sub, ev, t0);
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

/* A call that runs blocking: the real collective, counted under `why`
 * (FB_COUNT: not counted, e.g. a communicator replay does not handle). */
static int blocking(const struct tnbc_args *a, struct site_stats *st, enum fallback why)
{
    uint64_t t0 = tnbc_ticks();
    release_reused(a);
    int rc = tnbc_pmpi_collective(a);
    if (st) {
        uint64_t t1 = tnbc_ticks();
        if (why == FB_TRIAL)
            record_blocking(a, st, st->calls, t0, t1);
        st->calls++;
        if (why < FB_COUNT)
            st->fallback[why]++;
        st->total_ticks += (int64_t)(t1 - t0);
    }
    return rc;
}

/* This rank's candidate for an early return, or NULL with a reason (*why
 * for the one-time message, *fb for the count). */
static struct nbop *candidate(const struct tnbc_args *a, const struct tnbc_site *site,
                              struct comm_priv *cp, const struct tnbc_profile *prof,
                              const struct tnbc_profile_site **ps,
                              const char **why, enum fallback *fb,
                              struct tnbc_args *scratch, void **ipcopy)
{
    static char msg[TNBC_PROFILE_ERRLEN];
    struct tnbc_call_layout l;
    *ps = tnbc_profile_find(prof, site->id, tnbc_op_name(a->op));
    if (!*ps || !(*ps)->on) {
        *why = *ps ? (*ps)->reason : "site not in the profile";
        *fb = *ps ? FB_OFF : FB_NOT_PROFILED;
        return NULL;
    }
    if (R.foreign_free) {
        *why = R.foreign_free;
        *fb = FB_UNSAFE;
        return NULL;
    }
    /* Without a descriptor (no MPI_THREAD_MULTIPLE, or land_init failed)
     * land_check says this rank cannot land. */
    if (land_check(why) != 0) {
        *fb = FB_CANNOT_LAND;
        return NULL;
    }
    tnbc_guard_reserve_fd(land_fd());
    int in_place = inplace_args(a, scratch, ipcopy, why);
    if (in_place < 0) {
        *fb = FB_UNSUPPORTED;
        return NULL;
    }
    if (in_place)
        a = scratch;      /* the out-of-place equivalent (inplace.h) */
    if (tnbc_layout_build(a, (*ps)->chunks > 0 ? (*ps)->chunks : 1, &l, why) != 0) {
        *fb = FB_UNSUPPORTED;
        return NULL;
    }
    if (!tnbc_call_transformable(a, &l, why)) {
        tnbc_layout_free(&l);
        *fb = FB_UNSAFE;
        return NULL;
    }
    int64_t block = tnbc_op_is_chunked(a->op) ? (int64_t)(l.recv.nsub ? l.recv.bytes : l.send.bytes)
                                              : l.recv.nsub ? l.recv.block_bytes : (*ps)->block_bytes;
    if (a->rcounts)
        block = -1;
    else if (a->op == TNBC_SCATTER && !l.recv.nsub)
        block = l.send.bytes / l.comm_size; /* the root in place: what every member receives */
    int mismatch = tnbc_profile_check(prof, *ps, l.comm_size, block, l.comm_rank, NULL, msg, sizeof msg);
    tnbc_layout_free(&l);
    if (mismatch) {
        *why = msg;
        *fb = FB_MISMATCH;
        return NULL;
    }
    if (ensure_progress_thread() != 0) {
        *why = "the progress thread could not be started";
        *fb = FB_NO_THREAD;
        return NULL;
    }
    struct nbop *op = nbop_create(a, *ps, cp->data, cp->node_of, 1 + cp->seq % 8000, why);
    if (!op)
        *fb = *why == nbop_oom ? FB_NO_MEMORY : FB_UNSUPPORTED;
    else if (!nbop_guards_something(op)) {
        nbop_free(op);
        *why = "no block still to arrive lies wholly in the receive buffer's whole pages (too small, "
               "or blocks interleaved by a derived type): it would wait for all its data";
        *fb = FB_NOTHING_TO_GUARD;
        return NULL;
    }
    return op;
}


/* The ranks' agreement on a call, and the edge requests that go with it:
 * every rank tells every other whether it can transform the call and, for
 * per-source operations, how that rank's block must be cut for its edge
 * pages, and which node schedule it would follow (chunked operations: the
 * chunk schedule, which every rank must share). One small MPI_Alltoall
 * on a private communicator, over that communicator's buffers (allocated
 * with its state, so nothing here can run out of memory). Returns 1 when every rank voted yes;
 * cp->agree_got then holds what each rank asked of this one. 0: a rank
 * voted no; -1: the MPI call failed; AGREE_SCHEDULES_DIFFER: all voted
 * yes, but their chunk schedules differ (e.g. two sites of one call whose
 * profile lines order the chunks differently). */
#define AGREE_SCHEDULES_DIFFER (-2)
#define AGREE_RANKS_DIFFER (-3)  /* TNBC_AUTO: the members' site keys or phases differ */
static int agree(struct nbop *op, int p, struct comm_priv *cp, int key, int phase)
{
    struct edge_req *out = cp->agree_out, *got = cp->agree_got;
    int all = op != NULL;
    for (int i = 0; i < p; i++) {
        out[i] = op && op->want ? op->want[i]
                                : (struct edge_req){ .vote = op != NULL,
                                                     .nodes_hash = op ? (int)op->order_hash : 0 };
        out[i].auto_key = key;
        out[i].auto_phase = phase;
    }
    int rc = PMPI_Alltoall(out, EDGE_REQ_INTS, MPI_INT, got, EDGE_REQ_INTS, MPI_INT, cp->agree);
    if (rc != MPI_SUCCESS) {
        static int warned;
        tnbc_warn_once(warned, "the agreement on a collective failed (MPI error %d); it runs blocking", rc);
        return -1;
    }
    int same = 1;
    for (int i = 0; i < p; i++) {
        if (got[i].auto_key != key || got[i].auto_phase != phase)
            return AGREE_RANKS_DIFFER;   /* every member sees every key: all return here */
        all &= got[i].vote == 1;
        same &= !op || op->want || got[i].nodes_hash == (int)op->order_hash;
    }
    /* Every rank sees every hash, so all see the same difference. */
    return all && !same ? AGREE_SCHEDULES_DIFFER : all;
}

/* Was anything of the receive side left unguarded that is not an edge?
 * Then the call waited for all its data: it did not return early. */
static int waited_for_all(const struct nbop *op, int armed)
{
    return !armed && nbop_guard_layout(op)->nsub > 0 && nbop_guard_layout(op)->span > 0;
}

static void warn_blocking(struct site_stats *st, const struct tnbc_site *site, enum tnbc_op opk,
                          const char *why)
{
    if (!st || st->warned)
        return;
    st->warned = 1;
    tnbc_warn("%s at %s runs blocking: %s", tnbc_op_name(opk), site->id, why);
}

/* Does the call wait, before it returns, for the progress thread to start
 * its steps (receives posted, the first window of sends handed to MPI)?
 * Where the progress thread shares the rank's CPU, the program's thread
 * otherwise runs on until it blocks, and its sends leave only then. That
 * costs nothing where the code leaves the data alone for longer than the
 * collective (regime a); where it reads some within Tcomm, every rank
 * waits for data that its peers have not sent yet (docs/replay.md, "Push
 * first"). TNBC_PUSH_FIRST: 1 always, 0 never; unset, by the site's
 * regime. */
static int push_first(const struct nbop *op)
{
    const struct tnbc_profile_site *ps = op->site_prio;
    if (R.push_first >= 0)
        return R.push_first;
    return ps && ps->model.regime && ps->model.regime != 'a';
}

/* The agreed call goes early: its memory released from earlier calls'
 * guards, the own block landed, the pages guarded, the send copy made,
 * the rest handed to the progress thread; returns once the edge pages'
 * data is in. */
static int run_early(struct nbop *op, struct site_stats *st, const struct tnbc_site *site,
                     enum tnbc_op opk, uint64_t entry, uint64_t clock, void *ip_copy)
{
    tnbc_guard_release_layout(&op->layout, TNBC_REL_REUSE);
    phase_end(&clock, PHASE_PLAN);
    /* The own block is copied in while its pages are open (no earlier
     * call's guard is left on them): the guard then leaves the pages only
     * it covers unprotected (nbop_arm), a memcpy instead of two mprotects
     * and a copy through them. */
    if (op->per_source)
        nbop_land_self(op);
    phase_end(&clock, PHASE_LAND_SELF);
    int armed = nbop_arm(op, on_guard_event);
    op->site_index = site->index;
    op->entry_tick = entry;
    /* The count of all calls at the site, blocking ones included (as in
     * the trace), so that a gap in the recorded calls shows as one. */
    op->invocation = st ? st->calls : 0;
    int early = !waited_for_all(op, armed);
    op->record = early && st && st->early < R.record_max;
    activity_arrival(op, op->self_piece);     /* recorded from here on */
    int nwait;
    int *wait = nbop_unguarded_subs(op, armed, &nwait);
    phase_end(&clock, PHASE_ARM);
    /* The copies come before the progress thread starts the call: they
     * need this thread's CPU either way, and copying while the progress
     * thread drives the network made the copying thread wait for its core
     * (measured on the emulated cluster, docs/replay.md); starting after
     * them delays the first message by one copy (~0.1 ms/MiB). */
    op->may_send_in_place = !st || st->send_balance_ns >= 0;
    if (nbop_copy_sends(op) > 0)
        phase_sent_in_place();
    phase_end(&clock, PHASE_COPY);
    nbop_set_state(op, NBOP_PLANNED, NBOP_IN_FLIGHT);
    progress_submit(op);
    if (!wait)
        progress_quiesce();        /* out of memory: complete everything */
    phase_end(&clock, PHASE_SUBMIT);
    uint64_t waiting = progress_wait_begin();
    if (push_first(op)) {
        progress_wait_started(op);
        phase_push(&clock);       /* the CPU lent, not a cost of the return */
    }
    if (op->per_source)
        nbop_wait_edges(op);
    for (int i = 0; i < nwait; i++)
        nbop_wait_sub(op, wait[i]);
    progress_wait_end(waiting);   /* timed as the edges step */
    free(wait);
    phase_end(&clock, PHASE_EDGES);
    free(ip_copy);            /* copied into the call's private memory by now */
    early &= wait != NULL;
    uint64_t ret = clock;
    op->return_tick = ret;
    /* After submission the op belongs to the progress thread: only what
     * this thread set before is read from here on. */
    if (!st)
        return MPI_SUCCESS;
    st->calls++;
    st->total_ticks += (int64_t)(ret - entry);
    if (!early) {
        /* It ran to completion before returning: say so, not "early". */
        st->fallback[wait ? FB_GUARD : FB_NO_MEMORY]++;
        warn_blocking(st, site, opk, wait ? "its pages could not be guarded" : "out of memory");
        return MPI_SUCCESS;
    }
    phase_call_done(&st->steps);
    st->early++;
    st->bytes += (int64_t)op->layout.recv.bytes;
    return MPI_SUCCESS;
}

/* After the agreement: the sends planned and the call run early when
 * every member voted yes (all == 1), else blocking with the reason. */
static int after_agreement(const struct tnbc_args *a, struct nbop *op, int all,
                           const struct comm_priv *cp, struct site_stats *st, const struct tnbc_site *site,
                           const struct tnbc_profile_site *ps, const char *why, enum fallback fb,
                           uint64_t entry, uint64_t clock, void *ip_copy)
{
    if (all == 1 && nbop_plan_sends(op, cp->agree_got) != 0) {
        static int warned;
        tnbc_warn_once(warned, "%s at %s: block sizes differ between sender and receiver",
                       tnbc_op_name(a->op), site->id);
        PMPI_Abort(MPI_COMM_WORLD, 1);   /* the blocking collective would fail too */
    }
    if (all != 1) {
        if (op)
            fb = all == AGREE_SCHEDULES_DIFFER ? FB_SCHEDULE : all < 0 ? FB_AGREE_FAILED : FB_OTHER_RANK;
        if (ps && ps->on && fb != FB_TRIAL)
            warn_blocking(st, site, a->op,
                          !op ? why : fb == FB_SCHEDULE ? "the ranks' profiles order its chunks differently"
                                                        : "another rank cannot transform it");
        nbop_free(op);
        free(ip_copy);
        return blocking(a, st, fb);
    }
    return run_early(op, st, site, a->op, entry, clock, ip_copy);
}

/* ---- MPI_THREAD_MULTIPLE: one thread in the runtime at a time --------- */

/* 1 while a thread's collective uses the runtime's shared state (the
 * token). Taking it is an acquiring compare-exchange and giving it back a
 * releasing store, so each holder sees everything its predecessor wrote,
 * whichever threads they are. */
static atomic_int in_use;
static atomic_int stopped;          /* two threads' collectives overlapped */

/* Calls after the stop that a site row would have counted (the gate let
 * them past), per operation: the site table is the token holder's, so
 * they are summed here and written as the summary's `(stopped)` rows. */
static atomic_llong stopped_calls[TNBC_OP_COUNT];

#ifdef TNBC_TEST_HOOKS
/* Sanitizer builds only: TNBC_TEST_HOLD_CONTENDED=1 makes a holder keep
 * the token at the end of its call until another thread has found it
 * taken (at most 20 s), so that a test can make two threads' collectives
 * overlap for certain rather than by chance. */
static atomic_int contended;

static void hold_until_contended(void)
{
    static int hold = -1;
    if (hold < 0)
        hold = (int)tnbc_env_long("TNBC_TEST_HOLD_CONTENDED", 0, 0, 1);
    for (int ms = 0; hold && ms < 20000 && !atomic_load(&contended); ms++) {
        struct timespec t = { 0, 1000000 };
        nanosleep(&t, NULL);
    }
}
#endif

static int token_take(void)
{
    int none = 0;
    return atomic_compare_exchange_strong_explicit(&in_use, &none, 1, memory_order_acquire,
                                                   memory_order_relaxed);
}

static void token_give(void) { atomic_store_explicit(&in_use, 0, memory_order_release); }

/* 1 when this thread's collective may use the runtime's shared state,
 * and then it holds the token until runtime_leave: always in a program
 * that did not ask for MPI_THREAD_MULTIPLE (it calls MPI from one thread
 * at a time: no token), else when no other thread's collective is using
 * it right now and the rank has not stopped. A collective that finds the
 * token taken overlaps another thread's: the rank stops for good (said
 * once), and this call and every later one run as stopped_call. Nobody
 * ever waits for the token, so no lock is held across an agreement. */
static int runtime_enter(void)
{
    if (!R.multiple)
        return 1;
    if (!token_take()) {
#ifdef TNBC_TEST_HOOKS
        atomic_store(&contended, 1);
#endif
        if (!atomic_exchange(&stopped, 1) && R.on)
            tnbc_warn("collectives from two threads at once (the program asked for MPI_THREAD_MULTIPLE); "
                      "this rank runs every collective blocking from now on");
        return 0;
    }
    if (!atomic_load(&stopped))
        return 1;
    token_give();
    return 0;
}

/* The end of a collective that runtime_enter let in. */
static void runtime_leave(void)
{
    if (!R.multiple)
        return;
#ifdef TNBC_TEST_HOOKS
    hold_until_contended();
#endif
    token_give();
}

/* Whether a call takes part in the ranks' agreement, decided from what
 * every member passes alike, so that all members answer the same: a
 * stopped rank (stopped_call) must hold an agreement exactly where the
 * others do. PASS: the operation is not handled (no site of it on; auto:
 * too small), FORM: its datatype and op rule out an early return. */
enum gate { GATE_PASS, GATE_FORM, GATE_AGREE };

static enum gate call_gate(const struct tnbc_args *a, const char **why)
{
    if (R.autotune ? !autotune_eligible(a) : !R.op_on[a->op])
        return GATE_PASS;
    return tnbc_call_form_transformable(a, why) ? GATE_AGREE : GATE_FORM;
}

/* A call whose datatype and op rule out an early return on every member
 * alike (tnbc_call_form_transformable) runs blocking without the
 * agreement: with a floating-point allreduce turned on, the agreement on
 * each call that could never go early made a 4-rank program 7-9% slower
 * than plain. Counted as the agreement's path would count it. */
static int form_blocking(const struct tnbc_args *a, void *caller, const char *why)
{
    const struct tnbc_site *site = tnbc_site_on(caller, a->comm);
    struct site_stats *st = stats_for(site, a->op);
    if (R.autotune) {          /* a site auto never learns, and why */
        warn_blocking(st, site, a->op, why);
        return blocking(a, st, FB_UNSAFE);
    }
    const struct tnbc_profile_site *ps = tnbc_profile_find(R.prof, site->id, tnbc_op_name(a->op));
    if (ps && ps->on)
        warn_blocking(st, site, a->op, why);
    return blocking(a, st, !ps ? FB_NOT_PROFILED : !ps->on ? FB_OFF : FB_UNSAFE);
}

/* A call that the gate keeps out of the agreement (g != GATE_AGREE). */
static int ungated(const struct tnbc_args *a, void *caller, enum gate g, const char *why)
{
    assert(g != GATE_AGREE);
    return g == GATE_PASS ? blocking(a, NULL, FB_COUNT) : form_blocking(a, caller, why);
}

/* The runtime's state of comm, or NULL (said once) when calls on it can
 * only run blocking. */
static struct comm_priv *comm_state(MPI_Comm comm)
{
    const char *why = NULL;
    struct comm_priv *cp = comms_get(comm, &why);
    if (!cp) {
        static int warned;
        tnbc_warn_once(warned, "collectives on %s run blocking", why);
    }
    return cp;
}

/* A call that runs blocking and then learns the read order: `learned`
 * (autotune_learned or autotune_sampled) guards its receive pages. */
static int learning_call(const struct tnbc_args *a, struct site_stats *st, struct auto_site *au,
                         void (*learned)(struct auto_site *, const struct tnbc_args *, int64_t,
                                         uint64_t, uint64_t))
{
    int64_t invocation = st->calls;
    uint64_t t0 = tnbc_program_ticks();
    int rc = blocking(a, st, FB_LEARN);
    if (rc == MPI_SUCCESS) {
        uint64_t ret = tnbc_program_ticks(), own = tnbc_ticks();
        learned(au, a, invocation, t0, ret);
        /* Arming the guards is tnbc's time, not the program's, as in the
         * trace (libtrace/trace.c): counted in program time, it made the
         * ordinary benchmark's TCURC 578-743 us on its first learning call
         * (which reads /proc/self/maps) and 106-118 us on the second,
         * against the trace's 12-26 us, and auto kept a losing site on. */
        tnbc_ticks_lost_since(own, 0);
    }
    return rc;
}

/* An agreed call of an ON site: goes early, or runs blocking to check
 * the site or to learn its read order again (autotune_plan). */
static int auto_on_call(const struct tnbc_args *a, struct auto_site *au, enum auto_call plan,
                        struct nbop *op, int all, const struct comm_priv *cp, struct site_stats *st,
                        const struct tnbc_site *site, const struct tnbc_profile_site *ps,
                        const char *why, enum fallback fb, uint64_t entry, uint64_t clock,
                        void *ip_copy)
{
    int rc;
    if (plan == AUTO_CALL_SAMPLE) {
        rc = learning_call(a, st, au, autotune_sampled);
    } else if (plan == AUTO_CALL_CHECK || plan == AUTO_CALL_SETTLE) {
        rc = blocking(a, st, FB_CHECK);
    } else {
        rc = after_agreement(a, op, all, cp, st, site, ps, why, fb, entry, clock, ip_copy);
        /* The agreed verdict, not this member's outcome: every member
         * must file the call under the same kind. */
        autotune_on_end(au, plan, all == 1);
        return rc;
    }
    autotune_on_end(au, plan, 0);
    return rc;
}

/* A call whose members differ in site or step (the agreement said so to
 * every member) runs blocking on all of them. */
static int ranks_differ(const struct tnbc_args *a, struct site_stats *st, const struct tnbc_site *site)
{
    warn_blocking(st, site, a->op, "the ranks call it from different sites, or are at different steps of learning it, "
                                   "or one of them stopped (two threads' collectives overlapped)");
    return blocking(a, st, FB_RANKS_DIFFER);
}

/* The DECIDE call of a site the analysis turned on goes early itself,
 * rather than after it (one call fewer without the saving per site): a
 * second agreement settles its cuts, as an ON call's does; the first ran
 * before the decision, with no candidate. Every member parsed the same
 * site, so all take this path, and a member whose state differs (out of
 * memory) differs in its step: the call then runs blocking on all. */
static int auto_decided_on(const struct tnbc_args *a, struct auto_site *au, struct comm_priv *cp,
                           struct site_stats *st, const struct tnbc_site *site, int p,
                           uint64_t entry, uint64_t entry_ns)
{
    const struct tnbc_profile_site *ps = NULL;
    const char *why = NULL;
    enum fallback fb = FB_OFF;
    struct tnbc_args ip_args;
    void *ip_copy = NULL;
    enum auto_call plan = autotune_plan(au);
    assert(plan == AUTO_CALL_EARLY);          /* a window's first call */
    uint64_t clock = phase_start();           /* the decision is not a step of the early return */
    struct nbop *op = candidate(a, site, cp, autotune_profile(au), &ps, &why, &fb, &ip_args, &ip_copy);
    phase_end(&clock, PHASE_CANDIDATE);
    int all = agree(op, p, cp, autotune_key(site->id, a->op), autotune_step(au));
    phase_end(&clock, PHASE_AGREE);
    cp->seq++;
    if (all == AGREE_RANKS_DIFFER) {
        nbop_free(op);
        free(ip_copy);
        return ranks_differ(a, st, site);
    }
    int on = autotune_on_begin(au, entry_ns, site->id, a->op, cp->agree, cp->node_of, st->calls);
    assert(on);                               /* a window's first call judges nothing */
    (void)on;
    return auto_on_call(a, au, plan, op, all, cp, st, site, ps, why, fb, entry, clock, ip_copy);
}

/* TNBC_AUTO: the site learns, decides, then runs as it decided
 * (autotune.h). Every member takes the same branch: the agreement carries
 * each one's site key and phase. */
static int auto_collective(const struct tnbc_args *a, void *caller)
{
    const struct tnbc_profile_site *ps = NULL;
    const char *why = NULL;
    enum fallback fb = FB_OFF;
    struct tnbc_args ip_args;
    void *ip_copy = NULL;
    int p = 0;

    enum gate g = call_gate(a, &why);
    if (g != GATE_AGREE)
        return ungated(a, caller, g, why);        /* never learned */
    struct comm_priv *cp = comm_state(a->comm);
    if (!cp)
        return blocking(a, NULL, FB_COUNT);
    struct auto_stream *stream = &cp->auto_streams[a->op];
    if (autotune_quiet(stream)) {
        const struct tnbc_site *site = tnbc_site_on(caller, a->comm);
        return blocking(a, stats_for(site, a->op), FB_OFF);
    }
    reap();
    release_reused(a);        /* learning guards on this call's memory: needed now */
    autotune_retire_open();
    PMPI_Comm_size(a->comm, &p);
    const struct tnbc_site *site = tnbc_site_on(caller, a->comm);
    struct site_stats *st = stats_for(site, a->op);
    struct auto_site *au = st ? autotune_site(&st->au) : NULL;
    /* Out of memory: this member's phase is OFF, the others' differ, and
     * every member runs the site's calls blocking. */
    enum auto_phase phase = au ? autotune_phase(au) : AUTO_OFF;
    enum auto_call plan = phase == AUTO_ON ? autotune_plan(au) : AUTO_CALL_CHECK;
    uint64_t entry_ns = tnbc_ns_now();
    uint64_t entry = phase_start(), clock = entry;
    struct nbop *op = NULL;
    if (phase == AUTO_ON && plan == AUTO_CALL_EARLY)
        op = candidate(a, site, cp, autotune_profile(au), &ps, &why, &fb, &ip_args, &ip_copy);
    phase_end(&clock, PHASE_CANDIDATE);
    int all = agree(op, p, cp, autotune_key(site->id, a->op), au ? autotune_step(au) : (int)AUTO_OFF);
    phase_end(&clock, PHASE_AGREE);
    cp->seq++;
    if (all >= 0 && (phase == AUTO_LEARN || plan == AUTO_CALL_SAMPLE))
        autotune_agreement(au, tnbc_ns_now() - entry_ns);   /* nothing else ran since entry */
    if (all != AGREE_RANKS_DIFFER && phase == AUTO_ON &&
        !autotune_on_begin(au, entry_ns, site->id, a->op, cp->agree, cp->node_of, st->calls))
        phase = AUTO_OFF;      /* the check found no gain: on every member */
    int stood_for = autotune_agreed(stream, all == AGREE_RANKS_DIFFER || phase == AUTO_OFF,
                                    all == AGREE_RANKS_DIFFER ? AUTO_KEY_DIFFER
                                                              : autotune_key(site->id, a->op));
    if (all == AGREE_RANKS_DIFFER || (phase != AUTO_ON && op)) {
        nbop_free(op);
        free(ip_copy);
        op = NULL;
        ip_copy = NULL;
    }
    if (all == AGREE_RANKS_DIFFER)
        return ranks_differ(a, st, site);
    switch (phase) {
    case AUTO_LEARN:
        return learning_call(a, st, au, autotune_learned);
    case AUTO_DECIDE:
        autotune_decide(au, site->id, a->op, cp->agree, cp->node_of, st->calls);
        if (autotune_phase(au) == AUTO_ON)
            return auto_decided_on(a, au, cp, st, site, p, entry, entry_ns);
        return blocking(a, st, FB_LEARN);
    case AUTO_OFF:
        warn_blocking(st, site, a->op, au ? autotune_reason(au) : "out of memory");
        if (au && autotune_off_agreed(au, stood_for))
            autotune_wake(stream);   /* it learns from the next call on */
        return blocking(a, st, FB_OFF);
    case AUTO_ON:
        break;
    }
    return auto_on_call(a, au, plan, op, all, cp, st, site, ps, why, fb, entry, clock, ip_copy);
}

/* No site key has this value (autotune_key's are >= 0): a member that
 * sends it makes the others' agreement say that the members differ. */
#define AGREE_KEY_STOPPED (-1)

/* A collective on a rank whose machinery stopped (two threads' calls
 * overlapped): it takes part in the agreement exactly where the others
 * hold one, votes no, and runs blocking; it touches only the
 * communicator's own state. Counted per operation, not per site (the site
 * table is the token holder's). */
static int stopped_call(const struct tnbc_args *a)
{
    const char *why;
    enum gate g = call_gate(a, &why);
    if (g != GATE_PASS)
        atomic_fetch_add(&stopped_calls[a->op], 1);
    if (g != GATE_AGREE)
        return blocking(a, NULL, FB_COUNT);
    struct comm_priv *cp = comm_state(a->comm);
    if (!cp)
        return blocking(a, NULL, FB_COUNT);
    struct auto_stream *stream = R.autotune ? &cp->auto_streams[a->op] : NULL;
    if (stream && autotune_quiet(stream))
        return blocking(a, NULL, FB_COUNT);
    int p = 0;
    PMPI_Comm_size(a->comm, &p);
    (void)agree(NULL, p, cp, stream ? AGREE_KEY_STOPPED : 0, 0);
    cp->seq++;
    if (stream)
        autotune_agreed(stream, 1, AUTO_KEY_DIFFER);   /* as the others do when members differ */
    return blocking(a, NULL, FB_COUNT);
}

/* A collective with the token held (runtime_enter). */
static int collective(const struct tnbc_args *a, void *caller)
{
    const struct tnbc_profile_site *ps = NULL;
    const char *why = NULL;
    enum fallback fb = FB_OFF;
    int p = 0;
    struct tnbc_args ip_args;
    void *ip_copy = NULL;     /* an in-place call's send data, until it returns */

    if (R.passive) {
        const struct tnbc_site *site = tnbc_site_on(caller, a->comm);
        const struct tnbc_profile_site *off = tnbc_profile_find(R.prof, site->id, tnbc_op_name(a->op));
        return blocking(a, stats_for(site, a->op),
                        !off ? FB_NOT_PROFILED : off->on && R.foreign_free ? FB_UNSAFE : FB_OFF);
    }
    if (R.on && R.autotune)
        return auto_collective(a, caller);
    if (!R.on)
        return blocking(a, NULL, FB_COUNT);
    enum gate g = call_gate(a, &why);
    if (g != GATE_AGREE)
        return ungated(a, caller, g, why);
    struct comm_priv *cp = comm_state(a->comm);
    if (!cp)
        return blocking(a, NULL, FB_COUNT);
    reap();
    PMPI_Comm_size(a->comm, &p);
    const struct tnbc_site *site = tnbc_site_on(caller, a->comm);
    struct site_stats *st = stats_for(site, a->op);
    uint64_t entry = phase_start(), clock = entry;
    /* A trial run votes no on half the calls of a site, so that all
     * ranks run it blocking (the agreement keeps them together). */
    int trial_off = R.trial && st &&
                    (ps = tnbc_profile_find(R.prof, site->id, tnbc_op_name(a->op))) && ps->on &&
                    trial_blocking(R.prof, ps, st->calls);
    struct nbop *op = trial_off ? NULL : candidate(a, site, cp, R.prof, &ps, &why, &fb, &ip_args, &ip_copy);
    if (trial_off)
        fb = FB_TRIAL;
    phase_end(&clock, PHASE_CANDIDATE);
    int all = agree(op, p, cp, 0, 0);
    phase_end(&clock, PHASE_AGREE);
    cp->seq++;
    return after_agreement(a, op, all, cp, st, site, ps, why, fb, entry, clock, ip_copy);
}

int tnbc_mode_collective(const struct tnbc_args *a, void *caller)
{
    if (!R.on && !R.passive)
        return blocking(a, NULL, FB_COUNT);
    if (!runtime_enter())
        return R.on ? stopped_call(a) : blocking(a, NULL, FB_COUNT);
    uint64_t entry = R.autotune ? tnbc_program_ticks() : 0;
    int rc = collective(a, caller);
    if (R.autotune)
        autotune_span(entry, tnbc_program_ticks());
    runtime_leave();
    return rc;
}

/* Completes every call in flight and records it. Calls on a communicator
 * being freed may be anywhere in the progress thread's queue; the others
 * complete too (their peers' progress threads need nothing of this one's
 * program), so all are waited for. */
static void drain(void)
{
    progress_quiesce();
    /* The token for a moment, never waited for and without stopping the
     * rank when it is taken: the holder's next call, or MPI_Finalize,
     * then records them. */
    if (!R.multiple)
        reap();
    else if (token_take()) {
        reap();
        token_give();
    }
}

void tnbc_mode_quiesce(MPI_Comm *comm)
{
    if (!R.on || (comm && !comms_known(*comm)))
        return;        /* nothing was ever transformed on comm */
    drain();
}

/* "reason:count ..." of a site's blocking calls, in enum order. */
static void fallback_text(const struct site_stats *s, char *out, size_t len)
{
    size_t n = 0;
    out[0] = 0;
    for (int k = 0; k < FB_COUNT && n < len; k++)
        if (s->fallback[k]) {
            int w = snprintf(out + n, len - n, "%s%s:%lld", n ? " " : "", fallback_names[k],
                             (long long)s->fallback[k]);
            if (w < 0)
                break;
            n += (size_t)w;
        }
}

/* The calls made after a thread stop, one row per operation, under the
 * site id `(stopped)` (docs/schema.md): with the site rows they account
 * for every call that took part. */
static void write_stopped_rows(void)
{
    for (int op = 0; op < TNBC_OP_COUNT; op++) {
        struct site_stats s = { .op = (enum tnbc_op)op };
        char fallback[256];
        s.fallback[FB_STOPPED] = atomic_load(&stopped_calls[op]);
        if (!s.fallback[FB_STOPPED])
            continue;
        fallback_text(&s, fallback, sizeof fallback);
        struct tnbc_site_row row = {
            .rank = R.rank, .site = "(stopped)", .module = "", .symbol = "",
            .op = tnbc_op_name(s.op), .offset = 0, .shape = "world",
            .calls = s.fallback[FB_STOPPED], .traced = 0, .total_ns = 0, .bytes = 0,
            .fallback = fallback,
        };
        tnbc_db_site(R.db, &row);
    }
}

static void write_summary(void)
{
    if (!R.db)
        return;
    tnbc_db_begin(R.db);
    for (int i = 0; i < R.stats.nrows; i++) {
        struct site_stats *s = stats_at(i);
        char fallback[256];
        if (!s->site)
            continue;
        fallback_text(s, fallback, sizeof fallback);
        struct tnbc_site_row row = {
            .rank = R.rank, .site = s->site->id, .module = s->site->module,
            .symbol = s->site->symbol, .op = tnbc_op_name(s->op), .offset = s->site->offset,
            .shape = tnbc_site_shape(s->site),
            .calls = s->calls, .traced = s->early,
            .total_ns = (int64_t)tnbc_ticks_to_ns((uint64_t)s->total_ticks), .bytes = s->bytes,
            .fallback = fallback,
        };
        tnbc_db_site(R.db, &row);
        if ((s->steps.calls || s->land_bytes) &&
            phase_write(R.db, R.rank, row.site, row.op, &s->steps,
                        (int64_t)tnbc_ticks_to_ns(s->land_ticks), s->land_bytes) < 0)
            tnbc_warn("the summary's early_cost row for %s was not written", row.site);
    }
    write_stopped_rows();
    activity_write(R.db, R.rank);
    tnbc_db_run_finished(R.db, R.rank);
    tnbc_db_commit(R.db);
    tnbc_db_close(R.db);
    R.db = NULL;
}

/* TNBC_AUTO_REPORT: one line for people on what a site did. */
static void report_site(const struct site_stats *s)
{
    char fallback[256], state[TNBC_PROFILE_ERRLEN + 64];
    fallback_text(s, fallback, sizeof fallback);
    autotune_describe(s->au, state, sizeof state);
    tnbc_warn("auto: %s at %s: %lld calls, %lld early, blocking: %s; now %s", tnbc_op_name(s->op),
              s->site->id, (long long)s->calls, (long long)s->early, fallback[0] ? fallback : "none",
              state);
}

/* TNBC_AUTO at MPI_Finalize: sites that never decided say so (rank 0),
 * the others report what they did when TNBC_AUTO_REPORT=1 (rank 0's sites),
 * the learned profile is written when asked for (collective), and the
 * sites' learning state is freed. */
static void auto_finish(void)
{
    int report = tnbc_env_bool("TNBC_AUTO_REPORT", 0);
    struct auto_site **sites = calloc((size_t)(R.stats.nrows ? R.stats.nrows : 1), sizeof *sites);
    int n = 0;
    for (int i = 0; i < R.stats.nrows; i++) {
        struct site_stats *s = stats_at(i);
        if (!s->site || !s->au)
            continue;
        enum auto_phase ph = autotune_phase(s->au);
        if ((ph == AUTO_LEARN || ph == AUTO_DECIDE) && R.rank == 0)
            tnbc_warn("%s at %s ran blocking: too few calls to learn from (%lld; it decides at call %d)",
                      tnbc_op_name(s->op), s->site->id, (long long)s->calls,
                      autotune_learn_calls() + 1);
        else if (report && R.rank == 0)
            report_site(s);
        if (sites)
            sites[n++] = s->au;
    }
    const char *out = tnbc_env_str("TNBC_AUTO_PROFILE_OUT", NULL);
    if (R.auto_out && out)
        autotune_write_profile(sites, n, out);
    for (int i = 0; i < R.stats.nrows; i++) {
        struct site_stats *s = stats_at(i);
        autotune_free(s->au);
        s->au = NULL;
    }
    free(sites);
}

void tnbc_mode_finalize(void)
{
    if (R.passive) {
        write_summary();
        tnbc_profile_free(R.prof);
        R.prof = NULL;
        R.passive = 0;
    }
    if (!R.on)
        return;
    progress_stop();
    reap();
    if (R.autotune)
        auto_finish();
    write_summary();
    phase_report(R.rank);
    comms_finalize();
    tnbc_profile_free(R.prof);
    R.prof = NULL;
    R.on = 0;
}
