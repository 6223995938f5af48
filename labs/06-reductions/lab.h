/**
 * @file labs/06-reductions/lab.h
 * @brief Lab 06 contract between the harness and your `kernels.cu` (read-only).
 *
 * Part A: reduce a field of doubles (a SciddicaT thickness grid, a shallow-water height, or
 * an adversarial set) to its sum, in five variants of the reduction ladder, and to its
 * maximum, the count of the cells above a threshold and their bounding box, in one pass.
 * Part B: evaluate the Lagrange interpolating polynomial at S points, each value a sum
 * over the basis of products over the nodes.
 *
 * The given code (given.cu) owns the device buffers and the copies; it calls your
 * functions, which only launch work on the default stream (kernels, cudaMemsetAsync,
 * cudaMemcpyAsync between device buffers): no allocation, no synchronisation, no copy to the
 * host. For a field of n values one call of the driver runs
 *
 * @code
 *   lab06_stats(d_x, ...)              once: max, count, bounding box       (you)
 *   lab06_sum(variant, d_x, ...)       1 + steps times: the timed reduction (you)
 * @endcode
 *
 * Numerical policy (README.md): max, count and bounding box are exact and do not depend on
 * the order of the reduction; the sum is judged against a compensated reference with the
 * bound reduce_sum_bound(). The variants tree, shuffle, gridstride and singlepass must
 * give the same bits on every call on the same device; atomic may not.
 */
#ifndef LAB06_LAB_H
#define LAB06_LAB_H

#include <stddef.h>

#include "labkit/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The rungs of the reduction ladder (`--variant NAME`). */
typedef enum lab06_variant {
    LAB06_TREE = 0,       /**< Shared-memory tree in each block, one pass per level. */
    LAB06_SHUFFLE = 1,    /**< Warp shuffles in each block, one pass per level. */
    LAB06_GRIDSTRIDE = 2, /**< Several values per thread (grid-stride loop), two kernels. */
    LAB06_SINGLEPASS = 3, /**< One kernel: the last block to finish adds the partial sums. */
    LAB06_ATOMIC = 4      /**< One atomicAdd per block: not reproducible bit for bit. */
} lab06_variant;

/** Number of variants of lab06_sum(). */
#define LAB06_NVARIANTS 5

/** Doubles of the scratch buffer @p d_work of lab06_sum() for @p n values: enough for one
    partial sum per 32 values over all the passes of a tree. */
#define LAB06_WORK_DOUBLES(n) ((size_t)(n) / 16 + 4096)

/** What lab06_stats() writes (device memory). */
typedef struct lab06_field_stats {
    double max;               /**< Largest value; NaN when any value is NaN. */
    unsigned long long count; /**< Values above the threshold (a NaN is not above it). */
    int row_min;              /**< Bounding box of those cells: first row, rows when none. */
    int row_max;              /**< Last row, -1 when none. */
    int col_min;              /**< First column, cols when none. */
    int col_max;              /**< Last column, -1 when none. */
} lab06_field_stats;

/* ---------------------------------------------------------------------------------------
 * Your side: kernels.cu defines these. Pointers named d_* are device pointers owned by the
 * caller. Return 0, or -1 with @p err filled (check every launch with LK_LAUNCH_TRY and
 * every runtime call with LK_CUDA_TRY).
 * ------------------------------------------------------------------------------------- */

/**
 * Sum of @p d_x[0..n) into *@p d_sum, by the method of @p variant; n >= 1. @p d_work holds
 * LAB06_WORK_DOUBLES(n) doubles of scratch (its contents on entry are garbage);
 * *@p d_counter is 0 on the first call and must be 0 again when the work of a call ends
 * (the single-pass variant's ticket counter). @p d_x is 16-byte aligned.
 */
int lab06_sum(lab06_variant variant, const double *d_x, size_t n, double *d_work,
              unsigned int *d_counter, double *d_sum, lk_error *err);

/**
 * Max, count and bounding box of the values of @p d_x (rows x cols, row-major) above
 * @p threshold into *@p d_stats (its contents on entry are garbage).
 */
int lab06_stats(const double *d_x, int rows, int cols, double threshold,
                lab06_field_stats *d_stats, lk_error *err);

/**
 * Lagrange interpolation: @p d_ys[s] = sum_j y_j prod_{i != j} (xs_s - x_i) / (x_j - x_i)
 * for s < S, with @p n1 = n + 1 nodes @p d_x (distinct) and data @p d_y; 1 <= n1 <= 4096.
 * Each factor, and each product in the order i = 0..n, as in serial.c; the sum over j in
 * any order (the tolerance is lk_lagrange_bound()).
 */
int lab06_lagrange(const double *d_x, const double *d_y, int n1, const double *d_xs,
                   double *d_ys, int S, lk_error *err);

#ifdef __cplusplus
}
#endif
#endif
