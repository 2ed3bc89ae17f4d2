// SPDX-License-Identifier: BSD-3-Clause
/*
 * rt.c - bringing a host's PDBP runtime up and down.
 */
#include "rt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pdbp_rt pdbp_rt;

static int mpi_up(int *argc, char ***argv)
{
    struct pdbp_rt *rt = &pdbp_rt;
    int inited = 0, provided = 0;
    MPI_Initialized(&inited);
    if (!inited) {
        if (MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS)
            return PDBP_E_MPI;
        rt->own_mpi = 1;
    } else {
        MPI_Query_thread(&provided);
    }
    if (provided < MPI_THREAD_MULTIPLE) {
        fprintf(stderr, "pdbp: MPI gives thread level %d; PDBP needs "
                "MPI_THREAD_MULTIPLE\n", provided);
        return PDBP_E_MPI;
    }
    MPI_Comm_dup(MPI_COMM_WORLD, &rt->comm);
    MPI_Comm_dup(MPI_COMM_WORLD, &rt->bcomm);
    /* a malformed or oversized message must come back as an error code */
    MPI_Comm_set_errhandler(rt->comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(rt->comm, &rt->host);
    MPI_Comm_size(rt->comm, &rt->nhosts);
    if (rt->nhosts > 65535) {
        fprintf(stderr, "pdbp: at most 65535 hosts\n");
        return PDBP_E_ARG;
    }
    return PDBP_OK;
}

/* Give every sub-pool its initial real space (algorithm 1, lines 1-6). */
static int pools_up(void)
{
    struct pdbp_rt *rt = &pdbp_rt;
    int n = rt->nhosts;
    uint64_t need = (uint64_t)(2 * n - 1) * rt->cfg.init_real;
    if (need > rt->cfg.max_blocks) {
        fprintf(stderr, "pdbp: host %d: TNBC_PDBP_MAX_BLOCKS=%u is below the %llu "
                "blocks the initial sub-pools need ((2*%d-1)*TNBC_PDBP_INIT_REAL)\n",
                rt->host, rt->cfg.max_blocks, (unsigned long long)need, n);
        return PDBP_E_LIMIT;
    }
    if (pdbp_umb_init(&rt->umb, rt->cfg.block_size, rt->cfg.max_blocks, rt->host))
        return PDBP_E_NOMEM;
    rt->sm = calloc(n, sizeof(*rt->sm));
    rt->rm = calloc(n, sizeof(*rt->rm));
    rt->open = malloc(n * sizeof(*rt->open));
    rt->last_src = calloc(n, sizeof(*rt->last_src));
    rt->last_dst = calloc(n, sizeof(*rt->last_dst));
    rt->credits = calloc(n, sizeof(*rt->credits));
    rt->seq = calloc(n, sizeof(*rt->seq));
    rt->row_busy = calloc(n, 1);
    rt->inflight = calloc(n, sizeof(*rt->inflight));
    rt->pfill = calloc(n, sizeof(*rt->pfill));
    rt->pfill_t = calloc(n, sizeof(*rt->pfill_t));
    rt->unacked = calloc(n, sizeof(*rt->unacked));
    rt->ack_t = calloc(n, sizeof(*rt->ack_t));
    if (!rt->sm || !rt->rm || !rt->open || !rt->last_src || !rt->last_dst || !rt->credits ||
        !rt->seq || !rt->row_busy || !rt->inflight || !rt->pfill || !rt->pfill_t || !rt->unacked || !rt->ack_t)
        return PDBP_E_NOMEM;
    /* host i serves i+1 first, then i+2, ...: see pick_row in xfer.c */
    rt->cur_dst = (rt->host + 1) % n;
    rt->cur_idle = -1;
    for (int j = 0; j < n; j++) {
        rt->open[j] = -1;
        rt->credits[j] = rt->cfg.init_real;
        if (pdbp_row_init(&rt->rm[j], rt->cfg.row_cap, rt->cfg.init_real, &rt->umb))
            return PDBP_E_NOMEM;
        /* no sub-pool sends to this host itself: local messages skip it */
        if (j != rt->host &&
            pdbp_row_init(&rt->sm[j], rt->cfg.row_cap, rt->cfg.init_real, &rt->umb))
            return PDBP_E_NOMEM;
    }
    return PDBP_OK;
}

static void pools_down(void)
{
    struct pdbp_rt *rt = &pdbp_rt;
    for (int j = 0; rt->sm && j < rt->nhosts; j++) {
        pdbp_row_destroy(&rt->sm[j]);
        pdbp_row_destroy(&rt->rm[j]);
    }
    free(rt->sm); free(rt->rm); free(rt->open);
    free(rt->last_src); free(rt->last_dst);
    free(rt->credits); free(rt->seq); free(rt->row_busy);
    free(rt->inflight); free(rt->pfill); free(rt->pfill_t);
    free(rt->unacked); free(rt->ack_t);
    rt->sm = rt->rm = NULL;
    pdbp_umb_destroy(&rt->umb);
}

int pdbp_init(int *argc, char ***argv)
{
    struct pdbp_rt *rt = &pdbp_rt;
    if (rt->inited)
        return PDBP_E_STATE;
    memset(rt, 0, sizeof(*rt));
    pthread_mutex_init(&rt->mu, NULL);
    pthread_cond_init(&rt->cv_send, NULL);
    pthread_cond_init(&rt->cv_space, NULL);
    pthread_cond_init(&rt->cv_ctrl, NULL);
    for (int i = 0; i < PDBP_MAX_GP; i++)
        pthread_cond_init(&rt->gps[i].cv, NULL);
    rt->next_reqid = 1;      /* 1 is READY_REQID */
    rt->sgp_dev = &pdbp_dev_host;
    pdbp_cfg_load(&rt->cfg);
    int rc = mpi_up(argc, argv);
    if (rc == PDBP_OK)
        rc = pools_up();
    /* every rank must take part in the init sequence even when its own
     * set-up failed, or the others would wait for it */
    if (rc == PDBP_OK)
        rc = pdbp_manager_start();
    if (rc == PDBP_OK)
        rc = pdbp_xfer_start();
    if (rc == PDBP_OK)
        rc = pdbp_pipes_start();
    if (rc == PDBP_OK)
        rc = pdbp_init_sequence();
    if (rc != PDBP_OK) {
        fprintf(stderr, "pdbp: host %d: pdbp_init failed: %s\n", rt->host,
                pdbp_strerror(rc));
        return rc;  /* the process should exit; threads may still be running */
    }
    rt->inited = 1;
    return PDBP_OK;
}

int pdbp_finalize(void)
{
    struct pdbp_rt *rt = &pdbp_rt;
    if (!rt->inited)
        return PDBP_E_STATE;
    for (uint32_t i = 0; i < rt->cfg.pipes; i++)
        if (rt->pipes[i].state == PIPE_BOUND)
            pdbp_flush((pdbp_pipe_t)i);
    if (pdbp_drain_sends(30000))
        fprintf(stderr, "pdbp: host %d: finalize: blocks still undelivered after 30 s "
                "(a receiver did not read its data)\n", rt->host);
    MPI_Barrier(rt->bcomm);
    pdbp_manager_stop();
    pdbp_xfer_stop();
    pdbp_pipes_stop();
    for (int i = 0; i < PDBP_MAX_GP; i++) {
        struct pdbp_rq *q = rt->gps[i].head;
        while (q) {
            struct pdbp_rq *n = q->next;
            free(q);
            q = n;
        }
        rt->gps[i].head = rt->gps[i].tail = NULL;
        rt->gps[i].used = 0;
    }
    pools_down();
    pdbp_mnode_free();
    MPI_Comm_free(&rt->comm);
    MPI_Comm_free(&rt->bcomm);
    rt->inited = 0;
    if (rt->own_mpi)
        MPI_Finalize();
    return PDBP_OK;
}

int pdbp_host(void) { return pdbp_rt.inited ? pdbp_rt.host : -1; }
int pdbp_nhosts(void) { return pdbp_rt.inited ? pdbp_rt.nhosts : 0; }

size_t pdbp_max_message(void)
{
    /* one record must fit in one block */
    return pdbp_rt.cfg.block_size - PDBP_HDR_LEN - PDBP_REMOTE_FIXED -
           PDBP_REC_OVERHEAD;
}

const char *pdbp_strerror(int rc)
{
    static const char *const s[] = {
        "ok", "bad argument", "wrong state", "no free pipe", "message too big",
        "not found", "timed out", "malformed message", "MPI error",
        "out of memory", "buffer too small", "block limit too small",
        "device transfer failed",
    };
    return rc <= 0 && -rc < (int)(sizeof(s) / sizeof(s[0])) ? s[-rc] : "unknown";
}

int pdbp_get_stats(struct pdbp_stats *st)
{
    struct pdbp_rt *rt = &pdbp_rt;
    if (!st)
        return PDBP_E_ARG;
    if (!rt->inited)
        return PDBP_E_STATE;
    pthread_mutex_lock(&rt->mu);
    *st = rt->st;
    st->blocks = rt->umb.nblocks;
    st->blocks_limit = rt->umb.limit;
    st->limit_hits = rt->umb.limit_hits;
    st->pool_bytes = (uint64_t)rt->umb.nblocks * rt->umb.block_size;
    st->grows = st->send_real = st->recv_real = 0;
    for (int j = 0; j < rt->nhosts; j++) {
        st->grows += rt->sm[j].grows + rt->rm[j].grows;
        st->send_real += rt->sm[j].real;
        st->recv_real += rt->rm[j].real;
    }
    st->mnode = __atomic_load_n(&rt->mnode, __ATOMIC_ACQUIRE);
    st->rejected = __atomic_load_n(&rt->st.rejected, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&rt->mu);
    return PDBP_OK;
}
