// SPDX-License-Identifier: BSD-3-Clause
/*
 * libFuzzer target for MESP's receive side: any bytes must be refused with
 * a one-line reason or parse into a message whose every record lies inside
 * the input. An accepted message is encoded again from what was parsed,
 * and that must parse to the same message (what a host accepts, the
 * encoders can say, and the reader reads back).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int cond)
{
    if (!cond)
        abort();
}

/* The records of a parsed RemoteMsg, each inside [base, base + n). */
static uint32_t walk_remote(const struct pdbp_msg *m, const uint8_t *base, size_t n,
                            struct pdbp_record *out, uint32_t max)
{
    struct pdbp_record r = { 0 };
    uint32_t off = 0, count = 0;
    while (pdbp_remote_next(m, &off, &r)) {
        check(r.data >= base && r.data + r.len <= base + n);
        check(r.src >= 0 && r.dst >= 0);
        if (count < max)
            out[count] = r;
        count++;
    }
    check(count == m->u.remote.nrec);
    return count;
}

/* Rebuilds the block with the senders' encoder (a route only where it
 * changes, as the writers do) and checks it reads back the same. */
static void remote_round_trip(const struct pdbp_msg *m, const uint8_t *data, size_t size)
{
    enum { MAX_REC = 4096 };
    static struct pdbp_record rec[MAX_REC];
    uint32_t nrec = walk_remote(m, data, size, rec, MAX_REC);
    if (nrec > MAX_REC)
        return;
    uint8_t *blk = malloc(size + (size_t)nrec * PDBP_ROUTE_LEN + 64);
    check(blk != NULL);
    size_t used = pdbp_remote_begin(blk, m->u.remote.host, m->u.remote.seq);
    for (uint32_t i = 0; i < nrec; i++) {
        int route = i == 0 || rec[i].src != rec[i - 1].src || rec[i].dst != rec[i - 1].dst;
        used = pdbp_remote_record(blk, used, rec[i].src, rec[i].dst, rec[i].len, route);
        if (rec[i].len)
            memcpy(blk + used - rec[i].len, rec[i].data, rec[i].len);
    }
    pdbp_remote_end(blk, used, (uint16_t)nrec);
    check(used <= size);             /* never longer than what carried the same records */
    struct pdbp_msg again;
    const char *why = NULL;
    check(pdbp_msg_parse(blk, used, &again, &why) == 0);
    check(again.u.remote.host == m->u.remote.host && again.u.remote.seq == m->u.remote.seq &&
          again.u.remote.nrec == nrec);
    struct pdbp_record r = { 0 };
    uint32_t off = 0;
    for (uint32_t i = 0; pdbp_remote_next(&again, &off, &r); i++)
        check(r.src == rec[i].src && r.dst == rec[i].dst && r.len == rec[i].len &&
              memcmp(r.data, rec[i].data, r.len) == 0);
    free(blk);
}

/* Control and local messages: encode what was parsed, parse it again. */
static void control_round_trip(const struct pdbp_msg *m)
{
    uint8_t out[PDBP_CTRL_MAX + 64];
    size_t n;
    switch (m->type) {
    case PDBP_URMSG: n = pdbp_enc_ur(out, &m->u.ur); break;
    case PDBP_DAMSG: n = pdbp_enc_da(out, &m->u.da); break;
    case PDBP_HINFOMSG: n = pdbp_enc_hinfo(out, &m->u.hi); break;
    case PDBP_MBINFOMSG: n = pdbp_enc_mbinfo(out, &m->u.mb); break;
    case PDBP_BPMSG: n = pdbp_enc_bp(out, &m->u.bp); break;
    default: return;
    }
    struct pdbp_msg again;
    const char *why = NULL;
    check(n <= PDBP_CTRL_MAX && pdbp_msg_parse(out, n, &again, &why) == 0);
    check(again.type == m->type && memcmp(&again.u, &m->u, sizeof again.u) == 0);
}

static void local_round_trip(const struct pdbp_msg *m, const uint8_t *data, size_t size)
{
    const struct pdbp_record *r = &m->u.local;
    check(r->data >= data && r->data + r->len <= data + size);
    uint8_t *out = malloc(size + 64);
    check(out != NULL);
    size_t n = pdbp_enc_local(out, r->src, r->dst, r->data, r->len);
    struct pdbp_msg again;
    const char *why = NULL;
    check(n == size && pdbp_msg_parse(out, n, &again, &why) == 0);
    check(again.u.local.src == r->src && again.u.local.dst == r->dst &&
          again.u.local.len == r->len && memcmp(again.u.local.data, r->data, r->len) == 0);
    free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct pdbp_msg m;
    const char *why = NULL;
    if (pdbp_msg_parse(data, size, &m, &why) != 0) {
        check(why != NULL && why[0] != '\0' && strchr(why, '\n') == NULL);
        return 0;
    }
    if (m.type == PDBP_REMOTEMSG)
        remote_round_trip(&m, data, size);
    else if (m.type == PDBP_LOCALMSG)
        local_round_trip(&m, data, size);
    else if (m.type == PDBP_UDATAMSG)
        check(m.u.udata.data >= data && m.u.udata.data + m.u.udata.len <= data + size);
    else
        control_round_trip(&m);
    return 0;
}
