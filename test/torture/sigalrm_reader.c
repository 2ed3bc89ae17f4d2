// SPDX-License-Identifier: BSD-3-Clause
/* Case 7b: a SIGALRM handler reads the buffer of the last completed
 * collective (a flag says which one is complete), with an interval timer
 * firing during and between calls, and with raise() right after a call.
 *
 * The timer's SIGALRM is sent to the process: while the main thread runs
 * the handler (SIGALRM blocked there), the next one goes to any other
 * thread that does not block it (MPI's progress threads), and that
 * handler's reads race with the main thread rewriting a[] for the next
 * call. So `published` is a sequence lock: -1 while a[] is rewritten or in
 * a call, else the iteration whose data a[] holds; a handler counts what
 * it read only if `published` did not change meanwhile. A handler that
 * interrupts the main thread always counts. */
#include "tt.h"
#include <signal.h>
#include <stdatomic.h>
#include <sys/time.h>

#define N 65536

static int *a;
static atomic_int published = -1;
static atomic_int bad;

static void on_alarm(int sig)
{
    (void)sig;
    int it = atomic_load(&published);
    if (it < 0)
        return;
    /* every element is it * 3 + i (mod the first page's offset) */
    int wrong = 0;
    for (int i = 0; i < N; i += 1024)
        if (a[i] != it * 3 + i)
            wrong++;
    atomic_thread_fence(memory_order_acquire);
    if (atomic_load(&published) == it)
        atomic_fetch_add(&bad, wrong);
}

int main(int argc, char **argv)
{
    tt_init(&argc, &argv);
    a = malloc(N * sizeof *a);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigfillset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval tv = { { 0, 700 }, { 0, 700 } };
    setitimer(ITIMER_REAL, &tv, NULL);
    for (int it = 0; it < 60; it++) {
        atomic_store(&published, -1);
        atomic_thread_fence(memory_order_seq_cst);   /* no store to a[] before this */
        for (int i = 0; i < N; i++)
            a[i] = tt_rank == 0 ? it * 3 + i : 0;
        MPI_Bcast(a, N, MPI_INT, 0, MPI_COMM_WORLD);
        atomic_store(&published, it);
        raise(SIGALRM);
        for (volatile int spin = 0; spin < 20000; spin++)
            ;
    }
    struct itimerval off = { { 0, 0 }, { 0, 0 } };
    setitimer(ITIMER_REAL, &off, NULL);
    tt_out("rank %d bad %d last %016llx\n", tt_rank, atomic_load(&bad),
           (unsigned long long)tt_hash(a, N * sizeof *a));
    tt_finish();
    return 0;
}
