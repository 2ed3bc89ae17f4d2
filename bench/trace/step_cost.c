// SPDX-License-Identifier: BSD-3-Clause
/* Cost of the guard's two fault paths, in one process with nothing else
 * running in it (no MPI):
 *   fault: first touch of a page-sized sub-message (SIGSEGV, hook, one
 *          mprotect opening the page);
 *   step:  a touch of a page still shared with an untouched sub-message
 *          (SIGSEGV, mprotect open, single step, SIGTRAP, mprotect close).
 * Prints the median of ROUNDS rounds of each, in ns. */
#include "clock.h"
#include "guard.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

enum { ROUNDS = 15, PAGES = 64, STEPS = 200 };

static void hook(struct tnbc_guard *g, int sub, enum tnbc_guard_event ev,
                 enum tnbc_release_reason why, uint64_t tick)
{
    (void)g; (void)sub; (void)ev; (void)why; (void)tick;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* ns per touch for `touches` loads, `pages` pages in `nsub` equal subs. */
static double touch_cost(size_t ps, int pages, int nsub, int touches, size_t stride)
{
    struct tnbc_submsg sub[PAGES];
    struct tnbc_layout l = { 0 };
    struct tnbc_guard g;
    size_t len = (size_t)pages * ps, each = len / (size_t)nsub;
    char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    double ns = -1;

    if (p == MAP_FAILED)
        return -1;
    memset(p, 1, len);
    for (int i = 0; i < nsub; i++)
        sub[i] = (struct tnbc_submsg){ .offset = (size_t)i * each, .bytes = each, .idx = i, .peer = i };
    l.base = p;
    l.span = len;
    l.nsub = nsub;
    l.sub = sub;
    memset(&g, 0, sizeof g);
    g.layout = &l;
    g.closed_prot = PROT_NONE;
    g.hook = hook;
    if (tnbc_guard_arm(&g) > 0) {
        uint64_t t0 = tnbc_ns_now();
        for (int i = 0; i < touches; i++)
            (void)((volatile char *)p)[(size_t)i * stride];
        ns = (double)(tnbc_ns_now() - t0) / touches;
        tnbc_guard_disarm(&g, TNBC_REL_DONE);
    }
    munmap(p, len);
    return ns;
}

int main(void)
{
    size_t ps;
    double fault[ROUNDS], step[ROUNDS];

    setenv("TNBC_TRACE_REARM_MAX", "100000", 0);
    tnbc_clock_init();
    if (tnbc_guard_init() != 0)
        return 1;
    ps = tnbc_page_size();
    for (int r = 0; r < ROUNDS; r++) {
        fault[r] = touch_cost(ps, PAGES, PAGES, PAGES, ps);       /* one fault per page */
        step[r] = touch_cost(ps, 1, 2, STEPS, 8);                  /* sub 0 of 2 on one page */
    }
    qsort(fault, ROUNDS, sizeof *fault, cmp);
    qsort(step, ROUNDS, sizeof *step, cmp);
    printf("fault_ns %.0f [%.0f-%.0f] step_ns %.0f [%.0f-%.0f]\n", fault[ROUNDS / 2], fault[0],
           fault[ROUNDS - 1], step[ROUNDS / 2], step[0], step[ROUNDS - 1]);
    return 0;
}
