/**
 * @file labs/04-halo-tiling/lab.h
 * @brief Lab 04 contract between the harness and your `kernels.cu` (read-only).
 *
 * You write the launchers below and the kernels they launch. The harness (given.c) owns the
 * buffers and the step loop: per step it zeroes `Sf`, then calls lab04_flows and lab04_width.
 * Grid: rows x cols cells, row-major, interior rows 1..rows-2 and columns 1..cols-2; `Sf`
 * holds four layers (0 North, 1 West, 2 East, 3 South): `Sf[k * rows * cols + i * cols + j]`.
 * A tile is tile_x columns by tile_y rows of interior cells; the tile of block (bx, by)
 * starts at cell (1 + by * tile_y, 1 + bx * tile_x). Every interior cell is updated exactly
 * once per step, no border cell ever (the tests check it on one launcher call).
 */
#ifndef LAB04_LAB_H
#define LAB04_LAB_H

#include <stddef.h>

#include "labkit/error.h"
#include "sciddicat/sciddicat.h"
/* Stretch 2 only: the fast variant's boxes (lab04_fast_step). */
#include "fast_boxes.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The kernel variants of the lab (`--variant NAME`). */
typedef enum lab04_variant {
    /** Block = tile plus a one-cell ring; every thread stages one cell in shared memory. */
    LAB04_HALO = 0,
    /** Block = tile; neighbours outside the tile are read from global memory. */
    LAB04_NOHALO = 1,
    /** Stretch: one kernel per step (lab04_fused_step). */
    LAB04_FUSED = 2,
    /** Stretch 2: the fused step near the debris only (lab04_fast_step). */
    LAB04_FAST = 3
} lab04_variant;

/** Number of variants. */
#define LAB04_NVARIANTS 4

/** The kernels of a variant: halo and nohalo have FLOWS and WIDTH, fused and fast STEP. */
typedef enum lab04_process {
    LAB04_FLOWS = 0, /**< Flows-computation kernel (lab04_flows). */
    LAB04_WIDTH = 1, /**< Width-update kernel (lab04_width). */
    LAB04_STEP = 2   /**< Fused step kernel (lab04_fused_step). */
} lab04_process;

/** Return value of a stretch function that is not attempted (its tests skip). */
#define LAB04_NOT_ATTEMPTED 1

/** What a launcher launches for a tile (the tests read its shared memory and block). */
typedef struct lab04_kernel_info {
    const void *kernel;          /**< The `__global__` function, as `(const void *)name`. */
    int block_x;                 /**< Threads per block along x (columns). */
    int block_y;                 /**< Threads per block along y (rows). */
    size_t dynamic_shared_bytes; /**< Dynamic shared memory per block (0 if none). */
} lab04_kernel_info;

/* Your side: kernels.cu defines these. Pointers are the caller's device buffers; rows >= 3
 * and cols >= 3. Launchers only launch (no allocation, copy or synchronisation) and return
 * 0, or -1 with @p err filled (LK_LAUNCH_TRY). */

/**
 * Flows computation, tiled: the outflows of every interior cell into @p d_Sf, with
 * lab04_cell_flows. The caller zeroed @p d_Sf; border cells' outflows stay untouched.
 *
 * @param variant  LAB04_HALO or LAB04_NOHALO
 * @param tile_x, tile_y  tile size (lab04_check_tile accepted it; any grid, no multiple)
 * @param rows, cols  grid size
 * @param d_z, d_h    altitude and thickness, rows*cols each (read only)
 * @param d_Sf        the four outflow layers, 4*rows*cols
 * @param err         on failure, the message
 * @return 0 on success, -1 on failure
 */
int lab04_flows(lab04_variant variant, int tile_x, int tile_y, int rows, int cols,
                const double *d_z, const double *d_h, double *d_Sf, lk_error *err);

/**
 * Width update, tiled, in place: each interior cell of @p d_h exactly once, with
 * lab04_cell_width; border cells untouched.
 *
 * @param variant  LAB04_HALO or LAB04_NOHALO
 * @param tile_x, tile_y  tile size
 * @param rows, cols  grid size
 * @param d_h     thickness, rows*cols, updated in place
 * @param d_Sf    the four outflow layers (read only; border cells' are zero)
 * @param err     on failure, the message
 * @return 0 on success, -1 on failure
 */
int lab04_width(lab04_variant variant, int tile_x, int tile_y, int rows, int cols,
                double *d_h, const double *d_Sf, lk_error *err);

/**
 * Stretch: one step (reset, flows, width) in one kernel, with no outflow array in global
 * memory: every interior cell from @p d_h_in into @p d_h_out; border cells of @p d_h_out
 * untouched (the caller keeps them equal to the input's).
 *
 * @param tile_x, tile_y  tile size
 * @param rows, cols  grid size
 * @param d_z      altitude, rows*cols
 * @param d_h_in   thickness before the step (read only)
 * @param d_h_out  thickness after the step (a different buffer)
 * @param err      on failure, the message
 * @return 0, -1 on failure, or LAB04_NOT_ATTEMPTED
 */
int lab04_fused_step(int tile_x, int tile_y, int rows, int cols, const double *d_z,
                     const double *d_h_in, double *d_h_out, lk_error *err);

/**
 * Stretch 2: step @p step (0, 1, ... in order) of the fast variant, from @p d_h_in into
 * @p d_h_out (as lab04_fused_step) on lab04_fast_region() of @p d_boxes only: a cell outside
 * it keeps the value written two steps ago. The kernel reads the region from @p d_boxes (the
 * host never waits), grows the LAB04_WET_NEXT box and empties the LAB04_TO_CLEAR one.
 *
 * @param step    the step's number: it picks the boxes (lab04_fast_slot)
 * @param tile_x, tile_y  the block: tile_x x tile_y threads, at least one warp (32); how
 *                 the kernel maps its threads to cells is yours
 * @param rows, cols  grid size
 * @param d_z      altitude, rows*cols
 * @param d_h_in   thickness before the step (read only)
 * @param d_h_out  thickness after the step (a different buffer)
 * @param d_boxes  LAB04_FAST_BOXES boxes, set by lab04_fast_boxes_init before step 0
 * @param err      on failure, the message
 * @return 0, -1 on failure, or LAB04_NOT_ATTEMPTED (given.c's default while kernels.cu
 *         does not define it)
 */
int lab04_fast_step(int step, int tile_x, int tile_y, int rows, int cols, const double *d_z,
                    const double *d_h_in, double *d_h_out, lab04_box *d_boxes, lk_error *err);

/**
 * Describe the kernel a launcher launches for a tile. The tests check that it uses shared
 * memory and that its block follows the variant: halo and fused the tile + 2 each way,
 * nohalo and fast the tile.
 *
 * @param variant  the variant
 * @param process  LAB04_FLOWS or LAB04_WIDTH (halo, nohalo); LAB04_STEP (fused, fast)
 * @param tile_x, tile_y  tile size
 * @param out      the description
 * @param err      on failure, the message
 * @return 0, -1 on failure (e.g. a process the variant does not have), or
 *         LAB04_NOT_ATTEMPTED for a stretch variant not attempted
 */
int lab04_describe_kernel(lab04_variant variant, lab04_process process, int tile_x,
                          int tile_y, lab04_kernel_info *out, lk_error *err);

/* The model, one interior cell on values: the serial reference's arithmetic in its order,
 * wherever the values come from. Order: 0 centre, 1 North, 2 West, 3 East, 4 South. */

/**
 * Outflows of one interior cell (minimisation of differences).
 *
 * @param z  altitude of the centre and its North, West, East, South neighbours
 * @param h  thickness of the same five cells
 * @param f  out: the outflows towards North, West, East, South (0 where none)
 */
LK_HD static inline void lab04_cell_flows(const double z[5], const double h[5], double f[4])
{
    const double wz[9] = {0.0, z[1], 0.0, z[2], z[0], z[3], 0.0, z[4], 0.0};
    const double wh[9] = {0.0, h[1], 0.0, h[2], h[0], h[3], 0.0, h[4], 0.0};
    double wf[SCIDDICAT_NFLOWS * 9] = {0.0};
    sciddicat_flows_cell(1, 1, 3, 3, wz, wh, wf, SCIDDICAT_P_R, SCIDDICAT_P_EPSILON);
    for (int k = 0; k < SCIDDICAT_NFLOWS; k++)
        f[k] = wf[sciddicat_flow_at(k, 1, 1, 3, 3)];
}

/**
 * New thickness of one interior cell (width update).
 *
 * @param h    its thickness
 * @param in   its inflows: the South outflow of its North neighbour, the East of its West,
 *             the West of its East, the North of its South
 * @param out  its own outflows towards North, West, East, South
 * @return h + (in[0] - out[0]) + ... + (in[3] - out[3]), accumulated in that order
 */
LK_HD static inline double lab04_cell_width(double h, const double in[4], const double out[4])
{
    const double wh[9] = {0.0, 0.0, 0.0, 0.0, h, 0.0, 0.0, 0.0, 0.0};
    double wf[SCIDDICAT_NFLOWS * 9] = {0.0};
    wf[sciddicat_flow_at(3, 0, 1, 3, 3)] = in[0];
    wf[sciddicat_flow_at(2, 1, 0, 3, 3)] = in[1];
    wf[sciddicat_flow_at(1, 1, 2, 3, 3)] = in[2];
    wf[sciddicat_flow_at(0, 2, 1, 3, 3)] = in[3];
    for (int k = 0; k < SCIDDICAT_NFLOWS; k++)
        wf[sciddicat_flow_at(k, 1, 1, 3, 3)] = out[k];
    return sciddicat_width_cell(1, 1, 3, 3, wh, wf);
}

/** Name of a variant ("halo", "nohalo", "fused", "fast"). */
const char *lab04_variant_name(lab04_variant variant);

#ifdef __cplusplus
}
#endif
#endif
