// SPDX-License-Identifier: BSD-3-Clause
/* tnbc-connmodel: memory needed per process and per node by the connection
 * modes of design 001 (RC, RC+SRQ, XRC, XRC with several buffer sizes, group
 * connection), for given machine and queue parameters.
 *
 *   tnbc-connmodel [-m NODES] [-c CORES] [--s1 B] [--sd N] [--rd N] [--s2 B]
 *                  [-n N] [-g GROUP] [-k SIZES] [--sweep] [--paper]
 *
 * --paper prints the design's Table 1 and group-connection examples next to
 * the model; --sweep prints every mode from 1,000 to 1,000,000 processes.
 * MB = 10^6 bytes, as the design computes. */
#include "ibc_model.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parse_num(const char *opt, const char *s, double max, double *out)
{
    char *end;
    double v;

    errno = 0;
    v = strtod(s, &end);
    if (errno || end == s || *end || v < 0 || v > max) {
        fprintf(stderr, "tnbc-connmodel: bad value '%s' for %s\n", s, opt);
        return -1;
    }
    *out = v;
    return 0;
}

static void print_header(void)
{
    printf("%-9s %12s %14s %14s\n", "mode", "conns/proc", "MB/process", "MB/node");
}

static void print_modes(const struct ibc_model_params *p)
{
    printf("# m=%llu c=%llu N=%llu s1=%g sd=%g rd=%g s2=%g n=%g g=%llu k=%u\n",
           (unsigned long long)p->m, (unsigned long long)p->c,
           (unsigned long long)(p->m * p->c), p->s1, p->sd, p->rd, p->s2, p->n,
           (unsigned long long)p->g, p->k);
    print_header();
    for (int mode = 0; mode < IBC_M_COUNT; mode++) {
        struct ibc_model_row r = ibc_model_eval(p, mode);
        printf("%-9s %12llu %14.4f %14.3f\n", ibc_model_name(mode),
               (unsigned long long)r.conns, r.bytes / 1e6, r.bytes * (double)p->c / 1e6);
    }
}

/* The design's printed values: Table 1 (per process and per node) and the
 * group-connection examples of section 4.2. */
struct paper_cell { int mode; unsigned c; double proc_mb, node_mb; };
static const struct paper_cell table1[] = {
    {IBC_M_RC, 8, 336, 2688},       {IBC_M_RC, 16, 672, 10750},
    {IBC_M_RC_SRQ, 8, 72.7, 581},   {IBC_M_RC_SRQ, 16, 145.4, 2326},
    {IBC_M_XRC_S, 8, 9.088, 72.7},  {IBC_M_XRC_S, 16, 9.088, 145.4},
    {IBC_M_XRC_M, 8, 3.71, 29.6},   {IBC_M_XRC_M, 16, 3.71, 59.2},
};

static void print_paper(void)
{
    struct ibc_model_params p;

    ibc_model_defaults(&p);
    printf("# design Table 1: m=1000, s1=8 kB (8000 B), sd=rd=16, s2=64 B, n=5\n");
    printf("%-7s %3s %11s %11s %11s %11s\n", "mode", "c", "proc model", "proc paper",
           "node model", "node paper");
    for (size_t i = 0; i < sizeof table1 / sizeof table1[0]; i++) {
        const struct paper_cell *t = &table1[i];
        p.c = t->c;
        struct ibc_model_row r = ibc_model_eval(&p, t->mode);
        printf("%-7s %3u %11.3f %11.3f %11.1f %11.1f\n", ibc_model_name(t->mode), t->c,
               r.bytes / 1e6, t->proc_mb, r.bytes * t->c / 1e6, t->node_mb);
    }
    printf("# node paper values multiply a rounded per-process figure by c\n"
           "# (e.g. XRC_M 3.7 x 8 = 29.6); its RC row counts 42 KiB per peer\n"
           "# (8192-byte buffers, 1 MB = 1000 KiB): 42 x 15999 = 672. Hence the\n"
           "# differences below 0.5 %%.\n\n");

    printf("# design 4.2: group connection over XRC, groups of 4096, 4 cores/node,\n"
           "# s1=8192 B, sd=16, s2=64 B\n");
    printf("%10s %12s %12s %12s\n", "processes", "conns/proc", "MB model", "MB paper");
    static const struct { uint64_t procs, conns; double mb; } ex[] = {
        {320000, 1102, 10.22}, {1000000, 1268, 11.77},
    };
    for (size_t i = 0; i < 2; i++) {
        ibc_model_defaults(&p);
        p.s1 = 8192; p.c = 4; p.m = ex[i].procs / 4;
        struct ibc_model_row r = ibc_model_eval(&p, IBC_M_GROUP);
        printf("%10llu %6llu/%-5llu %12.4f %12.2f\n", (unsigned long long)ex[i].procs,
               (unsigned long long)r.conns, (unsigned long long)ex[i].conns, r.bytes / 1e6,
               ex[i].mb);
    }
}

static void print_sweep(struct ibc_model_params p)
{
    static const uint64_t procs[] = {1000, 2048, 4096, 8192, 16384, 65536, 100000,
                                     320000, 1000000};
    printf("# MB per process; c=%llu, g=%llu, s1=%g\n", (unsigned long long)p.c,
           (unsigned long long)p.g, p.s1);
    printf("%10s", "processes");
    for (int mode = 0; mode < IBC_M_COUNT; mode++)
        printf(" %11s", ibc_model_name(mode));
    printf("\n");
    for (size_t i = 0; i < sizeof procs / sizeof procs[0]; i++) {
        p.m = (procs[i] + p.c - 1) / p.c;
        printf("%10llu", (unsigned long long)(p.m * p.c));
        for (int mode = 0; mode < IBC_M_COUNT; mode++)
            printf(" %11.3f", ibc_model_eval(&p, mode).bytes / 1e6);
        printf("\n");
    }
}

static void usage(void)
{
    fprintf(stderr, "usage: tnbc-connmodel [-m NODES] [-c CORES] [--s1 B] [--sd N] [--rd N]\n"
                    "       [--s2 B] [-n N] [-g GROUP] [-k SIZES] [--sweep] [--paper]\n");
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"s1", required_argument, 0, 1}, {"sd", required_argument, 0, 2},
        {"rd", required_argument, 0, 3}, {"s2", required_argument, 0, 4},
        {"sweep", no_argument, 0, 5},    {"paper", no_argument, 0, 6},
        {"help", no_argument, 0, 'h'},   {0, 0, 0, 0},
    };
    struct ibc_model_params p;
    int sweep = 0, paper = 0, opt;
    double v;
    char err[128];

    ibc_model_defaults(&p);
    while ((opt = getopt_long(argc, argv, "m:c:n:g:k:h", longopts, NULL)) != -1) {
        char shortname[3] = {'-', (char)opt, 0};
        const char *name = opt >= 1 && opt <= 4 ? longopts[opt - 1].name : shortname;
        if (opt == 5) { sweep = 1; continue; }
        if (opt == 6) { paper = 1; continue; }
        if (opt == 'h' || opt == '?') { usage(); return opt == 'h' ? 0 : 2; }
        if (parse_num(name, optarg, 1e15, &v))
            return 2;
        switch (opt) {
        case 'm': p.m = (uint64_t)v; break;
        case 'c': p.c = (uint64_t)v; break;
        case 'n': p.n = v; break;
        case 'g': p.g = (uint64_t)v; break;
        case 'k': p.k = (unsigned)v; break;
        case 1: p.s1 = v; break;
        case 2: p.sd = v; break;
        case 3: p.rd = v; break;
        case 4: p.s2 = v; break;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "tnbc-connmodel: unexpected argument '%s'\n", argv[optind]);
        return 2;
    }
    if (ibc_model_check(&p, err, sizeof err)) {
        fprintf(stderr, "tnbc-connmodel: %s\n", err);
        return 2;
    }
    if (paper)
        print_paper();
    else if (sweep)
        print_sweep(p);
    else
        print_modes(&p);
    return 0;
}
