// SPDX-License-Identifier: BSD-3-Clause
/* Unit tests for core/entry_patch: entries patched the way libucm's
 * "bistro" hooks patch them (a jump written over the function's first
 * bytes) are taken back, the jump's target becomes the next function, and
 * a patch that cannot be read leaves the entry lost. The victims are
 * functions of this program; the bytes they must get back are read from
 * its file, as the library reads its own. */
#include "entry_patch.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

/* x86_64 only, as the rest of tnbc (the TSC clock). */
#define VICTIM __attribute__((noinline, noipa, aligned(16)))

VICTIM static int victim_rel32(int x) { return x + 1; }
VICTIM static int victim_indirect(int x) { return x + 2; }
VICTIM static int victim_unreadable(int x) { return x + 3; }
VICTIM static int victim_untouched(int x) { return x + 4; }
VICTIM static int victim_early(int x) { return x + 5; }
static int hook(int x) { return x * 100; }
static void *volatile hook_slot = (void *)hook;   /* jmp *rel32(%rip) reads it */

/* Writes `n` bytes over fn's first bytes, as libucm does. */
static void patch(void *fn, const unsigned char *code, size_t n)
{
    long ps = sysconf(_SC_PAGESIZE);
    uintptr_t page = (uintptr_t)fn & ~((uintptr_t)ps - 1);
    size_t len = (uintptr_t)fn + n - page;
    assert_int_equal(mprotect((void *)page, len, PROT_READ | PROT_WRITE | PROT_EXEC), 0);
    memcpy(fn, code, n);
    assert_int_equal(mprotect((void *)page, len, PROT_READ | PROT_EXEC), 0);
    __builtin___clear_cache((char *)fn, (char *)fn + n);
}

static int call(int (*fn)(int), int x)
{
    int (*volatile f)(int) = fn;
    return f(x);
}

static void test_untouched_entry_stays(void **state)
{
    (void)state;
    tnbc_entry_register(TNBC_ENTRY_madvise, (void *)victim_untouched);
    const char *why = NULL;
    assert_int_equal(tnbc_entry_reclaim(&why), 0);
    assert_ptr_equal(tnbc_entry_next(TNBC_ENTRY_madvise, (void *)call), (void *)call);
    assert_int_equal(call(victim_untouched, 1), 5);
}

static void test_jmp_rel32_taken_back(void **state)
{
    (void)state;
    tnbc_entry_register(TNBC_ENTRY_mmap, (void *)victim_rel32);
    unsigned char before[8], jmp[5] = { 0xe9 };
    memcpy(before, (void *)victim_rel32, sizeof before);
    int32_t rel = (int32_t)((intptr_t)hook - ((intptr_t)victim_rel32 + 5));
    memcpy(jmp + 1, &rel, sizeof rel);
    patch((void *)victim_rel32, jmp, sizeof jmp);
    assert_int_equal(call(victim_rel32, 7), 700);     /* the patch works */

    const char *why = NULL;
    assert_int_equal(tnbc_entry_reclaim(&why), 0);
    assert_memory_equal((void *)victim_rel32, before, sizeof before);
    assert_int_equal(call(victim_rel32, 7), 8);       /* ours again */
    assert_ptr_equal(tnbc_entry_next(TNBC_ENTRY_mmap, NULL), (void *)hook);
    assert_int_equal(tnbc_entry_reclaim(&why), 0);    /* and stays so */
}

/* Patched before it was registered (libucm's constructor runs before the
 * preload library's when MPI is linked in): the bytes come from the file. */
static void test_patched_before_registration(void **state)
{
    (void)state;
    unsigned char before[8], jmp[5] = { 0xe9 };
    memcpy(before, (void *)victim_early, sizeof before);
    int32_t rel = (int32_t)((intptr_t)hook - ((intptr_t)victim_early + 5));
    memcpy(jmp + 1, &rel, sizeof rel);
    patch((void *)victim_early, jmp, sizeof jmp);
    tnbc_entry_register(TNBC_ENTRY_madvise, (void *)victim_early);
    assert_int_equal(call(victim_early, 2), 200);
    const char *why = NULL;
    assert_int_equal(tnbc_entry_reclaim(&why), 0);
    assert_memory_equal((void *)victim_early, before, sizeof before);
    assert_int_equal(call(victim_early, 2), 7);
    assert_ptr_equal(tnbc_entry_next(TNBC_ENTRY_madvise, NULL), (void *)hook);
}

static void test_jmp_indirect_taken_back(void **state)
{
    (void)state;
    tnbc_entry_register(TNBC_ENTRY_munmap, (void *)victim_indirect);
    unsigned char jmp[6] = { 0xff, 0x25 };
    int32_t rel = (int32_t)((intptr_t)&hook_slot - ((intptr_t)victim_indirect + 6));
    memcpy(jmp + 2, &rel, sizeof rel);
    patch((void *)victim_indirect, jmp, sizeof jmp);
    assert_int_equal(call(victim_indirect, 3), 300);

    const char *why = NULL;
    assert_int_equal(tnbc_entry_reclaim(&why), 0);
    assert_int_equal(call(victim_indirect, 3), 5);
    assert_ptr_equal(tnbc_entry_next(TNBC_ENTRY_munmap, NULL), (void *)hook);
}

static void test_unreadable_patch_is_lost(void **state)
{
    (void)state;
    tnbc_entry_register(TNBC_ENTRY_mremap, (void *)victim_unreadable);
    static const unsigned char traps[4] = { 0xcc, 0xcc, 0xcc, 0xcc };
    patch((void *)victim_unreadable, traps, sizeof traps);
    const char *why = NULL;
    assert_int_equal(tnbc_entry_reclaim(&why), -1);
    assert_non_null(why);
    assert_non_null(strstr(why, "cannot read"));
    assert_ptr_equal(tnbc_entry_next(TNBC_ENTRY_mremap, NULL), NULL);
    why = NULL;
    assert_int_equal(tnbc_entry_reclaim(&why), -1);   /* final */
    assert_non_null(why);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_untouched_entry_stays),
        cmocka_unit_test(test_jmp_rel32_taken_back),
        cmocka_unit_test(test_jmp_indirect_taken_back),
        cmocka_unit_test(test_patched_before_registration),
        cmocka_unit_test(test_unreadable_patch_is_lost),
    };
    return cmocka_run_group_tests_name("entry_patch", tests, NULL, NULL);
}
