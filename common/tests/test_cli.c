#include <criterion/criterion.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "labkit/cli.h"

/* strstr as a truth value, so that assertions read the same in either Criterion API. */
static int contains(const char *s, const char *sub) { return strstr(s, sub) != NULL; }

/* Every rejection must name the option and quote the value, and must not touch the output. */
static void assert_names(const lk_error *err, const char *opt, const char *s)
{
    size_t n = strlen(opt);
    cr_assert(strncmp(err->msg, opt, n) == 0 && strncmp(err->msg + n, ": ", 2) == 0,
              "message should start with '%s: ': %s", opt, err->msg);
    if (s && s[0]) {
        /* Control characters are shown escaped so that the message stays on one line. */
        char quoted[256];
        size_t k = 0;
        quoted[k++] = '\'';
        for (const char *c = s; *c; c++) {
            if (*c == '\n' || *c == '\t') {
                quoted[k++] = '\\';
                quoted[k++] = *c == '\n' ? 'n' : 't';
            } else {
                quoted[k++] = *c;
            }
        }
        quoted[k++] = '\'';
        quoted[k] = '\0';
        cr_assert(contains(err->msg, quoted), "message should quote the value %s: %s", quoted,
                  err->msg);
    } else {
        cr_assert(contains(err->msg, "no value given"), "got: %s", err->msg);
    }
    cr_assert_null(strchr(err->msg, '\n'), "one line expected: %s", err->msg);
}

/* ---- lk_parse_long / lk_parse_int ---- */

Test(cli, long_accepts)
{
    static const struct {
        const char *s;
        long min, max, want;
    } ok[] = {
        {"0", 0, 1000000, 0},
        {"1000000", 0, 1000000, 1000000},
        {"42", 0, 1000000, 42},
        {"007", 0, 1000000, 7}, /* decimal, not octal */
        {"+5", 0, 10, 5},
        {"-3", -10, 10, -3},
        {"9223372036854775807", LONG_MIN, LONG_MAX, LONG_MAX},
        {"-9223372036854775808", LONG_MIN, LONG_MAX, LONG_MIN},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        lk_error err = {{0}};
        long v = -12345;
        cr_assert_eq(lk_parse_long("--steps", ok[i].s, ok[i].min, ok[i].max, &v, &err), 0,
                     "'%s' rejected: %s", ok[i].s, err.msg);
        cr_assert_eq(v, ok[i].want, "'%s' gave %ld", ok[i].s, v);
    }
}

Test(cli, long_rejects)
{
    static const struct {
        const char *s;
        const char *why; /* a word the message must contain */
    } bad[] = {
        {NULL, "no value"},
        {"", "no value"},
        {"abc", "not an integer"},
        {"12x", "not an integer"},
        {"x12", "not an integer"},
        {" 12", "not an integer"},
        {"\t12", "not an integer"},
        {"12 ", "not an integer"},
        {"12\n", "not an integer"},
        {"1.5", "not an integer"},
        {"1e3", "not an integer"},
        {"0x10", "not an integer"},
        {"-", "not an integer"},
        {"+", "not an integer"},
        {"--5", "not an integer"},
        {"-1", "out of range"},
        {"1000001", "out of range"},
        {"99999999999999999999999", "out of range"},
        {"-99999999999999999999999", "out of range"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        lk_error err = {{0}};
        long v = -12345;
        cr_assert_eq(lk_parse_long("--steps", bad[i].s, 0, 1000000, &v, &err), -1,
                     "'%s' accepted as %ld", bad[i].s ? bad[i].s : "(null)", v);
        cr_assert_eq(v, -12345, "output changed on rejection of '%s'", bad[i].s);
        assert_names(&err, "--steps", bad[i].s);
        cr_assert(contains(err.msg, bad[i].why), "'%s': expected '%s' in: %s", bad[i].s,
                  bad[i].why, err.msg);
        cr_assert(contains(err.msg, "between 0 and 1000000"), "range missing: %s", err.msg);
    }
}

Test(cli, long_message_exact)
{
    lk_error err = {{0}};
    long v;
    cr_assert_eq(lk_parse_long("--steps", "abc", 0, 1000000, &v, &err), -1);
    cr_assert_str_eq(err.msg,
                     "--steps: 'abc' is not an integer: give a whole number between 0 and 1000000");
    cr_assert_eq(lk_parse_long("--steps", "2000000", 0, 1000000, &v, &err), -1);
    cr_assert_str_eq(err.msg, "--steps: '2000000' is out of range: give a whole number between 0 "
                              "and 1000000");
}

Test(cli, value_shown_escaped_and_cut)
{
    lk_error err = {{0}};
    long v;
    cr_assert_eq(lk_parse_long("--steps", "1\r\x01", 0, 10, &v, &err), -1);
    cr_assert(contains(err.msg, "'1\\x0d\\x01'"), "control bytes not escaped: %s", err.msg);
    char big[2000];
    memset(big, '7', sizeof big - 2);
    big[sizeof big - 2] = 'z';
    big[sizeof big - 1] = '\0';
    cr_assert_eq(lk_parse_long("--steps", big, 0, 10, &v, &err), -1);
    cr_assert(contains(err.msg, "...' is not an integer: give a whole number between 0 and 10"),
              "long value should be cut, keeping what to do: %s", err.msg);
}

Test(cli, long_null_error_is_allowed)
{
    long v = 7;
    cr_assert_eq(lk_parse_long("--steps", "x", 0, 10, &v, NULL), -1);
    cr_assert_eq(v, 7);
}

Test(cli, int_range_edges)
{
    lk_error err = {{0}};
    int v = 0;
    cr_assert_eq(lk_parse_int("--n", "2147483647", INT_MIN, INT_MAX, &v, &err), 0, "%s", err.msg);
    cr_assert_eq(v, INT_MAX);
    cr_assert_eq(lk_parse_int("--n", "-2147483648", INT_MIN, INT_MAX, &v, &err), 0, "%s", err.msg);
    cr_assert_eq(v, INT_MIN);
    v = 99;
    cr_assert_eq(lk_parse_int("--n", "2147483648", INT_MIN, INT_MAX, &v, &err), -1);
    cr_assert_eq(v, 99);
    assert_names(&err, "--n", "2147483648");
    cr_assert(contains(err.msg, "out of range"), "%s", err.msg);
    cr_assert_eq(lk_parse_int("--repeat", "0", 1, 100, &v, &err), -1);
    assert_names(&err, "--repeat", "0");
    cr_assert(contains(err.msg, "between 1 and 100"), "%s", err.msg);
    cr_assert_eq(lk_parse_int("--repeat", "4q", 1, 100, &v, &err), -1);
    assert_names(&err, "--repeat", "4q");
    cr_assert_eq(lk_parse_int("--repeat", "100", 1, 100, &v, &err), 0, "%s", err.msg);
    cr_assert_eq(v, 100);
}

/* ---- lk_parse_double ---- */

Test(cli, double_accepts)
{
    static const struct {
        const char *s;
        double want;
    } ok[] = {
        {"0", 0.0},       {"0.5", 0.5},   {".5", 0.5},       {"5.", 5.0},  {"-2", -2.0},
        {"1e-3", 1e-3},   {"1E3", 1e3},   {"+0.25", 0.25},   {"100", 100}, {"-100", -100},
        {"1e-310", 1e-310}, /* subnormal: representable, kept */
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        lk_error err = {{0}};
        double v = -1;
        cr_assert_eq(lk_parse_double("--tol", ok[i].s, -100, 1000, &v, &err), 0,
                     "'%s' rejected: %s", ok[i].s, err.msg);
        cr_assert_eq(v, ok[i].want, "'%s' gave %.17g", ok[i].s, v);
    }
}

Test(cli, double_rejects)
{
    static const struct {
        const char *s;
        const char *why;
    } bad[] = {
        {NULL, "no value"},
        {"", "no value"},
        {"abc", "not a number"},
        {"1.5x", "not a number"},
        {" 1", "not a number"},
        {"1 ", "not a number"},
        {"1,5", "not a number"},
        {"e5", "not a number"},
        {"-", "not a number"},
        {"nan", "not a finite number"},
        {"NaN", "not a finite number"},
        {"inf", "not a finite number"},
        {"-inf", "not a finite number"},
        {"infinity", "not a finite number"},
        {"1e999", "out of range"},
        {"-1e999", "out of range"},
        {"1e-400", "out of range"}, /* underflows to 0: not what was written */
        {"1000.5", "out of range"},
        {"-100.5", "out of range"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        lk_error err = {{0}};
        double v = 42;
        cr_assert_eq(lk_parse_double("--tol", bad[i].s, -100, 1000, &v, &err), -1,
                     "'%s' accepted as %g", bad[i].s ? bad[i].s : "(null)", v);
        cr_assert_eq(v, 42, "output changed on rejection of '%s'", bad[i].s);
        assert_names(&err, "--tol", bad[i].s);
        cr_assert(contains(err.msg, bad[i].why), "'%s': expected '%s' in: %s", bad[i].s,
                  bad[i].why, err.msg);
        cr_assert(contains(err.msg, "between -100 and 1000"), "range missing: %s", err.msg);
    }
}

/* ---- lk_parse_dims ---- */

Test(cli, dims_accepts)
{
    static const struct {
        const char *s;
        int w, h;
    } ok[] = {
        {"32x8", 32, 8}, {"32X8", 32, 8}, {"1x1", 1, 1}, {"1024x1", 1024, 1},
        {"1x1024", 1, 1024}, {"016x04", 16, 4},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        lk_error err = {{0}};
        int w = -1, h = -1;
        cr_assert_eq(lk_parse_dims("--block", ok[i].s, 1024, &w, &h, &err), 0,
                     "'%s' rejected: %s", ok[i].s, err.msg);
        cr_assert(w == ok[i].w && h == ok[i].h, "'%s' gave %dx%d", ok[i].s, w, h);
    }
}

Test(cli, dims_rejects)
{
    static const struct {
        const char *s;
        const char *why;
    } bad[] = {
        {NULL, "no value"},
        {"", "no value"},
        {"32x", "not WIDTHxHEIGHT"},
        {"x8", "not WIDTHxHEIGHT"},
        {"32", "not WIDTHxHEIGHT"},
        {"32x8x2", "not WIDTHxHEIGHT"},
        {"-1x8", "not WIDTHxHEIGHT"},
        {"32x-1", "not WIDTHxHEIGHT"},
        {"+32x8", "not WIDTHxHEIGHT"},
        {"32x+8", "not WIDTHxHEIGHT"},
        {"32*8", "not WIDTHxHEIGHT"},
        {"32 x8", "not WIDTHxHEIGHT"},
        {"32x 8", "not WIDTHxHEIGHT"},
        {" 32x8", "not WIDTHxHEIGHT"},
        {"32x8 ", "not WIDTHxHEIGHT"},
        {"32x8\n", "not WIDTHxHEIGHT"},
        {"3.5x8", "not WIDTHxHEIGHT"},
        {"axb", "not WIDTHxHEIGHT"},
        {"0x8", "out of range"},
        {"32x0", "out of range"},
        {"2000x8", "out of range"},
        {"8x1025", "out of range"},
        {"99999999999999999999x8", "out of range"},
        {"8x99999999999999999999", "out of range"},
        {"4294967328x8", "out of range"}, /* 2^32 + 32: must not wrap to 32 */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        lk_error err = {{0}};
        int w = -7, h = -7;
        cr_assert_eq(lk_parse_dims("--block", bad[i].s, 1024, &w, &h, &err), -1,
                     "'%s' accepted as %dx%d", bad[i].s ? bad[i].s : "(null)", w, h);
        cr_assert(w == -7 && h == -7, "output changed on rejection of '%s'", bad[i].s);
        assert_names(&err, "--block", bad[i].s);
        cr_assert(contains(err.msg, bad[i].why), "'%s': expected '%s' in: %s", bad[i].s,
                  bad[i].why, err.msg);
        cr_assert(contains(err.msg, "between 1 and 1024"), "limit missing: %s", err.msg);
    }
}

/* ---- lk_parse_seed ---- */

Test(cli, seed_accepts)
{
    static const struct {
        const char *s;
        unsigned long long want;
    } ok[] = {
        {"0", 0},
        {"42", 42},
        {"007", 7}, /* decimal, not octal */
        {"18446744073709551615", 18446744073709551615ULL},
        {"0xffffffffffffffff", 0xffffffffffffffffULL},
        {"0XDEADBEEF", 0xdeadbeefULL},
        {"0x0", 0},
        {"0x00000000000000001", 1},
        {"0xAbC", 0xabc},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        lk_error err = {{0}};
        unsigned long long v = 5;
        cr_assert_eq(lk_parse_seed("--seed", ok[i].s, &v, &err), 0, "'%s' rejected: %s",
                     ok[i].s, err.msg);
        cr_assert_eq(v, ok[i].want, "'%s' gave %llu", ok[i].s, v);
    }
}

Test(cli, seed_rejects)
{
    static const struct {
        const char *s;
        const char *why;
    } bad[] = {
        {NULL, "no value"},
        {"", "no value"},
        {"-1", "not a seed"}, /* strtoull would wrap it to 2^64-1 */
        {"+1", "not a seed"},
        {" 1", "not a seed"},
        {"1 ", "not a seed"},
        {"1.0", "not a seed"},
        {"12a", "not a seed"},
        {"0x", "not a seed"},
        {"0xg", "not a seed"},
        {"0x-1", "not a seed"},
        {"0x 1", "not a seed"},
        {"x10", "not a seed"},
        {"1e5", "not a seed"},
        {"18446744073709551616", "out of range"},
        {"99999999999999999999999", "out of range"},
        {"0x10000000000000000", "out of range"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        lk_error err = {{0}};
        unsigned long long v = 5;
        cr_assert_eq(lk_parse_seed("--seed", bad[i].s, &v, &err), -1, "'%s' accepted as %llu",
                     bad[i].s ? bad[i].s : "(null)", v);
        cr_assert_eq(v, 5, "output changed on rejection of '%s'", bad[i].s);
        assert_names(&err, "--seed", bad[i].s);
        cr_assert(contains(err.msg, bad[i].why), "'%s': expected '%s' in: %s", bad[i].s,
                  bad[i].why, err.msg);
        cr_assert(contains(err.msg, "18446744073709551615"), "range missing: %s", err.msg);
    }
}
