/* SPDX-License-Identifier: BSD-3-Clause */
/* Address-range index: maps an address to the object registered for the
 * half-open range [start, end) that contains it. Ranges never overlap.
 *
 * A sorted array under a spinlock: lookups are a binary search and are
 * async-signal-safe (the fault handler uses them); inserts and removals are
 * O(n) but happen once per collective call with few live ranges. A lookup
 * pins the object (pin count) so that its owner can wait, in
 * tnbc_range_remove, until no fault handler is still using it. */
#ifndef TNBC_RANGE_INDEX_H
#define TNBC_RANGE_INDEX_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct tnbc_range_obj {
    atomic_int pins;     /* handlers currently using the object */
};

int tnbc_range_insert(uintptr_t start, uintptr_t end, struct tnbc_range_obj *obj);
/* Removes obj's range and returns once no lookup holds a pin on it. */
void tnbc_range_remove(struct tnbc_range_obj *obj);
/* The object whose range holds addr, pinned (release with tnbc_range_unpin),
 * or NULL. Async-signal-safe. */
struct tnbc_range_obj *tnbc_range_lookup(uintptr_t addr);
void tnbc_range_unpin(struct tnbc_range_obj *obj);
/* Calls fn for every object whose range meets [start, end), in address
 * order, each pinned for its own call only (fn may wait for another
 * thread that removes other objects meanwhile). fn must not insert or
 * remove. Returns the number visited. */
int tnbc_range_each(uintptr_t start, uintptr_t end,
                    void (*fn)(struct tnbc_range_obj *, void *), void *arg);
int tnbc_range_count(void);

#endif
