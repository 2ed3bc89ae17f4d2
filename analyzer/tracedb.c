// SPDX-License-Identifier: BSD-3-Clause
/*
 * Reading the merged trace database (docs/schema.md, versions 1 to 5).
 *
 * The database is opened read-only and checked before anything is read:
 * every table must exist and meta.schema_version must be 1 to 5, so a wrong or
 * empty file gives one clear line instead of half an analysis.
 */
#include "analyzer.h"

#include <limits.h>
#include <errno.h>
#include <math.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const tables[] = {"meta", "run", "site", "call", "submsg", "touch", NULL};

static int terr(const struct an_trace *t, char *err, size_t errlen, const char *fmt, ...)
{
    char what[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(err, errlen, "%s: %s", t->path, what);
    return -1;
}

static int prepare(struct an_trace *t, const char *sql, sqlite3_stmt **st, char *err,
                   size_t errlen)
{
    if (sqlite3_prepare_v2(t->db, sql, -1, st, NULL) == SQLITE_OK)
        return 0;
    return terr(t, err, errlen, "not a tnbc trace of schema %d: %s", TNBC_SCHEMA_VERSION,
                sqlite3_errmsg(t->db));
}

int an_has_row(const struct an_trace *t, const char *sql)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(t->db, sql, -1, &st, NULL) != SQLITE_OK)
        return 0;
    int yes = sqlite3_step(st) == SQLITE_ROW;
    sqlite3_finalize(st);
    return yes;
}

/* A statement over one site's rows: ?1 = site, ?2 = op. */
static int prepare_site(struct an_trace *t, const struct an_site *s, const char *sql,
                        sqlite3_stmt **st, char *err, size_t errlen)
{
    if (prepare(t, sql, st, err, errlen) < 0)
        return -1;
    sqlite3_bind_text(*st, 1, s->site, -1, SQLITE_STATIC);
    sqlite3_bind_text(*st, 2, s->op, -1, SQLITE_STATIC);
    return 0;
}

/* How many of each site's traced calls watched tail pages (meta
 * trace_tail_calls, docs/schema.md): the later ones take their shares
 * (struct an_tails). Absent (a trace made before the row, or by hand):
 * every call as recorded. */
static int read_tail_calls(struct an_trace *t, char *err, size_t errlen)
{
    sqlite3_stmt *st;
    char v[32] = "";
    t->tail_calls = -1;
    if (prepare(t, "SELECT value FROM meta WHERE key='trace_tail_calls'", &st, err, errlen) < 0)
        return -1;
    int found = sqlite3_step(st) == SQLITE_ROW;
    if (found && sqlite3_column_text(st, 0))
        snprintf(v, sizeof v, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    if (!found)
        return 0;
    char *end;
    errno = 0;
    long long n = strtoll(v, &end, 10);
    if (!v[0] || *end || errno || n < 0)
        return terr(t, err, errlen, "damaged: meta trace_tail_calls '%s' is not a count", v);
    t->tail_calls = n;
    return 0;
}

static int check_schema(struct an_trace *t, char *err, size_t errlen)
{
    sqlite3_stmt *st;
    if (prepare(t, "SELECT count(*) FROM sqlite_master WHERE type='table' AND name=?", &st,
                err, errlen) < 0)
        return -1;
    for (const char *const *name = tables; *name; name++) {
        sqlite3_bind_text(st, 1, *name, -1, SQLITE_STATIC);
        int rc = sqlite3_step(st), n = rc == SQLITE_ROW ? sqlite3_column_int(st, 0) : -1;
        sqlite3_reset(st);
        if (n < 0) {
            sqlite3_finalize(st);
            return terr(t, err, errlen, "cannot read: %s", sqlite3_errmsg(t->db));
        }
        if (n == 0) {
            sqlite3_finalize(st);
            return terr(t, err, errlen, "not a tnbc trace: table '%s' is missing%s", *name,
                        name == tables ? " (empty or foreign database?)" : "");
        }
    }
    sqlite3_finalize(st);
    if (prepare(t, "SELECT value FROM meta WHERE key='schema_version'", &st, err, errlen) < 0)
        return -1;
    int rc = sqlite3_step(st);
    char ver[32] = "";
    if (rc == SQLITE_ROW && sqlite3_column_text(st, 0))
        snprintf(ver, sizeof ver, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    if (!ver[0])
        return terr(t, err, errlen, "not a tnbc trace: meta has no schema_version");
    /* Version 1 lacks site.comm_shape (never read here); its site ids
     * carry no communicator shape, so a code address used on several
     * communicators is one site there: still readable. */
    /* Version 2 lacks run.machine_ranks and machine_cpus: not counted.
     * Version 3 lacks run.mprotect_page_ns and retouch_ns: 0.
     * Version 4 lacks touch.tail_tsc: no tails seen. */
    if (strcmp(ver, "1") != 0 && strcmp(ver, "2") != 0 && strcmp(ver, "3") != 0 &&
        strcmp(ver, "4") != 0 && strcmp(ver, "5") != 0)
        return terr(t, err, errlen, "trace schema_version %s, this analyzer reads versions 1 to %d",
                    ver, TNBC_SCHEMA_VERSION);
    t->schema_version = ver[0] - '0';
    return read_tail_calls(t, err, errlen);
}

static int finite_nonneg(double v) { return isfinite(v) && v >= 0; }

/* A rank's clock rate and measured costs as a run can have them: a
 * negative or infinite cost would turn the model's Tinit into a gain. */
static int rank_costs_sane(const struct an_rank *r)
{
    return isfinite(r->tsc_hz) && r->tsc_hz > 0 && finite_nonneg(r->copy_bw) &&
           finite_nonneg(r->mprotect_ns) && finite_nonneg(r->fault_ns) &&
           finite_nonneg(r->mprotect_page_ns) && finite_nonneg(r->retouch_ns) &&
           r->page_size >= 0 && r->page_size <= (1 << 30) && r->machine_ranks >= 0 &&
           r->machine_cpus >= 0;
}

/* Of table `name`, the first column declared INTEGER or REAL that holds
 * something other than a number or NULL, in *bad (sqlite3_malloc'd; NULL
 * when none), in one scan. Returns 0, or -1 when SQLite refused. */
static int first_non_number(sqlite3 *db, const char *name, char **bad)
{
    sqlite3_stmt *st;
    *bad = NULL;
    char *sql = sqlite3_mprintf("PRAGMA table_info(\"%w\")", name);
    if (!sql || sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        sqlite3_free(sql);
        return -1;
    }
    sqlite3_free(sql);
    sqlite3_str *q = sqlite3_str_new(db);
    int ncols = 0;
    sqlite3_str_appendall(q, "SELECT CASE");
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *col = (const char *)sqlite3_column_text(st, 1);
        const char *type = (const char *)sqlite3_column_text(st, 2);
        if (!col || !type || (sqlite3_stricmp(type, "INTEGER") && sqlite3_stricmp(type, "REAL")))
            continue;
        sqlite3_str_appendf(q, " WHEN typeof(\"%w\") NOT IN ('integer', 'real', 'null') THEN %Q",
                            col, col);
        ncols++;
    }
    sqlite3_finalize(st);
    if (ncols == 0) {                 /* nothing numeric: nothing to scan */
        sqlite3_free(sqlite3_str_finish(q));
        return 0;
    }
    sqlite3_str_appendf(q, " END AS bad FROM \"%w\" WHERE bad IS NOT NULL LIMIT 1", name);
    sql = sqlite3_str_finish(q);
    if (!sql || sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        sqlite3_free(sql);
        return -1;
    }
    sqlite3_free(sql);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW && sqlite3_column_text(st, 0))
        *bad = sqlite3_mprintf("%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : -1;
}

/* Every column the schema declares INTEGER or REAL holds numbers (or
 * NULL): a damaged file's text there would read as 0, silently. One scan
 * of each table. */
static int check_numbers(struct an_trace *t, char *err, size_t errlen)
{
    sqlite3_stmt *st;
    if (prepare(t, "SELECT name FROM sqlite_master WHERE type='table' ORDER BY name", &st, err,
                errlen) < 0)
        return -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 0);
        char *bad = NULL;
        if (!name)
            continue;
        if (first_non_number(t->db, name, &bad) < 0) {
            terr(t, err, errlen, "cannot read table '%s': %s", name, sqlite3_errmsg(t->db));
            sqlite3_finalize(st);
            return -1;
        }
        if (bad) {
            terr(t, err, errlen, "damaged: table '%s' column '%s' holds a value that is not a "
                 "number", name, bad);
            sqlite3_free(bad);
            sqlite3_finalize(st);
            return -1;
        }
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return terr(t, err, errlen, "cannot read: %s", sqlite3_errmsg(t->db));
    return 0;
}

static int load_runs(struct an_trace *t, char *err, size_t errlen)
{
    sqlite3_stmt *st;
    char sql[320];
    snprintf(sql, sizeof sql, "SELECT rank, world_size, host, tsc_hz, mode, page_size, copy_bw, "
                              "mprotect_ns, fault_ns, finished, %s, %s FROM run ORDER BY rank",
             t->schema_version >= 3 ? "machine_ranks, machine_cpus" : "0, 0",
             t->schema_version >= 4 ? "mprotect_page_ns, retouch_ns" : "0, 0");
    if (prepare(t, sql, &st, err, errlen) < 0)
        return -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t rank = sqlite3_column_int64(st, 0), ws = sqlite3_column_int64(st, 1);
        if (!t->ranks) {
            if (ws < 1 || ws > (1 << 20))
                break;
            t->world_size = (int)ws;
            t->ranks = calloc((size_t)ws, sizeof *t->ranks);
            if (!t->ranks)
                break;
        }
        if (ws != t->world_size || rank < 0 || rank >= ws || t->ranks[rank].present)
            break;
        struct an_rank *r = &t->ranks[rank];
        const char *host = (const char *)sqlite3_column_text(st, 2);
        const char *mode = (const char *)sqlite3_column_text(st, 4);
        r->present = 1;
        r->host = strdup(host ? host : "?");
        r->tsc_hz = sqlite3_column_double(st, 3);
        r->trace_mode = mode && strcmp(mode, "trace") == 0;
        r->page_size = sqlite3_column_int64(st, 5);
        r->copy_bw = sqlite3_column_double(st, 6);
        r->mprotect_ns = sqlite3_column_double(st, 7);
        r->fault_ns = sqlite3_column_double(st, 8);
        r->finished = sqlite3_column_int(st, 9);
        r->machine_ranks = sqlite3_column_int(st, 10);
        r->machine_cpus = sqlite3_column_int(st, 11);
        r->mprotect_page_ns = sqlite3_column_double(st, 12);
        r->retouch_ns = sqlite3_column_double(st, 13);
        if (!r->host || !rank_costs_sane(r))
            break;
        t->nranks++;
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return terr(t, err, errlen,
                    "bad run table (rank outside world_size or twice, varying world_size, "
                    "tsc_hz <= 0, a negative or infinite cost, or unreadable): %s",
                    rc == SQLITE_ROW ? "inconsistent row" : sqlite3_errmsg(t->db));
    if (t->nranks == 0)
        return terr(t, err, errlen, "empty trace: no rows in table run");
    return 0;
}

/* Opens a database of the trace schema and reads its runs; `want_trace`
 * says which mode its ranks must have run in (trace, or replay). */
static int db_open(struct an_trace *t, const char *path, int want_trace, char *err,
                   size_t errlen)
{
    sqlite3 *db = NULL;
    memset(t, 0, sizeof *t);
    t->path = path;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        terr(t, err, errlen, "cannot open: %s", db ? sqlite3_errmsg(db) : "out of memory");
        sqlite3_close(db);
        return -1;
    }
    t->db = db;
    sqlite3_busy_timeout(db, 5000);
    if (check_schema(t, err, errlen) < 0 || check_numbers(t, err, errlen) < 0 ||
        load_runs(t, err, errlen) < 0) {
        an_trace_close(t);
        return -1;
    }
    int ntrace = 0;
    for (int r = 0; r < t->world_size; r++)
        ntrace += t->ranks[r].trace_mode;
    if (want_trace ? ntrace == 0 : ntrace > 0) {
        terr(t, err, errlen, want_trace ? "no rank ran in trace mode (a replay database?)"
                                        : "not a replay summary: %d rank(s) ran in trace mode",
             ntrace);
        an_trace_close(t);
        return -1;
    }
    if (want_trace && an_spans_load(t) < 0) {
        terr(t, err, errlen, "cannot read the calls' times: %s", sqlite3_errmsg(db));
        an_trace_close(t);
        return -1;
    }
    return 0;
}

int an_trace_open(struct an_trace *t, const char *path, char *err, size_t errlen)
{
    return db_open(t, path, 1, err, errlen);
}

int an_replay_open(struct an_trace *t, const char *path, char *err, size_t errlen)
{
    return db_open(t, path, 0, err, errlen);
}

/* Appends c to a growing array; -1 when out of memory. */
static int push_cycle(struct an_cycle **v, int *n, int *cap, struct an_cycle c)
{
    if (*n == *cap) {
        int m = *cap ? 2 * *cap : 64;
        struct an_cycle *w = realloc(*v, (size_t)m * sizeof *w);
        if (!w)
            return -1;
        *v = w;
        *cap = m;
    }
    (*v)[(*n)++] = c;
    return 0;
}

int an_site_never_early(struct an_trace *t, const char *site, const char *op, int64_t *calls,
                        char *fb, size_t fblen, char *err, size_t errlen)
{
    sqlite3_stmt *st;
    int64_t early = 0;
    *calls = 0;
    fb[0] = '\0';
    if (prepare(t, "SELECT calls, traced, IFNULL(fallback, '') FROM site WHERE site=?1 AND op=?2 "
                   "ORDER BY calls DESC", &st, err, errlen) < 0)
        return -1;
    sqlite3_bind_text(st, 1, site, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, op, -1, SQLITE_STATIC);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (!*calls) {
            *calls = sqlite3_column_int64(st, 0);
            snprintf(fb, fblen, "%s", (const char *)sqlite3_column_text(st, 2));
        }
        early += sqlite3_column_int64(st, 1);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return terr(t, err, errlen, "reading the site rows: %s", sqlite3_errmsg(t->db));
    return *calls > 0 && early == 0;
}

/* Rows come ordered by invocation, then rank: a cycle that starts at
 * invocation i is complete once the rows of i + 1 are read, and each
 * rank's previous row is all that must be kept. */
int an_site_cycles(struct an_trace *t, const char *site, const char *op, struct an_cycle **out,
                   int *nout, char *err, size_t errlen)
{
    sqlite3_stmt *st;
    *out = NULL;
    *nout = 0;
    if (prepare(t, "SELECT rank, invocation, entry_tsc, wait_ns < 0 FROM call WHERE site=?1 "
                   "AND op=?2 ORDER BY invocation, rank", &st, err, errlen) < 0)
        return -1;
    sqlite3_bind_text(st, 1, site, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, op, -1, SQLITE_STATIC);
    int64_t *prev_inv = malloc((size_t)t->world_size * sizeof *prev_inv);
    int64_t *prev_tsc = malloc((size_t)t->world_size * sizeof *prev_tsc);
    int *prev_blocking = calloc((size_t)t->world_size, sizeof *prev_blocking);
    struct an_cycle *v = NULL, cur = { .ns = -1 };   /* cur.ns -1: none yet */
    int n = 0, cap = 0, fail = !prev_inv || !prev_tsc || !prev_blocking;
    int64_t cur_inv = -1;
    for (int r = 0; !fail && r < t->world_size; r++)
        prev_inv[r] = -2;
    while (!fail && sqlite3_step(st) == SQLITE_ROW) {
        int rank = sqlite3_column_int(st, 0);
        int64_t inv = sqlite3_column_int64(st, 1), tsc = sqlite3_column_int64(st, 2);
        int blocking = sqlite3_column_int(st, 3);
        if (rank < 0 || rank >= t->world_size || !t->ranks[rank].present)
            continue;
        if (inv != cur_inv) {
            fail = cur.ns >= 0 && push_cycle(&v, &n, &cap, cur) < 0;
            cur = (struct an_cycle){ .invocation = inv - 1, .ns = -1 };
            cur_inv = inv;
        }
        if (prev_inv[rank] == inv - 1 && tsc > prev_tsc[rank]) {
            double ns = (double)(tsc - prev_tsc[rank]) / t->ranks[rank].tsc_hz * 1e9;
            if (ns > cur.ns) {
                cur.ns = ns;
                /* The ranks agree on a call's path; the slowest one's is kept. */
                cur.blocking = prev_blocking[rank];
            }
        }
        prev_inv[rank] = inv;
        prev_tsc[rank] = tsc;
        prev_blocking[rank] = blocking;
    }
    fail = fail || (cur.ns >= 0 && push_cycle(&v, &n, &cap, cur) < 0);
    sqlite3_finalize(st);
    free(prev_inv);
    free(prev_tsc);
    free(prev_blocking);
    if (fail) {
        free(v);
        return terr(t, err, errlen, "out of memory");
    }
    *out = v;
    *nout = n;
    return n;
}

int an_site_cycle_ns(struct an_trace *t, const char *site, const char *op, enum an_cycle_kind kind,
                     double *out, char *err, size_t errlen)
{
    struct an_cycle *c;
    int n;
    if (an_site_cycles(t, site, op, &c, &n, err, errlen) < 0)
        return -1;
    double *ns = malloc((size_t)(n > 0 ? n : 1) * sizeof *ns);
    if (!ns) {
        free(c);
        return terr(t, err, errlen, "out of memory");
    }
    int k = 0;
    for (int i = 0; i < n; i++)
        if (kind == AN_CYCLE_ALL || (kind == AN_CYCLE_AFTER_BLOCKING) == c[i].blocking)
            ns[k++] = c[i].ns;
    *out = an_median(ns, k);
    free(ns);
    free(c);
    return k;
}

void an_early_free(struct an_early *e, int n)
{
    for (int i = 0; e && i < n; i++) {
        free(e[i].site);
        free(e[i].op);
    }
    free(e);
}

static int early_push(struct an_early **v, int *n, int *cap, const char *site, const char *op,
                      int rank, double in_call_ns)
{
    if (*n == *cap) {
        int c = *cap ? 2 * *cap : 16;
        struct an_early *w = realloc(*v, (size_t)c * sizeof *w);
        if (!w)
            return -1;
        *v = w;
        *cap = c;
    }
    struct an_early *e = &(*v)[*n];
    *e = (struct an_early){ .site = strdup(site), .op = strdup(op), .rank = rank,
                            .in_call_ns = in_call_ns };
    if (!e->site || !e->op) {
        free(e->site);
        free(e->op);
        return -1;
    }
    (*n)++;
    return 0;
}

int an_early_read(struct an_trace *replay, struct an_early **out, int *n, char *err,
                  size_t errlen)
{
    *out = NULL;
    *n = 0;
    sqlite3_stmt *st;
    if (!an_has_row(replay, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND "
                            "name = 'early_cost'"))
        return 0;   /* a summary made before the table existed */
    /* The agreement (an MPI_Alltoall) also holds a member until the last
     * one has come, a wait the blocking collective has too: of it, only
     * the shortest over the members' means is the early return's own
     * (that member came last), as tnbc auto counts it (docs/auto.md). */
    if (prepare(replay, "SELECT site, op, rank, (candidate_ns + plan_ns + land_self_ns + arm_ns"
                        " + copy_ns + submit_ns + edges_ns) * 1.0 / early + (SELECT"
                        " min(m.agree_ns * 1.0 / m.early) FROM early_cost m WHERE m.site = e.site"
                        " AND m.op = e.op AND m.early > 0) FROM early_cost e WHERE early > 0"
                        " ORDER BY site, op, rank", &st, err, errlen) < 0)
        return -1;
    int cap = 0, rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *site = (const char *)sqlite3_column_text(st, 0);
        const char *op = (const char *)sqlite3_column_text(st, 1);
        double ns = sqlite3_column_double(st, 3);
        if (!site || !op || !(ns >= 0)) {
            sqlite3_finalize(st);
            return terr(replay, err, errlen, "early_cost: a row without a site or with a "
                                             "negative time");
        }
        if (early_push(out, n, &cap, site, op, sqlite3_column_int(st, 2), ns) < 0) {
            sqlite3_finalize(st);
            return terr(replay, err, errlen, "out of memory");
        }
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return terr(replay, err, errlen, "early_cost: %s", sqlite3_errmsg(replay->db));
    return 0;
}

double an_early_in_call_ns(const struct an_trace *t, const char *site, const char *op, int rank)
{
    for (int i = 0; i < t->nearly; i++) {
        const struct an_early *e = &t->early[i];
        if (e->rank == rank && !strcmp(e->site, site) && !strcmp(e->op, op))
            return e->in_call_ns;
    }
    return NAN;
}

void an_trace_close(struct an_trace *t)
{
    an_early_free(t->early, t->nearly);
    an_spans_free(t);
    t->early = NULL;
    t->nearly = 0;
    for (int r = 0; t->ranks && r < t->world_size; r++)
        free(t->ranks[r].host);
    free(t->ranks);
    sqlite3_close(t->db);
    t->ranks = NULL;
    t->db = NULL;
}

int an_trace_sites(struct an_trace *t, char ***sites, char ***ops, int *n, char *err,
                   size_t errlen)
{
    sqlite3_stmt *st;
    if (prepare(t,
                "SELECT DISTINCT site, op FROM call WHERE rank IN "
                "(SELECT rank FROM run WHERE mode='trace') ORDER BY site, op",
                &st, err, errlen) < 0)
        return -1;
    int cap = 0, rc;
    *n = 0;
    *sites = *ops = NULL;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (*n == cap) {
            cap = cap ? 2 * cap : 16;
            char **a = realloc(*sites, (size_t)cap * sizeof *a);
            if (a)
                *sites = a;
            char **b = realloc(*ops, (size_t)cap * sizeof *b);
            if (b)
                *ops = b;
            if (!a || !b)
                break;
        }
        const char *s = (const char *)sqlite3_column_text(st, 0);
        const char *o = (const char *)sqlite3_column_text(st, 1);
        (*sites)[*n] = strdup(s ? s : "");
        (*ops)[*n] = strdup(o ? o : "");
        (*n)++;
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return terr(t, err, errlen, "reading call sites: %s", sqlite3_errmsg(t->db));
    return 0;
}

static int bytes_sane(int64_t b, int64_t least) { return b >= least && b <= AN_MAX_BYTES; }
static int ticks_sane(int64_t t) { return t >= 0 && t <= AN_MAX_TICKS; }

/* Byte counts, clock ticks and the invocation number within what a trace
 * can hold (AN_MAX_BYTES, AN_MAX_TICKS); block_bytes is -1 when the
 * blocks vary. */
static int call_sizes_sane(const struct an_call *c)
{
    return bytes_sane(c->send_bytes, 0) && bytes_sane(c->recv_bytes, 0) &&
           bytes_sane(c->block_bytes, -1) && ticks_sane(c->entry_tsc) &&
           ticks_sane(c->return_tsc) && c->invocation >= 0 && c->chunks >= 0;
}

static int load_calls(struct an_trace *t, struct an_site *s, char *err, size_t errlen)
{
    sqlite3_stmt *st;
    if (prepare_site(t, s,
                     "SELECT call_id, rank, invocation, comm_size, comm_rank, root, "
                     "send_bytes, recv_bytes, block_bytes, nsub, chunks, entry_tsc, "
                     "return_tsc FROM call WHERE site=?1 AND op=?2 AND rank IN (SELECT rank "
                     "FROM run WHERE mode='trace') ORDER BY rank, invocation, call_id",
                     &st, err, errlen) < 0)
        return -1;
    int cap = 0, rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (s->ncalls == cap) {
            cap = cap ? 2 * cap : 64;
            struct an_call *c = realloc(s->calls, (size_t)cap * sizeof *c);
            if (!c)
                break;
            s->calls = c;
        }
        struct an_call *c = &s->calls[s->ncalls];
        memset(c, 0, sizeof *c);
        c->call_id = sqlite3_column_int64(st, 0);
        c->rank = sqlite3_column_int(st, 1);
        int64_t invocation = sqlite3_column_int64(st, 2);
        c->invocation = invocation >= 0 && invocation <= INT_MAX ? (int)invocation : -1;
        c->comm_size = sqlite3_column_int(st, 3);
        c->comm_rank = sqlite3_column_int(st, 4);
        c->root = sqlite3_column_int(st, 5);
        c->send_bytes = sqlite3_column_int64(st, 6);
        c->recv_bytes = sqlite3_column_int64(st, 7);
        c->block_bytes = sqlite3_column_int64(st, 8);
        c->nsub = sqlite3_column_int(st, 9);
        c->chunks = sqlite3_column_int(st, 10);
        c->entry_tsc = sqlite3_column_int64(st, 11);
        c->return_tsc = sqlite3_column_int64(st, 12);
        if (c->rank < 0 || c->rank >= t->world_size || c->comm_size < 1 ||
            c->comm_size > t->world_size || c->comm_rank < 0 || c->comm_rank >= c->comm_size ||
            c->nsub < 0 || c->nsub > (1 << 20)) {
            sqlite3_finalize(st);
            return terr(t, err, errlen,
                        "call %lld: rank, comm_size, comm_rank or nsub out of range",
                        (long long)c->call_id);
        }
        if (!call_sizes_sane(c)) {
            sqlite3_finalize(st);
            return terr(t, err, errlen,
                        "call %lld: a byte count, clock tick or invocation out of range",
                        (long long)c->call_id);
        }
        s->ncalls++;
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return terr(t, err, errlen, "reading calls of %s: %s", s->site,
                    rc == SQLITE_ROW ? "out of memory" : sqlite3_errmsg(t->db));
    return 0;
}

static struct an_call *find_call(struct an_site *s, int64_t id, int *hint)
{
    /* Rows come ordered like the calls (by rank, invocation), so the hint
     * makes this linear overall; fall back to a scan otherwise. */
    for (int i = *hint; i < s->ncalls; i++)
        if (s->calls[i].call_id == id)
            return &s->calls[*hint = i];
    for (int i = 0; i < s->ncalls; i++)
        if (s->calls[i].call_id == id)
            return &s->calls[*hint = i];
    return NULL;
}

static char guard_code(const char *g)
{
    if (!g)
        return 'o';
    if (strcmp(g, "guarded") == 0)
        return 'g';
    if (strcmp(g, "partial") == 0)
        return 'p';
    if (strcmp(g, "edge") == 0)
        return 'e';
    if (strcmp(g, "empty") == 0)
        return 'm';
    return 'o';
}

/* A release before I/O, an MPI call, reuse, finalize or the memory's
 * release (free, realloc, munmap) means replay waits for the data there:
 * needed then. Taking a free for "never read" predicted 90% of Tcomm saved
 * for a buffer freed right after its alltoall (u14, 2 x 1 at 1 Gbit/s),
 * and the tuned run was slower than plain: the free waited for all of it.
 * `limit` (the trace's own guard limit) says nothing. */
static int is_need(const char *how)
{
    static const char *const needs[] = {"release:io", "release:mpi", "release:reuse",
                                        "release:finalize", "release:free", NULL};
    for (const char *const *n = needs; how && *n; n++)
        if (strcmp(how, *n) == 0)
            return 1;
    return 0;
}

static void read_sub(struct an_sub *u, sqlite3_stmt *st)
{
    u->idx = sqlite3_column_int(st, 1);
    u->bytes = sqlite3_column_int64(st, 2);
    u->guard = guard_code((const char *)sqlite3_column_text(st, 3));
    const char *how = (const char *)sqlite3_column_text(st, 6);
    u->touched = sqlite3_column_type(st, 4) != SQLITE_NULL && how &&
                 strncmp(how, "release:", 8) != 0;
    u->ord = sqlite3_column_int64(st, 4);
    u->tsc = sqlite3_column_int64(st, 5);
    u->need = sqlite3_column_type(st, 5) != SQLITE_NULL && is_need(how);
    u->tail_tsc = u->touched ? sqlite3_column_int64(st, 7) : 0;   /* NULL: 0 */
}

/* Rows come call by call (sorted by idx within a call): each call's rows
 * are gathered in one scratch array and digested when the next call starts. */
struct sub_batch {
    const struct an_site *site;
    struct an_call *call;
    struct an_sub *subs;
    int n, cap;
    struct an_tails tails;   /* used where an_trace.tail_calls >= 0 */
};

static int batch_flush(const struct an_trace *t, struct sub_batch *b)
{
    int rc = b->call ? an_call_digest(t, b->site, b->call, b->subs, b->n,
                                      t->tail_calls >= 0 ? &b->tails : NULL)
                     : 0;
    b->call = NULL;
    b->n = 0;
    return rc;
}

static int batch_add(const struct an_trace *t, struct sub_batch *b, struct an_call *c,
                     sqlite3_stmt *st)
{
    if (c != b->call) {
        if (batch_flush(t, b) < 0 || c->seq)
            return -1; /* out of memory, or the call's rows came apart */
        b->call = c;
    }
    if (b->n >= c->nsub)
        return -1; /* more sub-messages than the call declares */
    if (b->n == b->cap) {
        int cap = b->cap ? 2 * b->cap : 1024;
        struct an_sub *n = realloc(b->subs, (size_t)cap * sizeof *n);
        if (!n)
            return -1;
        b->subs = n;
        b->cap = cap;
    }
    read_sub(&b->subs[b->n++], st);
    return 0;
}

static int load_subs(struct an_trace *t, struct an_site *s, char *err, size_t errlen)
{
    sqlite3_stmt *st;
    char sql[640];
    snprintf(sql, sizeof sql,
             "SELECT s.call_id, s.idx, s.bytes, s.guard, t.ord, t.tsc, t.how, %s "
             "FROM call c JOIN submsg s ON s.call_id=c.call_id AND s.side='recv' "
             "LEFT JOIN touch t ON t.call_id=s.call_id AND t.side='recv' AND "
             "t.idx=s.idx WHERE c.site=?1 AND c.op=?2 AND c.rank IN (SELECT rank "
             "FROM run WHERE mode='trace') ORDER BY c.rank, c.invocation, c.call_id, s.idx",
             t->schema_version >= 5 ? "t.tail_tsc" : "NULL");
    if (prepare_site(t, s, sql, &st, err, errlen) < 0)
        return -1;
    int rc, hint = 0;
    struct sub_batch b = {.site = s, .tails = {.calls = t->tail_calls}};
    if (an_site_world(t, s) < 0) {
        sqlite3_finalize(st);
        return terr(t, err, errlen, "out of memory");
    }
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(st, 0);
        struct an_call *c = find_call(s, id, &hint);
        if (!c)
            continue; /* cannot happen: same filter as load_calls */
        int idx = sqlite3_column_int(st, 1);
        if (!bytes_sane(sqlite3_column_int64(st, 2), 0) ||
            (sqlite3_column_type(st, 5) != SQLITE_NULL && !ticks_sane(sqlite3_column_int64(st, 5))) ||
            (sqlite3_column_type(st, 7) != SQLITE_NULL && !ticks_sane(sqlite3_column_int64(st, 7)))) {
            sqlite3_finalize(st);
            free(b.subs);
            an_tails_free(&b.tails);
            return terr(t, err, errlen, "call %lld: receive sub-message %d: its bytes or its "
                        "touch's clock tick out of range", (long long)id, idx);
        }
        if (idx < 0 || idx >= c->nsub || batch_add(t, &b, c, st) < 0) {
            sqlite3_finalize(st);
            free(b.subs);
            an_tails_free(&b.tails);
            return terr(t, err, errlen,
                        "call %lld: receive sub-message %d outside its %d sub-messages "
                        "(or out of memory)",
                        (long long)id, idx, c->nsub);
        }
    }
    sqlite3_finalize(st);
    int bad = batch_flush(t, &b);
    free(b.subs);
    an_tails_free(&b.tails);
    for (int i = 0; i < s->ncalls && !bad; i++) /* calls without receive rows */
        if (!s->calls[i].seq)
            bad = an_call_digest(t, s, &s->calls[i], NULL, 0, NULL);
    if (rc != SQLITE_DONE)
        return terr(t, err, errlen, "reading sub-messages: %s", sqlite3_errmsg(t->db));
    if (bad)
        return terr(t, err, errlen, "out of memory digesting sub-messages");
    return 0;
}

/* The largest count over traced ranks of one reason in the trace's
 * site.fallback ('name:N ...', docs/schema.md); replay summaries use some
 * of the names for local reasons too, and are not read here. */
static int64_t trace_fallback_count(struct an_trace *t, const struct an_site *s, const char *name)
{
    sqlite3_stmt *st;
    char ignored[8];
    int64_t n = 0;
    /* In ' ' || fallback, the name's space sits where the name starts in
     * fallback itself: its count follows at that place + length + 1. */
    if (prepare_site(t, s, "SELECT max(CAST(substr(s.fallback, instr(' ' || s.fallback, ' ' || ?3 || ':') "
                           "+ length(?3) + 1) AS INTEGER)) FROM site s JOIN run r USING (rank) "
                           "WHERE s.site=?1 AND s.op=?2 AND r.mode = 'trace' "
                           "AND instr(' ' || s.fallback, ' ' || ?3 || ':') > 0",
                     &st, ignored, sizeof ignored) != 0)
        return 0;
    sqlite3_bind_text(st, 3, name, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW)
        n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return n;
}

/* Traced calls, most on one rank, whose receive blocks interleave (one
 * block's bytes lie between another's first and last: a derived receive
 * type such as a transpose into columns) while no block but the rank's own
 * lies in whole protected pages. Replay's guard then has nothing to keep
 * from the program (libreplay/nbop.c, nbop_guards_something) and runs the
 * call blocking. Blocks that do not interleave are cut at their edge
 * pages in replay, so a 'partial' one of those still has a body to guard. */
static int64_t interleaved_unguardable(struct an_trace *t, const struct an_site *s)
{
    sqlite3_stmt *st;
    char ignored[8];
    int64_t n = 0;
    if (prepare_site(t, s,
                     "WITH subs AS (SELECT c.call_id, c.rank, s.peer, c.comm_rank, s.addr_offset AS a, "
                     "s.guard, max(s.addr_offset + s.bytes) OVER (PARTITION BY c.call_id ORDER BY "
                     "s.addr_offset, s.idx ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_end "
                     "FROM call c JOIN submsg s USING (call_id) WHERE c.site=?1 AND c.op=?2 "
                     "AND s.side='recv' AND s.bytes > 0), "
                     "calls AS (SELECT call_id, rank FROM subs GROUP BY call_id "
                     "HAVING max(prev_end > a) = 1 AND max(guard = 'guarded' AND peer <> comm_rank) = 0) "
                     "SELECT max(k) FROM (SELECT count(*) AS k FROM calls GROUP BY rank)",
                     &st, ignored, sizeof ignored) != 0)
        return 0;
    if (sqlite3_step(st) == SQLITE_ROW)
        n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return n;
}

int64_t an_site_receiving(const struct an_site *s)
{
    int64_t most = 0, receiving = 0;
    for (int i = 0; i < s->ncalls; i++) {
        int same_rank = i > 0 && s->calls[i].rank == s->calls[i - 1].rank;
        receiving = (same_rank ? receiving : 0) + (s->calls[i].recv_bytes > 0);
        if (receiving > most)
            most = receiving;
    }
    return most;
}

static void load_site_counts(struct an_trace *t, struct an_site *s)
{
    sqlite3_stmt *st;
    char ignored[8];
    s->site_calls = s->site_traced = 0;
    if (prepare_site(t, s, "SELECT max(calls), max(traced) FROM site WHERE site=?1 AND op=?2",
                     &st, ignored, sizeof ignored) == 0) {
        if (sqlite3_step(st) == SQLITE_ROW) {
            s->site_calls = sqlite3_column_int64(st, 0);
            s->site_traced = sqlite3_column_int64(st, 1);
        }
        sqlite3_finalize(st);
    }
    /* Calls of traced ranks whose datatype and op rule out an early
     * return, and traced calls whose receive buffer the guard may not
     * protect. */
    s->site_unsafe = trace_fallback_count(t, s, "unsafe");
    s->site_unguardable = trace_fallback_count(t, s, "unguardable");
    s->site_receiving = an_site_receiving(s);
    s->site_interleaved = interleaved_unguardable(t, s);
    /* A run killed before the site row was written still has its calls. */
    int64_t per_rank = 0, run = 0;
    for (int i = 0; i < s->ncalls; i++) {
        run = (i > 0 && s->calls[i].rank == s->calls[i - 1].rank) ? run + 1 : 1;
        if (run > per_rank)
            per_rank = run;
    }
    if (s->site_traced < per_rank)
        s->site_traced = per_rank;
    if (s->site_calls < s->site_traced)
        s->site_calls = s->site_traced;
}

int an_site_load(struct an_trace *t, const char *site, const char *op, struct an_site *s,
                 char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    s->site = strdup(site);
    s->op = strdup(op);
    if (!s->site || !s->op)
        return terr(t, err, errlen, "out of memory");
    if (load_calls(t, s, err, errlen) < 0)
        return -1;
    if (an_site_last_arrival(t, s) < 0)
        return terr(t, err, errlen, "out of memory");
    if (load_subs(t, s, err, errlen) < 0)
        return -1;
    load_site_counts(t, s);
    return 0;
}

void an_site_free(struct an_site *s)
{
    for (int i = 0; i < s->ncalls; i++)
        free(s->calls[i].seq);
    free(s->calls);
    free(s->world);
    free(s->site);
    free(s->op);
    memset(s, 0, sizeof *s);
}
