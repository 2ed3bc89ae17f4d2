// SPDX-License-Identifier: BSD-3-Clause
/* Case 8b: the program installs its own SIGSEGV handler with sigset(),
 * sysv_signal() and bsd_signal() after MPI_Init, and takes exactly 5
 * faults of its own (on a page it protects itself) between collectives. */
#include "tt.h"
#include <signal.h>
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"   /* sigset() is what is tested */
#include <sys/mman.h>
#include <unistd.h>

extern sighandler_t sysv_signal(int, sighandler_t);
extern sighandler_t bsd_signal(int, sighandler_t);

#define N 65536
static char *page;
static size_t ps;
static volatile sig_atomic_t mine;

static void on_segv(int sig)
{
    (void)sig;
    mine = mine + 1;
    mprotect(page, ps, PROT_READ | PROT_WRITE);
}

int main(int argc, char **argv)
{
    tt_init(&argc, &argv);
    ps = (size_t)sysconf(_SC_PAGESIZE);
    page = mmap(NULL, ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    int *a = malloc(N * sizeof *a);
    for (int it = 0; it < 6; it++) {
        int how = it % 3;
        if (how == 0)
            sigset(SIGSEGV, on_segv);
        else if (how == 1)
            sysv_signal(SIGSEGV, on_segv);     /* one shot: reinstalled each time */
        else
            bsd_signal(SIGSEGV, on_segv);
        for (int i = 0; i < N; i++)
            a[i] = tt_rank == 0 ? it + i : 0;
        MPI_Bcast(a, N, MPI_INT, 0, MPI_COMM_WORLD);
        uint64_t h = tt_hash(a, N * sizeof *a);
        if (it < 5) {
            mprotect(page, ps, PROT_NONE);
            page[0] = (char)it;           /* our own fault */
        }
        tt_out("rank %d it %d %016llx faults %d\n", tt_rank, it, (unsigned long long)h, (int)mine);
    }
    tt_finish();
    return 0;
}
