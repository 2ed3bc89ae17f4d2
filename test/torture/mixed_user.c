// SPDX-License-Identifier: BSD-3-Clause
/* Own case: an ordinary program written without tnbc in mind (it began as
 * a user-style test program, 2026-11-29), many unusual things at once:
 * a cartesian row communicator and a group communicator; an allgather
 * into malloc'd buffers at +8 read by a fresh thread backwards and by a
 * helper through a local array, then the buffer grown by realloc; an
 * alltoallv with blocks in reverse order in memory, some empty, each
 * block qsorted in place last first, sent through a pipe with writev,
 * grown by realloc; a bcast of a struct type from the last rank, read
 * backwards with strlen; reduce_scatter_block of ints; an allreduce into
 * a stack variable (runs blocking). 4 ranks. */
#include "tt.h"

#include <pthread.h>
#include <stddef.h>
#include <sys/uio.h>
#include <unistd.h>

/* h folded with tt_hash of the next n bytes at p. */
static uint64_t hash(const void *p, size_t n, uint64_t h)
{
    return h * 1099511628211ull ^ tt_hash(p, n);
}

struct part { const double *v; long n; double sum; };
static void *rev_sum(void *arg)
{
    struct part *p = arg;
    double s = 0;
    for (long i = p->n - 1; i >= 0; i--)
        s += p->v[i] * (double)(i % 7 + 1);
    p->sum = s;
    return NULL;
}

static double helper_local(const double *x, long n)
{
    double loc[512];           /* a local copy of a slice, as helpers do */
    long k = n < 512 ? n : 512;
    memcpy(loc, x + n - k, (size_t)k * sizeof *loc);
    double s = 0;
    for (long i = 0; i < k; i++)
        s += loc[i] * loc[k - 1 - i];
    return s;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

struct rec { int id; double w[3]; char tag[12]; };

int main(int argc, char **argv)
{
    (void)tt_init_thread(&argc, &argv, MPI_THREAD_FUNNELED);
    int rank = tt_rank, np = tt_size;
    long n = 40000;            /* doubles per block */
    int iters = 6;
    int dims[2] = {0, 0}, periods[2] = {0, 0}, keep[2] = {0, 1};
    MPI_Dims_create(np, 2, dims);
    MPI_Comm cart, row, grp;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 1, &cart);
    MPI_Cart_sub(cart, keep, &row);
    MPI_Group wg, eg;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    int ne = (np + 1) / 2, *ev = malloc(sizeof(int) * (size_t)ne);
    for (int i = 0; i < ne; i++) ev[i] = 2 * i;
    MPI_Group_incl(wg, ne, ev, &eg);
    grp = MPI_COMM_NULL;
    if (rank % 2 == 0)
        MPI_Comm_create_group(MPI_COMM_WORLD, eg, 7, &grp);
    int rn;
    MPI_Comm_size(row, &rn);

    MPI_Datatype rt, types[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
    int bl[3] = {1, 3, 12};
    MPI_Aint dis[3] = {offsetof(struct rec, id), offsetof(struct rec, w), offsetof(struct rec, tag)};
    MPI_Type_create_struct(3, bl, dis, types, &rt);
    MPI_Type_commit(&rt);

    uint64_t h = 1469598103934665603ull;
    for (int it = 0; it < iters; it++) {
        /* 1. allgather on the row communicator, buffers at +8 */
        char *sraw = malloc((size_t)n * 8 + 64), *rraw = malloc((size_t)n * 8 * rn + 64);
        double *s = (double *)(sraw + 8), *r = (double *)(rraw + 8);
        for (long i = 0; i < n; i++) s[i] = rank * 1000.0 + it + i * 0.5;
        MPI_Allgather(s, (int)n, MPI_DOUBLE, r, (int)n, MPI_DOUBLE, row);
        pthread_t th;
        struct part back = {r + (long)rn * n / 2, (long)rn * n - (long)rn * n / 2, 0};
        pthread_create(&th, NULL, rev_sum, &back);
        double front = helper_local(r, (long)rn * n / 2);
        pthread_join(th, NULL);
        h = hash(&front, sizeof front, h);
        h = hash(&back.sum, sizeof back.sum, h);
        rraw = realloc(rraw, (size_t)n * 8 * rn * 2 + 64);   /* grows: the data moves */
        h = hash(rraw + 8, (size_t)n * 8 * rn, h);
        free(rraw);
        free(sraw);

        /* 2. alltoallv on world, blocks reversed in memory, some empty */
        int *sc = malloc(sizeof(int) * 4 * (size_t)np), *sd = sc + np, *rc = sd + np, *rd = rc + np;
        long tot_s = 0;
        for (int p = 0; p < np; p++) {
            sc[p] = ((rank + p) % 3 == 0) ? 0 : (int)(n / 2 + p * 13);
            rc[p] = ((p + rank) % 3 == 0) ? 0 : (int)(n / 2 + rank * 13);
            tot_s += sc[p];
        }
        long off = 0;
        for (int p = np - 1; p >= 0; p--) { sd[p] = (int)off; off += sc[p]; }
        off = 0;
        for (int p = np - 1; p >= 0; p--) { rd[p] = (int)off; off += rc[p] + 3; }
        int *sv = malloc(sizeof(int) * (size_t)(tot_s + 1)), *rv = malloc(sizeof(int) * (size_t)(off + 1));
        for (long i = 0; i < tot_s; i++) sv[i] = (int)((rank * 7919 + i * 31 + it) % 100003);
        memset(rv, 0x5a, sizeof(int) * (size_t)(off + 1));
        MPI_Alltoallv(sv, sc, sd, MPI_INT, rv, rc, rd, MPI_INT, MPI_COMM_WORLD);
        for (int p = np - 1; p >= 0; p--)        /* sort each block in place, last first */
            qsort(rv + rd[p], (size_t)rc[p], sizeof(int), cmp_int);
        h = hash(rv, sizeof(int) * (size_t)(off + 1), h);
        int fds[2];
        if (rc[0] > 0 && pipe(fds) == 0) {        /* through a pipe and back */
            struct iovec io = {rv, sizeof(int) * (size_t)(rc[0] < 256 ? rc[0] : 256)};
            if (writev(fds[1], &io, 1) < 0) perror("writev");
            int back2[256];
            ssize_t got = read(fds[0], back2, sizeof back2);
            h = hash(back2, got > 0 ? (size_t)got : 0, h);
            close(fds[0]); close(fds[1]);
        }
        rv = realloc(rv, sizeof(int) * (size_t)(off + 1) * 2);
        h = hash(rv, sizeof(int) * (size_t)(off + 1), h);
        free(sv); free(rv); free(sc);

        /* 3. bcast of structs from the last rank on the group communicator */
        if (grp != MPI_COMM_NULL) {
            int gn, gr;
            MPI_Comm_size(grp, &gn);
            MPI_Comm_rank(grp, &gr);
            long m = n / 8;
            struct rec *rs = malloc(sizeof *rs * (size_t)m);
            if (gr == gn - 1)
                for (long i = 0; i < m; i++) {
                    rs[i].id = (int)(i * 3 + it);
                    for (int k = 0; k < 3; k++) rs[i].w[k] = i * 0.25 + k;
                    snprintf(rs[i].tag, sizeof rs[i].tag, "r%ld", i % 100000);
                }
            MPI_Bcast(rs, (int)m, rt, gn - 1, grp);
            double acc = 0;
            for (long i = m - 1; i >= 0; i -= 3)
                acc += rs[i].w[i % 3] + rs[i].id + (double)strlen(rs[i].tag);
            h = hash(&acc, sizeof acc, h);
            free(rs);
        }

        /* 4. reduce_scatter_block of ints, allreduce max of int64 */
        int blk = (int)(n / 4);
        int *in = malloc(sizeof(int) * (size_t)blk * (size_t)np), *out = malloc(sizeof(int) * (size_t)blk);
        for (long i = 0; i < (long)blk * np; i++) in[i] = (int)((i * 17 + rank * 5 + it) % 1000);
        MPI_Reduce_scatter_block(in, out, blk, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        h = hash(out, sizeof(int) * (size_t)blk, h);
        int64_t mx = (int64_t)(h & 0xffff), gmx;
        MPI_Allreduce(&mx, &gmx, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
        h = hash(&gmx, sizeof gmx, h);
        free(in); free(out);
    }
    tt_out("rank %d hash %016llx\n", rank, (unsigned long long)h);
    free(ev);
    MPI_Type_free(&rt);
    if (grp != MPI_COMM_NULL)
        MPI_Comm_free(&grp);
    MPI_Comm_free(&row);
    MPI_Comm_free(&cart);
    MPI_Group_free(&eg);
    MPI_Group_free(&wg);
    tt_finish();
    return 0;
}
