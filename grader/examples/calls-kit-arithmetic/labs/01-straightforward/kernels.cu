// Example submission "calls-kit-arithmetic": one thread per grid row; the reset and the width
// update are ported by hand, but the flows kernel calls the kit's sciddicat_flows_cell
// instead of porting the minimisation of differences from serial.c. The results would be
// right, but porting that arithmetic is what lab 01 asks for: the rubric's `forbid-source`
// rejects the file before it is built.

#include "lab.h"
#include "labkit/cuda_check.h"
#include "sciddicat/sciddicat.h"

__global__ void reset_rows(int rows, int cols, double *Sf)
{
    int i = 1 + blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= rows - 1)
        return;
    for (int j = 1; j < cols - 1; j++)
        for (int k = 0; k < 4; k++)
            Sf[sciddicat_flow_at(k, i, j, rows, cols)] = 0.0;
}

__global__ void flows_rows(int rows, int cols, const double *z, const double *h, double *Sf)
{
    int i = 1 + blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= rows - 1)
        return;
    for (int j = 1; j < cols - 1; j++)
        sciddicat_flows_cell(i, j, rows, cols, z, h, Sf, SCIDDICAT_P_R,
                                SCIDDICAT_P_EPSILON);
}

__global__ void width_rows(int rows, int cols, double *h, const double *Sf)
{
    int i = 1 + blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= rows - 1)
        return;
    for (int j = 1; j < cols - 1; j++)
    {
        const size_t layer = (size_t)rows * cols, c = sciddicat_at(i, j, cols);
        double t = h[c];
        t += Sf[3 * layer + c - cols] - Sf[0 * layer + c];
        t += Sf[2 * layer + c - 1] - Sf[1 * layer + c];
        t += Sf[1 * layer + c + 1] - Sf[2 * layer + c];
        t += Sf[0 * layer + c + cols] - Sf[3 * layer + c];
        h[c] = t;
    }
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
