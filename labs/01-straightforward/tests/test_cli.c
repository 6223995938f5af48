/* Bad input through the real command line: every case must exit non-zero with a message
   naming the file, the line and what was expected; never crash. */
#include <stdlib.h>

#include "lab.h"
#include "labkit/testing.h"


#define HEADER "ncols 3\nnrows 3\nxllcorner 0\nyllcorner 0\ncellsize 10\nNODATA_value -9999\n"
#define GOOD_BODY "1 2 3\n4 5 6\n7 8 9\n"

/* Run the serial driver on header/dem/source texts; expect exit 1 and every phrase. */
static void expect_rejected(const char *header, const char *dem, const char *source,
                            const char *bad_file, const char *phrase)
{
    const char *h = lk_tmp_put("header.txt", header), *d = lk_tmp_put("dem.txt", dem), *s = lk_tmp_put("source.txt", source);
    char *argv[] = {"lab01", "--serial", "--steps", "2", (char *)h, (char *)d, (char *)s, NULL};
    char out[4096];
    int status = lk_run_captured(lk_lab_main, 7, argv, out, sizeof out);
    cr_assert_eq(status, 1, "expected exit status 1, got %d; output:\n%s", status, out);
    char path[512];
    snprintf(path, sizeof path, "%s/%s", lk_tmpdir, bad_file);
    cr_assert(strstr(out, path), "the message does not name %s:\n%s", path, out);
    cr_assert(strstr(out, phrase), "the message lacks '%s':\n%s", phrase, out);
}

Test(inputs, good_files_run, .init = lk_tmpdir_make, .fini = lk_tmpdir_remove)
{
    const char *h = lk_tmp_put("header.txt", HEADER), *d = lk_tmp_put("dem.txt", GOOD_BODY),
               *s = lk_tmp_put("source.txt", "0 0 0\n0 1 0\n0 0 0\n");
    char *argv[] = {"lab01", "--serial", "--steps", "2", (char *)h, (char *)d, (char *)s, NULL};
    char out[4096];
    int status = lk_run_captured(lk_lab_main, 7, argv, out, sizeof out);
    cr_assert_eq(status, 0, "output:\n%s", out);
    cr_assert(strstr(out, "md5"), "%s", out);
}

Test(inputs, truncated_body, .init = lk_tmpdir_make, .fini = lk_tmpdir_remove)
{
    expect_rejected(HEADER, "1 2 3\n4 5 6\n7 8\n", GOOD_BODY, "dem.txt:3", "after 8 of 9 values");
}
Test(inputs, wrong_header_key, .init = lk_tmpdir_make, .fini = lk_tmpdir_remove)
{
    expect_rejected("ncols 3\nnrows 3\nxllcorner 0\nyllcorner 0\ncelsize 10\n", GOOD_BODY,
                    GOOD_BODY, "header.txt:5", "celsize");
}
Test(inputs, non_numeric_token, .init = lk_tmpdir_make, .fini = lk_tmpdir_remove)
{
    expect_rejected(HEADER, GOOD_BODY, "0 0 0\n0 x1 0\n0 0 0\n", "source.txt:2", "x1");
}
Test(inputs, size_mismatch_too_many_values, .init = lk_tmpdir_make, .fini = lk_tmpdir_remove)
{
    expect_rejected(HEADER, "1 2 3 4\n5 6 7 8\n9 10 11 12\n", GOOD_BODY, "dem.txt:3:3", "extra token '10'");
}
Test(inputs, empty_file, .init = lk_tmpdir_make, .fini = lk_tmpdir_remove)
{
    expect_rejected("", GOOD_BODY, GOOD_BODY, "header.txt", "empty");
}
Test(inputs, nan_value, .init = lk_tmpdir_make, .fini = lk_tmpdir_remove)
{
    expect_rejected(HEADER, "1 2 3\n4 nan 6\n7 8 9\n", GOOD_BODY, "dem.txt:2", "nan");
}
/* Two of the course layout's three files: the message says that layout takes three. */
Test(inputs, two_of_the_three_course_files, .init = lk_tmpdir_make, .fini = lk_tmpdir_remove)
{
    const char *h = lk_tmp_put("header.txt", HEADER), *d = lk_tmp_put("dem.txt", GOOD_BODY);
    char *argv[] = {"lab01", "--serial", (char *)h, (char *)d, NULL};
    char out[4096];
    int status = lk_run_captured(lk_lab_main, 4, argv, out, sizeof out);
    cr_assert_eq(status, 1, "exit %d:\n%s", status, out);
    cr_assert(strstr(out, "the course layout takes three: HEADER DEM SOURCE"), "%s", out);
}

Test(inputs, missing_file, .init = lk_tmpdir_make, .fini = lk_tmpdir_remove)
{
    const char *h = lk_tmp_put("header.txt", HEADER), *d = lk_tmp_put("dem.txt", GOOD_BODY);
    char missing[512];
    snprintf(missing, sizeof missing, "%s/no-such-source.txt", lk_tmpdir);
    char *argv[] = {"lab01", "--serial", (char *)h, (char *)d, missing, NULL};
    char out[4096];
    int status = lk_run_captured(lk_lab_main, 5, argv, out, sizeof out);
    cr_assert_eq(status, 1, "exit %d:\n%s", status, out);
    cr_assert(strstr(out, missing) && strstr(out, "No such file"), "%s", out);
}
Test(inputs, bad_option_value_is_a_usage_error)
{
    char *argv[] = {"lab01", "--steps", "-3", "--dataset", "sciddicat-tiny", NULL};
    char out[4096];
    int status = lk_run_captured(lk_lab_main, 5, argv, out, sizeof out);
    cr_assert_eq(status, 2, "exit %d:\n%s", status, out);
    cr_assert(strstr(out, "--steps") && strstr(out, "-3"), "%s", out);
}

/* Options this lab does not use are refused, not silently ignored. */
Test(inputs, tile_and_variant_are_not_options_of_lab01)
{
    char *tile[] = {"lab01", "--serial", "--tile", "32x8", "--dataset", "sciddicat-tiny", NULL};
    char out[4096];
    int status = lk_run_captured(lk_lab_main, 6, tile, out, sizeof out);
    cr_assert_eq(status, 2, "exit %d:\n%s", status, out);
    cr_assert(strstr(out, "--tile: lab 01-straightforward has no tiles"), "%s", out);
    char *variant[] = {"lab01", "--serial", "--variant", "fast", "--dataset", "sciddicat-tiny",
                       NULL};
    status = lk_run_captured(lk_lab_main, 6, variant, out, sizeof out);
    cr_assert_eq(status, 2, "exit %d:\n%s", status, out);
    cr_assert(strstr(out, "--variant fast: lab 01-straightforward has no variants"), "%s", out);
}

/* The grader's timed call (--no-md5) hashes its --bin file itself: the driver leaves its md5s
   out (null) rather than spend seconds on a large grid; without the option it prints them. */
Test(inputs, no_md5_leaves_the_hash_to_the_caller, .init = lk_tmpdir_make,
     .fini = lk_tmpdir_remove)
{
    /* Not LK_REQUIRE_GPU(): CUDA set up in this process would not work in the forked driver. */
    char bin[512], out[8192];
    snprintf(bin, sizeof bin, "%s/out.bin", lk_tmpdir);
    char *with_bin[] = {"lab01", "--gpu", "--once", "--no-md5", "--dataset", "sciddicat-odd",
                        "--steps", "20", "--bin", bin, "--json", NULL};
    int status = lk_run_captured(lk_lab_main, 11, with_bin, out, sizeof out);
    if (status == 1 && strstr(out, LK_NO_GPU))
        cr_skip_test("%s", LK_NO_GPU);
    cr_assert_eq(status, 0, "exit %d:\n%s", status, out);
    cr_assert(strstr(out, "\"md5\":null,\"md5_bin\":null"), "%s", out);
    cr_assert(access(bin, R_OK) == 0, "--bin wrote no file:\n%s", out);
    char *with_md5[] = {"lab01", "--gpu", "--once", "--dataset", "sciddicat-odd", "--steps",
                        "20", "--bin", bin, "--json", NULL};
    status = lk_run_captured(lk_lab_main, 10, with_md5, out, sizeof out);
    cr_assert_eq(status, 0, "exit %d:\n%s", status, out);
    cr_assert(strstr(out, "\"md5\":\"") && !strstr(out, "\"md5\":null"), "%s", out);
}

/* The grader's serial timing runs need only the time. */
Test(inputs, no_md5_serial_run_prints_no_hash)
{
    char out[8192];
    char *args[] = {"lab01", "--serial", "--no-md5", "--dataset", "sciddicat-odd", "--steps",
                    "5", "--json", NULL};
    int status = lk_run_captured(lk_lab_main, 8, args, out, sizeof out);
    cr_assert_eq(status, 0, "exit %d:\n%s", status, out);
    cr_assert(strstr(out, "\"serial\":{\"seconds\":") && strstr(out, "\"md5\":null}"), "%s", out);
    cr_assert(strstr(out, "md5 not computed (--no-md5)"), "%s", out);
    args[2] = "--json"; /* without --no-md5 */
    args[7] = NULL;
    status = lk_run_captured(lk_lab_main, 7, args, out, sizeof out);
    cr_assert_eq(status, 0, "exit %d:\n%s", status, out);
    cr_assert(!strstr(out, "\"md5\":null") && strstr(out, "\"md5\":\""), "%s", out);
}
