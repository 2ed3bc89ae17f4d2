// SPDX-License-Identifier: BSD-3-Clause
/* Memory model of the connection modes; see ibc_model.h for the formulas. */
#include "ibc_model.h"

#include <stdio.h>

static const char *const names[IBC_M_COUNT] = {
    "RC", "RC_SRQ", "XRC_S", "XRC_M", "GROUP", "GROUP_RC",
};

void ibc_model_defaults(struct ibc_model_params *p)
{
    *p = (struct ibc_model_params){
        .m = 1000, .c = 8, .s1 = 8000, .sd = 16, .rd = 16, .s2 = 64, .n = 5,
        .g = 4096, .k = 6,
    };
}

const char *ibc_model_name(enum ibc_model_mode mode)
{
    return (unsigned)mode < IBC_M_COUNT ? names[mode] : "?";
}

int ibc_model_check(const struct ibc_model_params *p, char *err, int errlen)
{
    const char *why = NULL;

    if (p->m < 1 || p->c < 1)
        why = "m and c must be at least 1";
    else if (p->m > UINT64_MAX / p->c)
        why = "m*c overflows";
    else if (p->s1 < 0 || p->sd < 0 || p->rd < 0 || p->s2 < 0 || p->n < 0)
        why = "sizes and depths must not be negative";
    else if (p->g < 1)
        why = "group size must be at least 1";
    else if (p->g % p->c != 0)
        why = "group size must be a multiple of c (whole nodes per group)";
    else if (p->k < 1 || p->k > 32)
        why = "k (XRC_M buffer sizes) must be in 1..32";
    if (why && err)
        snprintf(err, errlen, "%s", why);
    return why ? -1 : 0;
}

/* Average buffer of the XRC_M receive queues, as a fraction of s1. */
static double xrc_m_fraction(unsigned k)
{
    double sum = 0, part = 1;

    for (unsigned i = 0; i < k; i++, part /= 2)
        sum += part;
    return sum / k;
}

static uint64_t group_links(const struct ibc_model_params *p, uint64_t inside)
{
    uint64_t procs = p->m * p->c;
    uint64_t groups = (procs + p->g - 1) / p->g;

    return inside + (groups - 1);
}

struct ibc_model_row ibc_model_eval(const struct ibc_model_params *p, enum ibc_model_mode mode)
{
    uint64_t procs = p->m * p->c, peers = procs - 1;
    double srq_peer = p->s1 + p->sd * p->s2 + p->s2;
    struct ibc_model_row r = {0, 0};

    switch (mode) {
    case IBC_M_RC:
        r.conns = peers;
        r.bytes = (p->n * p->s1 + (p->sd + p->rd) * p->s2) * (double)peers;
        break;
    case IBC_M_RC_SRQ:
        r.conns = peers;
        r.bytes = srq_peer * (double)peers;
        break;
    case IBC_M_XRC_S:
        r.conns = p->m;
        r.bytes = srq_peer * (double)p->m;
        break;
    case IBC_M_XRC_M:
        r.conns = p->m;
        r.bytes = (xrc_m_fraction(p->k) * p->s1 + p->sd * p->s2 + p->s2) * (double)p->m;
        break;
    case IBC_M_GROUP:
        /* At or below one group the design uses full (XRC) connection. */
        r.conns = procs <= p->g ? p->m : group_links(p, p->g / p->c);
        r.bytes = srq_peer * (double)r.conns;
        break;
    case IBC_M_GROUP_RC:
        r.conns = procs <= p->g ? peers : group_links(p, p->g - 1);
        r.bytes = srq_peer * (double)r.conns;
        break;
    default:
        break;
    }
    return r;
}
