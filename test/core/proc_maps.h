/* SPDX-License-Identifier: BSD-3-Clause */
/* What the kernel says about a page of this process, for the guard tests:
 * its protection (/proc/self/maps) and its protection key
 * (/proc/self/smaps). Include after <cmocka.h>. */
#ifndef TNBC_TEST_PROC_MAPS_H
#define TNBC_TEST_PROC_MAPS_H

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

/* Protection of the page holding addr (-1: unmapped). */
static inline int prot_at(const void *addr)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512], perms[8];
    unsigned long lo, hi, a = (unsigned long)addr;
    int prot = -1;
    assert_non_null(f);
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "%lx-%lx %4s", &lo, &hi, perms) == 3 && lo <= a && a < hi) {
            prot = (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0);
            break;
        }
    fclose(f);
    return prot;
}

/* The protection key of the mapping holding addr (-1: none said). */
static inline int key_at(const void *addr)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    char line[512];
    unsigned long lo, hi, a = (unsigned long)addr;
    int in = 0, key = -1;
    assert_non_null(f);
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' '))
            in = lo <= a && a < hi;
        else if (in && sscanf(line, "ProtectionKey: %d", &key) == 1)
            break;
    }
    fclose(f);
    return key;
}

#endif
