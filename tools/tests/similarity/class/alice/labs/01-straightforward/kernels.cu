// Lab 01, alice: one thread per interior cell on a 2-D grid, three kernels per step.

#include "lab.h"
#include "labkit/cuda_check.h"
#include "sciddicat/sciddicat.h"

#define AT(i, j) ((size_t)(i) * (size_t)cols + (size_t)(j))
#define FLOW(k, i, j) ((size_t)(k) * (size_t)rows * (size_t)cols + AT(i, j))

// x runs along a row so that neighbouring threads touch neighbouring cells.
__device__ static bool my_cell(int rows, int cols, int *i, int *j)
{
    *j = 1 + blockIdx.x * blockDim.x + threadIdx.x;
    *i = 1 + blockIdx.y * blockDim.y + threadIdx.y;
    return *i < rows - 1 && *j < cols - 1;
}

__global__ void reset_flows(int rows, int cols, double *Sf)
{
    int i, j;
    if (my_cell(rows, cols, &i, &j))
        for (int k = 0; k < 4; k++)
            Sf[FLOW(k, i, j)] = 0.0;
}

__global__ void compute_flows(int rows, int cols, const double *z, const double *h, double *Sf)
{
    int i, j;
    if (!my_cell(rows, cols, &i, &j))
        return;
    const double p_r = SCIDDICAT_P_R, p_epsilon = SCIDDICAT_P_EPSILON;
    const double m = h[AT(i, j)] - p_epsilon;
    double u[5];
    u[0] = z[AT(i, j)] + p_epsilon;
    u[1] = z[AT(i - 1, j)] + h[AT(i - 1, j)];
    u[2] = z[AT(i, j - 1)] + h[AT(i, j - 1)];
    u[3] = z[AT(i, j + 1)] + h[AT(i, j + 1)];
    u[4] = z[AT(i + 1, j)] + h[AT(i + 1, j)];
    unsigned dropped = 0;
    double average;
    bool again;
    do {
        again = false;
        average = m;
        int count = 0;
        for (int n = 0; n < 5; n++)
            if (!(dropped & (1u << n))) {
                average += u[n];
                count++;
            }
        if (count != 0)
            average /= count;
        for (int n = 0; n < 5; n++)
            if (average <= u[n] && !(dropped & (1u << n))) {
                dropped |= 1u << n;
                again = true;
            }
    } while (again);
    for (int k = 0; k < 4; k++)
        if (!(dropped & (1u << (k + 1))))
            Sf[FLOW(k, i, j)] = (average - u[k + 1]) * p_r;
}

__global__ void update_width(int rows, int cols, const double *h, const double *Sf,
                             double *h_next)
{
    int i, j;
    if (!my_cell(rows, cols, &i, &j))
        return;
    double t = h[AT(i, j)];
    t += Sf[FLOW(3, i - 1, j)] - Sf[FLOW(0, i, j)];
    t += Sf[FLOW(2, i, j - 1)] - Sf[FLOW(1, i, j)];
    t += Sf[FLOW(1, i, j + 1)] - Sf[FLOW(2, i, j)];
    t += Sf[FLOW(0, i + 1, j)] - Sf[FLOW(3, i, j)];
    h_next[AT(i, j)] = t;
}

// The buffers belong to the caller, who frees them: an early return leaks nothing.
static int run_steps(int rows, int cols, const double *z, const double *h_in, double *h_out,
                     int steps, int block_x, int block_y, double **buf, lk_error *err)
{
    const size_t bytes = (size_t)rows * cols * sizeof(double);
    for (int b = 0; b < 3; b++)
        LK_CUDA_TRY(err, cudaMalloc(&buf[b], bytes));
    LK_CUDA_TRY(err, cudaMalloc(&buf[3], 4 * bytes));
    double *d_z = buf[0], *d_h[2] = {buf[1], buf[2]}, *d_Sf = buf[3];
    LK_CUDA_TRY(err, cudaMemset(d_Sf, 0, 4 * bytes));
    LK_CUDA_TRY(err, cudaMemcpy(d_z, z, bytes, cudaMemcpyHostToDevice));
    LK_CUDA_TRY(err, cudaMemcpy(d_h[0], h_in, bytes, cudaMemcpyHostToDevice));
    LK_CUDA_TRY(err, cudaMemcpy(d_h[1], h_in, bytes, cudaMemcpyHostToDevice));
    int now = 0;
    if (rows >= 3 && cols >= 3) {
        dim3 block(block_x, block_y);
        dim3 grid((cols - 2 + block_x - 1) / block_x, (rows - 2 + block_y - 1) / block_y);
        for (int s = 0; s < steps; s++) {
            reset_flows<<<grid, block>>>(rows, cols, d_Sf);
            LK_LAUNCH_TRY(err);
            compute_flows<<<grid, block>>>(rows, cols, d_z, d_h[now], d_Sf);
            LK_LAUNCH_TRY(err);
            update_width<<<grid, block>>>(rows, cols, d_h[now], d_Sf, d_h[1 - now]);
            LK_LAUNCH_TRY(err);
            now = 1 - now;
        }
    }
    LK_CUDA_TRY(err, cudaMemcpy(h_out, d_h[now], bytes, cudaMemcpyDeviceToHost));
    return 0;
}

extern "C" int lab01_gpu_run(int rows, int cols, const double *z, const double *h_in,
                             double *h_out, int steps, int block_x, int block_y, lk_error *err)
{
    double *buf[4] = {NULL, NULL, NULL, NULL};
    int rc = run_steps(rows, cols, z, h_in, h_out, steps, block_x, block_y, buf, err);
    for (int b = 0; b < 4; b++)
        cudaFree(buf[b]);
    return rc;
}
