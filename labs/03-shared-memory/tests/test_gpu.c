/* GPU tests of your kernels.cu: your shared-memory kernel must give the serial reference's
   result bit for bit for every tile shape, keep the physics' invariants, and really hold
   its tile in shared memory. Each run poisons the output and fresh device memory first. */
#include "given.h"
#include "swe/swe_testing.h"

static void check_dataset(const char *name, int steps, int block_x, int block_y, int use_md5)
{
    LK_REQUIRE_GPU();
    swe sim;
    int dataset_steps;
    char md5[33];
    lk_test_swe_load(name, &sim, &dataset_steps, md5);
    lk_test_swe_gpu_matches_serial(lab03_gpu_run, &sim, steps >= 0 ? steps : dataset_steps,
                                   block_x, block_y, use_md5 ? md5 : NULL, name);
    swe_free(&sim);
}

/* The tile and its halo (corners excepted) of all three fields must be in shared memory. */
static void check_shared(int bx, int by)
{
    lab03_kernel_info info;
    const int block_x = bx, block_y = by;
    lk_error err;
    memset(&info, 0, sizeof info);
    LK_ASSERT_OK(lab03_step_info(block_x, block_y, &info, &err), &err);
    cr_assert_not_null(info.kernel, "lab03_step_info: info->kernel is NULL: set it to "
                       "(const void *)your_kernel");
    cr_assert(info.block_x == bx && info.block_y == by, "tile %dx%d: lab03_step_info says "
              "the block is %dx%d: the block must be the tile", bx, by, info.block_x,
              info.block_y);
    struct cudaFuncAttributes attr;
    cudaError_t c = cudaFuncGetAttributes(&attr, info.kernel);
    cr_assert_eq(c, cudaSuccess, "cudaFuncGetAttributes on your kernel: %s",
                 cudaGetErrorString(c));
    size_t have = attr.sharedSizeBytes + info.dynamic_shared_bytes;
    size_t need = 3 * sizeof(double) * ((size_t)(bx + 2) * (by + 2) - 4);
    cr_assert_geq(have, need, "tile %dx%d: your kernel has %zu bytes of shared memory (%zu "
                  "static + %zu dynamic), but a %dx%d tile with its halo needs %zu bytes for "
                  "Z, Qx and Qy", bx, by, have, (size_t)attr.sharedSizeBytes,
                  info.dynamic_shared_bytes, bx + 2, by + 2, need);
}

Test(shared, the_kernel_holds_tile_and_halo_in_shared_memory)
{
    LK_REQUIRE_GPU();
    check_shared(32, 8);
    check_shared(16, 16);
    check_shared(7, 5);
}

Test(gpu, zero_steps_copies_the_initial_state) { check_dataset("swe-odd", 0, 32, 8, 0); }
Test(gpu, one_step) { check_dataset("swe-bumps-odd", 1, 32, 8, 0); }
Test(gpu, two_steps) { check_dataset("swe-bumps-odd", 2, 32, 8, 0); }
Test(gpu, tiny_5x7) { check_dataset("swe-tiny", -1, 32, 8, 0); }
Test(gpu, single_cell) { check_dataset("swe-1x1", -1, 32, 8, 0); }
Test(gpu, single_cell_tile_1x1) { check_dataset("swe-1x1", -1, 1, 1, 0); }
Test(gpu, one_row_strip) { check_dataset("swe-row-strip", -1, 32, 8, 0); }
Test(gpu, one_column_strip) { check_dataset("swe-col-strip", -1, 32, 8, 0); }
Test(gpu, one_column_strip_tile_1x32) { check_dataset("swe-col-strip", -1, 1, 32, 0); }
Test(gpu, odd_37x53_tile_32x8) { check_dataset("swe-odd", -1, 32, 8, 0); }
Test(gpu, odd_37x53_tile_7x5) { check_dataset("swe-odd", -1, 7, 5, 0); }
Test(gpu, odd_37x53_tile_16x16) { check_dataset("swe-odd", -1, 16, 16, 0); }
Test(gpu, odd_37x53_tile_1x1) { check_dataset("swe-odd", 20, 1, 1, 0); }
Test(gpu, odd_37x53_tile_32x32) { check_dataset("swe-odd", -1, 32, 32, 0); }
Test(gpu, odd_37x53_tile_256x1) { check_dataset("swe-odd", -1, 256, 1, 0); }
Test(gpu, odd_37x53_tile_2x64) { check_dataset("swe-odd", -1, 2, 64, 0); }
Test(gpu, rotated_dam_53x37) { check_dataset("swe-odd-rot", -1, 32, 8, 0); }
Test(gpu, two_dimensional_flow_37x53_tile_32x8) { check_dataset("swe-bumps-odd", -1, 32, 8, 0); }
Test(gpu, two_dimensional_flow_37x53_tile_5x7) { check_dataset("swe-bumps-odd", -1, 5, 7, 0); }
Test(gpu, two_dimensional_flow_3x97) { check_dataset("swe-bumps-thin", -1, 32, 8, 0); }
Test(gpu, two_dimensional_flow_129x257_tile_16x16)
{
    check_dataset("swe-bumps-wide", -1, 16, 16, 0);
}
Test(gpu, dam_break_256x256_manifest_hash) { check_dataset("swe-dam-256", -1, 32, 8, 1); }
Test(gpu, rotated_dam_break_256x256_manifest_hash)
{
    check_dataset("swe-dam-rot-256", -1, 64, 4, 1);
}

/* Nobody maintains the ghost layer: a kernel that reads it instead of the wall image of the
   edge cell reads NaN here. */
Test(gpu, ghost_layer_is_never_read)
{
    LK_REQUIRE_GPU();
    swe sim;
    swe_fields got, expected;
    lk_test_swe_load("swe-bumps-odd", &sim, NULL, NULL);
    lk_test_swe_serial(&sim, 3, &expected);
    lk_test_swe_poison_ghosts(&sim, &sim.q);
    const int block_x = 32, block_y = 8;
    lk_test_swe_run_gpu(lab03_gpu_run, &sim, 3, block_x, block_y, &got, "3 steps");
    lk_test_swe_assert_eq(&sim, &expected, &got, "3 steps from a state whose ghost layer is NaN");
    swe_fields_free(&got);
    swe_fields_free(&expected);
    swe_free(&sim);
}

/* A tile of 64 x 32 = 2048 threads cannot launch: your code must report it. */
Test(gpu, impossible_tile_is_reported_as_an_error)
{
    LK_REQUIRE_GPU();
    swe sim;
    swe_fields out;
    lk_error err;
    lk_error_clear(&err);
    lk_test_swe_load("swe-tiny", &sim, NULL, NULL);
    lk_test_swe_fields(&sim, &out);
    const int block_x = 64, block_y = 32;
    int rc = lab03_gpu_run(&sim, 2, &out, block_x, block_y, &err);
    cr_assert_eq(rc, -1, "a 64x32 tile (2048 threads) cannot launch, but the run returned %d: "
                 "check the launch with LK_LAUNCH_TRY(err)", rc);
    cr_assert(strstr(err.msg, "launch") || strstr(err.msg, "configuration") ||
                  strstr(err.msg, "cudaFuncSetAttribute"),
              "the error message should say the launch failed, got: %s", err.msg);
    swe_fields_free(&out);
    swe_free(&sim);
}

Test(gpu_invariants, mass_is_conserved)
{
    LK_REQUIRE_GPU();
    swe sim;
    swe_fields got;
    lk_test_swe_gen("bumps:61x47:3", &sim);
    const int block_x = 32, block_y = 8;
    lk_test_swe_run_gpu(lab03_gpu_run, &sim, 500, block_x, block_y, &got, "bumps:61x47:3, 500 steps");
    lk_test_swe_check_mass(&sim, &got, "your GPU result, bumps:61x47:3 after 500 steps");
    swe_fields_free(&got);
    swe_free(&sim);
}

Test(gpu_invariants, rotated_dam_equals_the_transposed_dam)
{
    LK_REQUIRE_GPU();
    swe a, b;
    swe_fields ra, rb, t;
    lk_test_swe_gen("dam:37x53", &a);
    lk_test_swe_gen("damrot:53x37", &b);
    const int block_x = 16, block_y = 8;
    lk_test_swe_run_gpu(lab03_gpu_run, &a, 150, block_x, block_y, &ra, "dam:37x53");
    lk_test_swe_run_gpu(lab03_gpu_run, &b, 150, block_x, block_y, &rb, "damrot:53x37");
    lk_test_swe_check_uniform(&a, &ra, 1, "your GPU result, dam:37x53 after 150 steps");
    lk_test_swe_transpose(&a, &ra, &t);
    lk_test_swe_assert_eq(&b, &t, &rb, "your damrot:53x37 vs your transposed dam:37x53, "
                          "150 steps");
    swe_fields_free(&ra);
    swe_fields_free(&rb);
    swe_fields_free(&t);
    swe_free(&a);
    swe_free(&b);
}

/* The harness's global-memory kernel is what --bench compares you with. */
Test(given, global_memory_version_matches_serial)
{
    LK_REQUIRE_GPU();
    swe sim;
    int steps;
    lk_test_swe_load("swe-bumps-odd", &sim, &steps, NULL);
    const int block_x = 32, block_y = 8;
    lk_test_swe_gpu_matches_serial(lab03_global_run, &sim, steps, block_x, block_y, NULL, "global");
    swe_free(&sim);
}
