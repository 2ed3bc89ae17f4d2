/* SPDX-License-Identifier: BSD-3-Clause */
/* cpu_relax(): one iteration of a spin-wait loop (x86's PAUSE: lets the
 * sibling hyper-thread run and saves power; elsewhere the CPU is given
 * up, as a holder may be waiting for it). */
#ifndef TNBC_CPU_RELAX_H
#define TNBC_CPU_RELAX_H

#if defined(__x86_64__) || defined(__i386__)
#define cpu_relax() __builtin_ia32_pause()
#else
#include <sched.h>
#define cpu_relax() sched_yield()
#endif

#endif
