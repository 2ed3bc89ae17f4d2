// SPDX-License-Identifier: BSD-3-Clause
/* Device selection, capability query and the choice of connection mode. */
#include "ibc_int.h"

#include <stdlib.h>
#include <string.h>

static int name_listed(const char *list, const char *name)
{
    size_t n = strlen(name);

    for (const char *p = list; *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && strncmp(p, name, n) == 0)
            return 1;
        p += len + (end != NULL);
    }
    return 0;
}

/* The first IPv4-mapped GID (RoCE v2 over IPv4), else index 0. */
static int pick_gid(struct ibc_ctx *c, int want)
{
    struct ibv_port_attr pa;
    union ibv_gid g;

    if (ibv_query_port(c->dev, c->port, &pa))
        return ibc_err("cannot query port %u of %s", c->port, c->dev_name);
    if (pa.state != IBV_PORT_ACTIVE)
        return ibc_err("port %u of %s is not active", c->port, c->dev_name);
    c->mtu = pa.active_mtu;
    if (want >= pa.gid_tbl_len)
        return ibc_err("TNBC_IBCONN_GID=%d beyond the GID table of %s (%d)", want,
                       c->dev_name, pa.gid_tbl_len);
    c->gid_index = want >= 0 ? want : 0;
    for (int i = 0; want < 0 && i < pa.gid_tbl_len && i < 16; i++) {
        if (ibv_query_gid(c->dev, c->port, i, &g))
            break;
        static const uint8_t v4map[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
        if (memcmp(g.raw, v4map, 12) == 0) {
            c->gid_index = i;
            break;
        }
    }
    if (ibv_query_gid(c->dev, c->port, c->gid_index, &c->gid))
        return ibc_err("cannot read GID %d of %s", c->gid_index, c->dev_name);
    return 0;
}

/* Processes of a node spread over its devices (local rank modulo count). */
int ibc_dev_open(struct ibc_ctx *c)
{
    struct ibv_device **list, *chosen[32];
    int n = 0, total, local_rank;
    MPI_Comm node;

    list = ibv_get_device_list(&total);
    if (!list || total == 0) {
        if (list)
            ibv_free_device_list(list);
        return ibc_err("no RDMA device (is rdma_rxe loaded and an rxe link added?)");
    }
    for (int i = 0; i < total && n < 32; i++)
        if (!c->o.devices[0] || name_listed(c->o.devices, ibv_get_device_name(list[i])))
            chosen[n++] = list[i];
    if (n == 0) {
        ibv_free_device_list(list);
        return ibc_err("none of TNBC_IBCONN_DEVICES='%s' exists", c->o.devices);
    }
    MPI_Comm_split_type(c->comm, MPI_COMM_TYPE_SHARED, c->rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &local_rank);
    MPI_Comm_free(&node);
    struct ibv_device *d = chosen[local_rank % n];
    c->dev = ibv_open_device(d);
    c->dev_name = strdup(ibv_get_device_name(d));
    ibv_free_device_list(list);
    if (!c->dev)
        return ibc_err("cannot open %s", c->dev_name);
    c->port = 1;
    if (pick_gid(c, c->o.gid_index))
        return -1;
    c->pd = ibv_alloc_pd(c->dev);
    return c->pd ? 0 : ibc_err("cannot allocate a protection domain on %s", c->dev_name);
}

/* Modes nearest to each, in order of preference, when it cannot be used. */
static const enum ibc_mode nearest[IBC_MODE_COUNT][3] = {
    [IBC_RC] = {IBC_RC, IBC_RC, IBC_RC},
    [IBC_RC_SRQ] = {IBC_RC, IBC_RC, IBC_RC},
    [IBC_XRC] = {IBC_RC_SRQ, IBC_GROUP, IBC_RC},
    [IBC_GROUP] = {IBC_RC_SRQ, IBC_RC, IBC_RC},
};

/* Why the device (any rank's) cannot do `mode`, or NULL. */
static const char *refusal(unsigned supported, enum ibc_mode mode)
{
    if (supported & (1u << mode))
        return NULL;
    switch (mode) {
    case IBC_XRC:
        return "the device has no XRC (IBV_DEVICE_XRC not in device_cap_flags)";
    case IBC_RC_SRQ:
    case IBC_GROUP:
        return "the device has no shared receive queues (max_srq = 0)";
    default:
        return "the device cannot do reliable connections";
    }
}

int ibc_mode_choose(struct ibc_ctx *c)
{
    struct ibv_device_attr a;
    unsigned mine = 1u << IBC_RC, all;
    enum ibc_mode want = c->o.mode;

    if (ibv_query_device(c->dev, &a))
        return ibc_err("cannot query %s", c->dev_name);
    if (a.max_srq > 0)
        mine |= 1u << IBC_RC_SRQ | 1u << IBC_GROUP;
    /* XRC (XRC domains, SRQ-targeted sends) is never marked supported: no
     * device reachable here has it (rxe has none), so its data path is not
     * built; where the device flag is set the refusal says so. */
    MPI_Allreduce(&mine, &all, 1, MPI_UNSIGNED, MPI_BAND, c->comm);

    const char *why = refusal(all, want);
    if (!why && (c->o.allowed & (1u << want))) {
        c->mode = want;
        return 0;
    }
    if (!why)
        why = "it is not in TNBC_IBCONN_ALLOW";
    if (want == IBC_XRC && (a.device_cap_flags & IBV_DEVICE_XRC))
        why = "this build has no XRC data path";
    for (int i = 0; i < 3; i++) {
        enum ibc_mode m = nearest[want][i];
        if (m != want && (all & (1u << m)) && (c->o.allowed & (1u << m))) {
            if (c->rank == 0)
                fprintf(stderr, "ibconn: mode %s refused on %s: %s; using %s\n",
                        ibc_mode_name(want), c->dev_name, why, ibc_mode_name(m));
            c->mode = m;
            return 0;
        }
    }
    if (c->rank != 0)
        return -1;
    return ibc_err("mode %s refused on %s: %s; no allowed fallback (TNBC_IBCONN_ALLOW)",
                   ibc_mode_name(want), c->dev_name, why);
}

void ibc_dev_close(struct ibc_ctx *c)
{
    if (c->pd)
        ibv_dealloc_pd(c->pd);
    if (c->dev)
        ibv_close_device(c->dev);
    free((void *)c->dev_name);
}
