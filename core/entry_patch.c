// SPDX-License-Identifier: BSD-3-Clause
#include "entry_patch.h"

#include <assert.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

struct entry {
    unsigned char *ours;       /* NULL: UNSET */
    uint64_t saved;            /* its first eight bytes as the library file holds them */
    _Atomic(void *) next;      /* the patch's target, once reclaimed */
    _Atomic(const char *) lost; /* non-NULL: LOST, and why */
};

static struct entry entries[TNBC_ENTRY_COUNT];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t first_word(const unsigned char *code)
{
    uint64_t w;
    memcpy(&w, code, sizeof w);
    return w;
}

/* The first eight bytes of the code at `addr` as the file it was loaded
 * from holds them: what they were before anyone patched them. (libucm's
 * constructor patches when MPI is linked in, before ours runs.) */
struct file_word {
    uintptr_t addr;
    uint64_t word;
    int found;
};

static int file_word_of(struct dl_phdr_info *info, size_t size, void *data)
{
    struct file_word *fw = data;
    (void)size;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type != PT_LOAD || fw->addr < lo || fw->addr + 8 > lo + ph->p_filesz)
            continue;
        const char *path = info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name : "/proc/self/exe";
        int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            return 1;
        off_t at = (off_t)(ph->p_offset + (fw->addr - lo));
        fw->found = syscall(SYS_pread64, fd, &fw->word, sizeof fw->word, at) == sizeof fw->word;
        syscall(SYS_close, fd);
        return 1;
    }
    return 0;
}

void tnbc_entry_register(enum tnbc_entry e, void *ours)
{
    assert(e >= 0 && e < TNBC_ENTRY_COUNT && ours);
    struct file_word fw = { .addr = (uintptr_t)ours };
    dl_iterate_phdr(file_word_of, &fw);
    entries[e].saved = fw.found ? fw.word : first_word(ours);
    entries[e].ours = ours;
}

/* Where the jump written over `code` goes, if it is one of the forms
 * libucm writes on x86_64 (jmp rel32, jmp *rel32(%rip)) and the bytes
 * after it are still ours; NULL otherwise. */
static void *jump_target(const unsigned char *code, uint64_t saved)
{
#if defined(__x86_64__)
    unsigned char was[8];
    memcpy(was, &saved, sizeof was);
    int32_t rel;
    if (code[0] == 0xe9 && !memcmp(code + 5, was + 5, 3)) {
        memcpy(&rel, code + 1, sizeof rel);
        return (void *)(code + 5 + rel);
    }
    if (code[0] == 0xff && code[1] == 0x25 && !memcmp(code + 6, was + 6, 2)) {
        void *target;
        memcpy(&rel, code + 2, sizeof rel);
        memcpy(&target, code + 6 + rel, sizeof target);
        return target;
    }
#else
    (void)code;
    (void)saved;
#endif
    return NULL;
}

/* Writes our first eight bytes back in one aligned store, so that a thread
 * entering meanwhile runs either the jump or our code, never a mix. The
 * text's protection is changed by system call: our own mprotect wrapper
 * would take it for the program's. */
static int restore(struct entry *en)
{
    long ps = sysconf(_SC_PAGESIZE);
    uintptr_t at = (uintptr_t)en->ours, page = at & ~((uintptr_t)(ps > 0 ? ps : 4096) - 1);
    size_t len = at + 8 - page;
    if (at % 8 != 0 ||
        syscall(SYS_mprotect, (void *)page, len, PROT_READ | PROT_WRITE | PROT_EXEC) != 0)
        return -1;
    __atomic_store_n((uint64_t *)en->ours, en->saved, __ATOMIC_SEQ_CST);
    int rc = (int)syscall(SYS_mprotect, (void *)page, len, PROT_READ | PROT_EXEC);
    __builtin___clear_cache((char *)en->ours, (char *)en->ours + 8);
    return rc;
}

static void reclaim_one(struct entry *en)
{
    if (atomic_load(&en->lost) || first_word(en->ours) == en->saved)
        return;                                /* another thread was first */
    void *target = jump_target(en->ours, en->saved);
    if (!target) {
        atomic_store(&en->lost, "another library has overwritten tnbc's mmap/munmap/mremap/madvise "
                                "with code tnbc cannot read, so the program's calls bypass the guard");
        return;
    }
    /* The target is set first: a thread entering our restored code calls it. */
    atomic_store(&en->next, target);
    if (restore(en) != 0)
        atomic_store(&en->lost, "another library has patched tnbc's mmap/munmap/mremap/madvise, "
                                "and tnbc cannot write its own entry back (text not writable)");
}

int tnbc_entry_reclaim(const char **why)
{
    int rc = 0;
    for (int e = 0; e < TNBC_ENTRY_COUNT; e++) {
        struct entry *en = &entries[e];
        if (!en->ours)
            continue;
        if (first_word(en->ours) != en->saved && !atomic_load(&en->lost)) {
            pthread_mutex_lock(&lock);
            reclaim_one(en);
            pthread_mutex_unlock(&lock);
        }
        const char *lost = atomic_load(&en->lost);
        if (lost) {
            *why = lost;
            rc = -1;
        }
    }
    return rc;
}

void *tnbc_entry_next(enum tnbc_entry e, void *dflt)
{
    void *n = atomic_load_explicit(&entries[e].next, memory_order_acquire);
    return n ? n : dflt;
}
