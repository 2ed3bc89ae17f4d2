// SPDX-License-Identifier: BSD-3-Clause
/* A program with a signal thread: SIGUSR1, sent to the process, is blocked
 * in the main thread and left to a thread of the program's own, whose
 * handler reads the buffer the last collective filled. The main thread
 * still had SIGUSR1 unblocked at its first collective (where the replay's
 * progress thread starts, inheriting that mask) and blocks it only after.
 *
 * The kernel gives a process-directed signal to any thread that does not
 * block it. A library's own thread must therefore block such signals:
 * otherwise the handler may run on it (counted here as `foreign`), and on
 * the replay's progress thread a read of pending data waits for that very
 * thread to land it (a hang). Open MPI's threads, started in MPI_Init,
 * inherit SIGUSR1 blocked. Reads race with the next call as in
 * sigalrm_reader.c: `published` is a sequence lock. */
#include "tt.h"
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define B 16384   /* ints per block */

static int *a;
static atomic_int published = -1;
static atomic_int bad, foreign, stop;
static atomic_long signal_tid;

static long tid(void) { return (long)syscall(SYS_gettid); }

static int expected(int it, int src, int i) { return src * 100000 + tt_rank * 1000 + it * 7 + i; }

static void on_usr1(int sig)
{
    (void)sig;
    if (tid() != atomic_load(&signal_tid))
        atomic_fetch_add(&foreign, 1);
    int it = atomic_load(&published);
    if (it < 0)
        return;
    int wrong = 0;
    for (int s = 0; s < tt_size; s++)
        for (int i = 0; i < B; i += 512)
            if (a[s * B + i] != expected(it, s, i))
                wrong++;
    atomic_thread_fence(memory_order_acquire);
    if (atomic_load(&published) == it)
        atomic_fetch_add(&bad, wrong);
}

static void *signal_thread(void *arg)
{
    (void)arg;
    sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    pthread_sigmask(SIG_UNBLOCK, &usr1, NULL);
    atomic_store(&signal_tid, tid());
    struct timespec ms = { 0, 1000000 };
    while (!atomic_load(&stop))
        nanosleep(&ms, NULL);
    return NULL;
}

int main(int argc, char **argv)
{
    sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &usr1, NULL);        /* MPI's threads inherit it */
    tt_init(&argc, &argv);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sigfillset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);
    pthread_t t;
    pthread_create(&t, NULL, signal_thread, NULL);
    while (!atomic_load(&signal_tid))
        sched_yield();

    int n = tt_size * B;
    int *s = malloc((size_t)n * sizeof *s);
    a = malloc((size_t)n * sizeof *a + 40) + 10;   /* not page-aligned */
    pthread_sigmask(SIG_UNBLOCK, &usr1, NULL);      /* at the first call: unblocked */
    for (int it = 0; it < 40; it++) {
        atomic_store(&published, -1);
        atomic_thread_fence(memory_order_seq_cst);
        for (int d = 0; d < tt_size; d++)
            for (int i = 0; i < B; i++)
                s[d * B + i] = tt_rank * 100000 + d * 1000 + it * 7 + i;
        MPI_Alltoall(s, B, MPI_INT, a, B, MPI_INT, MPI_COMM_WORLD);
        if (it == 0)
            pthread_sigmask(SIG_BLOCK, &usr1, NULL); /* from now on, the signal thread's */
        atomic_store(&published, it);
        for (int k = 0; k < 4; k++) {
            kill(getpid(), SIGUSR1);
            for (volatile int spin = 0; spin < 20000; spin++)
                ;
        }
    }
    atomic_store(&stop, 1);
    pthread_join(t, NULL);
    tt_out("rank %d foreign %d bad %d last %016llx\n", tt_rank, atomic_load(&foreign), atomic_load(&bad),
           (unsigned long long)tt_hash(a, (size_t)n * sizeof *a));
    tt_finish();
    return 0;
}
