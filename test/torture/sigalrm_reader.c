// SPDX-License-Identifier: BSD-3-Clause
/* Case 7b: a SIGALRM handler reads the buffer of the last completed
 * collective (a flag says which one is complete), with an interval timer
 * firing during and between calls, and with raise() right after a call. */
#include "tt.h"
#include <signal.h>
#include <stdatomic.h>
#include <sys/time.h>

#define N 65536

static int *a;
static volatile sig_atomic_t stable, expect_it;
static volatile sig_atomic_t bad;

static void on_alarm(int sig)
{
    (void)sig;
    if (!stable)
        return;
    /* every element is it * 3 + i (mod the first page's offset) */
    for (int i = 0; i < N; i += 1024)
        if (a[i] != expect_it * 3 + i)
            bad = bad + 1;
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
        stable = 0;
        atomic_signal_fence(memory_order_seq_cst);   /* no store to a[] before this */
        for (int i = 0; i < N; i++)
            a[i] = tt_rank == 0 ? it * 3 + i : 0;
        MPI_Bcast(a, N, MPI_INT, 0, MPI_COMM_WORLD);
        expect_it = it;
        atomic_signal_fence(memory_order_seq_cst);
        stable = 1;
        raise(SIGALRM);
        for (volatile int spin = 0; spin < 20000; spin++)
            ;
    }
    struct itimerval off = { { 0, 0 }, { 0, 0 } };
    setitimer(ITIMER_REAL, &off, NULL);
    tt_out("rank %d bad %d last %016llx\n", tt_rank, (int)bad,
           (unsigned long long)tt_hash(a, N * sizeof *a));
    tt_finish();
    return 0;
}
