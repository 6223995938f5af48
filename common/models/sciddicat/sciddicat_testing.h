/**
 * @file sciddicat_testing.h
 * @brief Criterion helpers for the SciddicaT labs: run a GPU entry point on a dataset and
 * compare it with the serial reference bit for bit (include only from tests).
 */
#ifndef LABKIT_SCIDDICAT_TESTING_H
#define LABKIT_SCIDDICAT_TESTING_H

#include "labkit/grid_io.h"
#include "sciddicat/sciddicat.h"
#include "labkit/testing.h"

/** Load manifest dataset @p name (spec and files as the manifest says); fail the test if not. */
static inline void lk_test_load_dataset(const char *name, sciddicat *sim, int *steps,
                                        char md5[33])
{
    char manifest[4096];
    lk_error err;
    lk_test_path(manifest, sizeof manifest, "datasets/MANIFEST");
    LK_ASSERT_OK(sciddicat_load_dataset(manifest, name, sim, steps, md5, &err), &err);
}

/** A lab's GPU code as the tests call it: @p ctx carries its launch configuration. */
typedef int (*sciddicat_test_fn)(const void *ctx, const sciddicat *sim, int steps,
                                    double *h_out, lk_error *err);

/**
 * Run @p fn (with @p ctx) on @p sim for @p steps steps, with the output and every device
 * allocation poisoned; fail with the function's message if it reports an error; compare
 * with the serial reference (or, when @p expected_md5 is given, first with that hash, and
 * run serial only to explain a mismatch).
 */
static inline void lk_test_gpu_matches_serial(sciddicat_test_fn fn, const void *ctx,
                                              const sciddicat *sim, int steps,
                                              const char *expected_md5, const char *what)
{
    const size_t n = (size_t)sim->rows * sim->cols;
    double *got = (double *)malloc(n * sizeof *got);
    double *expected = (double *)malloc(n * sizeof *expected);
    cr_assert(got && expected, "out of memory");
    lk_error err;
    lk_error_clear(&err);
    lk_poison(got, n);
    lk_poison_device_allocations(1);
    int rc = fn(ctx, sim, steps, got, &err);
    lk_poison_device_allocations(0);
    if (rc != 0)
        cr_assert_fail("%s: your GPU code returned an error: %s", what, err.msg[0] ? err.msg
                 : "(no message: fill err, e.g. with LK_CUDA_TRY)");
    if (expected_md5) {
        char hex[33];
        LK_ASSERT_OK(lk_course_text_md5(got, sim->rows, sim->cols, hex, &err), &err);
        if (strcmp(hex, expected_md5) == 0) {
            free(got);
            free(expected);
            return;
        }
    }
    LK_ASSERT_OK(sciddicat_serial(sim, steps, expected, NULL, &err), &err);
    char label[256];
    snprintf(label, sizeof label, "%s, %d steps: thickness h", what, steps);
    lk_assert_grid_eq(expected, got, sim->rows, sim->cols, label);
    if (expected_md5)
        cr_assert_fail("%s: the result equals the serial reference run here but not the manifest "
                 "hash %s: the serial reference itself changed", label, expected_md5);
    free(got);
    free(expected);
}

#endif
