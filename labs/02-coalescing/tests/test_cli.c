/* The lab's program through its real command line (CPU only: --serial), as the grader and
   `make run` use it. */
#include "lab.h"
#include "labkit/md5.h"
#include "swe/swe_testing.h"

static int run(char *out, size_t size, char **argv)
{
    int argc = 0;
    while (argv[argc])
        argc++;
    return lk_run_captured(lk_lab_main, argc, argv, out, size);
}

Test(cli, serial_run_prints_the_manifest_hash)
{
    swe sim;
    char md5[33], out[8192];
    lk_test_swe_load("swe-odd", &sim, NULL, md5);
    swe_free(&sim);
    char *argv[] = {"lab02", "--dataset", "swe-odd", "--serial", "--json", NULL};
    int status = run(out, sizeof out, argv);
    cr_assert_eq(status, 0, "output:\n%s", out);
    cr_assert(strstr(out, md5), "the md5 %s of the manifest is not in the output:\n%s", md5, out);
    cr_assert(strstr(out, "\"rows\":37,\"cols\":53,\"fields\":3,\"steps\":60"), "%s", out);
}

Test(cli, bin_file_md5_is_the_hash, .init = lk_tmpdir_make, .fini = lk_tmpdir_remove)
{
    swe sim;
    char md5[33], out[8192], file_md5[33];
    lk_error err;
    lk_test_swe_load("swe-bumps-odd", &sim, NULL, md5);
    swe_free(&sim);
    const char *bin = lk_tmp_path("out.bin"), *png = lk_tmp_path("out.png");
    char *argv[] = {"lab02", "--dataset", "swe-bumps-odd", "--serial", "--bin", (char *)bin,
                    "--png", (char *)png, NULL};
    int status = run(out, sizeof out, argv);
    cr_assert_eq(status, 0, "output:\n%s", out);
    LK_ASSERT_OK(lk_md5_file(bin, file_md5, &err), &err);
    cr_assert_str_eq(file_md5, md5);
    LK_ASSERT_OK(lk_md5_file(png, file_md5, &err), &err);
}

Test(cli, time_option_picks_the_steps)
{
    char out[8192];
    char *argv[] = {"lab02", "--gen", "dam:100x2", "--time", "5", "--serial", NULL};
    int status = run(out, sizeof out, argv);
    cr_assert_eq(status, 0, "output:\n%s", out);
    cr_assert(strstr(out, "100 x 2 cells, 35 steps"), "dt = 0.4 * 5 / 14 s: 35 steps:\n%s", out);
}

static void expect_usage_error(char **argv, int want, const char *phrase)
{
    char out[8192];
    int status = run(out, sizeof out, argv);
    cr_assert_eq(status, want, "exit status %d, expected %d; output:\n%s", status, want, out);
    cr_assert(strstr(out, phrase), "the message lacks '%s':\n%s", phrase, out);
}

Test(cli, bad_command_lines_are_explained)
{
    char *a[] = {"lab02", "--gen", "dam:10x10", "--steps", "3", "--time", "1", NULL};
    expect_usage_error(a, 2, "both --steps and --time");
    char *b[] = {"lab02", "some.txt", NULL};
    expect_usage_error(b, 2, "takes no input files");
    char *c[] = {"lab02", "--gen", "lake:10x10", "--serial", NULL};
    expect_usage_error(c, 1, "unknown kind 'lake'");
    char *d[] = {"lab02", "--dataset", "sciddicat-tiny", "--serial", NULL};
    expect_usage_error(d, 1, "not swe");
    char *e[] = {"lab02", NULL};
    expect_usage_error(e, 2, "--dataset, --gen or --standard");
}
