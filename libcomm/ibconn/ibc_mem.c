// SPDX-License-Identifier: BSD-3-Clause
/* Memory accounting: what the layer holds per process, counted the way the
 * model (ibc_model.h) counts it, plus what the kernel actually mapped. */
#include "ibc_int.h"

#include <stdio.h>
#include <string.h>

/* Queue memory the verbs provider mapped from the kernel (rxe maps every
 * QP, SRQ and CQ ring): the sizes of /dev/infiniband/uverbs* mappings. */
uint64_t ibc_mapped_bytes(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    uint64_t total = 0;

    if (!f)
        return 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (strstr(line, "/dev/infiniband/uverbs") && sscanf(line, "%lx-%lx", &lo, &hi) == 2)
            total += hi - lo;
    }
    fclose(f);
    return total;
}

void ibc_get_stats(struct ibc_ctx *c, struct ibc_stats *s)
{
    unsigned qps = 0;

    *s = c->st;
    for (int p = 0; p < c->nprocs; p++)
        qps += c->peers[p].qp != NULL;
    s->mode = c->mode;
    s->nprocs = (unsigned)c->nprocs;
    s->conns_static = c->conns_static;
    s->conns_dynamic = c->conns_dynamic;
    s->sd = c->sd;
    s->rd = c->rd;
    s->slot_bytes = c->slot;
    s->srq_depth = c->srq ? c->srq_posted : 0;
    s->bytes_wqe = (uint64_t)qps * (c->sd + c->rd) * c->o.s2 + (c->srq ? (uint64_t)c->srq_cap * c->o.s2 : 0);
    s->bytes_rbuf = c->srq ? (uint64_t)c->srq_posted * c->slot
                           : (uint64_t)c->conns_static * c->o.n * c->slot;
    s->bytes_model = s->bytes_wqe + s->bytes_rbuf;
    s->bytes_sbuf = (uint64_t)c->sslots * c->slot;
    s->bytes_cq = ((uint64_t)c->scq->cqe + (uint64_t)c->rcq->cqe) * 64;
    s->bytes_mapped = ibc_mapped_bytes();
}
