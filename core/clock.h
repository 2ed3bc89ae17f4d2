/* Clock: cheap monotonic ticks for timestamps taken in signal handlers.
 *
 * On x86-64 with an invariant TSC (constant_tsc and nonstop_tsc in
 * /proc/cpuinfo) ticks are rdtsc, calibrated once against CLOCK_MONOTONIC;
 * elsewhere, or with TNBC_CLOCK=clock_gettime, ticks are CLOCK_MONOTONIC
 * nanoseconds. tnbc_ticks() is async-signal-safe. */
#ifndef TNBC_CLOCK_H
#define TNBC_CLOCK_H

#include <stdint.h>

void tnbc_clock_init(void);           /* idempotent; ~20 ms when calibrating */
uint64_t tnbc_ticks(void);
double tnbc_ticks_hz(void);           /* ticks per second */
const char *tnbc_clock_source(void);  /* "tsc" or "clock_gettime" */
double tnbc_ticks_to_ns(uint64_t ticks);
uint64_t tnbc_ns_now(void);           /* CLOCK_MONOTONIC in ns */

#endif
