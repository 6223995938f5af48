#include <cuda_runtime_api.h>

#include "labkit/harness.h"
#include "labkit/testing.h"

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
