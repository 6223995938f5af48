/**
 * @file labs/04-halo-tiling/lab.h
 * @brief Lab 04 contract between the harness and your `kernels.cu` (read-only).
 *
 * You write the tiled kernels of two SciddicaT elementary processes, flows computation and
 * width update, in two variants (tiles with a halo of cells, tiles without), plus their
 * launchers declared below; the stretch task adds a fused one-kernel step. The given code
 * (given.c) owns everything else: device allocation, copies, the reset of the outflows
 * and the step loop, which calls your launchers once per step:
 *
 * @code
 *   for each step:  cudaMemsetAsync(Sf, 0)            reset flows (harness)
 *                   lab04_flows(variant, tile, ...)   flows computation (you)
 *                   lab04_width(variant, tile, ...)   width update (you)
 * @endcode
 *
 * Because the harness owns the buffers, the tests can also call one launcher once on data
 * they prepared (random thickness and outflows, poisoned border cells) and check that every
 * interior cell was updated exactly once and no border cell was touched.
 *
 * Grid conventions (as in lab 01): rows x cols cells, row-major; interior cells are rows
 * 1..rows-2 and columns 1..cols-2; Sf holds four layers of rows x cols outflows (0 North,
 * 1 West, 2 East, 3 South): `Sf[k * rows * cols + i * cols + j]`. A tile is tile_x columns
 * by tile_y rows of interior cells; tiles start at interior cell (1, 1), so the tile of
 * block (bx, by) starts at cell (1 + by * tile_y, 1 + bx * tile_x).
 */
#ifndef LAB04_LAB_H
#define LAB04_LAB_H

#include <stddef.h>

#include "labkit/error.h"
#include "labkit/sciddicat.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The kernel variants of the lab (`--variant NAME`). */
typedef enum lab04_variant {
    /** Block = tile plus a one-cell ring; every thread stages one cell in shared memory. */
    LAB04_HALO = 0,
    /** Block = tile; neighbours outside the tile are read from global memory. */
    LAB04_NOHALO = 1,
    /** Stretch: one kernel per step, outflows of the tile and its ring in shared memory. */
    LAB04_FUSED = 2,
    /** Stretch 2: the fused step on the cells near debris only (lab04_fast_step). */
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

/** Return value of the fused-variant functions while the stretch task is not attempted. */
#define LAB04_NOT_ATTEMPTED 1

/** What a launcher launches for a tile: the tests read shared-memory use and block shape. */
typedef struct lab04_kernel_info {
    const void *kernel;          /**< The `__global__` function, as `(const void *)name`. */
    int block_x;                 /**< Threads per block along x (columns). */
    int block_y;                 /**< Threads per block along y (rows). */
    size_t dynamic_shared_bytes; /**< Dynamic shared memory per block (0 if none). */
} lab04_kernel_info;

/* ---------------------------------------------------------------------------------------
 * Your side: kernels.cu defines these. All pointers are device pointers owned by the
 * caller. Launchers only launch (no allocation, no synchronisation, no copies) and return
 * 0, or -1 with @p err filled (check every launch with LK_LAUNCH_TRY). The caller only
 * calls them for grids with at least one interior cell (rows >= 3 and cols >= 3).
 * ------------------------------------------------------------------------------------- */

/**
 * Flows computation of every interior cell, tiled: write the outflows of each interior
 * cell into @p d_Sf, computed from @p d_z and @p d_h exactly as the serial reference
 * (lab04_cell_flows). The caller has zeroed the interior outflows (reset); outflows of
 * border cells must not be written.
 *
 * @param variant  LAB04_HALO or LAB04_NOHALO
 * @param tile_x, tile_y  tile size in interior cells (the caller checked lab04_check_tile)
 * @param rows, cols  grid size (>= 3 each; any size, not a multiple of the tile)
 * @param d_z, d_h    altitude and thickness, rows*cols each (read only)
 * @param d_Sf        the four outflow layers, 4*rows*cols
 * @param err         on failure, the message
 * @return 0 on success, -1 on failure
 */
int lab04_flows(lab04_variant variant, int tile_x, int tile_y, int rows, int cols,
                const double *d_z, const double *d_h, double *d_Sf, lk_error *err);

/**
 * Width update of every interior cell, tiled, in place: h += inflows - outflows in the
 * order N, W, E, S (lab04_cell_width). Border cells of @p d_h must not be written, and each
 * interior cell exactly once.
 *
 * @param variant  LAB04_HALO or LAB04_NOHALO
 * @param tile_x, tile_y  tile size in interior cells
 * @param rows, cols  grid size (>= 3 each)
 * @param d_h     thickness, rows*cols, updated in place
 * @param d_Sf    the four outflow layers, 4*rows*cols (read only; border cells' are zero)
 * @param err     on failure, the message
 * @return 0 on success, -1 on failure
 */
int lab04_width(lab04_variant variant, int tile_x, int tile_y, int rows, int cols,
                double *d_h, const double *d_Sf, lk_error *err);

/**
 * Stretch: one whole step (reset, flows, width) in one kernel: the new thickness of every
 * interior cell from @p d_h_in into @p d_h_out, without any outflow array in global memory.
 * Border cells of @p d_h_out must not be written (the caller keeps them equal to the input's).
 *
 * @param tile_x, tile_y  tile size in interior cells
 * @param rows, cols  grid size (>= 3 each)
 * @param d_z      altitude, rows*cols
 * @param d_h_in   thickness before the step, rows*cols (read only)
 * @param d_h_out  thickness after the step, rows*cols (a different buffer)
 * @param err      on failure, the message
 * @return 0 on success, -1 on failure, LAB04_NOT_ATTEMPTED if the stretch is not done
 */
int lab04_fused_step(int tile_x, int tile_y, int rows, int cols, const double *d_z,
                     const double *d_h_in, double *d_h_out, lk_error *err);

/**
 * A bounding box of cells, rows r0..r1 and columns c0..c1 (inclusive); empty when r0 > r1 or
 * c0 > c1. The fast variant keeps, on the device, the box of the cells that are not still
 * (lk_sciddicat_is_still): only cells next to those can change in a step.
 */
typedef struct lab04_box {
    int r0; /**< First row. */
    int r1; /**< Last row. */
    int c0; /**< First column. */
    int c1; /**< Last column. */
} lab04_box;

/** Boxes the fast variant's caller keeps on the device (lab04_fast_boxes_init). */
#define LAB04_FAST_BOXES 4

/** What a step does with each box (lab04_fast_slot). */
typedef enum lab04_fast_role {
    LAB04_WET_NOW = 0,  /**< Read: the box of the cells not still at the step's start. */
    LAB04_WET_PREV = 1, /**< Read: the same one step earlier. */
    LAB04_WET_NEXT = 2, /**< Grown (atomicMin/atomicMax) to the cells not still after the step. */
    LAB04_TO_CLEAR = 3  /**< Emptied, for the next step to grow (no step reads it meanwhile). */
} lab04_fast_role;

/**
 * Stretch 2: step @p step (0, 1, ... in order) of the fast variant, from @p d_h_in into
 * @p d_h_out (ping-pong, as lab04_fused_step), on the region lab04_fast_region() of the boxes
 * only: a cell outside it cannot change, and its value in @p d_h_out, written two steps ago,
 * is already right. The kernel reads the region from @p d_boxes itself (the host never
 * waits for it), grows the LAB04_WET_NEXT box and empties the LAB04_TO_CLEAR one.
 *
 * @param step    the step's number: it picks the boxes (lab04_fast_slot)
 * @param tile_x, tile_y  the block is tile_x x tile_y threads, at least one whole warp
 *                 (lab04_check_tile refuses fewer than 32); how the kernel maps them to cells
 *                 is yours (the solution streams strips of 64 columns, a warp each)
 * @param rows, cols  grid size (>= 3 each)
 * @param d_z      altitude, rows*cols
 * @param d_h_in   thickness before the step, rows*cols (read only)
 * @param d_h_out  thickness after the step, rows*cols (a different buffer)
 * @param d_boxes  LAB04_FAST_BOXES boxes on the device, set by lab04_fast_boxes_init before
 *                 step 0 and left to the steps afterwards
 * @param err      on failure, the message
 * @return 0, -1 on failure, LAB04_NOT_ATTEMPTED if this stretch is not done (the default
 *         given.c provides while kernels.cu does not define the function)
 */
int lab04_fast_step(int step, int tile_x, int tile_y, int rows, int cols, const double *d_z,
                    const double *d_h_in, double *d_h_out, lab04_box *d_boxes, lk_error *err);

/** The empty box. */
LK_HD static inline lab04_box lab04_box_empty(void)
{
    lab04_box b = {0x7fffffff, -1, 0x7fffffff, -1};
    return b;
}

/** 1 when @p b holds no cell. */
LK_HD static inline int lab04_box_is_empty(lab04_box b) { return b.r0 > b.r1 || b.c0 > b.c1; }

/** Which of the LAB04_FAST_BOXES boxes plays @p role in step @p step (they rotate). */
LK_HD static inline int lab04_fast_slot(int step, lab04_fast_role role)
{
    const int offset = role == LAB04_WET_NOW    ? 0
                       : role == LAB04_WET_NEXT ? 1
                       : role == LAB04_TO_CLEAR ? 2
                                                : 3; /* LAB04_WET_PREV: step - 1 */
    return (step + offset) % LAB04_FAST_BOXES;
}

/**
 * The boxes before step 0: both "wet" boxes cover the whole grid, so steps 0 and 1 update
 * every interior cell of both buffers (as the reference does; it also turns a -0.0 thickness
 * into +0.0, after which a cell with no flow keeps its bits); the others are empty.
 */
LK_HD static inline void lab04_fast_boxes_init(int rows, int cols,
                                               lab04_box boxes[LAB04_FAST_BOXES])
{
    const lab04_box all = {0, rows - 1, 0, cols - 1};
    for (int k = 0; k < LAB04_FAST_BOXES; k++)
        boxes[k] = lab04_box_empty();
    boxes[lab04_fast_slot(0, LAB04_WET_NOW)] = all;
    boxes[lab04_fast_slot(0, LAB04_WET_PREV)] = all;
}

/**
 * The cells step @p step must update: the interior cells next to (or in) a box of wet cells
 * now or one step earlier. Only cells next to a wet cell can change (a still cell sends
 * nothing), and a cell that changed one step earlier must also be written again, into the
 * buffer that holds its value of two steps ago.
 */
LK_HD static inline lab04_box lab04_fast_region(const lab04_box boxes[LAB04_FAST_BOXES],
                                                int step, int rows, int cols)
{
    const lab04_box now = boxes[lab04_fast_slot(step, LAB04_WET_NOW)];
    const lab04_box prev = boxes[lab04_fast_slot(step, LAB04_WET_PREV)];
    lab04_box r = lab04_box_empty();
    if (!lab04_box_is_empty(now))
        r = now;
    if (!lab04_box_is_empty(prev)) {
        r.r0 = prev.r0 < r.r0 ? prev.r0 : r.r0;
        r.r1 = prev.r1 > r.r1 ? prev.r1 : r.r1;
        r.c0 = prev.c0 < r.c0 ? prev.c0 : r.c0;
        r.c1 = prev.c1 > r.c1 ? prev.c1 : r.c1;
    }
    if (lab04_box_is_empty(r))
        return r;
    /* One cell around, within the interior rows 1..rows-2 and columns 1..cols-2. */
    r.r0 = r.r0 - 1 > 1 ? r.r0 - 1 : 1;
    r.r1 = r.r1 + 1 < rows - 2 ? r.r1 + 1 : rows - 2;
    r.c0 = r.c0 - 1 > 1 ? r.c0 - 1 : 1;
    r.c1 = r.c1 + 1 < cols - 2 ? r.c1 + 1 : cols - 2;
    return r;
}

/**
 * Describe the kernel that a launcher launches for a tile: the kernel function, its block
 * shape and its dynamic shared memory. The tests check with cudaFuncGetAttributes that each
 * variant's kernels use shared memory, and that the block shape follows the variant
 * (halo: tile + 2 in each direction; nohalo: the tile; fused: tile + 2; fast: the tile).
 *
 * @param variant  the variant
 * @param process  LAB04_FLOWS or LAB04_WIDTH (halo, nohalo); LAB04_STEP (fused)
 * @param tile_x, tile_y  tile size in interior cells
 * @param out      the description
 * @param err      on failure, the message
 * @return 0, -1 on failure (e.g. a process the variant does not have), or
 *         LAB04_NOT_ATTEMPTED for the fused variant while the stretch is not done
 */
int lab04_describe_kernel(lab04_variant variant, lab04_process process, int tile_x,
                          int tile_y, lab04_kernel_info *out, lk_error *err);

/* ---------------------------------------------------------------------------------------
 * The model, one interior cell at a time, on values: use these in your kernels. They run
 * the shared per-cell functions of labkit/sciddicat.h on a 3x3 window held in registers, so
 * the arithmetic and its order are the serial reference's, wherever your values come from
 * (shared memory, global memory, registers).
 * Neighbourhood order, as in the course: 0 centre, 1 North, 2 West, 3 East, 4 South.
 * ------------------------------------------------------------------------------------- */

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
    double wf[LK_SCIDDICAT_NFLOWS * 9] = {0.0};
    lk_sciddicat_flows_cell(1, 1, 3, 3, wz, wh, wf, LK_SCIDDICAT_P_R, LK_SCIDDICAT_P_EPSILON);
    for (int k = 0; k < LK_SCIDDICAT_NFLOWS; k++)
        f[k] = wf[lk_sciddicat_flow_at(k, 1, 1, 3, 3)];
}

/**
 * New thickness of one interior cell (width update).
 *
 * @param h    its thickness
 * @param in   what its neighbours send it: in[0] the South outflow of its North neighbour,
 *             in[1] the East outflow of its West neighbour, in[2] the West outflow of its
 *             East neighbour, in[3] the North outflow of its South neighbour
 * @param out  its own outflows towards North, West, East, South
 * @return h + (in[0] - out[0]) + (in[1] - out[1]) + (in[2] - out[2]) + (in[3] - out[3]),
 *         accumulated in that order
 */
LK_HD static inline double lab04_cell_width(double h, const double in[4], const double out[4])
{
    const double wh[9] = {0.0, 0.0, 0.0, 0.0, h, 0.0, 0.0, 0.0, 0.0};
    double wf[LK_SCIDDICAT_NFLOWS * 9] = {0.0};
    wf[lk_sciddicat_flow_at(3, 0, 1, 3, 3)] = in[0];
    wf[lk_sciddicat_flow_at(2, 1, 0, 3, 3)] = in[1];
    wf[lk_sciddicat_flow_at(1, 1, 2, 3, 3)] = in[2];
    wf[lk_sciddicat_flow_at(0, 2, 1, 3, 3)] = in[3];
    for (int k = 0; k < LK_SCIDDICAT_NFLOWS; k++)
        wf[lk_sciddicat_flow_at(k, 1, 1, 3, 3)] = out[k];
    return lk_sciddicat_width_cell(1, 1, 3, 3, wh, wf);
}

/** Name of a variant ("halo", "nohalo", "fused", "fast"). */
const char *lab04_variant_name(lab04_variant variant);

#ifdef __cplusplus
}
#endif
#endif
