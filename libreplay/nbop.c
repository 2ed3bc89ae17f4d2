// SPDX-License-Identifier: BSD-3-Clause
#include "nbop.h"
#include "profile.h"
#include "config.h"
#include "land.h"

#include <assert.h>
#include <limits.h>
#include <malloc.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifdef TNBC_TEST_HOOKS
/* Sanitizer builds only (libreplay/module.mk): TNBC_TEST_FAIL_ALLOC=N makes
 * every N-th allocation of this file fail, so test/replay.sh can check
 * that an allocation failure votes blocking and nothing else changes. */
static long fail_every = -1, allocations;

static int fail_now(void)
{
    if (fail_every < 0)
        fail_every = tnbc_env_long("TNBC_TEST_FAIL_ALLOC", 0, 0, 1L << 30);
    return fail_every > 0 && ++allocations % fail_every == 0;
}

static void *test_malloc(size_t n) { return fail_now() ? NULL : malloc(n); }
static void *test_calloc(size_t n, size_t k) { return fail_now() ? NULL : calloc(n, k); }
static void *test_realloc(void *p, size_t n) { return fail_now() ? NULL : realloc(p, n); }
#define malloc(n) test_malloc(n)
#define calloc(n, k) test_calloc(n, k)
#define realloc(p, n) test_realloc(p, n)
#endif

MPI_Aint nbop_extent(MPI_Datatype t)
{
    MPI_Aint lb, ext;
    PMPI_Type_get_extent(t, &lb, &ext);
    return ext;
}

/* A type whose elements are packed bytes with no holes: a shadow need not
 * start as a copy of the user's bytes. */
static int dense(MPI_Datatype t)
{
    MPI_Aint lb, ext, tlb, text;
    int size;
    PMPI_Type_get_extent(t, &lb, &ext);
    PMPI_Type_get_true_extent(t, &tlb, &text);
    PMPI_Type_size(t, &size);
    return lb == 0 && tlb == 0 && ext == size && text == size;
}

/* Private memory standing in for one side's user buffer: `priv` holds the
 * layout's span; the returned pointer is where the user's buffer pointer
 * falls inside it, so the original counts and displacements apply. */
/* Private buffers are large and short-lived: a few are kept for the next
 * calls, so each call does not pay for fresh pages (page faults and
 * zeroing of a new mapping). Used by the application thread only. */
#define POOL_SLOTS 4
static struct { char *p; size_t size; } pool[POOL_SLOTS];

static char *pool_get(size_t n)
{
    for (int i = 0; i < POOL_SLOTS; i++)
        if (pool[i].p && pool[i].size >= n && pool[i].size <= 2 * n + 65536) {
            char *p = pool[i].p;
            pool[i].p = NULL;
            return p;
        }
    return malloc(n);
}

static void pool_put(char *p)
{
    if (!p)
        return;
    size_t n = malloc_usable_size(p);
    for (int i = 0; i < POOL_SLOTS; i++)
        if (!pool[i].p) {
            pool[i].p = p;
            pool[i].size = n;
            return;
        }
    free(p);
}

static char *mirror(const struct tnbc_layout *l, const void *user, char **priv, int copy)
{
    *priv = pool_get(l->span ? l->span : 1);
    if (!*priv)
        return NULL;
    if (copy && l->span)
        memcpy(*priv, l->base, l->span);
    return (char *)((uintptr_t)*priv + ((uintptr_t)user - (uintptr_t)l->base));
}

/* A new zeroed step at the end of op->steps, growing it as needed; NULL
 * when out of memory. */
/* Grows op->steps to hold at least `cap` steps. 0 or -1. */
static int steps_reserve(struct nbop *op, long cap)
{
    if (cap <= op->cap_steps)
        return 0;
    if (cap > INT_MAX / 2)
        return -1;
    struct step *s = realloc(op->steps, (size_t)cap * sizeof *s);
    if (!s)
        return -1;
    op->steps = s;
    op->cap_steps = (int)cap;
    return 0;
}

static struct step *step_new(struct nbop *op)
{
    if (op->nsteps == op->cap_steps) {
        int cap = op->cap_steps ? 2 * op->cap_steps : 16;
        struct step *s = realloc(op->steps, (size_t)cap * sizeof *s);
        if (!s)
            return NULL;
        op->steps = s;
        op->cap_steps = cap;
    }
    struct step *s = &op->steps[op->nsteps++];
    *s = (struct step){ 0 };
    return s;
}

static int posted_first(const struct step *s)
{
    return s->kind == STEP_RECV || s->kind == STEP_TOKEN_IN;
}

/* Receives first, then by priority and peer; a peer's parts keep their
 * order in the buffer, which is the order they match in (one tag). */
static int by_kind_then_prio(const void *x, const void *y)
{
    const struct step *a = x, *b = y;
    if (posted_first(a) != posted_first(b))
        return posted_first(a) ? -1 : 1;
    if (a->prio != b->prio)
        return a->prio < b->prio ? -1 : 1;
    if (a->peer != b->peer)
        return a->peer - b->peer;
    return a->buf < b->buf ? -1 : a->buf > b->buf;
}

const char nbop_oom[] = "out of memory";

#define TAG_SPAN 8000     /* body tags 1..TAG_SPAN; head, tail, token above */

int nbop_node_schedule = 1;
long nbop_piece_bytes = PIECES_DEFAULT_BYTES;

const struct tnbc_layout *nbop_guard_layout(const struct nbop *op)
{
    return op->per_source ? &op->pieces : &op->layout.recv;
}

static int part_tag(const struct nbop *op, enum part part)
{
    return op->tag + (part == PART_HEAD ? TAG_SPAN : part == PART_TAIL ? 2 * TAG_SPAN : 0);
}

/* Where this rank stands in its node's schedule: the ranks just before
 * and after it (-1 at the ends, or with no schedule). */
static void node_neighbours(struct nbop *op, const struct tnbc_profile_site *site)
{
    int me = op->layout.comm_rank;
    op->token_from = op->token_to = -1;
    for (int n = 0; nbop_node_schedule && n < site->nnodes; n++) {
        const struct tnbc_profile_node *node = &site->nodes[n];
        for (int k = 0; k < node->nranks; k++) {
            if (node->ranks[k] != me)
                continue;
            op->token_from = k > 0 ? node->ranks[k - 1] : -1;
            op->token_to = k + 1 < node->nranks ? node->ranks[k + 1] : -1;
            return;
        }
    }
}

/* FNV-1a over the node table (ranks in phase order, node by node); never 0
 * for a table, 0 without one. */
static int nodes_hash(const struct tnbc_profile_site *site)
{
    uint32_t h = 2166136261u;
    if (!nbop_node_schedule || site->nnodes == 0)
        return 0;
    for (int n = 0; n < site->nnodes; n++)
        for (int k = -1; k < site->nodes[n].nranks; k++) {
            h ^= (uint32_t)(k < 0 ? -1 - n : site->nodes[n].ranks[k]);
            h *= 16777619u;
        }
    return (int)(h | 1);
}

/* Is rank r on this rank's node (per the profile's node table)? */
static int same_node(const struct tnbc_profile_site *site, int me, int r)
{
    for (int n = 0; n < site->nnodes; n++) {
        const struct tnbc_profile_node *node = &site->nodes[n];
        int has_me = 0, has_r = 0;
        for (int k = 0; k < node->nranks; k++) {
            has_me |= node->ranks[k] == me;
            has_r |= node->ranks[k] == r;
        }
        if (has_me)
            return has_r;
    }
    return 0;
}

static int add_part(struct nbop *op, enum step_kind kind, int sub, int peer, enum part part,
                    int prio, char *buf, long bytes)
{
    struct step *s = step_new(op);
    if (!s)
        return -1;
    *s = (struct step){ .kind = kind, .sub = sub, .part = part, .peer = peer,
                        .prio = part == PART_BODY ? (prio < 0 ? INT_MAX : prio) : INT_MIN,
                        .buf = buf, .count = (int)bytes, .type = MPI_BYTE };
    if (kind == STEP_SEND)      /* the same place in the caller's buffer */
        s->src = (const char *)op->a.sendbuf + (buf - op->vsend);
    return 0;
}

/* Appends a piece of the receive side to op->pieces; returns its index. */
static int piece_new(struct nbop *op, size_t offset, size_t bytes, int block, int peer)
{
    struct tnbc_layout *l = &op->pieces;
    l->sub[l->nsub] = (struct tnbc_submsg){ offset, bytes, block, peer };
    return l->nsub++;
}

/* One piece of the block from `src` at `offset` in the layout, and the
 * receive step that delivers it into the shadow. */
static int recv_piece(struct nbop *op, int src, enum part part, int prio, size_t offset, long len)
{
    int k = piece_new(op, offset, (size_t)len, src, src);
    return add_part(op, STEP_RECV, k, src, part, prio, op->shadow + offset, len);
}

/* Receive steps and pieces for the block from `src`, cut as *c says. */
static int plan_block_recv(struct nbop *op, int src, int prio, const struct piece_cut *c)
{
    const struct tnbc_submsg *sb = &op->layout.recv.sub[src];
    size_t body_at = sb->offset + (size_t)c->head;
    long body = (long)c->bytes - c->head - c->tail;
    int n = pieces_count(c), rc = 0;

    if (c->head)
        rc |= recv_piece(op, src, PART_HEAD, prio, sb->offset, c->head);
    for (int k = 0; k < n; k++) {
        long off, len;
        pieces_body(c, k, &off, &len);
        rc |= recv_piece(op, src, PART_BODY, prio, body_at + (size_t)off, len);
    }
    if (c->tail)
        rc |= recv_piece(op, src, PART_TAIL, prio, body_at + (size_t)body, c->tail);
    atomic_fetch_add(&op->edges_left, (unsigned)((c->head > 0) + (c->tail > 0)));
    return rc;
}

void nbop_copy_sends(struct nbop *op)
{
    for (int i = 0; i < op->nsteps; i++) {
        struct step *s = &op->steps[i];
        if (s->kind == STEP_SEND)
            memcpy(s->buf, s->src, (size_t)s->count);
    }
}

static int reserve_sends(struct nbop *op);

/* alltoall(v), allgather(v), gather(v): point-to-point on the private
 * communicator, in bytes (dense datatypes only, so a block can be cut
 * anywhere); each block in parts (enum part), its body in pieces. */
static const char *per_source(struct nbop *op, const struct tnbc_profile_site *site)
{
    const struct tnbc_args *a = &op->a;
    const struct tnbc_layout *recv = &op->layout.recv;
    int p = op->layout.comm_size, me = op->layout.comm_rank, rooted = a->root >= 0;
    int in_place = a->sendbuf == MPI_IN_PLACE;
    struct piece_cut *cut;

    if (in_place && !rooted)
        return "MPI_IN_PLACE";
    if ((recv->nsub && !dense(a->rtype)) || (!in_place && !dense(a->stype)))
        return "non-contiguous datatype";
    if (recv->span > INT_MAX || op->layout.send.span > INT_MAX)
        return "a block of 2 GiB or more";
    op->per_source = 1;
    op->self_sub = op->self_piece = -1;
    op->want = calloc((size_t)p, sizeof *op->want);
    cut = calloc((size_t)(recv->nsub ? recv->nsub : 1), sizeof *cut);
    if (!op->want || !cut)
        goto oom;
    if (recv->nsub && !mirror(recv, a->recvbuf, &op->shadow, 0))
        goto oom;
    /* The send copy is filled later, part by part (nbop_copy_sends). */
    if (!in_place && !(op->vsend = mirror(&op->layout.send, a->sendbuf, &op->sendcopy, 0)))
        goto oom;
    op->nodes_hash = nodes_hash(site);
    for (int i = 0; i < p; i++) {
        op->want[i].vote = 1;
        op->want[i].nodes_hash = op->nodes_hash;
    }
    /* Every block is at least one piece, so the pieces cover the buffer. */
    size_t npieces = 0;
    for (int src = 0; src < recv->nsub; src++) {
        const struct tnbc_submsg *sb = &recv->sub[src];
        if (src != me)
            pieces_cut((uintptr_t)recv->base, recv->span, sb->offset, sb->bytes,
                       tnbc_page_size(), (size_t)nbop_piece_bytes, &cut[src]);
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
            if (src == me && sb->bytes && !in_place) {
                op->self_sub = me;
                op->self_piece = k;
            }
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
            op->steps[op->nsteps - 1].gated = !same_node(op->site_prio, me, dst);
    }
    return rc;
}

static int add_token(struct nbop *op, enum step_kind kind, int peer, int prio)
{
    struct step *s = step_new(op);
    if (!s)
        return -1;
    *s = (struct step){ .kind = kind, .sub = -1, .peer = peer, .prio = prio };
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
    long page = (long)tnbc_page_size(), want = nbop_piece_bytes, extra = 2;   /* tokens */
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
    if (steps_reserve(op, cap) != 0)
        return -1;
    op->reqs = malloc((size_t)cap * sizeof *op->reqs);
    op->completed = malloc((size_t)cap * sizeof *op->completed);
    op->cap_reqs = op->reqs && op->completed ? (int)cap : 0;
    return op->cap_reqs ? 0 : -1;
}

/* Orders the steps and allocates their request arrays. Called exactly
 * once per op: by nbop_create for chunked operations, by nbop_plan_sends
 * for per-source ones (calling it twice leaked the first arrays). */
static int finish_plan(struct nbop *op)
{
    assert(!op->planned);
    op->planned = 1;
    qsort(op->steps, (size_t)op->nsteps, sizeof *op->steps, by_kind_then_prio);
    op->remaining = op->nsteps;
    if (op->nsteps > op->cap_reqs) {   /* not reserved, or a receiver asked for more */
        free(op->reqs);
        free(op->completed);
        op->reqs = malloc((size_t)(op->nsteps ? op->nsteps : 1) * sizeof *op->reqs);
        op->completed = malloc((size_t)(op->nsteps ? op->nsteps : 1) * sizeof *op->completed);
        op->cap_reqs = op->nsteps;
    }
    if (!op->reqs || !op->completed)
        return -1;
    for (int i = 0; i < op->nsteps; i++)
        op->reqs[i] = MPI_REQUEST_NULL;
    return 0;
}

int nbop_plan_sends(struct nbop *op, const struct edge_req *got)
{
    const struct tnbc_args *a = &op->a;
    int p = op->layout.comm_size;
    int ssize = 0;
    MPI_Aint sext;

    if (!op->per_source)
        return 0;        /* chunk steps: planned once, by nbop_create */
    /* Every rank of a node takes part in its token chain, whether or not it
     * sends anything itself (a root gathering in place sends nothing). */
    int same_schedule = 1;
    for (int r = 0; r < p; r++)
        same_schedule &= got[r].nodes_hash == op->nodes_hash;
    op->token_from = op->token_to = -1;
    if (same_schedule)
        node_neighbours(op, op->site_prio);
    op->token_ok = op->token_from < 0;
    if ((op->token_from >= 0 && add_token(op, STEP_TOKEN_IN, op->token_from, INT_MIN) != 0) ||
        (op->token_to >= 0 && add_token(op, STEP_TOKEN_OUT, op->token_to, INT_MAX) != 0))
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
        if (plan_block_send(op, dst, op->vsend + displ * sext, bytes, &got[dst].cut) != 0)
            return -1;
    }
done:
    return finish_plan(op);
}

int nbop_step_tag(const struct nbop *op, const struct step *s)
{
    if (s->kind == STEP_TOKEN_IN || s->kind == STEP_TOKEN_OUT)
        return op->tag + 3 * TAG_SPAN;
    return part_tag(op, (enum part)s->part);
}

/* The caller's own block: no message, and as few copies as the blocking
 * collective makes. Its pages that hold nothing else are opened first and
 * filled with memcpy (the caller is inside the call, so nobody reads them
 * half-filled); the bytes on pages it shares with other blocks still in
 * flight go through /proc/self/mem. */
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
    const struct tnbc_submsg *sb = &op->layout.recv.sub[me];
    const char *src = (const char *)a->sendbuf + displ * nbop_extent(a->stype);
    char *dst = op->layout.recv.base + sb->offset;
    uintptr_t ps = tnbc_page_size();
    uintptr_t lo = ((uintptr_t)dst + ps - 1) & ~(ps - 1), hi = ((uintptr_t)dst + sb->bytes) & ~(ps - 1);
    size_t head = lo < hi ? lo - (uintptr_t)dst : sb->bytes, mid = lo < hi ? hi - lo : 0;

    tnbc_guard_open_sub(&op->guard, op->self_piece);   /* opens its own whole pages */
    if (land(dst, src, head) != 0 ||
        land(dst + head + mid, src + head + mid, sb->bytes - head - mid) != 0) {
        tnbc_warn("cannot write the local block into the guarded buffer; aborting");
        PMPI_Abort(MPI_COMM_WORLD, 1);
    }
    memcpy(dst + head, src + head, mid);
    nbop_sub_complete(op, op->self_piece);
}

void nbop_part_landed(struct nbop *op, int i)
{
    struct step *s = &op->steps[i];
    if (s->part != PART_BODY && atomic_fetch_sub(&op->edges_left, 1) == 1)
        syscall(SYS_futex, &op->edges_left, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
    nbop_sub_complete(op, s->sub);     /* each piece is one part */
}

void nbop_wait_edges(struct nbop *op)
{
    unsigned n;
    while ((n = atomic_load(&op->edges_left)) != 0)
        syscall(SYS_futex, &op->edges_left, FUTEX_WAIT_PRIVATE, n, NULL, NULL, 0);
}

/* bcast, allreduce, reduce: one non-blocking collective per chunk, in the
 * chunks' priority order (the same on every rank). */
static const char *chunked(struct nbop *op, const struct tnbc_profile_site *site)
{
    const struct tnbc_args *a = &op->a;
    int me = op->layout.comm_rank, m = site->chunks > 0 ? site->chunks : 1;
    long first[64], n[64];
    int k;

    if (a->op != TNBC_BCAST && !tnbc_reduction_is_exact(a->rtype, a->mpi_op))
        return "floating-point or user-defined reduction (results could differ in the last bit)";
    if (a->op == TNBC_ALLREDUCE && a->sendbuf == MPI_IN_PLACE)
        return "MPI_IN_PLACE";
    if (m > 64)
        m = 64;
    k = tnbc_chunk_split(a->rcount, m, first, n);
    if (k == 0)
        return "zero-size";
    if (op->layout.recv.nsub) {
        /* Reduce at the root in place: its contribution is in recvbuf. */
        int keep = !dense(a->rtype) || a->sendbuf == MPI_IN_PLACE;
        op->vrecv = mirror(&op->layout.recv, a->recvbuf, &op->shadow, keep);
        if (!op->vrecv)
            return nbop_oom;
    }
    if (op->layout.send.nsub) {
        const void *src = a->op == TNBC_BCAST ? a->recvbuf : a->sendbuf;
        op->vsend = mirror(&op->layout.send, src, &op->sendcopy, 1);
        if (!op->vsend)
            return nbop_oom;
    }
    MPI_Aint ext = nbop_extent(a->rtype);
    for (int c = 0; c < k; c++) {
        struct step *s = step_new(op);
        int prio = tnbc_profile_recv_prio(site, me, c);
        if (!s || n[c] > INT_MAX)
            return !s ? nbop_oom : "a chunk of 2^31 elements or more";
        *s = (struct step){ .kind = STEP_CHUNK, .sub = op->layout.recv.nsub ? c : -1, .peer = c,
                            .prio = prio < 0 ? INT_MAX : prio,
                            .buf = op->vrecv ? op->vrecv + first[c] * ext : op->vsend + first[c] * ext,
                            .count = (int)n[c], .type = a->rtype, .chunk_first = first[c] };
    }
    return NULL;
}

static int predefined(MPI_Datatype t)
{
    int ni, na, nd, combiner;
    return t != MPI_DATATYPE_NULL && PMPI_Type_get_envelope(t, &ni, &na, &nd, &combiner) == MPI_SUCCESS &&
           combiner == MPI_COMBINER_NAMED;
}

/* Chunk c's share of `count` elements when every rank cuts its own count in
 * exactly m chunks (some empty when count < m): the same cut at the root,
 * which cuts each destination's count, and at that destination. */
static void scatter_cut(long count, int m, int c, long *first, long *n)
{
    *first = count * c / m;
    *n = count * (c + 1) / m - *first;
}

#define SCATTER_MAX_CHUNKS 64

/* Scatter(v) and reduce_scatter(_block): one chunk step per scatter_cut
 * share of this rank's `count` received elements, in the profile's
 * priority order; an empty share has no sub-message. The step lands in the
 * receive shadow (no shadow: a root scattering in place receives nothing). */
static const char *cut_chunk_steps(struct nbop *op, const struct tnbc_profile_site *site, int m,
                                   long count)
{
    int me = op->layout.comm_rank;
    MPI_Aint ext = nbop_extent(op->a.rtype);
    for (int c = 0, sub = 0; c < m; c++) {
        long first, n;
        struct step *s = step_new(op);
        int prio = tnbc_profile_recv_prio(site, me, c);
        if (!s)
            return nbop_oom;
        scatter_cut(count, m, c, &first, &n);
        *s = (struct step){ .kind = STEP_CHUNK, .sub = n > 0 && op->layout.recv.nsub ? sub++ : -1,
                            .peer = c, .prio = prio < 0 ? INT_MAX : prio,
                            .buf = op->vrecv ? op->vrecv + first * ext : NULL,
                            .count = (int)n, .type = op->a.rtype, .chunk_first = first };
    }
    return NULL;
}

const int *nbop_scatter_counts(const struct nbop *op, int c)
{
    return op->scatter_cd ? op->scatter_cd + (size_t)c * 2 * (size_t)op->layout.comm_size : NULL;
}

const int *nbop_scatter_displs(const struct nbop *op, int c)
{
    return op->scatter_cd ? nbop_scatter_counts(op, c) + op->layout.comm_size : NULL;
}

/* Scatter(v) as m MPI_Iscatterv, one per chunk: chunk c takes the c-th
 * m-th of every destination's block. Every rank runs exactly m of them
 * (the chunk collectives must match), whatever its own count; a chunk
 * empty here has no sub-message. Element counts cut alike on both sides
 * only when the two types have the same elements: predefined types only
 * (the type-signature rule then makes them the same type). */
static const char *scattered(struct nbop *op, const struct tnbc_profile_site *site)
{
    const struct tnbc_args *a = &op->a;
    int p = op->layout.comm_size, me = op->layout.comm_rank, root = a->root == me;
    int m = site->chunks > 0 ? site->chunks : 1, in_place = root && a->recvbuf == MPI_IN_PLACE;
    if (m > SCATTER_MAX_CHUNKS)
        m = SCATTER_MAX_CHUNKS;
    if ((!in_place && !predefined(a->rtype)) || (root && !predefined(a->stype)))
        return "scatter with a derived datatype";
    if (!in_place) {
        op->vrecv = mirror(&op->layout.recv, a->recvbuf, &op->shadow, 0);
        if (!op->vrecv)
            return nbop_oom;
    }
    if (root) {
        op->vsend = mirror(&op->layout.send, a->sendbuf, &op->sendcopy, 1);
        op->scatter_cd = malloc((size_t)m * 2 * (size_t)p * sizeof *op->scatter_cd);
        if (!op->vsend || !op->scatter_cd)
            return nbop_oom;
        for (int c = 0; c < m; c++)
            for (int k = 0; k < p; k++) {
                long count = a->scounts ? a->scounts[k] : a->scount, first, n;
                long displ = a->sdispls ? a->sdispls[k] : (long)k * a->scount;
                scatter_cut(count, m, c, &first, &n);
                op->scatter_cd[((size_t)c * 2) * (size_t)p + (size_t)k] = (int)n;
                op->scatter_cd[((size_t)c * 2 + 1) * (size_t)p + (size_t)k] = (int)(displ + first);
            }
    }
    return cut_chunk_steps(op, site, m, in_place ? 0 : a->rcount);
}

/* Reduce_scatter(_block) as m MPI_Ireduce_scatter, one per chunk: chunk c
 * reduces the c-th m-th of every rank's block (scatter_cut of its count, the
 * same at every rank, which knows every count). Its send data are those
 * parts of the send buffer, packed chunk after chunk into the private
 * copy. Exact reductions only, as for allreduce. */
static const char *reduce_scattered(struct nbop *op, const struct tnbc_profile_site *site)
{
    const struct tnbc_args *a = &op->a;
    int p = op->layout.comm_size, me = op->layout.comm_rank;
    int m = site->chunks > 0 ? site->chunks : 1;
    if (m > SCATTER_MAX_CHUNKS)
        m = SCATTER_MAX_CHUNKS;
    if (!tnbc_reduction_is_exact(a->rtype, a->mpi_op))
        return "floating-point or user-defined reduction (results could differ in the last bit)";
    if (a->sendbuf == MPI_IN_PLACE)
        return "MPI_IN_PLACE";    /* replay.c passes the out-of-place equivalent */
    MPI_Aint ext = nbop_extent(a->rtype);
    long total = 0;
    for (int k = 0; k < p; k++)
        total += a->rcounts ? a->rcounts[k] : a->rcount;
    op->vrecv = mirror(&op->layout.recv, a->recvbuf, &op->shadow, 0);
    op->sendcopy = malloc((size_t)(total ? total : 1) * (size_t)ext);
    op->scatter_cd = malloc((size_t)m * 2 * (size_t)p * sizeof *op->scatter_cd);
    if (!op->vrecv || !op->sendcopy || !op->scatter_cd)
        return nbop_oom;
    op->vsend = op->sendcopy;
    /* counts[k]: rank k's part of chunk c; displs[0]: where chunk c starts
     * in the packed copy (elements). */
    long packed = 0;
    for (int c = 0; c < m; c++) {
        int *counts = op->scatter_cd + (size_t)c * 2 * (size_t)p;
        counts[p] = (int)packed;
        long block = 0;
        for (int k = 0; k < p; k++) {
            long count = a->rcounts ? a->rcounts[k] : a->rcount, first, n;
            scatter_cut(count, m, c, &first, &n);
            counts[k] = (int)n;
            memcpy(op->sendcopy + packed * ext, (const char *)a->sendbuf + (block + first) * ext,
                   (size_t)(n * ext));
            packed += n;
            block += count;
        }
    }
    return cut_chunk_steps(op, site, m, a->rcounts ? a->rcounts[me] : a->rcount);
}

struct nbop *nbop_create(const struct tnbc_args *a, const struct tnbc_profile_site *site,
                         MPI_Comm priv, int tag, const char **why)
{
    struct nbop *op = calloc(1, sizeof *op);
    int chunks = tnbc_op_is_chunked(a->op) ? (site->chunks > 0 ? site->chunks : 1) : 1;

    *why = NULL;
    if (!op) {
        *why = nbop_oom;
        return NULL;
    }
    op->a = *a;
    op->self_sub = op->self_piece = -1;
    op->site_prio = site;
    op->comm = priv;
    op->tag = tag;
    if (tnbc_layout_build(a, chunks, &op->layout, why) != 0) {
        free(op);
        return NULL;
    }
    switch (a->op) {
    case TNBC_ALLTOALL: case TNBC_ALLTOALLV: case TNBC_ALLGATHER: case TNBC_ALLGATHERV:
    case TNBC_GATHER: case TNBC_GATHERV:
        *why = per_source(op, site);
        break;
    case TNBC_BCAST: case TNBC_ALLREDUCE: case TNBC_REDUCE:
        *why = chunked(op, site);
        break;
    case TNBC_SCATTER: case TNBC_SCATTERV:
        *why = scattered(op, site);
        break;
    case TNBC_REDUCE_SCATTER_BLOCK: case TNBC_REDUCE_SCATTER:
        *why = reduce_scattered(op, site);
        break;
    default:
        *why = "operation not transformed by this version";
    }
    int nsub = *why ? 0 : nbop_guard_layout(op)->nsub;
    if (!*why) {
        op->sub_done = calloc((size_t)(nsub ? nsub : 1), sizeof *op->sub_done);
        if (!op->sub_done)
            *why = nbop_oom;
    }
    if (*why) {
        nbop_free(op);
        return NULL;
    }
    /* Sub-messages no step delivers are complete from the start. */
    for (int i = 0; i < nsub; i++)
        atomic_store(&op->sub_done[i], 1);
    for (int i = 0; i < op->nsteps; i++)
        if (op->steps[i].sub >= 0)
            atomic_store(&op->sub_done[op->steps[i].sub], 0);
    if (op->self_piece >= 0)
        atomic_store(&op->sub_done[op->self_piece], 0);
    if (!op->per_source && finish_plan(op) != 0) {   /* chunk steps: just order them */
        *why = nbop_oom;
        nbop_free(op);
        return NULL;
    }
    return op;
}

void nbop_free(struct nbop *op)
{
    if (!op)
        return;
    unsigned st = atomic_load(&op->state);
    assert(st == NBOP_PLANNED || st == NBOP_DONE);
    if (st == NBOP_PLANNED && op->guard.armed) {
        /* Never submitted: nothing will land; the blocking call that
         * follows writes the buffer. Waiters must not wait for data. */
        int nsub = nbop_guard_layout(op)->nsub;
        for (int i = 0; i < nsub; i++)
            nbop_sub_complete(op, i);
        tnbc_guard_disarm(&op->guard, TNBC_REL_REUSE);
    }
    tnbc_layout_free(&op->layout);
    pool_put(op->shadow);
    pool_put(op->sendcopy);
    free(op->steps);
    free(op->reqs);
    free(op->completed);
    free((void *)op->sub_done);
    free(op->pieces.sub);
    free(op->want);
    free(op->scatter_cd);
    free(op);
}

void nbop_sub_complete(struct nbop *op, int sub)
{
    atomic_store(&op->sub_done[sub], 1);
    syscall(SYS_futex, &op->sub_done[sub], FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

void nbop_wait_sub(struct nbop *op, int sub)
{
    while (!atomic_load(&op->sub_done[sub]))
        syscall(SYS_futex, &op->sub_done[sub], FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
}

void nbop_set_state(struct nbop *op, enum nbop_state from, enum nbop_state to)
{
    unsigned was = atomic_exchange(&op->state, (unsigned)to);
    assert(was == (unsigned)from && to == from + 1);
    (void)was;
    (void)from;
    syscall(SYS_futex, &op->state, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

void nbop_wait_retired(struct nbop *op)
{
    unsigned st;
    while ((st = atomic_load(&op->state)) < NBOP_RETIRED)
        syscall(SYS_futex, &op->state, FUTEX_WAIT_PRIVATE, st, NULL, NULL, 0);
}

static void retire(struct nbop *op)
{
    tnbc_guard_disarm(&op->guard, TNBC_REL_DONE);   /* no-op when never armed */
    nbop_set_state(op, NBOP_IN_FLIGHT, NBOP_RETIRED);
}

void nbop_pickup(struct nbop *op)
{
    int nsub = nbop_guard_layout(op)->nsub;
    op->subs_left = 0;
    for (int i = 0; i < nsub; i++)
        op->subs_left += !atomic_load(&op->sub_done[i]);
    if (op->subs_left == 0)
        retire(op);
}

void nbop_sub_landed(struct nbop *op)
{
    assert(op->subs_left > 0);
    if (--op->subs_left == 0)
        retire(op);
}
