// SPDX-License-Identifier: BSD-3-Clause
/* Own case: the send buffer is the program's again the moment the call
 * returns, while tnbc may still be sending from its pages (held
 * read-only, libreplay/send_guard.h). Each helper has its own call site,
 * so each keeps sending in place until its own waits outweigh the copies:
 *   scribble  writes the buffer at once, last block first
 *   pipe_in   read(2) into the middle of it (the kernel writes it)
 *   refree    free() and a new malloc() (a large block: munmap)
 *   p2p_in    MPI_Sendrecv into it
 *   helper    a second thread writes it while this one reads the data
 *   discard   madvise(MADV_DONTNEED) on its whole pages, then refilled
 *   swap      the next call receives into it
 * Buffers from malloc at odd offsets; every received block is hashed. */
#include "tt.h"

#include <pthread.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#define BLK 70000      /* ints per block: blocks share pages */

static size_t n;       /* ints per buffer: BLK per rank */

static void fill(int *b, int it, int salt)
{
    for (size_t i = 0; i < n; i++)
        b[i] = tt_rank * 1000003 + (int)i * 7 + it * 31 + salt;
}

static void report(const char *what, int it, const int *r)
{
    tt_out("rank %d %s it %d recv %016llx\n", tt_rank, what, it,
           (unsigned long long)tt_hash(r, n * sizeof *r));
}

static void scribble(int *s, int *r, int it)
{
    fill(s, it, 1);
    MPI_Alltoall(s, BLK, MPI_INT, r, BLK, MPI_INT, MPI_COMM_WORLD);
    for (size_t i = n; i-- > 0;)
        s[i] = -1;
    report("scribble", it, r);
}

static void pipe_in(int *s, int *r, int it)
{
    fill(s, it, 2);
    MPI_Alltoall(s, BLK, MPI_INT, r, BLK, MPI_INT, MPI_COMM_WORLD);
    int fds[2], x[2048];
    for (int k = 0; k < 2048; k++)
        x[k] = -k;
    if (pipe(fds) != 0 || write(fds[1], x, sizeof x) != (ssize_t)sizeof x ||
        read(fds[0], s + n / 2, sizeof x) != (ssize_t)sizeof x)
        tt_out("rank %d pipe failed\n", tt_rank);
    close(fds[0]);
    close(fds[1]);
    report("pipe_in", it, r);
    tt_out("rank %d pipe_in it %d send %016llx\n", tt_rank, it,
           (unsigned long long)tt_hash(s, n * sizeof *s));
}

static char *refree(char *raw, int *r, int it)
{
    int *s = (int *)(raw + 12);
    fill(s, it, 3);
    MPI_Alltoall(s, BLK, MPI_INT, r, BLK, MPI_INT, MPI_COMM_WORLD);
    free(raw);
    raw = malloc(n * sizeof(int) + 12);
    report("refree", it, r);
    return raw;
}

static void p2p_in(int *s, int *r, int it)
{
    fill(s, it, 4);
    MPI_Alltoall(s, BLK, MPI_INT, r, BLK, MPI_INT, MPI_COMM_WORLD);
    int peer = (tt_rank + 1) % tt_size, from = (tt_rank + tt_size - 1) % tt_size;
    MPI_Sendrecv(r, BLK, MPI_INT, peer, 7, s, BLK, MPI_INT, from, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    report("p2p_in", it, r);
    tt_out("rank %d p2p_in it %d send %016llx\n", tt_rank, it,
           (unsigned long long)tt_hash(s, BLK * sizeof *s));
}

static void *overwrite(void *arg)
{
    int *s = arg;
    for (size_t i = 0; i < n; i += 3)
        s[i] = (int)i;
    return NULL;
}

static void helper(int *s, int *r, int it)
{
    pthread_t t;
    fill(s, it, 5);
    MPI_Alltoall(s, BLK, MPI_INT, r, BLK, MPI_INT, MPI_COMM_WORLD);
    int started = pthread_create(&t, NULL, overwrite, s) == 0;
    report("helper", it, r);
    if (started)
        pthread_join(t, NULL);
    else
        overwrite(s);
    tt_out("rank %d helper it %d send %016llx\n", tt_rank, it,
           (unsigned long long)tt_hash(s, n * sizeof *s));
}

static void discard(int *s, int *r, int it)
{
    long page = sysconf(_SC_PAGESIZE);
    fill(s, it, 6);
    MPI_Alltoall(s, BLK, MPI_INT, r, BLK, MPI_INT, MPI_COMM_WORLD);
    uintptr_t a = ((uintptr_t)s + (uintptr_t)page - 1) & ~(uintptr_t)(page - 1);
    uintptr_t b = ((uintptr_t)(s + n)) & ~(uintptr_t)(page - 1);
    if (b > a && madvise((void *)a, b - a, MADV_DONTNEED) != 0)
        tt_out("rank %d madvise failed\n", tt_rank);
    report("discard", it, r);
    fill(s, it, 7);
}

static void swap(int *a, int *b, int *c, int it)
{
    fill(a, it, 8);
    MPI_Alltoall(a, BLK, MPI_INT, b, BLK, MPI_INT, MPI_COMM_WORLD);
    MPI_Alltoall(b, BLK, MPI_INT, a, BLK, MPI_INT, MPI_COMM_WORLD);
    report("swap", it, a);
    memcpy(c, a, n * sizeof *c);
}

int main(int argc, char **argv)
{
    tt_init(&argc, &argv);
    n = (size_t)BLK * (size_t)tt_size;
    char *rs = malloc(n * sizeof(int) + 24), *rr = malloc(n * sizeof(int) + 40),
         *rf = malloc(n * sizeof(int) + 12), *rc = malloc(n * sizeof(int) + 8);
    int *s = (int *)(rs + 24), *r = (int *)(rr + 40), *c = (int *)(rc + 8);
    for (int it = 0; it < 5; it++) {
        scribble(s, r, it);
        pipe_in(s, r, it);
        rf = refree(rf, r, it);
        p2p_in(s, r, it);
        helper(s, r, it);
        discard(s, r, it);
        swap(s, r, c, it);
    }
    tt_out("rank %d last %016llx\n", tt_rank, (unsigned long long)tt_hash(c, n * sizeof *c));
    free(rs);
    free(rr);
    free(rf);
    free(rc);
    tt_finish();
    return 0;
}
