/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared helpers of the torture programs: legal MPI programs that do
 * unusual things with buffers after a blocking collective returned. Each
 * rank collects its output lines; tt_finish prints them in rank order from
 * rank 0 (point-to-point, so the printing itself is never transformed), so
 * the whole output can be compared byte for byte between runs. */
#ifndef TT_H
#define TT_H

#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tt_rank, tt_size;
static char tt_buf[1 << 16];
static size_t tt_len;

static inline void tt_init(int *argc, char ***argv)
{
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &tt_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &tt_size);
}

/* MPI_Init_thread asking for `level`; returns the level provided. */
static inline int tt_init_thread(int *argc, char ***argv, int level)
{
    int provided;
    MPI_Init_thread(argc, argv, level, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &tt_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &tt_size);
    return provided;
}

__attribute__((format(printf, 1, 2))) static inline void tt_out(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tt_buf + tt_len, sizeof tt_buf - tt_len, fmt, ap);
    va_end(ap);
    if (n > 0 && tt_len + (size_t)n < sizeof tt_buf)
        tt_len += (size_t)n;
}

/* FNV-1a over bytes. */
static inline uint64_t tt_hash(const void *p, size_t n)
{
    const unsigned char *c = p;
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n; i++) {
        h ^= c[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

/* tt_init for a case written for exactly `np` ranks: 0 (after saying so
 * and finishing) where the job has another number. */
static inline void tt_finish(void);
static inline int tt_init_ranks(int *argc, char ***argv, int np)
{
    tt_init(argc, argv);
    if (tt_size == np)
        return 1;
    tt_out("needs %d ranks\n", np);
    tt_finish();
    return 0;
}

/* An Alltoall of `blk`-byte blocks from s into r, iteration it's pattern
 * in s, with `path` (NULL: none) at `path_off` of every block: a path that
 * arrives in the call. */
static inline void tt_exchange_pattern(char *s, char *r, int blk, int it, const char *path,
                                       size_t path_off)
{
    size_t n = (size_t)tt_size * (size_t)blk;
    for (size_t i = 0; i < n; i++)
        s[i] = (char)(i * 13 + (size_t)tt_rank * 7 + (size_t)it);
    for (int b = 0; path && b < tt_size; b++)
        memcpy(s + (size_t)b * (size_t)blk + path_off, path, strlen(path) + 1);
    MPI_Alltoall(s, blk, MPI_CHAR, r, blk, MPI_CHAR, MPI_COMM_WORLD);
}

static inline void tt_finish(void)
{
    if (tt_rank == 0) {
        fwrite(tt_buf, 1, tt_len, stdout);
        for (int r = 1; r < tt_size; r++) {
            MPI_Status st;
            int n;
            MPI_Recv(tt_buf, sizeof tt_buf, MPI_CHAR, r, 99, MPI_COMM_WORLD, &st);
            MPI_Get_count(&st, MPI_CHAR, &n);
            fwrite(tt_buf, 1, (size_t)n, stdout);
        }
        fflush(stdout);
    } else {
        MPI_Send(tt_buf, (int)tt_len, MPI_CHAR, 0, 99, MPI_COMM_WORLD);
    }
    MPI_Finalize();
}

/* MPI_Init_thread asking for MPI_THREAD_MULTIPLE. 1 when MPI gives it;
 * else 0, after saying so in the output and finishing (every run of the
 * case then prints the same line: the case is moot, not failed). */
static inline int tt_init_multiple(int *argc, char ***argv)
{
    int provided;
    MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &tt_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &tt_size);
    if (provided >= MPI_THREAD_MULTIPLE)
        return 1;
    tt_out("rank %d no MPI_THREAD_MULTIPLE\n", tt_rank);
    tt_finish();
    return 0;
}

#endif
