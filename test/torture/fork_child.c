// SPDX-License-Identifier: BSD-3-Clause
/* Case 7a: a forked child reads the buffer a collective just filled and
 * reports its checksum through a pipe; the child never calls MPI. */
#include "tt.h"
#include <sys/wait.h>
#include <unistd.h>

#define N (1 << 22)   /* 16 MiB: still in flight when the fork comes */

int main(int argc, char **argv)
{
    tt_init(&argc, &argv);
    int *a = malloc(N * sizeof *a);
    for (int it = 0; it < 3; it++) {
        for (int i = 0; i < N; i++)
            a[i] = tt_rank == 0 ? it * 5 + i : 0;
        MPI_Bcast(a, N, MPI_INT, 0, MPI_COMM_WORLD);
        int fd[2];
        if (pipe(fd) != 0)
            MPI_Abort(MPI_COMM_WORLD, 1);
        pid_t pid = fork();
        if (pid == 0) {
            uint64_t h = tt_hash(a, N * sizeof *a);
            _exit(write(fd[1], &h, sizeof h) == sizeof h ? 0 : 1);
        }
        uint64_t h = 0;
        int st = -1;
        ssize_t got = read(fd[0], &h, sizeof h);
        waitpid(pid, &st, 0);
        close(fd[0]);
        close(fd[1]);
        tt_out("rank %d it %d child %016llx got %zd status %d parent %016llx\n", tt_rank, it,
               (unsigned long long)h, got, st, (unsigned long long)tt_hash(a, N * sizeof *a));
    }
    tt_finish();
    return 0;
}
