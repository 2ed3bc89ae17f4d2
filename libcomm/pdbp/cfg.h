/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cfg.h - PDBP run-time settings, read once from TNBC_PDBP_* variables.
 * A bad value prints one line and falls back to the default.
 */
#ifndef PDBP_CFG_H
#define PDBP_CFG_H

#include <stddef.h>
#include <stdint.h>

struct pdbp_cfg {
    uint32_t block_size;  /* TNBC_PDBP_BLOCK_SIZE: bytes per user memory block */
    uint32_t max_blocks;  /* TNBC_PDBP_MAX_BLOCKS: UMB limit per host */
    uint32_t init_real;   /* TNBC_PDBP_INIT_REAL: initial real elements m */
    uint32_t row_cap;     /* TNBC_PDBP_ROW_CAP: sub-pool capacity N */
    double threshold;     /* TNBC_PDBP_THRESHOLD: SU threshold, 0 < T < 1 */
    uint32_t pipes;       /* TNBC_PDBP_PIPES: pipes in the pipe pool */
    uint32_t threads;     /* TNBC_PDBP_THREADS: sender thread pool size */
    uint32_t inflight;    /* TNBC_PDBP_INFLIGHT: blocks in flight per destination */
    uint32_t piece;       /* TNBC_PDBP_PIECE: largest MPI message of a block, 0 = whole */
    uint32_t pipe_bytes;  /* TNBC_PDBP_PIPE_BYTES: bytes queued per write pipe */
    uint32_t hb_ms;       /* TNBC_PDBP_HEARTBEAT_MS: management heartbeat */
    uint32_t hb_timeout_ms; /* TNBC_PDBP_FAILOVER_MS: silence before takeover */
    uint32_t req_timeout_ms; /* TNBC_PDBP_REQUEST_MS: control request timeout */
};

void pdbp_cfg_load(struct pdbp_cfg *c);

#endif
