// SPDX-License-Identifier: BSD-3-Clause
/*
 * The design's overlap model (digest 000, eq. 1 and 3) on measured terms.
 *
 * Per traced call that received data: Tcomm, Dcomm, TCURC, RCRC and Tinit
 * (definitions in docs/analyzer.md); per site the median of each term over
 * its calls, and the prediction evaluated once on those medians, so the
 * profile's numbers satisfy the formula exactly.
 *
 * The formula treats the call's data as one stream. With few ranks it is
 * not: a rank's own block is there at once (and, where the data also
 * crosses a link, its node's members' blocks), and a rank that reads a
 * remote block first waits for it whatever the others do; a chunk is read only
 * once it has landed whole. So each call also gets the overlap its own
 * rank can get (an_call_own_overlap), and
 * the predicted saving is the smaller of the formula and the critical
 * path's (per invocation, the rank that reaches its next collective last,
 * plain and tuned; the lower median over invocations): the iteration
 * waits for that rank.
 * Both count the CPU share that communication in flight takes from the
 * program it overlaps (an_trace.comm_cpu_share): the formula's overlap
 * shrinks by it, and the per-rank play-out slows the program's work by it
 * until Tcomm.
 */
#include "analyzer.h"
#include "platform.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double an_median(double *v, int n)
{
    if (n <= 0)
        return NAN;
    qsort(v, (size_t)n, sizeof *v, cmp_dbl);
    if (n % 2)
        return v[n / 2];
    double a = v[n / 2 - 1], b = v[n / 2];
    return isinf(a) || isinf(b) ? (isinf(a) ? a : b) : (a + b) / 2;
}

static char regime(const struct tnbc_model *m)
{
    if (m->tcurc_ns >= m->tcomm_ns)
        return 'a';
    int slow = m->rcrc < m->rcomm; /* the code consumes slower than data arrives */
    if (m->tcurc_ns <= AN_NO_CURC * m->tcomm_ns)
        return slow ? 'b' : 'c';
    return slow ? 'd' : 'e';
}

void an_model_eval(const struct an_model_in *in, int64_t calls, struct tnbc_model *m)
{
    m->tcomm_ns = in->tcomm_ns;
    m->dcomm = in->dcomm;
    m->rcomm = in->tcomm_ns > 0 ? in->dcomm / (in->tcomm_ns * 1e-9) : INFINITY;
    m->tcurc_ns = in->tcurc_ns;
    m->rcrc = in->rcrc;
    m->tinit_ns = in->tinit_ns;
    /* eq. 3: min(Tcomm - Tinit, TCURC + Tcomm * Rcomm / RCRC) */
    double crc = isinf(m->rcrc) || isinf(m->rcomm) ? 0 : m->tcomm_ns * m->rcomm / m->rcrc;
    double cap = m->tcomm_ns - m->tinit_ns;
    double ov = isinf(m->tcurc_ns) ? cap : fmin(cap, m->tcurc_ns + crc);
    m->toverlap_ns = ov > 0 ? ov : 0;
    m->saving_call_ns = m->toverlap_ns;
    m->saving_run_ns = m->toverlap_ns * (double)calls;
    m->regime = regime(m);
}

/* Whether the trace could see the code touch any of the call's receive
 * data: some sub-message had guarded pages. A call with none (its memory
 * still held by an earlier call's guard, or no whole page of its own)
 * says nothing about when or how fast the code reads: its TCURC and RCRC
 * are NAN, left out of the site's medians, not "never read". */
static int observed(const struct an_sub *subs, int n)
{
    for (int i = 0; i < n; i++)
        if (subs[i].guard == 'g' || subs[i].guard == 'p')
            return 1;
    return 0;
}

/* Bytes of the touched blocks but the last, over the time from the first
 * touch to the last: the rate the code after the call eats received data. */
static double call_rcrc(const struct an_sub *subs, int n, double hz)
{
    int64_t t0 = 0, t1 = 0, last_bytes = 0, bytes = 0;
    int k = 0;
    if (!observed(subs, n))
        return NAN;
    for (int i = 0; i < n; i++) {
        const struct an_sub *u = &subs[i];
        if (!u->touched)
            continue;
        bytes += u->bytes;
        if (k == 0 || u->tsc < t0)
            t0 = u->tsc;
        if (k == 0 || u->tsc >= t1) {
            t1 = u->tsc;
            last_bytes = u->bytes;
        }
        k++;
    }
    if (k < 2 || t1 <= t0)
        return INFINITY; /* one touch, or all at once: no measurable rate */
    return (double)(bytes - last_bytes) / ((double)(t1 - t0) / hz);
}

/* The first touch or release that needs the data, in *tsc; 0: none. */
static int first_need_tsc(const struct an_sub *subs, int n, int64_t *tsc)
{
    int found = 0;
    for (int i = 0; i < n; i++) {
        const struct an_sub *u = &subs[i];
        if ((u->touched || u->need) && (!found || u->tsc < *tsc)) {
            *tsc = u->tsc;
            found = 1;
        }
    }
    return found;
}

/* Return -> first touch (or first release that needs the data). */
static double call_tcurc(const struct an_call *c, const struct an_sub *subs, int n, double hz)
{
    int64_t first = 0;
    if (!observed(subs, n))
        return NAN;
    if (!first_need_tsc(subs, n, &first))
        return INFINITY; /* the data was never read: all CURC */
    double ns = (double)(first - c->return_tsc) / hz * 1e9;
    return ns > 0 ? ns : 0;
}

/* An edge part leaves its sender only after that sender's early return
 * has copied its send buffer (the copy term also stands for landing its
 * own block) and guarded its receive pages: its progress thread sends
 * edges first, once handed the call. The members run the same call, so
 * this rank's costs of those steps stand for the sender's. Without this
 * term the ordinary benchmark (1 MiB blocks not page-aligned, 2 x 1 nodes
 * at 1 Gbit/s) was predicted 274 us saved per call and ran 0.5 ms slower
 * than plain: it waited 317-324 us per call for its edges, against the
 * 33 us of their bytes' share of Tcomm. */
static double edge_senders_steps(double copy_ns, double close_ns)
{
    return copy_ns + close_ns;
}

/* Pages the guard closes and opens again for a sub-message. */
static double sub_pages(const struct an_sub *u, const struct an_rank *r)
{
    int64_t ps = r->page_size > 0 ? r->page_size : 4096;
    return (double)((u->bytes + ps - 1) / ps);
}

/* Early-return cost: send copy, protect + unprotect of each guarded
 * sub-message (a call's cost, and its pages' share of a many-page
 * mprotect), one fault per touched one and the first read of each of its
 * pages once opened again (schema 4's retouch_ns: a hypervisor shadowing
 * the page tables refills them then; the own block of a per-source
 * operation is landed before the guard and pays neither), and the parts in unguarded edge
 * pages ('e' wholly, 'p' partly), which must arrive before returning:
 * their share of the communication (of 'e' ones; a 'p' one's edge part is
 * under a page), after their senders' own steps before sending
 * (edge_senders_steps). With --measured, the part in the call (copy, arm,
 * edges) is the early return that run timed, all its steps included
 * (an_call.measured_in_call_ns). */
static double call_tinit(const struct an_call *c, const struct an_sub *subs, int n,
                         const struct an_rank *r, double tcomm)
{
    int nguard = 0, ntouch = 0, edged = 0;
    int64_t edge = 0;
    double pages_guarded = 0, pages_read = 0;
    for (int i = 0; i < n; i++) {
        const struct an_sub *u = &subs[i];
        int guarded = u->guard == 'g' || u->guard == 'p';
        nguard += guarded;
        ntouch += u->touched;
        if (guarded && !(c->chunks == 0 && u->idx == c->comm_rank)) {
            pages_guarded += sub_pages(u, r);
            pages_read += u->touched ? sub_pages(u, r) : 0;
        }
        edged |= u->guard == 'e' || u->guard == 'p';   /* bytes in an edge page */
        if (u->guard == 'e')
            edge += u->bytes;
    }
    /* After the return: the guard opened piece by piece, the program's
     * faults, and its first reads of pages opened again. */
    double after = nguard * r->mprotect_ns + ntouch * r->fault_ns +
                   pages_guarded * r->mprotect_page_ns + pages_read * r->retouch_ns;
    if (isfinite(c->measured_in_call_ns))   /* --measured: the call's own steps, timed */
        return c->measured_in_call_ns + after;
    /* In the call: the send copy, the guard armed, the edge pages' data. */
    double copy = r->copy_bw > 0 ? (double)c->send_bytes / r->copy_bw * 1e9 : 0;
    double arm = nguard * r->mprotect_ns + pages_guarded * r->mprotect_page_ns;
    double edges = c->recv_bytes > 0 ? tcomm * (double)edge / (double)c->recv_bytes : 0;
    if (edged)
        edges += edge_senders_steps(copy, nguard * r->mprotect_ns);
    return copy + arm + edges + after;
}

static double own_tcomm(const struct an_call *c, const struct an_rank *r)
{
    double ns = (double)(c->return_tsc - c->entry_tsc) / r->tsc_hz * 1e9;
    return ns > 0 ? ns : 0;
}

static double call_tcomm(const struct an_call *c, const struct an_rank *r)
{
    if (c->proj_tcomm_ns >= 0) /* --platform: the projected one (platform.c) */
        return c->proj_tcomm_ns;
    return c->last_tcomm_ns > 0 ? c->last_tcomm_ns : own_tcomm(c, r);
}

/* Collectives in which every member waits for every other's data, in
 * blocks of one size: which member came last decides how long the rest
 * took, not the data each receives. */
static int symmetric_op(const char *op)
{
    static const char *const ops[] = {"alltoall", "allgather", "allreduce",
                                      "reduce_scatter_block", NULL};
    for (const char *const *o = ops; *o; o++)
        if (strcmp(op, *o) == 0)
            return 1;
    return 0;
}

/*
 * Tcomm of a symmetric collective is the least time any member spent in
 * that invocation: the member that came last found the others' data on
 * its way and waited only for what was left once every member was in.
 * The others' longer time in the call was their wait for that member's
 * work, which an early return does not remove: they wait for its data
 * later instead. The program's cycle is that member's work plus its time
 * in the call, so that is what an early return can save. (2 nodes x 2
 * ranks at 200 Mbit/s, two ranks sharing each node's CPU: micro-a's
 * ranks spent a median 174 ms in each Alltoall, the last-come 145 ms, and
 * tuned saved 147 ms per call.) Rooted and v-collectives keep each
 * rank's own time: a leaf of a broadcast tree waits longer than the
 * root's children by the tree's shape, not by who came last.
 * Invocations are matched by number, over every communicator the site
 * was called on (the trace records none): where one site serves several
 * communicators of one size, the least over all of them.
 */
struct inv_call {
    int invocation, index;   /* the call's, and where it is in s->calls */
};

static int by_invocation(const void *a, const void *b)
{
    const struct inv_call *x = a, *y = b;
    return x->invocation < y->invocation ? -1 : x->invocation > y->invocation;
}

/* Into v (room for s->ncalls): the site's calls that `keep` admits, as
 * (invocation, index), sorted by invocation; returns their count. Grouped
 * by sorting, not by an array indexed by invocation: the invocation
 * counts every call of the site (up to 2^31), the traced ones are a few. */
static int calls_by_invocation(const struct an_site *s, int (*keep)(const struct an_call *),
                               struct inv_call *v)
{
    int n = 0;
    for (int i = 0; i < s->ncalls; i++)
        if (keep(&s->calls[i]))
            v[n++] = (struct inv_call){ s->calls[i].invocation, i };
    qsort(v, (size_t)n, sizeof *v, by_invocation);
    return n;
}

static int received_data(const struct an_call *c)
{
    return c->invocation >= 0 && c->recv_bytes > 0;
}

int an_site_last_arrival(const struct an_trace *t, struct an_site *s)
{
    if (!symmetric_op(s->op) || s->ncalls == 0)
        return 0;
    struct inv_call *v = malloc((size_t)s->ncalls * sizeof *v);
    if (!v)
        return -1;
    int n = calls_by_invocation(s, received_data, v);
    for (int g = 0; g < n;) {
        int end = g;
        double least = INFINITY;
        for (; end < n && v[end].invocation == v[g].invocation; end++) {
            const struct an_call *c = &s->calls[v[end].index];
            least = fmin(least, own_tcomm(c, &t->ranks[c->rank]));
        }
        for (int i = g; least > 0 && !isinf(least) && i < end; i++) {
            struct an_call *c = &s->calls[v[i].index];
            c->last_tcomm_ns = least;
            assert(c->last_tcomm_ns <= own_tcomm(c, &t->ranks[c->rank]));
        }
        g = end;
    }
    free(v);
    return 0;
}

double an_call_share(const struct an_trace *t, const struct an_site *s, const struct an_call *c)
{
    if (s->crowded[0])
        return 1;
    return an_platform_share(t->platform, t->comm_cpu_share, c->chunks == 0 && c->root < 0);
}

double an_site_share(const struct an_trace *t, const struct an_site *s)
{
    return s->ncalls > 0 ? an_call_share(t, s, &s->calls[0]) : t->comm_cpu_share;
}

/* Time to read `bytes` at rate `rcrc` (0 when unbounded). */
static double read_ns(int64_t bytes, double rcrc)
{
    return isinf(rcrc) || rcrc <= 0 ? 0 : (double)bytes / rcrc * 1e9;
}

/* When `work` ns of the program's work started at `start` (from return)
 * ends: until `tcomm` the communication in flight takes the CPU share
 * `share`, so the work runs at 1 - share of its speed. Work that waits for
 * data anyway loses nothing to it; work on the critical path does. */
static double work_end(double start, double work, double tcomm, double share)
{
    if (start >= tcomm || share <= 0)
        return start + work;
    double before = (tcomm - start) * (1 - share); /* work done by tcomm */
    return work <= before ? start + work / (1 - share) : tcomm + (work - before);
}

/* Per-source, this rank's own block and a near one (digest.c) are there at
 * once; every chunk and every other block comes over the wire. */
static int there_at_once(const struct an_call *c, const struct an_sub *u)
{
    return c->chunks == 0 && (u->idx == c->comm_rank || u->near);
}

/* How long the code reads each touched sub-message, in read order: the
 * span between its first touch and the next one's, scaled so that the
 * blocks but the last take what their bytes take at the call's RCRC (the
 * same total as call_rcrc's, and --platform's CPU scaling applies); the
 * last at RCRC. A code that reads its own block with three times the
 * arithmetic of the others (u27: 1 MiB blocks, 2 x 1 nodes at 1 Gbit/s)
 * was played out as reading every block at the mean rate: the remote
 * blocks looked read before they could arrive, and the saving was
 * predicted 2.3 ms per call where 3.3-4.3 ms were measured. */
static double read_times(const struct an_call *c, const struct an_sub **t, int k, double hz,
                         double *rd)
{
    double span = 0;
    int64_t but_last = 0;
    assert(k >= 1);
    for (int i = 0; i + 1 < k; i++) {
        double gap = (double)(t[i + 1]->tsc - t[i]->tsc) / hz * 1e9;
        rd[i] = gap > 0 ? gap : 0;  /* readers in two threads: no negative spans */
        span += rd[i];
        but_last += t[i]->bytes;
    }
    double total = read_ns(but_last, c->rcrc);
    for (int i = 0; i + 1 < k; i++)
        rd[i] = span > 0 ? total * rd[i] / span : read_ns(t[i]->bytes, c->rcrc);
    rd[k - 1] = read_ns(t[k - 1]->bytes, c->rcrc);
    return span > 0 ? total / span : 1;
}

/* The share of each block's reading `rd` within which the code needs all
 * of it: from its first touch to the first touch of its tail page
 * (GUARD_TAIL), on the trace's clock scaled as read_times scaled it; 1
 * where the tail was not seen (a block read once, front to back, needs its
 * last byte at the end of its reading). The ordinary benchmark reading
 * each 1 MiB block in 64 passes needs it whole within the first: played
 * out as read once, 2.9 ms per call were predicted saved at 2 x 1 and 1
 * Gbit/s where the tuned run lost 0.5 ms (the rank reading the remote
 * block first waited for all of it, then did its 64 passes). */
static void need_shares(const struct an_sub **t, int k, double hz, double scale, const double *rd,
                        double *nf)
{
    for (int i = 0; i < k; i++) {
        nf[i] = 1;
        if (t[i]->tail_tsc <= 0 || t[i]->tail_tsc < t[i]->tsc || rd[i] <= 0)
            continue;
        double tail = (double)(t[i]->tail_tsc - t[i]->tsc) / hz * 1e9 * scale;
        nf[i] = fmin(1, tail / rd[i]);
    }
}

void an_tails_free(struct an_tails *m)
{
    free(m->share);
    *m = (struct an_tails){ 0 };
}

/* A call that watched its tails (invocation below m->calls) leaves its
 * shares, by read position, the smallest per position over the rank's
 * calls so far; a later one takes them in place of need_shares' 1 (struct
 * an_tails). Taken as read once, the blocks of bench/ordinary --passes 64
 * (each read 64 times over) were played out at 2 x 1 and 1 Gbit/s as
 * saving 2.9 ms per call, where the tuned run lost 0.5 ms. Out of memory:
 * nothing remembered, and the later calls are read once. */
static void carry_tails(struct an_tails *m, const struct an_call *c, int k, double *nf)
{
    if (m->rank != c->rank) {
        m->rank = c->rank;
        m->n = 0;
    }
    if (c->invocation >= m->calls) {
        for (int i = 0; i < k && i < m->n; i++)
            nf[i] = m->share[i];
        return;
    }
    if (k > m->cap) {
        double *grown = realloc(m->share, (size_t)k * sizeof *grown);
        if (!grown)
            return;
        m->share = grown;
        m->cap = k;
    }
    for (int i = 0; i < k; i++)
        m->share[i] = i < m->n ? fmin(m->share[i], nf[i]) : nf[i];
    if (k > m->n)
        m->n = k;
}

/* A reader that starts a remote block at `now`, before its last piece
 * arrives at `arrived`, and reads a piece faster than one arrives,
 * catches up with the stream at every piece still to come: each a fault
 * and a wait in the handler. Tinit counts one fault per touched block;
 * these are the others. u10 (an allgather of 320 KB blocks, 2 x 1 at 1
 * Gbit/s, a rank reading the remote block first) took 5.6 faults per
 * call against the 2 Tinit counted, 20 us each on the shadow-paging VM. */
static double stream_faults(double now, double arrived, double piece_rd, double piece_ns,
                            int64_t pieces)
{
    if (now >= arrived || piece_ns <= 0 || piece_rd >= piece_ns)
        return 0;
    double waits = ceil((arrived - now) / piece_ns);
    waits = fmin(waits, (double)pieces);
    return waits > 1 ? waits - 1 : 0;
}

/* Walks the touched sub-messages in read order, as they arrive in that
 * order at `rate`, each read in the time `rd` gives it. Per-source: the
 * local block is ready at once, a remote one is read as it streams in (at
 * worst one piece behind its last byte's arrival, the piece read at the
 * block's own pace, a fault at each piece the reader catches up with:
 * stream_faults); a near one (digest.c: from this rank's node, while
 * others' data crosses a link) is there at once, as the local block.
 * Chunked: a chunk is read once it has landed whole. Returns when the
 * reading ends, from return. */
static double own_reads_end(const struct an_call *c, const struct an_sub **t, const double *rd,
                            const double *nf, int k, double rate, double tcomm, double share,
                            double fault_ns)
{
    double now = work_end(0, isinf(c->tcurc_ns) ? 0 : c->tcurc_ns, tcomm, share), arrived = 0;
    for (int i = 0; i < k; i++) {
        if (there_at_once(c, t[i])) {
            now = work_end(now, rd[i], tcomm, share);
            continue;
        }
        arrived += (double)t[i]->bytes / rate * 1e9;
        if (c->chunks > 0) {
            now = work_end(fmax(now, arrived), rd[i], tcomm, share);
            continue;
        }
        /* The block is needed whole within need_rd of its reading; the
         * rest of it needs no more of its data (need_shares). */
        double need_rd = rd[i] * nf[i], rest = rd[i] - need_rd;
        int64_t piece = t[i]->bytes < PIECES_DEFAULT_BYTES ? t[i]->bytes : PIECES_DEFAULT_BYTES;
        double piece_rd = t[i]->bytes > 0 ? need_rd * (double)piece / (double)t[i]->bytes : 0;
        /* While the communication is in flight the reading runs at 1 - share
         * of its pace (work_end): that decides whether it catches up. */
        double paced_rd = work_end(now, piece_rd, tcomm, share) - now;
        double faults = piece > 0 ? stream_faults(now, arrived, paced_rd, (double)piece / rate * 1e9,
                                                  (t[i]->bytes + piece - 1) / piece)
                                  : 0;
        now = fmax(work_end(now, rd[i], tcomm, share),
                   work_end(arrived, piece_rd + rest, tcomm, share)) +
              faults * fault_ns;
    }
    return now;
}

/* The earliest time (from return) at which the code hands a remote block
 * it never read to the kernel, MPI or the allocator (an_sub.need without
 * a touch); INFINITY if it never does. Replay waits there for the block,
 * and a block nobody reads has the lowest priority: it comes last. Counted
 * from the call's first need at TCURC, so that it is on TCURC's clock
 * (less other collectives' time, digest.c; --platform's CPU scaling). */
static double first_unread_need(const struct an_call *c, const struct an_sub *subs, int n,
                                double hz)
{
    int64_t first = 0, unread = 0;
    int found = 0;
    for (int i = 0; i < n; i++) {
        const struct an_sub *u = &subs[i];
        if (!u->need || u->touched || there_at_once(c, u))
            continue;
        if (!found || u->tsc < unread)
            unread = u->tsc;
        found = 1;
    }
    if (!found || !first_need_tsc(subs, n, &first))
        return INFINITY;
    return c->tcurc_ns + (double)(unread - first) / hz * 1e9;
}

/* The play-out with a wait for unread data: the code's work up to `need`
 * runs under the communication, what follows it only after the last
 * block arrived (Tcomm). A code that writes its received buffer to a
 * file right after a call (u14, 2 x 1 at 1 Gbit/s: 118 us of other work
 * first) was played out as never waiting, since it touched no block: 118
 * us predicted saved, and its tuned run was slower than plain. */
static double own_with_need(double tcomm, double plain_reads, double end, double need,
                            double tinit)
{
    double span = fmax(plain_reads, need);     /* the plain run's, from Tcomm */
    double tuned = fmax(end + (span - plain_reads), tcomm + (span - need));
    return tcomm + span - tuned - tinit;
}

double an_call_own_overlap(const struct an_call *c, const struct an_sub *subs, int n,
                           const struct an_rank *r, double share, double *reads_ns,
                           struct an_tails *tails)
{
    double tcomm = call_tcomm(c, r);
    *reads_ns = isfinite(c->tcurc_ns) ? c->tcurc_ns : 0;
    /* All the program's work runs under the communication: it hides
     * Tcomm less the CPU the communication takes, less Tinit. */
    double cap = tcomm * (1 - share) - c->tinit_ns;
    int64_t remote = 0;
    if (n <= 0 || tcomm <= 0 || isnan(c->tcurc_ns))
        return NAN;                        /* nothing observed: no play-out */
    if (isinf(c->tcurc_ns))
        return cap > 0 ? cap : 0;          /* never read: as the formula */
    for (int i = 0; i < n; i++)
        remote += there_at_once(c, &subs[i]) ? 0 : subs[i].bytes;
    if (remote == 0)
        return cap > 0 ? cap : 0;          /* nothing to wait for */
    const struct an_sub **t = malloc((size_t)n * sizeof *t);
    double *rd = malloc((size_t)n * sizeof *rd), *nf = malloc((size_t)n * sizeof *nf);
    if (!t || !rd || !nf) {
        free(t);
        free(rd);
        free(nf);
        return NAN;
    }
    int k = 0;
    double plain_reads = c->tcurc_ns;
    for (int i = 0; i < n; i++)
        if (subs[i].touched)
            t[k++] = &subs[i];
    qsort(t, (size_t)k, sizeof *t, an_sub_by_ord);
    if (k > 0)
        need_shares(t, k, r->tsc_hz, read_times(c, t, k, r->tsc_hz, rd), rd, nf);
    if (tails)
        carry_tails(tails, c, k, nf);
    for (int i = 0; i < k; i++)
        plain_reads += rd[i];
    *reads_ns = plain_reads;
    double end = own_reads_end(c, t, rd, nf, k, (double)remote / (tcomm * 1e-9), tcomm, share,
                               r->fault_ns > 0 ? r->fault_ns : 0);
    free(t);
    free(rd);
    free(nf);
    double need = first_unread_need(c, subs, n, r->tsc_hz);
    double own = isinf(need) ? tcomm + plain_reads - end - c->tinit_ns
                             : own_with_need(tcomm, plain_reads, end, need, c->tinit_ns);
    own = fmin(own, cap);
    return own > 0 ? own : 0;
}

void an_call_terms(const struct an_call *c, const struct an_sub *subs, int n,
                   const struct an_rank *r, double *tcurc_ns, double *rcrc, double *tinit_ns)
{
    *tcurc_ns = call_tcurc(c, subs, n, r->tsc_hz);
    *rcrc = call_rcrc(subs, n, r->tsc_hz);
    *tinit_ns = call_tinit(c, subs, n, r, call_tcomm(c, r));
}

/* The lower median: of an even count, the lower of the two middle
 * values, not their mean. A rank's overlap per call is often all or
 * nothing (it hid 2-7 ms, or its first read waited for everything), and
 * tnbc auto learns from 2 calls: a rank that hid nothing in one and 2.5 ms
 * in the other is not counted as hiding 1.25 ms. With those means a user
 * program (u29: allgatherv on 2 x 2 at 1 Gbit/s, docs/auto.md) went on in
 * 2 of 7 auto runs and ran 28-37% slower than plain. */
static double low_median(double *v, int n)
{
    if (n <= 0)
        return NAN;
    qsort(v, (size_t)n, sizeof *v, cmp_dbl);
    return v[(n - 1) / 2];
}

/* tnbc auto's rule (an_trace.smallest_rank): the smallest over ranks of
 * each rank's lower median own overlap; NAN when no call has one. Per
 * invocation it is never more than the critical path's: from 2 learning
 * calls, a rank's all-or-nothing overlap counts wherever that rank is
 * (u29, low_median). s->calls are sorted by rank; `scratch` holds ncalls. */
static double smallest_rank_overlap(const struct an_site *s, double *scratch)
{
    double smallest = NAN;
    for (int i = 0; i < s->ncalls;) {
        int rank = s->calls[i].rank, n = 0;
        for (; i < s->ncalls && s->calls[i].rank == rank; i++)
            if (!isnan(s->calls[i].own_ns))
                scratch[n++] = s->calls[i].own_ns;
        double med = low_median(scratch, n);
        if (n > 0 && (isnan(smallest) || med < smallest))
            smallest = med;
    }
    return smallest;
}

/* What the iteration saves, per invocation: in the plain run each of its
 * calls' ranks goes on to its next collective at Tcomm + reach; returned
 * early, its own overlap earlier; the iteration waits for the last of them
 * both ways. The lower median over the invocations; NAN when no call has
 * an own overlap. A rank that hides little but reaches its next call well
 * before the others (it reads less, or the scheduler gave it its node's
 * CPU in the traced call) does not set the saving: on the emulated 2 x 2
 * cluster at 1 Gbit/s, ordinary --passes 64's ranks on the node whose
 * first block crosses the link hid 2-6 ms per call, their node-mates
 * 17 ms; the smallest rank's lower median predicted 2.6 ms, the tuned runs
 * saved 4.8 ms. `v` and `scratch` hold ncalls. */
static int played_out(const struct an_call *c)
{
    assert(isnan(c->own_ns) == isnan(c->reach_ns));   /* digest.c: reach */
    return !isnan(c->own_ns);
}

static double critical_path_overlap(const struct an_trace *t, const struct an_site *s,
                                    struct inv_call *v, double *scratch)
{
    int n = calls_by_invocation(s, played_out, v), ninv = 0;
    for (int g = 0; g < n;) {
        double plain = -INFINITY, tuned = -INFINITY;
        int end = g;
        for (; end < n && v[end].invocation == v[g].invocation; end++) {
            const struct an_call *c = &s->calls[v[end].index];
            double at = call_tcomm(c, &t->ranks[c->rank]) + c->reach_ns;
            plain = fmax(plain, at);
            tuned = fmax(tuned, at - c->own_ns);
        }
        assert(tuned <= plain);   /* own_ns >= 0 */
        scratch[ninv++] = plain - tuned;
        g = end;
    }
    return low_median(scratch, ninv);
}

int an_model_site(const struct an_trace *t, const struct an_site *s, struct tnbc_model *m)
{
    int n = 0, seen = 0;
    double *v = malloc(5 * (size_t)(s->ncalls ? s->ncalls : 1) * sizeof *v);
    struct inv_call *inv = malloc((size_t)(s->ncalls ? s->ncalls : 1) * sizeof *inv);
    if (!v || !inv) {
        free(v);
        free(inv);
        return -1;
    }
    double *tc = v, *dc = v + s->ncalls, *cu = dc + s->ncalls, *rc = cu + s->ncalls,
           *ti = rc + s->ncalls;
    for (int i = 0; i < s->ncalls; i++) {
        const struct an_call *c = &s->calls[i];
        const struct an_rank *r = &t->ranks[c->rank];
        if (c->nrecv == 0 || c->recv_bytes <= 0)
            continue; /* e.g. a gather's non-root: nothing to overlap with data */
        tc[n] = call_tcomm(c, r);
        dc[n] = (double)c->recv_bytes;
        ti[n] = c->tinit_ns;
        n++;
        if (!isnan(c->tcurc_ns)) {    /* the code's pace: observed calls only */
            cu[seen] = c->tcurc_ns;
            rc[seen] = c->rcrc;
            seen++;
        }
    }
    if (n > 0) {
        /* No call observed: as before the trace could see touches, the
         * data counts as never read. */
        struct an_model_in in = {an_median(tc, n), an_median(dc, n),
                                 seen ? an_median(cu, seen) : INFINITY,
                                 seen ? an_median(rc, seen) : INFINITY, an_median(ti, n)};
        an_model_eval(&in, s->site_calls, m);
        /* While it overlaps the program, the communication's own CPU work
         * (the kernel's TCP, the progress) runs on the program's CPU and
         * stretches the overlapped work by that share: the formula's
         * overlap shrinks by it; the slowest rank's was played out with
         * it, where work that waits for data anyway loses nothing. */
        m->saving_call_ns *= 1.0 - an_site_share(t, s);
        double ranks = t->smallest_rank ? smallest_rank_overlap(s, v)
                                        : critical_path_overlap(t, s, inv, v);
        if (!isnan(ranks) && ranks < m->saving_call_ns)
            m->saving_call_ns = ranks;
        m->saving_run_ns = m->saving_call_ns * (double)s->site_calls;
    } else {
        *m = (struct tnbc_model){.regime = '-'};
    }
    free(v);
    free(inv);
    return n;
}
