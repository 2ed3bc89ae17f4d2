// SPDX-License-Identifier: BSD-3-Clause
/*
 * tnbc profile reader: strict, line by line (grammar in FORMAT.md).
 *
 * Every malformed, truncated or inconsistent input gives one message
 * "NAME:LINE: what" and NULL; nothing is guessed. Allocations are bounded
 * by the input's size, so a small hostile file cannot ask for gigabytes.
 */
#include "profile.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_WORLD (1 << 20)
#define MAX_CHUNKS 4096

struct reader {
    const char *buf, *name;
    size_t len, pos;
    int line;          /* line number of the current line */
    char *copy;        /* writable copy of the current line */
    size_t copycap;
    char **tok;        /* tokens of the current line (into copy) */
    int ntok, tokcap;
    const char *rest1; /* current line after its first token (for reasons) */
    char *err;
    size_t errlen;
    int failed;
    int *seen;         /* open-addressing set of site indices (site, op) */
    size_t seencap;    /* a power of two; 0 before the first site */
    size_t nseen;
    char *program;     /* the first `# program NAME ID` comment's NAME ID */
};

static int fail(struct reader *r, const char *fmt, ...)
{
    if (r->failed)
        return -1;
    char what[TNBC_PROFILE_ERRLEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (r->err && r->errlen) {
        snprintf(r->err, r->errlen, "%s:%d: %s", r->name, r->line, what);
        /* Quoted input may hold any byte: keep the message one printable line. */
        for (char *c = r->err; *c; c++)
            if ((unsigned char)*c < ' ' || *c == 0x7f)
                *c = '?';
    }
    r->failed = 1;
    return -1;
}

static int push_tok(struct reader *r, char *t)
{
    if (r->ntok == r->tokcap) {
        int cap = r->tokcap ? 2 * r->tokcap : 16;
        char **n = realloc(r->tok, (size_t)cap * sizeof *n);
        if (!n)
            return fail(r, "out of memory");
        r->tok = n;
        r->tokcap = cap;
    }
    r->tok[r->ntok++] = t;
    return 0;
}

/* Split the copied line into tokens on spaces and tabs. */
static int tokenize(struct reader *r, size_t n)
{
    char *s = r->copy, *end = r->copy + n;
    r->ntok = 0;
    r->rest1 = NULL;
    while (s < end) {
        while (s < end && (*s == ' ' || *s == '\t'))
            s++;
        if (s == end)
            break;
        if (r->ntok == 1)
            r->rest1 = r->buf + (r->pos - n - 1) + (size_t)(s - r->copy);
        if (push_tok(r, s) < 0)
            return -1;
        while (s < end && *s != ' ' && *s != '\t')
            s++;
        *s++ = '\0';
    }
    return 0;
}

/* The comment `# program NAME ID` (FORMAT.md) is kept, the first one only:
 * the runtime compares it with the executable it runs in. */
static int keep_program(struct reader *r)
{
    if (r->program || r->ntok != 4 || strcmp(r->tok[0], "#") != 0 ||
        strcmp(r->tok[1], "program") != 0)
        return 0;
    size_t n = strlen(r->tok[2]) + 1 + strlen(r->tok[3]) + 1;
    r->program = malloc(n);
    if (!r->program)
        return fail(r, "out of memory");
    snprintf(r->program, n, "%s %s", r->tok[2], r->tok[3]);
    return 0;
}

/* Next non-blank, non-comment line: 1 with tokens, 0 at end, -1 error. */
static int next_line(struct reader *r)
{
    while (r->pos < r->len) {
        const char *start = r->buf + r->pos;
        const char *nl = memchr(start, '\n', r->len - r->pos);
        size_t n = nl ? (size_t)(nl - start) : r->len - r->pos;
        r->line++;
        if (!nl)
            return fail(r, "last line has no newline (truncated file?)");
        if (memchr(start, '\0', n))
            return fail(r, "NUL byte in line (not a text profile?)");
        if (n && start[n - 1] == '\r')
            return fail(r, "carriage return in line (DOS line ends are not accepted)");
        if (n + 1 > r->copycap) {
            char *c = realloc(r->copy, n + 1);
            if (!c)
                return fail(r, "out of memory");
            r->copy = c;
            r->copycap = n + 1;
        }
        memcpy(r->copy, start, n);
        r->copy[n] = '\0';
        r->pos += n + 1;
        if (tokenize(r, n) < 0)
            return -1;
        if (r->ntok > 0 && r->tok[0][0] == '#' && keep_program(r) < 0)
            return -1;
        if (r->ntok == 0 || r->tok[0][0] == '#')
            continue;
        return 1;
    }
    r->line++;
    return 0;
}

static int get_i64(struct reader *r, const char *t, int64_t lo, int64_t hi, int64_t *out,
                   const char *what)
{
    char *end;
    errno = 0;
    long long v = strtoll(t, &end, 10);
    if (errno || end == t || *end || (t[0] == '+'))
        return fail(r, "%s: '%s' is not an integer", what, t);
    if (v < lo || v > hi)
        return fail(r, "%s: %lld is outside %lld..%lld", what, v, (long long)lo,
                    (long long)hi);
    *out = v;
    return 0;
}

static int get_int(struct reader *r, const char *t, int lo, int hi, int *out, const char *what)
{
    int64_t v;
    if (get_i64(r, t, lo, hi, &v, what) < 0)
        return -1;
    *out = (int)v;
    return 0;
}

/* A finite number in [lo, hi], or "inf" when inf_ok. */
static int get_dbl(struct reader *r, const char *t, double lo, double hi, int inf_ok,
                   double *out, const char *what)
{
    if (strcmp(t, "inf") == 0) {
        if (!inf_ok)
            return fail(r, "%s: inf is not allowed here", what);
        *out = INFINITY;
        return 0;
    }
    char *end;
    errno = 0;
    double v = strtod(t, &end);
    if (errno == ERANGE || end == t || *end || !isfinite(v) || strchr(t, 'x') ||
        strchr(t, 'X'))
        return fail(r, "%s: '%s' is not a number", what, t);
    if (v < lo || v > hi)
        return fail(r, "%s: %s is outside %g..%g", what, t, lo, hi);
    *out = v;
    return 0;
}

static int want(struct reader *r, const char *key, int ntok)
{
    if (strcmp(r->tok[0], key) != 0)
        return fail(r, "expected '%s', found '%s'", key, r->tok[0]);
    if (ntok >= 0 && r->ntok != ntok)
        return fail(r, "'%s' takes %d value(s), found %d", key, ntok - 1, r->ntok - 1);
    return 0;
}

/* Required next line that starts with key and has ntok tokens (-1: any). */
static int expect(struct reader *r, const char *key, int ntok, const char *ctx)
{
    int rc = next_line(r);
    if (rc < 0)
        return -1;
    if (rc == 0)
        return fail(r, "unexpected end of file (truncated?): expected '%s'%s", key, ctx);
    return want(r, key, ntok);
}

/* Undo %XX escapes of ids and host names (FORMAT.md); in place. */
static int unescape(struct reader *r, char *s, const char *what)
{
    char *o = s;
    for (char *p = s; *p; p++) {
        if (*p != '%') {
            *o++ = *p;
            continue;
        }
        unsigned v;
        if (!p[1] || !p[2] || sscanf(p + 1, "%2x", &v) != 1 || v == 0 ||
            !strchr("0123456789abcdefABCDEF", p[1]) || !strchr("0123456789abcdefABCDEF", p[2]))
            return fail(r, "%s: bad %%-escape at byte %d (want %%XX, two hex digits, not %%00)",
                        what, (int)(p - s) + 1);
        *o++ = (char)v;
        p += 2;
    }
    *o = '\0';
    return 0;
}

static char *dup_str(struct reader *r, const char *s)
{
    char *d = strdup(s);
    if (!d)
        fail(r, "out of memory");
    return d;
}

static void *alloc(struct reader *r, size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p)
        fail(r, "out of memory");
    return p;
}

/* Tokens from `from` on: a permutation of 0..n-1 into out. */
static int get_perm(struct reader *r, int from, int n, int *out, const char *what)
{
    if (r->ntok - from != n)
        return fail(r, "%s: %d block indices expected, found %d", what, n, r->ntok - from);
    char *seen = alloc(r, (size_t)n, 1);
    if (!seen)
        return -1;
    for (int i = 0; i < n; i++) {
        if (get_int(r, r->tok[from + i], 0, n - 1, &out[i], what) < 0)
            break;
        if (seen[out[i]]++) {
            fail(r, "%s: block %d appears twice (not a permutation)", what, out[i]);
            break;
        }
    }
    free(seen);
    return r->failed ? -1 : 0;
}

static int parse_header(struct reader *r, struct tnbc_profile *p)
{
    int rc = next_line(r);
    if (rc <= 0)
        return rc < 0 ? -1 : fail(r, "empty file: expected 'tnbc-profile %d'",
                                  TNBC_PROFILE_VERSION);
    if (strcmp(r->tok[0], "tnbc-profile") != 0 || r->ntok != 2)
        return fail(r, "not a tnbc profile: first line must be 'tnbc-profile %d'",
                    TNBC_PROFILE_VERSION);
    if (get_int(r, r->tok[1], 0, 1 << 30, &p->version, "version") < 0)
        return -1;
    if (p->version != TNBC_PROFILE_VERSION)
        return fail(r, "unknown profile version %d (this reader knows version %d)",
                    p->version, TNBC_PROFILE_VERSION);
    if (expect(r, "world_size", 2, "") < 0 ||
        get_int(r, r->tok[1], 1, MAX_WORLD, &p->world_size, "world_size") < 0)
        return -1;
    if (expect(r, "source", 2, "") < 0 || unescape(r, r->tok[1], "source") < 0)
        return -1;
    p->source = dup_str(r, r->tok[1]);
    return p->source ? 0 : -1;
}

/* The fixed-order identity lines after `site ID OP`. */
static int parse_identity(struct reader *r, const struct tnbc_profile *p,
                          struct tnbc_profile_site *s)
{
    const char *ctx = " (site body)";
    int64_t v;
    if (expect(r, "comm_size", 2, ctx) < 0 ||
        get_int(r, r->tok[1], 1, p->world_size, &s->comm_size, "comm_size") < 0)
        return -1;
    if (expect(r, "block_bytes", 2, ctx) < 0 ||
        get_i64(r, r->tok[1], -1, INT64_C(1) << 53, &s->block_bytes, "block_bytes") < 0)
        return -1;
    int chunked = tnbc_profile_op_is_chunked(s->op);
    if (expect(r, "chunks", 2, ctx) < 0 ||
        get_i64(r, r->tok[1], 0, MAX_CHUNKS, &v, "chunks") < 0)
        return -1;
    if (chunked && v < 1)
        return fail(r, "chunks: %s is a single-block operation and needs 1..%d chunks",
                    s->op, MAX_CHUNKS);
    if (!chunked && v != 0)
        return fail(r, "chunks: %s has one block per source; chunks must be 0", s->op);
    s->chunks = (int)v;
    s->nsub = chunked ? s->chunks : s->comm_size;
    s->nsend = s->nsub;
    if (!chunked && (double)s->comm_size * s->comm_size * 2 > (double)(r->len - r->pos) * 4)
        return fail(r, "comm_size %d: the file is too short to hold its %d priority "
                       "lines (truncated?)",
                    s->comm_size, 2 * s->comm_size);
    if (expect(r, "calls", 4, ctx) < 0 ||
        get_i64(r, r->tok[1], 0, INT64_MAX, &s->calls, "calls") < 0)
        return -1;
    if (strcmp(r->tok[2], "traced") != 0)
        return fail(r, "calls: expected 'calls N traced T'");
    return get_i64(r, r->tok[3], 0, s->calls, &s->traced, "traced");
}

static int parse_decision(struct reader *r, struct tnbc_profile_site *s)
{
    if (expect(r, "decision", -1, " (site body)") < 0)
        return -1;
    if (r->ntok < 3)
        return fail(r, "decision: expected 'decision on|off REASON'");
    if (strcmp(r->tok[1], "on") == 0)
        s->on = 1;
    else if (strcmp(r->tok[1], "off") == 0)
        s->on = 0;
    else
        return fail(r, "decision: '%s' is neither 'on' nor 'off'", r->tok[1]);
    /* The reason is the raw rest of the line after on/off. */
    const char *line_end = memchr(r->rest1, '\n', r->len - (size_t)(r->rest1 - r->buf));
    const char *t = r->rest1 + 2 + (s->on ? 0 : 1);
    while (*t == ' ' || *t == '\t')
        t++;
    s->reason = strndup(t, (size_t)(line_end - t));
    return s->reason ? 0 : fail(r, "out of memory");
}

static int parse_order(struct reader *r, struct tnbc_profile_site *s)
{
    const char *ctx = " (site body)";
    if (expect(r, "order", -1, ctx) < 0)
        return -1;
    if (r->ntok < 2)
        return fail(r, "order: expected 'order consensus|per-rank|default I...'");
    if (strcmp(r->tok[1], "consensus") == 0)
        s->order_kind = TNBC_ORDER_CONSENSUS;
    else if (strcmp(r->tok[1], "per-rank") == 0)
        s->order_kind = TNBC_ORDER_PER_RANK;
    else if (strcmp(r->tok[1], "default") == 0)
        s->order_kind = TNBC_ORDER_DEFAULT;
    else
        return fail(r, "order: unknown kind '%s' (consensus, per-rank or default)", r->tok[1]);
    s->order = alloc(r, (size_t)s->nsub, sizeof *s->order);
    if (!s->order || get_perm(r, 2, s->nsub, s->order, "order") < 0)
        return -1;
    if (expect(r, "agreement", 7, ctx) < 0)
        return -1;
    if (strcmp(r->tok[1], "identical") || strcmp(r->tok[3], "tau") ||
        strcmp(r->tok[5], "samples"))
        return fail(r, "agreement: expected 'agreement identical F tau T samples N'");
    if (get_dbl(r, r->tok[2], 0, 1, 0, &s->agree_identical, "identical") < 0 ||
        get_dbl(r, r->tok[4], -1, 1, 0, &s->agree_tau, "tau") < 0)
        return -1;
    return get_i64(r, r->tok[6], 0, INT64_MAX, &s->samples, "samples");
}

static int parse_model(struct reader *r, struct tnbc_model *m)
{
    static const char *const keys[] = {"tcomm_ns", "dcomm",    "rcomm",          "tcurc_ns",
                                       "rcrc",     "tinit_ns", "toverlap_ns",    "saving_call_ns",
                                       "saving_run_ns"};
    double *vals[] = {&m->tcomm_ns, &m->dcomm,       &m->rcomm,          &m->tcurc_ns,
                      &m->rcrc,     &m->tinit_ns,    &m->toverlap_ns,    &m->saving_call_ns,
                      &m->saving_run_ns};
    const int inf_ok[] = {0, 0, 1, 1, 1, 0, 0, 0, 0};
    const int nk = (int)(sizeof keys / sizeof keys[0]);
    if (expect(r, "model", 2 * nk + 3, " (site body)") < 0)
        return -1;
    for (int i = 0; i < nk; i++) {
        if (strcmp(r->tok[1 + 2 * i], keys[i]) != 0)
            return fail(r, "model: expected '%s' as key %d, found '%s'", keys[i], i + 1,
                        r->tok[1 + 2 * i]);
        if (get_dbl(r, r->tok[2 + 2 * i], 0, HUGE_VAL, inf_ok[i], vals[i], keys[i]) < 0)
            return -1;
    }
    const char *rg = r->tok[2 * nk + 2];
    if (strcmp(r->tok[2 * nk + 1], "regime") != 0)
        return fail(r, "model: expected 'regime' last");
    if (strlen(rg) != 1 || !strchr("abcde-", rg[0]))
        return fail(r, "model: regime '%s' is not one of a b c d e -", rg);
    m->regime = rg[0];
    return 0;
}

/* `KEY R|* P...`: priorities in -1..nsub-1 into the rank's row. */
static int parse_prio_line(struct reader *r, struct tnbc_profile_site *s, int *rows, int n,
                           char *have)
{
    const char *key = r->tok[0];
    int chunked = s->chunks > 0, rank = 0;
    if (r->ntok != n + 2)
        return fail(r, "%s: %d priorities expected, found %d", key, n, r->ntok - 2);
    if (chunked) {
        if (strcmp(r->tok[1], "*") != 0)
            return fail(r, "%s: a single-block operation has one row for all ranks: "
                           "'%s * P...'",
                        key, key);
    } else if (get_int(r, r->tok[1], 0, s->comm_size - 1, &rank, key) < 0) {
        return -1;
    }
    if (have[rank]++)
        return fail(r, "%s: rank %d given twice", key, rank);
    int *row = rows + (size_t)rank * n;
    for (int i = 0; i < n; i++)
        if (get_int(r, r->tok[2 + i], -1, s->nsub - 1, &row[i], key) < 0)
            return -1;
    return 0;
}

static int parse_rank_order(struct reader *r, struct tnbc_profile_site *s)
{
    int rank;
    if (s->chunks > 0)
        return fail(r, "rank_order: single-block operations have one order for all ranks");
    if (r->ntok < 2 || get_int(r, r->tok[1], 0, s->comm_size - 1, &rank, "rank_order") < 0)
        return fail(r, "rank_order: expected 'rank_order R I...'");
    if (!s->rank_order && !(s->rank_order = alloc(r, (size_t)s->comm_size, sizeof(int *))))
        return -1;
    if (s->rank_order[rank])
        return fail(r, "rank_order: rank %d given twice", rank);
    if (!(s->rank_order[rank] = alloc(r, (size_t)s->nsub, sizeof(int))))
        return -1;
    return get_perm(r, 2, s->nsub, s->rank_order[rank], "rank_order");
}

static int parse_vhash(struct reader *r, struct tnbc_profile_site *s)
{
    int rank;
    if (r->ntok != 3)
        return fail(r, "vhash: expected 'vhash R 0xHEX'");
    if (s->block_bytes != -1)
        return fail(r, "vhash: only for sites with varying blocks (block_bytes -1)");
    if (get_int(r, r->tok[1], 0, s->comm_size - 1, &rank, "vhash") < 0)
        return -1;
    const char *h = r->tok[2];
    char *end;
    if (strncmp(h, "0x", 2) != 0 || strlen(h) != 18 || !strchr("0123456789abcdef", h[2]))
        return fail(r, "vhash: '%s' is not 0x and 16 hex digits", h);
    errno = 0;
    unsigned long long v = strtoull(h + 2, &end, 16);
    if (errno || *end)
        return fail(r, "vhash: '%s' is not 0x and 16 hex digits", h);
    for (int i = 0; i < s->nvhash; i++)
        if (s->vhash_rank[i] == rank)
            return fail(r, "vhash: rank %d given twice", rank);
    if (s->nvhash >= s->comm_size)
        return fail(r, "vhash: more lines than ranks");
    if (!s->vhash && (!(s->vhash = alloc(r, (size_t)s->comm_size, sizeof *s->vhash)) ||
                      !(s->vhash_rank = alloc(r, (size_t)s->comm_size, sizeof(int)))))
        return -1;
    s->vhash_rank[s->nvhash] = rank;
    s->vhash[s->nvhash++] = v;
    return 0;
}

static int parse_node(struct reader *r, struct tnbc_profile_site *s, char *placed)
{
    if (s->chunks > 0)
        return fail(r, "node: node schedules are for per-source operations only");
    if (r->ntok < 3)
        return fail(r, "node: expected 'node HOST R...'");
    if (unescape(r, r->tok[1], "node") < 0)
        return -1;
    if (s->nnodes >= s->comm_size)
        return fail(r, "node: more nodes than ranks");
    if (!s->nodes && !(s->nodes = alloc(r, (size_t)s->comm_size, sizeof *s->nodes)))
        return -1;
    struct tnbc_profile_node *n = &s->nodes[s->nnodes];
    for (int i = 0; i < s->nnodes; i++)
        if (strcmp(s->nodes[i].host, r->tok[1]) == 0)
            return fail(r, "node: host '%s' given twice", r->tok[1]);
    n->nranks = r->ntok - 2;
    if (!(n->ranks = alloc(r, (size_t)n->nranks, sizeof(int))))
        return -1;
    s->nnodes++; /* owned by s from here on, freed with it */
    if (!(n->host = dup_str(r, r->tok[1])))
        return -1;
    for (int i = 0; i < n->nranks; i++) {
        if (get_int(r, r->tok[2 + i], 0, s->comm_size - 1, &n->ranks[i], "node") < 0)
            return -1;
        if (placed[n->ranks[i]]++)
            return fail(r, "node: rank %d is on two nodes", n->ranks[i]);
    }
    return 0;
}

/* `measured early E checked B cycle_early_ns X cycle_blocking_ns X
 * saving_call_ns X z X` (a self-tuning run's, optional, at most once). */
static int parse_measured(struct reader *r, struct tnbc_profile_site *s)
{
    static const char *const keys[] = {"early", "checked", "cycle_early_ns", "cycle_blocking_ns",
                                       "saving_call_ns", "z"};
    struct tnbc_measured *m = &s->measured;
    if (s->has_measured)
        return fail(r, "measured: a second 'measured' line in site '%s'", s->site);
    if (r->ntok != 13)
        return fail(r, "measured: expected 'measured early E checked B cycle_early_ns X "
                       "cycle_blocking_ns X saving_call_ns X z X'");
    for (int i = 0; i < 6; i++)
        if (strcmp(r->tok[1 + 2 * i], keys[i]) != 0)
            return fail(r, "measured: expected '%s' as key %d, found '%s'", keys[i], i + 1,
                        r->tok[1 + 2 * i]);
    if (get_i64(r, r->tok[2], 0, INT64_MAX, &m->early, "early") < 0 ||
        get_i64(r, r->tok[4], 0, INT64_MAX, &m->checked, "checked") < 0 ||
        get_dbl(r, r->tok[6], 0, HUGE_VAL, 0, &m->cycle_early_ns, "cycle_early_ns") < 0 ||
        get_dbl(r, r->tok[8], 0, HUGE_VAL, 0, &m->cycle_blocking_ns, "cycle_blocking_ns") < 0 ||
        get_dbl(r, r->tok[10], -HUGE_VAL, HUGE_VAL, 0, &m->saving_call_ns, "saving_call_ns") < 0 ||
        get_dbl(r, r->tok[12], -HUGE_VAL, HUGE_VAL, 0, &m->z, "z") < 0)
        return -1;
    s->has_measured = 1;
    return 0;
}

/* `block_range MIN MAX` (optional, at most once, only with block_bytes -1):
 * the traced sizes of a site whose one-size-per-call block varied. */
static int parse_block_range(struct reader *r, struct tnbc_profile_site *s)
{
    if (s->has_block_range)
        return fail(r, "block_range: a second 'block_range' line in site '%s'", s->site);
    if (r->ntok != 3)
        return fail(r, "block_range: expected 'block_range MIN MAX'");
    if (s->block_bytes != -1)
        return fail(r, "block_range: only for sites with varying blocks (block_bytes -1)");
    if (get_i64(r, r->tok[1], 0, INT64_C(1) << 53, &s->block_min, "block_range") < 0 ||
        get_i64(r, r->tok[2], s->block_min, INT64_C(1) << 53, &s->block_max, "block_range") < 0)
        return -1;
    s->has_block_range = 1;
    return 0;
}

/* `trial` (optional, at most once): marks a site that is off. On a site
 * that is on it means nothing and is dropped: a profile whose `decision
 * off` a user edited to `on` (the usual way to force a site) stays valid. */
static int parse_trial(struct reader *r, struct tnbc_profile_site *s)
{
    if (s->trial_line)
        return fail(r, "trial: a second 'trial' line in site '%s'", s->site);
    if (r->ntok != 1)
        return fail(r, "trial: takes no values");
    s->trial_line = 1;
    s->trial = !s->on;
    return 0;
}

/* Lines after `model` up to `end`, in any order. */
static int parse_tail(struct reader *r, struct tnbc_profile_site *s)
{
    int rows = s->chunks > 0 ? 1 : s->comm_size;
    char *have_recv = alloc(r, (size_t)rows, 1), *have_send = alloc(r, (size_t)rows, 1);
    char *placed = alloc(r, (size_t)s->comm_size, 1);
    s->recv_prio = alloc(r, (size_t)rows * s->nsub, sizeof(int));
    s->send_prio = alloc(r, (size_t)rows * s->nsend, sizeof(int));
    while (!r->failed) {
        int rc = next_line(r);
        if (rc <= 0) {
            if (rc == 0)
                fail(r, "unexpected end of file (truncated?): site '%s' has no 'end'",
                     s->site);
            break;
        }
        const char *k = r->tok[0];
        if (strcmp(k, "end") == 0) {
            if (r->ntok != 1)
                fail(r, "end: takes no values");
            break;
        } else if (strcmp(k, "recv_prio") == 0) {
            parse_prio_line(r, s, s->recv_prio, s->nsub, have_recv);
        } else if (strcmp(k, "send_prio") == 0) {
            parse_prio_line(r, s, s->send_prio, s->nsend, have_send);
        } else if (strcmp(k, "rank_order") == 0) {
            parse_rank_order(r, s);
        } else if (strcmp(k, "vhash") == 0) {
            parse_vhash(r, s);
        } else if (strcmp(k, "node") == 0) {
            parse_node(r, s, placed);
        } else if (strcmp(k, "measured") == 0) {
            parse_measured(r, s);
        } else if (strcmp(k, "block_range") == 0) {
            parse_block_range(r, s);
        } else if (strcmp(k, "trial") == 0) {
            parse_trial(r, s);
        } else {
            fail(r, "unknown keyword '%s' in site '%s' (expected rank_order, vhash, "
                    "recv_prio, send_prio, node, measured, block_range, trial or end)",
                 k, s->site);
        }
    }
    for (int i = 0; i < rows && !r->failed; i++)
        if (!have_recv[i] || !have_send[i])
            fail(r, "site '%s' %s: no %s line for %s %d", s->site, s->op,
                 have_recv[i] ? "send_prio" : "recv_prio", rows > 1 ? "rank" : "row", i);
    free(have_recv);
    free(have_send);
    free(placed);
    return r->failed ? -1 : 0;
}

/* ---- duplicate sites: a hash set, so that reading stays linear ---------- */

static int seen_grow(struct reader *r, const struct tnbc_profile *p)
{
    size_t cap = r->seencap ? 2 * r->seencap : 64;
    int *n = malloc(cap * sizeof *n);
    if (!n)
        return fail(r, "out of memory");
    for (size_t i = 0; i < cap; i++)
        n[i] = -1;
    for (size_t i = 0; i < r->seencap; i++) {
        int s = r->seen[i];
        if (s < 0)
            continue;
        size_t at = tnbc_profile_site_hash(p->sites[s].site, p->sites[s].op) & (cap - 1);
        while (n[at] >= 0)
            at = (at + 1) & (cap - 1);
        n[at] = s;
    }
    free(r->seen);
    r->seen = n;
    r->seencap = cap;
    return 0;
}

/* Records the site being parsed (the last of p->sites) under (site, op);
 * fails when that pair appeared before. */
static int seen_insert(struct reader *r, struct tnbc_profile *p, const char *site, const char *op)
{
    if (2 * (r->nseen + 1) > r->seencap && seen_grow(r, p) < 0)
        return -1;
    size_t at = tnbc_profile_site_hash(site, op) & (r->seencap - 1);
    for (int s; (s = r->seen[at]) >= 0; at = (at + 1) & (r->seencap - 1))
        if (s != p->nsites - 1 && strcmp(p->sites[s].site, site) == 0 &&
            strcmp(p->sites[s].op, op) == 0)
            return fail(r, "site '%s' %s appears twice", site, op);
    r->seen[at] = p->nsites - 1;
    r->nseen++;
    return 0;
}

static int parse_site(struct reader *r, struct tnbc_profile *p, struct tnbc_profile_site *s)
{
    if (want(r, "site", 3) < 0)
        return -1;
    s->line = r->line;
    if (unescape(r, r->tok[1], "site") < 0)
        return -1;
    if (!tnbc_profile_op_known(r->tok[2]))
        return fail(r, "site: unknown operation '%s'", r->tok[2]);
    if (!(s->site = dup_str(r, r->tok[1])) || !(s->op = dup_str(r, r->tok[2])))
        return -1;
    if (seen_insert(r, p, s->site, s->op) < 0)
        return -1;
    if (parse_identity(r, p, s) < 0 || parse_decision(r, s) < 0 || parse_order(r, s) < 0 ||
        parse_model(r, &s->model) < 0)
        return -1;
    return parse_tail(r, s);
}

/* The optional `piece BYTES` line, first after the header (absent in
 * profiles of older analyzers: TNBC_PROFILE_PIECE_DEFAULT). */
static int parse_piece(struct reader *r, struct tnbc_profile *p)
{
    int64_t v;
    if (r->ntok != 2)
        return fail(r, "'piece' takes one value (bytes)");
    if (get_i64(r, r->tok[1], 0, TNBC_PROFILE_PIECE_MAX, &v, "piece") < 0)
        return -1;
    p->piece_bytes = (long)v;
    return 0;
}

static int parse_sites(struct reader *r, struct tnbc_profile *p)
{
    int cap = 0, first = 1;
    p->piece_bytes = TNBC_PROFILE_PIECE_DEFAULT;
    for (;;) {
        int rc = next_line(r);
        if (rc <= 0)
            return rc;
        if (first && strcmp(r->tok[0], "piece") == 0) {
            first = 0;
            if (parse_piece(r, p) < 0)
                return -1;
            continue;
        }
        first = 0;
        if (p->nsites == cap) {
            cap = cap ? 2 * cap : 8;
            struct tnbc_profile_site *n = realloc(p->sites, (size_t)cap * sizeof *n);
            if (!n)
                return fail(r, "out of memory");
            p->sites = n;
        }
        struct tnbc_profile_site *s = &p->sites[p->nsites++];
        memset(s, 0, sizeof *s);
        if (parse_site(r, p, s) < 0)
            return -1;
    }
}

struct tnbc_profile *tnbc_profile_parse(const char *buf, size_t len, const char *name,
                                        char *err, size_t errlen)
{
    struct reader r = {.buf = buf, .len = len, .name = name ? name : "(profile)",
                       .err = err, .errlen = errlen};
    struct tnbc_profile *p = calloc(1, sizeof *p);
    if (!p || !(p->path = strdup(r.name))) {
        fail(&r, "out of memory");
        tnbc_profile_free(p);
        return NULL;
    }
    if (parse_header(&r, p) < 0 || parse_sites(&r, p) < 0) {
        tnbc_profile_free(p);
        p = NULL;
    } else {            /* the set of sites becomes the lookup index */
        p->index = r.seen;
        p->index_cap = r.seencap;
        r.seen = NULL;
        p->program = r.program;
        r.program = NULL;
    }
    free(r.program);
    free(r.copy);
    free(r.tok);
    free(r.seen);
    return p;
}

/* A profile is a regular file of at most this many bytes (FORMAT.md): a
 * FIFO or a device (/dev/zero) would be read without bound or block. */
#define MAX_PROFILE_BYTES (256L << 20)

struct tnbc_profile *tnbc_profile_load(const char *path, char *err, size_t errlen)
{
    /* O_NONBLOCK: opening a FIFO for reading must not wait for a writer. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0) {
        snprintf(err, errlen, "%s:0: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "%s:0: not a regular file", path);
        close(fd);
        return NULL;
    }
    if (st.st_size > MAX_PROFILE_BYTES) {
        snprintf(err, errlen, "%s:0: larger than %ld MiB (the limit for a profile)", path,
                 MAX_PROFILE_BYTES >> 20);
        close(fd);
        return NULL;
    }
    /* One byte more than the size: a file that grew meanwhile is refused. */
    size_t cap = (size_t)st.st_size + 1, len = 0;
    char *buf = malloc(cap);
    ssize_t got = 1;
    while (buf && len < cap && got > 0) {
        got = read(fd, buf + len, cap - len);
        if (got > 0)
            len += (size_t)got;
        else if (got < 0 && errno == EINTR)
            got = 1;
    }
    close(fd);
    if (!buf || got < 0 || len == cap) {
        snprintf(err, errlen, "%s:0: %s", path,
                 !buf ? "out of memory reading it" : got < 0 ? "read error" : "changed while read");
        free(buf);
        return NULL;
    }
    struct tnbc_profile *p = tnbc_profile_parse(buf, len, path, err, errlen);
    free(buf);
    return p;
}
