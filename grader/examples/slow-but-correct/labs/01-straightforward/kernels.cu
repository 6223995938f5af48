// Example submission "slow-but-correct": right results, poor mapping. One thread per grid
// row walks along its row, so a warp's 32 threads read 32 different rows at once (no
// coalescing) and a large grid keeps only a few thousand threads busy. Correct on every
// dataset, far below the solution's speed.

#include "lab.h"
#include "labkit/cuda_check.h"
#include "labkit/sciddicat.h"

__global__ void reset_rows(int rows, int cols, double *Sf)
{
    int i = 1 + blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= rows - 1)
        return;
    for (int j = 1; j < cols - 1; j++)
        lk_sciddicat_reset_cell(i, j, rows, cols, Sf);
}

__global__ void flows_rows(int rows, int cols, const double *z, const double *h, double *Sf)
{
    int i = 1 + blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= rows - 1)
        return;
    for (int j = 1; j < cols - 1; j++)
        lk_sciddicat_flows_cell(i, j, rows, cols, z, h, Sf, LK_SCIDDICAT_P_R,
                                LK_SCIDDICAT_P_EPSILON);
}

__global__ void width_rows(int rows, int cols, double *h, const double *Sf)
{
    int i = 1 + blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= rows - 1)
        return;
    for (int j = 1; j < cols - 1; j++)
        h[lk_sciddicat_at(i, j, cols)] = lk_sciddicat_width_cell(i, j, rows, cols, h, Sf);
}

extern "C" int lab01_gpu_run(int rows, int cols, const double *z, const double *h_in,
                             double *h_out, int steps, int block_x, int block_y, lk_error *err)
{
    (void)block_x; // the row mapping ignores the requested block shape
    (void)block_y;
    const size_t bytes = (size_t)rows * cols * sizeof(double);
    double *d_z, *d_h, *d_Sf;
    LK_CUDA_TRY(err, cudaMalloc(&d_z, bytes));
    LK_CUDA_TRY(err, cudaMalloc(&d_h, bytes));
    LK_CUDA_TRY(err, cudaMalloc(&d_Sf, 4 * bytes));
    LK_CUDA_TRY(err, cudaMemset(d_Sf, 0, 4 * bytes));
    LK_CUDA_TRY(err, cudaMemcpy(d_z, z, bytes, cudaMemcpyHostToDevice));
    LK_CUDA_TRY(err, cudaMemcpy(d_h, h_in, bytes, cudaMemcpyHostToDevice));
    if (rows > 2 && cols > 2) {
        const int threads = 64;
        const int blocks = (rows - 2 + threads - 1) / threads;
        for (int s = 0; s < steps; s++) {
            reset_rows<<<blocks, threads>>>(rows, cols, d_Sf);
            LK_LAUNCH_TRY(err);
            flows_rows<<<blocks, threads>>>(rows, cols, d_z, d_h, d_Sf);
            LK_LAUNCH_TRY(err);
            width_rows<<<blocks, threads>>>(rows, cols, d_h, d_Sf);
            LK_LAUNCH_TRY(err);
        }
    }
    LK_CUDA_TRY(err, cudaMemcpy(h_out, d_h, bytes, cudaMemcpyDeviceToHost));
    LK_CUDA_TRY(err, cudaFree(d_z));
    LK_CUDA_TRY(err, cudaFree(d_h));
    LK_CUDA_TRY(err, cudaFree(d_Sf));
    return 0;
}
