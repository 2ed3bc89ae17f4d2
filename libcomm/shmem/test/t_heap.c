// SPDX-License-Identifier: BSD-3-Clause
/* t_heap.c - the symmetric heap: same addresses everywhere, alignment, free
 * and reuse, realloc, exhaustion, shmem_ptr and accessibility queries. */
#include <stdint.h>
#include <string.h>
#include "t_common.h"

static long g;

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    static long addr[3], mx[3], mn[3];
    char *a = shmem_malloc(100), *b = shmem_align(4096, 10), *c = shmem_calloc(10, 8);
    CHECK(a && b && c, "allocations");
    CHECK(((uintptr_t)b & 4095) == 0, "shmem_align %p", (void *)b);
    for (int i = 0; i < 80; i++)
        CHECK(c[i] == 0, "calloc zeroed");
    /* symmetric: the same offsets on every PE */
    addr[0] = a - a; addr[1] = b - a; addr[2] = c - a;
    shmem_long_max_to_all(mx, addr, 3, 0, 0, n, NULL, NULL);
    shmem_long_min_to_all(mn, addr, 3, 0, 0, n, NULL, NULL);
    CHECK(memcmp(mx, mn, sizeof mx) == 0, "offsets differ between PEs");
    shmem_free(b);
    char *d = shmem_align(4096, 10);
    CHECK(d == b, "freed block reused: %p vs %p", (void *)d, (void *)b);
    strcpy(a, "hello");
    char *a2 = shmem_realloc(a, 1 << 16);
    CHECK(a2 && strcmp(a2, "hello") == 0, "realloc keeps contents");
    CHECK(shmem_malloc((size_t)1 << 40) == NULL, "exhausted heap returns NULL");
    CHECK(shmem_malloc(0) == NULL, "malloc(0) is NULL");
    /* shmem_ptr: peers on this node are mapped unless the transport is rma */
    int peer = (me + 1) % n;
    char *p = shmem_ptr(a2, peer);
    const char *tr = getenv("TNBC_SHMEM_TRANSPORT");
    if (tr && !strcmp(tr, "rma") && peer != me)
        CHECK(p == NULL, "rma transport maps no peer");
    else
        CHECK(p != NULL, "shmem_ptr on one node");
    if (p) {
        shmem_barrier_all();
        p[100] = (char)me;
        shmem_barrier_all();
        CHECK(a2[100] == (char)((me + n - 1) % n), "store through shmem_ptr");
    }
    CHECK(shmem_ptr(&g, me) == &g, "shmem_ptr to self");
    CHECK(shmem_addr_accessible(a2, peer) && shmem_addr_accessible(&g, peer),
          "heap and static data accessible");
    long priv;
    CHECK(!shmem_addr_accessible(&priv, peer), "stack is not accessible");
    CHECK(!shmem_pe_accessible(n) && shmem_pe_accessible(n - 1), "pe_accessible");
    int maj, min;
    char name[SHMEM_MAX_NAME_LEN];
    shmem_info_get_version(&maj, &min);
    shmem_info_get_name(name);
    CHECK(maj == 1 && min >= 4 && strstr(name, "tnbc"), "version %d.%d %s", maj, min, name);
    shmem_free(a2);
    shmem_free(c);
    shmem_free(d);
    return t_done("t_heap");
}
