// SPDX-License-Identifier: BSD-3-Clause
/*
 * pool.c - user memory blocks, sub-pool rings and the threshold-based UMB
 * allocation algorithm (design 003, algorithm 1).
 */
#include "pool.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int pdbp_umb_init(struct pdbp_umb *u, size_t block_size, uint32_t limit,
                  int host)
{
    memset(u, 0, sizeof(*u));
    u->block_size = block_size;
    u->limit = limit;
    u->host = host;
    u->blocks = calloc(limit ? limit : 1, sizeof(*u->blocks));
    return u->blocks ? 0 : -1;
}

void pdbp_umb_destroy(struct pdbp_umb *u)
{
    for (uint32_t i = 0; i < u->nblocks; i++)
        free(u->blocks[i]);
    free(u->blocks);
    memset(u, 0, sizeof(*u));
}

int32_t pdbp_umb_get(struct pdbp_umb *u)
{
    if (u->nblocks >= u->limit)
        return -1;
    /* aligned for the device copy engines and for memcpy speed */
    if (posix_memalign((void **)&u->blocks[u->nblocks], 64, u->block_size))
        return -1;
    return (int32_t)u->nblocks++;
}

int pdbp_row_init(struct pdbp_row *r, uint32_t cap, uint32_t init_real,
                  struct pdbp_umb *u)
{
    memset(r, 0, sizeof(*r));
    r->cap = cap;
    r->blk = malloc(cap * sizeof(*r->blk));
    r->fill = calloc(cap, sizeof(*r->fill));
    r->refs = calloc(cap, sizeof(*r->refs));
    r->nrec = calloc(cap, sizeof(*r->nrec));
    r->state = calloc(cap, 1);
    r->legit = calloc(cap, 1);
    if (!r->blk || !r->fill || !r->refs || !r->nrec || !r->state || !r->legit)
        return -1;
    for (uint32_t i = 0; i < cap; i++)
        r->blk[i] = -1;
    for (uint32_t i = 0; i < init_real && i < cap; i++) {
        r->blk[i] = pdbp_umb_get(u);
        if (r->blk[i] < 0)
            return -1;
        r->real++;
    }
    return r->real ? 0 : -1;
}

void pdbp_row_destroy(struct pdbp_row *r)
{
    free(r->blk); free(r->fill); free(r->refs); free(r->nrec);
    free(r->state); free(r->legit);
    memset(r, 0, sizeof(*r));
}

uint32_t pdbp_threshold(uint32_t real, uint32_t cap, uint32_t used,
                        double threshold, struct pdbp_grow *g)
{
    memset(g, 0, sizeof(*g));
    g->checked = 1;
    g->df = (double)real / cap;              /* eq. (1) */
    g->su = (double)used / real;             /* eq. (2) */
    if (g->su <= threshold || real >= cap)   /* sparse, or DF = 1 */
        return 0;
    /* used < real here (the CRE itself is free), so RSR is finite */
    g->rsr = (double)used / (real - used);   /* eq. (3) */
    g->m = (g->rsr - 1.0) * real;
    if (g->m <= 0)
        return 0;
    double want = ceil(g->m);
    g->wanted = want > cap - real ? cap - real : (uint32_t)want;
    return g->wanted;
}

/* Append up to n real elements after the CRE; returns how many were added. */
static uint32_t row_grow(struct pdbp_row *r, struct pdbp_umb *u, uint32_t n)
{
    uint32_t k = 0;
    while (k < n) {
        int32_t id = pdbp_umb_get(u);
        if (id < 0)
            break;
        r->blk[r->real + k] = id;
        r->state[r->real + k] = PDBP_SLOT_FREE;
        k++;
    }
    if (k < n) {
        if (u->limit_hits++ == 0)
            fprintf(stderr, "pdbp: host %d: user memory block limit reached "
                    "(%u blocks of %zu bytes, TNBC_PDBP_MAX_BLOCKS); "
                    "sub-pools stop growing and senders wait\n",
                    u->host, u->limit, u->block_size);
    }
    r->real += k;
    if (k)
        r->grows++;
    return k;
}

int pdbp_row_acquire(struct pdbp_row *r, struct pdbp_umb *u, double threshold)
{
    r->last.checked = 0;
    if (r->used >= r->real)
        return -1;
    uint32_t i = r->recv;
    if (i == r->real - 1) {         /* recv is at the critical real element */
        uint32_t want = pdbp_threshold(r->real, r->cap, r->used, threshold,
                                       &r->last);
        if (want)
            r->last.added = row_grow(r, u, want);
    }
    r->state[i] = PDBP_SLOT_OPEN;
    r->fill[i] = 0;
    r->refs[i] = 0;
    r->nrec[i] = 0;
    r->legit[i] = 0;
    r->recv = (i + 1) % r->real;
    r->used++;
    return (int)i;
}

uint32_t pdbp_row_done(struct pdbp_row *r, uint32_t i)
{
    uint32_t freed = 0;
    r->state[i] = PDBP_SLOT_DONE;
    while (r->used && r->state[r->send] == PDBP_SLOT_DONE) {
        r->state[r->send] = PDBP_SLOT_FREE;
        r->send = (r->send + 1) % r->real;
        r->used--;
        freed++;
    }
    return freed;
}
