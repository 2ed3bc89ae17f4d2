// SPDX-License-Identifier: BSD-3-Clause
/* A correct MPI program that does with received buffers what real codes
 * do: writes them to a file (write and fwrite), sends them on with
 * MPI_Send, receives into them with MPI_Recv, frees and reallocates them,
 * and reuses them in the next collective. Under tracing it must behave
 * exactly as without. Prints "io_and_reuse: ok". */
#include <mpi.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define N 4096   /* ints per block: 16 KiB, several whole pages */

static int check(const int *buf, int nblocks, int rank, int it)
{
    int bad = 0;
    for (int b = 0; b < nblocks; b++)
        for (int i = 0; i < N; i++)
            bad += buf[(size_t)b * N + (size_t)i] != b * 1000000 + rank * 1000 + it * 10 + i % 10;
    return bad;
}

int main(int argc, char **argv)
{
    int rank, size, bad = 0;
    char path[256];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    snprintf(path, sizeof path, "%s/io_and_reuse.%d", argc > 1 ? argv[1] : "/tmp", rank);
    size_t bytes = (size_t)size * N * sizeof(int);
    int *sbuf = malloc(bytes), *rbuf = malloc(bytes), *copy = malloc(bytes);

    for (int it = 0; it < 4; it++) {
        for (int d = 0; d < size; d++)
            for (int i = 0; i < N; i++)
                sbuf[(size_t)d * N + (size_t)i] = rank * 1000000 + d * 1000 + it * 10 + i % 10;
        MPI_Alltoall(sbuf, N, MPI_INT, rbuf, N, MPI_INT, MPI_COMM_WORLD);

        /* 1. straight to the kernel with write(), then back with read(). */
        int fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0600);
        if (fd < 0 || write(fd, rbuf, bytes) != (ssize_t)bytes)
            bad += 1000;
        lseek(fd, 0, SEEK_SET);
        if (read(fd, copy, bytes) != (ssize_t)bytes || memcmp(copy, rbuf, bytes))
            bad += 1000;
        close(fd);

        /* 2. stdio: a large fwrite goes to the kernel from the user buffer. */
        FILE *f = fopen(path, "wb");
        if (!f || fwrite(rbuf, 1, bytes, f) != bytes)
            bad += 1000;
        fclose(f);

        /* 3. pass it on around the ring with MPI_Sendrecv and MPI_Send/Recv. */
        int next = (rank + 1) % size, prev = (rank + size - 1) % size;
        MPI_Sendrecv(rbuf, (int)(bytes / sizeof(int)), MPI_INT, next, 1, copy,
                     (int)(bytes / sizeof(int)), MPI_INT, prev, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        bad += check(copy, size, prev, it);
        if (rank % 2 == 0) {
            MPI_Send(rbuf, (int)(bytes / sizeof(int)), MPI_INT, next, 2, MPI_COMM_WORLD);
            MPI_Recv(copy, (int)(bytes / sizeof(int)), MPI_INT, prev, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(copy, (int)(bytes / sizeof(int)), MPI_INT, prev, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(rbuf, (int)(bytes / sizeof(int)), MPI_INT, next, 2, MPI_COMM_WORLD);
        }
        bad += check(copy, size, prev, it);
        bad += check(rbuf, size, rank, it);

        /* 4. free and reallocate the receive buffer every other iteration. */
        if (it % 2) {
            free(rbuf);
            rbuf = malloc(bytes);
        }
    }
    unlink(path);
    int allbad = 0;
    MPI_Allreduce(&bad, &allbad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (!rank)
        printf("io_and_reuse: %s (%d)\n", allbad ? "FAILED" : "ok", allbad);
    free(sbuf);
    free(rbuf);
    free(copy);
    MPI_Finalize();
    return allbad != 0;
}
