/* SPDX-License-Identifier: BSD-3-Clause */
/* Configuration from TNBC_* environment variables, and diagnostics.
 *
 * Every setting has a documented default (docs/configuration.md). A bad value
 * is reported once, in one line naming the variable, the value and the
 * fallback; it never stops the program. */
#ifndef TNBC_CONFIG_H
#define TNBC_CONFIG_H

#include <stddef.h>

long tnbc_env_long(const char *name, long fallback, long min, long max);
/* A decimal number in [min, max] (NaN never is). A NaN fallback is the
 * caller's own default: the warning says "using the default". */
double tnbc_env_double(const char *name, double fallback, double min, double max);
int tnbc_env_bool(const char *name, int fallback);
/* Index of the value in the NULL-terminated list, or fallback. */
int tnbc_env_choice(const char *name, const char *const *choices, int fallback);
const char *tnbc_env_str(const char *name, const char *fallback);

/* "tnbc: <message>" on stderr, prefixed with the MPI rank once it is known. */
void tnbc_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The same, at most once per key (a static int the caller owns). */
#define tnbc_warn_once(flag, ...) do { if (!(flag)) { (flag) = 1; tnbc_warn(__VA_ARGS__); } } while (0)
void tnbc_set_log_rank(int rank);

/* Async-signal-safe message: writes the string to stderr as is. */
void tnbc_write_stderr(const char *msg);

#endif
