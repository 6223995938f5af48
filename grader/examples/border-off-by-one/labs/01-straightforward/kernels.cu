// Example submission "border-off-by-one": the bounds skip the last interior row and column
// (i < rows - 2 instead of i < rows - 1). The public datasets never carry debris there, so
// it passes them; hidden datasets whose flow reaches the border catch it.
// Everything else is a plain, correct lab 01 (2-D blocks, one thread per interior cell).

#include "lab.h"
#include "labkit/cuda_check.h"
#include "sciddicat/sciddicat.h"

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

__global__ void reset_flows(int rows, int cols, double *Sf)
{
    int i = 1 + blockIdx.y * blockDim.y + threadIdx.y;
    int j = 1 + blockIdx.x * blockDim.x + threadIdx.x;
    if (i < rows - 2 && j < cols - 2)
        for (int k = 0; k < 4; k++)
            Sf[sciddicat_flow_at(k, i, j, rows, cols)] = 0.0;
}

__global__ void compute_flows(int rows, int cols, const double *z, const double *h, double *Sf,
                              double p_r, double p_epsilon)
{
    int i = 1 + blockIdx.y * blockDim.y + threadIdx.y;
    int j = 1 + blockIdx.x * blockDim.x + threadIdx.x;
    if (!(i < rows - 2 && j < cols - 2))
        return;
    double u[5];
    const double m = h[i * cols + j] - p_epsilon;
    u[0] = z[i * cols + j] + p_epsilon;
    u[1] = z[(i - 1) * cols + j] + h[(i - 1) * cols + j];
    u[2] = z[i * cols + j - 1] + h[i * cols + j - 1];
    u[3] = z[i * cols + j + 1] + h[i * cols + j + 1];
    u[4] = z[(i + 1) * cols + j] + h[(i + 1) * cols + j];
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
    const size_t layer = (size_t)rows * cols;
    for (int k = 0; k < 4; k++)
        if (!(gone & (1u << (k + 1))))
            Sf[k * layer + i * cols + j] = (average - u[k + 1]) * p_r;
}

__global__ void update_width(int rows, int cols, double *h, const double *Sf)
{
    int i = 1 + blockIdx.y * blockDim.y + threadIdx.y;
    int j = 1 + blockIdx.x * blockDim.x + threadIdx.x;
    if (i < rows - 2 && j < cols - 2)
        h[i * cols + j] = new_width(i, j, rows, cols, h, Sf);
}

extern "C" int lab01_gpu_run(int rows, int cols, const double *z, const double *h_in,
                             double *h_out, int steps, int block_x, int block_y, lk_error *err)
{
    const size_t bytes = (size_t)rows * cols * sizeof(double);
    double *d_z, *d_h, *d_Sf;
    LK_CUDA_TRY(err, cudaMalloc(&d_z, bytes));
    LK_CUDA_TRY(err, cudaMalloc(&d_h, bytes));
    LK_CUDA_TRY(err, cudaMalloc(&d_Sf, 4 * bytes));
    LK_CUDA_TRY(err, cudaMemset(d_Sf, 0, 4 * bytes));
    LK_CUDA_TRY(err, cudaMemcpy(d_z, z, bytes, cudaMemcpyHostToDevice));
    LK_CUDA_TRY(err, cudaMemcpy(d_h, h_in, bytes, cudaMemcpyHostToDevice));
    if (rows > 2 && cols > 2) {
        dim3 block(block_x, block_y);
        dim3 grid((cols - 2 + block.x - 1) / block.x, (rows - 2 + block.y - 1) / block.y);
        for (int s = 0; s < steps; s++) {
            reset_flows<<<grid, block>>>(rows, cols, d_Sf);
            LK_LAUNCH_TRY(err);
            compute_flows<<<grid, block>>>(rows, cols, d_z, d_h, d_Sf, SCIDDICAT_P_R,
                                           SCIDDICAT_P_EPSILON);
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
