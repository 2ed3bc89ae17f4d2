// SPDX-License-Identifier: BSD-3-Clause
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

static int log_rank = -1;

void tnbc_set_log_rank(int rank) { log_rank = rank; }

void tnbc_warn(const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    int n;

    if (log_rank >= 0)
        n = snprintf(msg, sizeof msg, "tnbc[%d]: ", log_rank);
    else
        n = snprintf(msg, sizeof msg, "tnbc: ");
    va_start(ap, fmt);
    vsnprintf(msg + n, sizeof msg - (size_t)n - 1, fmt, ap);
    va_end(ap);
    for (char *c = msg; *c; c++)       /* one line, whatever a value held */
        if ((unsigned char)*c < 0x20)
            *c = '?';
    strcat(msg, "\n");
    tnbc_write_stderr(msg);
}

void tnbc_write_stderr(const char *msg)
{
    size_t len = strlen(msg);
    while (len > 0) {
        ssize_t w = write(STDERR_FILENO, msg, len);
        if (w <= 0) {
            if (w < 0 && errno == EINTR)
                continue;
            return;
        }
        msg += w;
        len -= (size_t)w;
    }
}

const char *tnbc_env_str(const char *name, const char *fallback)
{
    const char *v = getenv(name);
    return (v && *v) ? v : fallback;
}

long tnbc_env_long(const char *name, long fallback, long min, long max)
{
    const char *v = tnbc_env_str(name, NULL);
    char *end;
    long x;

    if (!v)
        return fallback;
    errno = 0;
    x = strtol(v, &end, 10);
    if (errno || end == v || *end != '\0' || x < min || x > max) {
        tnbc_warn("%s=\"%s\" is not a whole number in [%ld, %ld]; using %ld",
                  name, v, min, max, fallback);
        return fallback;
    }
    return x;
}

double tnbc_env_double(const char *name, double fallback, double min, double max)
{
    const char *v = tnbc_env_str(name, NULL);
    char *end;
    double x;

    if (!v)
        return fallback;
    errno = 0;
    x = strtod(v, &end);
    if (errno || end == v || *end != '\0' || !(x >= min && x <= max)) {
        if (isnan(fallback))
            tnbc_warn("%s=\"%s\" is not a number in [%g, %g]; using the default", name, v, min, max);
        else
            tnbc_warn("%s=\"%s\" is not a number in [%g, %g]; using %g", name, v, min, max, fallback);
        return fallback;
    }
    return x;
}

int tnbc_env_bool(const char *name, int fallback)
{
    static const char *const truthy[] = { "1", "yes", "on", "true", NULL };
    static const char *const falsy[] = { "0", "no", "off", "false", NULL };
    const char *v = getenv(name);
    int i;

    if (!v || !*v)
        return fallback;
    for (i = 0; truthy[i]; i++)
        if (strcasecmp(v, truthy[i]) == 0)
            return 1;
    for (i = 0; falsy[i]; i++)
        if (strcasecmp(v, falsy[i]) == 0)
            return 0;
    tnbc_warn("%s=\"%s\" is not a boolean (1/0, yes/no, on/off); using %d", name, v, fallback);
    return fallback;
}

int tnbc_env_choice(const char *name, const char *const *choices, int fallback)
{
    const char *v = getenv(name);
    char list[256] = "";
    int i;

    if (!v || !*v)
        return fallback;
    for (i = 0; choices[i]; i++) {
        if (strcasecmp(v, choices[i]) == 0)
            return i;
        if (strlen(list) + strlen(choices[i]) + 2 < sizeof list) {
            if (i)
                strcat(list, "|");
            strcat(list, choices[i]);
        }
    }
    tnbc_warn("%s=\"%s\" is not one of %s; using %s", name, v, list, choices[fallback]);
    return fallback;
}
