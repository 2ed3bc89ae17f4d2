/*
 * static.c - the executable's static data as a symmetric region.
 *
 * OpenSHMEM makes global and static variables symmetric. We expose the
 * writable PT_LOAD segment of the main program (.data and .bss, after the
 * RELRO part that becomes read-only at start-up) through an MPI window.
 * Every PE runs the same executable, so a variable's offset from the start of
 * that segment is the same everywhere even when ASLR moves the segment.
 * Limits: variables of shared libraries and thread-local variables are not
 * symmetric; access to them is refused like any other non-symmetric address.
 */
#include <link.h>

#include "internal.h"

struct range { uintptr_t lo, hi; int done; };

static int find_data(struct dl_phdr_info *info, size_t sz, void *arg)
{
    struct range *r = arg;
    uintptr_t relro_end = 0;
    (void)sz;
    if (r->done)
        return 1;
    r->done = 1;         /* the first object reported is the main program */
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_GNU_RELRO)
            relro_end = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
    }
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_W)) {
            r->lo = info->dlpi_addr + ph->p_vaddr;
            r->hi = r->lo + ph->p_memsz;
        }
    }
    if (relro_end > r->lo && relro_end <= r->hi)
        r->lo = relro_end;
    return 1;
}

int shmemi_static_range(char **base, size_t *size)
{
    struct range r = {0, 0, 0};
    dl_iterate_phdr(find_data, &r);
    if (r.hi <= r.lo)
        return -1;
    *base = (char *)r.lo;
    *size = r.hi - r.lo;
    return 0;
}
