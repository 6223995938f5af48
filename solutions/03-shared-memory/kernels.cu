// Lab 03 solution: each block stages its tile of Z, Qx, Qy plus a one-cell halo in
// dynamic shared memory, synchronises once, and computes its cells from the tile. The
// arithmetic is the shared swe_update(), so results equal the serial reference; where
// the halo crosses the domain's edge it holds the wall image (swe_cell_walled()).

#include "lab.h"
#include "labkit/cuda_check.h"
#include "swe/swe.h"

// Put state q at position t of the three tiles.
__device__ static inline void stage(double *sZ, double *sQx, double *sQy, int t, swe_q q)
{
    sZ[t] = q.z;
    sQx[t] = q.qx;
    sQy[t] = q.qy;
}

__global__ void lf_step_shared(int rows, int cols, double r, const double *__restrict__ Z,
                               const double *__restrict__ Qx, const double *__restrict__ Qy,
                               double *__restrict__ Zn, double *__restrict__ Qxn,
                               double *__restrict__ Qyn)
{
    extern __shared__ double tile[];
    const int pitch = blockDim.x + 2, size = pitch * (blockDim.y + 2);
    double *sZ = tile, *sQx = tile + size, *sQy = tile + 2 * size;
    const int tx = threadIdx.x + 1, ty = threadIdx.y + 1; // position in the tile
    const int j = blockIdx.x * blockDim.x + tx, i = blockIdx.y * blockDim.y + ty;
    const int width = cols + 2;
    const int t = ty * pitch + tx;
    const bool inside = i <= rows && j <= cols;
    if (inside) {
        stage(sZ, sQx, sQy, t, swe_load(Z, Qx, Qy, swe_at(i, j, width)));
        // The halo: the neighbour across each edge of the tile. In a partial tile the last
        // row (column) inside the grid is an edge too. Across the domain's edge the
        // neighbour is the wall image of the cell; the ghost layer is never read.
        if (ty == 1)
            stage(sZ, sQx, sQy, t - pitch, swe_cell_walled(i - 1, j, rows, cols, Z, Qx, Qy));
        if (ty == (int)blockDim.y || i == rows)
            stage(sZ, sQx, sQy, t + pitch, swe_cell_walled(i + 1, j, rows, cols, Z, Qx, Qy));
        if (tx == 1)
            stage(sZ, sQx, sQy, t - 1, swe_cell_walled(i, j - 1, rows, cols, Z, Qx, Qy));
        if (tx == (int)blockDim.x || j == cols)
            stage(sZ, sQx, sQy, t + 1, swe_cell_walled(i, j + 1, rows, cols, Z, Qx, Qy));
    }
    __syncthreads();
    if (inside) {
        swe_q q = swe_update(swe_load(sZ, sQx, sQy, t - pitch),
                                   swe_load(sZ, sQx, sQy, t + pitch),
                                   swe_load(sZ, sQx, sQy, t - 1),
                                   swe_load(sZ, sQx, sQy, t + 1), r);
        swe_store(Zn, Qxn, Qyn, swe_at(i, j, width), q);
    }
}

static inline size_t shared_bytes(int bx, int by)
{
    return 3 * (size_t)(bx + 2) * (size_t)(by + 2) * sizeof(double);
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
