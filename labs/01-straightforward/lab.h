/**
 * @file labs/01-straightforward/lab.h
 * @brief Lab 01 contract between the harness and your `kernels.cu` (read-only).
 *
 * You write one function, lab01_gpu_run(), in kernels.cu: allocate device memory, copy
 * the inputs, launch your three SciddicaT kernels (reset flows, flows computation, width
 * update; ported from serial.c) once per step, copy the thickness back, free everything.
 * The driver (main.c) loads the data, runs serial.c, calls your function and compares the
 * results bit for bit.
 */
#ifndef LAB01_LAB_H
#define LAB01_LAB_H

#include "labkit/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Run @p steps SciddicaT steps on the GPU.
 *
 * @param rows, cols  grid size (any size >= 1; only cells 1..rows-2 x 1..cols-2 change)
 * @param z       altitude, rows*cols row-major, already initialised (host memory, read only)
 * @param h_in    initial thickness, rows*cols (host memory, read only)
 * @param h_out   where to leave the thickness after @p steps steps, rows*cols (host memory;
 *                it holds a NaN poison on entry: every cell must be written)
 * @param steps   number of steps (0 means: just copy h_in to h_out through the GPU)
 * @param block_x, block_y  the thread block shape, x along the columns (`--block WxH`)
 * @param err     on failure, the message (use LK_CUDA_TRY / LK_LAUNCH_TRY)
 * @return 0 on success, -1 on failure; device memory is freed either way
 */
int lab01_gpu_run(int rows, int cols, const double *z, const double *h_in, double *h_out,
                  int steps, int block_x, int block_y, lk_error *err);

#ifdef __cplusplus
}
#endif
#endif
