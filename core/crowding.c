// SPDX-License-Identifier: BSD-3-Clause
#include "crowding.h"
#include "fnv.h"

#include <assert.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MASK_WORDS (CPU_SETSIZE / 64)

struct machine_id {
    uint64_t kernel;              /* hash of the boot id (or hostname) */
    uint64_t mask[MASK_WORDS];    /* CPUs this rank may run on */
};

/* The running kernel: its boot id, the same in every namespace; where
 * /proc is not there, the hostname (namespaced, so a finer split). */
static uint64_t kernel_id(void)
{
    char buf[128] = "";
    size_t n = 0;
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (f) {
        n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
    }
    if (n == 0) {
        if (gethostname(buf, sizeof buf - 1) != 0)
            buf[0] = 0;
        n = strlen(buf);
    }
    return tnbc_fnv1a(TNBC_FNV1A_INIT, buf, n);
}

static void own_cpus(uint64_t *mask)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    memset(mask, 0, MASK_WORDS * sizeof *mask);
    if (sched_getaffinity(0, sizeof set, &set) != 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        for (long c = 0; c < n && c < CPU_SETSIZE; c++)
            CPU_SET((int)c, &set);
    }
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &set))
            mask[c / 64] |= 1ULL << (c % 64);
}

int crowding_measure(MPI_Comm world, struct crowding *out)
{
    int size = 0;
    struct machine_id me, *all = NULL;
    *out = (struct crowding){ 1, 1 };
    me.kernel = kernel_id();
    own_cpus(me.mask);
    if (PMPI_Comm_size(world, &size) != MPI_SUCCESS || size < 1 ||
        !(all = calloc((size_t)size, sizeof *all)))
        return -1;
    if (PMPI_Allgather(&me, (int)sizeof me, MPI_BYTE, all, (int)sizeof me, MPI_BYTE, world) !=
        MPI_SUCCESS) {
        free(all);
        return -1;
    }
    uint64_t cpus[MASK_WORDS] = { 0 };
    int ranks = 0, n = 0;
    for (int r = 0; r < size; r++) {
        if (all[r].kernel != me.kernel)
            continue;
        ranks++;
        for (int w = 0; w < MASK_WORDS; w++)
            cpus[w] |= all[r].mask[w];
    }
    for (int w = 0; w < MASK_WORDS; w++)
        n += __builtin_popcountll(cpus[w]);
    free(all);
    assert(ranks >= 1);   /* this rank is one of them */
    *out = (struct crowding){ ranks, n > 0 ? n : 1 };
    return 0;
}
