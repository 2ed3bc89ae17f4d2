// SPDX-License-Identifier: BSD-3-Clause
#include "range_index.h"
#include "cpu_relax.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

struct entry {
    uintptr_t start, end;
    struct tnbc_range_obj *obj;
};

static struct entry *entries;
static int count, cap;
static atomic_flag lock = ATOMIC_FLAG_INIT;
static atomic_int live;    /* count, readable without the lock */

static void lock_acquire(void)
{
    while (atomic_flag_test_and_set_explicit(&lock, memory_order_acquire))
        cpu_relax();
}

static void lock_release(void) { atomic_flag_clear_explicit(&lock, memory_order_release); }

/* First entry whose end is above addr. */
static int first_ending_after(uintptr_t addr)
{
    int lo = 0, hi = count;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (entries[mid].end <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int tnbc_range_insert(uintptr_t start, uintptr_t end, struct tnbc_range_obj *obj)
{
    int at;
    if (start >= end)
        return -1;
    /* Grow outside the lock so a handler never waits on malloc. */
    if (count + 1 > cap) {
        int ncap = cap ? 2 * cap : 64;
        struct entry *grown = malloc((size_t)ncap * sizeof *grown);
        if (!grown)
            return -1;
        lock_acquire();
        if (count)
            memcpy(grown, entries, (size_t)count * sizeof *grown);
        struct entry *old = entries;
        entries = grown;
        cap = ncap;
        lock_release();
        free(old);
    }
    lock_acquire();
    at = first_ending_after(start);
    if (at < count && entries[at].start < end) {
        lock_release();
        return -1;                      /* overlaps a live range */
    }
    memmove(entries + at + 1, entries + at, (size_t)(count - at) * sizeof *entries);
    entries[at] = (struct entry){ start, end, obj };
    count++;
    atomic_store(&live, count);
    lock_release();
    return 0;
}

void tnbc_range_remove(struct tnbc_range_obj *obj)
{
    lock_acquire();
    for (int i = 0; i < count; i++)
        if (entries[i].obj == obj) {
            memmove(entries + i, entries + i + 1, (size_t)(count - i - 1) * sizeof *entries);
            count--;
            break;
        }
    atomic_store(&live, count);
    lock_release();
    while (atomic_load(&obj->pins) > 0)
        sched_yield();
}

struct tnbc_range_obj *tnbc_range_lookup(uintptr_t addr)
{
    struct tnbc_range_obj *obj = NULL;
    if (atomic_load(&live) == 0)
        return NULL;
    lock_acquire();
    int i = first_ending_after(addr);
    if (i < count && entries[i].start <= addr) {
        obj = entries[i].obj;
        atomic_fetch_add(&obj->pins, 1);
    }
    lock_release();
    return obj;
}

void tnbc_range_unpin(struct tnbc_range_obj *obj) { atomic_fetch_sub(&obj->pins, 1); }

int tnbc_range_each(uintptr_t start, uintptr_t end,
                    void (*fn)(struct tnbc_range_obj *, void *), void *arg)
{
    int visited = 0;
    uintptr_t from = start;

    if (atomic_load(&live) == 0)
        return 0;
    /* One object at a time, fn run without the lock and only that object
     * pinned: fn may wait (a release waits for the data of the pages it
     * meets), and a pin held meanwhile on an object not yet visited made
     * its removal wait for this wait. A send guard lifted by the progress
     * thread waited so for a release that waited for that very thread to
     * land a piece: a deadlock (torture case fd_reuse, dup2 right after an
     * early return). Entries are sorted and disjoint, so `from` grows. */
    for (;;) {
        struct tnbc_range_obj *obj = NULL;
        lock_acquire();
        int i = first_ending_after(from);
        if (i < count && entries[i].start < end) {
            obj = entries[i].obj;
            atomic_fetch_add(&obj->pins, 1);
            from = entries[i].end;
        }
        lock_release();
        if (!obj)
            return visited;
        fn(obj, arg);
        tnbc_range_unpin(obj);
        visited++;
    }
}

int tnbc_range_count(void) { return atomic_load(&live); }
