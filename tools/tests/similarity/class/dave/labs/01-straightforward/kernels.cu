// Lab 01 - dave
// Four separate outflow arrays (north, west, east, south) instead of one Sf with four
// layers; the threads cover the whole grid and the border threads just leave.
#include "lab.h"
#include "labkit/cuda_check.h"
#include "sciddicat/sciddicat.h"

typedef struct {
    double *north, *west, *east, *south;
} Outflows;

__global__ void k_clear(Outflows f, int nr, int nc)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x, row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row <= 0 || col <= 0 || row >= nr - 1 || col >= nc - 1) return;
    int id = row * nc + col;
    f.north[id] = f.west[id] = f.east[id] = f.south[id] = 0.0;
}

__global__ void k_flows(Outflows f, const double *alt, const double *hh, int nr, int nc)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x, row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row <= 0 || col <= 0 || row >= nr - 1 || col >= nc - 1) return;
    int id = row * nc + col;
    int nb[5] = {id, id - nc, id - 1, id + 1, id + nc};
    double level[5];
    bool out[5] = {false, false, false, false, false};
    level[0] = alt[id] + SCIDDICAT_P_EPSILON;
    for (int q = 1; q < 5; q++) level[q] = alt[nb[q]] + hh[nb[q]];
    double mean;
    bool removed_one = true;
    while (removed_one) {
        removed_one = false;
        mean = hh[id] - SCIDDICAT_P_EPSILON;
        int left = 0;
        for (int q = 0; q < 5; q++) if (!out[q]) { mean += level[q]; left++; }
        if (left) mean /= left;
        for (int q = 0; q < 5; q++)
            if (mean <= level[q] && !out[q]) { out[q] = true; removed_one = true; }
    }
    double *dst[4] = {f.north, f.west, f.east, f.south};
    for (int q = 0; q < 4; q++)
        if (!out[q + 1]) dst[q][id] = (mean - level[q + 1]) * SCIDDICAT_P_R;
}

__global__ void k_width(Outflows f, double *hh, int nr, int nc)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x, row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row <= 0 || col <= 0 || row >= nr - 1 || col >= nc - 1) return;
    int id = row * nc + col;
    double w = hh[id];
    w += f.south[id - nc] - f.north[id];
    w += f.east[id - 1] - f.west[id];
    w += f.west[id + 1] - f.east[id];
    w += f.north[id + nc] - f.south[id];
    hh[id] = w;
}

extern "C" int lab01_gpu_run(int rows, int cols, const double *z, const double *h_in,
                             double *h_out, int steps, int block_x, int block_y, lk_error *err)
{
    size_t n = (size_t)rows * cols, sz = n * sizeof(double);
    double *mem = NULL;
    // one allocation: altitude, thickness and the four outflow arrays side by side
    LK_CUDA_TRY(err, cudaMalloc(&mem, 6 * sz));
    double *alt = mem, *hh = mem + n;
    Outflows f = {mem + 2 * n, mem + 3 * n, mem + 4 * n, mem + 5 * n};
    int rc = 0;
    if (cudaMemset(mem, 0, 6 * sz) != cudaSuccess || cudaMemcpy(alt, z, sz, cudaMemcpyHostToDevice) != cudaSuccess
        || cudaMemcpy(hh, h_in, sz, cudaMemcpyHostToDevice) != cudaSuccess)
        rc = lk_fail(err, "kernels.cu: could not set up the device copies");
    dim3 threads(block_x, block_y), blocks((cols + block_x - 1) / block_x, (rows + block_y - 1) / block_y);
    for (int t = 0; rc == 0 && t < steps; t++) {
        k_clear<<<blocks, threads>>>(f, rows, cols);
        k_flows<<<blocks, threads>>>(f, alt, hh, rows, cols);
        k_width<<<blocks, threads>>>(f, hh, rows, cols);
        cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess) rc = lk_fail(err, "kernels.cu: step %d: %s", t, cudaGetErrorString(e));
    }
    if (rc == 0 && cudaMemcpy(h_out, hh, sz, cudaMemcpyDeviceToHost) != cudaSuccess)
        rc = lk_fail(err, "kernels.cu: could not copy the thickness back");
    cudaFree(mem);
    return rc;
}
