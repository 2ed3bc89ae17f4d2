// SPDX-License-Identifier: BSD-3-Clause
#include "altstack.h"

#include <signal.h>
#include <stddef.h>
#include <sys/mman.h>
#include <unistd.h>

/* Room for the handlers, the previous handlers they chain to (Open MPI's
 * prints a backtrace) and the kernel's signal frame with the largest
 * extended register state; mapped lazily, so it costs address space. */
#define ALTSTACK_BYTES ((size_t)128 * 1024)

static __thread char *own;    /* this thread's mapping: a guard page, then the stack */

/* Mapped through the C library (in sanitizer builds, the sanitizers'
 * interceptors), so that a sanitizer knows the memory its handlers' frames
 * are written to. */
static char *map(size_t len)
{
    void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return m == MAP_FAILED ? NULL : m;
}

static size_t page(void)
{
    long ps = sysconf(_SC_PAGESIZE);
    return ps > 0 ? (size_t)ps : 4096;
}

int tnbc_altstack_add(void)
{
    stack_t cur;
    if (own)
        return 0;
    if (sigaltstack(NULL, &cur) != 0)
        return -1;
    if (!(cur.ss_flags & SS_DISABLE))
        return 0;                     /* the thread has one: it stays */
    size_t ps = page();
    char *m = map(ps + ALTSTACK_BYTES);
    if (!m)
        return -1;
    /* Overflowing it faults in the guard page instead of writing below. */
    if (mprotect(m, ps, PROT_NONE) != 0) {
        munmap(m, ps + ALTSTACK_BYTES);
        return -1;
    }
    stack_t ss = { .ss_sp = m + ps, .ss_size = ALTSTACK_BYTES, .ss_flags = 0 };
    if (sigaltstack(&ss, NULL) != 0) {
        munmap(m, ps + ALTSTACK_BYTES);
        return -1;
    }
    own = m;
    return 0;
}

void tnbc_altstack_remove(void)
{
    stack_t cur;
    if (!own)
        return;
    size_t ps = page();
    if (sigaltstack(NULL, &cur) == 0 && cur.ss_sp == own + ps) {
        if (cur.ss_flags & SS_ONSTACK)
            return;                   /* running on it: it stays mapped */
        stack_t off = { .ss_flags = SS_DISABLE };
        if (sigaltstack(&off, NULL) != 0)
            return;
    }
    /* Ours is not (or no longer) the thread's alternate stack. */
    munmap(own, ps + ALTSTACK_BYTES);
    own = NULL;
}
