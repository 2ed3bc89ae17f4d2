// SPDX-License-Identifier: BSD-3-Clause
#include "land.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

static int mem_fd = -1;

/* Moves n bytes between buf and address `at` of this process through
 * /proc/self/mem (sysno: SYS_pwrite64 or SYS_pread64). The system call
 * itself, not pwrite()/pread(): the library interposes them
 * (core/wrap_libc.c), and the landing must not take the guard's range lock
 * or look itself up in the range index. */
static int mem_io(long sysno, char *buf, uintptr_t at, size_t n)
{
    while (n > 0) {
        ssize_t k = syscall(sysno, mem_fd, buf, n, (off_t)at);
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

int land(void *dst, const void *src, size_t n)
{
    return mem_io(SYS_pwrite64, (char *)(uintptr_t)src, (uintptr_t)dst, n);
}

int land_read(void *dst, const void *src, size_t n)
{
    return mem_io(SYS_pread64, dst, (uintptr_t)src, n);
}

int land_init(const char **why)
{
    long ps = sysconf(_SC_PAGESIZE);
    char *page;
    static const char probe[] = "tnbc";

    if (mem_fd >= 0)
        return 0;
    mem_fd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
    if (mem_fd < 0) {
        *why = "cannot open /proc/self/mem for writing";
        return -1;
    }
    page = mmap(NULL, (size_t)ps, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED) {
        *why = "cannot map a probe page";
        return -1;
    }
    int ok = land(page, probe, sizeof probe) == 0;
    if (ok) {
        mprotect(page, (size_t)ps, PROT_READ);
        ok = memcmp(page, probe, sizeof probe) == 0;
    }
    munmap(page, (size_t)ps);
    if (!ok) {
        close(mem_fd);
        mem_fd = -1;
        *why = "writes through /proc/self/mem do not pass page protection on this kernel";
        return -1;
    }
    return 0;
}
