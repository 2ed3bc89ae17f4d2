// SPDX-License-Identifier: BSD-3-Clause
/* t_static.c - atomics, locks, signals and large gets on static (global)
 * data, the cases that hung on the MPI RMA path (issue #23): the
 * atomic_set/atomic_fetch ring (each PE spins on its own global), contended
 * fetch_inc/add on a global (exact totals), atomic set/fetch, a lock in a
 * global protecting a non-atomic read-modify-write of a global on PE 0,
 * put-with-signal into a global signal word with signal_wait_until, a
 * 1 MiB get from a global array, and shmem_ptr to a peer's global. */
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "t_common.h"

#define ROUNDS 200
#define BIG (1 << 17)          /* longs: 1 MiB */

static int counter;
static long total, lock_word, shared_rmw;
static uint64_t sig;
static long msg[8];
static long big[BIG];
static int flag_set;
static int fork_probe;
static int ring_int = -1;
static double ring_double = -1;

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes(), peer = (me + 1) % n;
    for (int i = 0; i < BIG; i++)
        big[i] = (long)me * BIG + i;
    shmem_barrier_all();

    for (int r = 0; r < ROUNDS; r++) {
        shmem_int_atomic_fetch_inc(&counter, 0);
        shmem_long_atomic_add(&total, r, 0);
    }
    shmem_int_atomic_set(&flag_set, 40 + me, peer);
    shmem_barrier_all();
    if (me == 0) {
        CHECK(counter == ROUNDS * n, "counter %d, want %d", counter, ROUNDS * n);
        CHECK(total == (long)n * ROUNDS * (ROUNDS - 1) / 2, "total %ld", total);
    }
    CHECK(shmem_int_atomic_fetch(&flag_set, me) == 40 + (me + n - 1) % n,
          "atomic_set on a global: %d", flag_set);
    CHECK(shmem_int_atomic_fetch(&counter, 0) == ROUNDS * n, "fetch of a global on PE 0");

    /* the set/fetch ring on globals (hung on the MPI path): each PE spins
     * with atomic_fetch on its own global until its predecessor sets it */
    if (me == 0)
        shmem_int_atomic_set(&ring_int, n - 1, 0);
    while (shmem_int_atomic_fetch(&ring_int, me) < 0)
        ;
    shmem_int_atomic_set(&ring_int, me, peer);
    if (me == 0)
        shmem_double_atomic_set(&ring_double, n - 1, 0);
    while (shmem_double_atomic_fetch(&ring_double, me) < 0)
        ;
    shmem_double_atomic_set(&ring_double, me, peer);
    shmem_barrier_all();
    CHECK(ring_int == (me + n - 1) % n && ring_double == (me + n - 1) % n,
          "ring: %d %g", ring_int, ring_double);

    /* lock in static data, non-atomic g + p inside */
    for (int r = 0; r < 50; r++) {
        shmem_set_lock(&lock_word);
        long v = shmem_long_g(&shared_rmw, 0);
        shmem_long_p(&shared_rmw, v + 1, 0);
        shmem_quiet();
        shmem_clear_lock(&lock_word);
    }
    shmem_barrier_all();
    if (me == 0)
        CHECK(shared_rmw == 50L * n, "lock-protected count %ld, want %d", shared_rmw, 50 * n);

    /* signal on a global: data then signal, the peer waits on its word */
    long data[8];
    for (int i = 0; i < 8; i++)
        data[i] = me * 100 + i;
    shmem_long_put_signal(msg, data, 8, &sig, 1, SHMEM_SIGNAL_ADD, peer);
    shmem_signal_wait_until(&sig, SHMEM_CMP_EQ, 1);
    int from = (me + n - 1) % n;
    for (int i = 0; i < 8; i++)
        CHECK(msg[i] == from * 100 + i, "signalled data %ld", msg[i]);

    /* 1 MiB get from a peer's global array */
    static long got[BIG];
    shmem_long_get(got, big, BIG, peer);
    int bad = 0;
    for (int i = 0; i < BIG; i++)
        bad += got[i] != (long)peer * BIG + i;
    CHECK(bad == 0, "%d wrong longs in a 1 MiB get of static data", bad);

    /* on one node (transport auto) static data is load/store reachable */
    long *pp = shmem_ptr(&big[5], peer);
    const char *tr = getenv("TNBC_SHMEM_TRANSPORT");
    if (!tr || strcmp(tr, "rma"))
        CHECK(pp && *pp == (long)peer * BIG + 5, "shmem_ptr to a peer's global");
    else
        CHECK(peer == me || pp == NULL, "shmem_ptr under rma is NULL");
    /* a forked child's globals are its own again: its write stays there */
    pid_t child = fork();
    if (child == 0) {
        fork_probe = 1;
        _exit(fork_probe == 1 ? 0 : 2);
    }
    int st = -1;
    CHECK(child > 0 && waitpid(child, &st, 0) == child && WIFEXITED(st) &&
          WEXITSTATUS(st) == 0, "child exit status %d", st);
    CHECK(fork_probe == 0, "the child's write reached the parent's global");
    return t_done("t_static");
}
