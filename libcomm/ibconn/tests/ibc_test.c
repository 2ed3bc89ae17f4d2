// SPDX-License-Identifier: BSD-3-Clause
/* MPI test driver for ibconn (run inside the VM bench on soft-RoCE).
 *
 *   ibc_test [VAR=VALUE | STEP]...
 *     VAR=VALUE  set (VAR= unsets) an environment variable for the next step;
 *                settings are cleared after each step
 *     integrity  every pair exchanges messages of every size around the
 *                eager threshold, content checked
 *     ondemand   all first messages at once (group mode): dedicated
 *                connections made concurrently, then rendezvous over them
 *     exhaust    one receiver stops while the others send: queues run dry
 *                and refill (credits in rc, SRQ limit events)
 *     mode:NAME  the mode in use (after any fallback) is NAME
 *     refuse     start-up fails cleanly on every rank
 * Steps share one mpirun (start-up is the slow part under TCG). Rank 0
 * prints "ok" or "FAIL" per step; each failure also prints one line. */
#include "../ibconn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int rank, nprocs;

#define FAIL(...) (fprintf(stderr, "rank %d: ", rank), fprintf(stderr, __VA_ARGS__), \
                   fputc('\n', stderr), 1)

static unsigned char pattern(int src, int dst, size_t size, size_t i)
{
    return (unsigned char)(src * 31 + dst * 17 + size * 7 + i * 13 + (i >> 8));
}

static void fill(unsigned char *b, int src, int dst, size_t size)
{
    for (size_t i = 0; i < size; i++)
        b[i] = pattern(src, dst, size, i);
}

static int verify(const unsigned char *b, int src, int dst, size_t size, size_t got)
{
    if (got != size)
        return FAIL("from %d: got %zu bytes, sent %zu", src, got, size);
    for (size_t i = 0; i < size; i++)
        if (b[i] != pattern(src, dst, size, i))
            return FAIL("from %d: %zu-byte message differs at byte %zu", src, size, i);
    return 0;
}

static int send_one(struct ibc_ctx *c, int dst, unsigned char *buf, size_t size)
{
    fill(buf, rank, dst, size);
    return ibc_send(c, dst, buf, size) ? FAIL("send of %zu bytes to %d failed", size, dst) : 0;
}

static int recv_one(struct ibc_ctx *c, int src, unsigned char *buf, size_t size)
{
    size_t got = 0;

    memset(buf, 0, size + 1);
    if (ibc_recv(c, src, buf, size + 1, &got))
        return FAIL("receive of %zu bytes from %d failed", size, src);
    return verify(buf, src, rank, size, got);
}

/* Pairs in a global order (a<b): a sends, b answers. Deadlock-free with
 * blocking rendezvous because the smallest unfinished pair can always go. */
static int pairwise(struct ibc_ctx *c, const size_t *sizes, int nsizes, unsigned char *buf)
{
    int bad = 0;

    for (int a = 0; a < nprocs; a++)
        for (int b = a + 1; b < nprocs; b++) {
            if (rank != a && rank != b)
                continue;
            int peer = rank == a ? b : a;
            for (int s = 0; s < nsizes && !bad; s++) {
                if (rank == a)
                    bad = send_one(c, peer, buf, sizes[s]) || recv_one(c, peer, buf, sizes[s]);
                else
                    bad = recv_one(c, peer, buf, sizes[s]) || send_one(c, peer, buf, sizes[s]);
            }
        }
    return bad;
}

static int test_integrity(struct ibc_ctx *c, size_t eager)
{
    size_t sizes[] = {0, 1, 63, 1000, eager - 1, eager, eager + 1, 2 * eager + 3,
                      65536, 300000};
    unsigned char *buf = malloc(sizes[9] + 1);
    int bad = pairwise(c, sizes, 10, buf);

    free(buf);
    return bad;
}

/* Everyone's first message goes to everyone at once (eager sends do not
 * block), so on-demand requests cross and collide; then rendezvous. */
static int test_ondemand(struct ibc_ctx *c, size_t eager)
{
    size_t big[] = {eager + 1, 100000};
    unsigned char *buf = malloc(100001);
    unsigned char *out = malloc((size_t)nprocs * 257);
    struct ibc_stats st;
    int bad = 0, expect = 0;

    for (int d = 1; d < nprocs && !bad; d++) {
        int dst = (rank + d) % nprocs;
        fill(out + dst * 257, rank, dst, 257);
        bad = ibc_send(c, dst, out + dst * 257, 257) ? FAIL("first send to %d failed", dst) : 0;
    }
    for (int d = 1; d < nprocs && !bad; d++)
        bad = recv_one(c, (rank - d + nprocs) % nprocs, buf, 257);
    bad = bad || pairwise(c, big, 2, buf);
    if (!bad && ibc_barrier(c))
        bad = FAIL("barrier failed");
    ibc_get_stats(c, &st);
    for (int p = 0; p < nprocs; p++)
        if (p != rank && !ibc_connected(c, p))
            bad = bad || FAIL("no connection to %d after messages", p);
    expect = nprocs - 1 - (int)st.conns_static;
    if (!bad && (int)st.conns_dynamic != expect)
        bad = FAIL("%u dynamic connections, expected %d", st.conns_dynamic, expect);
    if (!bad && st.mode == IBC_GROUP && nprocs > 4 && rank == 0 && st.conns_dynamic == 0)
        bad = FAIL("group mode made no dynamic connection");
    printf("rank %d: static %u dynamic %u forwarded %llu proxied %llu\n", rank,
           st.conns_static, st.conns_dynamic, (unsigned long long)st.forwarded,
           (unsigned long long)st.proxied);
    free(buf);
    free(out);
    return bad;
}

/* Rank 0 stops making progress for a while; the others each send it `count`
 * messages. It must then get all of them intact. */
static int test_exhaust(struct ibc_ctx *c)
{
    const int count = 40;
    unsigned char buf[300];
    struct ibc_stats st;
    unsigned long long stalls, mine;
    int bad = 0;

    if (ibc_barrier(c))
        return FAIL("barrier failed");
    if (rank == 0) {
        sleep(2);
        for (int src = 1; src < nprocs && !bad; src++)
            for (int i = 0; i < count && !bad; i++)
                bad = recv_one(c, src, buf, 100 + (size_t)i);
    } else {
        for (int i = 0; i < count && !bad; i++)
            bad = send_one(c, 0, buf, 100 + (size_t)i);
    }
    if (ibc_barrier(c))
        bad = FAIL("barrier failed");
    ibc_get_stats(c, &st);
    mine = st.credit_stalls;
    MPI_Reduce(&mine, &stalls, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("mode %s: credit stalls %llu, SRQ limit events %llu, refills %llu, "
               "SRQ depth %llu\n", ibc_mode_name(st.mode), stalls,
               (unsigned long long)st.srq_limit_events, (unsigned long long)st.srq_refills,
               (unsigned long long)st.srq_depth);
        if (st.mode == IBC_RC && stalls == 0)
            bad = bad || FAIL("rc: senders never waited for credits");
        if (st.mode != IBC_RC && (st.srq_limit_events == 0 || st.srq_refills == 0))
            bad = bad || FAIL("SRQ never reported its limit or was never refilled");
    }
    return bad;
}

/* One step: a fresh context from the current environment, one test, and a
 * verdict agreed by all ranks. "mode:NAME" checks the mode in use after any
 * fallback; "refuse" expects start-up to fail cleanly on every rank. */
static int run_step(const char *step)
{
    struct ibc_opts o;
    struct ibc_ctx *c = NULL;
    struct ibc_stats st = {.mode = IBC_MODE_COUNT};
    int bad = 0, any, started;

    started = ibc_opts_from_env(&o) == 0 && ibc_init(MPI_COMM_WORLD, &o, &c) == 0;
    if (strcmp(step, "refuse") == 0) {
        bad = started ? FAIL("start-up succeeded; expected a refusal") : 0;
    } else if (!started) {
        bad = FAIL("start-up failed");
    } else {
        ibc_get_stats(c, &st);
        if (strcmp(step, "integrity") == 0)
            bad = test_integrity(c, o.eager);
        else if (strcmp(step, "ondemand") == 0)
            bad = test_ondemand(c, o.eager);
        else if (strcmp(step, "exhaust") == 0)
            bad = test_exhaust(c);
        else if (strncmp(step, "mode:", 5) == 0)
            bad = strcmp(step + 5, ibc_mode_name(st.mode)) != 0
                      ? FAIL("mode in use is %s, expected %s", ibc_mode_name(st.mode), step + 5)
                      : 0;
        else
            bad = FAIL("unknown step '%s'", step);
    }
    if (c && ibc_finalize(c))
        bad = 1;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    return any;
}

int main(int argc, char **argv)
{
    int failed = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc < 2 && rank == 0)
        fprintf(stderr, "usage: ibc_test [VAR=VALUE | integrity | ondemand | exhaust |"
                        " mode:NAME | refuse]...\n");
    char settings[1024] = "";
    int first_setting = 1;
    for (int i = 1; i < argc; i++) {
        char *eq = strchr(argv[i], '=');
        if (eq) {                       /* environment for the following steps */
            *eq = 0;
            if (eq[1])
                setenv(argv[i], eq + 1, 1);
            else
                unsetenv(argv[i]);
            size_t used = strlen(settings);
            snprintf(settings + used, sizeof settings - used, "%s%s=%s", used ? " " : "",
                     argv[i], eq + 1);
            *eq = '=';
            continue;
        }
        int bad = run_step(argv[i]);
        failed |= bad;
        if (rank == 0) {
            printf("%s %s [%s]\n", bad ? "FAIL" : "ok  ", argv[i], settings);
            fflush(stdout);
        }
        for (int j = first_setting; j < i; j++) {   /* settings last one step */
            char name[128];
            snprintf(name, sizeof name, "%.*s", (int)strcspn(argv[j], "="), argv[j]);
            unsetenv(name);
        }
        first_setting = i + 1;
        settings[0] = 0;
    }
    MPI_Finalize();
    return argc < 2 ? 2 : failed;
}
