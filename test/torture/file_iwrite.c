// SPDX-License-Identifier: BSD-3-Clause
/* Case 8: MPI_File_iwrite_at of a buffer still pending from a collective
 * that returned early, then MPI_Wait; MPI_File_read_at into another pending
 * buffer; then the file read back with read(2) and printed (hash and a few
 * values). The file must hold the collective's data. */
#include "tt.h"
#include <fcntl.h>
#include <unistd.h>

#define N 65536

static int *fresh(int it, int salt)
{
    int *a = malloc(N * sizeof *a);
    for (int i = 0; i < N; i++)
        a[i] = tt_rank == 0 ? it * 13 + salt + i : -3;
    MPI_Bcast(a, N, MPI_INT, 0, MPI_COMM_WORLD);
    return a;
}

int main(int argc, char **argv)
{
    tt_init(&argc, &argv);
    char path[64];
    snprintf(path, sizeof path, "/tmp/tnbc-torture-iwrite.%d.%d", (int)getpid(), tt_rank);
    MPI_File fh;
    if (MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh)) {
        fprintf(stderr, "rank %d: cannot open %s\n", tt_rank, path);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int it = 0; it < 3; it++) {
        int *a = fresh(it, 0);
        MPI_Request rq;
        MPI_Status st;
        MPI_File_iwrite_at(fh, (MPI_Offset)it * N * sizeof *a, a, N, MPI_INT, &rq);
        MPI_Wait(&rq, &st);
        int n;
        MPI_Get_count(&st, MPI_INT, &n);
        int *b = fresh(it, 100);
        MPI_File_read_at(fh, (MPI_Offset)it * N * sizeof *a, b + 7, N - 7, MPI_INT, &st);
        tt_out("rank %d it %d wrote %d read back b[7] %d b[6] %d %016llx %016llx\n", tt_rank, it,
               n, b[7], b[6], (unsigned long long)tt_hash(a, N * sizeof *a),
               (unsigned long long)tt_hash(b, N * sizeof *b));
        free(a);
        free(b);
    }
    MPI_File_close(&fh);
    int fd = open(path, O_RDONLY);
    int *f = malloc(3 * N * sizeof *f);
    ssize_t got = fd < 0 ? -1 : read(fd, f, 3 * N * sizeof *f);
    tt_out("rank %d file %zd bytes:", tt_rank, got);
    for (int it = 0; got == (ssize_t)(3 * N * sizeof *f) && it < 3; it++)
        tt_out(" %d %d", f[it * N], f[it * N + N - 1]);
    tt_out(" %016llx\n", (unsigned long long)(got > 0 ? tt_hash(f, (size_t)got) : 0));
    if (fd >= 0)
        close(fd);
    unlink(path);
    free(f);
    tt_finish();
    return 0;
}
