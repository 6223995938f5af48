/* The lab's program through its real command line (CPU only: --serial). */
#include "lab.h"
#include "labkit/swe_testing.h"

static int run_driver(int argc, char **argv)
{
    const lk_swe_lab lab = {.name = "03-shared-memory", .run = lab03_gpu_run,
                            .baseline = lab03_global_run, .baseline_name = "global",
                            .launch = {.block_x = 32, .block_y = 8},
                            .standard_dataset = "swe-tiny", .bench_dataset = "swe-tiny",
                            .bench_steps = 1, .bench_serial_steps = 1};
    return lk_swe_driver(argc, argv, &lab);
}

Test(cli, serial_run_prints_the_manifest_hash)
{
    lk_swe sim;
    char md5[33], out[8192];
    lk_test_swe_load("swe-bumps-thin", &sim, NULL, md5);
    lk_swe_free(&sim);
    char *argv[] = {"lab03", "--dataset", "swe-bumps-thin", "--serial", "--json", NULL};
    int status = lk_run_captured(run_driver, 5, argv, out, sizeof out);
    cr_assert_eq(status, 0, "output:\n%s", out);
    cr_assert(strstr(out, md5), "the md5 %s of the manifest is not in the output:\n%s", md5, out);
}

Test(cli, help_names_the_global_variant)
{
    char out[8192];
    char *argv[] = {"lab03", "-h", NULL};
    int status = lk_run_captured(run_driver, 2, argv, out, sizeof out);
    cr_assert_eq(status, 0, "output:\n%s", out);
    cr_assert(strstr(out, "--variant NAME   global:"), "%s", out);
}
