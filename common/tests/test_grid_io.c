#include <criterion/criterion.h>
#include <dirent.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "labkit/grid_io.h"
#include "labkit/md5.h"
#include "labkit/rng.h"
#include "labkit/testing.h"

TestSuite(grid_io, .init = lk_tmpdir_make, .fini = lk_tmpdir_remove);

/*
 * A failure must return -1 with a message that starts with `path:line:` (the location) and
 * contains the key phrase, so a vague message fails the test.
 */
#define ASSERT_FAILS_AT(rc, err, path, line, phrase)                                          \
    do {                                                                                      \
        char pre_[600];                                                                       \
        snprintf(pre_, sizeof pre_, "%s:%d:", (path), (line));                                \
        cr_assert_eq((rc), -1, "expected failure (-1), got %d", (rc));                        \
        cr_assert(strncmp((err).msg, pre_, strlen(pre_)) == 0,                                \
                  "message should start with \"%s\": %s", pre_, (err).msg);                   \
        cr_assert_not_null(strstr((err).msg, (phrase)), "message lacks \"%s\": %s", (phrase),  \
                           (err).msg);                                                        \
    } while (0)

/* As ASSERT_FAILS_AT, for failures without a line (open, size of a binary file). */
#define ASSERT_FAILS(rc, err, path, phrase)                                                   \
    do {                                                                                      \
        cr_assert_eq((rc), -1, "expected failure (-1), got %d", (rc));                        \
        cr_assert(strncmp((err).msg, (path), strlen(path)) == 0,                              \
                  "message should start with the path %s: %s", (path), (err).msg);            \
        cr_assert_not_null(strstr((err).msg, (phrase)), "message lacks \"%s\": %s", (phrase),  \
                           (err).msg);                                                        \
    } while (0)

static int same_bits(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

/* Values that stress a text round trip: tiny, huge, signed zero, subnormal, inexact. */
static const double awkward[] = {
    1e-300, -0.0, 0.1, DBL_MAX, -DBL_MAX, DBL_MIN, 4.9406564584124654e-324,
    2.2250738585072009e-308, 1.0 / 3.0, -2.0 / 3.0, 3.141592653589793, 0.0,
    123456789012345678.0, -1e22, 5e-324 * 3, 0.30000000000000004, 1e23, -7.0,
    9007199254740993.0, 2.5e-310, 1.7976931348623155e308, 0.001, -123.456,
    1.0000000000000002,
};
#define NAWK ((int)(sizeof awkward / sizeof awkward[0]))

static const char valid_header[] = "ncols 3\nnrows 2\nxllcorner 0\nyllcorner 0\n"
                                   "cellsize 10\nNODATA_value -9999\n";

/* ======================================= header ========================================= */

Test(grid_io, header_round_trip_bit_exact)
{
    lk_error err;
    lk_grid_header in = {496, 610, 0.1, -0.0, 4.9406564584124654e-324, -DBL_MAX}, out;
    const char *p = lk_tmp_path("h.txt");
    LK_ASSERT_OK(lk_write_header(p, &in, &err), &err);
    LK_ASSERT_OK(lk_read_header(p, &out, &err), &err);
    cr_assert_eq(out.ncols, 496);
    cr_assert_eq(out.nrows, 610);
    cr_assert(same_bits(out.xllcorner, in.xllcorner), "xllcorner %.17g", out.xllcorner);
    cr_assert(same_bits(out.yllcorner, in.yllcorner), "yllcorner %.17g", out.yllcorner);
    cr_assert(same_bits(out.cellsize, in.cellsize), "cellsize %.17g", out.cellsize);
    cr_assert(same_bits(out.nodata, in.nodata), "nodata %.17g", out.nodata);
}

Test(grid_io, header_written_in_course_order_one_key_per_line)
{
    lk_error err;
    lk_grid_header h = {496, 610, 2312345.5, 5112345.25, 10, -9999};
    const char *p = lk_tmp_path("h.txt");
    LK_ASSERT_OK(lk_write_header(p, &h, &err), &err);
    char *text = lk_read_whole(p, NULL);
    cr_assert_str_eq(text, "ncols        496\n"
                           "nrows        610\n"
                           "xllcorner    2312345.5\n"
                           "yllcorner    5112345.25\n"
                           "cellsize     10\n"
                           "NODATA_value -9999\n");
    free(text);
}

Test(grid_io, header_any_order_any_case_tabs_crlf_nodata_optional)
{
    lk_error err;
    lk_grid_header h;
    const char *p = lk_tmp_put("h.txt", "NROWS\t3\r\n\r\nncols    2\r\n\tcellsize\t12.5\r\n"
                                 "yllCorner 5 XLLCORNER -1.25\r\n");
    LK_ASSERT_OK(lk_read_header(p, &h, &err), &err);
    cr_assert_eq(h.ncols, 2);
    cr_assert_eq(h.nrows, 3);
    cr_assert_eq(h.xllcorner, -1.25);
    cr_assert_eq(h.yllcorner, 5.0);
    cr_assert_eq(h.cellsize, 12.5);
    cr_assert_eq(h.nodata, -9999.0, "NODATA_value defaults to -9999, got %g", h.nodata);
}

Test(grid_io, header_center_keys_give_the_corner)
{
    lk_error err;
    lk_grid_header h;
    const char *p = lk_tmp_put("h.txt", "ncols 2 nrows 2 xllcenter 105 yllcenter 205 cellsize 10 "
                                 "nodata_value -1");
    LK_ASSERT_OK(lk_read_header(p, &h, &err), &err);
    cr_assert_eq(h.xllcorner, 100.0);
    cr_assert_eq(h.yllcorner, 200.0);
    cr_assert_eq(h.nodata, -1.0);
}

Test(grid_io, header_error_empty_file)
{
    lk_error err;
    lk_grid_header h;
    const char *p = lk_tmp_put("h.txt", "");
    ASSERT_FAILS_AT(lk_read_header(p, &h, &err), err, p, 1, "file is empty");
    p = lk_tmp_put("ws.txt", "  \n\t\n \n");
    ASSERT_FAILS_AT(lk_read_header(p, &h, &err), err, p, 3, "file is empty (only whitespace)");
}

Test(grid_io, header_error_missing_file)
{
    lk_error err;
    lk_grid_header h;
    const char *p = lk_tmp_path("absent_header.txt");
    ASSERT_FAILS(lk_read_header(p, &h, &err), err, p, "cannot open: No such file or directory");
}

Test(grid_io, header_error_unknown_key_is_named_and_valid_keys_listed)
{
    lk_error err;
    lk_grid_header h;
    const char *p = lk_tmp_put("h.txt", "ncols 3\nnrows 2\nxllcorner 0\nyllcorner 0\n  celsize 10\n");
    ASSERT_FAILS_AT(lk_read_header(p, &h, &err), err, p, 5, "unknown header key 'celsize'");
    cr_assert(strncmp(err.msg + strlen(p), ":5:3:", 5) == 0, "column 3: %s", err.msg);
    cr_assert_not_null(strstr(err.msg, "ncols, nrows, xllcorner (or xllcenter), yllcorner "
                                       "(or yllcenter), cellsize, NODATA_value"),
                       "%s", err.msg);
}

Test(grid_io, header_error_duplicate_key)
{
    lk_error err;
    lk_grid_header h;
    const char *p = lk_tmp_put("h.txt", "ncols 3\nnrows 2\nNCOLS 4\nxllcorner 0\n");
    ASSERT_FAILS_AT(lk_read_header(p, &h, &err), err, p, 3, "duplicate header key 'NCOLS'");
    cr_assert_not_null(strstr(err.msg, "at line 1"), "%s", err.msg);
    /* xllcenter and xllcorner are the same key. */
    p = lk_tmp_put("h2.txt", "xllcorner 0\nxllcenter 5\n");
    ASSERT_FAILS_AT(lk_read_header(p, &h, &err), err, p, 2, "duplicate header key 'xllcenter'");
}

Test(grid_io, header_error_missing_key_is_named)
{
    lk_error err;
    lk_grid_header h;
    const char *p = lk_tmp_put("h.txt", "ncols 3\nnrows 2\nxllcorner 0\nyllcorner 0\nNODATA_value 0\n");
    ASSERT_FAILS_AT(lk_read_header(p, &h, &err), err, p, 5, "header is missing key 'cellsize'");
    p = lk_tmp_put("h2.txt", "ncols 3\ncellsize 2\n");
    ASSERT_FAILS_AT(lk_read_header(p, &h, &err), err, p, 2,
                    "missing keys 'nrows', 'xllcorner', 'yllcorner'");
}

Test(grid_io, header_error_missing_value)
{
    lk_error err;
    lk_grid_header h;
    const char *p = lk_tmp_put("h.txt", "ncols 3\nnrows 2\nxllcorner 0\nyllcorner 0\ncellsize\n");
    ASSERT_FAILS_AT(lk_read_header(p, &h, &err), err, p, 5,
                    "missing value for header key 'cellsize'");
    p = lk_tmp_put("h2.txt", "ncols\nnrows 2\n");
    ASSERT_FAILS_AT(lk_read_header(p, &h, &err), err, p, 1,
                    "missing value for header key 'ncols': found the key 'nrows'");
}

Test(grid_io, header_error_non_numeric_value)
{
    lk_error err;
    lk_grid_header h;
    const char *p = lk_tmp_put("h.txt", "ncols 3\nnrows 2\nxllcorner 12,5\n");
    ASSERT_FAILS_AT(lk_read_header(p, &h, &err), err, p, 3,
                    "the value of header key 'xllcorner' is not a number: found '12,5'");
    cr_assert(strncmp(err.msg + strlen(p), ":3:11:", 6) == 0, "column 11: %s", err.msg);
    p = lk_tmp_put("h2.txt", "ncols abc\n");
    ASSERT_FAILS_AT(lk_read_header(p, &h, &err), err, p, 1, "is not a number: found 'abc'");
    p = lk_tmp_put("h3.txt", "ncols 3 nrows 2 xllcorner 0x10\n");
    ASSERT_FAILS_AT(lk_read_header(p, &h, &err), err, p, 1, "hexadecimal");
    p = lk_tmp_put("h4.txt", "\n\nNODATA_value nan\n");
    ASSERT_FAILS_AT(lk_read_header(p, &h, &err), err, p, 3, "NaN is not allowed");
}

Test(grid_io, header_error_ncols_not_positive_integer)
{
    lk_error err;
    lk_grid_header h;
    const char *bad[] = {"-5", "0", "2.5", "1e3", "+0"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char text[64];
        snprintf(text, sizeof text, "nrows 4\nncols %s\n", bad[i]);
        const char *p = lk_tmp_put("h.txt", text);
        ASSERT_FAILS_AT(lk_read_header(p, &h, &err), err, p, 2,
                        "ncols must be a positive integer");
        cr_assert_not_null(strstr(err.msg, bad[i]), "%s", err.msg);
    }
}

Test(grid_io, header_error_too_large)
{
    lk_error err;
    lk_grid_header h;
    const char *p = lk_tmp_put("h.txt", "ncols 1000001\n");
    ASSERT_FAILS_AT(lk_read_header(p, &h, &err), err, p, 1, "ncols is too large");
    p = lk_tmp_put("h2.txt", "ncols 1000000\nnrows 3000\nxllcorner 0\nyllcorner 0\ncellsize 1\n");
    ASSERT_FAILS_AT(lk_read_header(p, &h, &err), err, p, 2,
                    "3000 x 1000000 = 3000000000 cells is too large");
    p = lk_tmp_put("h3.txt", "nrows 99999999999999999999999\n");
    ASSERT_FAILS_AT(lk_read_header(p, &h, &err), err, p, 1, "nrows is too large");
}

Test(grid_io, header_error_cellsize_not_positive)
{
    lk_error err;
    lk_grid_header h;
    const char *p = lk_tmp_put("h.txt", "ncols 3 nrows 2\ncellsize -10\n");
    ASSERT_FAILS_AT(lk_read_header(p, &h, &err), err, p, 2, "cellsize must be a positive number");
    p = lk_tmp_put("h2.txt", "cellsize 0\n");
    ASSERT_FAILS_AT(lk_read_header(p, &h, &err), err, p, 1, "cellsize must be a positive number");
    p = lk_tmp_put("h3.txt", "cellsize 1e999\n");
    ASSERT_FAILS_AT(lk_read_header(p, &h, &err), err, p, 1, "out of the range of a double");
    p = lk_tmp_put("h4.txt", "cellsize inf\n");
    ASSERT_FAILS_AT(lk_read_header(p, &h, &err), err, p, 1, "infinity is not allowed");
}

Test(grid_io, header_error_extra_tokens_after_header)
{
    lk_error err;
    lk_grid_header h;
    char text[256];
    snprintf(text, sizeof text, "%s1 2 3\n", valid_header);
    const char *p = lk_tmp_put("h.txt", text);
    ASSERT_FAILS_AT(lk_read_header(p, &h, &err), err, p, 7, "extra token '1' after the header");
    p = lk_tmp_put("h2.txt", "ncols 3 nrows 2 xllcorner 0 yllcorner 0 cellsize 1 NODATA_value 0 foo");
    ASSERT_FAILS_AT(lk_read_header(p, &h, &err), err, p, 1, "extra token 'foo' after the header");
}

Test(grid_io, header_failure_leaves_output_untouched)
{
    lk_error err;
    lk_grid_header h = {7, 7, 7, 7, 7, 7};
    const char *p = lk_tmp_put("h.txt", "ncols 3\nnrows 2\nxllcorner 0\n");
    cr_assert_eq(lk_read_header(p, &h, &err), -1);
    cr_assert_eq(h.ncols, 7);
    cr_assert_eq(h.nrows, 7);
}

/* ======================================== body ========================================== */

Test(grid_io, body_round_trip_awkward_doubles_bit_exact)
{
    lk_error err;
    const int rows = 4, cols = NAWK / 4;
    cr_assert_eq(rows * cols, NAWK);
    double got[NAWK];
    const char *p = lk_tmp_path("b.txt");
    LK_ASSERT_OK(lk_write_body(p, awkward, rows, cols, &err), &err);
    LK_ASSERT_OK(lk_read_body(p, rows, cols, got, &err), &err);
    lk_assert_grid_eq(awkward, got, rows, cols, "body round trip");
    cr_assert(signbit(got[1]), "-0.0 lost its sign");
}

Test(grid_io, body_written_as_rows_of_17_digits)
{
    lk_error err;
    const double v[] = {0.1, -0.0, 1, 2, 3, 1e-300};
    const char *p = lk_tmp_path("b.txt");
    LK_ASSERT_OK(lk_write_body(p, v, 2, 3, &err), &err);
    char *text = lk_read_whole(p, NULL);
    cr_assert_str_eq(text, "0.10000000000000001 -0 1\n2 3 1e-300\n");
    free(text);
}

Test(grid_io, body_ignores_blank_lines_crlf_tabs_and_spacing)
{
    lk_error err;
    double v[6];
    const double want[6] = {1, 2, 3, 4, 5, 6};
    const char *texts[] = {"1 2 3\n4 5 6", "1\t2\t3\r\n4\t5\t6\r\n",
                           "\r\n\r\n  1 2 3\r\n\r\n4 5\v6   \r\n\r\n", "1\v2\f3\n4 5 6\n"};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        const char *p = lk_tmp_put("b.txt", texts[i]);
        memset(v, 0, sizeof v);
        LK_ASSERT_OK(lk_read_body(p, 2, 3, v, &err), &err);
        lk_assert_grid_eq(want, v, 2, 3, texts[i]);
    }
}

/* A body of 10 rows of 12 values under a header that says nrows 12, ncols 10. */
static const char *swapped_body(void)
{
    char text[512] = "";
    for (int i = 0; i < 10; i++)
        for (int j = 0; j < 12; j++)
            snprintf(text + strlen(text), sizeof text - strlen(text), j < 11 ? "%d " : "%d\n",
                     i + j);
    return lk_tmp_put("swapped.txt", text);
}

/* The total count alone would accept these as a different grid, so every line is a row. */
Test(grid_io, body_error_row_length_differs_from_ncols)
{
    lk_error err;
    double v[120];
    const char *p = swapped_body();
    ASSERT_FAILS_AT(lk_read_body(p, 12, 10, v, &err), err, p, 1,
                    "row 0 (from 0) has 12 values, the header says ncols = 10");
    cr_assert_not_null(strstr(err.msg, "check that nrows and ncols are not swapped"), "%s",
                       err.msg);
    LK_ASSERT_OK(lk_read_body(p, 10, 12, v, &err), &err);

    /* Ragged rows whose total is right: a long row, then a short one. */
    p = lk_tmp_put("b.txt", "1 2 3\n4 5 6 7 8\n9\n");
    ASSERT_FAILS_AT(lk_read_body(p, 3, 3, v, &err), err, p, 2,
                    "row 1 (from 0) has 5 values, the header says ncols = 3");
    p = lk_tmp_put("b.txt", "1 2 3\n\n4\n5 6 7 8 9\n");
    ASSERT_FAILS_AT(lk_read_body(p, 3, 3, v, &err), err, p, 3,
                    "row 1 (from 0) has 1 value, the header says ncols = 3");
    /* The whole grid on one line, or one value per line. */
    p = lk_tmp_put("b.txt", "1 2 3 4 5 6\n");
    ASSERT_FAILS_AT(lk_read_body(p, 2, 3, v, &err), err, p, 1, "row 0 (from 0) has 6 values");
    p = lk_tmp_put("b.txt", "1\n2\n3\n4\n5\n6\n");
    ASSERT_FAILS_AT(lk_read_body(p, 2, 3, v, &err), err, p, 1, "row 0 (from 0) has 1 value,");
    /* When the total is wrong too, the count is the error and the first bad row a hint. */
    p = lk_tmp_put("b.txt", "1 2 3 4\n5 6 7 8\n9 10 11 12\n");
    ASSERT_FAILS_AT(lk_read_body(p, 3, 3, v, &err), err, p, 3, "extra token '10'");
    cr_assert_not_null(strstr(err.msg, "; line 1: row 0 (from 0) has 4 values"), "%s", err.msg);
    p = lk_tmp_put("b.txt", "1 2\n3 4 5\n");
    ASSERT_FAILS_AT(lk_read_body(p, 2, 3, v, &err), err, p, 2, "after 5 of 6 values");
    cr_assert_not_null(strstr(err.msg, "; line 1: row 0 (from 0) has 2 values"), "%s", err.msg);
}

Test(grid_io, asc_error_row_length_differs_from_ncols)
{
    lk_error err;
    lk_grid_header h;
    lk_grid g = {0};
    char text[256];
    snprintf(text, sizeof text, "%s1 2 3\n4 5\n6\n", valid_header);
    const char *p = lk_tmp_put("g.asc", text);
    ASSERT_FAILS_AT(lk_read_asc(p, &h, &g, &err), err, p, 8,
                    "row 1 (from 0) has 2 values, the header says ncols = 3");
    cr_assert_null(g.data);
}

/* The serial reference must see exactly the doubles the course's atof() produced. */
Test(grid_io, body_values_equal_atof_on_tricky_decimals)
{
    static const char *s[] = {
        "0.1", "0.30000000000000004", "2.2250738585072011e-308", "2.2250738585072012e-308",
        "2.2250738585072014e-308", "4.9406564584124654e-324", "2.4703282292062328e-324",
        "2.4703282292062327e-324", "1e-400", "1.7976931348623157e308",
        "1.7976931348623158e308", "9007199254740993", "9007199254740992.5",
        "123456789012345678901234567890",
        "0.1000000000000000055511151231257827021181583404541015625",
        "1.00000000000000011102230246251565404236316680908203125",
        "1.00000000000000011102230246251565404236316680908203126", "7.", ".5", "-0", "-0.0",
        "+3.25", "1E5", "3e+02", "00012", "-12.5", "3e-4", "8.988465674311579e307", "1e23",
        "5e-324", "0000000000000000000000000000000000.000000000000000000000000001e27",
        "-.75e-2", "6.02214076E+23", "1e0000000000000000000000000000000000000000000000000001",
        "9007199254740992", "9007199254740992e22", "9007199254740993e-22", "1e22", "1e-22",
        "1e23", "1e-23", "123456789012345e-22", "4503599627370497.5", "0.000001", "1234.5678",
        "0.000000000000000000000000000000000000000000000000000000000000000000000000000000001",
    };
    const int n = (int)(sizeof s / sizeof s[0]);
    char text[4096] = "";
    for (int i = 0; i < n; i++) {
        strcat(text, s[i]);
        strcat(text, i == n - 1 ? "\n" : " ");
    }
    const char *p = lk_tmp_put("b.txt", text);
    double v[64];
    lk_error err;
    LK_ASSERT_OK(lk_read_body(p, 1, n, v, &err), &err);
    for (int i = 0; i < n; i++)
        cr_assert(same_bits(v[i], atof(s[i])), "'%s': read %a, atof gives %a", s[i], v[i],
                  atof(s[i]));
}

Test(grid_io, body_values_equal_atof_on_random_doubles_in_many_formats)
{
    static const char *fmt[] = {"%.17g", "%.6f", "%.3e", "%.20e", "%g",
                                "%.25g", "%.1f", "%.15g", "%.16g", "%.10f"};
    const int nfmt = (int)(sizeof fmt / sizeof fmt[0]);
    const int n = 3000;
    char *text = malloc((size_t)n * 400), **tok = malloc(n * sizeof *tok);
    double *v = malloc(n * sizeof *v);
    size_t len = 0;
    lk_rng r;
    lk_rng_seed(&r, 2024);
    for (int i = 0; i < n; i++) {
        double x;
        do {
            uint64_t bits = lk_rng_u64(&r);
            if (i % 3 == 0) /* moderate magnitudes, like terrain and thickness values */
                x = (lk_rng_uniform(&r) - 0.5) * 4000.0;
            else
                memcpy(&x, &bits, sizeof x);
        } while (!isfinite(x));
        tok[i] = text + len;
        len += (size_t)sprintf(text + len, fmt[lk_rng_below(&r, nfmt)], x);
        text[len++] = '\0';
    }
    /* Write the tokens as 3 rows; keep them NUL-separated in memory for atof. */
    const char *p = lk_tmp_path("b.txt");
    FILE *f = fopen(p, "wb");
    cr_assert_not_null(f);
    for (int i = 0; i < n; i++)
        fprintf(f, "%s%s", tok[i], (i + 1) % (n / 3) ? " " : "\n");
    cr_assert_eq(fclose(f), 0);
    lk_error err;
    LK_ASSERT_OK(lk_read_body(p, 3, n / 3, v, &err), &err);
    for (int i = 0; i < n; i++)
        cr_assert(same_bits(v[i], atof(tok[i])), "'%s': read %a, atof gives %a", tok[i], v[i],
                  atof(tok[i]));
    free(text);
    free(tok);
    free(v);
}

Test(grid_io, body_error_truncated)
{
    lk_error err;
    double v[6];
    const char *p = lk_tmp_put("b.txt", "1 2 3\n4 5\n");
    ASSERT_FAILS_AT(lk_read_body(p, 2, 3, v, &err), err, p, 2,
                    "file ends at line 2 after 5 of 6 values");
    cr_assert_not_null(strstr(err.msg, "nrows x ncols = 2 x 3 = 6"), "%s", err.msg);
    cr_assert_not_null(strstr(err.msg, "check that the file is complete"), "%s", err.msg);
    /* Without a final newline the file still ends on line 2; trailing blank lines count. */
    p = lk_tmp_put("b2.txt", "1 2 3\n4 5");
    ASSERT_FAILS_AT(lk_read_body(p, 2, 3, v, &err), err, p, 2, "after 5 of 6 values");
    p = lk_tmp_put("b3.txt", "1 2 3\n4 5\n\n\n");
    ASSERT_FAILS_AT(lk_read_body(p, 2, 3, v, &err), err, p, 4,
                    "file ends at line 4 after 5 of 6 values");
}

Test(grid_io, body_error_too_many_values)
{
    lk_error err;
    double v[6];
    const char *p = lk_tmp_put("b.txt", "1 2 3\n4 5 6\n 7 8\n");
    ASSERT_FAILS_AT(lk_read_body(p, 2, 3, v, &err), err, p, 3,
                    "extra token '7' after the 6 expected values");
    cr_assert(strncmp(err.msg + strlen(p), ":3:2:", 5) == 0, "column 2: %s", err.msg);
    cr_assert_not_null(strstr(err.msg, "more values than nrows x ncols = 2 x 3"), "%s", err.msg);
}

Test(grid_io, body_error_non_numeric_token)
{
    lk_error err;
    double v[6];
    const char *p = lk_tmp_put("b.txt", "1 2 3\r\n4 abc 6\r\n");
    ASSERT_FAILS_AT(lk_read_body(p, 2, 3, v, &err), err, p, 2, "is not a number: found 'abc'");
    cr_assert(strncmp(err.msg + strlen(p), ":2:3:", 5) == 0, "column 3: %s", err.msg);
    cr_assert_not_null(strstr(err.msg, "value 5 of 6 (row 1, col 1"), "%s", err.msg);
    /* Things strtod would partly or wholly accept are rejected too. */
    const char *bad[] = {"1e", "1.5.2", "--1", "+", "-", ".", "1,5", "e5", "1e+", "1x", "0x",
                         "1d5"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char text[64];
        snprintf(text, sizeof text, "1 2 3\n4 %s 6\n", bad[i]);
        p = lk_tmp_put("b2.txt", text);
        ASSERT_FAILS_AT(lk_read_body(p, 2, 3, v, &err), err, p, 2, "is not a number");
        cr_assert_not_null(strstr(err.msg, bad[i]), "%s", err.msg);
    }
}

Test(grid_io, body_error_long_and_binary_tokens_are_quoted_safely)
{
    lk_error err;
    double v[2];
    char text[300];
    memset(text, 'z', 200);
    strcpy(text + 200, " 1\n");
    const char *p = lk_tmp_put("b.txt", text);
    ASSERT_FAILS_AT(lk_read_body(p, 1, 2, v, &err), err, p, 1, "...' (200 characters)");
    p = lk_tmp_write("b2.txt", "1 2\0003\n", 6);
    ASSERT_FAILS_AT(lk_read_body(p, 1, 2, v, &err), err, p, 1, "found '2\\x003'");
}

Test(grid_io, body_error_nan_and_infinity)
{
    lk_error err;
    double v[4];
    const char *nan_tokens[] = {"nan", "NaN", "-nan", "nan(0x1)"};
    for (size_t i = 0; i < 4; i++) {
        char text[64];
        snprintf(text, sizeof text, "1 2\n\n3 %s\n", nan_tokens[i]);
        const char *p = lk_tmp_put("b.txt", text);
        ASSERT_FAILS_AT(lk_read_body(p, 2, 2, v, &err), err, p, 3, "NaN is not allowed");
    }
    const char *inf_tokens[] = {"inf", "-Infinity", "+INF"};
    for (size_t i = 0; i < 3; i++) {
        char text[64];
        snprintf(text, sizeof text, "%s 1\n2 3\n", inf_tokens[i]);
        const char *p = lk_tmp_put("b.txt", text);
        ASSERT_FAILS_AT(lk_read_body(p, 2, 2, v, &err), err, p, 1, "infinity is not allowed");
    }
    const char *p = lk_tmp_put("b.txt", "1 2\n3 1e999\n");
    ASSERT_FAILS_AT(lk_read_body(p, 2, 2, v, &err), err, p, 2, "out of the range of a double");
    p = lk_tmp_put("b.txt", "1 2\n3 -1.8e308\n");
    ASSERT_FAILS_AT(lk_read_body(p, 2, 2, v, &err), err, p, 2, "out of the range of a double");
}

Test(grid_io, body_error_hex_float)
{
    lk_error err;
    double v[4];
    const char *p = lk_tmp_put("b.txt", "1 2\n0x1p3 4\n");
    ASSERT_FAILS_AT(lk_read_body(p, 2, 2, v, &err), err, p, 2,
                    "is a hexadecimal float: found '0x1p3'");
    p = lk_tmp_put("b.txt", "1 2\n3 -0X1A\n");
    ASSERT_FAILS_AT(lk_read_body(p, 2, 2, v, &err), err, p, 2, "hexadecimal");
}

Test(grid_io, body_error_empty_file)
{
    lk_error err;
    double v[4];
    const char *p = lk_tmp_put("b.txt", "");
    ASSERT_FAILS_AT(lk_read_body(p, 2, 2, v, &err), err, p, 1, "file is empty");
    cr_assert_not_null(strstr(err.msg, "2 x 2 = 4 values"), "%s", err.msg);
    p = lk_tmp_put("b2.txt", "\n\n");
    ASSERT_FAILS_AT(lk_read_body(p, 2, 2, v, &err), err, p, 2, "after 0 of 4 values");
}

Test(grid_io, body_error_missing_file_and_directory)
{
    lk_error err;
    double v[4];
    const char *p = lk_tmp_path("absent_body.txt");
    ASSERT_FAILS(lk_read_body(p, 2, 2, v, &err), err, p, "cannot open: No such file or directory");
    ASSERT_FAILS(lk_read_body(lk_tmpdir, 2, 2, v, &err), err, lk_tmpdir, "is a directory");
}

Test(grid_io, body_error_line_numbers_count_crlf_lines)
{
    lk_error err;
    double v[9];
    const char *p = lk_tmp_put("b.txt", "1 2 3\r\n4 5 6\r\n7 8 x9\r\n");
    ASSERT_FAILS_AT(lk_read_body(p, 3, 3, v, &err), err, p, 3, "found 'x9'");
    cr_assert(strncmp(err.msg + strlen(p), ":3:5:", 5) == 0, "column 5: %s", err.msg);
}

Test(grid_io, body_error_invalid_dimensions)
{
    lk_error err;
    double v[1];
    const char *p = lk_tmp_put("b.txt", "1\n");
    ASSERT_FAILS(lk_read_body(p, 0, 1, v, &err), err, p, "invalid grid size 0 x 1");
    ASSERT_FAILS(lk_read_body(p, 1, -3, v, &err), err, p, "invalid grid size 1 x -3");
}

/* Files larger than the 4 MiB read chunk: tokens and CRLF pairs straddle chunk edges. */
Test(grid_io, body_larger_than_read_chunk_keeps_values_and_line_numbers)
{
    const int rows = 1000, cols = 700;
    const size_t n = (size_t)rows * cols;
    /* got has room for the extra row that the error cases below claim. */
    double *v = malloc(n * sizeof *v), *got = malloc((n + cols) * sizeof *got);
    lk_rng r;
    lk_rng_seed(&r, 31);
    for (size_t k = 0; k < n; k++)
        v[k] = (lk_rng_uniform(&r) - 0.5) * (k % 3 ? 1e3 : 1e-5);
    const char *p = lk_tmp_path("big.txt");
    FILE *f = fopen(p, "wb");
    cr_assert_not_null(f);
    static const char *sep[] = {" ", "\t", "  "};
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++)
            fprintf(f, "%.17g%s", v[(size_t)i * cols + j],
                    j == cols - 1 ? "\r\n" : sep[(i + j) % 3]);
    cr_assert_eq(fclose(f), 0);
    lk_error err;
    LK_ASSERT_OK(lk_read_body(p, rows, cols, got, &err), &err);
    lk_assert_grid_eq(v, got, rows, cols, "large body");

    /* One bad token on the last line: its line number counts every line before it. */
    f = fopen(p, "ab");
    cr_assert_not_null(f);
    fprintf(f, "1 2 oops\r\n");
    cr_assert_eq(fclose(f), 0);
    ASSERT_FAILS_AT(lk_read_body(p, rows + 1, cols, got, &err), err, p, rows + 1,
                    "found 'oops'");
    cr_assert(strncmp(err.msg + strlen(p), ":1001:5:", 8) == 0, "column 5: %s", err.msg);

    /* A 1 x (n + 1) grid on one line: the column of a late token is its byte offset, across
       chunks. */
    f = fopen(p, "wb");
    cr_assert_not_null(f);
    for (size_t k = 0; k < n; k++)
        fprintf(f, "%.17g ", v[k]);
    long col = ftell(f) + 1;
    fprintf(f, "oops");
    cr_assert_eq(fclose(f), 0);
    ASSERT_FAILS_AT(lk_read_body(p, 1, (int)n + 1, got, &err), err, p, 1, "found 'oops'");
    char where[64];
    snprintf(where, sizeof where, ":1:%ld:", col);
    cr_assert(strncmp(err.msg + strlen(p), where, strlen(where)) == 0, "column %ld: %s", col,
              err.msg);
    free(v);
    free(got);
}

Test(grid_io, body_error_token_longer_than_read_chunk)
{
    const size_t n = (size_t)5 << 20;
    char *big = malloc(n + 3);
    memcpy(big, "1\n", 2);
    memset(big + 2, '9', n);
    big[n + 2] = '\n';
    const char *p = lk_tmp_write("long.txt", big, n + 3);
    free(big);
    lk_error err;
    double v[2];
    ASSERT_FAILS_AT(lk_read_body(p, 1, 2, v, &err), err, p, 2, "token longer than 4194304 bytes");
}

/* ======================================== .asc ========================================== */

Test(grid_io, asc_round_trip_bit_exact)
{
    lk_error err;
    lk_grid_header in = {NAWK / 2, 2, -0.5, 1e-300, 0.1, -9999}, h;
    lk_grid g = {0};
    const char *p = lk_tmp_path("g.asc");
    LK_ASSERT_OK(lk_write_asc(p, &in, awkward, &err), &err);
    LK_ASSERT_OK(lk_read_asc(p, &h, &g, &err), &err);
    cr_assert_eq(g.rows, 2);
    cr_assert_eq(g.cols, NAWK / 2);
    cr_assert_eq(h.nrows, 2);
    cr_assert_eq(h.ncols, NAWK / 2);
    cr_assert(same_bits(h.xllcorner, in.xllcorner) && same_bits(h.yllcorner, in.yllcorner) &&
              same_bits(h.cellsize, in.cellsize) && same_bits(h.nodata, in.nodata));
    lk_assert_grid_eq(awkward, g.data, 2, NAWK / 2, "asc round trip");
    lk_grid_free(&g);
    cr_assert_null(g.data);
    cr_assert_eq(g.rows, 0);
}

Test(grid_io, asc_standard_file_crlf_and_no_nodata)
{
    lk_error err;
    lk_grid_header h;
    lk_grid g = {0};
    const char *p = lk_tmp_put("g.asc", "NCOLS 3\r\nNROWS 2\r\nXLLCENTER 5\r\nYLLCENTER 5\r\n"
                                 "CELLSIZE 10\r\n1.5 2.5 3.5\r\n\t-4 5e1 .25\r\n");
    LK_ASSERT_OK(lk_read_asc(p, &h, &g, &err), &err);
    const double want[] = {1.5, 2.5, 3.5, -4, 50, 0.25};
    lk_assert_grid_eq(want, g.data, 2, 3, "asc values");
    cr_assert_eq(h.xllcorner, 0.0);
    cr_assert_eq(h.nodata, -9999.0);
    lk_grid_free(&g);
}

Test(grid_io, asc_error_missing_keys_where_body_starts)
{
    lk_error err;
    lk_grid_header h;
    lk_grid g = {0};
    const char *p = lk_tmp_put("g.asc", "ncols 2\nnrows 2\n1 2\n3 4\n");
    ASSERT_FAILS_AT(lk_read_asc(p, &h, &g, &err), err, p, 3,
                    "header is missing keys 'xllcorner', 'yllcorner', 'cellsize'");
    cr_assert_null(g.data);
}

Test(grid_io, asc_error_truncated_body_frees_and_leaves_grid_untouched)
{
    lk_error err;
    lk_grid_header h = {0};
    lk_grid g = {0};
    char text[256];
    snprintf(text, sizeof text, "%s1 2 3\n4 5\n", valid_header);
    const char *p = lk_tmp_put("g.asc", text);
    ASSERT_FAILS_AT(lk_read_asc(p, &h, &g, &err), err, p, 8, "after 5 of 6 values");
    cr_assert_null(g.data);
    cr_assert_eq(g.rows, 0);
    cr_assert_eq(h.ncols, 0, "header must not be half-returned");
    /* A header that claims a huge grid fails on the short body without a huge allocation. */
    p = lk_tmp_put("g2.asc", "ncols 1000000\nnrows 2000\nxllcorner 0\nyllcorner 0\ncellsize 1\n1 2\n");
    ASSERT_FAILS_AT(lk_read_asc(p, &h, &g, &err), err, p, 6,
                    "after 2 of 2000000000 values");
    cr_assert_null(g.data);
}

Test(grid_io, asc_error_number_where_key_expected_and_body_errors)
{
    lk_error err;
    lk_grid_header h;
    lk_grid g = {0};
    const char *p = lk_tmp_put("g.asc", "ncols 3 7\nnrows 2\n");
    ASSERT_FAILS_AT(lk_read_asc(p, &h, &g, &err), err, p, 1,
                    "found the number '7' where a header key was expected");
    char text[256];
    snprintf(text, sizeof text, "%s1 2 3\nnan 5 6\n", valid_header);
    p = lk_tmp_put("g2.asc", text);
    ASSERT_FAILS_AT(lk_read_asc(p, &h, &g, &err), err, p, 8, "NaN is not allowed");
    snprintf(text, sizeof text, "%s1 2 3\n4 5 6 7\n", valid_header);
    p = lk_tmp_put("g3.asc", text);
    ASSERT_FAILS_AT(lk_read_asc(p, &h, &g, &err), err, p, 8, "extra token '7'");
    p = lk_tmp_put("g4.asc", "ncols 3\nnrows 2\nxllcorner 0\nyllcorner 0\ncelsize 10\n1 2 3 4 5 6\n");
    ASSERT_FAILS_AT(lk_read_asc(p, &h, &g, &err), err, p, 5, "unknown header key 'celsize'");
    p = lk_tmp_put("g5.asc", "");
    ASSERT_FAILS_AT(lk_read_asc(p, &h, &g, &err), err, p, 1, "file is empty");
    p = lk_tmp_put("g6.asc", valid_header);
    ASSERT_FAILS_AT(lk_read_asc(p, &h, &g, &err), err, p, 6, "after 0 of 6 values");
    cr_assert_null(g.data);
}

/* ====================================== writers ========================================= */

/* Exactly the course's saveGrid2Dr: "%f" then two spaces per value, "\n" per row. */
Test(grid_io, course_text_exact_bytes)
{
    lk_error err;
    const double v[] = {1.0, 2.5, -0.000001, 0.0, -0.0, 123456.25, 5e-7, -2.0000005, 1e6};
    const char *p = lk_tmp_path("out.txt");
    LK_ASSERT_OK(lk_write_course_text(p, v, 3, 3, &err), &err);
    size_t n;
    char *text = lk_read_whole(p, &n);
    const char *want = "1.000000  2.500000  -0.000001  \n"
                       "0.000000  -0.000000  123456.250000  \n"
                       "0.000000  -2.000001  1000000.000000  \n";
    cr_assert_str_eq(text, want);
    cr_assert_eq(n, strlen(want));
    free(text);
    /* The md5 without a file is the md5 of those very bytes. */
    char a[33], b[33];
    LK_ASSERT_OK(lk_course_text_md5(v, 3, 3, a, &err), &err);
    LK_ASSERT_OK(lk_md5_buffer(want, strlen(want), b, &err), &err);
    cr_assert_str_eq(a, b);
}

Test(grid_io, course_text_md5_equals_md5_of_written_file)
{
    /* The Tessina size, enough to cross many buffer flushes; huge values test long lines. */
    const int rows = 610, cols = 496;
    double *v = malloc((size_t)rows * cols * sizeof *v);
    lk_rng r;
    lk_rng_seed(&r, 77);
    for (int k = 0; k < rows * cols; k++)
        v[k] = (lk_rng_uniform(&r) - 0.3) * (k % 97 == 0 ? 1e300 : 50.0);
    v[5] = -DBL_MAX;
    lk_error err;
    const char *p = lk_tmp_path("out.txt");
    LK_ASSERT_OK(lk_write_course_text(p, v, rows, cols, &err), &err);
    char from_file[33], streamed[33];
    LK_ASSERT_OK(lk_md5_file(p, from_file, &err), &err);
    LK_ASSERT_OK(lk_course_text_md5(v, rows, cols, streamed, &err), &err);
    cr_assert_str_eq(streamed, from_file);
    free(v);
}

Test(grid_io, binary_round_trip_is_little_endian_and_bit_exact)
{
    lk_error err;
    double in[NAWK + 3], out[NAWK + 3];
    memcpy(in, awkward, sizeof awkward);
    uint64_t payload_nan = 0x7ff80000deadbeefULL;
    memcpy(&in[NAWK], &payload_nan, 8);
    in[NAWK + 1] = INFINITY;
    in[NAWK + 2] = 1.0;
    const char *p = lk_tmp_path("g.bin");
    LK_ASSERT_OK(lk_write_binary(p, in, NAWK + 3, &err), &err);
    LK_ASSERT_OK(lk_read_binary(p, out, NAWK + 3, &err), &err);
    cr_assert(memcmp(in, out, sizeof in) == 0, "binary round trip changed bits");
    size_t n;
    unsigned char *bytes = (unsigned char *)lk_read_whole(p, &n);
    cr_assert_eq(n, sizeof in);
    const unsigned char one[8] = {0, 0, 0, 0, 0, 0, 0xf0, 0x3f};
    cr_assert(memcmp(bytes + 8 * (NAWK + 2), one, 8) == 0, "1.0 is not little-endian");
    const unsigned char nan_le[8] = {0xef, 0xbe, 0xad, 0xde, 0, 0, 0xf8, 0x7f};
    cr_assert(memcmp(bytes + 8 * NAWK, nan_le, 8) == 0, "NaN payload not little-endian");
    free(bytes);
}

Test(grid_io, binary_md5_equals_md5_of_written_file)
{
    lk_error err;
    const size_t n = 20000; /* more than one 64 KiB buffer */
    double *v = malloc(n * sizeof *v);
    for (size_t k = 0; k < n; k++)
        v[k] = (double)k * 0.37 - 1000.0;
    const char *p = lk_tmp_path("g.bin");
    LK_ASSERT_OK(lk_write_binary(p, v, n, &err), &err);
    char a[33], b[33];
    LK_ASSERT_OK(lk_md5_file(p, a, &err), &err);
    LK_ASSERT_OK(lk_binary_md5(v, n, b, &err), &err);
    cr_assert_str_eq(a, b);
    free(v);
    /* And against literal bytes. */
    const double two[2] = {1.0, -2.0};
    const unsigned char le[16] = {0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 0, 0, 0, 0, 0, 0, 0, 0xc0};
    LK_ASSERT_OK(lk_binary_md5(two, 2, a, &err), &err);
    LK_ASSERT_OK(lk_md5_buffer(le, 16, b, &err), &err);
    cr_assert_str_eq(a, b);
}

Test(grid_io, binary_error_size_mismatch)
{
    lk_error err;
    double v[4];
    const char *p = lk_tmp_write("g.bin", "0123456701234567012345670", 24);
    ASSERT_FAILS(lk_read_binary(p, v, 4, &err), err, p, "file holds 24 bytes (3 doubles)");
    cr_assert_not_null(strstr(err.msg, "expected 4 doubles x 8 = 32 bytes"), "%s", err.msg);
    p = lk_tmp_write("g2.bin", "0123456701234567012345670", 25);
    ASSERT_FAILS(lk_read_binary(p, v, 3, &err), err, p, "not a whole number of doubles");
    p = lk_tmp_path("absent.bin");
    ASSERT_FAILS(lk_read_binary(p, v, 3, &err), err, p, "No such file or directory");
}

Test(grid_io, writers_report_missing_directory)
{
    lk_error err;
    const double v[4] = {1, 2, 3, 4};
    lk_grid_header h = {2, 2, 0, 0, 1, -9999};
    const char *p = lk_tmp_path("no_such_dir/out.txt");
    const char *phrase = "cannot create file: No such file or directory";
    ASSERT_FAILS(lk_write_body(p, v, 2, 2, &err), err, p, phrase);
    ASSERT_FAILS(lk_write_header(p, &h, &err), err, p, phrase);
    ASSERT_FAILS(lk_write_asc(p, &h, v, &err), err, p, phrase);
    ASSERT_FAILS(lk_write_course_text(p, v, 2, 2, &err), err, p, phrase);
    ASSERT_FAILS(lk_write_binary(p, v, 4, &err), err, p, phrase);
}

/* /dev/full accepts the open and fails the write: the disk-full path through flush/close. */
Test(grid_io, writers_report_disk_full)
{
    if (access("/dev/full", W_OK) != 0)
        cr_skip_test("no writable /dev/full on this system");
    lk_error err;
    const double v[4] = {1, 2, 3, 4};
    lk_grid_header h = {2, 2, 0, 0, 1, -9999};
    const char *p = "/dev/full", *phrase = "No space left on device";
    ASSERT_FAILS(lk_write_body(p, v, 2, 2, &err), err, p, phrase);
    ASSERT_FAILS(lk_write_header(p, &h, &err), err, p, phrase);
    ASSERT_FAILS(lk_write_asc(p, &h, v, &err), err, p, phrase);
    ASSERT_FAILS(lk_write_course_text(p, v, 2, 2, &err), err, p, phrase);
    ASSERT_FAILS(lk_write_binary(p, v, 4, &err), err, p, phrase);
}

Test(grid_io, write_body_refuses_values_it_could_not_read_back)
{
    lk_error err;
    const double v[4] = {1, 2, NAN, 4};
    const char *p = lk_tmp_path("b.txt");
    ASSERT_FAILS(lk_write_body(p, v, 2, 2, &err), err, p, "row 1, col 0");
    cr_assert_not_null(strstr(err.msg, "NaN"), "%s", err.msg);
    cr_assert_neq(access(p, F_OK), 0, "no file should be created");
    lk_grid_header h = {2, 2, 0, 0, 0, -9999};
    ASSERT_FAILS(lk_write_header(p, &h, &err), err, p, "cellsize positive");
}

Test(grid_io, grid_alloc_and_free)
{
    lk_error err;
    lk_grid g = {0};
    LK_ASSERT_OK(lk_grid_alloc(&g, 3, 4, &err), &err);
    cr_assert_eq(g.rows, 3);
    cr_assert_eq(g.cols, 4);
    for (int k = 0; k < 12; k++)
        cr_assert(same_bits(g.data[k], 0.0));
    lk_grid_free(&g);
    cr_assert_null(g.data);
    lk_grid_free(&g); /* safe twice */
    cr_assert_eq(lk_grid_alloc(&g, 0, 4, &err), -1);
    cr_assert_not_null(strstr(err.msg, "invalid grid size 0 x 4"), "%s", err.msg);
    cr_assert_eq(lk_grid_alloc(&g, 100000, 100000, &err), -1);
    cr_assert_not_null(strstr(err.msg, "at most 2147483647"), "%s", err.msg);
}
