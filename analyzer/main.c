// SPDX-License-Identifier: BSD-3-Clause
/*
 * tnbc-analyze: trace database -> profile (docs/analyzer.md).
 */
#include "analyzer.h"
#include "platform.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: tnbc-analyze TRACE.db -o APP.profile [--measured REPLAY.db]\n"
    "                    [--comm-cpu-share S] [--early-cost US] [--platform SPEC] [-q]\n"
    "\n"
    "Reads a merged tnbc trace database and writes the profile the replay\n"
    "runtime reads: per call site the receive order and its agreement, the\n"
    "model terms and predicted overlap, the decision with its reason, the\n"
    "priorities of both sides, the node schedule and the chunking.\n"
    "\n"
    "  -o FILE   profile to write ('-' for standard output)\n"
    "  --measured REPLAY.db\n"
    "            a merged replay summary of a run with this trace's profile\n"
    "            (tnbc run --summary, tnbc merge): the early returns it timed\n"
    "            are Tinit's part in the call for their site and rank (in\n"
    "            place of the model's copy, arm and edge terms and of\n"
    "            --early-cost); a site that is on but was not faster there\n"
    "            than traced is turned off\n"
    "  --comm-cpu-share S\n"
    "            share of a CPU (0 to 0.9) that communication in flight takes\n"
    "            from the program it overlaps, as measured on the cluster the\n"
    "            profile is for (docs/analyzer.md); every predicted saving\n"
    "            shrinks by it. Default 0: the network moves the bytes,\n"
    "            except between ranks of one node of a machine that runs\n"
    "            more of the job's ranks than it has CPUs, or anywhere on\n"
    "            such a machine when it runs the whole job (share 1: off)\n"
    "  --early-cost US\n"
    "            per call, the early return's steps Tinit does not count\n"
    "            (candidate + agree + plan + land_self + submit of the\n"
    "            TNBC_REPLAY_PHASES line, docs/analyzer.md); added to Tinit\n"
    "            where --measured timed no early return. Default 0\n"
    "  --platform SPEC\n"
    "            a projection, not a measurement: predict for another platform,\n"
    "            SPEC = link=RATE,latency=TIME,ppn=N,nodes=N[,memcpy=RATE][,cores=N]\n"
    "            (e.g. link=40Gbit,latency=1.5us,ppn=8,nodes=16); Tcomm is\n"
    "            re-derived from each call's bytes there, the code's rates are\n"
    "            the traced ones, slowed by ppn/cores where a node's ranks\n"
    "            share fewer cores (docs/analyzer.md, Projection)\n"
    "  -q        do not print the per-site summary\n"
    "  -h, --help  this text\n"
    "\n"
    "Format: profiles/FORMAT.md. Method: docs/analyzer.md.\n";

static void summary(const struct tnbc_profile *p, const struct an_platform *pf)
{
    if (pf)
        printf("PROJECTION to platform %s (not measured; docs/analyzer.md)\n", pf->spec);
    for (int i = 0; i < p->nsites; i++) {
        const struct tnbc_profile_site *s = &p->sites[i];
        printf("%s %s: %s: %s", s->site, s->op, s->on ? "on" : "off", s->reason);
        if (s->has_confidence)      /* the trace's, analyzer/fidelity.c */
            printf(" [confidence %.2f]", s->confidence);
        if (s->trial)               /* profiles/FORMAT.md, `trial` */
            printf(" [a trial run tries it]");
        putchar('\n');
    }
}

static void warn_unfinished(const struct an_trace *t)
{
    int n = 0;
    for (int r = 0; r < t->world_size; r++)
        n += t->ranks[r].present && !t->ranks[r].finished;
    if (n)
        fprintf(stderr,
                "tnbc-analyze: %s: warning: %d rank(s) did not reach MPI_Finalize; "
                "analyzing what was traced\n",
                t->path, n);
}

static int open_measured(struct an_trace *r, const char *path, char *err, size_t errlen)
{
    if (an_replay_open(r, path, err, errlen) == 0)
        return 0;
    /* Say what was expected: a replay summary, not a trace. */
    char why[TNBC_PROFILE_ERRLEN];
    snprintf(why, sizeof why, "%s", err);
    snprintf(err, errlen, "--measured %.100s: not a replay summary (tnbc run --summary "
             "DIR, or its merge): %.300s", path, why);
    return -1;
}

/* The profile says it is a projection, and onto what, in its source. */
static int mark_projection(struct tnbc_profile *p, const struct an_platform *pf)
{
    size_t n = strlen(p->source) + strlen(pf->spec) + 32;
    char *s = malloc(n);
    if (!s)
        return -1;
    snprintf(s, n, "%s [projection: %s]", p->source, pf->spec);
    free(p->source);
    p->source = s;
    return 0;
}

static int parse_early_cost(const char *s, double *out_ns)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= 0 && v <= 1e7)) {
        fprintf(stderr, "tnbc-analyze: --early-cost '%s' is not a number of us in [0, 1e7]\n",
                s);
        return -1;
    }
    *out_ns = v * 1e3;
    return 0;
}

static int parse_share(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= 0 && v <= 0.9)) {
        fprintf(stderr, "tnbc-analyze: --comm-cpu-share '%s' is not a number in [0, 0.9]\n", s);
        return -1;
    }
    *out = v;
    return 0;
}

int main(int argc, char **argv)
{
    const char *in = NULL, *out = NULL, *measured = NULL;
    int quiet = 0;
    double share = 0, early_ns = 0;
    int share_given = 0;
    struct an_platform platform, *pf = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            fputs(usage, stdout);
            return 0;
        } else if (!strcmp(argv[i], "-o") && i + 1 < argc) {
            out = argv[++i];
        } else if (!strcmp(argv[i], "--measured") && i + 1 < argc) {
            measured = argv[++i];
        } else if (!strcmp(argv[i], "--comm-cpu-share") && i + 1 < argc) {
            if (parse_share(argv[++i], &share) < 0)
                return 2;
            share_given = 1;
        } else if (!strcmp(argv[i], "--early-cost") && i + 1 < argc) {
            if (parse_early_cost(argv[++i], &early_ns) < 0)
                return 2;
        } else if (!strcmp(argv[i], "--platform") && i + 1 < argc) {
            char perr[256];
            if (an_platform_parse(argv[++i], &platform, perr, sizeof perr) < 0) {
                fprintf(stderr, "tnbc-analyze: %s\n", perr);
                return 2;
            }
            pf = &platform;
        } else if (!strcmp(argv[i], "-q")) {
            quiet = 1;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "tnbc-analyze: unknown option '%s'\n%s", argv[i], usage);
            return 2;
        } else if (!in) {
            in = argv[i];
        } else {
            fprintf(stderr, "tnbc-analyze: one trace database at a time ('%s')\n%s",
                    argv[i], usage);
            return 2;
        }
    }
    if (pf && measured) { /* it compares cycles of the traced platform */
        fprintf(stderr, "tnbc-analyze: --measured compares with the traced platform; "
                        "not with --platform\n");
        return 2;
    }
    if (!in || !out) {
        fprintf(stderr, "tnbc-analyze: %s\n%s", in ? "no -o PROFILE given" : "no trace given",
                usage);
        return 2;
    }
    char err[TNBC_PROFILE_ERRLEN];
    struct an_trace t, r;
    if (an_trace_open(&t, in, err, sizeof err) < 0) {
        fprintf(stderr, "tnbc-analyze: %s\n", err);
        return 1;
    }
    if (measured && open_measured(&r, measured, err, sizeof err) < 0) {
        fprintf(stderr, "tnbc-analyze: %s\n", err);
        an_trace_close(&t);
        return 1;
    }
    /* The early return as that run timed it: Tinit's part in the call. */
    if (measured && an_early_read(&r, &t.early, &t.nearly, err, sizeof err) < 0) {
        fprintf(stderr, "tnbc-analyze: %s\n", err);
        an_trace_close(&r);
        an_trace_close(&t);
        return 1;
    }
    warn_unfinished(&t);
    t.comm_cpu_share = share;
    t.crowded_rule = !share_given && !pf; /* the traced machine's, not the platform's */
    t.platform = pf;
    t.early_cost_ns = early_ns;
    struct tnbc_profile *p = calloc(1, sizeof *p);
    int rc = p ? an_analyze(&t, p, err, sizeof err) : -1;
    if (rc == 0 && pf && mark_projection(p, pf) < 0) {
        snprintf(err, sizeof err, "out of memory");
        rc = -1;
    }
    if (rc == 0 && measured)
        rc = an_measured(p, &t, &r, err, sizeof err);
    if (measured)
        an_trace_close(&r);
    an_trace_close(&t);
    if (!p)
        snprintf(err, sizeof err, "out of memory");
    if (rc == 0) {
        if (p->nsites == 0)
            fprintf(stderr, "tnbc-analyze: %s: warning: no traced collective calls\n", in);
        rc = tnbc_profile_write(p, out, err, sizeof err);
    }
    if (rc == 0 && !quiet && strcmp(out, "-") != 0)
        summary(p, pf);
    tnbc_profile_free(p);
    if (rc < 0) {
        fprintf(stderr, "tnbc-analyze: %s\n", err);
        return 1;
    }
    return 0;
}
