// Lab 03 solution: each block stages its tile of Z, Qx, Qy plus a one-cell halo in
// dynamic shared memory, synchronises once, and computes its cells from the tile. Where the
// halo crosses the domain's edge it holds the wall image (swe_cell_walled()).
//
// What makes the tile pay is what its cells share besides their loads: the fluxes. Each
// cell's flux is read by four neighbours, and every flux is a double division, the step's
// dearest operation; staged with the cell (swe_fluxes()), the tile computes about 4
// divisions per cell (3 per staged cell, halo included) where the global version computes 8.
// The update is swe_update_fluxed(), swe_update()'s operations in its order, so results
// equal the serial reference.

#include "lab.h"
#include "labkit/cuda_check.h"
#include "swe/swe.h"

// The six staged arrays: the state, then its fluxes.
#define STAGED 6

// Cell (i, j) of the domain, staged at position t of each array of `size` doubles.
__device__ static inline void stage(double *tile, int size, int t, int i, int j, int rows,
                                    int cols, const double *Z, const double *Qx,
                                    const double *Qy)
{
    const swe_q q = swe_cell_walled(i, j, rows, cols, Z, Qx, Qy);
    const swe_flux f = swe_fluxes(q);
    tile[t] = q.z;
    tile[size + t] = q.qx;
    tile[2 * size + t] = q.qy;
    tile[3 * size + t] = f.xx;
    tile[4 * size + t] = f.xy;
    tile[5 * size + t] = f.yy;
}

__device__ static inline swe_q staged_q(const double *tile, int size, int t)
{
    return swe_load(tile, tile + size, tile + 2 * size, t);
}

__device__ static inline swe_flux staged_flux(const double *tile, int size, int t)
{
    swe_flux f;
    f.xx = tile[3 * size + t];
    f.xy = tile[4 * size + t];
    f.yy = tile[5 * size + t];
    return f;
}

__global__ void lf_step_shared(int rows, int cols, double r, const double *__restrict__ Z,
                               const double *__restrict__ Qx, const double *__restrict__ Qy,
                               double *__restrict__ Zn, double *__restrict__ Qxn,
                               double *__restrict__ Qyn)
{
    extern __shared__ double tile[];
    const int pitch = blockDim.x + 2, size = pitch * (blockDim.y + 2);
    // Tile position (a, b) is cell (i0 + a, j0 + b): row 0 and column 0 are the halo. A
    // partial tile at the domain's end stages its cells and the wall beyond them.
    const int i0 = blockIdx.y * blockDim.y, j0 = blockIdx.x * blockDim.x;
    const int h = min((int)blockDim.y, rows - i0) + 2, w = min((int)blockDim.x, cols - j0) + 2;
    // The h x w cells as one run over the block's threads, row by row: consecutive threads on
    // consecutive cells, and no warp stages a row's two extra cells with 30 lanes idle (the
    // divisions cost a warp the same for 2 lanes as for 32). The corners are never read.
    const int threads = blockDim.x * blockDim.y;
    for (int q = threadIdx.y * blockDim.x + threadIdx.x; q < h * w; q += threads) {
        const int a = q / w, b = q - a * w;
        if (!((a == 0 || a == h - 1) && (b == 0 || b == w - 1)))
            stage(tile, size, a * pitch + b, i0 + a, j0 + b, rows, cols, Z, Qx, Qy);
    }
    __syncthreads();
    const int a = threadIdx.y + 1, b = threadIdx.x + 1;
    if (a < h - 1 && b < w - 1) {
        const int t = a * pitch + b;
        const swe_q q = swe_update_fluxed(
            staged_q(tile, size, t - pitch), staged_q(tile, size, t + pitch),
            staged_q(tile, size, t - 1), staged_q(tile, size, t + 1),
            staged_flux(tile, size, t - pitch), staged_flux(tile, size, t + pitch),
            staged_flux(tile, size, t - 1), staged_flux(tile, size, t + 1), r);
        swe_store(Zn, Qxn, Qyn, swe_at(i0 + a, j0 + b, cols + 2), q);
    }
}

static inline size_t shared_bytes(int bx, int by)
{
    return STAGED * (size_t)(bx + 2) * (size_t)(by + 2) * sizeof(double);
}

extern "C" int lab03_step(int rows, int cols, double r, swe_fields cur, swe_fields next,
                          int block_x, int block_y, lk_error *err)
{
    dim3 block(block_x, block_y);
    dim3 grid((cols + block.x - 1) / block.x, (rows + block.y - 1) / block.y);
    const size_t bytes = shared_bytes(block_x, block_y);
    if (bytes > 48 * 1024)
        LK_CUDA_TRY(err, cudaFuncSetAttribute(lf_step_shared,
                                              cudaFuncAttributeMaxDynamicSharedMemorySize,
                                              (int)bytes));
    lf_step_shared<<<grid, block, bytes>>>(rows, cols, r, cur.Z, cur.Qx, cur.Qy, next.Z,
                                           next.Qx, next.Qy);
    LK_LAUNCH_TRY(err);
    return 0;
}

extern "C" int lab03_step_info(int block_x, int block_y, lab03_kernel_info *info, lk_error *err)
{
    info->kernel = (const void *)lf_step_shared;
    info->block_x = block_x;
    info->block_y = block_y;
    info->dynamic_shared_bytes = shared_bytes(block_x, block_y);
    return 0;
}
