// SPDX-License-Identifier: BSD-3-Clause
/*
 * proto.c - MESP encoding and validation. Pure functions, no MPI, so the
 * unit tests can feed them any bytes.
 */
#include "proto.h"

#include <string.h>

/* Fixed body sizes of the control messages (wire layout, not sizeof). */
#define UR_LEN     56
#define DA_LEN     16
#define HINFO_LEN  48
#define MBINFO_LEN 64
#define BP_LEN     12

static void put16(uint8_t *p, uint16_t v) { p[0] = v; p[1] = v >> 8; }
static void put32(uint8_t *p, uint32_t v)
{
    p[0] = v; p[1] = v >> 8; p[2] = v >> 16; p[3] = v >> 24;
}
static uint16_t get16(const uint8_t *p) { return p[0] | p[1] << 8; }
static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

static size_t put_hdr(uint8_t *p, uint8_t type, uint32_t body_len)
{
    p[0] = PDBP_MAGIC; p[1] = PDBP_VERSION; p[2] = type; p[3] = 0;
    put32(p + 4, body_len);
    return PDBP_HDR_LEN;
}

/* Copy a name into a fixed wire field, always NUL-terminated. */
static void put_name(uint8_t *p, const char *name, size_t field)
{
    size_t n = strnlen(name, field - 1);
    memset(p, 0, field);
    memcpy(p, name, n);
}

/* A received name is valid only if it is terminated inside its field;
 * whatever follows the terminator is not kept (zeros, as put_name sends). */
static int get_name(char *dst, const uint8_t *p, size_t field)
{
    const uint8_t *nul = memchr(p, 0, field);
    if (!nul)
        return -1;
    memset(dst, 0, field);
    memcpy(dst, p, (size_t)(nul - p));
    return 0;
}

const char *pdbp_mtype_name(int type)
{
    switch (type) {
    case PDBP_URMSG: return "URMsg";
    case PDBP_DAMSG: return "DAMsg";
    case PDBP_HINFOMSG: return "HInfoMsg";
    case PDBP_MBINFOMSG: return "MBInfoMsg";
    case PDBP_UDATAMSG: return "UDataMsg";
    case PDBP_LOCALMSG: return "LocalMsg";
    case PDBP_REMOTEMSG: return "RemoteMsg";
    case PDBP_BPMSG: return "BPMsg";
    }
    return "unknown";
}

/* Check the common header of buf[0..n); on success *body_len is the body
 * length, which fits in n. */
static int check_hdr(const uint8_t *p, size_t n, uint8_t flags_ok, uint32_t *body_len,
                     const char **why)
{
    if (n < PDBP_HDR_LEN) { *why = "shorter than a header"; return -1; }
    if (p[0] != PDBP_MAGIC) { *why = "bad magic"; return -1; }
    if (p[1] != PDBP_VERSION) { *why = "unsupported version"; return -1; }
    if (p[3] & ~flags_ok) { *why = "unknown flags"; return -1; }
    *body_len = get32(p + 4);
    if (*body_len > n - PDBP_HDR_LEN) { *why = "length beyond the bytes received"; return -1; }
    return 0;
}

/* Validate a nested UDataMsg that must fill exactly p[0..n). */
static int parse_udata(const uint8_t *p, size_t n, const uint8_t **data,
                       uint32_t *len, const char **why)
{
    uint32_t bl;
    if (check_hdr(p, n, 0, &bl, why))
        return -1;
    if (p[2] != PDBP_UDATAMSG) { *why = "record does not hold a UDataMsg"; return -1; }
    if (bl != n - PDBP_HDR_LEN) { *why = "UDataMsg length disagrees with its record"; return -1; }
    *data = p + PDBP_HDR_LEN;
    *len = bl;
    return 0;
}

/* One record (route + UDataMsg) starting at p, at most n bytes available;
 * returns its total size or 0 when malformed. */
static size_t parse_record(const uint8_t *p, size_t n, struct pdbp_record *r,
                           const char **why)
{
    uint32_t bl;
    if (n < PDBP_REC_OVERHEAD) { *why = "truncated record"; return 0; }
    if (check_hdr(p + PDBP_ROUTE_LEN, n - PDBP_ROUTE_LEN, 0, &bl, why))
        return 0;
    size_t total = PDBP_REC_OVERHEAD + (size_t)bl;
    if (parse_udata(p + PDBP_ROUTE_LEN, total - PDBP_ROUTE_LEN, &r->data,
                    &r->len, why))
        return 0;
    r->src = (int32_t)get32(p);
    r->dst = (int32_t)get32(p + 4);
    if (r->src < 0 || r->dst < 0) { *why = "negative GP id in route"; return 0; }
    return total;
}

/* One RemoteMsg record (UDataMsg header, route if flagged, data) at p, at
 * most n bytes available; first: the block's first record, which must carry
 * a route; otherwise r keeps the previous record's route. Returns its total
 * size or 0 when malformed. */
static size_t parse_rrecord(const uint8_t *p, size_t n, int first,
                            struct pdbp_record *r, const char **why)
{
    uint32_t bl;
    if (check_hdr(p, n, PDBP_F_ROUTE, &bl, why))
        return 0;
    if (p[2] != PDBP_UDATAMSG) { *why = "record does not hold a UDataMsg"; return 0; }
    size_t hl = PDBP_HDR_LEN + (p[3] & PDBP_F_ROUTE ? PDBP_ROUTE_LEN : 0);
    if (n < hl) { *why = "truncated record"; return 0; }
    if (bl > n - hl) { *why = "record length beyond the block"; return 0; }
    if (p[3] & PDBP_F_ROUTE) {
        r->src = (int32_t)get32(p + PDBP_HDR_LEN);
        r->dst = (int32_t)get32(p + PDBP_HDR_LEN + 4);
        if (r->src < 0 || r->dst < 0) { *why = "negative GP id in route"; return 0; }
    } else if (first) {
        *why = "first record has no route";
        return 0;
    }
    r->data = p + hl;
    r->len = bl;
    return hl + bl;
}

static int parse_remote(const uint8_t *b, uint32_t bl, struct pdbp_msg *m,
                        const char **why)
{
    if (bl < PDBP_REMOTE_FIXED) { *why = "RemoteMsg too short"; return -1; }
    m->u.remote.host = get16(b);
    m->u.remote.nrec = get16(b + 2);
    m->u.remote.seq = get32(b + 4);
    m->u.remote.recs = b + PDBP_REMOTE_FIXED;
    m->u.remote.recs_len = bl - PDBP_REMOTE_FIXED;
    uint32_t off = 0, k = 0;
    struct pdbp_record r;
    while (off < m->u.remote.recs_len) {
        size_t sz = parse_rrecord(m->u.remote.recs + off,
                                  m->u.remote.recs_len - off, off == 0, &r, why);
        if (!sz)
            return -1;
        off += sz;
        k++;
    }
    if (k != m->u.remote.nrec) { *why = "RemoteMsg record count disagrees"; return -1; }
    return 0;
}

static int parse_ctrl(const uint8_t *b, uint32_t bl, struct pdbp_msg *m,
                      const char **why)
{
    static const uint32_t need[] = {
        [PDBP_URMSG] = UR_LEN, [PDBP_DAMSG] = DA_LEN,
        [PDBP_HINFOMSG] = HINFO_LEN, [PDBP_MBINFOMSG] = MBINFO_LEN,
    };
    if (bl != need[m->type]) { *why = "control message has the wrong length"; return -1; }
    switch (m->type) {
    case PDBP_URMSG:
        m->u.ur.reqid = get32(b); m->u.ur.op = get16(b + 4);
        m->u.ur.host = get16(b + 6);
        if (get_name(m->u.ur.name, b + 8, 48)) goto badname;
        if (m->u.ur.op != PDBP_UR_LOOKUP) goto badop;
        return 0;
    case PDBP_DAMSG:
        m->u.da.reqid = get32(b); m->u.da.op = get16(b + 4);
        m->u.da.host = get16(b + 6);
        m->u.da.status = (int32_t)get32(b + 8);
        m->u.da.value = (int32_t)get32(b + 12);
        if (m->u.da.op < PDBP_DA_ANSWER || m->u.da.op > PDBP_DA_STOP) goto badop;
        return 0;
    case PDBP_HINFOMSG:
        m->u.hi.host = get16(b); m->u.hi.nhosts = get16(b + 2);
        m->u.hi.block_size = get32(b + 4); m->u.hi.max_blocks = get32(b + 8);
        m->u.hi.init_real = get16(b + 12); m->u.hi.row_cap = get16(b + 14);
        if (get_name(m->u.hi.hostname, b + 16, 32)) goto badname;
        if (m->u.hi.host >= m->u.hi.nhosts) { *why = "HInfoMsg host out of range"; return -1; }
        return 0;
    default: /* PDBP_MBINFOMSG */
        m->u.mb.op = get16(b); m->u.mb.host = get16(b + 2);
        m->u.mb.gp = (int32_t)get32(b + 4); m->u.mb.pipe = (int32_t)get32(b + 8);
        m->u.mb.reqid = get32(b + 12);
        if (get_name(m->u.mb.name, b + 16, 48)) goto badname;
        if (m->u.mb.op < PDBP_MB_REGISTER || m->u.mb.op > PDBP_MB_UNBIND) goto badop;
        return 0;
    }
badname:
    *why = "name not terminated";
    return -1;
badop:
    *why = "unknown operation";
    return -1;
}

int pdbp_msg_parse(const void *buf, size_t n, struct pdbp_msg *m,
                   const char **why)
{
    const uint8_t *p = buf;
    uint32_t bl;
    static const char *dummy;
    if (!why)
        why = &dummy;
    if (!p || !m) { *why = "no buffer"; return -1; }
    if (check_hdr(p, n, 0, &bl, why))
        return -1;
    if (bl != n - PDBP_HDR_LEN) { *why = "trailing bytes after the message"; return -1; }
    memset(m, 0, sizeof(*m));
    m->type = p[2];
    m->flags = p[3];
    m->body_len = bl;
    const uint8_t *b = p + PDBP_HDR_LEN;
    switch (m->type) {
    case PDBP_URMSG: case PDBP_DAMSG: case PDBP_HINFOMSG: case PDBP_MBINFOMSG:
        return parse_ctrl(b, bl, m, why);
    case PDBP_BPMSG:
        if (bl != BP_LEN) { *why = "BPMsg has the wrong length"; return -1; }
        m->u.bp.op = get16(b); m->u.bp.host = get16(b + 2);
        m->u.bp.credits = get32(b + 4); m->u.bp.real = get32(b + 8);
        if (m->u.bp.op != PDBP_BP_CREDIT) { *why = "unknown operation"; return -1; }
        return 0;
    case PDBP_UDATAMSG:
        m->u.udata.data = b;
        m->u.udata.len = bl;
        return 0;
    case PDBP_LOCALMSG: {
        size_t sz = parse_record(b, bl, &m->u.local, why);
        if (!sz)
            return -1;
        if (sz != bl) { *why = "LocalMsg length disagrees"; return -1; }
        return 0;
    }
    case PDBP_REMOTEMSG:
        return parse_remote(b, bl, m, why);
    }
    *why = "unknown message type";
    return -1;
}

int pdbp_remote_next(const struct pdbp_msg *m, uint32_t *off,
                     struct pdbp_record *r)
{
    const char *why;
    if (m->type != PDBP_REMOTEMSG || *off >= m->u.remote.recs_len)
        return 0;
    size_t sz = parse_rrecord(m->u.remote.recs + *off,
                              m->u.remote.recs_len - *off, *off == 0, r, &why);
    if (!sz)
        return 0;
    *off += sz;
    return 1;
}

size_t pdbp_enc_ur(uint8_t *out, const struct pdbp_urmsg *x)
{
    uint8_t *b = out + put_hdr(out, PDBP_URMSG, UR_LEN);
    put32(b, x->reqid); put16(b + 4, x->op); put16(b + 6, x->host);
    put_name(b + 8, x->name, 48);
    return PDBP_HDR_LEN + UR_LEN;
}

size_t pdbp_enc_da(uint8_t *out, const struct pdbp_damsg *x)
{
    uint8_t *b = out + put_hdr(out, PDBP_DAMSG, DA_LEN);
    put32(b, x->reqid); put16(b + 4, x->op); put16(b + 6, x->host);
    put32(b + 8, (uint32_t)x->status); put32(b + 12, (uint32_t)x->value);
    return PDBP_HDR_LEN + DA_LEN;
}

size_t pdbp_enc_hinfo(uint8_t *out, const struct pdbp_hinfomsg *x)
{
    uint8_t *b = out + put_hdr(out, PDBP_HINFOMSG, HINFO_LEN);
    put16(b, x->host); put16(b + 2, x->nhosts);
    put32(b + 4, x->block_size); put32(b + 8, x->max_blocks);
    put16(b + 12, x->init_real); put16(b + 14, x->row_cap);
    put_name(b + 16, x->hostname, 32);
    return PDBP_HDR_LEN + HINFO_LEN;
}

size_t pdbp_enc_mbinfo(uint8_t *out, const struct pdbp_mbinfomsg *x)
{
    uint8_t *b = out + put_hdr(out, PDBP_MBINFOMSG, MBINFO_LEN);
    put16(b, x->op); put16(b + 2, x->host);
    put32(b + 4, (uint32_t)x->gp); put32(b + 8, (uint32_t)x->pipe);
    put32(b + 12, x->reqid);
    put_name(b + 16, x->name, 48);
    return PDBP_HDR_LEN + MBINFO_LEN;
}

size_t pdbp_enc_bp(uint8_t *out, const struct pdbp_bpmsg *x)
{
    uint8_t *b = out + put_hdr(out, PDBP_BPMSG, BP_LEN);
    put16(b, x->op); put16(b + 2, x->host);
    put32(b + 4, x->credits); put32(b + 8, x->real);
    return PDBP_HDR_LEN + BP_LEN;
}

/* route + UDataMsg at p; returns bytes written */
static size_t put_record(uint8_t *p, int32_t src, int32_t dst,
                         const void *data, uint32_t len)
{
    put32(p, (uint32_t)src);
    put32(p + 4, (uint32_t)dst);
    put_hdr(p + PDBP_ROUTE_LEN, PDBP_UDATAMSG, len);
    if (len)
        memcpy(p + PDBP_REC_OVERHEAD, data, len);
    return PDBP_REC_OVERHEAD + (size_t)len;
}

size_t pdbp_enc_local(uint8_t *out, int32_t src, int32_t dst,
                      const void *data, uint32_t len)
{
    size_t n = put_record(out + PDBP_HDR_LEN, src, dst, data, len);
    put_hdr(out, PDBP_LOCALMSG, (uint32_t)n);
    return PDBP_HDR_LEN + n;
}

size_t pdbp_remote_begin(uint8_t *blk, uint16_t host, uint32_t seq)
{
    put_hdr(blk, PDBP_REMOTEMSG, PDBP_REMOTE_FIXED);
    put16(blk + PDBP_HDR_LEN, host);
    put16(blk + PDBP_HDR_LEN + 2, 0);
    put32(blk + PDBP_HDR_LEN + 4, seq);
    return PDBP_HDR_LEN + PDBP_REMOTE_FIXED;
}

size_t pdbp_remote_append(uint8_t *blk, size_t used, int32_t src, int32_t dst,
                          const void *data, uint32_t len)
{
    size_t end = pdbp_remote_record(blk, used, src, dst, len, 1);
    if (len)
        memcpy(blk + end - len, data, len);
    return end;
}

size_t pdbp_remote_record(uint8_t *blk, size_t used, int32_t src, int32_t dst,
                          uint32_t len, int with_route)
{
    put_hdr(blk + used, PDBP_UDATAMSG, len);
    used += PDBP_HDR_LEN;
    if (with_route) {
        blk[used - PDBP_HDR_LEN + 3] = PDBP_F_ROUTE;
        put32(blk + used, (uint32_t)src);
        put32(blk + used + 4, (uint32_t)dst);
        used += PDBP_ROUTE_LEN;
    }
    return used + (size_t)len;
}

void pdbp_remote_end(uint8_t *blk, size_t used, uint16_t nrec)
{
    put32(blk + 4, (uint32_t)(used - PDBP_HDR_LEN));
    put16(blk + PDBP_HDR_LEN + 2, nrec);
}
