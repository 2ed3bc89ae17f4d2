// SPDX-License-Identifier: BSD-3-Clause
#include "pieces.h"

static size_t round_up(size_t x, size_t to) { return (x + to - 1) / to * to; }

void pieces_cut(uintptr_t base, size_t span, size_t offset, size_t bytes, size_t page,
                size_t want, struct piece_cut *out)
{
    uintptr_t lo = round_up(base, page), hi = (base + span) & ~(uintptr_t)(page - 1);
    uintptr_t a = base + offset, b = a + bytes;

    *out = (struct piece_cut){ .bytes = (int)bytes };
    if (lo >= hi) {                 /* no whole page: all of it is edge */
        out->head = (int)bytes;
        return;
    }
    out->head = a < lo ? (int)((b < lo ? b : lo) - a) : 0;
    out->tail = b > hi ? (int)(b - (a > hi ? a : hi)) : 0;
    size_t body = bytes - (size_t)out->head - (size_t)out->tail;
    if (body == 0)
        return;
    size_t piece = want ? round_up(want, page) : round_up(body, page);
    size_t floor_piece = round_up((body + PIECES_MAX - 2) / (PIECES_MAX - 1), page);
    if (piece < floor_piece)        /* the first piece may be short: one spare */
        piece = floor_piece;
    uintptr_t start = a + (size_t)out->head;
    size_t to_boundary = piece - (size_t)(start % piece);
    out->piece = (int)piece;
    out->first = (int)(to_boundary < body ? to_boundary : body);
}

int pieces_check(const struct piece_cut *c, long bytes)
{
    if (c->bytes != bytes || c->head < 0 || c->tail < 0 || c->first < 0 || c->piece < 0 ||
        (long)c->head + c->tail > bytes || (c->typed != 0 && c->typed != 1))
        return -1;
    if (c->typed && (c->head || c->tail || c->first != bytes))
        return -1;
    long body = bytes - c->head - c->tail;
    if (body == 0)
        return c->first == 0 ? 0 : -1;
    if (c->first == 0 || c->piece == 0 || c->first > body || c->first > c->piece)
        return -1;
    return pieces_count(c) <= PIECES_MAX ? 0 : -1;
}

int pieces_count(const struct piece_cut *c)
{
    long body = (long)c->bytes - c->head - c->tail;
    if (body <= 0 || c->first <= 0)
        return 0;
    long rest = body - c->first;
    return 1 + (int)((rest + c->piece - 1) / c->piece);
}

void pieces_body(const struct piece_cut *c, int k, long *offset, long *len)
{
    long body = (long)c->bytes - c->head - c->tail;
    if (k == 0) {
        *offset = 0;
        *len = c->first;
        return;
    }
    *offset = c->first + (long)(k - 1) * c->piece;
    *len = body - *offset < c->piece ? body - *offset : c->piece;
}
