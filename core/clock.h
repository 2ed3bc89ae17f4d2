/* SPDX-License-Identifier: BSD-3-Clause */
/* Clock: cheap monotonic ticks for timestamps taken in signal handlers.
 *
 * On x86-64 with an invariant TSC (constant_tsc and nonstop_tsc in
 * /proc/cpuinfo) ticks are rdtsc, calibrated once against CLOCK_MONOTONIC;
 * elsewhere, or with TNBC_CLOCK=clock_gettime, ticks are CLOCK_MONOTONIC
 * nanoseconds. tnbc_ticks() is async-signal-safe. */
#ifndef TNBC_CLOCK_H
#define TNBC_CLOCK_H

#include <stdint.h>

/* Idempotent; sleeps 2 ms to calibrate the TSC, so a mode calls it
 * only once it has work to time (a pass-through process, or one whose
 * profile is all off, never pays it). Until then, and where it chooses
 * clock_gettime, ticks are CLOCK_MONOTONIC nanoseconds at 1e9 per
 * second: consistent, only slower to read. */
void tnbc_clock_init(void);
uint64_t tnbc_ticks(void);
double tnbc_ticks_hz(void);           /* ticks per second */
const char *tnbc_clock_source(void);  /* "tsc" or "clock_gettime" */
double tnbc_ticks_to_ns(uint64_t ticks);
uint64_t tnbc_ns_now(void);           /* CLOCK_MONOTONIC in ns */

/* Program time: ticks minus those the process spent in tnbc's own work
 * (our fault handlers and the kernel's delivery of their signals, the
 * trace's bookkeeping; intervals of several threads counted once), one
 * clock for all threads. The trace stamps calls and first touches with it,
 * so the code's measured speed (TCURC, RCRC, the call cycle) is the
 * program's, not the program's slowed down by its observer. */
uint64_t tnbc_program_ticks(void);
/* Counts the ticks from `start` to now as tnbc's, plus up to `before`
 * ticks just before `start` (a signal's delivery), never more than have
 * passed since the last call: so program time never runs backwards, and
 * nested intervals are not counted twice. Async-signal-safe. */
void tnbc_ticks_lost_since(uint64_t start, uint64_t before);

#endif
