// SPDX-License-Identifier: BSD-3-Clause
/* Unit tests for core/collective: chunk splitting and the sub-message
 * layout of every handled operation, on both sides, for the root and the
 * other ranks, with MPI_IN_PLACE and derived datatypes.
 *
 * Needs MPI initialised (datatype and communicator queries); no test
 * communicates except the inter-communicator set-up, which every rank
 * reaches. test/core.sh runs it under mpirun with 4 ranks so that each
 * rank checks its own role; run alone (singleton MPI_Init), only the root
 * role is exercised. Rank 0 prints the TAP report; the other ranks report
 * failures on stderr and through the exit status. */
#include "collective.h"
#include "dtype.h"

#include <mpi.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

static int p, r;     /* size of and rank in MPI_COMM_WORLD */

/* Buffers are only used as addresses. */
static char rbuf[1 << 16], sbuf[1 << 16];

static struct tnbc_args args(enum tnbc_op op)
{
    return (struct tnbc_args){ .op = op, .sendbuf = sbuf, .recvbuf = rbuf, .stype = MPI_INT,
                               .rtype = MPI_INT, .mpi_op = MPI_SUM, .root = -1,
                               .comm = MPI_COMM_WORLD };
}

static void build(const struct tnbc_args *a, int chunks, struct tnbc_call_layout *l)
{
    const char *why = "not set";
    int rc = tnbc_layout_build(a, chunks, l, &why);
    if (rc != 0)
        fail_msg("tnbc_layout_build(%s) failed: %s", tnbc_op_name(a->op), why);
    assert_null(why);
    assert_int_equal(l->comm_size, p);
    assert_int_equal(l->comm_rank, r);
}

static void expect_absent(const struct tnbc_layout *s)
{
    assert_null(s->base);
    assert_int_equal(s->nsub, 0);
    assert_int_equal(s->span, 0);
}

static void expect_sub(const struct tnbc_layout *s, int i, size_t offset, size_t bytes, int peer)
{
    assert_true(i < s->nsub);
    assert_int_equal(s->sub[i].offset, offset);
    assert_int_equal(s->sub[i].bytes, bytes);
    assert_int_equal(s->sub[i].idx, i);
    assert_int_equal(s->sub[i].peer, peer);
}

/* One block of `each` bytes per rank, back to back from base. */
static void expect_per_peer(const struct tnbc_layout *s, const char *base, size_t each)
{
    assert_ptr_equal(s->base, base);
    assert_int_equal(s->nsub, p);
    assert_int_equal(s->span, (size_t)p * each);
    assert_int_equal(s->bytes, (size_t)p * each);
    assert_int_equal(s->block_bytes, (long)each);
    for (int i = 0; i < p; i++)
        expect_sub(s, i, (size_t)i * each, each, i);
}

/* One sub-message for the whole buffer. */
static void expect_whole(const struct tnbc_layout *s, const char *base, size_t bytes)
{
    assert_ptr_equal(s->base, base);
    assert_int_equal(s->nsub, 1);
    assert_int_equal(s->span, bytes);
    assert_int_equal(s->bytes, bytes);
    expect_sub(s, 0, 0, bytes, -1);
}

/* `count` ints in the chunks of tnbc_chunk_split. */
static void expect_chunks(const struct tnbc_call_layout *l, const char *base, long count, int m)
{
    long first[64], n[64];
    int k = tnbc_chunk_split(count, m > 64 ? 64 : m, first, n);   /* the layout caps m at 64 */
    const struct tnbc_layout *s = &l->recv;
    assert_ptr_equal(s->base, base);
    assert_int_equal(s->nsub, k);
    assert_int_equal(l->chunks, k);
    assert_int_equal(s->span, (size_t)count * 4);
    assert_int_equal(s->bytes, (size_t)count * 4);
    for (int j = 0; j < k; j++)
        expect_sub(s, j, (size_t)first[j] * 4, (size_t)n[j] * 4, -1);
}

/* ---- chunk split, names ------------------------------------------------ */

static void expect_split(long count, int m, int k_want, const long *n_want)
{
    long first[64], n[64];
    int k = tnbc_chunk_split(count, m, first, n);
    assert_int_equal(k, k_want);
    long at = 0;
    for (int j = 0; j < k; j++) {
        assert_int_equal(first[j], at);               /* contiguous, in order */
        if (n_want)
            assert_int_equal(n[j], n_want[j]);
        at += n[j];
    }
    if (k)
        assert_int_equal(at, count);                  /* covers everything */
}

static void test_chunk_split(void **state)
{
    (void)state;
    expect_split(10, 4, 4, (long[]){ 2, 3, 2, 3 });
    expect_split(12, 4, 4, (long[]){ 3, 3, 3, 3 });
    expect_split(10, 3, 3, (long[]){ 3, 3, 4 });
    expect_split(3, 4, 3, (long[]){ 1, 1, 1 });        /* fewer elements than chunks */
    expect_split(1, 1, 1, (long[]){ 1 });
    expect_split(64, 64, 64, NULL);
    expect_split(0, 4, 0, NULL);
    expect_split(-5, 4, 0, NULL);
    expect_split(10, 0, 0, NULL);
    expect_split(10, -1, 0, NULL);

    /* Large counts: sizes differ by at most one element, no overflow. */
    long first[64], n[64], big = 1000000000039L;
    assert_int_equal(tnbc_chunk_split(big, 7, first, n), 7);
    long lo = n[0], hi = n[0];
    for (int j = 0; j < 7; j++) {
        lo = n[j] < lo ? n[j] : lo;
        hi = n[j] > hi ? n[j] : hi;
    }
    assert_true(hi - lo <= 1);
    assert_int_equal(first[6] + n[6], big);
}

static void test_op_names(void **state)
{
    (void)state;
    for (int op = 0; op < TNBC_OP_COUNT; op++)
        assert_int_equal(tnbc_op_from_name(tnbc_op_name(op)), op);
    assert_string_equal(tnbc_op_name(TNBC_ALLTOALLV), "alltoallv");
    assert_string_equal(tnbc_op_name(TNBC_OP_COUNT), "?");
    assert_int_equal(tnbc_op_from_name("alltoallw"), -1);
    assert_int_equal(tnbc_op_from_name(""), -1);
    assert_string_equal(tnbc_op_name(TNBC_REDUCE_SCATTER_BLOCK), "reduce_scatter_block");
    int chunked[] = { TNBC_BCAST, TNBC_ALLREDUCE, TNBC_REDUCE, TNBC_SCATTER, TNBC_SCATTERV,
                      TNBC_REDUCE_SCATTER_BLOCK, TNBC_REDUCE_SCATTER };
    int n = 0;
    for (int op = 0; op < TNBC_OP_COUNT; op++)
        n += tnbc_op_is_chunked(op);
    assert_int_equal(n, 7);
    for (int i = 0; i < 7; i++)
        assert_true(tnbc_op_is_chunked(chunked[i]));
}

/* ---- per-peer operations ----------------------------------------------- */

static void test_alltoall(void **state)
{
    (void)state;
    struct tnbc_call_layout l;
    struct tnbc_args a = args(TNBC_ALLTOALL);
    a.scount = 3;
    a.rcount = 3;
    build(&a, 4, &l);
    expect_per_peer(&l.recv, rbuf, 12);
    expect_per_peer(&l.send, sbuf, 12);
    assert_int_equal(l.chunks, 0);
    assert_int_equal(l.send_type_size, 4);
    assert_int_equal(l.recv_type_size, 4);
    tnbc_layout_free(&l);
    assert_null(l.recv.sub);
    assert_null(l.send.sub);

    a.sendbuf = MPI_IN_PLACE;
    build(&a, 4, &l);
    expect_per_peer(&l.recv, rbuf, 12);
    expect_absent(&l.send);
    tnbc_layout_free(&l);
}

/* Counts and displacements per peer: reversed blocks with gaps, an empty
 * block, and a send side that starts inside its buffer. */
static void test_alltoallv(void **state)
{
    (void)state;
    struct tnbc_call_layout l;
    struct tnbc_args a = args(TNBC_ALLTOALLV);
    int *rc = calloc((size_t)p, sizeof *rc), *rd = calloc((size_t)p, sizeof *rd);
    int *sc = calloc((size_t)p, sizeof *sc), *sd = calloc((size_t)p, sizeof *sd);
    size_t bytes = 0, end = 0;
    assert_true(rc && rd && sc && sd);
    for (int i = 0; i < p; i++) {
        rc[i] = (p > 2 && i == 1) ? 0 : i + 1;
        rd[i] = (p - 1 - i) * 10;
        sc[i] = 2;
        sd[i] = 5 + 2 * i;
        bytes += (size_t)rc[i] * 8;
        if (rc[i] && (size_t)(rd[i] + rc[i]) * 8 > end)
            end = (size_t)(rd[i] + rc[i]) * 8;
    }
    a.rtype = a.stype = MPI_DOUBLE;
    a.rcounts = rc;
    a.rdispls = rd;
    a.scounts = sc;
    a.sdispls = sd;
    build(&a, 4, &l);

    assert_ptr_equal(l.recv.base, rbuf);            /* block p-1 is at 0 */
    assert_int_equal(l.recv.nsub, p);
    assert_int_equal(l.recv.bytes, bytes);
    assert_int_equal(l.recv.span, end);
    assert_int_equal(l.recv.block_bytes, p == 1 ? 8 : -1);
    assert_int_equal(l.recv_type_size, 8);
    for (int i = 0; i < p; i++) {
        if (rc[i])
            expect_sub(&l.recv, i, (size_t)rd[i] * 8, (size_t)rc[i] * 8, i);
        else
            expect_sub(&l.recv, i, 0, 0, i);         /* empty block */
    }
    assert_ptr_equal(l.send.base, sbuf + 5 * 8);
    assert_int_equal(l.send.span, (size_t)p * 16);
    assert_int_equal(l.send.block_bytes, 16);
    for (int i = 0; i < p; i++)
        expect_sub(&l.send, i, (size_t)i * 16, 16, i);
    tnbc_layout_free(&l);

    a.sendbuf = MPI_IN_PLACE;
    build(&a, 4, &l);
    expect_absent(&l.send);
    assert_int_equal(l.recv.nsub, p);
    tnbc_layout_free(&l);
    free(rc); free(rd); free(sc); free(sd);
}

static void test_allgather(void **state)
{
    (void)state;
    struct tnbc_call_layout l;
    struct tnbc_args a = args(TNBC_ALLGATHER);
    a.scount = 5;
    a.rcount = 5;
    build(&a, 4, &l);
    expect_per_peer(&l.recv, rbuf, 20);
    expect_whole(&l.send, sbuf, 20);
    tnbc_layout_free(&l);

    a.sendbuf = MPI_IN_PLACE;
    build(&a, 4, &l);
    expect_per_peer(&l.recv, rbuf, 20);
    expect_absent(&l.send);
    tnbc_layout_free(&l);

    /* allgatherv: blocks in reverse order. */
    int *rc = calloc((size_t)p, sizeof *rc), *rd = calloc((size_t)p, sizeof *rd);
    assert_true(rc && rd);
    for (int i = 0; i < p; i++) {
        rc[i] = 4;
        rd[i] = (p - 1 - i) * 4;
    }
    a = args(TNBC_ALLGATHERV);
    a.scount = 4;
    a.rcounts = rc;
    a.rdispls = rd;
    build(&a, 4, &l);
    assert_ptr_equal(l.recv.base, rbuf);
    assert_int_equal(l.recv.span, (size_t)p * 16);
    assert_int_equal(l.recv.block_bytes, 16);
    for (int i = 0; i < p; i++)
        expect_sub(&l.recv, i, (size_t)(p - 1 - i) * 16, 16, i);
    expect_whole(&l.send, sbuf, 16);
    tnbc_layout_free(&l);
    free(rc); free(rd);
}

/* Gather: only the root has a receive side; every rank sends. */
static void check_gather(int root)
{
    struct tnbc_call_layout l;
    struct tnbc_args a = args(TNBC_GATHER);
    a.scount = 2;
    a.rcount = 2;
    a.root = root;
    build(&a, 4, &l);
    if (r == root)
        expect_per_peer(&l.recv, rbuf, 8);
    else
        expect_absent(&l.recv);
    expect_whole(&l.send, sbuf, 8);
    assert_int_equal(l.chunks, 0);
    tnbc_layout_free(&l);

    if (r == root) {                     /* MPI_IN_PLACE is the root's */
        a.sendbuf = MPI_IN_PLACE;
        build(&a, 4, &l);
        expect_per_peer(&l.recv, rbuf, 8);
        expect_absent(&l.send);
        tnbc_layout_free(&l);
    }
}

static void test_gather_root_and_not(void **state)
{
    (void)state;
    check_gather(0);
    check_gather(p - 1);

    /* gatherv at the root: counts and displacements of the root. */
    int *rc = calloc((size_t)p, sizeof *rc), *rd = calloc((size_t)p, sizeof *rd);
    struct tnbc_call_layout l;
    struct tnbc_args a = args(TNBC_GATHERV);
    assert_true(rc && rd);
    for (int i = 0; i < p; i++) {
        rc[i] = 1;
        rd[i] = 3 * i + 1;
    }
    a.scount = 1;
    a.rcounts = rc;
    a.rdispls = rd;
    a.root = 0;
    build(&a, 4, &l);
    if (r == 0) {
        assert_ptr_equal(l.recv.base, rbuf + 4);
        assert_int_equal(l.recv.span, (size_t)(3 * (p - 1) + 1) * 4);
        for (int i = 0; i < p; i++)
            expect_sub(&l.recv, i, (size_t)i * 12, 4, i);
    } else {
        expect_absent(&l.recv);
    }
    expect_whole(&l.send, sbuf, 4);
    tnbc_layout_free(&l);
    free(rc); free(rd);
}

/* Scatter: the root's send side per destination; the receive side in m
 * chunks on every rank (the root's unless it is MPI_IN_PLACE). */
static void check_scatter(int root)
{
    struct tnbc_call_layout l;
    struct tnbc_args a = args(TNBC_SCATTER);
    a.scount = 10;
    a.rcount = 10;
    a.root = root;
    build(&a, 4, &l);
    expect_chunks(&l, rbuf, 10, 4);
    if (r == root)
        expect_per_peer(&l.send, sbuf, 40);
    else
        expect_absent(&l.send);
    tnbc_layout_free(&l);

    if (r == root) {
        a.recvbuf = MPI_IN_PLACE;
        build(&a, 4, &l);
        expect_absent(&l.recv);
        assert_int_equal(l.chunks, 0);
        expect_per_peer(&l.send, sbuf, 40);
        tnbc_layout_free(&l);
    }
}

static void test_scatter_root_and_not(void **state)
{
    (void)state;
    check_scatter(0);
    check_scatter(p - 1);

    /* scatterv: the root's blocks of 3 ints at displacements 4i + 2. */
    int *sc = calloc((size_t)p, sizeof *sc), *sd = calloc((size_t)p, sizeof *sd);
    struct tnbc_call_layout l;
    struct tnbc_args a = args(TNBC_SCATTERV);
    assert_true(sc && sd);
    for (int i = 0; i < p; i++) {
        sc[i] = 3;
        sd[i] = 4 * i + 2;
    }
    a.scounts = sc;
    a.sdispls = sd;
    a.rcount = 3;
    a.root = 0;
    build(&a, 4, &l);
    expect_chunks(&l, rbuf, 3, 4);                  /* 3 elements: 3 chunks */
    if (r == 0) {
        assert_ptr_equal(l.send.base, sbuf + 8);
        assert_int_equal(l.send.span, (size_t)(4 * (p - 1) + 3) * 4);
        for (int i = 0; i < p; i++)
            expect_sub(&l.send, i, (size_t)i * 16, 12, i);
    } else {
        expect_absent(&l.send);
    }
    tnbc_layout_free(&l);
    free(sc); free(sd);
}

/* Reduce_scatter: each rank receives its own count (rank i: 10 + i ints)
 * in m chunks and sends every rank's block as one piece; in place, the
 * send side is absent. Reduce_scatter_block: 6 ints each. */
static void test_reduce_scatter(void **state)
{
    (void)state;
    int *counts = calloc((size_t)p, sizeof *counts);
    long total = 0;
    struct tnbc_call_layout l;
    assert_non_null(counts);
    for (int i = 0; i < p; i++)
        total += counts[i] = 10 + i;
    struct tnbc_args a = args(TNBC_REDUCE_SCATTER);
    a.rcounts = counts;
    a.mpi_op = MPI_SUM;
    build(&a, 4, &l);
    expect_chunks(&l, rbuf, 10 + r, 4);
    expect_whole(&l.send, sbuf, (size_t)total * 4);
    tnbc_layout_free(&l);
    a.sendbuf = MPI_IN_PLACE;
    build(&a, 4, &l);
    expect_chunks(&l, rbuf, 10 + r, 4);
    expect_absent(&l.send);
    tnbc_layout_free(&l);
    a = args(TNBC_REDUCE_SCATTER_BLOCK);
    a.rcount = 6;
    a.mpi_op = MPI_SUM;
    build(&a, 4, &l);
    expect_chunks(&l, rbuf, 6, 4);
    expect_whole(&l.send, sbuf, (size_t)p * 6 * 4);
    tnbc_layout_free(&l);
    free(counts);
}

/* Bcast: the root's buffer is its send side (one piece); the others
 * receive it in m chunks. */
static void check_bcast(int root, long count, int m)
{
    struct tnbc_call_layout l;
    struct tnbc_args a = args(TNBC_BCAST);
    a.sendbuf = NULL;
    a.stype = MPI_DATATYPE_NULL;
    a.rcount = (int)count;
    a.root = root;
    build(&a, m, &l);
    if (r == root) {
        expect_absent(&l.recv);
        assert_int_equal(l.chunks, 0);
        expect_whole(&l.send, rbuf, (size_t)count * 4);
    } else {
        expect_chunks(&l, rbuf, count, m);
        expect_absent(&l.send);
    }
    tnbc_layout_free(&l);
}

static void test_bcast_root_and_not(void **state)
{
    (void)state;
    check_bcast(0, 1000, 4);
    check_bcast(p - 1, 1000, 4);
    check_bcast(p - 1, 10, 3);
    check_bcast(p - 1, 2, 4);            /* fewer elements than chunks */
    check_bcast(p - 1, 1000, 200);       /* more than 64 chunks asked: 64 */
    if (r != p - 1) {
        struct tnbc_call_layout l;
        struct tnbc_args a = args(TNBC_BCAST);
        a.rcount = 1000;
        a.root = p - 1;
        build(&a, 200, &l);
        assert_int_equal(l.recv.nsub, 64);
        tnbc_layout_free(&l);
    }
}

static void test_allreduce_and_reduce(void **state)
{
    (void)state;
    struct tnbc_call_layout l;
    struct tnbc_args a = args(TNBC_ALLREDUCE);
    a.rcount = 100;
    a.stype = MPI_DATATYPE_NULL;         /* the receive type describes both */
    build(&a, 4, &l);
    expect_chunks(&l, rbuf, 100, 4);
    expect_whole(&l.send, sbuf, 400);
    tnbc_layout_free(&l);

    a.sendbuf = MPI_IN_PLACE;
    build(&a, 4, &l);
    expect_chunks(&l, rbuf, 100, 4);
    expect_absent(&l.send);
    tnbc_layout_free(&l);

    for (int root = 0; root < p; root += (p > 1 ? p - 1 : 1)) {
        a = args(TNBC_REDUCE);
        a.rcount = 100;
        a.root = root;
        build(&a, 5, &l);
        if (r == root)
            expect_chunks(&l, rbuf, 100, 5);
        else
            expect_absent(&l.recv);
        expect_whole(&l.send, sbuf, 400);
        tnbc_layout_free(&l);
    }
}

/* ---- derived datatypes: the footprint is the true extent --------------- */

static void test_derived_vector(void **state)
{
    (void)state;
    MPI_Datatype vec;
    struct tnbc_call_layout l;
    struct tnbc_args a = args(TNBC_ALLTOALL);
    /* 3 blocks of 2 ints, stride 5 ints: size 24, extent = true extent 48. */
    MPI_Type_vector(3, 2, 5, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    a.rtype = vec;
    a.rcount = 2;                         /* per block: 48 + 48 bytes */
    a.scount = 2;
    a.stype = vec;
    build(&a, 4, &l);
    assert_int_equal(l.recv_type_size, 24);
    assert_int_equal(l.recv.block_bytes, 48);            /* payload, not footprint */
    assert_int_equal(l.recv.bytes, (size_t)p * 48);
    assert_int_equal(l.recv.span, (size_t)p * 96);
    for (int i = 0; i < p; i++)
        expect_sub(&l.recv, i, (size_t)i * 96, 96, i);
    tnbc_layout_free(&l);
    MPI_Type_free(&vec);
}

/* A type whose data starts 16 bytes in and whose extent (24) is larger than
 * its data (8): each block's footprint is its 8 data bytes, and the layout's
 * base is the first of them, not the buffer pointer. */
static void test_derived_true_lb(void **state)
{
    (void)state;
    MPI_Datatype hi, t;
    int len = 2;
    MPI_Aint disp = 16;
    struct tnbc_call_layout l;
    struct tnbc_args a = args(TNBC_ALLGATHER);
    MPI_Type_create_hindexed(1, &len, &disp, MPI_INT, &hi);
    MPI_Type_create_resized(hi, 0, 24, &t);
    MPI_Type_commit(&t);
    a.rtype = t;
    a.rcount = 1;
    a.stype = t;
    a.scount = 1;
    build(&a, 4, &l);
    assert_ptr_equal(l.recv.base, rbuf + 16);
    assert_int_equal(l.recv.span, (size_t)(p - 1) * 24 + 8);
    assert_int_equal(l.recv.block_bytes, 8);
    for (int i = 0; i < p; i++)
        expect_sub(&l.recv, i, (size_t)i * 24, 8, i);
    assert_ptr_equal(l.send.base, sbuf + 16);
    assert_int_equal(l.send.span, 8);
    tnbc_layout_free(&l);

    /* Bcast chunks of this type: chunk j starts at first[j] * 24 + 16. */
    a = args(TNBC_BCAST);
    a.rtype = t;
    a.rcount = 8;
    a.root = p - 1;
    if (r != p - 1) {
        build(&a, 4, &l);
        assert_ptr_equal(l.recv.base, rbuf + 16);
        for (int j = 0; j < 4; j++)
            expect_sub(&l.recv, j, (size_t)j * 48, 24 + 8, -1);
        tnbc_layout_free(&l);
    }
    MPI_Type_free(&t);
    MPI_Type_free(&hi);
}

/* ---- refusals ------------------------------------------------------------ */

static void expect_refused(const struct tnbc_args *a, const char *want)
{
    struct tnbc_call_layout l;
    const char *why = NULL;
    assert_int_equal(tnbc_layout_build(a, 4, &l, &why), -1);
    assert_non_null(why);
    assert_string_equal(why, want);
    assert_null(l.recv.sub);              /* nothing left to free */
    assert_null(l.send.sub);
    tnbc_layout_free(&l);                 /* and freeing again is harmless */
}

static void test_refusals(void **state)
{
    (void)state;
    struct tnbc_args a;
    /* An inter-communicator (needs two ranks). First, so that every rank
     * reaches the collective set-up even if a check below fails. */
    if (p >= 2) {
        MPI_Comm half, inter;
        MPI_Comm_split(MPI_COMM_WORLD, r % 2, r, &half);
        MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, r % 2 ? 0 : 1, 77, &inter);
        a = args(TNBC_ALLTOALL);
        a.rcount = a.scount = 1;
        a.comm = inter;
        expect_refused(&a, "inter-communicator");
        MPI_Comm_free(&inter);
        MPI_Comm_free(&half);
    }

    a = args(TNBC_ALLTOALL);
    a.rcount = a.scount = 1;
    a.rtype = MPI_DATATYPE_NULL;
    expect_refused(&a, "invalid datatype or out of memory");
    a = args(TNBC_ALLTOALL);
    a.rcount = a.scount = 1;
    a.stype = MPI_DATATYPE_NULL;          /* fails after the receive side was built */
    expect_refused(&a, "invalid datatype or out of memory");
    a = args(TNBC_OP_COUNT);
    expect_refused(&a, "unknown operation");
}

/* ---- which calls may return early ------------------------------------------ */

static int transformable(const struct tnbc_args *a, const char **why)
{
    struct tnbc_call_layout l;
    build(a, 4, &l);
    *why = NULL;
    int ok = tnbc_call_transformable(a, &l, why);
    tnbc_layout_free(&l);
    return ok;
}

/* Dense: bytes in type-map order, no holes. An indexed type of the same
 * geometry listing its blocks backwards is not (its bytes travel in
 * another order than they lie). */
static void test_type_is_dense(void **state)
{
    (void)state;
    MPI_Datatype c4, cc, vec, back, fwd, pair;
    int bl[2] = { 1, 1 }, rev[2] = { 1, 0 }, in_order[2] = { 0, 1 };
    MPI_Type_contiguous(4, MPI_INT, &c4);
    MPI_Type_contiguous(2, c4, &cc);
    MPI_Type_vector(4, 1, 2, MPI_INT, &vec);
    MPI_Type_indexed(2, bl, rev, MPI_INT, &back);
    MPI_Type_indexed(2, bl, in_order, MPI_INT, &fwd);
    MPI_Type_dup(MPI_DOUBLE, &pair);
    MPI_Datatype *all[] = { &c4, &cc, &vec, &back, &fwd, &pair };
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        MPI_Type_commit(all[i]);
    assert_true(tnbc_type_is_dense(MPI_INT));
    assert_true(tnbc_type_is_dense(c4));
    assert_true(tnbc_type_is_dense(cc));
    assert_true(tnbc_type_is_dense(pair));
    assert_false(tnbc_type_is_dense(vec));        /* holes */
    assert_false(tnbc_type_is_dense(back));       /* out of order */
    assert_false(tnbc_type_is_dense(fwd));        /* indexed: not decoded as dense */
    assert_false(tnbc_type_is_dense(MPI_LONG_INT));   /* padding */
    assert_true(tnbc_type_is_named(MPI_INT));
    assert_false(tnbc_type_is_named(c4));
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        MPI_Type_free(all[i]);
}

static void test_transformable(void **state)
{
    (void)state;
    const char *why;
    struct tnbc_args a = args(TNBC_ALLTOALL);
    a.rcount = a.scount = 16;
    assert_true(transformable(&a, &why));

    /* A derived datatype on either side goes early (replay lands only its
     * type map's bytes), but not in a reduction: Open MPI refuses
     * predefined operations on derived types. */
    MPI_Datatype vec;
    MPI_Type_vector(4, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    a.rtype = vec;
    a.rcount = a.scount = 2;
    assert_true(transformable(&a, &why));
    a = args(TNBC_BCAST);
    a.rcount = 2;
    a.rtype = vec;
    a.root = 0;
    assert_true(transformable(&a, &why));
    a = args(TNBC_ALLREDUCE);
    a.rcount = 2;
    a.rtype = a.stype = vec;
    a.mpi_op = MPI_SUM;
    assert_false(transformable(&a, &why));
    assert_non_null(strstr(why, "derived datatype"));
    MPI_Type_free(&vec);

    /* Reductions: integers yes, floating point never (MAX/MIN included). */
    a = args(TNBC_ALLREDUCE);
    a.rcount = 16;
    MPI_Op ops[] = { MPI_SUM, MPI_MAX, MPI_MIN, MPI_BXOR };
    for (int i = 0; i < 4; i++) {
        a.mpi_op = ops[i];
        a.rtype = a.stype = MPI_INT;
        assert_true(transformable(&a, &why));
        a.rtype = a.stype = MPI_DOUBLE;
        assert_false(transformable(&a, &why));
        assert_non_null(strstr(why, "floating-point"));
    }
    a.rtype = a.stype = MPI_DOUBLE_INT;
    a.mpi_op = MPI_MAXLOC;
    assert_false(transformable(&a, &why));
    a.rtype = a.stype = MPI_2INT;
    assert_true(transformable(&a, &why));

    /* An allgather whose send buffer is this rank's slot of the receive
     * buffer: blocking; separate buffers: early. */
    a = args(TNBC_ALLGATHER);
    a.rcount = a.scount = 16;
    assert_true(transformable(&a, &why));
    a.sendbuf = rbuf + (size_t)r * 16 * sizeof(int);
    assert_false(transformable(&a, &why));
    assert_non_null(strstr(why, "overlaps"));

    /* A receive buffer on the stack: blocking. */
    int local[4096];
    a = args(TNBC_ALLTOALL);
    a.recvbuf = local;
    a.rcount = a.scount = (int)(4096 / p);
    assert_false(transformable(&a, &why));
    assert_non_null(strstr(why, "stack"));
}

/* A page or more between a call's bytes is not the call's: such a layout
 * says so (page_holes) and the call runs blocking. Gaps between blocks
 * and holes inside an element count; less than a page of either does not
 * (the page holding it also holds the call's bytes). */
static void test_page_holes(void **state)
{
    (void)state;
    const char *why;
    struct tnbc_call_layout l;
    struct tnbc_args a = args(TNBC_ALLTOALL);
    a.rcount = a.scount = 16;
    build(&a, 4, &l);
    assert_false(l.recv.page_holes);
    assert_false(l.send.page_holes);
    tnbc_layout_free(&l);

    /* alltoallv: blocks 3 pages apart (a gap of a page or more unless
     * there is one block), then 1 KiB apart */
    int counts[64], far[64], near[64];
    assert_true(p <= 64);
    for (int i = 0; i < p; i++) {
        counts[i] = 16;
        far[i] = i * 3072;
        near[i] = i * 256;
    }
    a = args(TNBC_ALLTOALLV);
    a.rcounts = a.scounts = counts;
    a.rdispls = far;
    a.sdispls = near;
    build(&a, 4, &l);
    assert_int_equal(l.recv.page_holes, p > 1);
    assert_false(l.send.page_holes);
    tnbc_layout_free(&l);
    assert_int_equal(transformable(&a, &why), p == 1);
    if (p > 1)
        assert_non_null(strstr(why, "a page or more"));

    /* bcast of a vector: 8 KiB stride (holes of a page or more) on both
     * sides, root and receivers; 64 B stride: none */
    MPI_Datatype wide, narrow;
    MPI_Type_vector(3, 1, 2048, MPI_INT, &wide);
    MPI_Type_vector(3, 1, 16, MPI_INT, &narrow);
    MPI_Type_commit(&wide);
    MPI_Type_commit(&narrow);
    a = args(TNBC_BCAST);
    a.root = 0;
    a.rcount = 1;
    a.rtype = wide;
    build(&a, 4, &l);
    assert_true(r == 0 ? l.send.page_holes : l.recv.page_holes);
    tnbc_layout_free(&l);
    assert_false(transformable(&a, &why));
    assert_non_null(strstr(why, "a page or more"));
    a.rtype = narrow;
    a.rcount = 4;
    build(&a, 4, &l);
    assert_false(l.send.page_holes);
    assert_false(l.recv.page_holes);
    tnbc_layout_free(&l);
    assert_true(transformable(&a, &why));

    /* An element over 64 MiB wide is not mapped: counted as holed. */
    MPI_Datatype huge;
    int lens[2] = { 1, 1 };
    MPI_Aint displs[2] = { 0, 128L << 20 };
    MPI_Type_create_hindexed(2, lens, displs, MPI_INT, &huge);
    MPI_Type_commit(&huge);
    a.rtype = huge;
    a.rcount = 1;
    build(&a, 4, &l);
    assert_true(r == 0 ? l.send.page_holes : l.recv.page_holes);
    tnbc_layout_free(&l);
    MPI_Type_free(&huge);
    MPI_Type_free(&wide);
    MPI_Type_free(&narrow);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chunk_split),
        cmocka_unit_test(test_op_names),
        cmocka_unit_test(test_alltoall),
        cmocka_unit_test(test_alltoallv),
        cmocka_unit_test(test_allgather),
        cmocka_unit_test(test_gather_root_and_not),
        cmocka_unit_test(test_scatter_root_and_not),
        cmocka_unit_test(test_reduce_scatter),
        cmocka_unit_test(test_bcast_root_and_not),
        cmocka_unit_test(test_allreduce_and_reduce),
        cmocka_unit_test(test_derived_vector),
        cmocka_unit_test(test_derived_true_lb),
        cmocka_unit_test(test_type_is_dense),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_transformable),
        cmocka_unit_test(test_page_holes),
    };
    int failed, all;

    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    if (r != 0) {                         /* one TAP report: rank 0's */
        unsetenv("CMOCKA_MESSAGE_OUTPUT");
        cmocka_set_message_output(CM_OUTPUT_STDOUT);
        if (!freopen("/dev/null", "w", stdout))
            return 1;
    }
    failed = cmocka_run_group_tests_name("collective", tests, NULL, NULL);
    if (failed && r != 0)
        fprintf(stderr, "test_collective: rank %d of %d: %d test(s) failed\n", r, p, failed);
    MPI_Allreduce(&failed, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (r == 0)
        printf("# %d rank(s); failures on all ranks: %d\n", p, all);
    MPI_Finalize();
    return all != 0;
}
