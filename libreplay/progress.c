// SPDX-License-Identifier: BSD-3-Clause
#include "progress.h"
#include "activity.h"
#include "clock.h"
#include "config.h"
#include "guard.h"
#include "futex.h"
#include "land.h"

#include <assert.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define TOKEN_TAG_OFFSET 16384

static struct {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t wake, idle;
    struct nbop *queue, **queue_tail;   /* submitted, not yet started */
    struct nbop *done;                  /* completed, not yet reaped */
    int in_flight;                      /* submitted and not completed */
    int stop, running;
    int window;
    long max_sleep_us;
    int batch;                          /* run under SCHED_BATCH */
    atomic_int urgent;                  /* threads waiting in the fault path */
} P = { .mu = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER,
        .idle = PTHREAD_COND_INITIALIZER };

/* An MPI call of the progress thread failed: the call's data cannot
 * arrive, and the program already went on. The blocking collective would
 * have returned this error (or aborted, MPI's default); say which call
 * failed and end the job rather than let the program wait forever. */
static void mpi_failed(int rc, const char *what)
{
    char msg[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    if (PMPI_Error_string(rc, msg, &len) != MPI_SUCCESS)
        msg[0] = 0;
    tnbc_warn("progress thread: %s failed (%s); aborting, the transformed call cannot complete",
              what, msg);
    PMPI_Abort(MPI_COMM_WORLD, 1);
}

static int post(struct nbop *op, int i)
{
    struct step *s = &op->steps[i];
    const struct tnbc_args *a = &op->a;
    MPI_Request *r = &op->reqs[i];
    int rc = MPI_SUCCESS;

    switch (s->kind) {
    case STEP_RECV:
        rc = PMPI_Irecv(s->buf, s->count, s->type, s->peer, nbop_step_tag(op, s), op->comm, r);
        break;
    case STEP_SEND:
        rc = PMPI_Isend(s->buf, s->count, s->type, s->peer, nbop_step_tag(op, s), op->comm, r);
        break;
    case STEP_TOKEN_IN:
        rc = PMPI_Irecv(NULL, 0, MPI_BYTE, s->peer, nbop_step_tag(op, s), op->comm, r);
        break;
    case STEP_TOKEN_OUT:
        rc = PMPI_Isend(NULL, 0, MPI_BYTE, s->peer, nbop_step_tag(op, s), op->comm, r);
        break;
    case STEP_CHUNK: {
        if (a->op == TNBC_SCATTER || a->op == TNBC_SCATTERV) {
            rc = PMPI_Iscatterv(op->vsend, nbop_scatter_counts(op, s->peer), nbop_scatter_displs(op, s->peer),
                                a->stype, s->buf ? s->buf : MPI_IN_PLACE, s->count, s->type, a->root,
                                op->comm, r);
            break;
        }
        if (a->op == TNBC_REDUCE_SCATTER_BLOCK || a->op == TNBC_REDUCE_SCATTER) {
            const int *counts = nbop_scatter_counts(op, s->peer);
            rc = PMPI_Ireduce_scatter(op->vsend + nbop_scatter_displs(op, s->peer)[0] * nbop_extent(a->rtype),
                                      s->buf, counts, s->type, a->mpi_op, op->comm, r);
            break;
        }
        MPI_Aint off = s->chunk_first * nbop_extent(a->rtype);
        char *in = op->vsend ? op->vsend + off : MPI_IN_PLACE;
        char *out = op->vrecv ? op->vrecv + off : NULL;
        if (a->op == TNBC_BCAST)
            rc = PMPI_Ibcast(s->buf, s->count, s->type, a->root, op->comm, r);
        else if (a->op == TNBC_ALLREDUCE)
            rc = PMPI_Iallreduce(in, out, s->count, s->type, a->mpi_op, op->comm, r);
        else
            rc = PMPI_Ireduce(in, out, s->count, s->type, a->mpi_op, a->root, op->comm, r);
        break;
    }
    }
    if (rc != MPI_SUCCESS)
        mpi_failed(rc, "starting a step (MPI_Irecv/Isend/Ibcast/Iallreduce/Ireduce)");
    s->posted = 1;
    return rc;
}

/* Receives are all posted at once (posting costs no bandwidth); sends and
 * chunks start in priority order, `window` at a time. Chunk collectives of
 * different calls must start in the same order on every rank: only the
 * oldest call with chunks left may start one (*chunk_gate). The gate spans
 * communicators, which is safe because every call in flight passed the
 * ranks' agreement on its communicator: a rank's two calls on c1 and c2
 * cannot be in flight in opposite orders on two members of both (c1 done
 * agreeing on r needs s to have entered c1, so s cannot have finished
 * agreeing on c2 before r entered c2), also when different threads make
 * them (replay.c, the token). Without a per-call agreement the gate would
 * have to be per communicator, or two ranks could wait on each other. */
static int start_steps(struct nbop *op, int *chunk_gate)
{
    int started = 0, busy = 0, has_chunks = 0, gated_left = 0, gated = 0;
    for (int i = 0; i < op->nsteps; i++) {
        struct step *s = &op->steps[i];
        if ((s->kind == STEP_RECV || s->kind == STEP_TOKEN_IN) && !s->posted) {
            post(op, i);
            started++;
        }
        if ((s->kind == STEP_SEND || s->kind == STEP_CHUNK) && s->posted && !s->done)
            busy++;
        gated_left += s->gated && !s->done;
        gated += s->gated;
    }
    if (op->token_ok && op->turn_ns && gated && !op->turn_end_ns)
        op->turn_end_ns = tnbc_ns_now() + op->turn_ns;    /* my turn begins */
    int window = P.window;
    for (int i = 0; i < op->nsteps && busy < window; i++) {
        struct step *s = &op->steps[i];
        if (s->kind == STEP_RECV || s->kind == STEP_TOKEN_IN || s->posted)
            continue;
        if (s->gated && !op->token_ok)
            continue;         /* not this rank's turn on its node yet */
        if (s->after && !op->steps[s->after - 1].done)
            break;            /* a relay: pieces leave in the order they match in */
        if (s->kind == STEP_TOKEN_OUT) {
            if (!op->token_ok || gated_left || (op->turn_end_ns && tnbc_ns_now() < op->turn_end_ns))
                continue;     /* pass the turn on once mine is over */
            post(op, i);
            started++;
            continue;
        }
        if (s->kind == STEP_CHUNK) {
            has_chunks = 1;
            if (!*chunk_gate)
                break;
            window = 1;      /* chunks strictly one after another */
            if (busy)
                break;
        }
        post(op, i);
        busy++;
        started++;
    }
    for (int i = 0; i < op->nsteps && !has_chunks; i++)
        has_chunks = op->steps[i].kind == STEP_CHUNK && !op->steps[i].posted;
    if (has_chunks)
        *chunk_gate = 0;
    return started;
}

static void finish_step(struct nbop *op, int i)
{
    struct step *s = &op->steps[i];
    s->done = 1;
    op->remaining--;
    if (s->kind == STEP_TOKEN_IN)
        op->token_ok = 1;
    nbop_step_landed(op, i);
}

static int test_steps(struct nbop *op)
{
    int out = 0;
    int rc = PMPI_Testsome(op->nsteps, op->reqs, &out, op->completed, MPI_STATUSES_IGNORE);
    if (rc != MPI_SUCCESS)
        mpi_failed(rc, "MPI_Testsome");
    if (out == MPI_UNDEFINED)
        return 0;
    for (int k = 0; k < out; k++)
        finish_step(op, op->completed[k]);
    return out;
}

static void complete(struct nbop *op)
{
    nbop_set_state(op, NBOP_RETIRED, NBOP_DONE);   /* retired when its last sub landed */
    pthread_mutex_lock(&P.mu);
    op->next = P.done;
    P.done = op;
    if (--P.in_flight == 0)
        pthread_cond_broadcast(&P.idle);
    pthread_mutex_unlock(&P.mu);
}

void progress_wait_started(struct nbop *op) { tnbc_flag_wait(&op->started); }

uint64_t progress_wait_begin(void)
{
    atomic_fetch_add(&P.urgent, 1);
    return tnbc_ns_now();
}

int64_t progress_wait_end(uint64_t began_ns)
{
    int64_t waited = (int64_t)(tnbc_ns_now() - began_ns);
    int was = atomic_fetch_sub(&P.urgent, 1);
    assert(was > 0);
    (void)was;
    return waited;
}

/* Back-off between polls: doubling up to max_sleep_us, or the shortest
 * while the program is blocked on data. Every poll wakes this thread on
 * the program's CPU, so the ladder restarts not at 1 us but at a quarter
 * of the last gap between completions (restart_us): pieces that arrive
 * every 600 us are then found with about 3 polls instead of 10. */
static void nap(long *us)
{
    if (atomic_load(&P.urgent) > 0) {
        *us = 1;
        sched_yield();
        return;
    }
    struct timespec ts = { 0, *us * 1000 };
    nanosleep(&ts, NULL);
    if (*us < P.max_sleep_us)
        *us = *us * 2 < P.max_sleep_us ? *us * 2 : P.max_sleep_us;
}

/* Where the back-off restarts after a completion that came `gap_us` after
 * the one before. */
static long restart_us(long gap_us)
{
    long us = gap_us / 4;
    return us < 1 ? 1 : us > P.max_sleep_us ? P.max_sleep_us : us;
}

static void *progress_main(void *unused)
{
    struct nbop *active = NULL, **tail = &active;
    long backoff = 1, last = (long)(tnbc_ns_now() / 1000);
    (void)unused;
    prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);   /* sleep 1 us past the back-off, not 50 */
    prctl(PR_SET_NAME, "tnbc-progress", 0, 0, 0);  /* visible in /proc/PID/task/TID/comm */
    land_thread_direct();     /* lands by memcpy where pages close with a key */
    tnbc_guard_thread_exempt();   /* MPI's system calls here touch no guarded page */
    if (P.batch) {
        struct sched_param none = { 0 };
        if (sched_setscheduler(0, SCHED_BATCH, &none) != 0)
            tnbc_warn("progress thread: SCHED_BATCH refused; it runs under the default policy");
    }
    for (;;) {
        pthread_mutex_lock(&P.mu);
        while (!P.stop && !active && !P.queue)
            pthread_cond_wait(&P.wake, &P.mu);
        struct nbop *picked = P.queue;
        if (P.queue) {
            *tail = P.queue;
            tail = P.queue_tail;
            P.queue = NULL;
            P.queue_tail = &P.queue;
        }
        int stop = P.stop && !active;
        pthread_mutex_unlock(&P.mu);
        if (stop)
            return NULL;
        activity_pass_begin();
        for (struct nbop *op = picked; op; op = op->next)
            nbop_pickup(op);      /* nothing left to land: retired at once */

        int progressed = 0, chunk_gate = 1;
        for (struct nbop **pp = &active; *pp;) {
            struct nbop *op = *pp;
            progressed += start_steps(op, &chunk_gate);
            if (!atomic_load(&op->started))
                tnbc_flag_set(&op->started);
            progressed += test_steps(op);
            if (op->remaining == 0) {
                *pp = op->next;
                if (!*pp)
                    tail = pp;
                complete(op);
                progressed++;
            } else {
                pp = &op->next;
            }
        }
        activity_pass_end(progressed, active != NULL);
        if (progressed) {
            long t = (long)(tnbc_ns_now() / 1000);
            backoff = restart_us(t - last);
            last = t;
        } else
            nap(&backoff);
    }
}

int progress_running(void) { return P.running; }

int progress_start(int window, long max_sleep_us, int batch)
{
    if (P.running)
        return 0;
    P.batch = batch;
    P.window = window;
    P.max_sleep_us = max_sleep_us;
    P.queue_tail = &P.queue;
    /* The thread starts with every asynchronous signal blocked (it
     * inherits its creator's mask): a signal sent to the process may go to
     * any thread that does not block it, and the program's handler must
     * not run here: one that reads a buffer whose data is on its way would
     * wait for this very thread to land it (torture case signal_thread).
     * The system call, not pthread_sigmask: the library interposes that. */
    sigset_t async, old;
    tnbc_async_signals(&async);
    if (syscall(SYS_rt_sigprocmask, SIG_BLOCK, &async, &old, _NSIG / 8) != 0)
        return -1;
    int rc = pthread_create(&P.thread, NULL, progress_main, NULL);
    syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, _NSIG / 8);
    if (rc != 0)
        return -1;
    P.running = 1;
    return 0;
}

void progress_submit(struct nbop *op)
{
    op->next = NULL;
    pthread_mutex_lock(&P.mu);
    *P.queue_tail = op;
    P.queue_tail = &op->next;
    P.in_flight++;
    pthread_cond_signal(&P.wake);
    pthread_mutex_unlock(&P.mu);
}

void progress_quiesce(void)
{
    pthread_mutex_lock(&P.mu);
    while (P.in_flight > 0)
        pthread_cond_wait(&P.idle, &P.mu);
    pthread_mutex_unlock(&P.mu);
}

void progress_stop(void)
{
    if (!P.running)
        return;
    progress_quiesce();
    pthread_mutex_lock(&P.mu);
    P.stop = 1;
    pthread_cond_signal(&P.wake);
    pthread_mutex_unlock(&P.mu);
    pthread_join(P.thread, NULL);
    P.running = 0;
}

struct nbop *progress_take_done(void)
{
    pthread_mutex_lock(&P.mu);
    struct nbop *list = P.done;
    P.done = NULL;
    pthread_mutex_unlock(&P.mu);
    return list;
}
