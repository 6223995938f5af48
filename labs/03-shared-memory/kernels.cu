// Lab 03: the shallow-water step with a tile and its halo in shared memory. The file you
// edit: the TODOs in order, each explained in README.md ("Tasks"; "Background" says why).
// Compute each cell with swe_update (swe/swe.h); the contract is lab.h.

#include "lab.h"
#include "labkit/cuda_check.h"
#include "swe/swe.h"

// TODO 1: the step kernel: stage the tile and its halo in `tile`, then compute from it.
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

// TODO 3: launch lf_step_shared for one step, one block per tile.
extern "C" int lab03_step(int rows, int cols, double r, swe_fields cur, swe_fields next,
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
