// SPDX-License-Identifier: BSD-3-Clause
/* The owner of a transformed call (nbop.h: its lifecycle, the states and
 * who holds it in each): creation (the planners fill in its steps),
 * arming its guard, the landing of its sub-messages, the state transitions
 * and freeing. The planners are plan_source.c, plan_chunked.c and
 * tokens.c; its private buffers come from pool.c. */
#include "plan.h"
#include "activity.h"
#include "clock.h"
#include "config.h"
#include "futex.h"
#include "land.h"
#include "land_typed.h"
#include "pool.h"
#include "progress.h"
#include "send_guard.h"
#include "typemap.h"

#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <sys/mman.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef TNBC_TEST_HOOKS
/* testalloc.h: one count of allocations for all the op's files. */
static long fail_every = -1, allocations;

static int fail_now(void)
{
    if (fail_every < 0)
        fail_every = tnbc_env_long("TNBC_TEST_FAIL_ALLOC", 0, 0, 1L << 30);
    return fail_every > 0 && ++allocations % fail_every == 0;
}

void *testalloc_malloc(size_t n) { return fail_now() ? NULL : malloc(n); }
void *testalloc_calloc(size_t n, size_t k) { return fail_now() ? NULL : calloc(n, k); }
void *testalloc_realloc(void *p, size_t n) { return fail_now() ? NULL : realloc(p, n); }
int testalloc_posix_memalign(void **p, size_t align, size_t n)
{
    return fail_now() ? ENOMEM : posix_memalign(p, align, n);
}
#endif

#include "testalloc.h"

MPI_Aint nbop_extent(MPI_Datatype t)
{
    MPI_Aint lb, ext;
    PMPI_Type_get_extent(t, &lb, &ext);
    return ext;
}

int plan_steps_reserve(struct nbop *op, long cap)
{
    if (cap <= op->cap_steps)
        return 0;
    if (cap > INT_MAX / 2)
        return -1;
    struct step *s = realloc(op->steps, (size_t)cap * sizeof *s);
    if (!s)
        return -1;
    op->steps = s;
    op->cap_steps = (int)cap;
    return 0;
}

struct step *plan_step_new(struct nbop *op)
{
    if (op->nsteps == op->cap_steps) {
        int cap = op->cap_steps ? 2 * op->cap_steps : 16;
        struct step *s = realloc(op->steps, (size_t)cap * sizeof *s);
        if (!s)
            return NULL;
        op->steps = s;
        op->cap_steps = cap;
    }
    struct step *s = &op->steps[op->nsteps++];
    *s = (struct step){ 0 };
    return s;
}

static int posted_first(const struct step *s)
{
    return s->kind == STEP_RECV || s->kind == STEP_TOKEN_IN;
}

/* Receives first, then by priority and peer; a peer's parts keep their
 * order in the buffer, which is the order they match in (one tag). */
static int by_kind_then_prio(const void *x, const void *y)
{
    const struct step *a = x, *b = y;
    if (posted_first(a) != posted_first(b))
        return posted_first(a) ? -1 : 1;
    if (a->prio != b->prio)
        return a->prio < b->prio ? -1 : 1;
    if (a->peer != b->peer)
        return a->peer - b->peer;
    return a->buf < b->buf ? -1 : a->buf > b->buf;
}

const char nbop_oom[] = "out of memory";

#define TAG_SPAN 8000     /* body tags 1..TAG_SPAN; head, tail, token above */

void nbop_configure(long piece_bytes, int node_schedule, double turn_pace)
{
    plan_source_set_piece(piece_bytes);
    tokens_set_schedule(node_schedule, turn_pace);
}

const struct tnbc_layout *nbop_guard_layout(const struct nbop *op)
{
    return op->per_source ? &op->pieces : &op->layout.recv;
}

static int part_tag(const struct nbop *op, enum part part)
{
    return op->tag + (part == PART_HEAD ? TAG_SPAN : part == PART_TAIL ? 2 * TAG_SPAN : 0);
}

int plan_finish(struct nbop *op)
{
    assert(!op->planned);
    op->planned = 1;
    qsort(op->steps, (size_t)op->nsteps, sizeof *op->steps, by_kind_then_prio);
    op->remaining = op->nsteps;
    if (op->nsteps > op->cap_reqs) {   /* not reserved, or a receiver asked for more */
        free(op->reqs);
        free(op->completed);
        op->reqs = malloc((size_t)(op->nsteps ? op->nsteps : 1) * sizeof *op->reqs);
        op->completed = malloc((size_t)(op->nsteps ? op->nsteps : 1) * sizeof *op->completed);
        op->cap_reqs = op->nsteps;
    }
    if (!op->reqs || !op->completed)
        return -1;
    for (int i = 0; i < op->nsteps; i++)
        op->reqs[i] = MPI_REQUEST_NULL;
    return 0;
}

int nbop_step_tag(const struct nbop *op, const struct step *s)
{
    if (s->kind == STEP_TOKEN_IN || s->kind == STEP_TOKEN_OUT)
        return op->tag + 3 * TAG_SPAN;
    return part_tag(op, (enum part)s->part);
}

/* Derived datatypes: duplicates the op owns (the program may free its
 * types once the call returned, while steps still use them; MPI keeps a
 * type alive only for operations already started), and the runs of a
 * receive type that is not dense (looked up on the program's own type,
 * where they are cached). NULL, or why not. */
static const char *own_types(struct nbop *op, const struct tnbc_args *a)
{
    const char *why = NULL;
    /* A type is looked at only where this rank uses it: a non-root's send
     * type of scatter, or receive type of gather, may be anything. The
     * single-block operations use rtype on both sides. */
    int one_type = tnbc_op_is_chunked(a->op) && a->op != TNBC_SCATTER && a->op != TNBC_SCATTERV;
    int rtype_used = op->layout.recv.nsub || one_type;
    int stype_used = op->layout.send.nsub && !one_type;
    if (op->layout.recv.nsub && !tnbc_type_is_dense(a->rtype) && !(op->rmap = typemap_of(a->rtype, &why)))
        return why == typemap_oom ? nbop_oom : why;
    if (rtype_used && !tnbc_type_is_named(a->rtype)) {
        if (PMPI_Type_dup(a->rtype, &op->own_rtype) != MPI_SUCCESS)
            return "the datatype could not be duplicated";
        op->a.rtype = op->own_rtype;
    }
    if (one_type) {
        op->a.stype = op->a.rtype;
    } else if (stype_used && !tnbc_type_is_named(a->stype)) {
        if (PMPI_Type_dup(a->stype, &op->own_stype) != MPI_SUCCESS)
            return "the datatype could not be duplicated";
        op->a.stype = op->own_stype;
    }
    return NULL;
}

struct nbop *nbop_create(const struct tnbc_args *a, const struct tnbc_profile_site *site,
                         MPI_Comm priv, const int *node_of, int tag, const char **why)
{
    struct nbop *op = calloc(1, sizeof *op);
    int chunks = tnbc_op_is_chunked(a->op) ? (site->chunks > 0 ? site->chunks : 1) : 1;

    *why = NULL;
    if (!op) {
        *why = nbop_oom;
        return NULL;
    }
    op->a = *a;
    op->own_rtype = op->own_stype = MPI_DATATYPE_NULL;
    op->self_sub = op->self_piece = -1;
    op->site_prio = site;
    op->comm = priv;
    op->tag = tag;
    if (tnbc_layout_build(a, chunks, &op->layout, why) != 0) {
        free(op);
        return NULL;
    }
    if ((*why = own_types(op, a)) != NULL) {
        nbop_free(op);
        return NULL;
    }
    a = &op->a;          /* the planners use the op's own types */
    switch (a->op) {
    case TNBC_ALLTOALL: case TNBC_ALLTOALLV: case TNBC_ALLGATHER: case TNBC_ALLGATHERV:
    case TNBC_GATHER: case TNBC_GATHERV:
        *why = plan_per_source(op, site);
        break;
    case TNBC_BCAST: case TNBC_ALLREDUCE: case TNBC_REDUCE:
        *why = plan_chunked(op, site, node_of);
        break;
    case TNBC_SCATTER: case TNBC_SCATTERV:
        *why = plan_scattered(op, site);
        break;
    case TNBC_REDUCE_SCATTER_BLOCK: case TNBC_REDUCE_SCATTER:
        *why = plan_reduce_scattered(op, site);
        break;
    default:
        *why = "operation not transformed by this version";
    }
    int nsub = *why ? 0 : nbop_guard_layout(op)->nsub;
    if (!*why) {
        op->sub_done = calloc((size_t)(nsub ? nsub : 1), sizeof *op->sub_done);
        if (!op->sub_done)
            *why = nbop_oom;
    }
    if (*why) {
        nbop_free(op);
        return NULL;
    }
    /* Sub-messages no step delivers are complete from the start. */
    for (int i = 0; i < nsub; i++)
        atomic_store(&op->sub_done[i], 1);
    for (int i = 0; i < op->nsteps; i++)
        if (op->steps[i].sub >= 0)
            atomic_store(&op->sub_done[op->steps[i].sub], 0);
    if (op->self_piece >= 0)
        atomic_store(&op->sub_done[op->self_piece], 0);
    if (!op->per_source && plan_finish(op) != 0) {   /* chunk steps: just order them */
        *why = nbop_oom;
        nbop_free(op);
        return NULL;
    }
    if (!op->per_source) {
        plan_chain_link(op);
        op->order_hash = plan_order_hash(op);
    }
    return op;
}

void nbop_free(struct nbop *op)
{
    if (!op)
        return;
    unsigned st = atomic_load(&op->state);
    assert(st == NBOP_PLANNED || st == NBOP_DONE);
    if (st == NBOP_PLANNED)
        send_guard_abandon(op);
    if (st == NBOP_PLANNED && op->guard.armed) {
        /* Never submitted: nothing will land; the blocking call that
         * follows writes the buffer. Waiters must not wait for data. */
        int nsub = nbop_guard_layout(op)->nsub;
        for (int i = 0; i < nsub; i++)
            nbop_sub_complete(op, i);
        tnbc_guard_disarm(&op->guard, TNBC_REL_REUSE);
    }
    tnbc_layout_free(&op->layout);
    pool_put(op->shadow);
    pool_put(op->sendcopy);
    pool_put(op->packcopy);
    free(op->steps);
    free(op->reqs);
    free(op->completed);
    free((void *)op->sub_done);
    free(op->pieces.sub);
    free(op->want);
    free(op->scatter_cd);
    free(op->send_at);
    typemap_free(op->rmap);
    if (op->own_rtype != MPI_DATATYPE_NULL)
        PMPI_Type_free(&op->own_rtype);
    if (op->own_stype != MPI_DATATYPE_NULL)
        PMPI_Type_free(&op->own_stype);
    free(op);
}

void nbop_sub_complete(struct nbop *op, int sub) { tnbc_flag_set(&op->sub_done[sub]); }

void nbop_wait_sub(struct nbop *op, int sub) { tnbc_flag_wait(&op->sub_done[sub]); }

void nbop_set_state(struct nbop *op, enum nbop_state from, enum nbop_state to)
{
    unsigned was = atomic_exchange(&op->state, (unsigned)to);
    assert(was == (unsigned)from && to == from + 1);
    (void)was;
    (void)from;
    tnbc_futex_wake(&op->state, INT_MAX);
}

void nbop_wait_retired(struct nbop *op)
{
    unsigned st;
    while ((st = atomic_load(&op->state)) < NBOP_RETIRED)
        tnbc_futex_wait(&op->state, st);
}

/* Once both counts reach 0 (each reaches it once, so this retires once):
 * the send guard was lifted by the last in-place send (send_guard_sent). */
static void retire_if_idle(struct nbop *op)
{
    if (op->subs_left > 0 || op->sends_in_place > 0)
        return;
    assert(!op->send_guard.armed);
    tnbc_guard_disarm(&op->guard, TNBC_REL_DONE);   /* no-op when never armed */
    nbop_set_state(op, NBOP_IN_FLIGHT, NBOP_RETIRED);
}

void nbop_pickup(struct nbop *op)
{
    int nsub = nbop_guard_layout(op)->nsub;
    op->subs_left = 0;
    for (int i = 0; i < nsub; i++)
        op->subs_left += !atomic_load(&op->sub_done[i]);
    retire_if_idle(op);
}

static void sub_landed(struct nbop *op)
{
    assert(op->subs_left > 0);
    op->subs_left--;
    retire_if_idle(op);
}

/* A sub-message's bytes into the user's buffer: all of its footprint, or
 * for a derived receive type only its elements' runs (the holes are the
 * program's), through /proc/self/mem where the pages are protected. */
static int land_sub(const struct nbop *op, const struct tnbc_submsg *sb, char *dst, const char *src)
{
    if (!op->rmap)
        return land(dst, src, sb->bytes);
    uintptr_t lo = op->guard.armed ? op->guard.lo : 0, hi = op->guard.armed ? op->guard.hi : 0;
    return land_typed(op->a.recvbuf, op->vrecv, sb->elem_first, sb->elem_count, op->rmap, lo, hi);
}

/* The progress thread's side of plan_deliver: every byte goes through
 * land_sub() while the pages are still closed, and they open last, so a
 * reader never sees a sub-message half-filled. The caller's own block
 * (in_call, nbop_land_self) is copied in before the guard is armed, while
 * its pages are open and nobody may read them (the call has not returned);
 * src NULL: MPI copied it already. */
void plan_deliver(struct nbop *op, int sub, const char *src, int edge_wait, int in_call)
{
    const struct tnbc_submsg *sb = &nbop_guard_layout(op)->sub[sub];
    char *dst = op->layout.recv.base + sb->offset;

    assert(!in_call || !op->guard.armed);
    assert(in_call || !op->rmap || op->vrecv);
    if (in_call) {
        if (src)
            memcpy(dst, src, sb->bytes);
    } else if (land_sub(op, sb, dst, src) != 0) {
        static int warned;
        tnbc_warn_once(warned, "cannot write received data into the guarded buffer; aborting");
        PMPI_Abort(MPI_COMM_WORLD, 1);
    }
    nbop_sub_complete(op, sub);
    if (!in_call)
        tnbc_guard_open_sub(&op->guard, sub);
    /* Last: the call returns once its waited edge parts have landed and
     * their pages are open. */
    if (edge_wait && atomic_fetch_sub(&op->edges_left, 1) == 1)
        tnbc_futex_wake(&op->edges_left, INT_MAX);
}

#ifdef TNBC_TEST_HOOKS
/* Sanitizer builds only: TNBC_TEST_LAND_DELAY_US=N holds every landing N us,
 * so a program that reads right after the early return certainly finds its
 * data missing and waits in the fault path (test/replay.sh, ThreadSanitizer,
 * which must see that path run to check it). */
static void test_land_delay(void)
{
    static long us = -1;
    if (us < 0)
        us = tnbc_env_long("TNBC_TEST_LAND_DELAY_US", 0, 0, 10L * 1000 * 1000);
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    if (us > 0)
        nanosleep(&ts, NULL);
}
#else
static void test_land_delay(void) {}
#endif

void nbop_step_landed(struct nbop *op, int i)
{
    const struct step *s = &op->steps[i];
    if (send_guard_sent(op, s)) {
        retire_if_idle(op);
        return;
    }
    if (s->sub < 0 || !op->shadow)
        return;
    if (s->chain && --op->chain_left[s->sub] > 0)
        return;             /* a chunk lands whole, with its last piece */
    assert(!s->chain || op->chain_left[s->sub] == 0);
    test_land_delay();
    /* Each step delivers one guard sub-message: a piece or a chunk. */
    const struct tnbc_submsg *sb = &nbop_guard_layout(op)->sub[s->sub];
    uint64_t t0 = tnbc_ticks();
    plan_deliver(op, s->sub, op->shadow + sb->offset, s->kind == STEP_RECV && s->edge_wait, 0);
    op->land_ticks += tnbc_ticks() - t0;
    op->land_bytes += (int64_t)sb->bytes;
    activity_arrival(op, s->sub);
    sub_landed(op);      /* the last one retires the op's guard */
}

int nbop_sub_is_done(const struct nbop *op, int sub)
{
    return (int)atomic_load(&op->sub_done[sub]);
}

/* Retiring earlier calls: every op whose guard meets [a, b) is waited for
 * until it has reached NBOP_RETIRED (its data landed, its guard gone from
 * the index), so that this call's guard can be armed on the same pages.
 * Ops stay allocated until the application thread reaps them, so the
 * pointers collected under the index's pin stay valid while we wait. */
#define RETIRE_BATCH 16
struct retire_list { struct nbop *op[RETIRE_BATCH]; int n, more; };

static void collect_live(struct tnbc_range_obj *obj, void *arg)
{
    struct retire_list *l = arg;
    struct nbop *op = ((struct tnbc_guard *)obj)->user;
    if (l->n < RETIRE_BATCH)
        l->op[l->n++] = op;
    else
        l->more = 1;
}

void nbop_retire_overlapping(const struct tnbc_layout *lay)
{
    if (!lay->base || !lay->span || !tnbc_guard_active())
        return;
    uintptr_t a = tnbc_page_down((uintptr_t)lay->base);
    uintptr_t b = tnbc_page_up((uintptr_t)lay->base + lay->span);
    struct retire_list l;
    do {
        l.n = l.more = 0;
        tnbc_range_each(a, b, collect_live, &l);
        uint64_t t0 = progress_wait_begin();
        for (int i = 0; i < l.n; i++)
            nbop_wait_retired(l.op[i]);
        progress_wait_end(t0);
    } while (l.more);
}

/* Sub-messages no step delivers, and the caller's own block when it was
 * copied in before arming (nbop_land_self), are open from the start. */
static int landed_at_arm(const struct tnbc_guard *g, int sub)
{
    const struct nbop *op = g->user;
    return nbop_sub_is_done(op, sub);
}

int nbop_arm(struct nbop *op, tnbc_guard_hook hook)
{
    op->guard.layout = nbop_guard_layout(op);
    op->guard.closed_prot = land_closed_prot();
    op->guard.flags = GUARD_WAIT_NEIGHBOURS | GUARD_OWNER_LIFTS;
    op->guard.hook = hook;
    op->guard.landed = landed_at_arm;
    op->guard.user = op;
    nbop_retire_overlapping(op->guard.layout);
    return op->guard.layout->nsub && tnbc_guard_arm(&op->guard) > 0;
}

int nbop_guards_something(const struct nbop *op)
{
    const struct tnbc_layout *l = nbop_guard_layout(op);
    uintptr_t lo, hi;
    if (!l->nsub || !l->span)
        return 1;          /* nothing to receive (a non-root): nothing to wait for */
    if (!tnbc_layout_whole_pages(l, &lo, &hi))
        return 0;
    for (int s = 0; s < l->nsub; s++) {
        uintptr_t a = (uintptr_t)l->base + l->sub[s].offset, b = a + l->sub[s].bytes;
        if (a < b && a >= lo && b <= hi && s != op->self_piece && !nbop_sub_is_done(op, s))
            return 1;
    }
    return 0;
}

int *nbop_unguarded_subs(const struct nbop *op, int armed, int *n)
{
    int nsub = nbop_guard_layout(op)->nsub;
    int *list = malloc((size_t)(nsub + 1) * sizeof *list);
    *n = 0;
    for (int i = 0; list && i < nsub; i++)
        if (!armed || op->guard.cover[i] != TNBC_COVER_GUARDED)
            list[(*n)++] = i;
    return list;
}
