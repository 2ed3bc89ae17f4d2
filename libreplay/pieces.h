/* SPDX-License-Identifier: BSD-3-Clause */
/* How one per-source block travels: its cut into pieces.
 *
 * A block is received as up to two edge parts (its bytes in its first
 * and last page where the receiver leaves that page unguarded or shares
 * it with another block: sent first, plan_source.c) and a body. The body
 * travels as pieces, each its own message and its own sub-message of the
 * receive guard, so the program may read the first piece of a block while
 * the rest is still on the wire: the model of the design (digest,
 * "Toverlap") lets the reading follow the data at the network's rate,
 * which one message per block does not.
 *
 * The receiver chooses the cut, so that piece boundaries fall on its
 * pages: after the first piece, every boundary is a multiple of the piece
 * size in its address space. It tells the sender the numbers of struct
 * piece_cut when the ranks agree on the call; both sides then enumerate
 * the same pieces with pieces_body(). */
#ifndef TNBC_PIECES_H
#define TNBC_PIECES_H

#include <stddef.h>
#include <stdint.h>

/* TNBC_PIECE's default: below Open MPI's TCP eager limit (64 KiB), so a
 * piece needs no rendezvous. The analyzer's prediction assumes it too. */
#define PIECES_DEFAULT_BYTES 32768

/* A block may be cut into at most this many body pieces; larger blocks
 * get larger pieces (bounds the requests one call holds). */
#define PIECES_MAX 1024

struct piece_cut {
    int bytes;        /* the whole block, as the receiver expects it */
    int head, tail;   /* edge parts: bytes in the first / last page */
    int first;        /* bytes of the first body piece (0: no body) */
    int piece;        /* bytes of every later piece but the last */
    int typed;        /* 1: one body piece, the whole block, which the
                         receiver takes with its own (derived) type: the
                         sender sends it with its type too (MPICH truncates
                         a large byte message received with a non-contiguous
                         type); 0: pieces of bytes */
};

/* The cut of the block [offset, offset+bytes) of a receive buffer spanning
 * [base, base+span), for pages of `page` bytes and pieces of about
 * `want` bytes (0: the whole body is one piece). */
void pieces_cut(uintptr_t base, size_t span, size_t offset, size_t bytes, size_t page,
                size_t want, struct piece_cut *out);
/* Checks a cut received from another rank against the block's size as
 * the sender sees it: 0 when it describes exactly `bytes` bytes in at most
 * PIECES_MAX body pieces, else -1. */
int pieces_check(const struct piece_cut *c, long bytes);
/* Number of body pieces. */
int pieces_count(const struct piece_cut *c);
/* Body piece k (0-based): its offset from the body's start and length. */
void pieces_body(const struct piece_cut *c, int k, long *offset, long *len);

#endif
