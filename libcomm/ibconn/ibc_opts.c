// SPDX-License-Identifier: BSD-3-Clause
/* Run-time options: defaults from the design, overridden by TNBC_IBCONN_*. */
#include "ibc_int.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

int ibc_err(const char *fmt, ...)
{
    char msg[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "ibconn: %s\n", msg);
    return -1;
}

static const char *const mode_names[IBC_MODE_COUNT] = {"rc", "rc_srq", "xrc", "group"};

const char *ibc_mode_name(enum ibc_mode mode)
{
    return (unsigned)mode < IBC_MODE_COUNT ? mode_names[mode] : "?";
}

static int mode_parse(const char *s, enum ibc_mode *out)
{
    for (int m = 0; m < IBC_MODE_COUNT; m++)
        if (strcmp(s, mode_names[m]) == 0) {
            *out = m;
            return 0;
        }
    return -1;
}

static int env_uint(const char *name, unsigned long min, unsigned long max, unsigned long *v)
{
    const char *s = getenv(name);
    char *end;

    if (!s || !*s)
        return 0;
    errno = 0;
    unsigned long x = strtoul(s, &end, 10);
    if (errno || *end || s[0] == '-' || x < min || x > max)
        return ibc_err("%s='%s' is not an integer in %lu..%lu", name, s, min, max);
    *v = x;
    return 0;
}

static int env_mode_list(const char *name, unsigned *mask)
{
    const char *s = getenv(name);
    char buf[128], *save, *tok;
    enum ibc_mode m;

    if (!s || !*s)
        return 0;
    if (strlen(s) >= sizeof buf)
        return ibc_err("%s is too long", name);
    strcpy(buf, s);
    *mask = 0;
    for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (mode_parse(tok, &m))
            return ibc_err("%s: unknown mode '%s' (rc, rc_srq, xrc, group)", name, tok);
        *mask |= 1u << m;
    }
    return 0;
}

int ibc_opts_from_env(struct ibc_opts *o)
{
    static const struct { const char *name; size_t off; unsigned long min, max; } nums[] = {
        {"TNBC_IBCONN_SD", offsetof(struct ibc_opts, sd), 1, 4096},
        {"TNBC_IBCONN_RD", offsetof(struct ibc_opts, rd), 1, 4096},
        {"TNBC_IBCONN_N", offsetof(struct ibc_opts, n), 1, 4096},
        {"TNBC_IBCONN_SRQ_PER_CONN", offsetof(struct ibc_opts, srq_per_conn), 1, 64},
        {"TNBC_IBCONN_SRQ_MIN", offsetof(struct ibc_opts, srq_min), 1, 1 << 20},
        {"TNBC_IBCONN_SRQ_MAX", offsetof(struct ibc_opts, srq_max), 1, 1 << 20},
        {"TNBC_IBCONN_GROUP", offsetof(struct ibc_opts, group), 1, 1 << 24},
        {"TNBC_IBCONN_S2", offsetof(struct ibc_opts, s2), 1, 4096},
    };
    unsigned long v;
    const char *s;

    *o = (struct ibc_opts){
        .mode = IBC_RC_SRQ, .allowed = (1u << IBC_MODE_COUNT) - 1, .eager = 8192,
        .sd = 16, .rd = 16, .n = 5, .srq_per_conn = 1, .srq_min = 16, .srq_max = 4096,
        .group = 4096, .proxy = 0, .gid_index = -1, .s2 = 64,
    };
    if ((s = getenv("TNBC_IBCONN_MODE")) && *s && mode_parse(s, &o->mode))
        return ibc_err("TNBC_IBCONN_MODE='%s' is not one of rc, rc_srq, xrc, group", s);
    if (env_mode_list("TNBC_IBCONN_ALLOW", &o->allowed))
        return -1;
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++) {
        v = *(unsigned *)((char *)o + nums[i].off);
        if (env_uint(nums[i].name, nums[i].min, nums[i].max, &v))
            return -1;
        *(unsigned *)((char *)o + nums[i].off) = (unsigned)v;
    }
    v = o->eager;
    if (env_uint("TNBC_IBCONN_EAGER", 64, 1 << 20, &v))
        return -1;
    o->eager = v;
    v = 0;
    if (env_uint("TNBC_IBCONN_PROXY", 0, 1, &v))
        return -1;
    o->proxy = (int)v;
    v = (unsigned long)-1;
    if (env_uint("TNBC_IBCONN_GID", 0, 255, &v))
        return -1;
    o->gid_index = v == (unsigned long)-1 ? -1 : (int)v;
    if ((s = getenv("TNBC_IBCONN_DEVICES")) && *s) {
        if (strlen(s) >= sizeof o->devices)
            return ibc_err("TNBC_IBCONN_DEVICES is too long");
        strcpy(o->devices, s);
    }
    if (o->n > o->rd)
        return ibc_err("TNBC_IBCONN_N (%u) must not exceed TNBC_IBCONN_RD (%u)", o->n, o->rd);
    if (o->srq_min > o->srq_max)
        return ibc_err("TNBC_IBCONN_SRQ_MIN exceeds TNBC_IBCONN_SRQ_MAX");
    return 0;
}
