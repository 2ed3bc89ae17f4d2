// SPDX-License-Identifier: BSD-3-Clause
/*
 * pdbp_bench.c - PDBP throughput and pool memory (design 003, figures 8-11).
 *
 *   pdbp_bench tput 1toN|Nto1|NtoN BYTES_PER_STREAM REPS
 *       per-host throughput over unit packet sizes 64 B .. 1 MB
 *   pdbp_bench a2a BYTES_PER_STREAM REPS
 *       MPI_Alltoall moving the same bytes, same sizes
 *   pdbp_bench pool STREAMS
 *       pool memory on host 0 after STREAMS GP-to-GP streams (host 1 -> 0);
 *       TNBC_PDBP_THRESHOLD sets the threshold
 *
 * Per-host throughput = bytes one host sends (1toN) or receives (Nto1, NtoN,
 * a2a) divided by the time from a barrier before the first packet to a
 * barrier after the last one arrives. Every PDBP packet received is checked
 * inside that time: its length, its source, its sequence number in its
 * stream (first 8 bytes) and every other byte against the source's pattern;
 * a wrong one aborts the run. Each point is the mean of REPS runs
 * without the largest and the smallest (the design's method). Rank 0 prints
 * CSV: pattern,packet_bytes,seconds,host_MBps
 * and, for tput, one line per host with the data path's timing counters
 * over that point's runs (pdbp_stats):
 *   stats,pattern,packet_bytes,host,seconds,blocks_sent,mean_block_bytes,
 *   send_mpi_s,no_credit,blocks_recv,recv_mpi_s,direct_msgs,sent_msgs,waits
 * MPI_Alltoall of small packets is slow on TCP (one round per call), so a2a
 * makes at most PDBP_BENCH_A2A_CALLS calls per run (default 2000): the
 * throughput is the bytes it moved over its time, like every other point.
 */
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../pdbp.h"

static const size_t sizes[] = { 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576 };
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

static int host, nhosts;
static long a2a_calls = 2000;

#define CK(call) do { int rc_ = (call); if (rc_) { \
    fprintf(stderr, "pdbp_bench host %d: %s -> %s\n", host, #call, pdbp_strerror(rc_)); \
    MPI_Abort(MPI_COMM_WORLD, 1); } } while (0)

struct job {
    pdbp_pipe_t pipe;
    pdbp_gp_t *dst;
    int ndst;
    long count;
    size_t size;
    unsigned char *buf;      /* this host's pattern; bytes 0-7 get the sequence */
};

/* Packet contents: byte i of a packet from host h is pattern(h, i), except
 * bytes 0-7, the packet's sequence number in its stream (little endian). */
static unsigned char pattern(int h, size_t i)
{
    return (unsigned char)(i * 131u + (unsigned)h * 29u + (i >> 8));
}

static void put_seq(unsigned char *b, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_seq(const unsigned char *b)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)b[i] << (8 * i);
    return v;
}

static void *sender(void *arg)
{
    struct job *j = arg;
    for (long i = 0; i < j->count; i++) {
        put_seq(j->buf, (uint64_t)i);
        for (int d = 0; d < j->ndst; d++)
            CK(sendData(j->pipe, j->dst[d], j->buf, j->size));
    }
    CK(pdbp_flush(j->pipe));
    return NULL;
}

static double trimmed_mean(double *v, int n)
{
    if (n < 3) {
        double s = 0;
        for (int i = 0; i < n; i++) s += v[i];
        return s / n;
    }
    int lo = 0, hi = 0;
    for (int i = 1; i < n; i++) {
        if (v[i] < v[lo]) lo = i;
        if (v[i] > v[hi]) hi = i;
    }
    if (lo == hi) hi = (lo + 1) % n;
    double s = 0;
    for (int i = 0; i < n; i++)
        if (i != lo && i != hi) s += v[i];
    return s / (n - 2);
}

/* One timed run: count packets of size s per stream. */
typedef void (*run_fn)(void *ctx, size_t s, long count);

/* Timing counters of one point: every host's delta, printed by rank 0. */
static void point_stats(const char *name, size_t s, double sec,
                        const struct pdbp_stats *a, const struct pdbp_stats *b)
{
    double v[11] = {
        sec, (double)(b->blocks_sent - a->blocks_sent),
        b->blocks_sent > a->blocks_sent
            ? (double)(b->block_bytes_sent - a->block_bytes_sent) /
              (double)(b->blocks_sent - a->blocks_sent) : 0,
        b->send_mpi_s - a->send_mpi_s, (double)(b->no_credit - a->no_credit),
        (double)(b->blocks_recv - a->blocks_recv), b->recv_mpi_s - a->recv_mpi_s,
        (double)(b->direct_msgs - a->direct_msgs), (double)(b->sent_msgs - a->sent_msgs),
        (double)(b->waits - a->waits), 0 };
    double *all = host == 0 ? malloc(sizeof(v) * nhosts) : NULL;
    MPI_Gather(v, 11, MPI_DOUBLE, all, 11, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (host)
        return;
    for (int h = 0; h < nhosts; h++) {
        double *x = all + 11 * h;
        printf("stats,%s,%zu,%d,%.4f,%.0f,%.0f,%.4f,%.0f,%.0f,%.4f,%.0f,%.0f,%.0f\n", name, s, h,
               x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7], x[8], x[9]);
    }
    free(all);
}

/* For every packet size: reps timed runs between barriers; rank 0 prints the
 * trimmed mean as CSV. host_streams: streams whose bytes count for a host. */
static void sweep(const char *name, long bytes, int reps, int host_streams,
                  run_fn run, void *ctx, long max_count, int stats)
{
    /* warm-up, not timed: connections, first blocks, page faults */
    MPI_Barrier(MPI_COMM_WORLD);
    run(ctx, sizes[0], 100);
    MPI_Barrier(MPI_COMM_WORLD);
    for (size_t k = 0; k < NSIZES; k++) {
        size_t s = sizes[k];
        long count = (bytes + (long)s - 1) / (long)s;
        if (max_count && count > max_count)
            count = max_count;
        struct pdbp_stats st0, st1;
        if (stats)
            CK(pdbp_get_stats(&st0));
        double t[32];
        for (int r = 0; r < reps && r < 32; r++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            run(ctx, s, count);
            MPI_Barrier(MPI_COMM_WORLD);
            t[r] = MPI_Wtime() - t0;
        }
        double sec = trimmed_mean(t, reps < 32 ? reps : 32);
        double host_bytes = (double)count * s * host_streams;
        if (host == 0)
            printf("%s,%zu,%.6f,%.3f\n", name, s, sec, host_bytes / sec / 1e6);
        if (stats) {
            CK(pdbp_get_stats(&st1));
            point_stats(name, s, sec, &st0, &st1);
        }
    }
}

struct tput_ctx {
    pdbp_pipe_t pipe;
    pdbp_gp_t *dst, *all;    /* destinations; every host's GP (all[h]) */
    int nd, ns;
    unsigned char *buf, *rbuf;
    unsigned char **pat;     /* [nhosts] each host's packet pattern */
    uint64_t *next;          /* [nhosts] sequence expected next from host h */
    size_t maxs;
};

/* A received packet is what host src sent as packet seq of its stream to
 * this host: length, sequence, every byte. Aborts otherwise. */
static void check_packet(struct tput_ctx *c, pdbp_gp_t src, size_t len, size_t s)
{
    int h = 0;
    while (h < nhosts && c->all[h] != src)
        h++;
    const char *why = h == nhosts || h == host ? "unknown source" :
                      len != s ? "wrong length" :
                      get_seq(c->rbuf) != c->next[h] ? "out of sequence (lost, doubled or reordered)" :
                      memcmp(c->rbuf + 8, c->pat[h] + 8, s - 8) ? "corrupted bytes" : NULL;
    if (why) {
        fprintf(stderr, "pdbp_bench host %d: packet of %zu bytes from GP %d: %s\n",
                host, len, (int)src, why);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    c->next[h]++;
}

static void tput_once(void *arg, size_t s, long count)
{
    struct tput_ctx *c = arg;
    struct job j = { c->pipe, c->dst, c->nd, count, s, c->buf };
    pthread_t th;
    memset(c->next, 0, sizeof(*c->next) * (size_t)nhosts);
    if (c->nd)
        pthread_create(&th, NULL, sender, &j);
    for (long i = 0; i < count * c->ns; i++) {
        size_t len;
        pdbp_gp_t src = PDBP_ANY;
        CK(recvData(c->pipe, &src, c->rbuf, c->maxs, &len, 60000));
        check_packet(c, src, len, s);
    }
    if (c->nd)
        pthread_join(th, NULL);
    for (int h = 0; h < nhosts; h++)      /* every stream to this host complete */
        if (h != host && c->next[h] && c->next[h] != (uint64_t)count) {
            fprintf(stderr, "pdbp_bench host %d: %llu of %ld packets from host %d\n", host,
                    (unsigned long long)c->next[h], count, h);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
}

struct a2a_ctx { char *sb, *rb; };

static void a2a_once(void *arg, size_t s, long count)
{
    struct a2a_ctx *c = arg;
    for (long i = 0; i < count; i++)
        MPI_Alltoall(c->sb, (int)s, MPI_BYTE, c->rb, (int)s, MPI_BYTE, MPI_COMM_WORLD);
}

static void tput(const char *pat, long bytes, int reps)
{
    char nm[32];
    pdbp_gp_t me, all[256], dst[256];
    sprintf(nm, "b%d", host);
    CK(prcsReg(nm, PDBP_SGP, &me));
    for (int h = 0; h < nhosts; h++) {
        sprintf(nm, "b%d", h);
        CK(pdbp_lookup(nm, &all[h], 10000));
    }
    pdbp_pipe_t pipe;
    CK(prcsApplyPipe(me, &pipe));
    int nd = 0, ns = 0;
    for (int h = 0; h < nhosts; h++) {
        if (h == host) continue;
        int all2all = !strcmp(pat, "NtoN");
        if (all2all || (!strcmp(pat, "1toN") && host == 0) || (!strcmp(pat, "Nto1") && h == 0))
            dst[nd++] = all[h];
        if (all2all || (!strcmp(pat, "1toN") && h == 0) || (!strcmp(pat, "Nto1") && host == 0))
            ns++;
    }
    int nstreams = nhosts - 1;   /* streams a host sends (1toN) or receives */
    size_t maxs = sizes[NSIZES - 1];
    if (maxs > pdbp_max_message()) {
        if (host == 0)
            fprintf(stderr, "pdbp_bench: raise TNBC_PDBP_BLOCK_SIZE to fit 1 MiB packets\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    unsigned char *buf = malloc(maxs), *rbuf = malloc(maxs);
    unsigned char **pt = malloc(sizeof(*pt) * (size_t)nhosts);
    uint64_t *next = malloc(sizeof(*next) * (size_t)nhosts);
    if (!buf || !rbuf || !pt || !next)
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (int h = 0; h < nhosts; h++) {
        if (!(pt[h] = malloc(maxs)))
            MPI_Abort(MPI_COMM_WORLD, 1);
        for (size_t i = 0; i < maxs; i++)
            pt[h][i] = pattern(h, i);
    }
    memcpy(buf, pt[host], maxs);
    struct tput_ctx c = { pipe, dst, all, nd, ns, buf, rbuf, pt, next, maxs };
    sweep(pat, bytes, reps, nstreams, tput_once, &c, 0, 1);
    for (int h = 0; h < nhosts; h++)
        free(pt[h]);
    free(pt);
    free(next);
    free(buf);
    free(rbuf);
    CK(prcsFree(me));
}

static void a2a(long bytes, int reps)
{
    size_t maxs = sizes[NSIZES - 1];
    char *sb = malloc(maxs * nhosts), *rb = malloc(maxs * nhosts);
    memset(sb, 0x5a, maxs * nhosts);
    struct a2a_ctx c = { sb, rb };
    sweep("alltoall", bytes, reps, nhosts - 1, a2a_once, &c, a2a_calls, 0);
    free(sb);
    free(rb);
}

struct pstream {
    pdbp_gp_t me, peer;
    long count;
};

static pthread_mutex_t consumer = PTHREAD_MUTEX_INITIALIZER;

static void *pool_stream(void *arg)
{
    struct pstream *p = arg;
    pdbp_pipe_t pipe;
    unsigned char buf[4096];
    memset(buf, 1, sizeof(buf));
    CK(prcsApplyPipe(p->me, &pipe));
    if (host == 1) {
        /* each stream is paced (~1 packet / 200 us), so the offered load
         * grows with the number of streams */
        struct timespec pace = { 0, 200000 };
        for (long i = 0; i < p->count; i++) {
            CK(sendData(pipe, p->peer, buf, sizeof(buf)));
            nanosleep(&pace, NULL);
        }
        CK(pdbp_flush(pipe));
    } else {
        for (long i = 0; i < p->count; i++) {
            size_t len;
            CK(recvData(pipe, NULL, buf, sizeof(buf), &len, 60000));
            /* one consumer (a lock) works ~20 us on each packet: when the
             * streams together outpace it, the receive sub-pool holds the
             * difference */
            struct timespec ts = { 0, 20000 };
            pthread_mutex_lock(&consumer);
            nanosleep(&ts, NULL);
            pthread_mutex_unlock(&consumer);
        }
    }
    CK(prcsReleasePipe(p->me, pipe));
    return NULL;
}

/* STREAMS GP pairs between host 1 (senders) and host 0 (receivers). */
static void pool(int streams)
{
    struct pstream ps[64];
    pthread_t th[64];
    char nm[32];
    if (streams > 64) streams = 64;
    for (int i = 0; i < streams; i++) {
        sprintf(nm, "p%d_%d", host, i);
        CK(prcsReg(nm, PDBP_NGP, &ps[i].me));
    }
    for (int i = 0; i < streams; i++) {
        sprintf(nm, "p%d_%d", !host, i);
        CK(pdbp_lookup(nm, &ps[i].peer, 10000));
        ps[i].count = 500;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (host < 2)
        for (int i = 0; i < streams; i++)
            pthread_create(&th[i], NULL, pool_stream, &ps[i]);
    if (host < 2)
        for (int i = 0; i < streams; i++)
            pthread_join(th[i], NULL);
    struct pdbp_stats st;
    CK(pdbp_get_stats(&st));
    unsigned long long b[2] = { 0, 0 }, mine = st.pool_bytes;
    MPI_Gather(&mine, 1, MPI_UNSIGNED_LONG_LONG, host == 0 ? b : NULL, 1,
               MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
    if (host == 0) {
        const char *t = getenv("TNBC_PDBP_THRESHOLD");
        printf("pool,%d,%s,%llu,%llu,%u\n", streams, t ? t : "0.5", b[0], b[1], st.grows);
    }
    for (int i = 0; i < streams; i++)
        CK(prcsFree(ps[i].me));
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: pdbp_bench tput PATTERN BYTES REPS | a2a BYTES REPS | pool STREAMS\n");
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    CK(pdbp_init(&argc, &argv));
    host = pdbp_host();
    nhosts = pdbp_nhosts();
    const char *ac = getenv("PDBP_BENCH_A2A_CALLS");
    if (ac && atol(ac) > 0)
        a2a_calls = atol(ac);
    if (!strcmp(argv[1], "tput") && argc >= 5)
        tput(argv[2], atol(argv[3]), atoi(argv[4]));
    else if (!strcmp(argv[1], "a2a") && argc >= 4)
        a2a(atol(argv[2]), atoi(argv[3]));
    else if (!strcmp(argv[1], "pool"))
        pool(atoi(argv[2]));
    else if (host == 0)
        fprintf(stderr, "pdbp_bench: bad arguments\n");
    CK(pdbp_finalize());
    return 0;
}
