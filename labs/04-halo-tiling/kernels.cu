// Lab 04: halo tiling of SciddicaT. This is the file you edit.
//
// Work through the numbered TODOs in order; the handout (README.md) explains each one.
// `make check` tells you what is still wrong; `./sweep.sh` times every variant and tile.
//
// Rules of the lab:
//  - compute with lab04_cell_flows and lab04_cell_width (lab.h): they are the serial
//    reference's arithmetic, so your results equal it bit for bit wherever your values come
//    from. This lab is about where the values come from: shared or global memory;
//  - a tile is tile_x x tile_y interior cells; the tile of block (bx, by) starts at interior
//    cell (1 + by * tile_y, 1 + bx * tile_x). Any grid size must work: the last tile of a row
//    or column of tiles is usually partial, and every interior cell must be updated exactly
//    once, no border cell ever;
//  - every thread of a block must reach every __syncthreads(): no early return before one;
//  - check every launch with LK_LAUNCH_TRY(err). Launchers only launch: the harness
//    (given.c) allocates, copies, resets Sf and synchronises.

#include "lab.h"
#include "labkit/cuda_check.h"

// ---- Variant 1: halo. Block = tile plus a one-cell ring: blockDim = (tile_x + 2, tile_y + 2).

// TODO 1: flows kernel with halo cells. Thread (lx, ly) of block (bx, by) handles cell
// (i, j) = (by * tile_y + ly, bx * tile_x + lx), where tile_x = blockDim.x - 2: the tile
// shifted one cell up and left, so the ring threads hold the halo.
//   a. declare the shared arrays: extern __shared__ double smem[]; z and h of the block's
//      cells, blockDim.x * blockDim.y doubles each (the launcher gives the bytes, TODO 3);
//   b. every thread loads z and h of its cell into shared memory; a cell outside the grid
//      (i >= rows or j >= cols) gets a neutral 0.0 instead (never used, but never read
//      out of bounds either);
//   c. __syncthreads();
//   d. inner threads (not on the ring) whose cell is interior (i <= rows - 2, j <= cols - 2)
//      gather the five z and h values of the neighbourhood (centre, N, W, E, S) from shared
//      memory, call lab04_cell_flows and write the four outflows to
//      Sf[k * rows * cols + i * cols + j].
__global__ void flows_halo(int rows, int cols, const double *__restrict__ z,
                           const double *__restrict__ h, double *__restrict__ Sf)
{
}

// TODO 2: width-update kernel with halo cells, same block and cell mapping as TODO 1.
//   a. shared memory: the four outflow layers of the block's cells (4 * blockDim.x *
//      blockDim.y doubles);
//   b. every thread stages the outflows of its cell that the tile needs: all four for a
//      tile cell; for a ring cell, only the one pointing into the tile (the South outflow
//      for the North ring row, North for the South row, East for the West column, West
//      for the East column; corners: none); 0.0 outside the grid;
//   c. __syncthreads();
//   d. inner threads with an interior cell: in = {South outflow of N, East outflow of W,
//      West outflow of E, North outflow of S}, out = the cell's own four outflows, then
//      h[i * cols + j] = lab04_cell_width(h[i * cols + j], in, out).
__global__ void width_halo(int rows, int cols, double *__restrict__ h,
                           const double *__restrict__ Sf)
{
}

// ---- Variant 2: no halo. Block = tile: blockDim = (tile_x, tile_y).

// TODO 5: flows kernel without halo cells. Thread (lx, ly) handles cell
// (1 + by * blockDim.y + ly, 1 + bx * blockDim.x + lx). Stage z and h of the tile in shared
// memory, __syncthreads(), then interior cells take a neighbour from shared memory when it is
// inside the tile and from global memory (z[...], h[...]) when it is not.
__global__ void flows_nohalo(int rows, int cols, const double *__restrict__ z,
                             const double *__restrict__ h, double *__restrict__ Sf)
{
}

// TODO 6: width-update kernel without halo cells: stage the four outflow layers of the
// tile, __syncthreads(), then take each inflow from shared memory when the neighbour is in
// the tile, from Sf in global memory when it is not.
__global__ void width_nohalo(int rows, int cols, double *__restrict__ h,
                             const double *__restrict__ Sf)
{
}

// ---- Stretch: fused step (TODO 8, see the handout). One kernel per step, no Sf in global
// memory: stage z and h of the tile plus two rings, compute the outflows of the tile plus
// one ring into shared memory (0 for cells that are not interior: the reset folded in),
// __syncthreads(), then the width update of the tile reads h_in and writes h_out.
__global__ void step_fused(int rows, int cols, const double *__restrict__ z,
                           const double *__restrict__ h_in, double *__restrict__ h_out)
{
}

// ---- Launch shapes: used by the launchers and by lab04_describe_kernel, which the tests
// call to check the block shape and the shared memory of each kernel.

// TODO 3: describe the halo kernels: for (LAB04_HALO, LAB04_FLOWS) fill
//   *out = (lab04_kernel_info){(const void *)flows_halo, tile_x + 2, tile_y + 2, BYTES};
// with BYTES the dynamic shared memory your kernel indexes (two doubles per thread), and the
// same for (LAB04_HALO, LAB04_WIDTH) and width_halo (four doubles per thread).
// TODO 7: the same for the nohalo kernels (block = the tile), and launch them in TODO 4's
// launchers.
// TODO 8 (stretch): (LAB04_FUSED, LAB04_STEP) and step_fused; until then it answers
// LAB04_NOT_ATTEMPTED, and the fused tests skip.
static int launch_shape(lab04_variant variant, lab04_process process, int tile_x, int tile_y,
                        lab04_kernel_info *out, lk_error *err)
{
    if (variant == LAB04_FUSED)
        return LAB04_NOT_ATTEMPTED;
    return lk_fail(err, "kernels.cu: launch_shape: the %s %s kernel is not described yet: "
                        "TODO 3 (halo) or TODO 7 (nohalo), see labs/04-halo-tiling/README.md",
                   lab04_variant_name(variant), process == LAB04_FLOWS ? "flows" : "width");
}

// TODO 4: the launchers: replace each `return lk_fail(...)` below by the launch. Get the
// shape k with launch_shape (return -1 if it fails). The grid has one block per tile,
// rounded up so that a partial last tile is covered:
//   dim3 grid((cols - 2 + tile_x - 1) / tile_x, (rows - 2 + tile_y - 1) / tile_y);
// launch the variant's kernel with <<<grid, dim3(k.block_x, k.block_y),
// k.dynamic_shared_bytes>>>, then LK_LAUNCH_TRY(err) and return 0. Start with the halo
// variant; TODO 7 adds nohalo.
extern "C" int lab04_flows(lab04_variant variant, int tile_x, int tile_y, int rows, int cols,
                           const double *d_z, const double *d_h, double *d_Sf, lk_error *err)
{
    return lk_fail(err, "kernels.cu: lab04_flows (%s variant) is not written yet: start with "
                        "TODO 1 (see labs/04-halo-tiling/README.md)", lab04_variant_name(variant));
}

extern "C" int lab04_width(lab04_variant variant, int tile_x, int tile_y, int rows, int cols,
                           double *d_h, const double *d_Sf, lk_error *err)
{
    return lk_fail(err, "kernels.cu: lab04_width (%s variant) is not written yet: start with "
                        "TODO 2 (see labs/04-halo-tiling/README.md)", lab04_variant_name(variant));
}

// TODO 8 (stretch): launch step_fused like the other launchers (its block is the tile plus a
// one-cell ring) and return 0 instead of LAB04_NOT_ATTEMPTED. A block that needs more than
// 48 KiB of dynamic shared memory (large tiles) must first be allowed it with
// cudaFuncSetAttribute(step_fused, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes).
extern "C" int lab04_fused_step(int tile_x, int tile_y, int rows, int cols, const double *d_z,
                                const double *d_h_in, double *d_h_out, lk_error *err)
{
    return LAB04_NOT_ATTEMPTED;
}

extern "C" int lab04_describe_kernel(lab04_variant variant, lab04_process process,
                                     int tile_x, int tile_y, lab04_kernel_info *out,
                                     lk_error *err)
{
    return launch_shape(variant, process, tile_x, tile_y, out, err);
}
