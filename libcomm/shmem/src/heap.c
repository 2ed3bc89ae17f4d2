// SPDX-License-Identifier: BSD-3-Clause
/*
 * heap.c - the symmetric heap allocator.
 *
 * Every PE makes the same allocation calls in the same order (OpenSHMEM
 * requires it), so a deterministic first-fit allocator returns the same
 * offset on every PE. The block list lives in private memory, never in the
 * heap, so a stray remote write cannot corrupt it.
 */
#include <stdlib.h>

#include "internal.h"

struct block { size_t off, size; int used; };

static struct block *blocks;
static size_t nblocks, cap;

int shmemi_heap_init(size_t reserved)
{
    size_t size = shmemi.reg[SHMEMI_HEAP].size;
    cap = 64;
    blocks = malloc(cap * sizeof *blocks);
    if (!blocks)
        shmemi_fatal("out of memory");
    nblocks = 0;
    if (reserved)
        blocks[nblocks++] = (struct block){0, reserved, 1};
    blocks[nblocks++] = (struct block){reserved, size - reserved, 0};
    return 0;
}

static void insert_at(size_t i, struct block b)
{
    if (nblocks == cap) {
        struct block *nb = realloc(blocks, 2 * cap * sizeof *blocks);
        if (!nb)
            shmemi_fatal("out of memory");
        blocks = nb;
        cap *= 2;
    }
    memmove(&blocks[i + 1], &blocks[i], (nblocks - i) * sizeof *blocks);
    blocks[i] = b;
    nblocks++;
}

static void remove_at(size_t i)
{
    memmove(&blocks[i], &blocks[i + 1], (nblocks - i - 1) * sizeof *blocks);
    nblocks--;
}

/* Offset of the first address at or after offset off that is a multiple of
 * align, as an address (not as an offset): shmem_align promises an aligned
 * pointer. Callers agreed that base % align is the same on every PE. */
static size_t align_off(size_t off, size_t align)
{
    uintptr_t a = (uintptr_t)shmemi.reg[SHMEMI_HEAP].base + off;
    return off + (size_t)((align - a % align) % align);
}

void *shmemi_heap_alloc(size_t align, size_t size)
{
    size_t heap = shmemi.reg[SHMEMI_HEAP].size;
    /* refused before any rounding: SIZE_MAX + 15 would wrap to 0 (#22) */
    if (!align || (align & (align - 1)) || align > heap || size > heap)
        return NULL;
    if (align < 16)
        align = 16;
    size = (size + 15) & ~(size_t)15;
    for (size_t i = 0; i < nblocks; i++) {
        struct block b = blocks[i];
        size_t start = align_off(b.off, align);
        if (b.used || start - b.off > b.size || b.size - (start - b.off) < size)
            continue;
        if (start > b.off) {            /* leading gap stays free */
            blocks[i].size = start - b.off;
            insert_at(++i, (struct block){start, b.size - (start - b.off), 0});
            b = blocks[i];
        }
        if (b.size > size)              /* trailing rest stays free */
            insert_at(i + 1, (struct block){start + size, b.size - size, 0});
        blocks[i] = (struct block){start, size, 1};
        return shmemi.reg[SHMEMI_HEAP].base + start;
    }
    return NULL;
}

static ptrdiff_t find(const void *p)
{
    size_t off = (size_t)((const char *)p - shmemi.reg[SHMEMI_HEAP].base);
    for (size_t i = 0; i < nblocks; i++)
        if (blocks[i].used && blocks[i].off == off)
            return (ptrdiff_t)i;
    return -1;
}

size_t shmemi_heap_block_size(const void *p)
{
    ptrdiff_t i = find(p);
    return i < 0 ? 0 : blocks[i].size;
}

void shmemi_heap_release(void *p)
{
    ptrdiff_t i = find(p);
    if (i < 0) {
        shmemi_warn("shmem_free(%p): not a block of the symmetric heap; ignored", p);
        return;
    }
    blocks[i].used = 0;
    if ((size_t)i + 1 < nblocks && !blocks[i + 1].used) {
        blocks[i].size += blocks[i + 1].size;
        remove_at(i + 1);
    }
    if (i > 0 && !blocks[i - 1].used) {
        blocks[i - 1].size += blocks[i].size;
        remove_at(i);
    }
}

/* Collective check that every PE asked for the same size: a mismatch would
 * silently give different offsets, so it is fatal. Doubles as the barrier. */
static int agree(const char *fn, size_t size, size_t align)
{
    /* the heap base is aligned to SHMEMI_HEAP_ALIGN; above that an aligned
     * address has the same offset on every PE only if the bases agree
     * modulo the alignment */
    unsigned long mis = align > 1 && !(align & (align - 1)) &&
                        align <= shmemi.reg[SHMEMI_HEAP].size ?
                        (uintptr_t)shmemi.reg[SHMEMI_HEAP].base % align : 0;
    unsigned long v[4] = {size, ~(unsigned long)size, mis, ~mis}, m[4];
    MPI_Allreduce(v, m, 4, MPI_UNSIGNED_LONG, MPI_MAX, shmemi.comm);
    if (m[0] != ~m[1])
        shmemi_fatal("%s: PEs asked for different sizes (this PE %zu); the heap "
                     "would not be symmetric", fn, size);
    if (m[2] != ~m[3]) {
        if (shmemi.me == 0)
            shmemi_warn("%s: alignment %zu cannot be symmetric (the heaps are "
                        "aligned differently on different PEs); returning NULL",
                        fn, align);
        return -1;
    }
    return 0;
}

static void *alloc_collective(const char *fn, size_t align, size_t size)
{
    shmemi_check_init(fn);
    shmem_quiet();
    int ok = agree(fn, size, align) == 0;
    void *p = size && ok ? shmemi_heap_alloc(align, size) : NULL;
    shmem_barrier_all();
    return p;
}

void *shmem_malloc(size_t size) { return alloc_collective("shmem_malloc", 16, size); }

/* Every block supports atomics and signals from any PE: hints change nothing. */
void *shmem_malloc_with_hints(size_t size, long hints)
{
    (void)hints;
    return alloc_collective("shmem_malloc_with_hints", 16, size);
}

void *shmem_align(size_t alignment, size_t size)
{
    return alloc_collective("shmem_align", alignment, size);
}

void *shmem_calloc(size_t count, size_t size)
{
    if (size && count > SIZE_MAX / size)
        count = 0, size = 0;
    void *p = alloc_collective("shmem_calloc", 16, count * size);
    if (p) {
        memset(p, 0, count * size);
        shmem_barrier_all();
    }
    return p;
}

void shmem_free(void *ptr)
{
    shmemi_check_init("shmem_free");
    shmem_barrier_all();
    if (ptr)
        shmemi_heap_release(ptr);
}

void *shmem_realloc(void *ptr, size_t size)
{
    if (!ptr)
        return shmem_malloc(size);
    size_t old = shmemi_heap_block_size(ptr);
    void *p = shmem_malloc(size);
    if (!p && size)
        return NULL;        /* the old block stays valid, as realloc's */
    if (p && old)
        memcpy(p, ptr, old < size ? old : size);
    shmem_free(ptr);
    return p;
}

void *shmalloc(size_t size) { return shmem_malloc(size); }
void *shmemalign(size_t alignment, size_t size) { return shmem_align(alignment, size); }
void *shrealloc(void *ptr, size_t size) { return shmem_realloc(ptr, size); }
void shfree(void *ptr) { shmem_free(ptr); }
