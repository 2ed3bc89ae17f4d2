// SPDX-License-Identifier: BSD-3-Clause
/* Sends from the caller's write-protected pages (send_guard.h). */
#include "send_guard.h"
#include "clock.h"
#include "config.h"
#include "futex.h"
#include "progress.h"

#include <assert.h>
#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

static int enabled;

/* An RDMA device (/sys/class/infiniband), or xpmem or knem: transports
 * that may pin send buffers for writing, or map them into a peer. */
static int registering_transport(void)
{
    if (access("/dev/xpmem", F_OK) == 0 || access("/dev/knem", F_OK) == 0)
        return 1;
    DIR *d = opendir("/sys/class/infiniband");
    if (!d)
        return 0;
    int found = 0;
    for (struct dirent *e; !found && (e = readdir(d)) != NULL;)
        found = e->d_name[0] != '.';
    closedir(d);
    return found;
}

void send_guard_configure(void)
{
    if (getenv("TNBC_SEND_COPY")) {
        enabled = !tnbc_env_bool("TNBC_SEND_COPY", 0);
        return;
    }
    enabled = !registering_transport();
}

/* The fault path and the release wrappers: the program writes, frees or
 * hands on its send buffer while sends still read it. Signal context. */
static void on_send_page_event(struct tnbc_guard *g, int sub, enum tnbc_guard_event ev,
                               enum tnbc_release_reason why, uint64_t tick)
{
    struct nbop *op = g->user;
    unsigned pending;
    (void)sub; (void)ev; (void)why; (void)tick;
    if (!atomic_load(&op->sends_pending))
        return;
    uint64_t t0 = progress_wait_begin();
    while ((pending = atomic_load(&op->sends_pending)) != 0)
        tnbc_futex_wait(&op->sends_pending, pending);
    long long waited = progress_wait_end(t0);
    atomic_fetch_add(&op->wait_ns, waited);
    atomic_fetch_add(&op->send_wait_ns, waited);
}

/* The caller's own block is not sent (nbop_land_self copied it): its
 * pages stay writable. */
static int not_sent(const struct tnbc_guard *g, int sub)
{
    const struct nbop *op = g->user;
    return g->layout->sub[sub].peer == op->layout.comm_rank;
}

/* A send of bytes that lie wholly in [lo, hi). */
static int lies_within(const struct step *s, uintptr_t lo, uintptr_t hi)
{
    uintptr_t a = (uintptr_t)s->src;
    return s->kind == STEP_SEND && s->src && s->type == MPI_BYTE && s->count > 0 &&
           a >= lo && a + (uintptr_t)s->count <= hi;
}

static int steps_within(const struct nbop *op, uintptr_t lo, uintptr_t hi)
{
    int n = 0;
    for (int i = 0; i < op->nsteps; i++)
        n += lies_within(&op->steps[i], lo, hi);
    return n;
}

int send_guard_arm(struct nbop *op)
{
    const struct tnbc_layout *l = &op->layout.send;
    const char *why;
    assert(atomic_load(&op->state) == NBOP_PLANNED && !op->send_guard.armed);
    if (!enabled || !op->may_send_in_place || !op->per_source || op->send_at ||
        op->send_whole || !l->base || l->page_holes)
        return 0;
    uintptr_t lo, hi;
    if (!tnbc_layout_whole_pages(l, &lo, &hi) || steps_within(op, lo, hi) == 0 ||
        !tnbc_guard_memory_ok(lo, hi, &why))
        return 0;     /* too small, or memory the copy must read (a stack, a shared map...) */
    nbop_retire_overlapping(l);
    op->send_guard = (struct tnbc_guard){ .layout = l, .closed_prot = PROT_READ,
                                          .flags = GUARD_WAIT_NEIGHBOURS | GUARD_OWNER_LIFTS, .hook = on_send_page_event,
                                          .landed = not_sent, .user = op };
    atomic_store(&op->sends_pending, 1);
    if (tnbc_guard_arm(&op->send_guard) <= 0) {
        atomic_store(&op->sends_pending, 0);
        return 0;
    }
    assert(op->send_guard.lo == lo && op->send_guard.hi == hi);
    int n = 0;
    for (int i = 0; i < op->nsteps; i++) {
        struct step *s = &op->steps[i];
        if (lies_within(s, lo, hi)) {
            s->in_place = 1;
            s->buf = (char *)s->src;
            op->send_in_place_bytes += s->count;
            n++;
        }
    }
    op->sends_in_place = n;
    return n;
}

static void lift(struct nbop *op)
{
    atomic_store(&op->sends_pending, 0);
    tnbc_futex_wake(&op->sends_pending, INT_MAX);
    tnbc_guard_disarm(&op->send_guard, TNBC_REL_DONE);
}

int send_guard_sent(struct nbop *op, const struct step *s)
{
    if (!s->in_place)
        return 0;
    assert(op->sends_in_place > 0);
    if (--op->sends_in_place > 0)
        return 0;
    lift(op);
    return 1;
}

/* What a copy costs per byte, from the send copy step measured on the
 * emulated cluster (271-362 us per MiB, docs/replay.md). On a node that
 * copies faster this overstates the saving, so a site tolerates somewhat
 * longer waits there before it turns to copying. */
#define COPY_PS_PER_BYTE 250

/* A site's credit of copies saved is capped, so that a long run of calls
 * that never waited does not hide a later pattern of waits for long. */
#define BALANCE_MAX_NS 2000000

void send_guard_account(int64_t *balance_ns, const struct nbop *op)
{
    if (!op->send_in_place_bytes)
        return;
    *balance_ns += op->send_in_place_bytes * COPY_PS_PER_BYTE / 1000 - (int64_t)atomic_load(&op->send_wait_ns);
    if (*balance_ns > BALANCE_MAX_NS)
        *balance_ns = BALANCE_MAX_NS;
}

void send_guard_abandon(struct nbop *op)
{
    if (op->send_guard.armed)
        lift(op);
}
