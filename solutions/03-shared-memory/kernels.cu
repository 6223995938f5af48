// Lab 03 solution: each block stages its tile of Z, Qx, Qy plus a one-cell halo in
// dynamic shared memory and, with each staged cell, that cell's three fluxes. A cell's
// fluxes (three FP64 divisions) are then computed once per tile instead of once by each of
// its four neighbours: 3-4 divisions per cell instead of 8, which is what bounds the plain
// global-memory kernel on a Hopper GPU. The arithmetic is the shared lk_swe_fluxes() and
// lk_swe_update_fluxed(), so results equal the serial reference.

#include "lab.h"
#include "labkit/cuda_check.h"
#include "labkit/swe.h"

// The tile: per staged cell its state and its fluxes, six arrays of (bx + 2) x (by + 2).
typedef struct tile_t {
    double *Z, *Qx, *Qy, *Fxx, *Fxy, *Fyy;
} tile_t;

__device__ static inline void stage(tile_t s, int t, const double *__restrict__ Z,
                                    const double *__restrict__ Qx,
                                    const double *__restrict__ Qy, size_t g)
{
    lk_swe_q q = lk_swe_load(Z, Qx, Qy, g);
    lk_swe_flux f = lk_swe_fluxes(q);
    s.Z[t] = q.z;
    s.Qx[t] = q.qx;
    s.Qy[t] = q.qy;
    s.Fxx[t] = f.xx;
    s.Fxy[t] = f.xy;
    s.Fyy[t] = f.yy;
}

__device__ static inline lk_swe_q state_at(tile_t s, int t)
{
    return lk_swe_load(s.Z, s.Qx, s.Qy, (size_t)t);
}

__device__ static inline lk_swe_flux flux_at(tile_t s, int t)
{
    lk_swe_flux f;
    f.xx = s.Fxx[t];
    f.xy = s.Fxy[t];
    f.yy = s.Fyy[t];
    return f;
}

__global__ void lf_step_shared(int rows, int cols, double r, const double *__restrict__ Z,
                               const double *__restrict__ Qx, const double *__restrict__ Qy,
                               double *__restrict__ Zn, double *__restrict__ Qxn,
                               double *__restrict__ Qyn)
{
    extern __shared__ double shared[];
    const int pitch = blockDim.x + 2, size = pitch * (blockDim.y + 2);
    const tile_t s = {shared, shared + size, shared + 2 * size,
                      shared + 3 * size, shared + 4 * size, shared + 5 * size};
    const int tx = threadIdx.x + 1, ty = threadIdx.y + 1; // position in the tile
    const int j = blockIdx.x * blockDim.x + tx, i = blockIdx.y * blockDim.y + ty;
    const int width = cols + 2;
    const int t = ty * pitch + tx;
    const bool inside = i <= rows && j <= cols;
    if (inside) {
        const size_t g = lk_swe_at(i, j, width);
        stage(s, t, Z, Qx, Qy, g);
        // The halo: the neighbour across each edge of the tile. In a partial tile the last
        // row (column) inside the grid is an edge too. Neighbours of interior cells are at
        // most the ghost layer, so no load leaves the arrays.
        if (ty == 1)
            stage(s, t - pitch, Z, Qx, Qy, g - width);
        if (ty == (int)blockDim.y || i == rows)
            stage(s, t + pitch, Z, Qx, Qy, g + width);
        if (tx == 1)
            stage(s, t - 1, Z, Qx, Qy, g - 1);
        if (tx == (int)blockDim.x || j == cols)
            stage(s, t + 1, Z, Qx, Qy, g + 1);
    }
    __syncthreads();
    if (inside) {
        lk_swe_q q = lk_swe_update_fluxed(state_at(s, t - pitch), state_at(s, t + pitch),
                                          state_at(s, t - 1), state_at(s, t + 1),
                                          flux_at(s, t - pitch), flux_at(s, t + pitch),
                                          flux_at(s, t - 1), flux_at(s, t + 1), r);
        lk_swe_store(Zn, Qxn, Qyn, lk_swe_at(i, j, width), q);
    }
}

static inline size_t shared_bytes(int bx, int by)
{
    return 6 * (size_t)(bx + 2) * (size_t)(by + 2) * sizeof(double);
}

extern "C" int lab03_step(int rows, int cols, double r, lk_swe_fields cur, lk_swe_fields next,
                          const lk_launch *launch, lk_error *err)
{
    dim3 block(launch->block_x, launch->block_y);
    dim3 grid((cols + block.x - 1) / block.x, (rows + block.y - 1) / block.y);
    const size_t bytes = shared_bytes(launch->block_x, launch->block_y);
    if (bytes > 48 * 1024)
        LK_CUDA_TRY(err, cudaFuncSetAttribute(lf_step_shared,
                                              cudaFuncAttributeMaxDynamicSharedMemorySize,
                                              (int)bytes));
    lf_step_shared<<<grid, block, bytes>>>(rows, cols, r, cur.Z, cur.Qx, cur.Qy, next.Z,
                                           next.Qx, next.Qy);
    LK_LAUNCH_TRY(err);
    return 0;
}

extern "C" int lab03_step_info(const lk_launch *launch, lab03_kernel_info *info, lk_error *err)
{
    info->kernel = (const void *)lf_step_shared;
    info->block_x = launch->block_x;
    info->block_y = launch->block_y;
    info->dynamic_shared_bytes = shared_bytes(launch->block_x, launch->block_y);
    return 0;
}
