#include <cuda_runtime_api.h>

#include "labkit/harness.h"
#include "labkit/png.h"
#include "labkit/testing.h"

#include <criterion/redirect.h>

/* A lab with no model: the test itself plays main.c, loading a grid and answering calls. */
static const lk_lab harness_lab = {.name = "00-harness", .title = "harness test",
                                   .gen_help = "anything"};

static int page_locked(const void *p)
{
    struct cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return a.type == cudaMemoryTypeHost;
}

typedef struct pinning_seen {
    int calls, out_locked, input_locked, input_locked_after;
} pinning_seen;

/* Runs `--gpu --repeat 2` on a rows x cols grid with one input; counts the calls that found
   their output and the input page-locked, and whether the input still is once they end. */
static pinning_seen run_calls(int rows, int cols)
{
    char *argv[] = {"test_harness", "--gpu", "--gen", "any", "--repeat", "2", NULL};
    lk_run run;
    cr_assert_eq(lk_run_start(&run, &harness_lab, 6, argv), 0, "%s", run.err.msg);
    run.steps = 1;
    const size_t n = (size_t)rows * cols;
    double *input = calloc(n, sizeof *input);
    cr_assert_not_null(input);
    const lk_output_shape shape = {.rows = rows, .cols = cols, .fields = 1,
                                   .bytes_per_cell_step = 16, .copy_bytes = 2 * n * sizeof(double)};
    const void *inputs[1] = {input};
    const size_t bytes[1] = {n * sizeof(double)};
    cr_assert_eq(lk_run_loaded(&run, &shape, 1, inputs, bytes), 0, "%s", run.err.msg);
    pinning_seen seen = {0};
    for (lk_gpu_call *c; (c = lk_run_next_gpu_call(&run)) != NULL;) {
        seen.calls++;
        seen.out_locked += page_locked(c->out);
        seen.input_locked += page_locked(input);
        memset(c->out, 0, run.len * sizeof(double));
    }
    seen.input_locked_after = page_locked(input);
    cr_assert_eq(lk_run_finish(&run), 0, "the harness failed: %s", run.err.msg);
    free(input);
    return seen;
}

Test(harness, page_locks_large_buffers_for_the_calls_and_releases_them_after)
{
    LK_REQUIRE_GPU();
    const pinning_seen seen = run_calls(512, 512); /* 2 MiB */
    cr_assert_eq(seen.calls, 3, "a checked call and two timed ones expected, got %d", seen.calls);
    cr_assert_eq(seen.out_locked, seen.calls, "output page-locked in %d of %d calls",
                 seen.out_locked, seen.calls);
    cr_assert_eq(seen.input_locked, seen.calls, "input page-locked in %d of %d calls",
                 seen.input_locked, seen.calls);
    cr_assert_eq(seen.input_locked_after, 0,
                 "the input is still registered after the last call: the lab frees it next");
}

Test(harness, leaves_small_buffers_pageable)
{
    LK_REQUIRE_GPU();
    const pinning_seen seen = run_calls(16, 16); /* 2 KiB: may share a page */
    cr_assert_eq(seen.calls, 3);
    cr_assert_eq(seen.out_locked + seen.input_locked, 0,
                 "buffers under 1 MiB should stay pageable (%d, %d)", seen.out_locked,
                 seen.input_locked);
}

/* --list-datasets prints the lab's declared dataset names, one a line, and runs nothing (make
   bench-profile reads them); an unknown list is a usage error. */
static const lk_lab listed_lab = {.name = "00-listed", .title = "list test", .gen_help = "any",
                                  .standard_dataset = "std-set", .bench_dataset = "big-set"};

static int list_main(int argc, char **argv)
{
    lk_run run;
    if (lk_run_start(&run, &listed_lab, argc, argv) != 0)
        return run.status;
    return lk_run_finish(&run);
}

Test(harness, list_datasets_prints_the_labs_declared_names)
{
    char out[256];
    char *bench[] = {"test_harness", "--list-datasets", "bench", NULL};
    cr_assert_eq(lk_run_captured(list_main, 3, bench, out, sizeof out), 0, "%s", out);
    cr_assert_str_eq(out, "big-set\n");
    char *standard[] = {"test_harness", "--list-datasets", "standard", NULL};
    cr_assert_eq(lk_run_captured(list_main, 3, standard, out, sizeof out), 0, "%s", out);
    cr_assert_str_eq(out, "std-set\n");
    char *unknown[] = {"test_harness", "--list-datasets", "hidden", NULL};
    cr_assert_eq(lk_run_captured(list_main, 3, unknown, out, sizeof out), 2, "%s", out);
    cr_assert(strstr(out, "--list-datasets hidden: no such list: use bench or standard"), "%s",
              out);
}

/* --diff-png draws the first output field that differs, as lk_png_diff does; says why it drew
   nothing for identical results or a lab judged within a tolerance. */
static size_t judge_nothing(const void *ctx, const double *got, char *buf, size_t size)
{
    return 0;
}

static int same_bytes(const char *a, const char *b)
{
    size_t na = 0, nb = 0;
    char *pa = lk_read_whole(a, &na), *pb = lk_read_whole(b, &nb);
    const int same = na == nb && memcmp(pa, pb, na) == 0;
    free(pa);
    free(pb);
    return same;
}

/* Each case says why on stdout: captured, so that make check shows no error that is expected. */
static void tmpdir_and_stdout(void)
{
    lk_tmpdir_make();
    cr_redirect_stdout();
}

Test(harness, diff_png_draws_the_first_field_that_differs, .init = tmpdir_and_stdout,
     .fini = lk_tmpdir_remove)
{
    enum { R = 5, C = 7, G = 1, W = C + 2 * G, H = R + 2 * G, FIELDS = 3 };
    static double expected[FIELDS * H * W], got[FIELDS * H * W];
    for (int k = 0; k < FIELDS * H * W; k++)
        expected[k] = got[k] = 0.25 * k;
    got[1 * H * W + 3 * W + 4] += 1.0; /* the second field differs, at one cell */
    got[2 * H * W + 2 * W + 2] = -1.0; /* and the third, which is not drawn */
    char path[512], direct[512];
    snprintf(path, sizeof path, "%s", lk_tmp_path("diff.png"));
    snprintf(direct, sizeof direct, "%s", lk_tmp_path("direct.png"));
    lk_run run = {0};
    run.opt.diff_png = path;
    run.shape = (lk_output_shape){.rows = R, .cols = C, .fields = FIELDS, .ghost = G};
    run.expected = expected;
    run.gpu = got;
    run.r.compared = 1;
    run.r.match = 0;
    cr_assert_eq(lk_run_write_diff_png(&run), 0);
    lk_error err;
    LK_ASSERT_OK(lk_png_diff(direct, expected + H * W, got + H * W, H, W, &err), &err);
    cr_assert(same_bytes(path, direct), "%s is not the second field's difference", path);

    remove(path);
    run.r.match = 1; /* identical: nothing drawn */
    cr_assert_eq(lk_run_write_diff_png(&run), 0);
    cr_assert(access(path, F_OK) != 0, "a picture for identical results");
    run.r.match = 0;
    run.shape.judge = judge_nothing; /* a tolerance lab: nothing drawn */
    cr_assert_eq(lk_run_write_diff_png(&run), 0);
    cr_assert(access(path, F_OK) != 0, "a bit-level picture for a lab judged within a tolerance");
    run.shape.judge = NULL;
    run.opt.diff_png = "/nonexistent-folder/diff.png"; /* unwritable: said, and -1 */
    cr_assert_eq(lk_run_write_diff_png(&run), -1);

    fflush(stdout);
    char said[4096];
    size_t n = fread(said, 1, sizeof said - 1, cr_get_redirected_stdout());
    said[n] = '\0';
    static const char *const why[] = {
        "diff.png: output field 2 of 3, red where it differs",
        "diff.png not written: the results are identical",
        "diff.png not written: this lab's results are judged within a tolerance",
        "/nonexistent-folder/diff.png not written: /nonexistent-folder/diff.png: cannot create"};
    for (size_t i = 0; i < sizeof why / sizeof why[0]; i++)
        cr_assert(strstr(said, why[i]), "no \"%s\" in what it said:\n%s", why[i], said);
}
