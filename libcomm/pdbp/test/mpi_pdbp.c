// SPDX-License-Identifier: BSD-3-Clause
/*
 * mpi_pdbp.c - PDBP over MPI, one scenario per run (argv[1]):
 *
 *   1toN | Nto1 | NtoN   streams between hosts, every message checked
 *   local                two GPs per host talking without MPI
 *   growth               slow reader: the threshold algorithm grows pools
 *   backpressure         tiny block limit: senders wait, nothing is lost
 *   inflight             2 hosts both ways, several blocks in flight per
 *                        destination, slow reader on host 0: the in-flight
 *                        limit and the credits hold, nothing lost or reordered
 *   reuse                more GPs than pipes, pipes borrowed and returned
 *   badmsg               malformed messages are rejected, traffic goes on
 *   failover             primary management node dies, backup takes over
 *
 * Messages carry pseudo-random bytes derived from (source, destination,
 * sequence number) and an FNV-1a checksum in their first 8 bytes; the
 * receiver regenerates and compares, and checks per-source order.
 * Prints "PASS <scenario> host H ..." and exits 0, or names the problem and
 * exits 1.
 */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../pdbp.h"
#include "../proto.h"
#include "../rt.h"

static int host, nhosts;
static const char *scen;

#define DIE(...) do { fprintf(stderr, "FAIL %s host %d: ", scen, host); \
                      fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); exit(1); } while (0)
#define CK(call) do { int rc_ = (call); if (rc_) DIE("%s -> %s", #call, pdbp_strerror(rc_)); } while (0)

static uint64_t fnv(const uint8_t *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33; x *= 0xff51afd7ed558ccdull; x ^= x >> 33;
    return x;
}

/* Message seq from src to dst: length and bytes are a function of the three. */
static size_t make_msg(uint8_t *buf, size_t maxlen, pdbp_gp_t src, pdbp_gp_t dst, int seq)
{
    uint64_t s = mix((uint64_t)src << 40 ^ (uint64_t)dst << 20 ^ (uint64_t)seq);
    size_t len = 16 + (size_t)(s % (maxlen - 15));
    memcpy(buf + 8, &seq, 4);
    for (size_t i = 12; i < len; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        buf[i] = (uint8_t)(s >> 56);
    }
    uint64_t h = fnv(buf + 8, len - 8);
    memcpy(buf, &h, 8);
    return len;
}

static void check_msg(const uint8_t *buf, size_t len, pdbp_gp_t src, pdbp_gp_t dst,
                      int seq, size_t maxlen)
{
    static __thread uint8_t *ref;
    if (!ref)
        ref = malloc(maxlen);
    uint64_t h;
    memcpy(&h, buf, 8);
    if (len < 16 || h != fnv(buf + 8, len - 8))
        DIE("checksum mismatch from gp %#x (len %zu)", src, len);
    size_t rl = make_msg(ref, maxlen, src, dst, seq);
    int got;
    memcpy(&got, buf + 8, 4);
    if (rl != len || memcmp(ref, buf, len))
        DIE("message from gp %#x is #%d, expected #%d (order or content)", src, got, seq);
}

struct sender {
    pdbp_pipe_t pipe;
    pdbp_gp_t me;
    pdbp_gp_t *dst;
    int ndst, count;
    size_t maxlen;
    unsigned long long bytes;   /* payload bytes sent */
};

static void *send_main(void *arg)
{
    struct sender *s = arg;
    uint8_t *buf = malloc(s->maxlen);
    for (int i = 0; i < s->count; i++)
        for (int d = 0; d < s->ndst; d++) {
            size_t n = make_msg(buf, s->maxlen, s->me, s->dst[d], i);
            CK(sendData(s->pipe, s->dst[d], buf, n));
            s->bytes += n;
        }
    CK(pdbp_flush(s->pipe));
    free(buf);
    return NULL;
}

/* Receive count messages from each of nsrc sources, checking each. */
static void recv_all(pdbp_pipe_t pipe, pdbp_gp_t me, pdbp_gp_t *srcs, int nsrc,
                     int count, size_t maxlen, int delay_us)
{
    int *next = calloc(nsrc, sizeof(int));
    uint8_t *buf = malloc(maxlen);
    for (long k = 0; k < (long)nsrc * count; k++) {
        if (delay_us)
            usleep(delay_us);
        pdbp_gp_t src = PDBP_ANY;
        size_t len = 0;
        int rc = recvData(pipe, &src, buf, maxlen, &len, 30000);
        if (rc)
            DIE("recvData after %ld messages: %s", k, pdbp_strerror(rc));
        int i = 0;
        while (i < nsrc && srcs[i] != src)
            i++;
        if (i == nsrc)
            DIE("message from unexpected gp %#x", src);
        check_msg(buf, len, src, me, next[i]++, maxlen);
    }
    free(buf);
    free(next);
}

/* The host's name as the runtime sees it (a node of the emulated cluster has
 * its own), so a suite can tell which ranks ran on which node. */
static const char *hostname(void)
{
    static char h[64];
    if (!h[0] && gethostname(h, sizeof(h) - 1))
        strcpy(h, "?");
    return h;
}

static char *gpname(char *b, int h, const char *sfx)
{
    sprintf(b, "gp%d%s", h, sfx);
    return b;
}

/* Streams between hosts: who sends to whom is the pattern. delay_us < 0:
 * the receivers start reading only once their pools have grown (bounded),
 * then read -delay_us apart: a reader slower than the writers on any
 * machine, however loaded. */
static void streams(const char *pat, int count, size_t maxlen, int delay_us)
{
    char nm[32];
    pdbp_gp_t me, all[64];
    int kind = host % 2 ? PDBP_SGP : PDBP_NGP;   /* SGPs use the host device */
    CK(prcsReg(gpname(nm, host, ""), kind, &me));
    for (int h = 0; h < nhosts; h++)
        CK(pdbp_lookup(gpname(nm, h, ""), &all[h], 10000));
    MPI_Barrier(MPI_COMM_WORLD);
    pdbp_pipe_t pipe;
    CK(prcsApplyPipe(me, &pipe));
    pdbp_gp_t dst[64], src[64];
    int nd = 0, ns = 0;
    for (int h = 0; h < nhosts; h++) {
        if (h == host)
            continue;
        int sends = !strcmp(pat, "NtoN") || (!strcmp(pat, "1toN") && host == 0) ||
                    (!strcmp(pat, "Nto1") && h == 0);
        int recvs = !strcmp(pat, "NtoN") || (!strcmp(pat, "1toN") && h == 0) ||
                    (!strcmp(pat, "Nto1") && host == 0);
        if (sends) dst[nd++] = all[h];
        if (recvs) src[ns++] = all[h];
    }
    struct sender s = { pipe, me, dst, nd, count, maxlen, 0 };
    pthread_t th;
    pthread_create(&th, NULL, send_main, &s);
    struct pdbp_stats st;
    for (int tries = 0; delay_us < 0 && ns > 0; tries++) {   /* at most 30 s */
        CK(pdbp_get_stats(&st));
        if (st.grows > 0)
            break;
        if (tries == 3000)
            DIE("no growth while nobody read: %u blocks", st.blocks);
        usleep(10000);
    }
    recv_all(pipe, me, src, ns, count, maxlen, delay_us < 0 ? -delay_us : delay_us);
    pthread_join(th, NULL);
    CK(pdbp_get_stats(&st));
    printf("PASS %s host %d on %s: sent %d x %d (%llu payload bytes), received %d x %d, "
           "pool %llu bytes (%u blocks, send real %u, recv real %u, grows %u, waits %llu)\n",
           pat, host, hostname(), nd, count, s.bytes, ns, count,
           (unsigned long long)st.pool_bytes,
           st.blocks, st.send_real, st.recv_real, st.grows,
           (unsigned long long)st.waits);
    CK(prcsReleasePipe(me, pipe));
    CK(prcsFree(me));
}

static void local(void)
{
    char nm[32];
    pdbp_gp_t a, b;
    CK(prcsReg(gpname(nm, host, "a"), PDBP_NGP, &a));
    CK(prcsReg(gpname(nm, host, "b"), PDBP_SGP, &b));
    pdbp_gp_t b2;
    CK(pdbp_lookup(gpname(nm, host, "b"), &b2, 5000));
    if (b2 != b)
        DIE("lookup gave %#x, registered %#x", b2, b);
    pdbp_pipe_t pa, pb;
    CK(prcsApplyPipe(a, &pa));
    CK(prcsApplyPipe(b, &pb));
    const int count = 300;
    struct sender s = { pa, a, &b, 1, count, 3000, 0 };
    pthread_t th;
    pthread_create(&th, NULL, send_main, &s);
    recv_all(pb, b, &a, 1, count, 3000, 0);
    pthread_join(th, NULL);
    struct pdbp_stats st;
    CK(pdbp_get_stats(&st));
    if (st.local_msgs != count || st.sent_msgs != 0)
        DIE("local messages %llu (want %d), through MPI %llu (want 0)",
            (unsigned long long)st.local_msgs, count, (unsigned long long)st.sent_msgs);
    printf("PASS local host %d: %d local messages, none through MPI\n", host, count);
    CK(prcsFree(a));
    CK(prcsFree(b));
}

static void growth(void)
{
    /* TNBC_PDBP_INIT_REAL=3, small blocks, a reader that starts once its
     * pools have grown: the receive sub-pools of host 0 must grow */
    streams("Nto1", 300, 6000, host == 0 ? -1000 : 0);
    struct pdbp_stats st;
    CK(pdbp_get_stats(&st));
    uint32_t initial = (2 * nhosts - 1) * 3;
    if (host == 0 && (st.grows == 0 || st.blocks <= initial))
        DIE("no growth: %u grows, %u blocks (initial %u)", st.grows, st.blocks, initial);
    printf("PASS growth host %d: %u grows, %u blocks from %u\n", host, st.grows,
           st.blocks, initial);
}

/* Two hosts, one GP each, knowing each other, with a pipe. */
static pdbp_pipe_t pair_setup(pdbp_gp_t *me, pdbp_gp_t *peer)
{
    char nm[32];
    CK(prcsReg(gpname(nm, host, ""), PDBP_NGP, me));
    CK(pdbp_lookup(gpname(nm, !host, ""), peer, 10000));
    MPI_Barrier(MPI_COMM_WORLD);
    pdbp_pipe_t pipe;
    CK(prcsApplyPipe(*me, &pipe));
    return pipe;
}

static void backpressure(void)
{
    /* TNBC_PDBP_MAX_BLOCKS just above the initial need; the reader starts
     * once the sender has waited at the limit */
    pdbp_gp_t me, peer;
    pdbp_pipe_t pipe = pair_setup(&me, &peer);
    size_t big = pdbp_max_message();
    const int count = 60;
    struct pdbp_stats st;
    int token = 0;
    if (host == 1) {
        /* The reader starts only once this sender has waited at the limit
         * (a message says so), not after a fixed delay: on a loaded
         * machine a second may not be enough to reach it. */
        struct sender s = { pipe, me, &peer, 1, count, big, 0 };
        pthread_t th;
        pthread_create(&th, NULL, send_main, &s);
        for (int tries = 0;; tries++) {          /* bounded: at most 30 s */
            CK(pdbp_get_stats(&st));
            if (st.waits > 0 && st.limit_hits > 0)
                break;
            if (tries == 3000)
                DIE("the sender never waited at the limit while nobody read");
            usleep(10000);
        }
        MPI_Send(&token, 1, MPI_INT, 0, 77, MPI_COMM_WORLD);
        pthread_join(th, NULL);
    } else {
        MPI_Recv(&token, 1, MPI_INT, 1, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        recv_all(pipe, me, &peer, 1, count, big, 0);
    }
    CK(pdbp_get_stats(&st));
    if (host == 1 && (st.waits == 0 || st.limit_hits == 0 || st.blocks > st.blocks_limit))
        DIE("sender did not wait at the limit: waits %llu, limit hits %u, blocks %u/%u",
            (unsigned long long)st.waits, st.limit_hits, st.blocks, st.blocks_limit);
    printf("PASS backpressure host %d: waits %llu, limit hits %u, blocks %u of %u\n",
           host, (unsigned long long)st.waits, st.limit_hits, st.blocks, st.blocks_limit);
    CK(prcsFree(me));
}

static void inflight(void)
{
    /* TNBC_PDBP_INIT_REAL = TNBC_PDBP_ROW_CAP (no growth: the credits stay at
     * INIT_REAL), TNBC_PDBP_INFLIGHT below that. Each host holds its sender
     * threads until its send sub-pool is full (a writer waited), then lets
     * them go: the ready blocks are posted back to back, so exactly
     * min(INFLIGHT, credits) are in flight at once. Host 0 reads slowly,
     * so host 1 then runs out of credits and waits (back-pressure). */
    pdbp_gp_t me, peer;
    pdbp_pipe_t pipe = pair_setup(&me, &peer);
    size_t big = pdbp_max_message();
    const int count = 40;
    uint32_t limit = pdbp_rt.cfg.inflight, credits = pdbp_rt.cfg.init_real;
    if (pdbp_rt.cfg.row_cap != credits || limit < 2 || limit >= credits)
        DIE("run with TNBC_PDBP_ROW_CAP = TNBC_PDBP_INIT_REAL > TNBC_PDBP_INFLIGHT >= 2");
    pdbp_test_hold_senders(1);
    struct sender s = { pipe, me, &peer, 1, count, big, 0 };
    pthread_t th;
    pthread_create(&th, NULL, send_main, &s);
    struct pdbp_stats st;
    int tries = 0;
    for (;; tries++) {          /* bounded: at most 30 s */
        CK(pdbp_get_stats(&st));
        if (st.waits > 0)
            break;
        if (tries == 3000)
            DIE("the send sub-pool never filled while the senders were held");
        usleep(10000);
    }
    pdbp_test_hold_senders(0);
    /* Host 0 starts reading only once host 1 has lacked a credit (a
     * message says so): slow reading alone does not guarantee it on a
     * loaded machine, where host 1's senders may be slower still. */
    int token = 0;
    if (host == 1) {
        for (tries = 0;; tries++) {              /* bounded: at most 30 s */
            CK(pdbp_get_stats(&st));
            if (st.no_credit > 0)
                break;
            if (tries == 3000)
                DIE("host 1 never lacked a credit while host 0 did not read");
            usleep(10000);
        }
        MPI_Send(&token, 1, MPI_INT, 0, 78, MPI_COMM_WORLD);
    } else {
        MPI_Recv(&token, 1, MPI_INT, 1, 78, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    recv_all(pipe, me, &peer, 1, count, big, host == 0 ? 5000 : 0);
    pthread_join(th, NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    CK(pdbp_get_stats(&st));
    uint32_t want = limit < credits ? limit : credits;
    if (st.max_inflight != want)
        DIE("most blocks in flight to the other host %u, want %u (INFLIGHT %u, credits %u)",
            st.max_inflight, want, limit, credits);
    if (st.max_recv_posted < 1 || st.max_recv_posted > credits)
        DIE("most block receives posted at once %u, want 1..%u", st.max_recv_posted, credits);
    if (st.rejected)
        DIE("%llu messages rejected (a sender exceeded its credits?)",
            (unsigned long long)st.rejected);
    if (host == 1 && st.no_credit == 0)
        DIE("host 1 never lacked a credit although host 0 reads slowly");
    printf("PASS inflight host %d: %d messages each way, at most %u blocks in flight "
           "(limit %u, credits %u), at most %u receives posted, %llu waits, "
           "%llu passes without credit\n", host, count, st.max_inflight, limit, credits,
           st.max_recv_posted, (unsigned long long)st.waits,
           (unsigned long long)st.no_credit);
    CK(prcsFree(me));
}

static void reuse(void)
{
    /* TNBC_PDBP_PIPES=2: 12 GPs take turns on two pipes */
    char nm[32];
    pdbp_gp_t sink, g[12], srcs[12];
    /* every GP exists before anyone looks it up or frees one */
    if (host == 0)
        CK(prcsReg("sink", PDBP_NGP, &sink));
    else
        for (int i = 0; i < 12; i++)
            CK(prcsReg(gpname(nm, 100 + i, ""), PDBP_NGP, &g[i]));
    MPI_Barrier(MPI_COMM_WORLD);
    if (host == 0) {
        pdbp_pipe_t p;
        CK(prcsApplyPipe(sink, &p));
        for (int i = 0; i < 12; i++)
            CK(pdbp_lookup(gpname(nm, 100 + i, ""), &srcs[i], 20000));
        MPI_Barrier(MPI_COMM_WORLD);
        recv_all(p, sink, srcs, 12, 20, 500, 0);
        printf("PASS reuse host 0: 240 messages from 12 GPs\n");
        CK(prcsFree(sink));
        return;
    }
    CK(pdbp_lookup("sink", &sink, 10000));
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < 12; i += 2) {
        pdbp_pipe_t p0, p1, p2;
        CK(prcsApplyPipe(g[i], &p0));
        CK(prcsApplyPipe(g[i + 1], &p1));
        if (i + 2 < 12 && prcsApplyPipe(g[i + 2], &p2) != PDBP_E_NOPIPE)
            DIE("a third pipe was handed out from a pool of two");
        struct sender s0 = { p0, g[i], &sink, 1, 20, 500, 0 };
        struct sender s1 = { p1, g[i + 1], &sink, 1, 20, 500, 0 };
        send_main(&s0);
        send_main(&s1);
        CK(prcsReleasePipe(g[i], p0));
        CK(prcsReleasePipe(g[i + 1], p1));
    }
    uint32_t uses = pdbp_rt.pipes[0].uses + pdbp_rt.pipes[1].uses;
    if (uses != 12)
        DIE("pipes bound %u times, want 12", uses);
    for (int i = 0; i < 12; i++)
        CK(prcsFree(g[i]));
    printf("PASS reuse host 1: 12 GPs shared 2 pipes (12 bindings)\n");
}

static void inject_bad(int to)
{
    uint8_t b[512];
    int n = 0;
    /* 1: random bytes on the data tag */
    for (int i = 0; i < 100; i++)
        b[i] = (uint8_t)(i * 37 + 11);
    pdbp_test_inject(to, PDBP_TAG_DATA, b, 100); n++;
    /* 2: a RemoteMsg with a future version */
    size_t len = pdbp_remote_begin(b, (uint16_t)host, 0);
    len = pdbp_remote_append(b, len, host << 16, 0, "xy", 2);
    pdbp_remote_end(b, len, 1);
    b[1] = 9;
    pdbp_test_inject(to, PDBP_TAG_DATA, b, len); n++;
    /* 3: a RemoteMsg claiming to come from another host */
    len = pdbp_remote_begin(b, (uint16_t)(host + 1), 0);
    pdbp_remote_end(b, len, 0);
    pdbp_test_inject(to, PDBP_TAG_DATA, b, len); n++;
    /* 4: length field past the end */
    len = pdbp_remote_begin(b, (uint16_t)host, 0);
    pdbp_remote_end(b, len, 0);
    b[4] = 200;
    pdbp_test_inject(to, PDBP_TAG_DATA, b, len); n++;
    /* 5: control message of the wrong length, 6: unknown type, 7: 300 bytes */
    struct pdbp_damsg da = { .reqid = 5, .op = PDBP_DA_ANSWER };
    len = pdbp_enc_da(b, &da);
    pdbp_test_inject(to, PDBP_TAG_CTRL, b, len - 2); n++;
    b[2] = 77;
    pdbp_test_inject(to, PDBP_TAG_CTRL, b, len); n++;
    memset(b, 0, 300);
    pdbp_test_inject(to, PDBP_TAG_CTRL, b, 300); n++;
    /* 8: a well-formed record for a GP that does not exist */
    len = pdbp_remote_begin(b, (uint16_t)host, 0);
    len = pdbp_remote_append(b, len, host << 16, 200, "zz", 2);
    pdbp_remote_end(b, len, 1);
    pdbp_test_inject(to, PDBP_TAG_DATA, b, len); n++;
    /* 9: unknown tag */
    pdbp_test_inject(to, 99, b, 10); n++;
    /* 10: a continuation piece with no block under way */
    pdbp_test_inject(to, PDBP_TAG_MORE, b, 100); n++;
    /* 11: a head piece whose header claims more than a block */
    len = pdbp_remote_begin(b, (uint16_t)host, 0);
    pdbp_remote_end(b, len, 0);
    b[7] = 0x7f;
    pdbp_test_inject(to, PDBP_TAG_HEAD, b, 100); n++;
    /* 12: a head piece of a 300-byte block, then a piece running past its end */
    len = pdbp_remote_begin(b, (uint16_t)host, 0);
    pdbp_remote_end(b, len, 0);
    b[4] = (300 - 8) & 0xff; b[5] = (300 - 8) >> 8; b[6] = b[7] = 0;
    pdbp_test_inject(to, PDBP_TAG_HEAD, b, 200);
    pdbp_test_inject(to, PDBP_TAG_MORE, b, 200); n++;
    printf("host %d injected %d malformed messages\n", host, n);
}

static void badmsg(void)
{
    pdbp_gp_t me, peer;
    pdbp_pipe_t pipe = pair_setup(&me, &peer);
    if (host == 1) {
        inject_bad(0);
        struct sender s = { pipe, me, &peer, 1, 50, 4000, 0 };
        send_main(&s);
    } else {
        recv_all(pipe, me, &peer, 1, 50, 4000, 0);
        struct pdbp_stats st;
        CK(pdbp_get_stats(&st));
        if (st.rejected < 12)
            DIE("only %llu of 12 malformed messages rejected", (unsigned long long)st.rejected);
        printf("PASS badmsg host 0: %llu rejected, 50 good messages after them intact\n",
               (unsigned long long)st.rejected);
    }
    CK(prcsFree(me));
}

static void failover(void)
{
    char nm[32];
    pdbp_gp_t me, x;
    CK(prcsReg(gpname(nm, host, ""), PDBP_NGP, &me));
    for (int h = 0; h < nhosts; h++)
        CK(pdbp_lookup(gpname(nm, h, ""), &x, 10000));
    MPI_Barrier(MPI_COMM_WORLD);
    if (host == 0)
        pdbp_test_fail_mnode();
    MPI_Barrier(MPI_COMM_WORLD);
    /* names registered before the failure were replicated to the backup
     * (looked up now: a host that is done frees its GP, see below) */
    pdbp_gp_t all[64];
    for (int h = 0; h < nhosts; h++)
        CK(pdbp_lookup(gpname(nm, h, ""), &all[h], 20000));
    pdbp_gp_t late;
    if (host == nhosts - 1)
        CK(prcsReg("late", PDBP_NGP, &late));
    CK(pdbp_lookup("late", &late, 20000));
    MPI_Barrier(MPI_COMM_WORLD);
    struct pdbp_stats st;
    CK(pdbp_get_stats(&st));
    if (st.mnode != 1)
        DIE("management node is host %d after the failure, want 1", st.mnode);
    /* data keeps flowing: every other host streams checked messages to the
     * GP registered after the takeover */
    const int count = 100;
    if (host == nhosts - 1) {
        pdbp_pipe_t pipe;
        CK(prcsApplyPipe(late, &pipe));
        recv_all(pipe, late, all, nhosts - 1, count, 3000, 0);
        CK(prcsFree(late));
    } else {
        pdbp_pipe_t pipe;
        CK(prcsApplyPipe(me, &pipe));
        struct sender s = { pipe, me, &late, 1, count, 3000, 0 };
        send_main(&s);
        CK(prcsReleasePipe(me, pipe));
    }
    printf("PASS failover host %d on %s: backup (host 1) serves lookups and "
           "registration; %d checked messages per host to the late GP after it\n",
           host, hostname(), count);
    CK(prcsFree(me));
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: mpi_pdbp SCENARIO\n");
        return 2;
    }
    scen = argv[1];
    setvbuf(stdout, NULL, _IOLBF, 0);
    CK(pdbp_init(&argc, &argv));
    host = pdbp_host();
    nhosts = pdbp_nhosts();
    if (!strcmp(scen, "1toN") || !strcmp(scen, "Nto1") || !strcmp(scen, "NtoN"))
        streams(scen, 200, argc > 2 ? (size_t)atol(argv[2]) : 6000, 0);
    else if (!strcmp(scen, "local")) local();
    else if (!strcmp(scen, "growth")) growth();
    else if (!strcmp(scen, "backpressure")) backpressure();
    else if (!strcmp(scen, "inflight")) inflight();
    else if (!strcmp(scen, "reuse")) reuse();
    else if (!strcmp(scen, "badmsg")) badmsg();
    else if (!strcmp(scen, "failover")) failover();
    else if (!strcmp(scen, "init")) printf("PASS init host %d\n", host);
    else DIE("unknown scenario");
    CK(pdbp_finalize());
    return 0;
}
