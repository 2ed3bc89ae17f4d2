// SPDX-License-Identifier: BSD-3-Clause
/*
 * pipe.c - the dynamic pipe pool of a host: the pipe table (pipes[]), the
 * GP-pipe binding table (gps[].pipe / pipes[].gp) and the writer thread that
 * serves each pipe's write side. A GP borrows a free pipe when it starts to
 * communicate and gives it back when done, so a few pipes serve many GPs.
 */
#include "rt.h"

#include <stdlib.h>

/* Writer thread: move each queued message to its destination. */
static void *writer_main(void *arg)
{
    struct pdbp_rt *rt = &pdbp_rt;
    struct pdbp_pipe *p = arg;
    pthread_mutex_lock(&rt->mu);
    for (;;) {
        while (!p->head && !p->quit)
            pthread_cond_wait(&p->cv_work, &rt->mu);
        if (!p->head)
            break;
        struct pdbp_wq *w = p->head;
        p->head = w->next;
        if (!p->head)
            p->tail = NULL;
        p->writing = 1;
        pthread_mutex_unlock(&rt->mu);
        int rc = GP_HOST(w->dst) == rt->host
                     ? pdbp_put_local(w->src, w->dst, w->data, w->len)
                     : pdbp_put_remote(w->src, w->dst, w->data, w->len);
        if (rc == PDBP_E_NOTFOUND)
            pdbp_reject(rt->host, "local message", "destination GP is not registered");
        pthread_mutex_lock(&rt->mu);
        p->bytes -= w->len;
        p->writing = 0;
        free(w);
        pthread_cond_broadcast(&p->cv_room);
    }
    pthread_mutex_unlock(&rt->mu);
    return NULL;
}

int pdbp_pipes_start(void)
{
    struct pdbp_rt *rt = &pdbp_rt;
    rt->pipes = calloc(rt->cfg.pipes, sizeof(*rt->pipes));
    if (!rt->pipes)
        return PDBP_E_NOMEM;
    for (uint32_t i = 0; i < rt->cfg.pipes; i++) {
        struct pdbp_pipe *p = &rt->pipes[i];
        p->gp = -1;
        pthread_cond_init(&p->cv_work, NULL);
        pthread_cond_init(&p->cv_room, NULL);
        if (pthread_create(&p->writer, NULL, writer_main, p))
            return PDBP_E_NOMEM;
    }
    return PDBP_OK;
}

void pdbp_pipes_stop(void)
{
    struct pdbp_rt *rt = &pdbp_rt;
    if (!rt->pipes)
        return;
    pthread_mutex_lock(&rt->mu);
    for (uint32_t i = 0; i < rt->cfg.pipes; i++) {
        rt->pipes[i].quit = 1;
        pthread_cond_signal(&rt->pipes[i].cv_work);
    }
    pthread_mutex_unlock(&rt->mu);
    for (uint32_t i = 0; i < rt->cfg.pipes; i++) {
        pthread_join(rt->pipes[i].writer, NULL);
        struct pdbp_wq *w = rt->pipes[i].head;
        while (w) {
            struct pdbp_wq *n = w->next;
            free(w);
            w = n;
        }
        pthread_cond_destroy(&rt->pipes[i].cv_work);
        pthread_cond_destroy(&rt->pipes[i].cv_room);
    }
    free(rt->pipes);
    rt->pipes = NULL;
}
