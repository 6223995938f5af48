/**
 * @file labs/02-coalescing/lab.h
 * @brief Lab 02 contract between the harness and your `kernels.cu` (read-only).
 *
 * You write one function, lab02_gpu_run(), in kernels.cu: keep the shallow-water state on
 * the device for the whole run, apply the wall rule to the ghost cells with one kernel, run
 * a coalesced step kernel on structure-of-arrays fields, swap pointers between steps, and
 * copy the final state back. The harness loads the problem, runs the serial reference,
 * times your function and compares the results bit for bit.
 *
 * Layout (swe/swe.h): each field is (rows + 2) x (cols + 2) doubles, row-major, with a
 * ghost layer all around; interior cell (i, j), 1 <= i <= rows, 1 <= j <= cols, is at
 * `i * (cols + 2) + j` (swe_at()). The column index j is contiguous in memory.
 */
#ifndef LAB02_LAB_H
#define LAB02_LAB_H

#include "labkit/error.h"
#include "swe/swe.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Run @p steps shallow-water steps on the GPU (your code, kernels.cu).
 *
 * @param sim     the problem: sim->rows x sim->cols interior cells, the coefficient
 *                swe_r(sim) = dt / (2 dx), and the initial state sim->q (host memory,
 *                three fields of swe_cells(sim) doubles). Do not rely on the ghost layer
 *                of sim->q: apply the wall rule before every step, the first one included.
 * @param steps   number of steps (0 means: just copy the initial state to @p out through
 *                the GPU)
 * @param out     host fields receiving the final state; they hold a NaN poison on entry,
 *                and every interior cell must be written (the ghost layer is not checked)
 * @param block_x, block_y  the step kernel's thread block, x along the columns j
 *                (from `--block WxH`)
 * @param err     on failure, the message (use LK_CUDA_TRY / LK_LAUNCH_TRY)
 * @return 0 on success, -1 on failure; device memory is freed either way
 */
int lab02_gpu_run(const swe *sim, int steps, const swe_fields *out,
                  int block_x, int block_y, lk_error *err);

#ifdef __cplusplus
}
#endif
#endif
