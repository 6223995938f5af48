/* GPU tests of your kernels.cu: every result must equal the serial reference bit for bit.
   Each test poisons the output and fresh device memory first, so cells your code never
   writes, or buffers it never initialises, show up as differences. */
#include "lab.h"
#include "sciddicat/sciddicat_testing.h"

static int run_lab01(const void *ctx, const sciddicat *sim, int steps, double *h_out,
                     lk_error *err)
{
    const int *block = ctx;
    return lab01_gpu_run(sim->rows, sim->cols, sim->z, sim->h0, h_out, steps, block[0],
                         block[1], err);
}

static void check_dataset(const char *name, int steps, int block_x, int block_y, int use_md5)
{
    LK_REQUIRE_GPU();
    sciddicat sim;
    int dataset_steps;
    char md5[33];
    lk_test_load_dataset(name, &sim, &dataset_steps, md5);
    const int block[2] = {block_x, block_y};
    char what[160];
    snprintf(what, sizeof what, "%s, block %dx%d", name, block_x, block_y);
    lk_test_gpu_matches_serial(run_lab01, block, &sim, steps >= 0 ? steps : dataset_steps,
                               use_md5 ? md5 : NULL, what);
    sciddicat_free(&sim);
}

Test(gpu, tiny_two_steps) { check_dataset("sciddicat-tiny", -1, 32, 8, 0); }
Test(gpu, three_by_three) { check_dataset("sciddicat-3x3", -1, 32, 8, 0); }
Test(gpu, one_row_strip_has_no_interior) { check_dataset("sciddicat-row-strip", -1, 32, 8, 0); }
Test(gpu, one_column_strip_has_no_interior) { check_dataset("sciddicat-col-strip", -1, 32, 8, 0); }
Test(gpu, three_row_strip) { check_dataset("sciddicat-thin-rows", -1, 32, 8, 0); }
Test(gpu, three_column_strip) { check_dataset("sciddicat-thin-cols", -1, 32, 8, 0); }
Test(gpu, odd_size_block_32x8) { check_dataset("sciddicat-odd", -1, 32, 8, 0); }
Test(gpu, odd_size_odd_block_7x5) { check_dataset("sciddicat-odd", -1, 7, 5, 0); }
Test(gpu, odd_size_block_1x1) { check_dataset("sciddicat-odd", 20, 1, 1, 0); }
Test(gpu, odd_size_block_1024x1) { check_dataset("sciddicat-odd", 20, 1024, 1, 0); }
Test(gpu, flow_reaching_the_border) { check_dataset("sciddicat-border", -1, 16, 16, 0); }
Test(gpu, zero_steps_copies_the_input) { check_dataset("sciddicat-odd", 0, 32, 8, 0); }
Test(gpu, course_size_610x496_4000_steps, .timeout = 600)
{
    check_dataset("sciddicat-course-size", -1, 32, 8, 1);
}

/* A block of 2048 threads cannot launch: your code must report it, not return garbage. */
Test(gpu, impossible_block_is_reported_as_an_error)
{
    LK_REQUIRE_GPU();
    sciddicat sim;
    lk_test_load_dataset("sciddicat-tiny", &sim, NULL, NULL);
    size_t n = (size_t)sim.rows * sim.cols;
    double *h = malloc(n * sizeof *h);
    lk_error err;
    lk_error_clear(&err);
    int rc = lab01_gpu_run(sim.rows, sim.cols, sim.z, sim.h0, h, 2, 64, 32, &err);
    cr_assert_eq(rc, -1, "a 64x32 block (2048 threads) cannot launch, but lab01_gpu_run "
                 "returned %d: check every launch with LK_LAUNCH_TRY(err)", rc);
    cr_assert(strstr(err.msg, "launch") || strstr(err.msg, "configuration"),
              "the error message should say the launch failed, got: %s", err.msg);
    free(h);
    sciddicat_free(&sim);
}
