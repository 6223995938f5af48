// Lab 01 solution: one thread per interior cell, 2-D blocks, three kernels per step.
// The arithmetic is the shared per-cell functions, so results equal the serial reference.

#include "lab.h"
#include "labkit/cuda_check.h"
#include "labkit/sciddicat.h"

// Thread (x, y) of the grid handles interior cell (1 + y, 1 + x): x runs along a row, so a
// warp reads consecutive addresses.
__global__ void reset_flows(int rows, int cols, double *__restrict__ Sf)
{
    int j = 1 + blockIdx.x * blockDim.x + threadIdx.x;
    int i = 1 + blockIdx.y * blockDim.y + threadIdx.y;
    if (i < rows - 1 && j < cols - 1)
        lk_sciddicat_reset_cell(i, j, rows, cols, Sf);
}

__global__ void compute_flows(int rows, int cols, const double *__restrict__ z,
                              const double *__restrict__ h, double *__restrict__ Sf,
                              double p_r, double p_epsilon)
{
    int j = 1 + blockIdx.x * blockDim.x + threadIdx.x;
    int i = 1 + blockIdx.y * blockDim.y + threadIdx.y;
    if (i < rows - 1 && j < cols - 1)
        lk_sciddicat_flows_cell(i, j, rows, cols, z, h, Sf, p_r, p_epsilon);
}

__global__ void update_width(int rows, int cols, double *__restrict__ h,
                             const double *__restrict__ Sf)
{
    int j = 1 + blockIdx.x * blockDim.x + threadIdx.x;
    int i = 1 + blockIdx.y * blockDim.y + threadIdx.y;
    if (i < rows - 1 && j < cols - 1)
        h[lk_sciddicat_at(i, j, cols)] = lk_sciddicat_width_cell(i, j, rows, cols, h, Sf);
}

extern "C" int lab01_gpu_run(int rows, int cols, const double *z, const double *h_in,
                             double *h_out, int steps, const lk_launch *launch, lk_error *err)
{
    const size_t bytes = (size_t)rows * cols * sizeof(double);
    double *d_z = NULL, *d_h = NULL, *d_Sf = NULL;
    LK_CUDA_TRY(err, cudaMalloc(&d_z, bytes));
    LK_CUDA_TRY(err, cudaMalloc(&d_h, bytes));
    LK_CUDA_TRY(err, cudaMalloc(&d_Sf, LK_SCIDDICAT_NFLOWS * bytes));
    LK_CUDA_TRY(err, cudaMemset(d_Sf, 0, LK_SCIDDICAT_NFLOWS * bytes));
    LK_CUDA_TRY(err, cudaMemcpy(d_z, z, bytes, cudaMemcpyHostToDevice));
    LK_CUDA_TRY(err, cudaMemcpy(d_h, h_in, bytes, cudaMemcpyHostToDevice));

    if (rows >= 3 && cols >= 3) {
        dim3 block(launch->block_x, launch->block_y);
        dim3 grid((cols - 2 + block.x - 1) / block.x, (rows - 2 + block.y - 1) / block.y);
        for (int s = 0; s < steps; s++) {
            reset_flows<<<grid, block>>>(rows, cols, d_Sf);
            LK_LAUNCH_TRY(err);
            compute_flows<<<grid, block>>>(rows, cols, d_z, d_h, d_Sf, LK_SCIDDICAT_P_R,
                                           LK_SCIDDICAT_P_EPSILON);
            LK_LAUNCH_TRY(err);
            update_width<<<grid, block>>>(rows, cols, d_h, d_Sf);
            LK_LAUNCH_TRY(err);
        }
    }

    LK_CUDA_TRY(err, cudaMemcpy(h_out, d_h, bytes, cudaMemcpyDeviceToHost));
    LK_CUDA_TRY(err, cudaFree(d_z));
    LK_CUDA_TRY(err, cudaFree(d_h));
    LK_CUDA_TRY(err, cudaFree(d_Sf));
    return 0;
}
