// Lab 03: the shallow-water step with a tile and its halo in shared memory. This is the
// file you edit.
//
// Work through the numbered TODOs in order; the handout (README.md) explains each one.
// `make check` tells you what is still wrong, `make bench` times your kernel against the
// harness's global-memory one (`--variant global`) on the large grid.
//
// Rules of the lab:
//  - the arithmetic is given: lk_swe_update(n, s, w, e, r) (labkit/swe.h) computes a cell
//    from its north (i-1), south (i+1), west (j-1) and east (j+1) neighbours; your job is to
//    read those neighbours from shared memory instead of global memory;
//  - every thread of a block must reach __syncthreads(), and no thread may read the global
//    arrays outside rows 0..rows+1 and columns 0..cols+1;
//  - any grid size and any tile (block) shape must work: 1 x N strips, partial tiles at the
//    last row and column, a 1 x 1 tile.

#include "lab.h"
#include "labkit/cuda_check.h"
#include "labkit/swe.h"

// TODO 1: the shared-memory step kernel. The tile of a block of bx x by threads covers
// bx x by interior cells; with its halo it is (by + 2) rows of (bx + 2) doubles per field,
// three fields in the dynamic shared memory below (sZ, then sQx, then sQy).
//  a. Thread (tx, ty) owns interior cell (i, j) = (1 + blockIdx.y * by + ty,
//     1 + blockIdx.x * bx + tx) and tile position (ty + 1, tx + 1).
//  b. If (i, j) is inside the grid (i <= rows, j <= cols), copy its three values into the
//     tile.
//  c. Halo: a thread on an edge of the tile also copies the neighbour across that edge:
//     ty == 0 the north one (i - 1), tx == 0 the west one (j - 1), and the south (i + 1) /
//     east (j + 1) one when it is on the last row / column of the tile. Careful: in a
//     partial tile at the bottom or right of the grid, the last row or column inside the
//     grid is not the tile's last one. The corners are never read: skip them.
//  d. __syncthreads(), reached by every thread of the block (no early return before it).
//  e. If (i, j) is inside the grid, read n, s, w, e from the tile (lk_swe_q values),
//     compute lk_swe_update(n, s, w, e, r) and store it at (i, j) of the next state.
__global__ void lf_step_shared(int rows, int cols, double r, const double *Z,
                               const double *Qx, const double *Qy, double *Zn, double *Qxn,
                               double *Qyn)
{
    extern __shared__ double tile[];
}

// TODO 2: the shared memory one block of bx x by threads needs: three fields of
// (by + 2) x (bx + 2) doubles.
static inline size_t shared_bytes(int bx, int by)
{
    return 0;
}

// TODO 3: launch lf_step_shared for one step: dim3 block(launch->block_x, launch->block_y),
// enough blocks to cover cols (x) and rows (y), shared_bytes(...) as the third launch
// parameter, then LK_LAUNCH_TRY(err). A tile over 48 KiB needs
// cudaFuncSetAttribute(lf_step_shared, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes)
// first (wrap it in LK_CUDA_TRY). Return 0; your code replaces the lk_fail line below.
extern "C" int lab03_step(int rows, int cols, double r, lk_swe_fields cur, lk_swe_fields next,
                          const lk_launch *launch, lk_error *err)
{
    return lk_fail(err, "kernels.cu: lab03_step is not written yet: start with TODO 1 "
                        "(see labs/03-shared-memory/README.md)");
}

// Given: what lab03_step launches, for the tests (keep it in step with TODO 3 if you change
// the kernel's name or how the shared memory is sized).
extern "C" int lab03_step_info(const lk_launch *launch, lab03_kernel_info *info, lk_error *err)
{
    info->kernel = (const void *)lf_step_shared;
    info->block_x = launch->block_x;
    info->block_y = launch->block_y;
    info->dynamic_shared_bytes = shared_bytes(launch->block_x, launch->block_y);
    return 0;
}
