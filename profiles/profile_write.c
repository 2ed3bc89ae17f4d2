// SPDX-License-Identifier: BSD-3-Clause
/*
 * tnbc profile writer: the exact inverse of profile_read.c (FORMAT.md).
 * Written to PATH.tmp and renamed, so a reader never sees half a profile.
 */
#include "profile.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Ids and host names are single tokens: escape what would split or
 * confuse them as %XX. */
static void put_escaped(FILE *f, const char *s)
{
    if (!*s) {
        fputs("%20", f); /* never happens for real ids; keeps the token count */
        return;
    }
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p <= ' ' || *p >= 0x7f || *p == '%' || *p == '#')
            fprintf(f, "%%%02X", *p);
        else
            fputc(*p, f);
    }
}

/* A reason is free text up to the line's end: keep it on one line. */
static void put_reason(FILE *f, const char *s)
{
    if (!s || !*s)
        s = "(no reason given)";
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        fputc(*p < ' ' || *p == 0x7f ? '?' : *p, f);
}

static void put_num(FILE *f, const char *key, double v)
{
    if (isinf(v))
        fprintf(f, " %s inf", key);
    else
        fprintf(f, " %s %.9g", key, v);
}

static void put_ints(FILE *f, const int *v, int n)
{
    for (int i = 0; i < n; i++)
        fprintf(f, " %d", v[i]);
}

static const char *order_kind_name(enum tnbc_order_kind k)
{
    switch (k) {
    case TNBC_ORDER_CONSENSUS: return "consensus";
    case TNBC_ORDER_PER_RANK: return "per-rank";
    default: return "default";
    }
}

static void put_model(FILE *f, const struct tnbc_model *m)
{
    fputs("  model", f);
    put_num(f, "tcomm_ns", m->tcomm_ns);
    put_num(f, "dcomm", m->dcomm);
    put_num(f, "rcomm", m->rcomm);
    put_num(f, "tcurc_ns", m->tcurc_ns);
    put_num(f, "rcrc", m->rcrc);
    put_num(f, "tinit_ns", m->tinit_ns);
    put_num(f, "toverlap_ns", m->toverlap_ns);
    put_num(f, "saving_call_ns", m->saving_call_ns);
    put_num(f, "saving_run_ns", m->saving_run_ns);
    fprintf(f, " regime %c\n", m->regime ? m->regime : '-');
}

static void put_measured(FILE *f, const struct tnbc_measured *m)
{
    fprintf(f, "  measured early %lld checked %lld", (long long)m->early, (long long)m->checked);
    put_num(f, "cycle_early_ns", m->cycle_early_ns);
    put_num(f, "cycle_blocking_ns", m->cycle_blocking_ns);
    put_num(f, "saving_call_ns", m->saving_call_ns);
    put_num(f, "z", m->z);
    fputc('\n', f);
}

static void put_prio_rows(FILE *f, const char *key, const struct tnbc_profile_site *s,
                          const int *rows, int n)
{
    if (s->chunks > 0) {
        fprintf(f, "  %s *", key);
        put_ints(f, rows, n);
        fputc('\n', f);
        return;
    }
    for (int r = 0; r < s->comm_size; r++) {
        fprintf(f, "  %s %d", key, r);
        put_ints(f, rows + (size_t)r * n, n);
        fputc('\n', f);
    }
}

static void put_site(FILE *f, const struct tnbc_profile_site *s)
{
    fputs("\nsite ", f);
    put_escaped(f, s->site);
    fprintf(f, " %s\n", s->op);
    fprintf(f, "  comm_size %d\n  block_bytes %lld\n  chunks %d\n", s->comm_size,
            (long long)s->block_bytes, s->chunks);
    fprintf(f, "  calls %lld traced %lld\n", (long long)s->calls, (long long)s->traced);
    fprintf(f, "  decision %s ", s->on ? "on" : "off");
    put_reason(f, s->reason);
    fprintf(f, "\n  order %s", order_kind_name(s->order_kind));
    put_ints(f, s->order, s->nsub);
    fprintf(f, "\n  agreement identical %.6g tau %.6g samples %lld\n", s->agree_identical,
            s->agree_tau, (long long)s->samples);
    put_model(f, &s->model);
    if (s->has_confidence)
        fprintf(f, "  # confidence %.2f observer_share %.3f steps %.0f dropped %lld\n",
                s->confidence, s->fid_observer_share, s->fid_steps, (long long)s->fid_dropped);
    if (s->has_measured)
        put_measured(f, &s->measured);
    if (s->has_block_range)
        fprintf(f, "  block_range %lld %lld\n", (long long)s->block_min,
                (long long)s->block_max);
    if (s->trial && !s->on)   /* it means nothing on a site that is on */
        fputs("  trial\n", f);
    for (int r = 0; s->rank_order && r < s->comm_size; r++) {
        if (!s->rank_order[r])
            continue;
        fprintf(f, "  rank_order %d", r);
        put_ints(f, s->rank_order[r], s->nsub);
        fputc('\n', f);
    }
    for (int i = 0; i < s->nvhash; i++)
        fprintf(f, "  vhash %d 0x%016llx\n", s->vhash_rank[i], (unsigned long long)s->vhash[i]);
    put_prio_rows(f, "recv_prio", s, s->recv_prio, s->nsub);
    put_prio_rows(f, "send_prio", s, s->send_prio, s->nsend);
    for (int i = 0; i < s->nnodes; i++) {
        fputs("  node ", f);
        put_escaped(f, s->nodes[i].host);
        put_ints(f, s->nodes[i].ranks, s->nodes[i].nranks);
        fputc('\n', f);
    }
    fputs("end\n", f);
}

static void put_profile(FILE *f, const struct tnbc_profile *p)
{
    fprintf(f, "tnbc-profile %d\n", TNBC_PROFILE_VERSION);
    fputs("# Written by tnbc-analyze; format: profiles/FORMAT.md. Priorities: 0 = first.\n",
          f);
    fprintf(f, "world_size %d\nsource ", p->world_size);
    put_escaped(f, p->source ? p->source : "-");
    fputc('\n', f);
    fprintf(f, "piece %ld\n", p->piece_bytes);
    for (int i = 0; i < p->nsites; i++)
        put_site(f, &p->sites[i]);
}

char *tnbc_profile_text(const struct tnbc_profile *p, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    if (!f)
        return NULL;
    put_profile(f, p);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        free(buf);
        return NULL;
    }
    return buf;
}

int tnbc_profile_write(const struct tnbc_profile *p, const char *path, char *err,
                       size_t errlen)
{
    if (strcmp(path, "-") == 0) {
        put_profile(stdout, p);
        if (fflush(stdout) != 0) {
            snprintf(err, errlen, "-:0: cannot write to standard output: %s", strerror(errno));
            return -1;
        }
        return 0;
    }
    size_t n = strlen(path) + 5;
    char *tmp = malloc(n);
    if (!tmp) {
        snprintf(err, errlen, "%s:0: out of memory", path);
        return -1;
    }
    snprintf(tmp, n, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        /* The user's path, not the temporary one they never named. */
        snprintf(err, errlen, "%s: cannot create: %s", path, strerror(errno));
        free(tmp);
        return -1;
    }
    put_profile(f, p);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad || rename(tmp, path) != 0) {
        snprintf(err, errlen, "%s:0: cannot write: %s", path, strerror(errno));
        remove(tmp);
        free(tmp);
        return -1;
    }
    free(tmp);
    return 0;
}
