// SPDX-License-Identifier: BSD-3-Clause
/*
 * Profile library: round trip, strict reader errors (one line naming file
 * and line), checking a running call, priority accessors.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "profile.h"

/* A canonical profile: what the writer produces, byte for byte. */
static const char good[] =
    "tnbc-profile 1\n"
    "# Written by tnbc-analyze; format: profiles/FORMAT.md. Priorities: 0 = first.\n"
    "world_size 4\n"
    "source run%20one.db\n"
    "piece 32768\n"
    "\n"
    "site app+0x1a2b alltoall\n"
    "  comm_size 4\n"
    "  block_bytes 1048576\n"
    "  chunks 0\n"
    "  calls 100 traced 8\n"
    "  decision on regime c: saves 400.0 us per call\n"
    "  order consensus 3 1 2 0\n"
    "  agreement identical 1 tau 1 samples 32\n"
    "  model tcomm_ns 1001000 dcomm 4194304 rcomm 4.19011389e+09 tcurc_ns 0 rcrc "
    "1.048576e+10 tinit_ns 431430.4 toverlap_ns 400000 saving_call_ns 400000 "
    "saving_run_ns 40000000 regime c\n"
    "  rank_order 2 0 1 2 3\n"
    "  recv_prio 0 3 1 2 0\n"
    "  recv_prio 1 3 1 2 0\n"
    "  recv_prio 2 0 1 2 3\n"
    "  recv_prio 3 3 1 2 0\n"
    "  send_prio 0 3 3 0 3\n"
    "  send_prio 1 1 1 1 1\n"
    "  send_prio 2 2 2 2 2\n"
    "  send_prio 3 0 0 3 0\n"
    "  node A 1 0\n"
    "  node B%23x 3 2\n"
    "end\n"
    "\n"
    "site lib%25.so+0x10 bcast\n"
    "  comm_size 4\n"
    "  block_bytes 262144\n"
    "  chunks 4\n"
    "  calls 3 traced 3\n"
    "  decision off tiny sub-messages\n"
    "  order default 0 1 2 3\n"
    "  agreement identical 0 tau 0 samples 0\n"
    "  model tcomm_ns 1000 dcomm 100 rcomm 100000000 tcurc_ns inf rcrc inf tinit_ns 10 "
    "toverlap_ns 990 saving_call_ns 990 saving_run_ns 2970 regime a\n"
    "  recv_prio * 0 1 2 3\n"
    "  send_prio * 0 1 2 3\n"
    "end\n"
    "\n"
    "site app+0x99 alltoallv\n"
    "  comm_size 4\n"
    "  block_bytes -1\n"
    "  chunks 0\n"
    "  calls 5 traced 5\n"
    "  decision on regime b\n"
    "  order consensus 0 1 2 3\n"
    "  agreement identical 0.75 tau 0.9 samples 20\n"
    "  model tcomm_ns 5000 dcomm 1000 rcomm 200000000 tcurc_ns 0 rcrc 100000000 tinit_ns 100 "
    "toverlap_ns 4900 saving_call_ns 4900 saving_run_ns 24500 regime b\n"
    "  measured early 40 checked 6 cycle_early_ns 1200000 cycle_blocking_ns 1500000.5 "
    "saving_call_ns 300000.5 z 3.25\n"
    "  vhash 1 0x3addc9c9d5ff7e55\n"
    "  recv_prio 0 0 1 2 3\n"
    "  recv_prio 1 0 1 2 3\n"
    "  recv_prio 2 0 1 2 3\n"
    "  recv_prio 3 0 1 2 3\n"
    "  send_prio 0 0 0 0 0\n"
    "  send_prio 1 1 1 1 1\n"
    "  send_prio 2 2 2 2 2\n"
    "  send_prio 3 3 3 3 3\n"
    "end\n"
    "\n"
    "site app+0x77 allgather\n"
    "  comm_size 2\n"
    "  block_bytes -1\n"
    "  chunks 0\n"
    "  calls 9 traced 8\n"
    "  decision on regime c\n"
    "  order consensus 1 0\n"
    "  agreement identical 1 tau 1 samples 16\n"
    "  model tcomm_ns 5000 dcomm 1000 rcomm 200000000 tcurc_ns 0 rcrc 100000000 tinit_ns 100 "
    "toverlap_ns 4900 saving_call_ns 4900 saving_run_ns 44100 regime c\n"
    "  block_range 40000 90000\n"
    "  recv_prio 0 1 0\n"
    "  recv_prio 1 1 0\n"
    "  send_prio 0 1 1\n"
    "  send_prio 1 0 0\n"
    "end\n";

static char tmpdir[64];

static int setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/tnbc-profile-XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
    char cmd[128];
    (void)state;
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

static struct tnbc_profile *parse_good(void)
{
    char err[TNBC_PROFILE_ERRLEN] = "";
    struct tnbc_profile *p = tnbc_profile_parse(good, strlen(good), "good.profile", err,
                                                sizeof err);
    if (!p)
        fail_msg("good profile refused: %s", err);
    return p;
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char *buf = malloc(1 << 16);
    assert_non_null(buf);
    *len = fread(buf, 1, (1 << 16) - 1, f);
    buf[*len] = '\0';
    fclose(f);
    return buf;
}

/* Replace the first occurrence of `from` in the good profile by `to`. */
static char *mutate(const char *from, const char *to)
{
    const char *at = strstr(good, from);
    if (!at)
        fail_msg("fixture lacks '%s'", from);
    size_t n = strlen(good) - strlen(from) + strlen(to) + 1;
    char *s = malloc(n);
    snprintf(s, n, "%.*s%s%s", (int)(at - good), good, to, at + strlen(from));
    return s;
}

static void test_fields(void **state)
{
    (void)state;
    struct tnbc_profile *p = parse_good();
    assert_int_equal(p->version, 1);
    assert_int_equal(p->world_size, 4);
    assert_string_equal(p->source, "run one.db");
    assert_int_equal(p->nsites, 4);
    const struct tnbc_profile_site *s = tnbc_profile_find(p, "app+0x1a2b", "alltoall");
    assert_non_null(s);
    assert_int_equal(s->line, 7);
    assert_int_equal(s->comm_size, 4);
    assert_int_equal(s->block_bytes, 1048576);
    assert_int_equal(s->nsub, 4);
    assert_int_equal(s->calls, 100);
    assert_int_equal(s->traced, 8);
    assert_true(s->on);
    assert_string_equal(s->reason, "regime c: saves 400.0 us per call");
    assert_int_equal(s->order_kind, TNBC_ORDER_CONSENSUS);
    assert_memory_equal(s->order, ((int[]){3, 1, 2, 0}), 4 * sizeof(int));
    assert_non_null(s->rank_order[2]);
    assert_null(s->rank_order[0]);
    assert_float_equal(s->model.tinit_ns, 431430.4, 1e-6);
    assert_int_equal(s->model.regime, 'c');
    assert_int_equal(s->nnodes, 2);
    assert_string_equal(s->nodes[1].host, "B#x");
    const struct tnbc_profile_site *b = tnbc_profile_find(p, "lib%.so+0x10", "bcast");
    assert_non_null(b);
    assert_false(b->on);
    assert_int_equal(b->chunks, 4);
    assert_true(b->model.tcurc_ns > 1e300); /* inf */
    assert_null(tnbc_profile_find(p, "app+0x1a2b", "bcast"));
    assert_null(tnbc_profile_find(p, "nope", "alltoall"));
    tnbc_profile_free(p);
}

/* A self-tuning run's measurement (the `measured` line) reads back. */
static void test_measured(void **state)
{
    (void)state;
    struct tnbc_profile *p = parse_good();
    assert_false(p->sites[0].has_measured);
    const struct tnbc_profile_site *s = &p->sites[2];
    assert_true(s->has_measured);
    assert_int_equal(s->measured.early, 40);
    assert_int_equal(s->measured.checked, 6);
    assert_float_equal(s->measured.cycle_early_ns, 1200000, 0);
    assert_float_equal(s->measured.cycle_blocking_ns, 1500000.5, 0);
    assert_float_equal(s->measured.saving_call_ns, 300000.5, 0);
    assert_float_equal(s->measured.z, 3.25, 0);
    tnbc_profile_free(p);
}

/* `piece`: the analyzer's piece size; a profile without the line (older
 * analyzers) means the 32 KiB they all assumed. */
static void test_piece(void **state)
{
    (void)state;
    const char *cases[][2] = {{"piece 32768\n", ""}, {"piece 32768", "piece 4096"},
                              {"piece 32768", "piece 0"}};
    const long want[] = {32768, 4096, 0};
    for (int i = 0; i < 3; i++) {
        char err[TNBC_PROFILE_ERRLEN] = "";
        char *text = mutate(cases[i][0], cases[i][1]);
        struct tnbc_profile *p = tnbc_profile_parse(text, strlen(text), "piece.profile", err,
                                                    sizeof err);
        if (!p)
            fail_msg("case %d refused: %s", i, err);
        assert_int_equal(p->piece_bytes, want[i]);
        assert_int_equal(p->nsites, 4);
        tnbc_profile_free(p);
        free(text);
    }
}

/* `trial`: an off site a trial run may run early; read, kept by the
 * writer in its place (the canonical text is a fixed point). */
static void test_trial(void **state)
{
    (void)state;
    char path[128], err[TNBC_PROFILE_ERRLEN] = "";
    char *text = mutate("regime a\n  recv_prio *", "regime a\n  trial\n  recv_prio *");
    struct tnbc_profile *p = tnbc_profile_parse(text, strlen(text), "trial.profile", err, sizeof err);
    if (!p)
        fail_msg("refused: %s", err);
    assert_false(p->sites[0].trial);
    assert_true(p->sites[1].trial && !p->sites[1].on);
    tnbc_profile_free(p);
    /* on a site that is on (its decision edited by hand): read, dropped */
    char *on = mutate("  node A 1 0\n", "  trial\n  node A 1 0\n");
    p = tnbc_profile_parse(on, strlen(on), "trial.profile", err, sizeof err);
    if (!p)
        fail_msg("refused: %s", err);
    assert_true(p->sites[0].on && !p->sites[0].trial);
    free(on);
    tnbc_profile_free(p);
    p = tnbc_profile_parse(text, strlen(text), "trial.profile", err, sizeof err);
    assert_non_null(p);
    snprintf(path, sizeof path, "%s/trial.profile", tmpdir);
    assert_int_equal(tnbc_profile_write(p, path, err, sizeof err), 0);
    size_t len;
    char *back = slurp(path, &len);
    assert_string_equal(back, text);
    free(back);
    free(text);
    tnbc_profile_free(p);
}

static void test_round_trip(void **state)
{
    (void)state;
    char path[128], err[TNBC_PROFILE_ERRLEN] = "";
    struct tnbc_profile *p = parse_good();
    snprintf(path, sizeof path, "%s/rt.profile", tmpdir);
    assert_int_equal(tnbc_profile_write(p, path, err, sizeof err), 0);
    size_t len;
    char *text = slurp(path, &len);
    assert_int_equal(len, strlen(good));
    assert_string_equal(text, good); /* canonical text is a fixed point */
    struct tnbc_profile *q = tnbc_profile_load(path, err, sizeof err);
    if (!q)
        fail_msg("reload: %s", err);
    assert_int_equal(q->nsites, p->nsites);
    for (int i = 0; i < p->nsites; i++) {
        const struct tnbc_profile_site *a = &p->sites[i], *b = &q->sites[i];
        assert_string_equal(a->site, b->site);
        assert_int_equal(a->nsub, b->nsub);
        assert_memory_equal(a->order, b->order, (size_t)a->nsub * sizeof(int));
        for (int r = 0; r < a->comm_size; r++)
            for (int j = 0; j < a->nsub; j++) {
                assert_int_equal(tnbc_profile_recv_prio(a, r, j), tnbc_profile_recv_prio(b, r, j));
                assert_int_equal(tnbc_profile_send_prio(a, r, j), tnbc_profile_send_prio(b, r, j));
            }
        assert_memory_equal(&a->model, &b->model, sizeof a->model);
        assert_int_equal(a->has_block_range, b->has_block_range);
        assert_int_equal(a->block_min, b->block_min);
        assert_int_equal(a->block_max, b->block_max);
    }
    free(text);
    tnbc_profile_free(p);
    tnbc_profile_free(q);
}

static void test_priorities(void **state)
{
    (void)state;
    struct tnbc_profile *p = parse_good();
    const struct tnbc_profile_site *s = tnbc_profile_find(p, "app+0x1a2b", "alltoall");
    assert_int_equal(tnbc_profile_recv_prio(s, 0, 3), 0);
    assert_int_equal(tnbc_profile_recv_prio(s, 2, 3), 3); /* rank 2 reads in index order */
    assert_int_equal(tnbc_profile_send_prio(s, 3, 0), 0);
    assert_int_equal(tnbc_profile_send_prio(s, 3, 2), 3);
    assert_int_equal(tnbc_profile_recv_prio(s, 4, 0), -1);
    assert_int_equal(tnbc_profile_recv_prio(s, 0, 4), -1);
    assert_int_equal(tnbc_profile_node_phase(s, 1), 0);
    assert_int_equal(tnbc_profile_node_phase(s, 0), 1);
    assert_int_equal(tnbc_profile_node_phase(s, 2), 1);
    const struct tnbc_profile_site *b = tnbc_profile_find(p, "lib%.so+0x10", "bcast");
    assert_int_equal(tnbc_profile_recv_prio(b, 3, 2), 2);
    assert_int_equal(tnbc_profile_send_prio(b, 0, 1), 1);
    assert_int_equal(tnbc_profile_node_phase(b, 0), 0);
    tnbc_profile_free(p);
}

static void test_check(void **state)
{
    (void)state;
    char err[TNBC_PROFILE_ERRLEN];
    struct tnbc_profile *p = parse_good();
    const struct tnbc_profile_site *s = tnbc_profile_find(p, "app+0x1a2b", "alltoall");
    assert_int_equal(tnbc_profile_check(p, s, 4, 1048576, 0, NULL, err, sizeof err), 0);
    assert_int_equal(tnbc_profile_check(p, s, 8, 1048576, 0, NULL, err, sizeof err), -1);
    assert_string_equal(err, "good.profile:7: site app+0x1a2b alltoall: communicator size 8 "
                             "in the running call, 4 in the profile; running it blocking");
    assert_int_equal(tnbc_profile_check(p, s, 4, 4096, 0, NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "block size 4096 B in the running call, 1048576 B"));
    const struct tnbc_profile_site *v = tnbc_profile_find(p, "app+0x99", "alltoallv");
    int64_t ok[4] = {100, 200, 300, 400}, other[4] = {100, 200, 300, 401};
    assert_int_equal(tnbc_profile_check(p, v, 4, -1, 1, ok, err, sizeof err), 0);
    assert_int_equal(tnbc_profile_check(p, v, 4, 512, 1, ok, err, sizeof err), 0);
    assert_int_equal(tnbc_profile_check(p, v, 4, -1, 0, other, err, sizeof err), 0);
    assert_int_equal(tnbc_profile_check(p, v, 4, -1, 1, other, err, sizeof err), -1);
    assert_non_null(strstr(err, "good.profile:42: site app+0x99 alltoallv: per-source sizes"));
    assert_int_equal(tnbc_profile_check(p, NULL, 4, 0, 0, NULL, err, sizeof err), -1);
    /* Varying one-size blocks: the traced 40000-90000 B, taken within a
     * factor 2 (20000..180000); -1 (a rank that receives nothing) passes. */
    const struct tnbc_profile_site *g = tnbc_profile_find(p, "app+0x77", "allgather");
    assert_true(g->has_block_range && g->block_min == 40000 && g->block_max == 90000);
    assert_int_equal(tnbc_profile_check(p, g, 2, 20000, 0, NULL, err, sizeof err), 0);
    assert_int_equal(tnbc_profile_check(p, g, 2, 65536, 1, NULL, err, sizeof err), 0);
    assert_int_equal(tnbc_profile_check(p, g, 2, 180000, 1, NULL, err, sizeof err), 0);
    assert_int_equal(tnbc_profile_check(p, g, 2, -1, 1, NULL, err, sizeof err), 0);
    assert_int_equal(tnbc_profile_check(p, g, 2, 19999, 0, NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "block size 19999 B in the running call, traced sizes "
                                "40000-90000 B (taken within a factor 2 of them)"));
    assert_int_equal(tnbc_profile_check(p, g, 2, 180001, 0, NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "block size 180001 B"));
    assert_false(tnbc_profile_find(p, "app+0x1a2b", "alltoall")->has_block_range);
    tnbc_profile_free(p);
    /* A site id with a decoded newline still gives a one-line message. */
    char *text = mutate("site app+0x1a2b alltoall", "site app%0A+0x1a2b alltoall");
    p = tnbc_profile_parse(text, strlen(text), "nl.profile", err, sizeof err);
    assert_non_null(p);
    assert_int_equal(tnbc_profile_check(p, &p->sites[0], 2, 0, 0, NULL, err, sizeof err), -1);
    assert_null(strchr(err, '\n'));
    assert_non_null(strstr(err, "site app?+0x1a2b alltoall"));
    tnbc_profile_free(p);
    free(text);
}

struct bad {
    const char *from, *to; /* mutation of the good profile (from NULL: `to` is all) */
    const char *want;      /* expected message, after "bad.profile:" */
};

static const struct bad bads[] = {
    {NULL, "", "1: empty file"},
    {NULL, "# only a comment\n", "2: empty file"},
    {"tnbc-profile 1", "tnbc-profile 2", "1: unknown profile version 2 (this reader knows version 1)"},
    {"tnbc-profile 1", "hello", "1: not a tnbc profile"},
    {"world_size 4", "world_size four", "3: world_size: 'four' is not an integer"},
    {"world_size 4", "world_size 0", "3: world_size: 0 is outside 1..1048576"},
    {"source run%20one.db", "source run%2", "4: source: bad %-escape"},
    /* found by the fuzzer: a decoded newline must not reach the message */
    {"source run%20one.db", "source run%0AAAA%f_", "4: source: bad %-escape at byte 10"},
    {"world_size 4", "world_size 4\x01", "3: world_size: '4?' is not an integer"},
    {"  comm_size 4\n  block_bytes 1048576", "  comm_size 5\n  block_bytes 1048576",
     "8: comm_size: 5 is outside 1..4"},
    {"  chunks 0\n  calls 100", "  chunks 2\n  calls 100", "10: chunks: alltoall has one block"},
    {"  chunks 4", "  chunks 0", "32: chunks: bcast is a single-block operation"},
    {"calls 100 traced 8", "calls 100 traced 800", "11: traced: 800 is outside 0..100"},
    {"decision on", "decision maybe", "12: decision: 'maybe' is neither 'on' nor 'off'"},
    {"order consensus 3 1 2 0", "order consensus 3 1 2 2", "13: order: block 2 appears twice"},
    {"order consensus 3 1 2 0", "order consensus 3 1 2", "13: order: 4 block indices expected, found 3"},
    {"order consensus", "order best", "13: order: unknown kind 'best'"},
    {"tau 1 samples", "tau 2 samples", "14: tau: 2 is outside -1..1"},
    {"regime c\n", "regime z\n", "15: model: regime 'z' is not one of a b c d e -"},
    {"tcomm_ns 1001000 dcomm", "tcomm_ns inf dcomm", "15: tcomm_ns: inf is not allowed here"},
    {"tcomm_ns 1001000 dcomm", "dcomm 1001000 tcomm_ns", "15: model: expected 'tcomm_ns'"},
    {"rcrc 1.048576e+10", "rcrc nan", "15: rcrc: 'nan' is not a number"},
    {"  recv_prio 2 0 1 2 3\n", "", "26: site 'app+0x1a2b' alltoall: no recv_prio line for rank 2"},
    {"  recv_prio 2 0 1 2 3\n", "  recv_prio 2 0 1 2 9\n", "19: recv_prio: 9 is outside -1..3"},
    {"  recv_prio 2 0 1 2 3\n", "  recv_prio 1 0 1 2 3\n", "19: recv_prio: rank 1 given twice"},
    {"  send_prio 1 1 1 1 1\n", "  send_prio 1 1 1 1\n", "22: send_prio: 4 priorities expected, found 3"},
    {"  recv_prio * 0 1 2 3\n", "  recv_prio 0 0 1 2 3\n", "38: recv_prio: a single-block operation"},
    {"  node A 1 0\n", "  node A 1 3\n", "26: node: rank 3 is on two nodes"},
    {"  node A 1 0\n", "  bogus 1\n", "25: unknown keyword 'bogus'"},
    {"  vhash 1", "  vhash 1 0x12\n  x", "52: vhash: '0x12' is not 0x and 16 hex digits"},
    {"site app+0x99 alltoallv", "site app+0x1a2b alltoall", "42: site 'app+0x1a2b' alltoall appears twice"},
    {"site app+0x99 alltoallv", "site app+0x99 alltoallz", "42: site: unknown operation 'alltoallz'"},
    {"site app+0x99 alltoallv\n", "site app+0x99 alltoallv\nend\n", "43: expected 'comm_size', found 'end'"},
    {"world_size 4\n", "world_size 4\r\n", "3: carriage return"},
    {"piece 32768", "piece -1", "5: piece: -1 is outside 0..1073741824"},
    {"  vhash 1", "  measured early 1 checked 1 cycle_early_ns 1 cycle_blocking_ns 1 saving_call_ns 0 z 0\n  vhash 1",
     "52: measured: a second 'measured' line in site 'app+0x99'"},
    {"measured early 40", "measured early -40", "51: early: -40 is outside 0.."},
    {"checked 6 cycle_early_ns", "checked 6 cycle_late_ns", "51: measured: expected 'cycle_early_ns' as key 3"},
    {" z 3.25\n", "\n", "51: measured: expected 'measured early E checked B"},
    {"piece 32768", "piece 32k", "5: piece: '32k' is not an integer"},
    {"piece 32768", "piece 1 2", "5: 'piece' takes one value (bytes)"},
    {"site app+0x99 alltoallv\n", "piece 4096\nsite app+0x99 alltoallv\n", "42: expected 'site', found 'piece'"},
    {"  block_range 40000 90000", "  block_range 90000 40000", "72: block_range: 40000 is outside 90000..9007199254740992"},
    {"  block_range 40000 90000", "  block_range -1 90000", "72: block_range: -1 is outside 0.."},
    {"  block_range 40000 90000", "  block_range 40000", "72: block_range: expected 'block_range MIN MAX'"},
    {"  block_range 40000 90000", "  block_range 1 2\n  block_range 1 2", "73: block_range: a second 'block_range' line in site 'app+0x77'"},
    {"  node A 1 0\n", "  block_range 1 2\n", "25: block_range: only for sites with varying blocks (block_bytes -1)"},
    {"regime a\n  recv_prio *", "regime a\n  trial 1\n  recv_prio *", "38: trial: takes no values"},
    {"regime a\n  recv_prio *", "regime a\n  trial\n  trial\n  recv_prio *", "39: trial: a second 'trial' line in site 'lib%.so+0x10'"},
};

static void test_bad_profiles(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof bads / sizeof bads[0]; i++) {
        char err[TNBC_PROFILE_ERRLEN] = "", want[300];
        char *text = bads[i].from ? mutate(bads[i].from, bads[i].to) : strdup(bads[i].to);
        struct tnbc_profile *p = tnbc_profile_parse(text, strlen(text), "bad.profile", err,
                                                    sizeof err);
        snprintf(want, sizeof want, "bad.profile:%s", bads[i].want);
        if (p || strncmp(err, want, strlen(want)) != 0 || strchr(err, '\n'))
            fail_msg("case %zu: want '%s...', got %s '%s'", i, want, p ? "a profile," : "",
                     err);
        free(text);
    }
}

/* A prefix of the good profile is a valid profile only when it stops right
 * after the header or after a site's `end` (and blank lines). */
static int complete_prefix(const char *t, size_t n)
{
    while (n > 0 && t[n - 1] == '\n')
        n--;
    size_t start = n;
    while (start > 0 && t[start - 1] != '\n')
        start--;
    return (n - start == 3 && strncmp(t + start, "end", 3) == 0) ||
           strncmp(t + start, "source ", 7) == 0 || strncmp(t + start, "piece ", 6) == 0;
}

static void test_truncated(void **state)
{
    (void)state;
    size_t n = strlen(good);
    for (size_t cut = 0; cut < n; cut++) {
        char err[TNBC_PROFILE_ERRLEN] = "";
        struct tnbc_profile *p = tnbc_profile_parse(good, cut, "cut.profile", err, sizeof err);
        int line_end = cut > 0 && good[cut - 1] == '\n';
        int valid = line_end && complete_prefix(good, cut);
        if (valid && !p)
            fail_msg("cut %zu: complete prefix refused: %s", cut, err);
        if (!valid && p)
            fail_msg("cut %zu: truncated profile accepted", cut);
        if (!p && strncmp(err, "cut.profile:", 12) != 0)
            fail_msg("cut %zu: message '%s' does not name the file", cut, err);
        if (!p && !line_end && cut > 0 && !strstr(err, "truncated"))
            fail_msg("cut %zu mid-line: message '%s' does not say truncated", cut, err);
        tnbc_profile_free(p);
    }
}

static void test_nul_and_files(void **state)
{
    (void)state;
    char err[TNBC_PROFILE_ERRLEN] = "", path[128];
    char buf[] = "tnbc-profile 1\nworld_size 4\0\nsource x\n";
    assert_null(tnbc_profile_parse(buf, sizeof buf - 1, "nul.profile", err, sizeof err));
    assert_string_equal(err, "nul.profile:2: NUL byte in line (not a text profile?)");
    snprintf(path, sizeof path, "%s/missing.profile", tmpdir);
    assert_null(tnbc_profile_load(path, err, sizeof err));
    assert_non_null(strstr(err, "missing.profile:0: cannot open: No such file"));
    /* A message longer than the caller's buffer is cut, not overflowed. */
    char tiny[16];
    assert_null(tnbc_profile_parse("x\n", 2, "a-long-name.profile", tiny, sizeof tiny));
    assert_int_equal(strlen(tiny), sizeof tiny - 1);
}

static void test_vhash(void **state)
{
    (void)state;
    int64_t v[4] = {100, 200, 300, 400};
    assert_true(tnbc_profile_vhash(v, 4) == 0x3addc9c9d5ff7e55ULL);
    assert_true(tnbc_profile_vhash(v, 0) == 0xcbf29ce484222325ULL);
}

/* `test_profile --rewrite IN OUT`: the strict reader on a profile made by
 * tnbc-analyze, and the writer on what it read (used by test_analyzer.py). */
static int rewrite(const char *in, const char *out)
{
    char err[TNBC_PROFILE_ERRLEN];
    struct tnbc_profile *p = tnbc_profile_load(in, err, sizeof err);
    if (!p || tnbc_profile_write(p, out, err, sizeof err) < 0) {
        fprintf(stderr, "%s\n", err);
        tnbc_profile_free(p);
        return 1;
    }
    tnbc_profile_free(p);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--rewrite") == 0)
        return rewrite(argv[2], argv[3]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fields),        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_priorities),    cmocka_unit_test(test_check),
        cmocka_unit_test(test_bad_profiles),  cmocka_unit_test(test_truncated),
        cmocka_unit_test(test_nul_and_files), cmocka_unit_test(test_vhash),
        cmocka_unit_test(test_piece),         cmocka_unit_test(test_measured),
        cmocka_unit_test(test_trial),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
