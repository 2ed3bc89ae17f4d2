/* SPDX-License-Identifier: BSD-3-Clause */
/* A bounded multi-producer, single-consumer ring of first-touch events.
 * Producers are fault handlers (async-signal-safe: no locks, no malloc);
 * the consumer is the application thread at the next MPI call, which
 * writes the events to SQLite. A full ring drops and counts. */
#ifndef TNBC_EVENT_RING_H
#define TNBC_EVENT_RING_H

#include <stdatomic.h>
#include <stdint.h>

#define EVENT_RING_SLOTS 65536u

struct touch_event {
    void *call;            /* struct traced_call * */
    int side;              /* 0 recv, 1 send */
    int sub;
    int ord;               /* -1 for a release */
    uint64_t tick;
    unsigned char ev, why; /* enum tnbc_guard_event, enum tnbc_release_reason */
};

void event_ring_push(const struct touch_event *e);           /* signal-safe */
/* Calls fn for every event in order; returns the number consumed. */
int event_ring_drain(void (*fn)(const struct touch_event *, void *), void *arg);
int event_ring_pending(void);
unsigned long event_ring_dropped(void);

#endif
