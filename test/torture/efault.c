// SPDX-License-Identifier: BSD-3-Clause
/* Case 9: system calls that take a pending buffer: the kernel must see the
 * data (no EFAULT, no short transfer). preadv/pwritev, stat family,
 * getcwd, pipe, uname, poll, readlink, getrandom's absence of EFAULT... */
#include "tt.h"
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <unistd.h>

#define N 65536

static char *fresh(int it)
{
    char *a = malloc(N);
    for (int i = 0; i < N; i++)
        a[i] = (char)(tt_rank == 0 ? it + i : 0);
    MPI_Bcast(a, N, MPI_CHAR, 0, MPI_COMM_WORLD);
    return a;
}

int main(int argc, char **argv)
{
    tt_init(&argc, &argv);
    char path[64];
    snprintf(path, sizeof path, "/tmp/tnbc-torture-efault.%d.%d", (int)getpid(), tt_rank);
    int fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0600);
    for (int it = 0; it < 2; it++) {
        char *a = fresh(it);
        struct iovec v[2] = { { a, N / 2 }, { a + N / 2, N / 2 } };
        ssize_t w = pwritev(fd, v, 2, 0);
        char *b = fresh(it + 10);
        struct iovec u[2] = { { b + 1000, N / 2 }, { b + 1000 + N / 2, N / 2 - 1000 } };
        ssize_t r = preadv(fd, u, 2, 0);
        tt_out("rank %d it %d pwritev %zd preadv %zd %016llx\n", tt_rank, it, w, r,
               (unsigned long long)tt_hash(b, N));
        free(b);

        b = fresh(it + 20);
        int rc = stat(path, (struct stat *)(b + 8192));
        long long sz = rc == 0 ? (long long)((struct stat *)(b + 8192))->st_size : -1;
        free(b);
        b = fresh(it + 30);
        rc = fstat(fd, (struct stat *)(b + 8192));
        long long fsz = rc == 0 ? (long long)((struct stat *)(b + 8192))->st_size : -1;
        free(b);
        b = fresh(it + 35);
        rc = lstat(path, (struct stat *)(b + 8192));
        long long lsz = rc == 0 ? (long long)((struct stat *)(b + 8192))->st_size : -1;
        free(b);
        tt_out("rank %d it %d stat %lld fstat %lld lstat %lld\n", tt_rank, it, sz, fsz, lsz);

        b = fresh(it + 40);
        char *cwd = getcwd(b + 12000, 4096);
        tt_out("rank %d it %d getcwd %s\n", tt_rank, it, cwd ? "ok" : "failed");
        free(b);

        b = fresh(it + 50);
        int *pfd = (int *)(b + 16384);
        rc = pipe(pfd);
        tt_out("rank %d it %d pipe %d\n", tt_rank, it, rc);
        if (rc == 0) {
            int p0 = pfd[0], p1 = pfd[1];
            char *c = fresh(it + 55);
            ssize_t pw = write(p1, c + 5000, 3000);
            char *d = fresh(it + 56);
            ssize_t pr = read(p0, d + 7000, 3000);
            tt_out("rank %d it %d pipe io %zd %zd %d\n", tt_rank, it, pw, pr,
                   pr == 3000 && memcmp(c + 5000, d + 7000, 3000) == 0);
            struct pollfd *pf = (struct pollfd *)(fresh(it + 57) + 20000);
            pf[0] = (struct pollfd){ .fd = p1, .events = POLLOUT };
            pf[1] = (struct pollfd){ .fd = p0, .events = POLLIN };
            int pn = poll(pf, 2, 0);
            tt_out("rank %d it %d poll %d %d %d\n", tt_rank, it, pn, pf[0].revents & POLLOUT,
                   pf[1].revents & POLLIN);
            free(c);
            free(d);
            free((char *)pf - 20000);
            close(p0);
            close(p1);
        }
        free(b);

        b = fresh(it + 60);
        rc = uname((struct utsname *)(b + 4000));
        tt_out("rank %d it %d uname %d %s\n", tt_rank, it, rc,
               rc == 0 ? ((struct utsname *)(b + 4000))->sysname : "-");
        free(b);

        /* A path that arrived in a collective, used at once. */
        char *q = malloc(N);
        memset(q, 0, N);
        if (tt_rank == 0)
            snprintf(q + 8000, 64, "%s", path);
        MPI_Bcast(q, N, MPI_CHAR, 0, MPI_COMM_WORLD);
        struct stat qs;
        int qfd = tt_rank == 0 ? open(q + 8000, O_RDONLY) : -1;
        FILE *qf = tt_rank == 0 ? fopen(q + 8000, "r") : NULL;
        tt_out("rank %d it %d path open %d fopen %d stat %d\n", tt_rank, it, qfd >= 0, qf != NULL,
               tt_rank == 0 ? stat(q + 8000, &qs) : 0);
        if (qfd >= 0)
            close(qfd);
        if (qf)
            fclose(qf);
        free(q);

        b = fresh(it + 70);
        ssize_t rl = readlink("/proc/self/exe", b + 9000, 4096);
        tt_out("rank %d it %d readlink %d\n", tt_rank, it, rl > 0);
        free(b);
        free(a);
    }
    close(fd);
    unlink(path);
    tt_finish();
    return 0;
}
