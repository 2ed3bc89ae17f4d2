// SPDX-License-Identifier: BSD-3-Clause
#include "land.h"
#include "config.h"
#include "guard.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The descriptor of /proc/self/mem, and which file it is. Its system calls
 * are made directly: the library's own wrappers (core/wrap_libc.c) are for
 * the program's calls. */
static _Atomic int mem_fd = -1;
static dev_t mem_dev;
static ino_t mem_ino;

/* Opens /proc/self/mem at a high descriptor number, away from the small
 * ones a program may pick for dup2 (a log file put at a fixed number would
 * otherwise replace ours, and landings would write into that file). */
static int open_mem(void)
{
    int fd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/mem", O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct rlimit rl;
    long want = 1024;
    if (syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, NULL, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        want = (long)(rl.rlim_cur / 2);
    if (want > 4096)
        want = 4096;
    if (want > fd) {
        int high = (int)syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, (int)want);
        if (high >= 0) {
            syscall(SYS_close, fd);
            fd = high;
        }
    }
    struct stat st;
    if (syscall(SYS_fstat, fd, &st) != 0) {
        syscall(SYS_close, fd);
        return -1;
    }
    mem_dev = st.st_dev;
    mem_ino = st.st_ino;
    return fd;
}

/* Moves n bytes between buf and address `at` of this process through
 * /proc/self/mem (sysno: SYS_pwrite64 or SYS_pread64). The system call
 * itself, not pwrite()/pread(): the library interposes them
 * (core/wrap_libc.c), and the landing must not take the guard's range lock
 * or look itself up in the range index. */
static int mem_io(long sysno, char *buf, uintptr_t at, size_t n)
{
    while (n > 0) {
        ssize_t k = syscall(sysno, atomic_load(&mem_fd), buf, n, (off_t)at);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        buf += k;
        at += (uintptr_t)k;
        n -= (size_t)k;
    }
    return 0;
}

/* A write that failed: again page by page, skipping the pages that are no
 * longer mapped. The program may unmap a buffer whose data is on its way
 * without the C library's munmap, which would have waited for it (a raw
 * system call, dlclose of a library whose memory held the buffer): that
 * data has nowhere to go and nobody can read it, so it is dropped, said
 * once. A mapped page that refuses the write is an error. */
static int land_around_holes(uintptr_t dst, const char *src, size_t n)
{
    int dropped = 0;
    for (uintptr_t a = dst, end = dst + n; a < end;) {
        uintptr_t b = tnbc_page_down(a) + tnbc_page_size();
        if (b > end)
            b = end;
        if (mem_io(SYS_pwrite64, (char *)(uintptr_t)(src + (a - dst)), a, b - a) != 0) {
            if (!tnbc_page_unmapped(a))
                return -1;
            dropped = 1;
        }
        a = b;
    }
    static atomic_int said;
    if (dropped && !atomic_exchange(&said, 1))
        tnbc_warn("a receive buffer was unmapped while its data was on its way (not through the C "
                  "library's munmap); that data is dropped");
    return 0;
}

/* ---- landing by protection key -------------------------------------------
 * Where the CPU and kernel have memory protection keys (x86 PKU) and
 * TNBC_LAND is not `procmem`, the guard closes receive pages with a key of
 * its own instead of PROT_NONE (TNBC_PROT_KEYED, core/guard.h). Every
 * thread denies that key (the kernel's default rights for keys 1-15, and
 * pkey_alloc's for the thread that allocates it, checked in probe_key),
 * so the program faults on those pages as on PROT_NONE ones; the progress
 * thread allows it for itself (land_thread_direct) and lands with memcpy,
 * at memory speed rather than through /proc/self/mem's page-by-page
 * copy. Other threads (the program's, landing the edge parts of its own
 * call) still write through /proc/self/mem, which passes the key too. */
static int land_key = -1;
static __thread int direct;            /* this thread allows land_key */
static __thread sigset_t direct_mask;  /* its signal mask, for copy_direct's way out */

/* memcpy in a thread that allows the key. A fault during it (a page the
 * program unmapped behind the C library's back, or closed other than by
 * our key) comes back here as -1, and the caller writes through
 * /proc/self/mem, which skips unmapped pages. */
static int copy_direct(void *dst, const void *src, size_t n)
{
    sigjmp_buf env;
    if (sigsetjmp(env, 0) != 0) {
        tnbc_guard_fault_escape(NULL);
        syscall(SYS_rt_sigprocmask, SIG_SETMASK, &direct_mask, NULL, _NSIG / 8);
        return -1;
    }
    tnbc_guard_fault_escape(&env);
    memcpy(dst, src, n);
    tnbc_guard_fault_escape(NULL);
    return 0;
}

int land(void *dst, const void *src, size_t n)
{
    if (direct && copy_direct(dst, src, n) == 0)
        return 0;
    if (mem_io(SYS_pwrite64, (char *)(uintptr_t)src, (uintptr_t)dst, n) == 0)
        return 0;
    return land_around_holes((uintptr_t)dst, src, n);
}

int land_read(void *dst, const void *src, size_t n)
{
    if (direct && copy_direct(dst, src, n) == 0)
        return 0;
    return mem_io(SYS_pread64, dst, (uintptr_t)src, n);
}

void land_thread_direct(void)
{
    if (land_key < 0 || direct)
        return;
    if (tnbc_guard_init() != 0)     /* its SIGSEGV handler is copy_direct's way out */
        return;
    if (syscall(SYS_rt_sigprocmask, SIG_SETMASK, NULL, &direct_mask, _NSIG / 8) != 0)
        return;
    if (pkey_set(land_key, 0) == 0)
        direct = 1;
}

const char *land_method(void) { return land_key >= 0 ? "pkey" : "procmem"; }

int land_pkey(void) { return land_key; }

int land_closed_prot(void) { return land_key >= 0 ? TNBC_PROT_KEYED : PROT_NONE; }

#if !defined(__SANITIZE_THREAD__) && !defined(__SANITIZE_ADDRESS__)
/* Whether key works as the guard needs: a page given the key is refused
 * to this thread's system calls while the key is denied (EFAULT, as for
 * PROT_NONE), written by memcpy while allowed, and readable once given
 * key 0 back. Leaves the thread denying the key. */
static int probe_key(int key)
{
    long ps = sysconf(_SC_PAGESIZE);
    static const char probe[] = "tnbc";
    char *p = mmap(NULL, (size_t)ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return -1;
    int ok = syscall(SYS_pkey_mprotect, p, (size_t)ps, PROT_READ | PROT_WRITE, key) == 0 &&
             getrandom(p, 1, GRND_NONBLOCK) < 0 && errno == EFAULT && pkey_set(key, 0) == 0;
    if (ok) {
        memcpy(p, probe, sizeof probe);
        ok = syscall(SYS_pkey_mprotect, p, (size_t)ps, PROT_READ | PROT_WRITE, 0) == 0 &&
             memcmp(p, probe, sizeof probe) == 0;
    }
    if (pkey_set(key, PKEY_DISABLE_ACCESS) != 0)
        ok = 0;
    munmap(p, (size_t)ps);
    return ok ? 0 : -1;
}
#endif

/* TNBC_LAND: auto (a key where there is one), pkey (the same, said when
 * there is none), procmem. The sanitizer builds land through
 * /proc/self/mem only. ThreadSanitizer cannot see the order that the
 * opening of a page gives between the progress thread's copy and the
 * program's reads. AddressSanitizer's free, preloaded before this library,
 * is the one the program calls, so a buffer freed with its data on the
 * way is not waited for (core/wrap_libc.c's free is not reached), and a
 * copy into ASan's quarantine is reported where a write through
 * /proc/self/mem is not seen. */
static void choose_method(void)
{
    static const char *const modes[] = { "auto", "pkey", "procmem", NULL };
    int mode = tnbc_env_choice("TNBC_LAND", modes, 0);
    if (mode == 2)
        return;
    const char *why = NULL;
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
    why = "a sanitizer build";
#else
    int key = pkey_alloc(0, PKEY_DISABLE_ACCESS);
    if (key < 0)
        why = errno == ENOSPC ? "no protection key left" : "this CPU or kernel has no memory protection keys";
    else if (probe_key(key) != 0) {
        pkey_free(key);
        why = "memory protection keys do not guard pages as needed here";
    } else {
        land_key = key;
        tnbc_guard_use_pkey(key);
    }
#endif
    static int said;
    if (why && mode == 1)
        tnbc_warn_once(said, "TNBC_LAND=pkey: %s; landing through /proc/self/mem", why);
}

int land_init(const char **why)
{
    long ps = sysconf(_SC_PAGESIZE);
    static const char probe[] = "tnbc";

    if (atomic_load(&mem_fd) >= 0)
        return 0;
    int fd = open_mem();
    if (fd < 0) {
        *why = "cannot open /proc/self/mem for writing";
        return -1;
    }
    atomic_store(&mem_fd, fd);
    /* The probe page through the C library: sanitizers must see mappings. */
    char *p = mmap(NULL, (size_t)ps, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    int ok = p != MAP_FAILED && land(p, probe, sizeof probe) == 0;
    if (ok) {
        mprotect(p, (size_t)ps, PROT_READ);
        ok = memcmp(p, probe, sizeof probe) == 0;
    }
    if (p != MAP_FAILED)
        munmap(p, (size_t)ps);
    if (!ok) {
        /* No descriptor left: land_check says this rank cannot land. */
        syscall(SYS_close, fd);
        atomic_store(&mem_fd, -1);
        *why = p == MAP_FAILED ? "cannot map a probe page"
                               : "writes through /proc/self/mem do not pass page protection on this kernel";
        return -1;
    }
    choose_method();
    return 0;
}

int land_fd(void) { return atomic_load(&mem_fd); }

int land_check(const char **why)
{
    struct stat st;
    int fd = atomic_load(&mem_fd);
    if (fd < 0) {
        *why = "this rank cannot land data in guarded pages";
        return -1;
    }
    if (syscall(SYS_fstat, fd, &st) == 0 && st.st_dev == mem_dev && st.st_ino == mem_ino)
        return 0;
    /* The program closed the number or put a file of its own there: that
     * number is the program's now (not closed here). */
    static atomic_int said;
    if (!atomic_exchange(&said, 1))
        tnbc_warn("the program closed or replaced tnbc's /proc/self/mem descriptor (%d); it is opened again", fd);
    fd = open_mem();
    if (fd < 0) {
        atomic_store(&mem_fd, -1);
        *why = "cannot open /proc/self/mem again";
        return -1;
    }
    atomic_store(&mem_fd, fd);
    return 0;
}
