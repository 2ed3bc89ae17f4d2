// SPDX-License-Identifier: BSD-3-Clause
/*
 * cfg.c - TNBC_PDBP_* environment settings.
 */
#include "cfg.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

static uint32_t env_u32(const char *name, uint32_t def, uint32_t lo, uint32_t hi)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return def;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno || *end || *s == '-' || v < lo || v > hi) {
        fprintf(stderr, "pdbp: %s='%s' is not a number in [%u, %u]; using %u\n",
                name, s, lo, hi, def);
        return def;
    }
    return (uint32_t)v;
}

static double env_frac(const char *name, double def)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return def;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end || !(v > 0.0 && v < 1.0)) {
        fprintf(stderr, "pdbp: %s='%s' is not a number in (0, 1); using %g\n",
                name, s, def);
        return def;
    }
    return v;
}

void pdbp_cfg_load(struct pdbp_cfg *c)
{
    c->block_size = env_u32("TNBC_PDBP_BLOCK_SIZE", 256 * 1024, 4096, 64u << 20);
    c->max_blocks = env_u32("TNBC_PDBP_MAX_BLOCKS", 1024, 2, 1u << 20);
    c->init_real = env_u32("TNBC_PDBP_INIT_REAL", 4, 2, 4096);
    c->row_cap = env_u32("TNBC_PDBP_ROW_CAP", 32, 2, 65535);
    if (c->row_cap < c->init_real) {
        fprintf(stderr, "pdbp: TNBC_PDBP_ROW_CAP=%u is below TNBC_PDBP_INIT_REAL=%u; "
                "using %u\n", c->row_cap, c->init_real, c->init_real);
        c->row_cap = c->init_real;
    }
    c->threshold = env_frac("TNBC_PDBP_THRESHOLD", 0.5);
    c->pipes = env_u32("TNBC_PDBP_PIPES", 16, 1, 1024);
    c->threads = env_u32("TNBC_PDBP_THREADS", 2, 1, 64);
    c->inflight = env_u32("TNBC_PDBP_INFLIGHT", 4, 1, 64);
    /* below Open MPI's TCP BTL eager limit (64 KiB with its headers), so a
     * block goes without a rendezvous handshake */
    c->piece = env_u32("TNBC_PDBP_PIECE", 65536 - 256, 0, 64u << 20);
    if (c->piece && c->piece < 4096) {
        fprintf(stderr, "pdbp: TNBC_PDBP_PIECE=%u is neither 0 nor at least 4096; "
                "using %u\n", c->piece, 65536 - 256);
        c->piece = 65536 - 256;
    }
    c->pipe_bytes = env_u32("TNBC_PDBP_PIPE_BYTES", 4u << 20, 4096, 1u << 30);
    c->hb_ms = env_u32("TNBC_PDBP_HEARTBEAT_MS", 100, 10, 60000);
    c->hb_timeout_ms = env_u32("TNBC_PDBP_FAILOVER_MS", 5000, 50, 600000);
    c->req_timeout_ms = env_u32("TNBC_PDBP_REQUEST_MS", 2000, 50, 600000);
}
