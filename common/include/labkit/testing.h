/**
 * @file testing.h
 * @brief Helpers shared by every Criterion suite of the kit (include only from tests).
 *
 * Tests are compiled with -DLK_TOP_DIR="<kit root>" so they find datasets wherever the
 * kit is unpacked.
 */
#ifndef LABKIT_TESTING_H
#define LABKIT_TESTING_H

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "labkit/compare.h"
#include "labkit/cuda_check.h"
#include "labkit/error.h"

#ifndef LK_TOP_DIR
#error "compile tests with -DLK_TOP_DIR='\"path to the kit\"'"
#endif

/** Skip the current test, with the reason, when no CUDA device is usable. */
#define LK_REQUIRE_GPU()                                                                  \
    do {                                                                                  \
        char lk_reason_[256];                                                             \
        if (!lk_gpu_available(lk_reason_, sizeof lk_reason_))                             \
            cr_skip_test("no CUDA device: %s", lk_reason_);                               \
    } while (0)

/** Fail the current test with the message of a failed kit call. */
#define LK_ASSERT_OK(call, err)                                                           \
    do {                                                                                  \
        if ((call) != 0)                                                                  \
            cr_assert_fail("%s failed: %s", #call, (err)->msg);                                 \
    } while (0)

/** Absolute path of a file under the kit root, in a static buffer per call site. */
static inline const char *lk_test_path(char *buf, size_t size, const char *rel)
{
    snprintf(buf, size, "%s/%s", LK_TOP_DIR, rel);
    return buf;
}

/**
 * Assert that @p got equals @p expected bit for bit; on mismatch fail with the count, the
 * first differing cells (row, col, expected, got) and the max abs/rel difference.
 */
static inline void lk_assert_grid_eq(const double *expected, const double *got, int rows,
                                     int cols, const char *what)
{
    lk_compare c;
    if (lk_compare_grids(expected, got, rows, cols, 8, &c) == 0)
        return;
    char buf[4096];
    lk_compare_format(buf, sizeof buf, &c, rows, cols, what);
    cr_assert_fail("%s", buf);
}

#endif
