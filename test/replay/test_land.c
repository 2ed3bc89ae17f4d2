// SPDX-License-Identifier: BSD-3-Clause
/* Unit tests for libreplay/land: data written through /proc/self/mem
 * reaches protected pages; a page unmapped behind the C library's back is
 * skipped (its data has nowhere to go) while the pages around it get
 * theirs; a mapped page that refuses the write is an error; the
 * descriptor sits high and is opened again when the program replaced it.
 * Where the CPU has memory protection keys (land_pkey() >= 0), the same
 * through a thread that allows the key, as the progress thread: its
 * landing is a copy, other threads' system calls are refused the keyed
 * pages, and an unmapped page is skipped without killing the process.
 * Those cases are skipped (and counted so) without keys or with
 * TNBC_LAND=procmem. */
#include "land.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <cmocka.h>

static size_t ps;

static int setup(void **state)
{
    (void)state;
    const char *why = NULL;
    ps = (size_t)sysconf(_SC_PAGESIZE);
    return land_init(&why);
}

static char *pattern(size_t n, char seed)
{
    char *p = malloc(n);
    assert_non_null(p);
    for (size_t i = 0; i < n; i++)
        p[i] = (char)(seed + (char)(i * 7));
    return p;
}

static void test_into_protected_pages(void **state)
{
    (void)state;
    char *m = mmap(NULL, 3 * ps, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(m != MAP_FAILED);
    char *src = pattern(3 * ps - 100, 3);
    assert_int_equal(land(m + 50, src, 3 * ps - 100), 0);
    assert_int_equal(mprotect(m, 3 * ps, PROT_READ), 0);
    assert_memory_equal(m + 50, src, 3 * ps - 100);
    munmap(m, 3 * ps);
    free(src);
}

static void test_skips_an_unmapped_page(void **state)
{
    (void)state;
    char *m = mmap(NULL, 3 * ps, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(m != MAP_FAILED);
    syscall(SYS_munmap, m + ps, ps);                /* the middle page: gone */
    char *src = pattern(3 * ps, 5);
    assert_int_equal(land(m, src, 3 * ps), 0);
    assert_int_equal(mprotect(m, ps, PROT_READ), 0);
    assert_int_equal(mprotect(m + 2 * ps, ps, PROT_READ), 0);
    assert_memory_equal(m, src, ps);
    assert_memory_equal(m + 2 * ps, src + 2 * ps, ps);
    munmap(m, ps);
    munmap(m + 2 * ps, ps);
    free(src);
}

/* A shared mapping of a file opened read-only: the kernel refuses the
 * write even through /proc/self/mem. */
static void test_refused_on_a_mapped_page(void **state)
{
    (void)state;
    char path[] = "/tmp/tnbc-test-land.XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, (off_t)ps), 0);
    close(fd);
    fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    char *m = mmap(NULL, ps, PROT_READ, MAP_SHARED, fd, 0);
    assert_true(m != MAP_FAILED);
    char src[64] = "not to be written";
    assert_int_equal(land(m, src, sizeof src), -1);
    munmap(m, ps);
    close(fd);
    unlink(path);
}

static void test_descriptor_replaced(void **state)
{
    (void)state;
    const char *why = NULL;
    int fd = land_fd();
    assert_true(fd > 2);
    assert_int_equal(land_check(&why), 0);
    int other = open("/dev/null", O_WRONLY);
    assert_true(other >= 0);
    assert_true(dup2(other, fd) == fd);              /* the program takes the number */
    close(other);
    assert_int_equal(land_check(&why), 0);            /* opened again, elsewhere */
    assert_int_not_equal(land_fd(), fd);
    close(fd);
    char *m = mmap(NULL, ps, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(m != MAP_FAILED);
    char src[32] = "lands after the reopen";
    assert_int_equal(land(m, src, sizeof src), 0);
    assert_int_equal(mprotect(m, ps, PROT_READ), 0);
    assert_memory_equal(m, src, sizeof src);
    munmap(m, ps);
}

/* A landing from a thread that allows the key (land_thread_direct). */
struct direct_landing {
    char *dst;
    const char *src;
    size_t n;
    int rc;
};

static void *land_directly(void *arg)
{
    struct direct_landing *d = arg;
    land_thread_direct();
    d->rc = land(d->dst, d->src, d->n);
    return NULL;
}

static int land_from_progress_like_thread(char *dst, const char *src, size_t n)
{
    struct direct_landing d = { dst, src, n, -2 };
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, land_directly, &d), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    return d.rc;
}

static char *keyed_pages(size_t pages)
{
    char *m = mmap(NULL, pages * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(m != MAP_FAILED);
    assert_int_equal(syscall(SYS_pkey_mprotect, m, pages * ps, PROT_READ | PROT_WRITE, land_pkey()), 0);
    return m;
}

static void open_keyed(char *m, size_t len)
{
    assert_int_equal(syscall(SYS_pkey_mprotect, m, len, PROT_READ | PROT_WRITE, 0), 0);
}

static void test_keyed_pages_land_by_copy(void **state)
{
    (void)state;
    if (land_pkey() < 0)
        skip();
    assert_string_equal(land_method(), "pkey");
    char *m = keyed_pages(3);
    /* This thread denies the key: the kernel refuses it the pages too. */
    errno = 0;
    assert_true(getrandom(m + 10, 4, GRND_NONBLOCK) < 0 && errno == EFAULT);
    char *src = pattern(3 * ps - 100, 9);
    assert_int_equal(land_from_progress_like_thread(m + 50, src, 3 * ps - 100), 0);
    open_keyed(m, 3 * ps);
    assert_memory_equal(m + 50, src, 3 * ps - 100);
    munmap(m, 3 * ps);
    free(src);
}

static void test_keyed_skips_an_unmapped_page(void **state)
{
    (void)state;
    if (land_pkey() < 0)
        skip();
    char *m = keyed_pages(3);
    syscall(SYS_munmap, m + ps, ps);                /* behind the C library's back */
    char *src = pattern(3 * ps, 11);
    assert_int_equal(land_from_progress_like_thread(m, src, 3 * ps), 0);
    open_keyed(m, ps);
    open_keyed(m + 2 * ps, ps);
    assert_memory_equal(m, src, ps);
    assert_memory_equal(m + 2 * ps, src + 2 * ps, ps);
    munmap(m, ps);
    munmap(m + 2 * ps, ps);
    free(src);
}

/* Without the key's right (any thread but the progress thread), landing
 * in keyed pages still works, through /proc/self/mem. */
static void test_keyed_pages_from_another_thread(void **state)
{
    (void)state;
    if (land_pkey() < 0)
        skip();
    char *m = keyed_pages(2);
    char *src = pattern(2 * ps, 13);
    assert_int_equal(land(m, src, 2 * ps), 0);
    open_keyed(m, 2 * ps);
    assert_memory_equal(m, src, 2 * ps);
    munmap(m, 2 * ps);
    free(src);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_into_protected_pages),
        cmocka_unit_test(test_skips_an_unmapped_page),
        cmocka_unit_test(test_refused_on_a_mapped_page),
        cmocka_unit_test(test_descriptor_replaced),
        cmocka_unit_test(test_keyed_pages_land_by_copy),
        cmocka_unit_test(test_keyed_skips_an_unmapped_page),
        cmocka_unit_test(test_keyed_pages_from_another_thread),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
