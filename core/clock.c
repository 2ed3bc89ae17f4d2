// SPDX-License-Identifier: BSD-3-Clause
#include "clock.h"
#include "config.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

static int use_tsc;
static double ticks_hz = 1e9;
static int initialized;

uint64_t tnbc_ns_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The TSC is usable as a clock only when it ticks at a constant rate and
 * keeps ticking in deep C-states; otherwise fall back to the OS clock. */
static int tsc_is_invariant(void)
{
#if defined(__x86_64__)
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[4096];
    int constant = 0, nonstop = 0;
    if (!f)
        return 0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "flags", 5) != 0)
            continue;
        constant = strstr(line, " constant_tsc") != NULL;
        nonstop = strstr(line, " nonstop_tsc") != NULL;
        break;
    }
    fclose(f);
    return constant && nonstop;
#else
    return 0;
#endif
}

#if defined(__x86_64__)
/* Both clocks at one instant: the TSC read between two CLOCK_MONOTONIC
 * reads, taking the narrowest of a few brackets (a preemption or a
 * hypervisor exit between the reads widens one try, not all). */
struct clock_pair {
    uint64_t ns, tsc, width;
};

static struct clock_pair clock_pair(void)
{
    struct clock_pair best = { 0, 0, UINT64_MAX };
    for (int i = 0; i < 8; i++) {
        uint64_t a = tnbc_ns_now(), t = __rdtsc(), b = tnbc_ns_now();
        if (b - a < best.width)
            best = (struct clock_pair){ a + (b - a) / 2, t, b - a };
    }
    return best;
}
#endif

/* The TSC's rate over CALIBRATE_NS between two bracketed points. Each
 * point is off by at most half its bracket (the narrowest of 8: 29-30 ns
 * on this project's VM), so 2 ms give the rate within 1e-4 (six runs
 * there: 2096.0172-2096.0187 MHz): every interval tnbc converts
 * (microseconds to seconds) within 0.01%. A 20 ms sleep did the same
 * with unbracketed reads and cost every traced or tuned process 18 ms
 * more in MPI_Init. */
#define CALIBRATE_NS (2 * 1000 * 1000)

static double calibrate_tsc(void)
{
#if defined(__x86_64__)
    struct timespec pause = { 0, CALIBRATE_NS };
    struct clock_pair p0 = clock_pair();
    nanosleep(&pause, NULL);
    struct clock_pair p1 = clock_pair();
    if (p1.ns <= p0.ns || p1.tsc <= p0.tsc)
        return 0;
    /* A bracket wider than a twentieth of the window: the rate would be
     * off by over 5%; take the OS clock instead. */
    if (p0.width > CALIBRATE_NS / 20 || p1.width > CALIBRATE_NS / 20)
        return 0;
    return (double)(p1.tsc - p0.tsc) * 1e9 / (double)(p1.ns - p0.ns);
#else
    return 0;
#endif
}

void tnbc_clock_init(void)
{
    static const char *const choices[] = { "auto", "tsc", "clock_gettime", NULL };
    int choice;

    if (initialized)
        return;
    initialized = 1;
    choice = tnbc_env_choice("TNBC_CLOCK", choices, 0);
    use_tsc = 0;
    ticks_hz = 1e9;
    if (choice != 2 && tsc_is_invariant()) {
        double hz = calibrate_tsc();
        if (hz > 1e6) {
            use_tsc = 1;
            ticks_hz = hz;
        }
    }
    if (choice == 1 && !use_tsc)
        tnbc_warn("TNBC_CLOCK=tsc: no invariant TSC on this CPU, using clock_gettime");
}

uint64_t tnbc_ticks(void)
{
#if defined(__x86_64__)
    if (use_tsc)
        return __rdtsc();
#endif
    return tnbc_ns_now();
}

double tnbc_ticks_hz(void) { return ticks_hz; }

/* tnbc's time is counted for the whole process, as the union over threads
 * of the intervals spent in it: program time is one clock, so a first
 * touch stamped in a thread the program started after a call compares with
 * that call's return stamped in the main thread. (Per thread, a new
 * thread's clock started at wall time while the main thread's ran behind
 * by all its observer time so far: a program that read a call's data in
 * freshly created threads showed a TCURC growing by about 1 ms per traced
 * call, 5.4 ms instead of a few us, and a site predicted to save 69% of
 * Tcomm saved 3%.) Where threads are in tnbc at the same time the interval
 * counts once; a thread running program code meanwhile loses that time
 * too, an error bounded by the observer's time, not growing with the run. */
static _Atomic uint64_t lost_ticks;    /* tnbc's time, union over threads */
static _Atomic uint64_t lost_mark;     /* end of the last interval counted */

void tnbc_ticks_lost_since(uint64_t start, uint64_t before)
{
    uint64_t now = tnbc_ticks(), mark = atomic_load(&lost_mark), add;
    do {
        if (mark >= now)
            return;                    /* another thread counted up to now */
        uint64_t from = start > mark ? start : mark;
        uint64_t gap = start > mark ? start - mark : 0;
        if (from > now)                /* ticks read on another CPU */
            from = now;
        add = now - from + (before < gap ? before : gap);
    } while (!atomic_compare_exchange_weak(&lost_mark, &mark, now));
    atomic_fetch_add(&lost_ticks, add);
}

/* The kernel's share of a signal is an estimate (guard.c) counted as lost
 * just before the handler; where it is larger than what really passed
 * since the program last read its time, program time would step back:
 * it stalls instead, for every thread at once. (A stall per thread let a
 * thread started after an over-charge read a program time up to the
 * over-charge before the main thread's last read: 3.2 ms in a loaded CI
 * run of test_program_time_one_clock, where a charge reaches back over a
 * preemption.) Async-signal-safe: a lock-free atomic. */
static _Atomic uint64_t last_program;

uint64_t tnbc_program_ticks(void)
{
    uint64_t t = tnbc_ticks() - atomic_load(&lost_ticks);
    uint64_t last = atomic_load_explicit(&last_program, memory_order_relaxed);
    while (t > last)
        if (atomic_compare_exchange_weak_explicit(&last_program, &last, t, memory_order_relaxed,
                                                  memory_order_relaxed))
            return t;
    return last;
}

const char *tnbc_clock_source(void) { return use_tsc ? "tsc" : "clock_gettime"; }

double tnbc_ticks_to_ns(uint64_t ticks) { return (double)ticks * 1e9 / ticks_hz; }
