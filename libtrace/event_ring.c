// SPDX-License-Identifier: BSD-3-Clause
#include "event_ring.h"

#define RING_SLOTS EVENT_RING_SLOTS

struct slot {
    struct touch_event e;
    atomic_int ready;
};

static struct slot ring[RING_SLOTS];
static atomic_ulong head;      /* next slot a producer claims */
static atomic_ulong tail;      /* next slot the consumer reads */
static atomic_ulong dropped;

void event_ring_push(const struct touch_event *e)
{
    unsigned long h = atomic_load(&head);
    do {
        if (h - atomic_load(&tail) >= RING_SLOTS) {
            atomic_fetch_add(&dropped, 1);
            return;
        }
    } while (!atomic_compare_exchange_weak(&head, &h, h + 1));
    struct slot *s = &ring[h % RING_SLOTS];
    s->e = *e;
    atomic_store_explicit(&s->ready, 1, memory_order_release);
}

int event_ring_drain(void (*fn)(const struct touch_event *, void *), void *arg)
{
    int n = 0;
    unsigned long t = atomic_load(&tail);
    for (;;) {
        struct slot *s = &ring[t % RING_SLOTS];
        if (t == atomic_load(&head) || !atomic_load_explicit(&s->ready, memory_order_acquire))
            break;
        fn(&s->e, arg);
        atomic_store(&s->ready, 0);
        atomic_store(&tail, ++t);
        n++;
    }
    return n;
}

int event_ring_pending(void) { return (int)(atomic_load(&head) - atomic_load(&tail)); }

unsigned long event_ring_dropped(void) { return atomic_load(&dropped); }
