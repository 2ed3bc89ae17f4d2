// SPDX-License-Identifier: BSD-3-Clause
#include "land_typed.h"
#include "guard.h"
#include "land.h"

#include <stdlib.h>
#include <string.h>

#include "testalloc.h"

/* Where each run of the elements goes: into [wlo, whi) of the pages still
 * protected, by way of `window` (their copy), or through /proc/self/mem
 * run by run when there is no copy (no memory for one: slow, but right);
 * elsewhere straight into the user's (open) pages. Runs are cut at the
 * window's edges. 0, or -1 when /proc/self/mem failed. */
static int place_runs(char *user, const char *shadow, long first, long count, const struct typemap *m,
                      uintptr_t wlo, uintptr_t whi, char *window)
{
    for (long e = first; e < first + count; e++)
        for (int r = 0; r < m->nruns; r++) {
            MPI_Aint off = e * m->extent + m->run[r].off;
            uintptr_t a = (uintptr_t)(user + off), b = a + (uintptr_t)m->run[r].len;
            const char *src = shadow + off;
            /* [a, b) in three parts: below, inside, above the window */
            uintptr_t in_a = a < wlo ? wlo : a, in_b = b > whi ? whi : b;
            if (in_a >= in_b) {
                memcpy((void *)a, src, b - a);
                continue;
            }
            if (a < in_a)
                memcpy((void *)a, src, in_a - a);
            if (window)
                memcpy(window + (in_a - wlo), src + (in_a - a), in_b - in_a);
            else if (land((void *)in_a, src + (in_a - a), in_b - in_a) != 0)
                return -1;
            if (in_b < b)
                memcpy((void *)in_b, src + (in_b - a), b - in_b);
        }
    return 0;
}

int land_typed(char *user, const char *shadow, long first, long count, const struct typemap *m,
               uintptr_t lo, uintptr_t hi)
{
    if (count <= 0 || m->nruns == 0)
        return 0;
    uintptr_t fs = (uintptr_t)(user + first * m->extent + m->lo);
    uintptr_t fe = (uintptr_t)(user + (first + count - 1) * m->extent + m->hi);
    /* The protected pages the elements' footprint meets. */
    uintptr_t wlo = tnbc_page_down(fs), whi = tnbc_page_up(fe);
    wlo = wlo < lo ? lo : wlo;
    whi = whi > hi ? hi : whi;
    if (wlo >= whi)
        return place_runs(user, shadow, first, count, m, 0, 0, NULL);
    char *window = malloc(whi - wlo);
    if (!window)
        return place_runs(user, shadow, first, count, m, wlo, whi, NULL);
    int rc = land_read(window, (const void *)wlo, whi - wlo);
    if (rc == 0)
        rc = place_runs(user, shadow, first, count, m, wlo, whi, window);
    if (rc == 0)
        rc = land((void *)wlo, window, whi - wlo);
    free(window);
    return rc;
}
