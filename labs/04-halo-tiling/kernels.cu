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

// TODO 1: the flows kernel with halo cells. Block = tile plus a one-cell ring; thread
// (lx, ly) of block (bx, by) holds cell (by * tile_y + ly, bx * tile_x + lx). Stage z and h
// in shared memory (never read outside the grid), then the tile's interior cells write
// their four outflows to Sf[k * rows * cols + i * cols + j] with lab04_cell_flows.
__global__ void flows_halo(int rows, int cols, const double *__restrict__ z,
                           const double *__restrict__ h, double *__restrict__ Sf)
{
}

// TODO 2: the width-update kernel with halo cells, same block and mapping as TODO 1: stage
// the outflows the tile needs, then h of each interior tile cell = lab04_cell_width(h, the
// four inflows, its four outflows).
__global__ void width_halo(int rows, int cols, double *__restrict__ h,
                           const double *__restrict__ Sf)
{
}

// ---- Variant 2: no halo. Block = tile: blockDim = (tile_x, tile_y).

// TODO 5: the flows kernel without halo cells (block = tile, tile origin (1, 1)):
// neighbours inside the tile from shared memory, outside it from global memory.
__global__ void flows_nohalo(int rows, int cols, const double *__restrict__ z,
                             const double *__restrict__ h, double *__restrict__ Sf)
{
}

// TODO 6: the width-update kernel without halo cells, same rule for the inflows.
__global__ void width_nohalo(int rows, int cols, double *__restrict__ h,
                             const double *__restrict__ Sf)
{
}

// ---- Stretch (TODO 8): one kernel per step, no Sf in global memory; reads h_in, writes
// h_out (the harness swaps them). The handout describes it.
__global__ void step_fused(int rows, int cols, const double *__restrict__ z,
                           const double *__restrict__ h_in, double *__restrict__ h_out)
{
}

// ---- Launch shapes: used by the launchers and by lab04_describe_kernel, which the tests
// call to check the block shape and the shared memory of each kernel.

// TODO 3: describe the halo kernels (their block and dynamic shared memory) for
// (LAB04_HALO, LAB04_FLOWS / LAB04_WIDTH). TODO 7: the same for the nohalo kernels.
// TODO 8 (stretch): (LAB04_FUSED, LAB04_STEP); until then LAB04_NOT_ATTEMPTED skips the
// fused tests.
static int launch_shape(lab04_variant variant, lab04_process process, int tile_x, int tile_y,
                        lab04_kernel_info *out, lk_error *err)
{
    if (variant == LAB04_FUSED)
        return LAB04_NOT_ATTEMPTED;
    return lk_fail(err, "kernels.cu: launch_shape: the %s %s kernel is not described yet: "
                        "TODO 3 (halo) or TODO 7 (nohalo), see labs/04-halo-tiling/README.md",
                   lab04_variant_name(variant), process == LAB04_FLOWS ? "flows" : "width");
}

// TODO 4: the launchers (contract in lab.h): one block per tile, partial tiles included,
// the shape from launch_shape, LK_LAUNCH_TRY. Halo first; TODO 7 adds nohalo.
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

// TODO 8 (stretch): launch step_fused and return 0 (above 48 KiB of shared memory a kernel
// must opt in with cudaFuncSetAttribute).
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
