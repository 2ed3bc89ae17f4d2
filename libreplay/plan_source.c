// SPDX-License-Identifier: BSD-3-Clause
/* Per-source operations (alltoall(v), allgather(v), gather(v)): each block
 * travels point-to-point on the private communicator, in bytes, in parts
 * (enum part), its body in pieces (pieces.h). This file owns the cut of
 * the receive side in pieces (op->pieces, the guard's sub-messages), the
 * receive and send steps, the edge parts and the landing of the caller's
 * own block.
 *
 * Derived datatypes (dtype.h: not dense). A receive type's block cannot be
 * cut anywhere: it is one piece, its footprint, received whole with the
 * type itself into the shadow and landed by its runs (land_typed.h); one
 * that reaches an unguarded edge page is waited for before the call
 * returns (nbop_unguarded_subs) instead of travelling in edge parts. Its
 * cut says so (piece_cut.typed), and the sender sends that block whole
 * with its own type from the send copy, filled whole. To a receiver of
 * bytes, a derived send type's block goes packed (MPI_Pack: the type
 * map's bytes in order, into op->packcopy), in pieces like a dense one. */
#include "plan.h"
#include "config.h"
#include "futex.h"
#include "pool.h"
#include "send_guard.h"

#include <assert.h>
#include <limits.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "testalloc.h"

/* Set once at start (nbop_configure). */
static long piece_bytes = PIECES_DEFAULT_BYTES;

void plan_source_set_piece(long bytes) { piece_bytes = bytes; }
long plan_piece_bytes(void) { return piece_bytes > 0 ? piece_bytes : PIECES_DEFAULT_BYTES; }

static int add_part(struct nbop *op, enum step_kind kind, int sub, int peer, enum part part,
                    int prio, char *buf, long bytes)
{
    struct step *s = plan_step_new(op);
    if (!s)
        return -1;
    *s = (struct step){ .kind = kind, .sub = sub, .part = part, .peer = peer,
                        .prio = part == PART_BODY ? (prio < 0 ? INT_MAX : prio) : INT_MIN,
                        .buf = buf, .count = (int)bytes, .type = MPI_BYTE };
    if (kind == STEP_SEND && !op->send_at)   /* the same place in the caller's buffer */
        s->src = (const char *)op->a.sendbuf + (buf - op->vsend);
    return 0;
}

/* Appends a piece of the receive side to op->pieces; returns its index. */
static int piece_new(struct nbop *op, size_t offset, size_t bytes, int block, int peer)
{
    struct tnbc_layout *l = &op->pieces;
    l->sub[l->nsub] = (struct tnbc_submsg){ .offset = offset, .bytes = bytes, .idx = block, .peer = peer };
    return l->nsub++;
}

/* One piece of the block from `src` at `offset` in the layout, and the
 * receive step that delivers it into the shadow. */
static int recv_piece(struct nbop *op, int src, enum part part, int prio, size_t offset, long len)
{
    int k = piece_new(op, offset, (size_t)len, src, src);
    return add_part(op, STEP_RECV, k, src, part, prio, op->shadow + offset, len);
}

/* Whether the page(s) of [a, b) hold bytes of this rank's own block. */
static int page_holds_own(const struct nbop *op, uintptr_t a, uintptr_t b)
{
    const struct tnbc_layout *recv = &op->layout.recv;
    int me = op->layout.comm_rank;
    if (me >= recv->nsub || !recv->sub[me].bytes)
        return 0;
    uintptr_t oa = (uintptr_t)recv->base + recv->sub[me].offset, ob = oa + recv->sub[me].bytes;
    return oa < tnbc_page_up(b) && ob > tnbc_page_down(a);
}

/* An edge part at `offset` of the receive buffer, `len` bytes, sent first
 * by its sender. The call waits for it before returning where the guard
 * leaves its page open (the buffer's partial first or last page) and where
 * the page holds bytes of the own block, which is there at once and read
 * first by most codes (test/replay.sh, check_own_block_first). A page it
 * shares with another block only (cut_block) stays guarded until it lands:
 * a code gets there later, and waits in the fault handler if the part has
 * not landed yet. */
static int recv_edge(struct nbop *op, int src, enum part part, int prio, size_t offset, long len)
{
    uintptr_t lo, hi, a = (uintptr_t)op->layout.recv.base + offset, b = a + (uintptr_t)len;
    int guarded = tnbc_layout_whole_pages(&op->layout.recv, &lo, &hi) && a >= lo && b <= hi;
    int wait = !guarded || page_holds_own(op, a, b);
    if (recv_piece(op, src, part, prio, offset, len) != 0)
        return -1;
    op->steps[op->nsteps - 1].edge_wait = wait;
    atomic_fetch_add(&op->edges_left, (unsigned)wait);
    return 0;
}

/* Receive steps and pieces for the block from `src`, cut as *c says. */
static int plan_block_recv(struct nbop *op, int src, int prio, const struct piece_cut *c)
{
    const struct tnbc_submsg *sb = &op->layout.recv.sub[src];
    size_t body_at = sb->offset + (size_t)c->head;
    long body = (long)c->bytes - c->head - c->tail;
    int n = pieces_count(c), rc = 0;

    if (c->head)
        rc |= recv_edge(op, src, PART_HEAD, prio, sb->offset, c->head);
    for (int k = 0; k < n; k++) {
        long off, len;
        pieces_body(c, k, &off, &len);
        rc |= recv_piece(op, src, PART_BODY, prio, body_at + (size_t)off, len);
    }
    if (c->tail)
        rc |= recv_edge(op, src, PART_TAIL, prio, body_at + (size_t)body, c->tail);
    return rc;
}

static long send_block(const struct nbop *op, int dst, int ssize, long *displ);

/* A derived send type: each destination's block packed at op->send_at[dst]
 * (allgather and gather send one block, packed once), but for those that
 * take it typed (send_at -1, plan_typed_send). */
static void pack_sends(struct nbop *op)
{
    const struct tnbc_args *a = &op->a;
    int ssize = 0, per_dst = a->op == TNBC_ALLTOALL || a->op == TNBC_ALLTOALLV;
    MPI_Aint sext = nbop_extent(a->stype);
    PMPI_Type_size(a->stype, &ssize);
    for (int dst = 0; dst < op->layout.comm_size; dst++) {
        long displ, bytes = send_block(op, dst, ssize, &displ);
        int pos = 0;
        if (bytes == 0 || op->send_at[dst] < 0)
            continue;
        if (PMPI_Pack((const char *)a->sendbuf + displ * sext, (int)(bytes / ssize), a->stype,
                      op->packcopy + op->send_at[dst], (int)bytes, &pos, MPI_COMM_SELF) != MPI_SUCCESS) {
            tnbc_warn("MPI_Pack of a send block failed; aborting");
            PMPI_Abort(MPI_COMM_WORLD, 1);
        }
        if (!per_dst)
            break;
    }
}

int nbop_copy_sends(struct nbop *op)
{
    if (op->send_at)
        pack_sends(op);
    if (op->send_whole) {      /* the parts' copies would repeat some of it */
        memcpy(op->sendcopy, op->layout.send.base, op->layout.send.span);
        return 0;
    }
    int in_place = send_guard_arm(op);     /* the steps it points at the caller's pages */
    for (int i = 0; i < op->nsteps; i++) {
        struct step *s = &op->steps[i];
        if (s->kind == STEP_SEND && s->src && !s->in_place)   /* chunked ops copied theirs whole */
            memcpy(s->buf, s->src, (size_t)s->count);
    }
    return in_place;
}

static int reserve_sends(struct nbop *op);

/* A derived send type: the packed copy, each destination's block at
 * op->send_at[dst] (one block for all, for allgather and gather). Made
 * before the agreement whether or not a receiver of bytes will ask for it
 * (the cuts are known only after it, and nothing may fail then); packed
 * only for those that do (pack_sends). */
static int plan_packed_sends(struct nbop *op)
{
    const struct tnbc_args *a = &op->a;
    int p = op->layout.comm_size, ssize = 0, per_dst = a->op == TNBC_ALLTOALL || a->op == TNBC_ALLTOALLV;
    long total = 0;
    PMPI_Type_size(a->stype, &ssize);
    op->send_at = calloc((size_t)p, sizeof *op->send_at);
    if (!op->send_at)
        return -1;
    for (int dst = 0; dst < p; dst++) {
        long displ, bytes = send_block(op, dst, ssize, &displ);
        op->send_at[dst] = per_dst ? total : 0;
        total = per_dst ? total + bytes : (bytes > total ? bytes : total);
    }
    op->packcopy = pool_get((size_t)(total ? total : 1));
    return op->packcopy ? 0 : -1;
}

/* A derived receive type: the block from `src` as one piece (its
 * footprint and elements), received whole with the type into the shadow.
 * The sender sends its payload, in one body piece. */
static int plan_typed_recv(struct nbop *op, int src, int prio, struct piece_cut *c)
{
    const struct tnbc_submsg *sb = &op->layout.recv.sub[src];
    int rsize = 0;
    PMPI_Type_size(op->a.rtype, &rsize);
    long bytes = sb->elem_count * rsize;
    if (bytes > INT_MAX || sb->elem_count > INT_MAX)
        return -1;
    *c = (struct piece_cut){ .bytes = (int)bytes, .first = (int)bytes, .piece = (int)bytes, .typed = 1 };
    int k = piece_new(op, sb->offset, sb->bytes, src, src);
    op->pieces.sub[k].elem_first = sb->elem_first;
    op->pieces.sub[k].elem_count = sb->elem_count;
    if (add_part(op, STEP_RECV, k, src, PART_BODY, prio,
                 op->vrecv + sb->elem_first * nbop_extent(op->a.rtype), bytes) != 0)
        return -1;
    op->steps[op->nsteps - 1].count = (int)sb->elem_count;
    op->steps[op->nsteps - 1].type = op->a.rtype;
    return 0;
}

/* Whether block `o` of the receive layout ends inside the page holding
 * address `a`, before it. */
static int ends_in_page_of(const struct tnbc_layout *recv, const struct tnbc_submsg *o, uintptr_t a)
{
    uintptr_t ob = (uintptr_t)recv->base + o->offset + o->bytes;
    return o->bytes && ob <= a && ob > tnbc_page_down(a);
}

/* Whether block `o` starts inside the page holding the last byte before
 * address `b`, at or after `b`. */
static int starts_in_page_of(const struct tnbc_layout *recv, const struct tnbc_submsg *o, uintptr_t b)
{
    uintptr_t oa = (uintptr_t)recv->base + o->offset;
    return o->bytes && oa >= b && oa < tnbc_page_up(b);
}

/* The cut of the block from `src`. Its bytes in a page it shares with
 * another block travel as edge parts, sent first as those in the buffer's
 * unguarded first and last page are (and waited for before the call
 * returns where that block is the own one, recv_edge). Such a page would
 * otherwise stay closed until a piece of the neighbouring block had
 * landed, which comes with that block's priority, often last: a code
 * reading one block first waited at its first or last page. A user
 * program reading its own block first (malloc'd buffers, 1 MiB blocks,
 * 2 x 1 nodes at 1 Gbit/s) waited 7.4 ms per call there, on rank 1 only,
 * for the whole of block 0; ordinary-heavy at 2 x 2 (bench/apps.conf),
 * whose ranks on the second node read block 1 first, waited 32-41 ms per
 * call, the whole Tcomm, for the 4120 bytes of block 0 in block 1's first
 * page. The neighbours checked are the own block and the blocks before
 * and after src (the layout of alltoall, allgather and ordered
 * v-displacements); a page shared with another, in displacements out of
 * order, stays guarded (correct, only slower). */
static void cut_block(const struct nbop *op, int src, struct piece_cut *c)
{
    const struct tnbc_layout *recv = &op->layout.recv;
    const struct tnbc_submsg *sb = &recv->sub[src];
    uintptr_t page = tnbc_page_size(), base = (uintptr_t)recv->base, end = base + recv->span;
    uintptr_t a = base + sb->offset, b = a + sb->bytes;
    const int near[3] = { op->layout.comm_rank, src - 1, src + 1 };
    for (int i = 0; i < 3; i++) {
        int o = near[i];
        if (o == src || o < 0 || o >= recv->nsub)
            continue;
        if (ends_in_page_of(recv, &recv->sub[o], a))
            base = a;                      /* o ends in src's first page */
        if (starts_in_page_of(recv, &recv->sub[o], b))
            end = b;                       /* o starts in src's last page */
    }
    assert(base <= a && b <= end);
    pieces_cut(base, end - base, a - base, sb->bytes, page, (size_t)piece_bytes, c);
}

/* alltoall(v), allgather(v), gather(v): point-to-point on the private
 * communicator, in bytes (dense datatypes only, so a block can be cut
 * anywhere); each block in parts (enum part), its body in pieces. */
const char *plan_per_source(struct nbop *op, const struct tnbc_profile_site *site)
{
    const struct tnbc_args *a = &op->a;
    const struct tnbc_layout *recv = &op->layout.recv;
    int p = op->layout.comm_size, me = op->layout.comm_rank, rooted = a->root >= 0;
    int in_place = a->sendbuf == MPI_IN_PLACE;
    struct piece_cut *cut;

    if (in_place && !rooted)
        return "MPI_IN_PLACE";
    if (recv->span > INT_MAX || op->layout.send.span > INT_MAX)
        return "a send or receive buffer spanning 2 GiB or more";
    op->per_source = 1;
    op->self_sub = op->self_piece = -1;
    op->want = calloc((size_t)p, sizeof *op->want);
    cut = calloc((size_t)(recv->nsub ? recv->nsub : 1), sizeof *cut);
    if (!op->want || !cut)
        goto oom;
    if (recv->nsub && !(op->vrecv = pool_mirror(recv, a->recvbuf, &op->shadow, 0)))
        goto oom;
    /* The send copy is filled later, part by part, whole or packed
     * (nbop_copy_sends). */
    if (!in_place && !tnbc_type_is_dense(a->stype) && plan_packed_sends(op) != 0)
        goto oom;
    if (!in_place && !(op->vsend = pool_mirror(&op->layout.send, a->sendbuf, &op->sendcopy, 0)))
        goto oom;
    op->nodes_hash = tokens_hash(site);
    for (int i = 0; i < p; i++) {
        op->want[i].vote = 1;
        op->want[i].nodes_hash = op->nodes_hash;
    }
    /* Every block is at least one piece, so the pieces cover the buffer. */
    size_t npieces = 0;
    for (int src = 0; src < recv->nsub; src++) {
        if (op->rmap) {
            npieces++;           /* one piece per block (plan_typed_recv) */
            continue;
        }
        if (src != me)
            cut_block(op, src, &cut[src]);
        npieces += 3 + (size_t)pieces_count(&cut[src]);
    }
    op->pieces = (struct tnbc_layout){ .base = recv->base, .span = recv->span,
                                       .bytes = recv->bytes, .block_bytes = -1 };
    op->pieces.sub = calloc(npieces ? npieces : 1, sizeof *op->pieces.sub);
    if (!op->pieces.sub)
        goto oom;
    for (int src = 0; src < recv->nsub; src++) {
        const struct tnbc_submsg *sb = &recv->sub[src];
        int prio = tnbc_profile_recv_prio(site, me, src);
        if (sb->bytes == 0 || src == me) {
            /* Nothing to receive (complete from the start), or this rank's
             * own block, landed straight from its send buffer. */
            int k = piece_new(op, sb->offset, sb->bytes, src, src);
            op->pieces.sub[k].elem_first = sb->elem_first;
            op->pieces.sub[k].elem_count = sb->elem_count;
            if (src == me && sb->bytes && !in_place) {
                op->self_sub = me;
                op->self_piece = k;
            }
            continue;
        }
        if (op->rmap) {
            if (plan_typed_recv(op, src, prio, &op->want[src].cut) != 0)
                goto oom;
            continue;
        }
        op->want[src].cut = cut[src];
        if (plan_block_recv(op, src, prio, &cut[src]) != 0)
            goto oom;
    }
    free(cut);
    return reserve_sends(op) == 0 ? NULL : nbop_oom;
oom:
    free(cut);
    return nbop_oom;
}

/* Send steps for the block to `dst`: `bytes` from `at`, cut as it asked. */
static int plan_block_send(struct nbop *op, int dst, char *at, long bytes, const struct piece_cut *c)
{
    int me = op->layout.comm_rank, rc = 0;
    int prio = op->site_prio ? tnbc_profile_send_prio(op->site_prio, me, dst) : 0;
    int n = pieces_count(c);
    long body = bytes - c->head - c->tail;

    if (c->head)
        rc |= add_part(op, STEP_SEND, -1, dst, PART_HEAD, prio, at, c->head);
    if (c->tail)
        rc |= add_part(op, STEP_SEND, -1, dst, PART_TAIL, prio, at + c->head + body, c->tail);
    for (int k = 0; k < n && rc == 0; k++) {
        long off, len;
        pieces_body(c, k, &off, &len);
        rc = add_part(op, STEP_SEND, -1, dst, PART_BODY, prio, at + c->head + off, len);
        /* Bodies to other nodes wait for this rank's turn on its node. */
        if (rc == 0)
            op->steps[op->nsteps - 1].gated = !tokens_same_node(op->site_prio, me, dst);
    }
    return rc;
}

/* The block to a receiver that takes it with its type (piece_cut.typed):
 * the cut's one body piece, sent as `count` elements of the send type from
 * the send copy (filled whole: op->send_whole), and not packed. */
static int plan_typed_send(struct nbop *op, int dst, char *at, long bytes, long count,
                           const struct piece_cut *c)
{
    if (plan_block_send(op, dst, at, bytes, c) != 0)
        return -1;
    struct step *s = &op->steps[op->nsteps - 1];
    s->count = (int)count;          /* count <= bytes, which the cut holds in an int */
    s->type = op->a.stype;
    s->src = NULL;
    op->send_whole = 1;
    if (op->send_at)
        op->send_at[dst] = -1;
    return 0;
}

/* The bytes this rank sends to `dst` (0: none) and where they start in
 * elements of the send type. */
static long send_block(const struct nbop *op, int dst, int ssize, long *displ)
{
    const struct tnbc_args *a = &op->a;
    long count;
    *displ = 0;
    if ((a->root >= 0 && dst != a->root) || dst == op->self_sub)
        return 0;
    if (a->op == TNBC_ALLTOALL) {
        count = a->scount;
        *displ = (long)dst * a->scount;
    } else if (a->op == TNBC_ALLTOALLV) {
        count = a->scounts[dst];
        *displ = a->sdispls[dst];
    } else {
        count = a->scount;
    }
    return count > 0 ? count * ssize : 0;
}

/* Per-source operations: room for every step nbop_plan_sends may add, and
 * the request arrays, allocated before the ranks agree (an allocation
 * failure then votes blocking). The receivers choose the cut; this bound
 * assumes they cut as this rank would (same page size and TNBC_PIECE), and
 * nbop_plan_sends still grows the arrays if one asks for more pieces. */
static int reserve_sends(struct nbop *op)
{
    const struct tnbc_args *a = &op->a;
    long page = (long)tnbc_page_size(), want = piece_bytes, extra = 2;   /* tokens */
    int ssize = 0;
    if (a->sendbuf != MPI_IN_PLACE && PMPI_Type_size(a->stype, &ssize) == MPI_SUCCESS) {
        for (int dst = 0; dst < op->layout.comm_size; dst++) {
            long displ, bytes = send_block(op, dst, ssize, &displ);
            if (bytes == 0)
                continue;
            long piece = want > 0 ? (want + page - 1) / page * page : bytes;
            long n = bytes / (piece > 0 ? piece : 1) + 2;
            extra += 2 + (n < PIECES_MAX ? n : PIECES_MAX);
        }
    }
    long cap = (long)op->nsteps + extra;
    if (plan_steps_reserve(op, cap) != 0)
        return -1;
    op->reqs = malloc((size_t)cap * sizeof *op->reqs);
    op->completed = malloc((size_t)cap * sizeof *op->completed);
    op->cap_reqs = op->reqs && op->completed ? (int)cap : 0;
    return op->cap_reqs ? 0 : -1;
}

int nbop_plan_sends(struct nbop *op, const struct edge_req *got)
{
    const struct tnbc_args *a = &op->a;
    int p = op->layout.comm_size;
    int ssize = 0;
    MPI_Aint sext;

    if (!op->per_source)
        return 0;        /* chunk steps: planned once, by nbop_create */
    if (tokens_plan(op, got) != 0)
        return -1;
    if (a->sendbuf == MPI_IN_PLACE)
        goto done;
    PMPI_Type_size(a->stype, &ssize);
    sext = nbop_extent(a->stype);
    for (int dst = 0; dst < p; dst++) {
        long displ, bytes = send_block(op, dst, ssize, &displ);
        if (bytes == 0)
            continue;
        if (pieces_check(&got[dst].cut, bytes) != 0)
            return -1;        /* the receiver expects another size: erroneous program */
        if (got[dst].cut.typed) {
            if (plan_typed_send(op, dst, op->vsend + displ * sext, bytes, bytes / ssize, &got[dst].cut) != 0)
                return -1;
            continue;
        }
        char *at = op->send_at ? op->packcopy + op->send_at[dst] : op->vsend + displ * sext;
        if (plan_block_send(op, dst, at, bytes, &got[dst].cut) != 0)
            return -1;
    }
done:
    return plan_finish(op);
}

/* The caller's own block: no message, and as few copies as the blocking
 * collective makes, while the guard is not armed yet (the caller is inside
 * the call, so nobody reads it half-filled): a memcpy, or with a derived
 * type on either side MPI's own copy from type to type (MPI_Sendrecv to
 * itself), which writes only the receive type's bytes. */
void nbop_land_self(struct nbop *op)
{
    const struct tnbc_args *a = &op->a;
    int me = op->self_sub;
    long displ = 0;

    if (me < 0)
        return;
    if (a->op == TNBC_ALLTOALL)
        displ = (long)me * a->scount;
    else if (a->op == TNBC_ALLTOALLV)
        displ = a->sdispls[me];
    const char *from = (const char *)a->sendbuf + displ * nbop_extent(a->stype);
    if (!op->rmap && !op->send_at) {
        plan_deliver(op, op->self_piece, from, 0, 1);
        return;
    }
    const struct tnbc_submsg *sb = &op->layout.recv.sub[me];
    long scount = a->op == TNBC_ALLTOALLV ? a->scounts[me] : a->scount;
    if (PMPI_Sendrecv(from, (int)scount, a->stype, 0, 0,
                      (char *)a->recvbuf + sb->elem_first * nbop_extent(a->rtype), (int)sb->elem_count,
                      a->rtype, 0, 0, MPI_COMM_SELF, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
        tnbc_warn("copying the own block of a derived datatype failed; aborting");
        PMPI_Abort(MPI_COMM_WORLD, 1);
    }
    plan_deliver(op, op->self_piece, NULL, 0, 1);
}

void nbop_wait_edges(struct nbop *op)
{
    unsigned n;
    while ((n = atomic_load(&op->edges_left)) != 0)
        tnbc_futex_wait(&op->edges_left, n);
}
