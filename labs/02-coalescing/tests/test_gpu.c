/* GPU tests of your kernels.cu: every result must equal the serial reference bit for bit,
   and keep the physics' invariants. Each run poisons the output and fresh device memory
   first, so cells your code never writes, or buffers it reads before writing, show up. */
#include "given.h"
#include "swe/swe_testing.h"

static void check_dataset(const char *name, int steps, int block_x, int block_y, int use_md5)
{
    LK_REQUIRE_GPU();
    swe sim;
    int dataset_steps;
    char md5[33];
    lk_test_swe_load(name, &sim, &dataset_steps, md5);
    lk_test_swe_gpu_matches_serial(lab02_gpu_run, &sim, steps >= 0 ? steps : dataset_steps,
                                   block_x, block_y, use_md5 ? md5 : NULL, name);
    swe_free(&sim);
}

Test(gpu, zero_steps_copies_the_initial_state) { check_dataset("swe-odd", 0, 32, 8, 0); }
Test(gpu, one_step) { check_dataset("swe-bumps-odd", 1, 32, 8, 0); }
Test(gpu, two_steps) { check_dataset("swe-bumps-odd", 2, 32, 8, 0); }
Test(gpu, tiny_5x7) { check_dataset("swe-tiny", -1, 32, 8, 0); }
Test(gpu, single_cell) { check_dataset("swe-1x1", -1, 32, 8, 0); }
Test(gpu, one_row_strip) { check_dataset("swe-row-strip", -1, 32, 8, 0); }
Test(gpu, one_column_strip) { check_dataset("swe-col-strip", -1, 32, 8, 0); }
Test(gpu, odd_37x53_block_32x8) { check_dataset("swe-odd", -1, 32, 8, 0); }
Test(gpu, odd_37x53_odd_block_7x5) { check_dataset("swe-odd", -1, 7, 5, 0); }
Test(gpu, odd_37x53_block_1x1) { check_dataset("swe-odd", 20, 1, 1, 0); }
Test(gpu, odd_37x53_block_1024x1) { check_dataset("swe-odd", -1, 1024, 1, 0); }
Test(gpu, odd_37x53_block_1x256) { check_dataset("swe-odd", -1, 1, 256, 0); }
Test(gpu, rotated_dam_53x37) { check_dataset("swe-odd-rot", -1, 32, 8, 0); }
Test(gpu, two_dimensional_flow_37x53) { check_dataset("swe-bumps-odd", -1, 32, 8, 0); }
Test(gpu, two_dimensional_flow_3x97) { check_dataset("swe-bumps-thin", -1, 32, 8, 0); }
Test(gpu, two_dimensional_flow_129x257_block_16x16)
{
    check_dataset("swe-bumps-wide", -1, 16, 16, 0);
}
Test(gpu, dam_break_256x256_manifest_hash) { check_dataset("swe-dam-256", -1, 32, 8, 1); }
Test(gpu, rotated_dam_break_256x256_manifest_hash)
{
    check_dataset("swe-dam-rot-256", -1, 64, 4, 1);
}

/* The ghost layer of the input holds garbage: the wall rule must run before the first step. */
Test(gpu, ghost_cells_are_set_before_the_first_step)
{
    LK_REQUIRE_GPU();
    swe sim;
    swe_fields got, expected;
    lk_test_swe_load("swe-bumps-odd", &sim, NULL, NULL);
    lk_test_swe_serial(&sim, 3, &expected);
    lk_test_swe_poison_ghosts(&sim, &sim.q);
    const int block_x = 32, block_y = 8;
    lk_test_swe_run_gpu(lab02_gpu_run, &sim, 3, block_x, block_y, &got,
                        "3 steps from a state whose ghost layer is NaN");
    lk_test_swe_assert_eq(&sim, &expected, &got,
                          "3 steps from a state whose ghost layer is NaN (apply the wall "
                          "rule before every step, the first one too)");
    swe_fields_free(&got);
    swe_fields_free(&expected);
    swe_free(&sim);
}

/* A block of 2048 threads cannot launch: your code must report it, not return garbage. */
Test(gpu, impossible_block_is_reported_as_an_error)
{
    LK_REQUIRE_GPU();
    swe sim;
    swe_fields out;
    lk_error err;
    lk_error_clear(&err);
    lk_test_swe_load("swe-tiny", &sim, NULL, NULL);
    lk_test_swe_fields(&sim, &out);
    const int block_x = 64, block_y = 32;
    int rc = lab02_gpu_run(&sim, 2, &out, block_x, block_y, &err);
    cr_assert_eq(rc, -1, "a 64x32 block (2048 threads) cannot launch, but lab02_gpu_run "
                 "returned %d: check every launch with LK_LAUNCH_TRY(err)", rc);
    cr_assert(strstr(err.msg, "launch") || strstr(err.msg, "configuration"),
              "the error message should say the launch failed, got: %s", err.msg);
    swe_fields_free(&out);
    swe_free(&sim);
}

/* The invariants of the serial reference (tests/test_serial.c), checked on your results. */
Test(gpu_invariants, mass_is_conserved)
{
    LK_REQUIRE_GPU();
    swe sim;
    swe_fields got;
    lk_test_swe_gen("bumps:61x47:3", &sim);
    const int block_x = 32, block_y = 8;
    lk_test_swe_run_gpu(lab02_gpu_run, &sim, 500, block_x, block_y, &got, "bumps:61x47:3, 500 steps");
    lk_test_swe_check_mass(&sim, &got, "your GPU result, bumps:61x47:3 after 500 steps");
    swe_fields_free(&got);
    swe_free(&sim);
}

Test(gpu_invariants, a_dam_uniform_along_one_axis_stays_uniform)
{
    LK_REQUIRE_GPU();
    static const char *specs[2] = {"dam:37x53", "damrot:53x37"};
    for (int k = 0; k < 2; k++) {
        swe sim;
        swe_fields got;
        lk_test_swe_gen(specs[k], &sim);
        const int block_x = 16, block_y = 4;
        lk_test_swe_run_gpu(lab02_gpu_run, &sim, 200, block_x, block_y, &got, specs[k]);
        char what[128];
        snprintf(what, sizeof what, "your GPU result, %s after 200 steps", specs[k]);
        lk_test_swe_check_uniform(&sim, &got, k == 0, what);
        swe_fields_free(&got);
        swe_free(&sim);
    }
}

Test(gpu_invariants, rotated_dam_equals_the_transposed_dam)
{
    LK_REQUIRE_GPU();
    swe a, b;
    swe_fields ra, rb, t;
    lk_test_swe_gen("dam:37x53", &a);
    lk_test_swe_gen("damrot:53x37", &b);
    const int block_x = 32, block_y = 8;
    lk_test_swe_run_gpu(lab02_gpu_run, &a, 150, block_x, block_y, &ra, "dam:37x53");
    lk_test_swe_run_gpu(lab02_gpu_run, &b, 150, block_x, block_y, &rb, "damrot:53x37");
    lk_test_swe_transpose(&a, &ra, &t);
    lk_test_swe_assert_eq(&b, &t, &rb, "your damrot:53x37 vs your transposed dam:37x53, "
                          "150 steps");
    swe_fields_free(&ra);
    swe_fields_free(&rb);
    swe_fields_free(&t);
    swe_free(&a);
    swe_free(&b);
}

/* The given version is what --bench compares you with: it must be right too. */
Test(given, uncoalesced_version_matches_serial)
{
    LK_REQUIRE_GPU();
    static const char *names[3] = {"swe-odd", "swe-bumps-odd", "swe-row-strip"};
    for (int k = 0; k < 3; k++) {
        swe sim;
        int steps;
        lk_test_swe_load(names[k], &sim, &steps, NULL);
        const int block_x = 32, block_y = 8;
        lk_test_swe_gpu_matches_serial(lab02_uncoalesced_run, &sim, steps, block_x, block_y, NULL,
                                       names[k]);
        swe_free(&sim);
    }
}
