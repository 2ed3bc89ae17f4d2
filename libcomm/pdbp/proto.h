/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * proto.h - MESP, the PDBP message protocol: layered headers, control (CMP)
 * and data (DMP) messages, and their validation on receipt.
 *
 * Every message starts with the same 8-byte header (little endian):
 *   u8 magic (0xD8) | u8 version (2) | u8 type | u8 flags | u32 body length
 * and the body layout depends on the type. Data messages nest: a RemoteMsg
 * (one block on the wire) carries records, each a UDataMsg header, the
 * route (source and destination GP) when it differs from the record
 * before's (flag PDBP_F_ROUTE), then the payload.
 *
 * Nothing here trusts its input: pdbp_msg_parse() checks magic, version,
 * type, every length against the bytes actually received, and names the
 * first problem it finds.
 */
#ifndef PDBP_PROTO_H
#define PDBP_PROTO_H

#include <stddef.h>
#include <stdint.h>

#define PDBP_MAGIC    0xD8
#define PDBP_VERSION  2            /* 2: RemoteMsg records header first, route only when it changes */
#define PDBP_HDR_LEN  8
#define PDBP_ROUTE_LEN 8            /* i32 src gp, i32 dst gp */
/* bytes a record adds to its payload inside a RemoteMsg */
#define PDBP_REC_OVERHEAD (PDBP_ROUTE_LEN + PDBP_HDR_LEN)  /* most a record adds */
/* A RemoteMsg record is a UDataMsg header, then (flag PDBP_F_ROUTE) its
 * route, then the user's bytes; a record without the flag has the route of
 * the record before it in the block (the first one must carry one). */
#define PDBP_F_ROUTE   0x01
#define PDBP_REMOTE_FIXED 8         /* u16 src host, u16 nrec, u32 seq */
#define PDBP_CTRL_MAX  128          /* no control message is longer */

enum pdbp_mtype {
    /* control messages (CMP) */
    PDBP_URMSG     = 1,  /* request to the management node */
    PDBP_DAMSG     = 2,  /* answer (also: ready, heartbeat, takeover, stop) */
    PDBP_HINFOMSG  = 3,  /* host information, init sequence */
    PDBP_MBINFOMSG = 4,  /* GP / pipe binding information */
    /* data messages (DMP) */
    PDBP_UDATAMSG  = 16, /* user data: header + payload */
    PDBP_LOCALMSG  = 17, /* route + UDataMsg, between GPs of one host */
    PDBP_REMOTEMSG = 18, /* block of routed UDataMsgs between hosts */
    PDBP_BPMSG     = 19, /* buffer-pool state: credits for a receive sub-pool */
};

/* URMsg ops */
enum { PDBP_UR_LOOKUP = 1 };
/* DAMsg ops */
enum { PDBP_DA_ANSWER = 1, PDBP_DA_READY = 2, PDBP_DA_HEARTBEAT = 3,
       PDBP_DA_TAKEOVER = 4, PDBP_DA_STOP = 5 };
/* MBInfoMsg ops */
enum { PDBP_MB_REGISTER = 1, PDBP_MB_FREE = 2, PDBP_MB_BIND = 3,
       PDBP_MB_UNBIND = 4 };
/* BPMsg ops */
enum { PDBP_BP_CREDIT = 1 };

struct pdbp_urmsg {
    uint32_t reqid;
    uint16_t op, host;           /* host: who asks (answer goes there) */
    char name[48];
};
struct pdbp_damsg {
    uint32_t reqid;
    uint16_t op, host;           /* host: who answers */
    int32_t status, value;
};
struct pdbp_hinfomsg {
    uint16_t host, nhosts;
    uint32_t block_size, max_blocks;
    uint16_t init_real, row_cap;
    char hostname[32];
};
struct pdbp_mbinfomsg {
    uint16_t op, host;
    int32_t gp, pipe;
    uint32_t reqid;              /* 0: no acknowledgement wanted */
    char name[48];
};
struct pdbp_bpmsg {
    uint16_t op, host;
    uint32_t credits, real;
};

/* One record of a RemoteMsg or a LocalMsg, pointing into the received bytes. */
struct pdbp_record {
    int32_t src, dst;
    const uint8_t *data;
    uint32_t len;
};

/* A parsed message; pointers refer into the caller's buffer. */
struct pdbp_msg {
    uint8_t type, flags;
    uint32_t body_len;
    union {
        struct pdbp_urmsg ur;
        struct pdbp_damsg da;
        struct pdbp_hinfomsg hi;
        struct pdbp_mbinfomsg mb;
        struct pdbp_bpmsg bp;
        struct { const uint8_t *data; uint32_t len; } udata;
        struct pdbp_record local;
        struct { uint16_t host, nrec; uint32_t seq;
                 const uint8_t *recs; uint32_t recs_len; } remote;
    } u;
};

/* Validate buf[0..n) as one complete message. Returns 0, or -1 with *why set
 * to a static one-line reason. */
int pdbp_msg_parse(const void *buf, size_t n, struct pdbp_msg *m,
                   const char **why);

/* Iterate the records of a parsed RemoteMsg (validated by pdbp_msg_parse):
 * *off starts at 0; returns 1 with the record at *off in r and *off past
 * it, 0 at the end. Pass the same r each time: a record without a route of
 * its own keeps the one r holds from the record before. */
int pdbp_remote_next(const struct pdbp_msg *m, uint32_t *off,
                     struct pdbp_record *r);

/* Encoders write into out (at least PDBP_CTRL_MAX bytes for control
 * messages) and return the message length. */
size_t pdbp_enc_ur(uint8_t *out, const struct pdbp_urmsg *x);
size_t pdbp_enc_da(uint8_t *out, const struct pdbp_damsg *x);
size_t pdbp_enc_hinfo(uint8_t *out, const struct pdbp_hinfomsg *x);
size_t pdbp_enc_mbinfo(uint8_t *out, const struct pdbp_mbinfomsg *x);
size_t pdbp_enc_bp(uint8_t *out, const struct pdbp_bpmsg *x);
size_t pdbp_enc_local(uint8_t *out, int32_t src, int32_t dst,
                      const void *data, uint32_t len);

/* RemoteMsg building inside a block: begin writes the fixed part, append
 * adds one record (caller checked it fits), end fixes up the lengths. */
size_t pdbp_remote_begin(uint8_t *blk, uint16_t host, uint32_t seq);
size_t pdbp_remote_append(uint8_t *blk, size_t used, int32_t src, int32_t dst,
                          const void *data, uint32_t len);
void pdbp_remote_end(uint8_t *blk, size_t used, uint16_t nrec);
/* Like append, but writes only the record's header and (with_route) route;
 * returns the new fill: its len data bytes go to blk + that - len, copied
 * by the caller later. Without with_route the record has the route of the
 * record before it in the block (never for the first). */
size_t pdbp_remote_record(uint8_t *blk, size_t used, int32_t src, int32_t dst,
                          uint32_t len, int with_route);

const char *pdbp_mtype_name(int type);

#endif
