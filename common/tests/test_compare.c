#include <math.h>
#include <stdint.h>
#include <string.h>

#include "labkit/testing.h"

static double *grid(int n, double v)
{
    double *g = malloc((size_t)n * sizeof *g);
    cr_assert_not_null(g);
    for (int i = 0; i < n; i++)
        g[i] = v + i * 0.25;
    return g;
}

static uint64_t bits_of(double v)
{
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    return b;
}

Test(compare, poison_writes_the_exact_bits_and_is_recognised)
{
    double v[5] = {0, 1, 2, 3, 4};
    lk_poison(v + 1, 3);
    cr_assert_eq(v[0], 0.0);
    cr_assert_eq(v[4], 4.0);
    for (int i = 1; i < 4; i++) {
        cr_assert_eq(bits_of(v[i]), LK_POISON_BITS);
        cr_assert(lk_is_poison(v[i]));
        cr_assert(isnan(v[i]));
    }
    /* Another NaN is not the poison: only the exact pattern means "never written". */
    cr_assert_not(lk_is_poison(NAN));
    cr_assert_not(lk_is_poison(0.0));
    uint64_t near = LK_POISON_BITS ^ 1;
    double d;
    memcpy(&d, &near, sizeof d);
    cr_assert_not(lk_is_poison(d));
}

Test(compare, identical_grids_have_no_difference)
{
    double *a = grid(35, 1.0), *b = grid(35, 1.0);
    a[3] = b[3] = NAN; /* the same NaN bits are equal */
    lk_compare c;
    cr_assert_eq(lk_compare_grids(a, b, 5, 7, 8, &c), 0);
    cr_assert_eq(c.ndiff, 0);
    cr_assert_eq(c.nfirst, 0);
    cr_assert_eq(c.max_abs, 0.0);
    cr_assert_eq(c.max_rel, 0.0);
    cr_assert_eq(c.max_row, -1);
    cr_assert_eq(c.max_col, -1);
    cr_assert_eq(c.nnan, 0);
    cr_assert_eq(c.npoison, 0);
    char buf[256];
    lk_compare_format(buf, sizeof buf, &c, 5, 7, "thickness h");
    cr_assert(strstr(buf, "thickness h: all 35 cells identical"), "got: %s", buf);
    free(a);
    free(b);
}

Test(compare, one_differing_cell_is_located_exactly)
{
    double *a = grid(12, 2.0), *b = grid(12, 2.0);
    /* Cell (1, 2) of a 3 x 4 grid. */
    a[6] = 0.1;
    b[6] = 0.10000000000000003;
    lk_compare c;
    cr_assert_eq(lk_compare_grids(a, b, 3, 4, 4, &c), 1);
    cr_assert_eq(c.ndiff, 1);
    cr_assert_eq(c.nfirst, 1);
    cr_assert_eq(c.first[0].row, 1);
    cr_assert_eq(c.first[0].col, 2);
    cr_assert_eq(bits_of(c.first[0].expected), bits_of(0.1));
    cr_assert_eq(bits_of(c.first[0].got), bits_of(0.10000000000000003));
    cr_assert_eq(c.max_abs, fabs(0.10000000000000003 - 0.1));
    cr_assert_eq(c.max_rel, fabs(0.10000000000000003 - 0.1) / 0.1);
    cr_assert_eq(c.max_row, 1);
    cr_assert_eq(c.max_col, 2);
    cr_assert_eq(c.nnan, 0);
    cr_assert_eq(c.npoison, 0);
    char buf[1024];
    lk_compare_format(buf, sizeof buf, &c, 3, 4, "h");
    cr_assert(strstr(buf, "h: 1 of 12 cells differs (3 x 4 grid)\n"), "got: %s", buf);
    cr_assert(strstr(buf, "max abs difference 2.8e-17 at (1, 2), max rel 2.8e-16\n"), "got: %s",
              buf);
    free(a);
    free(b);
}

Test(compare, max_abs_is_the_largest_and_where_it_is)
{
    /* Two cells share the largest difference: the first one is reported. */
    double a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {1, 2.5, 3, 4, 1, 10};
    lk_compare c;
    cr_assert_eq(lk_compare_grids(a, b, 2, 3, 16, &c), 3);
    cr_assert_eq(c.max_abs, 4.0);
    cr_assert_eq(c.max_row, 1);
    cr_assert_eq(c.max_col, 1);
    cr_assert_eq(c.max_rel, 0.8);
}

Test(compare, negative_zero_differs_from_zero)
{
    double a[2] = {0.0, 1.0}, b[2] = {-0.0, 1.0};
    lk_compare c;
    cr_assert_eq(lk_compare_grids(a, b, 1, 2, 4, &c), 1);
    cr_assert_eq(c.first[0].col, 0);
    cr_assert_eq(c.max_abs, 0.0);
    cr_assert_eq(c.max_rel, 0.0);
    cr_assert_eq(c.max_row, 0);
    cr_assert_eq(c.max_col, 0);
    char buf[1024];
    lk_compare_format(buf, sizeof buf, &c, 1, 2, "h");
    cr_assert(strstr(buf, "sign of zero"), "got: %s", buf);
}

Test(compare, change_against_zero_has_infinite_relative_difference)
{
    double a[1] = {0.0}, b[1] = {1e-300};
    lk_compare c;
    cr_assert_eq(lk_compare_grids(a, b, 1, 1, 1, &c), 1);
    cr_assert_eq(c.max_abs, 1e-300);
    cr_assert(isinf(c.max_rel));
}

Test(compare, nan_results_are_counted_and_make_max_abs_infinite)
{
    double a[4] = {1, 2, NAN, 4}, b[4] = {1, NAN, NAN, 4};
    lk_compare c;
    /* a[2] and b[2] hold the same NaN bits: equal. */
    cr_assert_eq(lk_compare_grids(a, b, 2, 2, 4, &c), 1);
    cr_assert_eq(c.nnan, 1);
    cr_assert_eq(c.npoison, 0);
    cr_assert(isinf(c.max_abs));
    cr_assert_eq(c.max_row, 0);
    cr_assert_eq(c.max_col, 1);
    char buf[2048];
    lk_compare_format(buf, sizeof buf, &c, 2, 2, "h");
    cr_assert(strstr(buf, "1 cell is NaN where the expected value is not"), "got: %s", buf);
    cr_assert_null(strstr(buf, "poison value"), "got: %s", buf);

    /* A NaN with other payload bits than the expected NaN is a difference too. */
    uint64_t other = bits_of(NAN) | 1;
    memcpy(&b[2], &other, sizeof other);
    cr_assert_eq(lk_compare_grids(a, b, 2, 2, 4, &c), 2);
    cr_assert_eq(c.nnan, 1); /* expected was NaN there, so not a NaN the code produced */
}

Test(compare, poisoned_cells_are_counted_and_explained)
{
    enum { R = 4, C = 5 };
    double *a = grid(R * C, 0.5), *b = grid(R * C, 0.5);
    lk_poison(b + 2 * C, C); /* row 2 never written */
    b[1] = NAN;              /* a NaN the code produced */
    lk_compare c;
    cr_assert_eq(lk_compare_grids(a, b, R, C, 16, &c), C + 1);
    cr_assert_eq(c.npoison, C);
    cr_assert_eq(c.nnan, C + 1);
    cr_assert_eq(c.first[1].row, 2);
    cr_assert(lk_is_poison(c.first[1].got));
    char buf[4096];
    lk_compare_format(buf, sizeof buf, &c, R, C, "thickness h");
    cr_assert(strstr(buf, "5 cells still hold the poison value written before the run: your "
                          "code never wrote them"), "got: %s", buf);
    cr_assert(strstr(buf, "1 cell is NaN where the expected value is not"), "got: %s", buf);
    cr_assert(strstr(buf, "(2, 0): 3 -> poison (never written)"), "got: %s", buf);
    free(a);
    free(b);
}

Test(compare, kfirst_is_clamped)
{
    enum { N = 40 };
    double *a = grid(N, 1.0), *b = grid(N, 2.0);
    lk_compare c;
    memset(&c, 0x5a, sizeof c);
    cr_assert_eq(lk_compare_grids(a, b, 5, 8, 1000, &c), N);
    cr_assert_eq(c.nfirst, LK_COMPARE_FIRST_MAX);
    cr_assert_eq(lk_compare_grids(a, b, 5, 8, -3, &c), N);
    cr_assert_eq(c.nfirst, 0);
    cr_assert_eq(c.ndiff, N);
    cr_assert_eq(lk_compare_grids(a, b, 5, 8, 3, &c), N);
    cr_assert_eq(c.nfirst, 3);
    free(a);
    free(b);
}

Test(compare, first_differences_are_in_row_major_order)
{
    enum { R = 6, C = 7 };
    double *a = grid(R * C, 0.0), *b = grid(R * C, 0.0);
    /* Set in scrambled order; expect them back sorted by (row, col). */
    int cells[][2] = {{5, 0}, {0, 6}, {3, 3}, {0, 1}, {3, 1}, {5, 6}};
    int n = (int)(sizeof cells / sizeof cells[0]);
    for (int k = 0; k < n; k++)
        b[cells[k][0] * C + cells[k][1]] += 1.0;
    int want[][2] = {{0, 1}, {0, 6}, {3, 1}, {3, 3}, {5, 0}, {5, 6}};
    lk_compare c;
    cr_assert_eq(lk_compare_grids(a, b, R, C, 16, &c), (size_t)n);
    cr_assert_eq(c.nfirst, n);
    for (int k = 0; k < n; k++) {
        cr_assert_eq(c.first[k].row, want[k][0], "entry %d", k);
        cr_assert_eq(c.first[k].col, want[k][1], "entry %d", k);
        cr_assert_eq(c.first[k].got, c.first[k].expected + 1.0);
    }
    free(a);
    free(b);
}

Test(compare, format_explains_count_positions_and_maximum)
{
    enum { R = 610, C = 496 };
    double *a = calloc(R * C, sizeof *a), *b = calloc(R * C, sizeof *b);
    cr_assert(a && b);
    a[12 * C + 40] = 0.1;
    b[12 * C + 40] = 0.10000000000000003;
    a[100 * C + 7] = b[100 * C + 7] = 5.0;
    b[100 * C + 7] = 5.5;
    b[600 * C + 1] = 1e-3;
    lk_compare c;
    cr_assert_eq(lk_compare_grids(a, b, R, C, 2, &c), 3);
    char buf[4096];
    lk_compare_format(buf, sizeof buf, &c, R, C, "thickness h");
    cr_assert(strstr(buf, "thickness h: 3 of 302560 cells differ (610 x 496 grid)\n"),
              "got: %s", buf);
    cr_assert(strstr(buf, "first differences (row, col): expected -> got\n"), "got: %s", buf);
    cr_assert(strstr(buf, "(12, 40): 0.10000000000000001 -> 0.10000000000000003 (abs 2.8e-17, "
                          "rel 2.8e-16)\n"), "got: %s", buf);
    cr_assert(strstr(buf, "(100, 7): 5 -> 5.5 (abs 0.5, rel 0.1)\n"), "got: %s", buf);
    cr_assert(strstr(buf, "... and 1 more\n"), "got: %s", buf);
    cr_assert(strstr(buf, "max abs difference 0.5 at (100, 7), max rel inf\n"), "got: %s", buf);
    cr_assert_null(strstr(buf, "poison"), "got: %s", buf);

    /* print says the same as format */
    char *mem = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&mem, &len);
    cr_assert_not_null(f);
    lk_compare_print(f, &c, R, C, "thickness h");
    fclose(f);
    cr_assert_str_eq(mem, buf);
    free(mem);
    free(a);
    free(b);
}

Test(compare, format_truncates_into_a_tiny_buffer_without_overflow)
{
    double a[4] = {1, 2, 3, 4}, b[4] = {1, 2, 3, 4};
    lk_poison(b, 4);
    lk_compare c;
    cr_assert_eq(lk_compare_grids(a, b, 2, 2, 16, &c), 4);
    char full[4096];
    lk_compare_format(full, sizeof full, &c, 2, 2, "thickness h");
    size_t flen = strlen(full);
    cr_assert_gt(flen, 100);

    /* Guard bytes around a 16-byte window must survive. */
    char mem[16 + 2 * 8];
    for (size_t size = 0; size <= 16; size++) {
        memset(mem, 0x7e, sizeof mem);
        lk_compare_format(mem + 8, size, &c, 2, 2, "thickness h");
        for (int k = 0; k < 8; k++)
            cr_assert_eq(mem[k], 0x7e, "underflow at size %zu", size);
        for (size_t k = 8 + size; k < sizeof mem; k++)
            cr_assert_eq(mem[k], 0x7e, "overflow at size %zu byte %zu", size, k - 8);
        if (size == 0)
            continue;
        size_t len = strlen(mem + 8);
        cr_assert_eq(len, size - 1, "size %zu gave %zu chars", size, len);
        if (size >= 4) {
            cr_assert_eq(memcmp(mem + 8, full, size - 4), 0, "size %zu", size);
            cr_assert_str_eq(mem + 8 + size - 4, "...");
        }
    }
    /* A buffer of exactly the right size is not cut. */
    char *exact = malloc(flen + 1);
    lk_compare_format(exact, flen + 1, &c, 2, 2, "thickness h");
    cr_assert_str_eq(exact, full);
    free(exact);
}

Test(compare, invalid_input_compares_as_empty)
{
    double a[1] = {1};
    lk_compare c;
    cr_assert_eq(lk_compare_grids(NULL, a, 1, 1, 4, &c), 0);
    cr_assert_eq(c.max_row, -1);
    cr_assert_eq(lk_compare_grids(a, a, 0, 1, 4, &c), 0);
    double b[1] = {2};
    cr_assert_eq(lk_compare_grids(a, b, 1, 1, 4, NULL), 1);
}
