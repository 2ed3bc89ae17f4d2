// SPDX-License-Identifier: BSD-3-Clause
/*
 * --platform: parse the platform spec and re-derive a traced call's Tcomm
 * from its bytes on that platform (docs/analyzer.md, "Projection to
 * another platform"). The model code (model.c) then uses this Tcomm in
 * place of the traced one; nothing else of the model is re-done here.
 */
#include "platform.h"

#include "analyzer.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_RANKS (1 << 20) /* a spec beyond this is a typo */

struct unit {
    const char *name;
    double scale;
};

/* What each key's units are, for the error message. */
#define LINK_UNITS "bit, Kbit, Mbit or Gbit, optionally /s"
#define TIME_UNITS "ns, us, ms or s"
#define RATE_UNITS "MB/s or GB/s"

static const struct unit link_units[] = {
    {"bit", 1 / 8.0}, {"Kbit", 1e3 / 8}, {"Mbit", 1e6 / 8}, {"Gbit", 1e9 / 8},
    {"bit/s", 1 / 8.0}, {"Kbit/s", 1e3 / 8}, {"Mbit/s", 1e6 / 8}, {"Gbit/s", 1e9 / 8},
    {NULL, 0}};
static const struct unit time_units[] = {{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9},
                                         {NULL, 0}};
static const struct unit rate_units[] = {{"MB/s", 1e6}, {"GB/s", 1e9}, {NULL, 0}};

/* What a platform can have, in base units: beyond, a spec is a typo and
 * the projected times would overflow to inf, which no profile may hold
 * (1e-300 Gbit projected a Tcomm of inf and a Tinit of NaN, and the
 * analyzer wrote a profile its own reader refused). */
struct range {
    double lo, hi;          /* the value in the unit's base, lo <= v <= hi */
    const char *words;      /* the same, for the error message */
};
static const struct range link_range = {125, 1.25e13, "from 1 Kbit to 100 Tbit"};
static const struct range time_range = {0, 1e10, "from 0 to 10 s"};
static const struct range rate_range = {1e6, 1e13, "from 1 MB/s to 10000 GB/s"};

/* "NUMBER UNIT" with one of `units`; the value in the unit's base. */
static int parse_quantity(const char *key, const char *s, const struct unit *units,
                          const char *hint, const struct range *r, double *out, char *err,
                          size_t errlen)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno == 0 && end != s && isfinite(v))
        for (const struct unit *u = units; u->name; u++) {
            double base = v * u->scale;
            if (strcmp(end, u->name) == 0 && base >= r->lo && base <= r->hi) {
                *out = base;
                return 0;
            }
        }
    snprintf(err, errlen, "--platform: %s '%s' is not a number with a unit (%s) %s", key, s,
             hint, r->words);
    return -1;
}

static int parse_count(const char *key, const char *s, int *out, char *err, size_t errlen)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < 1 || v > MAX_RANKS) {
        snprintf(err, errlen, "--platform: %s '%s' is not a whole number from 1 to %d", key, s,
                 MAX_RANKS);
        return -1;
    }
    *out = (int)v;
    return 0;
}

/* One "key=value"; `seen` is a bit per key, so a key given twice is refused. */
static int parse_pair(char *kv, struct an_platform *p, unsigned *seen, char *err,
                      size_t errlen)
{
    static const char *const keys[] = {"link", "latency", "ppn", "nodes", "memcpy", "cores",
                                       NULL};
    char *eq = strchr(kv, '=');
    int k = 0;
    if (eq)
        *eq = '\0';
    for (; keys[k] && strcmp(keys[k], kv) != 0; k++)
        ;
    if (!eq || !keys[k]) {
        snprintf(err, errlen, "--platform: '%s' is not one of link=, latency=, ppn=, nodes=, "
                 "memcpy=, cores=", kv);
        return -1;
    }
    if (*seen & (1u << k)) {
        snprintf(err, errlen, "--platform: %s given twice", kv);
        return -1;
    }
    *seen |= 1u << k;
    const char *v = eq + 1;
    switch (k) {
    case 0: return parse_quantity(kv, v, link_units, LINK_UNITS, &link_range, &p->link_Bps, err, errlen);
    case 1: return parse_quantity(kv, v, time_units, TIME_UNITS, &time_range, &p->latency_ns, err, errlen);
    case 2: return parse_count(kv, v, &p->ppn, err, errlen);
    case 3: return parse_count(kv, v, &p->nodes, err, errlen);
    case 5: return parse_count(kv, v, &p->cores, err, errlen);
    default: return parse_quantity(kv, v, rate_units, RATE_UNITS, &rate_range, &p->memcpy_Bps, err, errlen);
    }
}

int an_platform_parse(const char *spec, struct an_platform *p, char *err, size_t errlen)
{
    char buf[sizeof p->spec];
    unsigned seen = 0;
    memset(p, 0, sizeof *p);
    if (strlen(spec) >= sizeof buf) {
        snprintf(err, errlen, "--platform: spec longer than %zu characters", sizeof buf - 1);
        return -1;
    }
    size_t len = strlen(spec);
    if (len > 0 && (spec[0] == ',' || spec[len - 1] == ',' || strstr(spec, ",,"))) {
        snprintf(err, errlen, "--platform '%s': an empty item between commas", spec);
        return -1;
    }
    strcpy(buf, spec);
    strcpy(p->spec, spec);
    char *save = NULL;
    for (char *kv = strtok_r(buf, ",", &save); kv; kv = strtok_r(NULL, ",", &save))
        if (parse_pair(kv, p, &seen, err, errlen) < 0)
            return -1;
    if ((seen & 0xf) != 0xf) {
        snprintf(err, errlen, "--platform '%s': link=, latency=, ppn= and nodes= are all "
                 "required (e.g. link=40Gbit,latency=1.5us,ppn=8,nodes=16)", spec);
        return -1;
    }
    if ((long long)p->ppn * p->nodes > MAX_RANKS) {
        snprintf(err, errlen, "--platform '%s': more than %d ranks", spec, MAX_RANKS);
        return -1;
    }
    if (!(seen & (1u << 5)))
        p->cores = p->ppn; /* a core per rank, as where the projection was traced */
    return 0;
}

double an_platform_cpu_factor(const struct an_platform *p)
{
    assert(p->cores >= 1 && p->ppn >= 1);
    return p->cores < p->ppn ? (double)p->ppn / (double)p->cores : 1.0;
}

double an_platform_share(const struct an_platform *p, double share, int all_to_all)
{
    if (!p || !all_to_all)
        return share;
    double scaled = share * an_platform_cpu_factor(p);
    return scaled < 1 ? scaled : 1;
}

/* Seconds -> ns for `bytes` at `rate` bytes/s; an unknown rate costs nothing. */
static double xfer_ns(double bytes, double rate)
{
    return rate > 0 && bytes > 0 ? bytes / rate * 1e9 : 0;
}

static int ceil_log2(long n)
{
    int k = 0;
    while ((1L << k) < n)
        k++;
    return k;
}

double an_platform_tcomm(const struct an_platform *p, const struct an_call *c,
                         const struct an_rank *r)
{
    long P = (long)p->nodes * p->ppn;
    double D = (double)c->recv_bytes, mem = p->memcpy_Bps > 0 ? p->memcpy_Bps : r->copy_bw;
    if (D <= 0)
        return 0;
    if (c->chunks == 0) {
        /* Per source (alltoall(v), allgather(v), gather(v) at its root):
         * D/P from each of P ranks, one message each after another; the
         * node's own ppn blocks are memory copies, the rest crosses the
         * link, which the node's ppn receivers share (a gather's root
         * has it alone). */
        double remote = D * (double)(P - p->ppn) / (double)P;
        double intra = D * (double)p->ppn / (double)P;
        int sharers = c->root >= 0 ? 1 : p->ppn;
        return (double)(P - 1) * p->latency_ns + xfer_ns(remote * sharers, p->link_Bps) +
               xfer_ns(intra, mem);
    }
    if (c->root < 0) {
        /* allreduce as a ring: 2(P-1) steps of D/P each, every step as
         * slow as the ring's slowest edge (the link once the ring spans
         * nodes, else a memory copy). */
        double edge = p->nodes > 1 ? p->link_Bps : mem;
        return 2.0 * (double)(P - 1) * (p->latency_ns + xfer_ns(D / (double)P, edge));
    }
    /* Rooted and chunked (bcast, reduce, scatter(v)): a pipelined tree of
     * ceil(log2 P) levels; the data crosses one link to reach the node
     * and one memory copy to reach the rank. */
    return ceil_log2(P) * p->latency_ns + (p->nodes > 1 ? xfer_ns(D, p->link_Bps) : 0) +
           (p->ppn > 1 ? xfer_ns(D, mem) : 0);
}
