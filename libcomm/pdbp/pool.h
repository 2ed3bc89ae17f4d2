/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pool.h - the dynamic double buffer pool (DDBP) of one host.
 *
 * Physical address space: the user memory blocks (UMB), equal-size blocks
 * named by a block id, allocated from the OS on first use up to a configured
 * limit. Logical address space: the send matrix SM and the receive matrix RM,
 * each M rows (one sub-pool per host) of N elements. An element holding a
 * block id is real, one without is virtual; real elements are always the
 * prefix 0..real-1 of a row, so the critical real element (CRE) is real-1.
 *
 * A row is a ring over its real elements: `recv` is where the next message
 * enters the sub-pool, `send` the oldest one still inside. When recv reaches
 * the CRE the threshold algorithm may append real elements (design
 * algorithm 1); at that moment the occupied elements are send..real-2, never
 * wrapped, so appending keeps the ring order.
 *
 * Nothing here locks: the runtime calls these with its host lock held.
 */
#ifndef PDBP_POOL_H
#define PDBP_POOL_H

#include <stddef.h>
#include <stdint.h>

struct pdbp_umb {
    size_t block_size;
    uint32_t limit;      /* most blocks this host may allocate */
    uint32_t nblocks;    /* allocated so far */
    uint8_t **blocks;    /* [limit], NULL until allocated */
    uint32_t limit_hits; /* growths cut short by the limit */
    int host;            /* for messages */
};

int pdbp_umb_init(struct pdbp_umb *u, size_t block_size, uint32_t limit,
                  int host);
void pdbp_umb_destroy(struct pdbp_umb *u);
/* A fresh block id, or -1 when the limit is reached. */
int32_t pdbp_umb_get(struct pdbp_umb *u);
static inline uint8_t *pdbp_umb_addr(const struct pdbp_umb *u, int32_t id)
{
    return u->blocks[id];
}

enum pdbp_slot_state {
    PDBP_SLOT_FREE = 0,
    PDBP_SLOT_OPEN,      /* being filled (send side: records appended) */
    PDBP_SLOT_READY,     /* complete, waiting for its consumer */
    PDBP_SLOT_BUSY,      /* consumer working on it (MPI send, readers) */
    PDBP_SLOT_DONE,      /* consumed; freed when it reaches the head */
};

/* What the threshold algorithm computed the last time recv met the CRE. */
struct pdbp_grow {
    double df, su, rsr, m;  /* eq. (1)-(3) and m = (RSR-1)*curSize */
    uint32_t wanted, added; /* elements the formula asked for / got */
    int checked;            /* 1 if the CRE check ran in this acquire */
};

struct pdbp_row {
    uint32_t cap, real;     /* N, real elements */
    uint32_t recv, send, used;
    int32_t *blk;           /* [cap] block id, -1 = virtual element */
    uint32_t *fill;         /* [cap] bytes in the block */
    uint32_t *refs;         /* [cap] records still to be read (receive side) */
    uint16_t *nrec;         /* [cap] records packed (send side) */
    uint8_t *state;         /* [cap] enum pdbp_slot_state */
    uint8_t *legit;         /* [cap] held a valid message (earns a credit) */
    uint32_t grows;
    struct pdbp_grow last;
};

/* Give the row init_real real elements; -1 if the UMB limit prevents it. */
int pdbp_row_init(struct pdbp_row *r, uint32_t cap, uint32_t init_real,
                  struct pdbp_umb *u);
void pdbp_row_destroy(struct pdbp_row *r);

/* Algorithm 1 for a sub-pool whose recv pointer is at its CRE: returns the
 * number of real elements to add (0: none), g gets the quantities. */
uint32_t pdbp_threshold(uint32_t real, uint32_t cap, uint32_t used,
                        double threshold, struct pdbp_grow *g);

/* Take the element at recv (state OPEN), growing the row first when recv is
 * at the CRE. Returns the element index, or -1 when the row is full. */
int pdbp_row_acquire(struct pdbp_row *r, struct pdbp_umb *u, double threshold);

/* Mark element i consumed; frees consumed elements at the head in order.
 * Returns the number of elements freed. */
uint32_t pdbp_row_done(struct pdbp_row *r, uint32_t i);

static inline uint8_t *pdbp_row_block(const struct pdbp_row *r,
                                      const struct pdbp_umb *u, uint32_t i)
{
    return pdbp_umb_addr(u, r->blk[i]);
}

#endif
