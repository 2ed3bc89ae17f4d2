// SPDX-License-Identifier: BSD-3-Clause
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
 *
 * One node (transport "auto"): at start-up each PE replaces the pages of that
 * segment by a MAP_SHARED mapping of a memfd holding the same bytes (mapped
 * first at a spare address, filled, then moved over the segment by one
 * mremap, so the program never sees a half-copied page), and its node peers
 * map that memfd through /proc/PID/fd. Static data then takes the same
 * load/store path and CPU atomics as the heap: no MPI RMA on one node, where
 * osc/ucx atomics on MPI_Win_create memory need the target's progress and
 * hung (issue #23). A forked child gets private pages back (pthread_atfork),
 * so it cannot write into its parent's globals.
 */
#include <fcntl.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

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

#define PAGE 4096

static char *map_lo;          /* page-aligned start of the shared pages */
static size_t map_len;
static int map_fd = -1;
static char **peer_maps;      /* [pe]: our mapping of pe's memfd, or NULL */

/* These two read whole pages of the segment, the padding between variables
 * included: under AddressSanitizer that padding is a poisoned redzone, so
 * they are not instrumented, and copy through volatile words so that the
 * compiler does not turn the loop into an (intercepted) memcpy call. */
#if defined(__SANITIZE_ADDRESS__)
#define NO_ASAN __attribute__((no_sanitize_address))
#else
#define NO_ASAN
#endif

NO_ASAN static int page_is_zero(const char *p)
{
    const volatile uint64_t *w = (const volatile uint64_t *)p;
    for (size_t i = 0; i < PAGE / sizeof *w; i++)
        if (w[i])
            return 0;
    return 1;
}

NO_ASAN static void copy_page(char *dst, const char *src)
{
    volatile uint64_t *d = (volatile uint64_t *)dst;
    const volatile uint64_t *s = (const volatile uint64_t *)src;
    for (size_t i = 0; i < PAGE / sizeof *d; i++)
        d[i] = s[i];
}

/* Moves a new mapping over [map_lo, map_lo + map_len) with the current
 * bytes. Zero pages are not copied: the new mapping reads zeros there
 * already, and a large untouched .bss (static buffers of benchmarks) then
 * costs no memory until it is written. */
static int replace_pages(int fd)
{
    int flags = fd >= 0 ? MAP_SHARED : MAP_PRIVATE | MAP_ANONYMOUS;
    char *tmp = mmap(NULL, map_len, PROT_READ | PROT_WRITE, flags, fd, 0);
    if (tmp == MAP_FAILED)
        return -1;
    for (size_t off = 0; off < map_len; off += PAGE)
        if (!page_is_zero(map_lo + off))
            copy_page(tmp + off, map_lo + off);
    if (mremap(tmp, map_len, map_len, MREMAP_MAYMOVE | MREMAP_FIXED, map_lo) ==
        MAP_FAILED) {
        munmap(tmp, map_len);
        return -1;
    }
    return 0;
}

/* In a forked child the globals must be private again: OpenSHMEM knows no
 * fork, and a child writing its parent's variables would be a surprise. */
static int pages_shared;      /* our segment is memfd-backed (even after finalize) */

static void child_private(void)
{
    if (pages_shared && replace_pages(-1) == 0) {
        pages_shared = 0;
        if (map_fd >= 0)
            close(map_fd);
        map_fd = -1;
    }
}

static int make_shared(void)
{
    static int atfork_done;
    const struct shmemi_region *d = &shmemi.reg[SHMEMI_DATA];
    map_lo = (char *)((uintptr_t)d->base & ~(uintptr_t)(PAGE - 1));
    map_len = ((uintptr_t)(d->base + d->size) - (uintptr_t)map_lo + PAGE - 1) &
              ~(size_t)(PAGE - 1);
    int fd = memfd_create("tnbc-shmem-static", MFD_CLOEXEC);
    if (fd < 0)
        return -1;
    if (ftruncate(fd, (off_t)map_len) != 0 || replace_pages(fd) != 0) {
        close(fd);
        return -1;
    }
    map_fd = fd;
    pages_shared = 1;
    if (!atfork_done++)
        pthread_atfork(NULL, NULL, child_private);
    return 0;
}

int shmemi_static_share(void)
{
    struct shmemi_region *d = &shmemi.reg[SHMEMI_DATA];
    long mine[2] = {-1, -1};
    int mapped = 1;
    if (!shmemi.node_rank || shmemi.node_comm == MPI_COMM_NULL)
        return 1;
    if (make_shared() == 0) {
        mine[0] = (long)getpid();
        mine[1] = map_fd;
    } else {
        shmemi_warn("cannot share static data through a memfd (%s); it stays on "
                    "MPI RMA", strerror(errno));
    }
    int nn;
    MPI_Comm_size(shmemi.node_comm, &nn);
    long *all = malloc(sizeof(long) * 2 * nn);
    peer_maps = calloc(shmemi.npes, sizeof(char *));
    if (!all || !peer_maps)
        shmemi_fatal("out of memory at start-up");
    MPI_Allgather(mine, 2, MPI_LONG, all, 2, MPI_LONG, shmemi.node_comm);
    size_t in_page = (size_t)(d->base - map_lo);
    for (int pe = 0; pe < shmemi.npes; pe++) {
        int r = shmemi.node_rank[pe];
        if (pe == shmemi.me || r < 0 || all[2 * r] < 0)
            continue;
        char path[64];
        snprintf(path, sizeof path, "/proc/%ld/fd/%ld", all[2 * r], all[2 * r + 1]);
        int fd = open(path, O_RDWR | O_CLOEXEC);
        if (fd < 0)
            continue;
        char *p = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        close(fd);
        if (p == MAP_FAILED)
            continue;
        peer_maps[pe] = p;
        d->peer[pe] = p + in_page;
        mapped++;
    }
    free(all);
    return mapped;
}

void shmemi_static_unshare(void)
{
    for (int pe = 0; peer_maps && pe < shmemi.npes; pe++)
        if (peer_maps[pe])
            munmap(peer_maps[pe], map_len);
    free(peer_maps);
    peer_maps = NULL;
    /* our own pages stay shared (the program still uses its globals); the
     * memfd is closed so that it is freed with the last mapping */
    if (map_fd >= 0)
        close(map_fd);
    map_fd = -1;
}
