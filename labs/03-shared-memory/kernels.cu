// Lab 03: the shallow-water step with a tile and its halo in shared memory. This is the
// file you edit.
//
// The handout (README.md) explains the background and the steps.
// `make check` tells you what is still wrong, `make bench` times your kernel against the
// harness's global-memory one (`--variant global`) on the large grid.
//
// Rules of the lab:
//  - the arithmetic is given: lk_swe_update(n, s, w, e, r) (labkit/swe.h) computes a cell
//    from its north (i-1), south (i+1), west (j-1) and east (j+1) neighbours; your job is to
//    read those neighbours from shared memory instead of global memory;
//  - nobody updates the ghost layer: where the halo crosses the domain's edge, stage the
//    wall image of the edge cell (lk_swe_cell_walled() computes it);
//  - every thread of a block must reach __syncthreads(), and no thread may read the global
//    arrays outside rows 0..rows+1 and columns 0..cols+1;
//  - any grid size and any tile (block) shape must work: 1 x N strips, partial tiles at the
//    last row and column, a 1 x 1 tile.

#include "lab.h"
#include "labkit/cuda_check.h"
#include "labkit/swe.h"

// TODO 1: the step kernel: a block stages its tile of the three fields plus a one-cell
// halo in shared memory (dynamic shared memory, `tile` below), then computes its cells from
// the tile. Contract in lab.h; the handout discusses the halo and the barrier.
__global__ void lf_step_shared(int rows, int cols, double r, const double *Z,
                               const double *Qx, const double *Qy, double *Zn, double *Qxn,
                               double *Qyn)
{
    extern __shared__ double tile[];
}

// TODO 2: the dynamic shared memory a block of bx x by threads needs.
static inline size_t shared_bytes(int bx, int by)
{
    return 0;
}

// TODO 3: launch lf_step_shared for one step on blocks of block_x x block_y threads
// covering the interior (no allocation, copy or synchronisation here).
extern "C" int lab03_step(int rows, int cols, double r, lk_swe_fields cur, lk_swe_fields next,
                          int block_x, int block_y, lk_error *err)
{
    return lk_fail(err, "kernels.cu: lab03_step is not written yet: start with TODO 1 "
                        "(see labs/03-shared-memory/README.md)");
}

// Given: what lab03_step launches, for the tests (keep it in step with TODO 3 if you change
// the kernel's name or how the shared memory is sized).
extern "C" int lab03_step_info(int block_x, int block_y, lab03_kernel_info *info, lk_error *err)
{
    info->kernel = (const void *)lf_step_shared;
    info->block_x = block_x;
    info->block_y = block_y;
    info->dynamic_shared_bytes = shared_bytes(block_x, block_y);
    return 0;
}
