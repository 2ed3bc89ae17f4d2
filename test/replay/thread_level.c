// SPDX-License-Identifier: BSD-3-Clause
/* A plain MPI program that asks for MPI_THREAD_FUNNELED and exchanges
 * blocks with MPI_Alltoall in a loop (used by test/replay.sh, "no cost when
 * off"). With "report" as the second argument, rank 0 also prints the
 * thread level MPI granted and whether a thread named tnbc-progress runs in
 * the process, read from /proc/self/task after the loop, and that thread's
 * scheduling policy (batch, other, or none without the thread), and Open
 * MPI's mpi_yield_when_idle as MPI_T reads it (0, 1, or "none" where the
 * library has no such variable: MPICH).
 *
 * Third argument "multiple": the program asks for MPI_THREAD_MULTIPLE and
 * a second thread exchanges messages point to point (MPI_Sendrecv on a
 * duplicate of MPI_COMM_WORLD, an even number of ranks) while the main
 * thread runs the loop; "second": that thread also calls MPI_Allreduce
 * on its communicator every 8th exchange (collectives from two threads at
 * once). Its results go into the checksum. "relay": MPI_THREAD_MULTIPLE,
 * and each iteration's exchange runs in a thread of its own, started and
 * joined by the main thread (collectives handed from thread to thread).
 * "turns": MPI_THREAD_MULTIPLE, the main thread runs the even iterations
 * and a fresh thread each odd one while main waits for it (threads take
 * turns, main stays alive, as under an OpenMP `single`).
 * Usage: thread_level ITERATIONS [report|-] [multiple|second|relay|turns] */
#include <dirent.h>
#include <mpi.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK_INTS 65536    /* 256 KiB per peer */

/* Whether a thread named tnbc-progress runs; *policy gets its policy. */
static int progress_thread_running(const char **policy)
{
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    int found = 0;
    *policy = "none";
    if (!d)
        return -1;
    while ((e = readdir(d)) != NULL) {
        char path[300], comm[64] = "";
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (f && fgets(comm, sizeof comm, f) && strncmp(comm, "tnbc-progress", 13) == 0) {
            int p = sched_getscheduler((pid_t)atoi(e->d_name));   /* a thread id */
            *policy = p == SCHED_BATCH ? "batch" : p == SCHED_OTHER ? "other" : "unknown";
            found = 1;
        }
        if (f)
            fclose(f);
    }
    closedir(d);
    return found;
}

#define SIDE_INTS 16384     /* 64 KiB per point-to-point message */
#define SIDE_ROUNDS 64

struct side { MPI_Comm comm; int rank, collectives; long long sum; };

/* The second thread: point-to-point rounds with the neighbouring rank,
 * and with `collectives` an MPI_Allreduce every 8th round. */
static void *side_thread(void *arg)
{
    struct side *sd = arg;
    int *out = malloc(SIDE_INTS * sizeof *out), *in = malloc(SIDE_INTS * sizeof *in);
    if (!out || !in)
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (int r = 0; r < SIDE_ROUNDS; r++) {
        for (int i = 0; i < SIDE_INTS; i++)
            out[i] = sd->rank * 31 + r * 7 + i;
        MPI_Sendrecv(out, SIDE_INTS, MPI_INT, sd->rank ^ 1, r, in, SIDE_INTS, MPI_INT, sd->rank ^ 1, r,
                     sd->comm, MPI_STATUS_IGNORE);
        for (int i = SIDE_INTS - 1; i >= 0; i--)
            sd->sum += in[i] % 613;
        if (sd->collectives && r % 8 == 0) {
            long long mine = sd->sum, all = 0;
            MPI_Allreduce(&mine, &all, 1, MPI_LONG_LONG, MPI_SUM, sd->comm);
            sd->sum += all % 1009;
        }
    }
    free(out);
    free(in);
    return NULL;
}

/* One iteration: fill, exchange, read the blocks backwards. */
struct iteration { int *sb, *rb, rank, size, it; long long sum; };

static void *iterate(void *arg)
{
    struct iteration *t = arg;
    for (long i = 0; i < (long)t->size * BLOCK_INTS; i++)
        t->sb[i] = (int)(t->rank * 1000003L + t->it * 7919L + i);
    MPI_Alltoall(t->sb, BLOCK_INTS, MPI_INT, t->rb, BLOCK_INTS, MPI_INT, MPI_COMM_WORLD);
    for (int k = t->size - 1; k >= 0; k--)
        for (long i = 0; i < BLOCK_INTS; i++)
            t->sum += t->rb[(long)k * BLOCK_INTS + i] % 977;
    return NULL;
}

/* Open MPI's mpi_yield_when_idle (a bool) through MPI_T: "0", "1", or
 * "none" when there is no such control variable. */
static const char *yield_when_idle(void)
{
    int prov, n = 0, found = -1;
    unsigned char val = 0;
    if (MPI_T_init_thread(MPI_THREAD_SINGLE, &prov) != MPI_SUCCESS)
        return "none";
    MPI_T_cvar_get_num(&n);
    for (int i = 0; i < n && found < 0; i++) {
        char name[256], desc[8];
        int nl = sizeof name, dl = sizeof desc, verb, bind, scope;
        MPI_Datatype dt;
        MPI_T_enum en;
        if (MPI_T_cvar_get_info(i, name, &nl, &verb, &dt, &en, desc, &dl, &bind, &scope) ==
                MPI_SUCCESS && !strcmp(name, "mpi_yield_when_idle"))
            found = i;
    }
    if (found >= 0) {
        MPI_T_cvar_handle h;
        int count;
        unsigned char buf[16] = { 0 };   /* room for any scalar type */
        if (MPI_T_cvar_handle_alloc(found, NULL, &h, &count) == MPI_SUCCESS) {
            if (MPI_T_cvar_read(h, buf) == MPI_SUCCESS)
                val = buf[0] != 0;
            MPI_T_cvar_handle_free(&h);
        } else {
            found = -1;
        }
    }
    MPI_T_finalize();
    return found < 0 ? "none" : val ? "1" : "0";
}

int main(int argc, char **argv)
{
    int provided = -1, rank, size, iters = argc > 1 ? atoi(argv[1]) : 4;
    int report = argc > 2 && strcmp(argv[2], "report") == 0;
    const char *mode = argc > 3 ? argv[3] : "";
    int multiple = !strcmp(mode, "multiple") || !strcmp(mode, "second");
    int relay = !strcmp(mode, "relay"), turns = !strcmp(mode, "turns");
    MPI_Init_thread(&argc, &argv, multiple || relay || turns ? MPI_THREAD_MULTIPLE : MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if ((multiple || relay || turns) && (provided < MPI_THREAD_MULTIPLE || (multiple && size % 2))) {
        fprintf(stderr, "thread_level: needs MPI_THREAD_MULTIPLE%s\n",
                multiple ? " and an even number of ranks" : "");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    struct side sd = { MPI_COMM_NULL, rank, !strcmp(mode, "second"), 0 };
    pthread_t side;
    if (multiple) {
        MPI_Comm_dup(MPI_COMM_WORLD, &sd.comm);
        pthread_create(&side, NULL, side_thread, &sd);
    }
    int *sb = malloc((size_t)size * BLOCK_INTS * sizeof *sb);
    int *rb = malloc((size_t)size * BLOCK_INTS * sizeof *rb);
    if (!sb || !rb)
        MPI_Abort(MPI_COMM_WORLD, 1);
    struct iteration t = { sb, rb, rank, size, 0, 0 };
    for (t.it = 0; t.it < iters; t.it++) {
        pthread_t worker;
        if (!relay && !(turns && t.it % 2))
            iterate(&t);
        else if (pthread_create(&worker, NULL, iterate, &t) != 0 || pthread_join(worker, NULL) != 0)
            MPI_Abort(MPI_COMM_WORLD, 1);
    }
    long long sum = t.sum;
    if (multiple) {
        pthread_join(side, NULL);
        sum += sd.sum;
        MPI_Comm_free(&sd.comm);
    }
    long long total = 0;
    MPI_Reduce(&sum, &total, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("thread_level: checksum %lld\n", total);
        if (report) {
            const char *policy;
            int running = progress_thread_running(&policy);
            printf("provided %s progress_thread %d\n",
                   provided == MPI_THREAD_FUNNELED ? "funneled" :
                   provided == MPI_THREAD_MULTIPLE ? "multiple" : "other", running);
            printf("progress_policy %s\n", policy);
            printf("yield_when_idle %s\n", yield_when_idle());
        }
    }
    free(sb);
    free(rb);
    MPI_Finalize();
    return 0;
}
