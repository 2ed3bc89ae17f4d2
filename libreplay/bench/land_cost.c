// SPDX-License-Identifier: BSD-3-Clause
/* Cost of landing received data in guarded pages (docs/replay.md).
 *
 *   land_cost [REPS]
 *
 * For buffer sizes from 4 KiB to 16 MiB: a plain memcpy into writable
 * pages (what the blocking collective's copy costs), a write through
 * /proc/self/mem into PROT_NONE pages (what libreplay does), and opening
 * the pages, copying and closing them again (fast, but it would let the
 * program see a half-written block: not an option, shown for scale), the
 * progress thread's landing into pages closed with a memory protection key
 * (what libreplay does where the CPU has keys; "n/a" elsewhere) with a
 * memcpy into open pages timed in turn with it in the same thread, and
 * the landing's bandwidth as a share of that memcpy's ("of it"); and
 * userfaultfd's UFFDIO_COPY into pages dropped with MADV_DONTNEED (the
 * landing a userfaultfd guard would use; "n/a" where the kernel refuses
 * userfaultfd). The drop is timed apart: it is the guard's arming. */
#include "land.h"

#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* A userfaultfd descriptor, or -1: user-mode faults only, so that it
 * works without privileges where vm.unprivileged_userfaultfd is 0. */
static int uffd_open(void)
{
    int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);
    if (fd < 0)
        return -1;
    struct uffdio_api api = {.api = UFFD_API};
    if (ioctl(fd, UFFDIO_API, &api) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Seconds per landing of n bytes with UFFDIO_COPY into dropped pages of
 * dst (registered for missing-page faults), the drop's seconds in *drop;
 * a negative result where it cannot run. */
static double uffd_land(int fd, char *dst, const char *src, size_t n, int reps, double *drop)
{
    struct uffdio_register reg = {
        .range = {(unsigned long)dst, n},
        .mode = UFFDIO_REGISTER_MODE_MISSING,
    };
    if (fd < 0 || ioctl(fd, UFFDIO_REGISTER, &reg) != 0)
        return -1;
    double t_copy = 0, t_drop = 0;
    for (int r = 0; r < reps; r++) {
        double t0 = now();
        if (madvise(dst, n, MADV_DONTNEED) != 0)
            return -1;
        double t1 = now();
        struct uffdio_copy cp = {.dst = (unsigned long)dst, .src = (unsigned long)src, .len = n};
        if (ioctl(fd, UFFDIO_COPY, &cp) != 0 || cp.copy != (long long)n)
            return -1;
        t_copy += now() - t1;
        t_drop += t1 - t0;
    }
    ioctl(fd, UFFDIO_UNREGISTER, &reg.range);
    *drop = t_drop / reps;
    return t_copy / reps;
}

/* The landing into pages closed with the landing's key, from a thread
 * that allows it (as the progress thread does), against memcpy into open
 * pages in the same thread: batches of each in turn, so that both see the
 * same caches and the same moments of the machine's load. */
struct keyed_run {
    char *dst, *open_dst;
    const char *src;
    size_t n;
    int reps;
    double land_s, copy_s;     /* per landing / per copy; land_s < 0: failed */
};

static void *keyed_thread(void *arg)
{
    struct keyed_run *k = arg;
    int batch = k->n >= (256u << 10) ? 1 : (int)((256u << 10) / k->n);
    land_thread_direct();
    k->land_s = k->copy_s = 0;
    for (int r = 0; r < k->reps; r++) {
        double t0 = now();
        for (int b = 0; b < batch; b++) {
            memcpy(k->open_dst, k->src, k->n);
            __asm__ volatile("" ::: "memory");
        }
        double t1 = now();
        for (int b = 0; b < batch; b++)
            if (land(k->dst, k->src, k->n) != 0) {
                k->land_s = -1;
                return NULL;
            }
        k->land_s += now() - t1;
        k->copy_s += t1 - t0;
    }
    k->land_s /= (double)k->reps * batch;
    k->copy_s /= (double)k->reps * batch;
    return NULL;
}

/* 0 with k->land_s and k->copy_s set, or -1 where there is no key. */
static int keyed_land(struct keyed_run *k)
{
    pthread_t t;
    k->land_s = -1;
    if (land_pkey() < 0 || syscall(SYS_pkey_mprotect, k->dst, k->n, PROT_READ | PROT_WRITE, land_pkey()) != 0)
        return -1;
    if (pthread_create(&t, NULL, keyed_thread, k) == 0)
        pthread_join(t, NULL);
    syscall(SYS_pkey_mprotect, k->dst, k->n, PROT_READ | PROT_WRITE, 0);
    return k->land_s > 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 20;
    const char *why;
    if (land_init(&why) != 0) {
        fprintf(stderr, "land_cost: %s\n", why);
        return 1;
    }
    int fd = uffd_open();
    printf("%10s %14s %14s %14s %8s %12s %10s %12s %12s %8s\n", "bytes", "memcpy GB/s", "procmem GB/s",
           "mprotect GB/s", "ratio", "uffd GB/s", "drop us", "pkey GB/s", "its memcpy", "of it");
    for (size_t n = 4096; n <= (16u << 20); n *= 4) {
        char *src = malloc(n);
        char *dst = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        memset(src, 7, n);
        memset(dst, 1, n);
        double t0 = now();
        for (int r = 0; r < reps; r++) {
            memcpy(dst, src, n);
            __asm__ volatile("" ::: "memory");
        }
        double t_copy = (now() - t0) / reps;
        mprotect(dst, n, PROT_NONE);
        t0 = now();
        for (int r = 0; r < reps; r++)
            land(dst, src, n);
        double t_land = (now() - t0) / reps;
        t0 = now();
        for (int r = 0; r < reps; r++) {
            mprotect(dst, n, PROT_READ | PROT_WRITE);
            memcpy(dst, src, n);
            mprotect(dst, n, PROT_NONE);
        }
        double t_prot = (now() - t0) / reps;
        mprotect(dst, n, PROT_READ);
        if (memcmp(dst, src, n) != 0) {
            fprintf(stderr, "land_cost: data did not land\n");
            return 1;
        }
        printf("%10zu %14.2f %14.2f %14.2f %8.2f", n, n / t_copy / 1e9, n / t_land / 1e9,
               n / t_prot / 1e9, t_land / t_copy);
        double t_drop = 0;
        double t_uffd = uffd_land(fd, dst, src, n, reps, &t_drop);
        if (t_uffd > 0 && memcmp(dst, src, n) == 0)
            printf(" %12.2f %10.1f", n / t_uffd / 1e9, t_drop * 1e6);
        else
            printf(" %12s %10s", "n/a", "n/a");
        mprotect(dst, n, PROT_READ | PROT_WRITE);
        memset(dst, 1, n);
        /* Mapped as dst is: malloc's next chunk would sit 16 bytes past
         * src modulo 4 KiB, and its copies slow down from 4K aliasing. */
        char *open_dst = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        memset(open_dst, 1, n);
        struct keyed_run k = { dst, open_dst, src, n, reps, -1, -1 };
        if (keyed_land(&k) == 0 && memcmp(dst, src, n) == 0)
            printf(" %12.2f %12.2f %8.2f\n", n / k.land_s / 1e9, n / k.copy_s / 1e9, k.copy_s / k.land_s);
        else
            printf(" %12s %12s %8s\n", "n/a", "n/a", "n/a");
        munmap(open_dst, n);
        munmap(dst, n);
        free(src);
    }
    if (fd >= 0)
        close(fd);
    return 0;
}
