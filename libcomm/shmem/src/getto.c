// SPDX-License-Identifier: BSD-3-Clause
/*
 * getto.c - two-address reads: PE src_pe delivers its data into dest_pe.
 *
 * When both PEs are mapped here the caller's CPU copies from one heap straight
 * into the other. When the caller is the source it simply puts. Otherwise a
 * small request goes to the source PE, whose poll loop puts the data into the
 * destination: one request and one put, instead of a get into the caller
 * followed by a put out of it.
 */
#include <stdio.h>

#include "internal.h"

struct getto_req { int32_t dest_pe, dest_region, src_region, pad; uint64_t dest_off, src_off, n; };

void shmemx_get_to(void *dest, const void *src, size_t nbytes, int dest_pe, int src_pe)
{
    struct shmemi_target td, ts;
    shmemi_check_init("shmemx_get_to");
    if (nbytes == 0 || shmemi_xlate("get_to (dest)", dest, nbytes, dest_pe, &td) ||
        shmemi_xlate("get_to (src)", src, nbytes, src_pe, &ts))
        return;
    if (src_pe == shmemi.me) {
        shmemi_put(dest, src, nbytes, dest_pe, 1);
    } else if (td.local && ts.local) {
        memmove(td.local, ts.local, nbytes);
    } else {
        /* region offsets, not window displacements (those include disp_shift) */
        struct getto_req r = {dest_pe, td.region, ts.region, 0,
                              (uint64_t)((const char *)dest - shmemi.reg[td.region].base),
                              (uint64_t)((const char *)src - shmemi.reg[ts.region].base),
                              nbytes};
        shmemi_msg_send(src_pe, SHMEMI_TAG_GETTO, &r, sizeof r, NULL, 0);
    }
}

void shmemi_getto_deliver(int src, const char *buf, size_t len)
{
    struct getto_req r;
    if (len != sizeof r) {
        fprintf(stderr, "tnbc-shmem: error PE %d: malformed get_to request from "
                "PE %d; dropped\n", shmemi.me, src);
        return;
    }
    memcpy(&r, buf, sizeof r);
    if (r.dest_region < 0 || r.dest_region >= SHMEMI_NREGIONS || r.src_region < 0 ||
        r.src_region >= SHMEMI_NREGIONS || r.dest_pe < 0 || r.dest_pe >= shmemi.npes ||
        r.n > shmemi.reg[r.dest_region].size ||
        r.dest_off > shmemi.reg[r.dest_region].size - r.n ||
        r.n > shmemi.reg[r.src_region].size ||
        r.src_off > shmemi.reg[r.src_region].size - r.n) {
        fprintf(stderr, "tnbc-shmem: error PE %d: get_to request from PE %d is out "
                "of bounds; dropped\n", shmemi.me, src);
        return;
    }
    shmemi_put(shmemi.reg[r.dest_region].base + r.dest_off,
               shmemi.reg[r.src_region].base + r.src_off, r.n, r.dest_pe, 1);
}
