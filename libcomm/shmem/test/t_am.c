// SPDX-License-Identifier: BSD-3-Clause
/* t_am.c - active messages: delivery, handler atomicity, completion by
 * barrier_all (also of messages sent by handlers), passive progress while a
 * PE waits, refusal of bad arguments. */
#include <string.h>
#include "t_common.h"
#include <shmemx.h>

#define MSGS 300

static long counter, from_sum, chain_hits, flag;
static volatile int inside;
static int overlap;

/* A non-atomic read-modify-write: exact totals prove handlers never
 * interleave on one PE. */
static void add_handler(int src, const void *data, size_t len)
{
    long v;
    if (inside)
        overlap = 1;
    inside = 1;
    memcpy(&v, data, sizeof v);
    long c = counter;
    counter = c + v;
    from_sum += src;
    (void)len;
    inside = 0;
}

static int chain_id;
/* Forwards the message to the next PE until it has made hops hops. */
static void chain_handler(int src, const void *data, size_t len)
{
    int hops;
    (void)src;
    memcpy(&hops, data, sizeof hops);
    chain_hits++;
    if (--hops > 0)
        shmemx_send((shmem_my_pe() + 1) % shmem_n_pes(), chain_id, &hops, len);
}

static void flag_handler(int src, const void *data, size_t len)
{
    (void)src; (void)data; (void)len;
    flag = 1;
}

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    int add = shmemx_register_handler(add_handler);
    chain_id = shmemx_register_handler(chain_handler);
    int fl = shmemx_register_handler(flag_handler);
    CHECK(add == 0 && chain_id == 1 && fl == 2, "handler ids %d %d %d", add, chain_id, fl);

    /* every PE sends MSGS increments to every PE, itself included */
    for (int i = 0; i < MSGS; i++)
        for (int pe = 0; pe < n; pe++) {
            long one = 1;
            shmemx_send(pe, add, &one, sizeof one);
        }
    shmem_barrier_all();
    CHECK(counter == (long)MSGS * n, "counter %ld want %ld", counter, (long)MSGS * n);
    CHECK(from_sum == (long)MSGS * n * (n - 1) / 2, "sources %ld", from_sum);
    CHECK(!overlap, "handlers overlapped");

    /* messages sent by handlers complete by the same barrier */
    if (me == 0) {
        int hops = 3 * n + 1;
        shmemx_send(1 % n, chain_id, &hops, sizeof hops);
    }
    shmem_barrier_all();
    static long hits, total;
    hits = chain_hits;
    shmem_long_sum_to_all(&total, &hits, 1, 0, 0, n, NULL, NULL);
    CHECK(total == 3 * n + 1, "chain hops %ld want %d", total, 3 * n + 1);

    /* passive progress: PE 0 waits on a flag only a handler sets */
    if (me == n - 1)
        shmemx_send(0, fl, NULL, 0);
    if (me == 0)
        shmem_long_wait_until(&flag, SHMEM_CMP_EQ, 1);
    shmem_barrier_all();

    /* bad arguments are refused, nothing sent */
    shmemx_send(n, add, &me, sizeof me);
    shmemx_send(0, 99, &me, sizeof me);
    shmemx_send(0, add, NULL, 8);
    long before = counter;
    shmem_barrier_all();
    CHECK(counter == before, "refused messages ran");
    return t_done("t_am");
}
