/* The driver's command line: inputs, variants, output files and error messages, through
   the real main.c (serial runs: no GPU needed). */
#include "helpers.h"
#include "labkit/grid_io.h"

static int run_main(char **argv, char *out, size_t size)
{
    int argc = 0;
    while (argv[argc])
        argc++;
    return lk_run_captured(lk_lab_main, argc, argv, out, size);
}

static void expect_usage_error(char **argv, const char *phrase)
{
    char out[4096];
    int status = run_main(argv, out, sizeof out);
    cr_assert_eq(status, 2, "expected exit status 2 (usage), got %d; output:\n%s", status, out);
    cr_assert(strstr(out, phrase), "the message lacks '%s':\n%s", phrase, out);
}

static void expect_error(char **argv, const char *phrase)
{
    char out[4096];
    int status = run_main(argv, out, sizeof out);
    cr_assert_eq(status, 1, "expected exit status 1, got %d; output:\n%s", status, out);
    cr_assert(strstr(out, phrase), "the message lacks '%s':\n%s", phrase, out);
}

Test(cli, serial_run_of_a_dataset_prints_its_md5)
{
    char out[4096];
    char *argv[] = {"lab06", "--serial", "--dataset", "reduce-debris-odd", NULL};
    cr_assert_eq(run_main(argv, out, sizeof out), 0, "%s", out);
    cr_assert(strstr(out, "md5 f4db873cde12d7ef196b0fdf3b1bf6e7"), "%s", out);
}

/* The grader's plausibility bound counts the values a sum reads, not its 7 outputs. */
Test(cli, the_result_line_gives_the_values_read_as_the_steps_points)
{
    char out[4096];
    char *argv[] = {"lab06", "--serial", "--gen", "debris:33x65:1", "--json", NULL};
    cr_assert_eq(run_main(argv, out, sizeof out), 0, "%s", out);
    cr_assert(strstr(out, "\"rows\":1,\"cols\":7,\"points\":2145"), "%s", out);
}

Test(cli, bad_generator_specs)
{
    char *a[] = {"lab06", "--serial", "--gen", "lava:10x10:1", NULL};
    expect_error(a, "unknown kind 'lava'");
    char *b[] = {"lab06", "--serial", "--gen", "debris:10x10", NULL};
    expect_error(b, "KIND:ROWSxCOLS:SEED");
    char *c[] = {"lab06", "--serial", "--dataset", "no-such-set", NULL};
    expect_error(c, "no-such-set");
}

Test(cli, variants_must_fit_the_dataset)
{
    char *a[] = {"lab06", "--serial", "--gen", "runge:5x9:0", "--variant", "tree", NULL};
    expect_usage_error(a, "Lagrange dataset");
    char *b[] = {"lab06", "--serial", "--gen", "debris:5x9:1", "--variant", "lagrange", NULL};
    expect_usage_error(b, "--variant lagrange interpolates");
    char *c[] = {"lab06", "--serial", "--gen", "debris:5x9:1", "--variant", "fast", NULL};
    expect_usage_error(c, "unknown variant");
    char *d[] = {"lab06", "--serial", "--gen", "debris:5x9:1", "--tile", "8x8", NULL};
    expect_usage_error(d, "--tile");
}

Test(cli, png_of_a_field_but_not_of_a_polynomial, .init = lk_tmpdir_make,
     .fini = lk_tmpdir_remove)
{
    char png[512], out[4096];
    snprintf(png, sizeof png, "%s", lk_tmp_path("f.png"));
    char *a[] = {"lab06", "--serial", "--gen", "debris:97x131:7", "--png", png, NULL};
    cr_assert_eq(run_main(a, out, sizeof out), 0, "%s", out);
    cr_assert_eq(access(png, F_OK), 0, "no %s", png);
    char *b[] = {"lab06", "--serial", "--gen", "runge:5x9:0", "--png", png, NULL};
    expect_error(b, "--png");
}

/* --out writes the results as text; --bin the judged form: the reference judged against
   itself is 2 everywhere. */
Test(cli, out_and_bin_files, .init = lk_tmpdir_make, .fini = lk_tmpdir_remove)
{
    char txt[512], bin[512], out[4096];
    snprintf(txt, sizeof txt, "%s", lk_tmp_path("r.txt"));
    snprintf(bin, sizeof bin, "%s", lk_tmp_path("r.bin"));
    char *argv[] = {"lab06", "--serial", "--gen", "debris:97x131:7", "--out", txt, "--bin",
                    bin, NULL};
    cr_assert_eq(run_main(argv, out, sizeof out), 0, "%s", out);
    double w[REDUCE_NOUT];
    lk_error err;
    LK_ASSERT_OK(lk_read_binary(bin, w, REDUCE_NOUT, &err), &err);
    for (int k = 0; k < REDUCE_NOUT; k++)
        cr_assert_eq(w[k], 2.0, "value %d of --bin is %g", k, w[k]);
    FILE *f = fopen(txt, "r");
    cr_assert_not_null(f);
    char text[1024] = "";
    size_t got = fread(text, 1, sizeof text - 1, f);
    text[got] = '\0';
    fclose(f);
    cr_assert(strstr(text, "sum      319.74599999999998"), "%s", text);
    cr_assert(strstr(text, "count    88"), "%s", text);
    cr_assert(strstr(text, "bound"), "%s", text);
}

/* The naive serial Lagrange values are within the bound of the gold ones: --bin near 2. */
Test(cli, lagrange_bin_is_near_two, .init = lk_tmpdir_make, .fini = lk_tmpdir_remove)
{
    char bin[512], out[4096];
    snprintf(bin, sizeof bin, "%s", lk_tmp_path("y.bin"));
    char *argv[] = {"lab06", "--serial", "--dataset", "lagrange-runge", "--bin", bin, NULL};
    cr_assert_eq(run_main(argv, out, sizeof out), 0, "%s", out);
    double w[301];
    lk_error err;
    LK_ASSERT_OK(lk_read_binary(bin, w, 301, &err), &err);
    for (int s = 0; s < 301; s++)
        cr_assert(fabs(w[s] - 2.0) <= 0.5, "point %d: %g", s, w[s]);
}

Test(cli, gpu_run_without_a_gpu_is_explained)
{
    char reason[256];
    if (lk_gpu_available(reason, sizeof reason))
        cr_skip_test("this machine has a GPU");
    char *a[] = {"lab06", "--gen", "debris:5x9:1", NULL};
    expect_error(a, "no GPU");
}
