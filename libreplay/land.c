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

int land(void *dst, const void *src, size_t n)
{
    const char *p = src;
    uintptr_t at = (uintptr_t)dst;
    while (n > 0) {
        /* The system call itself, not pwrite(): the library interposes
         * pwrite (core/wrap_libc.c), and the landing must not take the
         * guard's range lock or look itself up in the range index. */
        ssize_t w = syscall(SYS_pwrite64, mem_fd, p, n, (off_t)at);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        at += (uintptr_t)w;
        n -= (size_t)w;
    }
    return 0;
}

int land_read(void *dst, const void *src, size_t n)
{
    char *p = dst;
    uintptr_t at = (uintptr_t)src;
    while (n > 0) {
        ssize_t r = syscall(SYS_pread64, mem_fd, p, n, (off_t)at);   /* as land() */
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        p += r;
        at += (uintptr_t)r;
        n -= (size_t)r;
    }
    return 0;
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
