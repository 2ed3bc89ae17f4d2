/*
 * The design's overlap model (digest 000, eq. 1 and 3) on measured terms.
 *
 * Per traced call that received data: Tcomm, Dcomm, TCURC, RCRC and Tinit
 * (definitions in docs/analyzer.md); per site the median of each term over
 * its calls, and the prediction evaluated once on those medians, so the
 * profile's numbers satisfy the formula exactly.
 */
#include "analyzer.h"

#include <math.h>
#include <stdlib.h>

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

/* Bytes of the touched blocks but the last, over the time from the first
 * touch to the last: the rate the code after the call eats received data. */
static double call_rcrc(const struct an_sub *subs, int n, double hz)
{
    int64_t t0 = 0, t1 = 0, last_bytes = 0, bytes = 0;
    int k = 0;
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

/* Return -> first touch (or first release that needs the data). */
static double call_tcurc(const struct an_call *c, const struct an_sub *subs, int n, double hz)
{
    int found = 0;
    int64_t first = 0;
    for (int i = 0; i < n; i++) {
        const struct an_sub *u = &subs[i];
        if ((u->touched || u->need) && (!found || u->tsc < first)) {
            first = u->tsc;
            found = 1;
        }
    }
    if (!found)
        return INFINITY; /* the data was never read: all CURC */
    double ns = (double)(first - c->return_tsc) / hz * 1e9;
    return ns > 0 ? ns : 0;
}

/* Early-return cost: send copy, protect + unprotect of each guarded
 * sub-message, one fault per touched one, and the edge pages' share of the
 * communication, which must finish before returning. */
static double call_tinit(const struct an_call *c, const struct an_sub *subs, int n,
                         const struct an_rank *r, double tcomm)
{
    int nguard = 0, ntouch = 0;
    int64_t edge = 0;
    for (int i = 0; i < n; i++) {
        const struct an_sub *u = &subs[i];
        nguard += u->guard == 'g' || u->guard == 'p';
        ntouch += u->touched;
        if (u->guard == 'e')
            edge += u->bytes;
    }
    double copy = r->copy_bw > 0 ? (double)c->send_bytes / r->copy_bw * 1e9 : 0;
    double guard = 2.0 * nguard * r->mprotect_ns + ntouch * r->fault_ns;
    double edges = c->recv_bytes > 0 ? tcomm * (double)edge / (double)c->recv_bytes : 0;
    return copy + guard + edges;
}

static double call_tcomm(const struct an_call *c, const struct an_rank *r)
{
    double ns = (double)(c->return_tsc - c->entry_tsc) / r->tsc_hz * 1e9;
    return ns > 0 ? ns : 0;
}

void an_call_terms(const struct an_call *c, const struct an_sub *subs, int n,
                   const struct an_rank *r, double *tcurc_ns, double *rcrc, double *tinit_ns)
{
    *tcurc_ns = call_tcurc(c, subs, n, r->tsc_hz);
    *rcrc = call_rcrc(subs, n, r->tsc_hz);
    *tinit_ns = call_tinit(c, subs, n, r, call_tcomm(c, r));
}

int an_model_site(const struct an_trace *t, const struct an_site *s, struct tnbc_model *m)
{
    int n = 0;
    double *v = malloc(5 * (size_t)(s->ncalls ? s->ncalls : 1) * sizeof *v);
    if (!v)
        return -1;
    double *tc = v, *dc = v + s->ncalls, *cu = dc + s->ncalls, *rc = cu + s->ncalls,
           *ti = rc + s->ncalls;
    for (int i = 0; i < s->ncalls; i++) {
        const struct an_call *c = &s->calls[i];
        const struct an_rank *r = &t->ranks[c->rank];
        if (c->nrecv == 0 || c->recv_bytes <= 0)
            continue; /* e.g. a gather's non-root: nothing to overlap with data */
        tc[n] = call_tcomm(c, r);
        dc[n] = (double)c->recv_bytes;
        cu[n] = c->tcurc_ns;
        rc[n] = c->rcrc;
        ti[n] = c->tinit_ns;
        n++;
    }
    if (n > 0) {
        struct an_model_in in = {an_median(tc, n), an_median(dc, n), an_median(cu, n),
                                 an_median(rc, n), an_median(ti, n)};
        an_model_eval(&in, s->site_calls, m);
    } else {
        *m = (struct tnbc_model){.regime = '-'};
    }
    free(v);
    return n;
}
