/* The lab's program through its real command line (CPU only: --serial), as the grader and
   `make run` use it. Variants and tiles are checked before anything is loaded or run. */
#include "bruss/bruss.h"
#include "labkit/md5.h"
#include "labkit/testing.h"
#include "vstring/vstring.h"

static int run(char *out, size_t size, char **argv)
{
    int argc = 0;
    while (argv[argc])
        argc++;
    return lk_run_captured(lk_lab_main, argc, argv, out, size);
}

static void expect_error(char **argv, int want, const char *phrase)
{
    char out[8192];
    int status = run(out, sizeof out, argv);
    cr_assert_eq(status, want, "exit status %d, expected %d; output:\n%s", status, want, out);
    cr_assert(strstr(out, phrase), "the message lacks '%s':\n%s", phrase, out);
}

static void manifest_md5(const char *name, char md5[33])
{
    char manifest[4096];
    vstring sim;
    lk_error err;
    lk_test_path(manifest, sizeof manifest, "datasets/MANIFEST");
    LK_ASSERT_OK(vstring_load_dataset(manifest, name, &sim, NULL, md5, &err), &err);
    vstring_free(&sim);
}

Test(cli, serial_run_prints_the_manifest_hash)
{
    char md5[33], out[8192];
    manifest_md5("string-pluck-odd", md5);
    char *argv[] = {"lab05", "--dataset", "string-pluck-odd", "--serial", "--json", NULL};
    int status = run(out, sizeof out, argv);
    cr_assert_eq(status, 0, "output:\n%s", out);
    cr_assert(strstr(out, md5), "the md5 %s of the manifest is not in the output:\n%s", md5, out);
    cr_assert(strstr(out, "\"rows\":1,\"cols\":2002,\"steps\":301"), "%s", out);
}

/* The grader's form: --gen KIND:1xN:SEED --steps S --bin FILE; the file's md5 is the hash. */
Test(cli, generated_string_bin_file_md5_is_the_hash, .init = lk_tmpdir_make,
     .fini = lk_tmpdir_remove)
{
    char out[8192], file_md5[33], want[33];
    lk_error err;
    const char *bin = lk_tmp_path("out.bin"), *txt = lk_tmp_path("out.txt");
    char *argv[] = {"lab05", "--gen", "random:1x1001:7", "--steps", "77", "--serial", "--bin",
                    (char *)bin, "--out", (char *)txt, NULL};
    int status = run(out, sizeof out, argv);
    cr_assert_eq(status, 0, "output:\n%s", out);
    vstring_spec spec;
    vstring sim;
    LK_ASSERT_OK(vstring_spec_parse("random:1x1001:7", &spec, &err), &err);
    LK_ASSERT_OK(vstring_generate(&spec, &sim, &err), &err);
    double *y = malloc(2 * 1001 * sizeof *y);
    LK_ASSERT_OK(vstring_serial(&sim, 77, y, &err), &err);
    LK_ASSERT_OK(vstring_md5(y, 1001, want, &err), &err);
    LK_ASSERT_OK(lk_md5_file(bin, file_md5, &err), &err);
    cr_assert_str_eq(file_md5, want);
    cr_assert(strstr(out, want), "%s", out);
    FILE *f = fopen(txt, "r");
    cr_assert_not_null(f);
    int p;
    double u, v;
    cr_assert_eq(fscanf(f, "%d %lf %lf", &p, &u, &v), 3);
    cr_assert(p == 0 && u == y[0] && v == y[1], "text line 0: %d %.17g %.17g", p, u, v);
    fclose(f);
    free(y);
    vstring_free(&sim);
}

Test(cli, default_steps_without_a_dataset)
{
    char out[8192];
    char *argv[] = {"lab05", "--gen", "sine:1x5:0", "--serial", NULL};
    int status = run(out, sizeof out, argv);
    cr_assert_eq(status, 0, "output:\n%s", out);
    cr_assert(strstr(out, "1 x 10 cells, 1000 steps (5 mass points"), "%s", out);
}

Test(cli, unknown_variant_is_refused_even_for_serial)
{
    char *argv[] = {"lab05", "--serial", "--variant", "bogus", "--dataset", "string-pluck-1", NULL};
    expect_error(argv, 2, "--variant bogus: unknown variant");
}

Test(cli, diamond_of_the_wrong_height_is_refused_before_any_gpu_probe)
{
    char *argv[] = {"lab05", "--gpu", "--tile", "128x32", "--dataset", "no-such-dataset", NULL};
    expect_error(argv, 2, "W/2 steps high");
}

Test(cli, baseline_tile_must_be_one_step)
{
    char *argv[] = {"lab05", "--gpu", "--variant", "linear", "--tile", "256x8", "--dataset",
                    "string-pluck-1", NULL};
    expect_error(argv, 2, "one step per launch");
}

Test(cli, two_dimensional_spec_is_refused)
{
    char *argv[] = {"lab05", "--serial", "--gen", "pluck:3x100:1", NULL};
    expect_error(argv, 1, "the string is 1-D: write pluck:1x100:1");
}

Test(cli, png_shows_the_string, .init = lk_tmpdir_make, .fini = lk_tmpdir_remove)
{
    char out[8192];
    const char *png = lk_tmp_path("run.png");
    char *argv[] = {"lab05", "--serial", "--dataset", "string-pluck-odd", "--png", (char *)png, NULL};
    cr_assert_eq(run(out, sizeof out, argv), 0, "%s", out);
    FILE *f = fopen(png, "rb");
    cr_assert_not_null(f, "no picture written");
    unsigned char magic[8];
    cr_assert_eq(fread(magic, 1, 8, f), 8);
    cr_assert(magic[1] == 'P' && magic[2] == 'N' && magic[3] == 'G', "not a PNG");
    fclose(f);
}

Test(cli, a_dataset_of_another_model_is_refused)
{
    char *argv[] = {"lab05", "--serial", "--dataset", "sciddicat-tiny", NULL};
    expect_error(argv, 1, "sciddicat-tiny");
}

Test(cli, help_lists_the_variants)
{
    char out[8192];
    char *argv[] = {"lab05", "-h", NULL};
    cr_assert_eq(run(out, sizeof out, argv), 0, "%s", out);
    cr_assert(strstr(out, "diamond") && strstr(out, "honeycomb") && strstr(out, "linear") &&
              strstr(out, "persistent"), "%s", out);
}

/* ---- the stretch model: a Brusselator input ------------------------------------------- */

Test(cli, brusselator_dataset_serial_run_prints_the_manifest_hash)
{
    char manifest[4096], md5[33], out[8192];
    bruss sim;
    lk_error err;
    lk_test_path(manifest, sizeof manifest, "datasets/MANIFEST");
    LK_ASSERT_OK(bruss_load_dataset(manifest, "bruss-odd", &sim, NULL, md5, &err), &err);
    bruss_free(&sim);
    char *argv[] = {"lab05", "--dataset", "bruss-odd", "--serial", "--json", NULL};
    int status = run(out, sizeof out, argv);
    cr_assert_eq(status, 0, "output:\n%s", out);
    cr_assert(strstr(out, md5), "the md5 %s of the manifest is not in the output:\n%s", md5, out);
    cr_assert(strstr(out, "\"rows\":97,\"cols\":194,\"steps\":61"), "%s", out);
}

/* The grader's form on the stretch: --gen bruss:MxM:SEED --steps S --bin FILE. */
Test(cli, generated_brusselator_bin_file_md5_is_the_hash, .init = lk_tmpdir_make,
     .fini = lk_tmpdir_remove)
{
    char out[8192], file_md5[33], want[33];
    lk_error err;
    const char *bin = lk_tmp_path("b.bin");
    char *argv[] = {"lab05", "--gen", "bruss:9x9:3", "--steps", "17", "--serial", "--bin",
                    (char *)bin, NULL};
    cr_assert_eq(run(out, sizeof out, argv), 0, "output:\n%s", out);
    bruss_spec spec = {9, 3};
    bruss sim;
    LK_ASSERT_OK(bruss_generate(&spec, &sim, &err), &err);
    double y[2 * 81];
    LK_ASSERT_OK(bruss_serial(&sim, 17, y, &err), &err);
    LK_ASSERT_OK(bruss_md5(y, 9, want, &err), &err);
    LK_ASSERT_OK(lk_md5_file(bin, file_md5, &err), &err);
    cr_assert_str_eq(file_md5, want);
    cr_assert(strstr(out, want), "%s", out);
    cr_assert(strstr(out, "9 x 18 cells, 17 steps (Brusselator 9 x 9"), "%s", out);
    bruss_free(&sim);
}

Test(cli, brusselator_side_out_of_range_is_refused)
{
    char *argv[] = {"lab05", "--serial", "--gen", "bruss:1x1:0", NULL};
    expect_error(argv, 1, "'1' is out of range");
    char *big[] = {"lab05", "--serial", "--gen", "bruss:20000x20000:0", NULL};
    expect_error(big, 1, "bruss:MxM:SEED");
}

Test(cli, brusselator_bad_specs_are_refused)
{
    char *rect[] = {"lab05", "--serial", "--gen", "bruss:4x6:1", NULL};
    expect_error(rect, 1, "the Brusselator grid is square");
    char *noseed[] = {"lab05", "--serial", "--gen", "bruss:4x4", NULL};
    expect_error(noseed, 1, "malformed");
}

Test(cli, string_variant_on_a_brusselator_is_refused)
{
    char *argv[] = {"lab05", "--serial", "--variant", "diamond", "--dataset", "bruss-tiny", NULL};
    expect_error(argv, 2, "use --variant bruss or bruss-linear");
    char *other[] = {"lab05", "--serial", "--variant", "bruss", "--dataset", "string-pluck-1", NULL};
    expect_error(other, 2, "the input is a string");
}

Test(cli, brusselator_tile_is_checked)
{
    char *argv[] = {"lab05", "--gpu", "--variant", "bruss-linear", "--tile", "256x4", "--gen",
                    "bruss:5x5:0", NULL};
    expect_error(argv, 2, "one step per launch");
}
