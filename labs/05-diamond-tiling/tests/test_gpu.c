/* GPU tests of lab 05: every variant, yours and the given ones, must equal the serial
   reference bit for bit, on odd n (n = 1 included), steps that no tile height divides,
   and tiles from the smallest to the largest. Each run poisons the output and fresh device
   memory first (NaN), so points your code never writes, or records it reads before they
   are written, show up as differences. */
#include "given.h"
#include "labkit/testing.h"

/* The honeycomb is the stretch task: its tests skip while it is not attempted. */
static void require_attempted(lab05_method method)
{
    if (method != LAB05_RUN_HONEYCOMB)
        return;
    lk_error err;
    lk_error_clear(&err);
    /* Row 1 of a 1-point string has no tile (it starts at point a = 2): nothing launches. */
    if (lab05_tile_row(LAB05_HONEYCOMB, 1, 1, 1, 4, 1, NULL, NULL, &err) == LAB05_NOT_ATTEMPTED)
        cr_skip_test("the honeycomb (stretch task, TODO 4) is not attempted: lab05_tile_row "
                     "returns LAB05_NOT_ATTEMPTED");
}

static void check(lab05_method method, vstring_kind kind, int n, int steps, int width,
                  int height)
{
    LK_REQUIRE_GPU();
    require_attempted(method);
    vstring_spec spec = {kind, n, (unsigned long long)(n + steps)};
    vstring sim;
    lk_error err;
    LK_ASSERT_OK(vstring_generate(&spec, &sim, &err), &err);
    const size_t len = vstring_components(&sim);
    double *want = malloc(len * sizeof *want), *got = malloc(len * sizeof *got);
    LK_ASSERT_OK(vstring_serial(&sim, steps, want, &err), &err);
    lk_poison(got, len);
    lk_poison_device_allocations(1);
    int rc = lab05_gpu_run(method, n, sim.y0, got, steps, width, height, &err);
    lk_poison_device_allocations(0);
    cr_assert_eq(rc, 0, "n %d, %d steps, tile %dx%d: %s", n, steps, width, height, err.msg);
    char what[128];
    snprintf(what, sizeof what, "n %d (u_p at column 2p, v_p at 2p+1), %d steps, tile %dx%d", n,
             steps, width, height);
    lk_assert_grid_eq(want, got, 1, (int)len, what);
    free(want);
    free(got);
    vstring_free(&sim);
}

/* Sizes and step counts for every variant: n = 1, odd n around a tile, steps below,
   at, just above and far above a tile height. */
static void check_variant(lab05_method method, int width, int height)
{
    static const int ns[] = {1, 2, 3, 7, 129, 1001, 40001};
    static const int steps[] = {1, 2, 63, 64, 65, 129, 301};
    for (size_t a = 0; a < sizeof ns / sizeof *ns; a++)
        for (size_t b = 0; b < sizeof steps / sizeof *steps; b++)
            check(method, (a + b) % 2 ? VSTRING_RANDOM : VSTRING_PLUCK, ns[a], steps[b],
                  width, height);
}

Test(linear, bit_exact_on_odd_sizes) { check_variant(LAB05_RUN_LINEAR, 256, 1); }
Test(linear, odd_block) { check(LAB05_RUN_LINEAR, VSTRING_RANDOM, 1001, 77, 33, 1); }
Test(persistent, bit_exact_on_odd_sizes) { check_variant(LAB05_RUN_PERSISTENT, 256, 1); }
Test(persistent, more_points_than_resident_threads)
{
    check(LAB05_RUN_PERSISTENT, VSTRING_RANDOM, 3000001, 5, 1024, 1);
}

Test(diamond, default_tile_128x64) { check_variant(LAB05_RUN_DIAMOND, 128, 64); }
Test(diamond, smallest_tile_2x1) { check_variant(LAB05_RUN_DIAMOND, 2, 1); }
Test(diamond, tile_6x3) { check_variant(LAB05_RUN_DIAMOND, 6, 3); }
Test(diamond, largest_tile_1024x512)
{
    check(LAB05_RUN_DIAMOND, VSTRING_RANDOM, 40001, 1500, 1024, 512);
    check(LAB05_RUN_DIAMOND, VSTRING_RANDOM, 3, 513, 1024, 512);
}
Test(diamond, sine_mode_many_rows) { check(LAB05_RUN_DIAMOND, VSTRING_SINE, 4099, 2001, 64, 32); }
Test(diamond, zero_steps_copies_the_input) { check(LAB05_RUN_DIAMOND, VSTRING_RANDOM, 101, 0, 128, 64); }

Test(honeycomb, default_tile_512x64) { check_variant(LAB05_RUN_HONEYCOMB, 512, 64); }
Test(honeycomb, flat_of_one_point_9x4) { check_variant(LAB05_RUN_HONEYCOMB, 9, 4); }
Test(honeycomb, height_1) { check_variant(LAB05_RUN_HONEYCOMB, 100, 1); }
Test(honeycomb, diamond_shaped_64x32) { check(LAB05_RUN_HONEYCOMB, VSTRING_RANDOM, 1001, 301, 64, 32); }
Test(honeycomb, largest_tile_1024x100) { check(LAB05_RUN_HONEYCOMB, VSTRING_RANDOM, 40001, 777, 1024, 100); }

/* The given loop passes bad tiles back as errors; a tile the GPU cannot launch is one. */
Test(given, impossible_tile_is_an_error_not_garbage)
{
    LK_REQUIRE_GPU();
    double y0[2] = {1.0, 0.0}, y[2];
    lk_error err;
    cr_assert_eq(lab05_gpu_run(LAB05_RUN_DIAMOND, 1, y0, y, 3, 128, 32, &err), -1);
    cr_assert(strstr(err.msg, "W/2 steps high"), "%s", err.msg);
}

/* ---- the stretch model: the Brusselator ------------------------------------------------ */

/* 1 when your lab05_bruss_launch() is still the skeleton's (nothing launches with 0 steps). */
static int bruss_not_attempted(void)
{
    lk_error err;
    lk_error_clear(&err);
    return lab05_bruss_launch(3, 0, 1, NULL, NULL, &err) == LAB05_NOT_ATTEMPTED;
}

static void check_bruss(lab05_method method, int m, unsigned long long seed, int steps,
                        int width, int height)
{
    LK_REQUIRE_GPU();
    if (method == LAB05_RUN_BRUSS && bruss_not_attempted())
        cr_skip_test("the Brusselator (stretch model, TODO 5) is not attempted: "
                     "lab05_bruss_launch returns LAB05_NOT_ATTEMPTED");
    bruss_spec spec = {m, seed};
    bruss sim;
    lk_error err;
    LK_ASSERT_OK(bruss_generate(&spec, &sim, &err), &err);
    const size_t len = bruss_components(m);
    double *want = malloc(len * sizeof *want), *got = malloc(len * sizeof *got);
    LK_ASSERT_OK(bruss_serial(&sim, steps, want, &err), &err);
    lk_poison(got, len);
    lk_poison_device_allocations(1);
    int rc = lab05_bruss_gpu_run(method, m, sim.y0, got, steps, width, height, &err);
    lk_poison_device_allocations(0);
    cr_assert_eq(rc, 0, "m %d, %d steps, tile %dx%d: %s", m, steps, width, height, err.msg);
    char what[128];
    snprintf(what, sizeof what, "Brusselator m %d (row k; col 2j U, 2j+1 V), %d steps, tile %dx%d",
             m, steps, width, height);
    lk_assert_grid_eq(want, got, m, 2 * m, what);
    free(want);
    free(got);
    bruss_free(&sim);
}

/* Odd and even sides from the smallest, steps below, at and above a launch's height. */
static void check_bruss_variant(lab05_method method, int width, int height)
{
    static const int ms[] = {2, 3, 7, 64, 97, 201};
    static const int steps[] = {1, 3, 4, 5, 13};
    for (size_t a = 0; a < sizeof ms / sizeof *ms; a++)
        for (size_t b = 0; b < sizeof steps / sizeof *steps; b++)
            check_bruss(method, ms[a], (a + b) % 3, steps[b], width, height);
}

Test(bruss_linear, bit_exact_on_odd_sizes) { check_bruss_variant(LAB05_RUN_BRUSS_LINEAR, 256, 1); }
Test(bruss_linear, odd_block) { check_bruss(LAB05_RUN_BRUSS_LINEAR, 97, 7, 29, 33, 1); }
Test(bruss_rows, default_tile_0x4) { check_bruss_variant(LAB05_RUN_BRUSS, 0, 4); }
Test(bruss_rows, one_row_one_step) { check_bruss_variant(LAB05_RUN_BRUSS, 1, 1); }
Test(bruss_rows, more_steps_than_rows_3x5) { check_bruss_variant(LAB05_RUN_BRUSS, 3, 5); }
Test(bruss_rows, band_wider_than_small_grids_24x3) { check_bruss_variant(LAB05_RUN_BRUSS, 24, 3); }
Test(bruss_rows, bench_size_m_500_default_tile) { check_bruss(LAB05_RUN_BRUSS, 500, 0, 9, 0, 4); }
Test(bruss_rows, wide_grid_m_2048_default_tile) { check_bruss(LAB05_RUN_BRUSS, 2048, 1, 3, 0, 4); }

/* The skeleton's stretch is reported as not attempted, never as a crash or a wrong answer. */
Test(bruss_rows, not_attempted_is_reported_as_such)
{
    LK_REQUIRE_GPU();
    bruss_spec spec = {9, 1};
    bruss sim;
    lk_error err;
    LK_ASSERT_OK(bruss_generate(&spec, &sim, &err), &err);
    double y[2 * 81];
    int rc = lab05_bruss_gpu_run(LAB05_RUN_BRUSS, 9, sim.y0, y, 5, 0, 4, &err);
    if (bruss_not_attempted()) {
        cr_expect_eq(rc, -1);
        cr_expect(strstr(err.msg, "LAB05_NOT_ATTEMPTED") && strstr(err.msg, "not attempted"),
                  "%s", err.msg);
    } else {
        cr_expect_eq(rc, 0, "%s", err.msg);
    }
    bruss_free(&sim);
}

/* A grid too wide for one band row in shared memory is an error that says why. */
Test(bruss_rows, grid_too_wide_for_row_bands_is_an_error)
{
    LK_REQUIRE_GPU();
    const int m = 4096;
    double *y0 = calloc(bruss_components(m), sizeof *y0);
    double *y = malloc(bruss_components(m) * sizeof *y);
    lk_error err;
    cr_assert_eq(lab05_bruss_gpu_run(LAB05_RUN_BRUSS, m, y0, y, 1, 0, 4, &err), -1);
    cr_expect(strstr(err.msg, "row bands cannot hold this grid"), "%s", err.msg);
    free(y0);
    free(y);
}
