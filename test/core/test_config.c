// SPDX-License-Identifier: BSD-3-Clause
/* Unit tests for core/config: TNBC_* settings, good and bad values, and the
 * exact one-line warning a bad value gives (captured from stderr). */
#include "config.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

/* ---- stderr capture ----------------------------------------------------- */

static char captured[4096];
static int saved_fd = -1;
static FILE *sink;

static void capture_begin(void)
{
    fflush(stderr);
    sink = tmpfile();
    assert_non_null(sink);
    saved_fd = dup(2);
    assert_true(saved_fd >= 0);
    assert_int_equal(dup2(fileno(sink), 2), 2);
}

/* Returns what was written to stderr since capture_begin. */
static const char *capture_end(void)
{
    size_t n;
    fflush(stderr);
    dup2(saved_fd, 2);
    close(saved_fd);
    saved_fd = -1;
    rewind(sink);
    n = fread(captured, 1, sizeof captured - 1, sink);
    captured[n] = '\0';
    fclose(sink);
    return captured;
}

static int lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

static long get_long(const char *value, long fallback, long min, long max, const char **err)
{
    long v;
    if (value)
        setenv("TNBC_T_LONG", value, 1);
    else
        unsetenv("TNBC_T_LONG");
    capture_begin();
    v = tnbc_env_long("TNBC_T_LONG", fallback, min, max);
    *err = capture_end();
    return v;
}

static void expect_long_ok(const char *value, long want, long min, long max)
{
    const char *err;
    assert_int_equal(get_long(value, 8, min, max, &err), want);
    assert_string_equal(err, "");
}

static void expect_long_bad(const char *value, long min, long max)
{
    const char *err;
    char want[256];
    assert_int_equal(get_long(value, 8, min, max, &err), 8);
    snprintf(want, sizeof want,
             "tnbc: TNBC_T_LONG=\"%s\" is not a whole number in [%ld, %ld]; using 8\n",
             value, min, max);
    assert_string_equal(err, want);
}

static int reset(void **state)
{
    (void)state;
    tnbc_set_log_rank(-1);
    unsetenv("TNBC_T_LONG");
    unsetenv("TNBC_T_BOOL");
    unsetenv("TNBC_T_CHOICE");
    unsetenv("TNBC_T_STR");
    return 0;
}

/* ---- tests -------------------------------------------------------------- */

static void test_long_good(void **state)
{
    (void)state;
    expect_long_ok(NULL, 8, 0, 100);          /* unset: the default, silently */
    expect_long_ok("", 8, 0, 100);            /* empty: likewise */
    expect_long_ok("42", 42, 0, 100);
    expect_long_ok("0", 0, 0, 100);           /* both bounds are allowed */
    expect_long_ok("100", 100, 0, 100);
    expect_long_ok("-7", -7, -10, 10);
    expect_long_ok("+5", 5, 0, 10);
    expect_long_ok("1099511627776", 1L << 40, 0, 1L << 40);
}

static void test_long_bad(void **state)
{
    (void)state;
    expect_long_bad("lots", 0, 100);
    expect_long_bad("101", 0, 100);           /* above the range */
    expect_long_bad("-1", 0, 100);            /* below */
    expect_long_bad("5x", 0, 100);            /* trailing junk */
    expect_long_bad("12 ", 0, 100);
    expect_long_bad("0x10", 0, 100);          /* decimal only */
    expect_long_bad("1.5", 0, 100);
    expect_long_bad("-", 0, 100);
    expect_long_bad("99999999999999999999999", 0, 1L << 40);   /* overflows a long */
    /* The message the trace suite greps for, from a real setting's range. */
    const char *err;
    setenv("TNBC_CHUNKS", "0", 1);
    capture_begin();
    assert_int_equal(tnbc_env_long("TNBC_CHUNKS", 4, 1, 64), 4);
    err = capture_end();
    unsetenv("TNBC_CHUNKS");
    assert_string_equal(err, "tnbc: TNBC_CHUNKS=\"0\" is not a whole number in [1, 64]; using 4\n");
}

static double get_double(const char *value, const char **err)
{
    double v;
    setenv("TNBC_T_DOUBLE", value, 1);
    capture_begin();
    v = tnbc_env_double("TNBC_T_DOUBLE", 0.25, 0, 1);
    *err = capture_end();
    return v;
}

/* Decimal numbers in [0, 1]; anything else (NaN, junk, out of range) the
 * fallback 0.25 with one line naming the value and the range. */
static void test_double(void **state)
{
    (void)state;
    static const struct { const char *v; double want; } good[] = {
        { "0", 0 }, { "1", 1 }, { "0.5", 0.5 }, { ".75", 0.75 }, { "1e-1", 0.1 }, { "", 0.25 },
    };
    static const char *const bad[] = { "nan", "1.5", "-0.1", "0.5x", "x", "inf", " 0.5 ", "1e999" };
    const char *err;
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        assert_true(get_double(good[i].v, &err) == good[i].want);
        assert_string_equal(err, "");
    }
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char want[160];
        assert_true(get_double(bad[i], &err) == 0.25);
        snprintf(want, sizeof want, "tnbc: TNBC_T_DOUBLE=\"%s\" is not a number in [0, 1]; using 0.25\n",
                 bad[i]);
        assert_string_equal(err, want);
    }
    setenv("TNBC_T_DOUBLE", "x", 1);         /* a NaN fallback: the caller's default */
    capture_begin();
    assert_true(isnan(tnbc_env_double("TNBC_T_DOUBLE", NAN, 0, 1)));
    err = capture_end();
    assert_string_equal(err, "tnbc: TNBC_T_DOUBLE=\"x\" is not a number in [0, 1]; using the default\n");
    unsetenv("TNBC_T_DOUBLE");
}

static int get_bool(const char *value, int fallback, const char **err)
{
    int v;
    setenv("TNBC_T_BOOL", value, 1);
    capture_begin();
    v = tnbc_env_bool("TNBC_T_BOOL", fallback);
    *err = capture_end();
    return v;
}

static void test_bool(void **state)
{
    (void)state;
    const char *yes[] = { "1", "yes", "on", "true", "YES", "On", "TRUE" };
    const char *no[] = { "0", "no", "off", "false", "NO", "Off", "False" };
    const char *err;
    for (size_t i = 0; i < sizeof yes / sizeof *yes; i++) {
        assert_int_equal(get_bool(yes[i], 0, &err), 1);
        assert_string_equal(err, "");
        assert_int_equal(get_bool(no[i], 1, &err), 0);
        assert_string_equal(err, "");
    }
    assert_int_equal(get_bool("", 1, &err), 1);
    assert_string_equal(err, "");
    unsetenv("TNBC_T_BOOL");
    assert_int_equal(tnbc_env_bool("TNBC_T_BOOL", 0), 0);

    assert_int_equal(get_bool("2", 1, &err), 1);
    assert_string_equal(err, "tnbc: TNBC_T_BOOL=\"2\" is not a boolean (1/0, yes/no, on/off); using 1\n");
    assert_int_equal(get_bool("yess", 0, &err), 0);
    assert_string_equal(err, "tnbc: TNBC_T_BOOL=\"yess\" is not a boolean (1/0, yes/no, on/off); using 0\n");
}

static void test_choice(void **state)
{
    (void)state;
    static const char *const clocks[] = { "tsc", "clock_gettime", NULL };
    const char *err;
    int v;

    setenv("TNBC_T_CHOICE", "clock_gettime", 1);
    assert_int_equal(tnbc_env_choice("TNBC_T_CHOICE", clocks, 0), 1);
    setenv("TNBC_T_CHOICE", "TSC", 1);        /* case does not matter */
    assert_int_equal(tnbc_env_choice("TNBC_T_CHOICE", clocks, 1), 0);
    unsetenv("TNBC_T_CHOICE");
    assert_int_equal(tnbc_env_choice("TNBC_T_CHOICE", clocks, 1), 1);

    setenv("TNBC_T_CHOICE", "rdtsc", 1);
    capture_begin();
    v = tnbc_env_choice("TNBC_T_CHOICE", clocks, 0);
    err = capture_end();
    assert_int_equal(v, 0);
    assert_string_equal(err, "tnbc: TNBC_T_CHOICE=\"rdtsc\" is not one of tsc|clock_gettime; using tsc\n");

    setenv("TNBC_T_CHOICE", "", 1);
    capture_begin();
    v = tnbc_env_choice("TNBC_T_CHOICE", clocks, 1);
    assert_string_equal(capture_end(), "");
    assert_int_equal(v, 1);
}

static void test_str(void **state)
{
    (void)state;
    unsetenv("TNBC_T_STR");
    assert_string_equal(tnbc_env_str("TNBC_T_STR", "dflt"), "dflt");
    setenv("TNBC_T_STR", "", 1);
    assert_string_equal(tnbc_env_str("TNBC_T_STR", "dflt"), "dflt");
    assert_null(tnbc_env_str("TNBC_T_STR", NULL));
    setenv("TNBC_T_STR", "/tmp/x y", 1);
    assert_string_equal(tnbc_env_str("TNBC_T_STR", "dflt"), "/tmp/x y");
}

static void test_warn_prefix_and_once(void **state)
{
    (void)state;
    static int flag;
    capture_begin();
    tnbc_warn("plain %d", 1);
    tnbc_set_log_rank(3);
    tnbc_warn("ranked %s", "x");
    tnbc_warn_once(flag, "once %d", 1);
    tnbc_warn_once(flag, "once %d", 2);
    assert_string_equal(capture_end(), "tnbc: plain 1\ntnbc[3]: ranked x\ntnbc[3]: once 1\n");
    assert_int_equal(flag, 1);
}

/* A message longer than the internal buffer is cut, but is still one line. */
static void test_warn_long_message(void **state)
{
    (void)state;
    char big[2000];
    const char *err;
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    capture_begin();
    tnbc_warn("%s", big);
    err = capture_end();
    assert_int_equal(lines(err), 1);
    assert_true(strlen(err) <= 512);
    assert_int_equal(err[strlen(err) - 1], '\n');
    assert_int_equal(strncmp(err, "tnbc: aaaa", 10), 0);
}

/* A value with a line break in it must not break the one-line rule. */
static void test_warning_is_one_line(void **state)
{
    (void)state;
    const char *err;
    assert_int_equal(get_long("1\nTNBC_FAKE=2", 8, 0, 100, &err), 8);
    if (lines(err) != 1)
        fail_msg("a bad value containing a newline gave a %d-line warning: [%s]", lines(err), err);
}

#define T(f) cmocka_unit_test_setup(f, reset)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_long_good),
        T(test_long_bad),
        T(test_double),
        T(test_bool),
        T(test_choice),
        T(test_str),
        T(test_warn_prefix_and_once),
        T(test_warn_long_message),
        T(test_warning_is_one_line),
    };
    return cmocka_run_group_tests_name("config", tests, NULL, NULL);
}
