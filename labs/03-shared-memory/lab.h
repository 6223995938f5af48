/**
 * @file labs/03-shared-memory/lab.h
 * @brief Lab 03 contract between the harness and your `kernels.cu` (read-only).
 *
 * You write the shallow-water step kernel that stages a tile of the three fields plus a
 * one-cell halo in shared memory, and its launcher lab03_step(). The given code (given.cu) owns
 * everything else: device buffers, copies and the time loop, which calls your launcher once
 * per step:
 *
 * @code
 *   for each step:  lab03_step(rows, cols, r, cur, next, ...)  your kernel
 *                   swap(cur, next)                            (harness)
 * @endcode
 *
 * Nobody updates the ghost layer: where your halo crosses the domain's edge it must hold the
 * wall image of the edge cell, as swe_cell_walled() (swe/swe.h) computes it.
 *
 * The tile is the thread block: a block of block_x x block_y threads updates a tile of
 * block_x columns by block_y rows of interior cells, one cell per thread. In tasks 1-3 a
 * block updates one tile, starting at cell (1 + blockIdx.y * block_y, 1 + blockIdx.x *
 * block_x); task 7 lets a block update several tiles, one after another.
 *
 * Layout (swe/swe.h): each field is (rows + 2) x (cols + 2) doubles, row-major, with a
 * ghost layer; interior cell (i, j), 1 <= i <= rows, 1 <= j <= cols, is at
 * `i * (cols + 2) + j`.
 */
#ifndef LAB03_LAB_H
#define LAB03_LAB_H

#include <stddef.h>

#include "labkit/error.h"
#include "swe/swe.h"

#ifdef __cplusplus
extern "C" {
#endif

/** What your launcher launches, so that the tests can read the kernel's resources. */
typedef struct lab03_kernel_info {
    const void *kernel;          /**< The `__global__` step kernel, as `(const void *)name`. */
    int block_x;                 /**< Threads per block along x (columns j). */
    int block_y;                 /**< Threads per block along y (rows i). */
    size_t dynamic_shared_bytes; /**< Dynamic shared memory per block (0 if none). */
} lab03_kernel_info;

/* ---------------------------------------------------------------------------------------
 * Your side: kernels.cu defines these two. Pointers are device pointers owned by the
 * caller. The launcher only launches (no allocation, no synchronisation, no copies) and
 * returns 0, or -1 with @p err filled (check the launch with LK_LAUNCH_TRY).
 * ------------------------------------------------------------------------------------- */

/**
 * One step with your shared-memory kernel: every interior cell of @p next from @p cur.
 * The ghost layer of @p cur is stale (never read it): the walls come from the interior. @p r = dt / (2 dx); the tile (block)
 * shape is block_x x block_y.
 */
int lab03_step(int rows, int cols, double r, swe_fields cur, swe_fields next,
               int block_x, int block_y, lk_error *err);

/**
 * Describe what lab03_step() launches for @p launch: the kernel, its block and its dynamic
 * shared memory. The tests check with cudaFuncGetAttributes() that the kernel holds the
 * tile and its halo in shared memory.
 */
int lab03_step_info(int block_x, int block_y, lab03_kernel_info *info, lk_error *err);

#ifdef __cplusplus
}
#endif
#endif
