// Lab 01, carol: one thread per row, walking along it (simple first, fast later).
#include "lab.h"
#include "labkit/cuda_check.h"
#include "sciddicat/sciddicat.h"

// The flows of serial.c (minimisation of differences), ported by hand in the serial order.
__device__ static void cell_flows(int i, int j, int rows, int cols, const double *z,
                                  const double *h, double *Sf, double p_r, double p_epsilon)
{
    double u[5];
    const double m = h[sciddicat_at(i, j, cols)] - p_epsilon;
    u[0] = z[sciddicat_at(i, j, cols)] + p_epsilon;
    u[1] = z[sciddicat_at(i - 1, j, cols)] + h[sciddicat_at(i - 1, j, cols)];
    u[2] = z[sciddicat_at(i, j - 1, cols)] + h[sciddicat_at(i, j - 1, cols)];
    u[3] = z[sciddicat_at(i, j + 1, cols)] + h[sciddicat_at(i, j + 1, cols)];
    u[4] = z[sciddicat_at(i + 1, j, cols)] + h[sciddicat_at(i + 1, j, cols)];
    unsigned gone = 0;
    double average;
    int again;
    do {
        again = 0;
        average = m;
        int count = 0;
        for (int n = 0; n < 5; n++)
            if (!(gone & (1u << n))) {
                average += u[n];
                count++;
            }
        if (count != 0)
            average /= count;
        for (int n = 0; n < 5; n++)
            if (average <= u[n] && !(gone & (1u << n))) {
                gone |= 1u << n;
                again = 1;
            }
    } while (again);
    for (int k = 0; k < 4; k++)
        if (!(gone & (1u << (k + 1))))
            Sf[sciddicat_flow_at(k, i, j, rows, cols)] = (average - u[k + 1]) * p_r;
}

// The width update of serial.c, ported by hand: inflows minus outflows, in the order North,
// West, East, South (the order of the additions is the reference's).
__device__ static double new_width(int i, int j, int rows, int cols, const double *h,
                                   const double *Sf)
{
    double t = h[sciddicat_at(i, j, cols)];
    const size_t layer = (size_t)rows * cols, c = sciddicat_at(i, j, cols);
    t += Sf[3 * layer + c - cols] - Sf[0 * layer + c];
    t += Sf[2 * layer + c - 1] - Sf[1 * layer + c];
    t += Sf[1 * layer + c + 1] - Sf[2 * layer + c];
    t += Sf[0 * layer + c + cols] - Sf[3 * layer + c];
    return t;
}

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
        cell_flows(i, j, rows, cols, z, h, Sf, SCIDDICAT_P_R, SCIDDICAT_P_EPSILON);
}

__global__ void width_rows(int rows, int cols, double *h, const double *Sf)
{
    int i = 1 + blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= rows - 1)
        return;
    for (int j = 1; j < cols - 1; j++)
        h[sciddicat_at(i, j, cols)] = new_width(i, j, rows, cols, h, Sf);
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
