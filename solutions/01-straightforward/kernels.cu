// Lab 01 solution: one thread per interior cell, 2-D blocks, three kernels per step, the
// serial loops of serial.c ported with their arithmetic in the same order.

#include "lab.h"
#include "labkit/cuda_check.h"
#include "labkit/sciddicat.h"

#define AT(i, j) ((size_t)(i) * (size_t)cols + (size_t)(j))
#define FLOW(k, i, j) ((size_t)(k) * (size_t)rows * (size_t)cols + AT(i, j))

// Thread (x, y) of the grid handles interior cell (1 + y, 1 + x): x runs along a row, so a
// warp reads consecutive addresses.
__device__ static bool interior_cell(int rows, int cols, int *i, int *j)
{
    *j = 1 + blockIdx.x * blockDim.x + threadIdx.x;
    *i = 1 + blockIdx.y * blockDim.y + threadIdx.y;
    return *i < rows - 1 && *j < cols - 1;
}

__global__ void reset_flows(int rows, int cols, double *__restrict__ Sf)
{
    int i, j;
    if (interior_cell(rows, cols, &i, &j))
        for (int k = 0; k < 4; k++)
            Sf[FLOW(k, i, j)] = 0.0;
}

__global__ void compute_flows(int rows, int cols, const double *__restrict__ z,
                              const double *__restrict__ h, double *__restrict__ Sf)
{
    int i, j;
    if (!interior_cell(rows, cols, &i, &j))
        return;
    const double p_r = LK_SCIDDICAT_P_R, p_epsilon = LK_SCIDDICAT_P_EPSILON;
    const double m = h[AT(i, j)] - p_epsilon;
    double u[5];
    u[0] = z[AT(i, j)] + p_epsilon;
    u[1] = z[AT(i - 1, j)] + h[AT(i - 1, j)];
    u[2] = z[AT(i, j - 1)] + h[AT(i, j - 1)];
    u[3] = z[AT(i, j + 1)] + h[AT(i, j + 1)];
    u[4] = z[AT(i + 1, j)] + h[AT(i + 1, j)];
    unsigned eliminated = 0; // a bitmask stays in a register where bool[5] may spill
    double average;
    bool again;
    do {
        again = false;
        average = m;
        int count = 0;
        for (int n = 0; n < 5; n++)
            if (!(eliminated & (1u << n))) {
                average += u[n];
                count++;
            }
        if (count != 0)
            average /= count;
        for (int n = 0; n < 5; n++)
            if (average <= u[n] && !(eliminated & (1u << n))) {
                eliminated |= 1u << n;
                again = true;
            }
    } while (again);
    for (int k = 0; k < 4; k++)
        if (!(eliminated & (1u << (k + 1))))
            Sf[FLOW(k, i, j)] = (average - u[k + 1]) * p_r;
}

__global__ void update_width(int rows, int cols, double *__restrict__ h,
                             const double *__restrict__ Sf)
{
    int i, j;
    if (!interior_cell(rows, cols, &i, &j))
        return;
    double t = h[AT(i, j)];
    t += Sf[FLOW(3, i - 1, j)] - Sf[FLOW(0, i, j)];
    t += Sf[FLOW(2, i, j - 1)] - Sf[FLOW(1, i, j)];
    t += Sf[FLOW(1, i, j + 1)] - Sf[FLOW(2, i, j)];
    t += Sf[FLOW(0, i + 1, j)] - Sf[FLOW(3, i, j)];
    h[AT(i, j)] = t;
}

// Every CUDA call may fail: this runs on buffers the caller frees, so an early return
// leaks nothing.
static int run_on_device(int rows, int cols, const double *z, const double *h_in,
                         double *h_out, int steps, int block_x, int block_y, double **d,
                         lk_error *err)
{
    const size_t bytes = (size_t)rows * cols * sizeof(double);
    LK_CUDA_TRY(err, cudaMalloc(&d[0], bytes));
    LK_CUDA_TRY(err, cudaMalloc(&d[1], bytes));
    LK_CUDA_TRY(err, cudaMalloc(&d[2], 4 * bytes));
    double *d_z = d[0], *d_h = d[1], *d_Sf = d[2];
    // Border outflows are read by the width update and never written: zero them once.
    LK_CUDA_TRY(err, cudaMemset(d_Sf, 0, 4 * bytes));
    LK_CUDA_TRY(err, cudaMemcpy(d_z, z, bytes, cudaMemcpyHostToDevice));
    LK_CUDA_TRY(err, cudaMemcpy(d_h, h_in, bytes, cudaMemcpyHostToDevice));
    if (rows >= 3 && cols >= 3) {
        dim3 block(block_x, block_y);
        dim3 grid((cols - 2 + block.x - 1) / block.x, (rows - 2 + block.y - 1) / block.y);
        for (int s = 0; s < steps; s++) {
            reset_flows<<<grid, block>>>(rows, cols, d_Sf);
            LK_LAUNCH_TRY(err);
            compute_flows<<<grid, block>>>(rows, cols, d_z, d_h, d_Sf);
            LK_LAUNCH_TRY(err);
            update_width<<<grid, block>>>(rows, cols, d_h, d_Sf);
            LK_LAUNCH_TRY(err);
        }
    }
    LK_CUDA_TRY(err, cudaMemcpy(h_out, d_h, bytes, cudaMemcpyDeviceToHost));
    return 0;
}

extern "C" int lab01_gpu_run(int rows, int cols, const double *z, const double *h_in,
                             double *h_out, int steps, int block_x, int block_y, lk_error *err)
{
    double *d[3] = {NULL, NULL, NULL};
    int rc = run_on_device(rows, cols, z, h_in, h_out, steps, block_x, block_y, d, err);
    for (int k = 0; k < 3; k++)
        cudaFree(d[k]);
    return rc;
}
