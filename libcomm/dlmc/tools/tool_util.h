/* SPDX-License-Identifier: BSD-3-Clause */
/* tool_util.h - argument parsing and set-up shared by the DLMC tools;
 * every bad argument ends the program with a one-line message. */
#ifndef TNBC_DLMC_TOOL_UTIL_H
#define TNBC_DLMC_TOOL_UTIL_H

#include <stddef.h>
#include "../dlmc.h"

dlmc *tool_open(const char *ifname, const char *ep);
struct dlmc_addr tool_addr(const char *s);
long tool_long(const char *s);
size_t tool_size(const char *s);	/* accepts K and M suffixes */
void *tool_alloc(size_t len);
int tool_print_stats(void);
double tool_now(void);

#endif
