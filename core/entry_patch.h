/* SPDX-License-Identifier: BSD-3-Clause */
/* Our entries of mmap, munmap, mremap and madvise, kept ours.
 *
 * UCX's memory hooks (libucm: MPICH's ch4:ucx, Open MPI's pml/ucx, the
 * default on InfiniBand clusters) look each of these names up in the
 * global scope, where a preloaded library's definitions come first, and
 * in "bistro" mode (UCX's default on x86_64) overwrite the first bytes of
 * the function they find, ours, with a jump to their own hook, which
 * makes the system call itself. The program's calls then never run our
 * wrapper: a pending buffer unmapped, moved or discarded under the guard
 * (an mremap of a received buffer gave zeros; docs/limits.md).
 *
 * tnbc_entry_reclaim() notices such a jump, remembers its target as the
 * function our wrapper calls next, and writes our first bytes back: our
 * wrapper runs first again, and the other library's hook still sees every
 * call. A patch it cannot read (another form, another architecture, text
 * that cannot be made writable) leaves the entry LOST: the guard then
 * refuses all memory (tnbc_guard_memory_ok), so every call runs blocking,
 * saying why once.
 *
 * Lifecycle of an entry:
 *   UNSET --register (at load)--> OURS --another library patches it-->
 *   PATCHED --reclaim--> OURS (next = the patch's target)
 *   PATCHED --reclaim, unreadable patch--> LOST (final)
 * A registered entry's first eight bytes are, in OURS, those of the library
 * file. */
#ifndef TNBC_ENTRY_PATCH_H
#define TNBC_ENTRY_PATCH_H

enum tnbc_entry {
    TNBC_ENTRY_mmap,
    TNBC_ENTRY_munmap,
    TNBC_ENTRY_mremap,
    TNBC_ENTRY_madvise,
    TNBC_ENTRY_COUNT
};

/* Records our definition of the entry and its first bytes as the library
 * file holds them (a load-time constructor of the wrappers; libucm's own
 * constructor may have patched the entry already). */
void tnbc_entry_register(enum tnbc_entry e, void *ours);

/* Takes back every registered entry another library has patched. Returns
 * 0 when all are ours, -1 with *why set when one is LOST. Cheap when
 * nothing changed (one comparison per entry). */
int tnbc_entry_reclaim(const char **why);

/* The function a wrapper calls for the real work: the hook of the library
 * that had patched the entry, or `dflt` (the C library's). */
void *tnbc_entry_next(enum tnbc_entry e, void *dflt);

#endif
