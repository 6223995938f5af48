// lab 1 by erin

#include "lab.h"
#include "labkit/cuda_check.h"
#include "sciddicat/sciddicat.h"

#define IDX(i, j) ((size_t)(i) * (size_t)cols + (size_t)(j))
#define OUTF(k, i, j) ((size_t)(k) * (size_t)rows * (size_t)cols + IDX(i, j))

// which cell is mine
__device__ static bool inside(int rows, int cols, int *i, int *j)
{
    *j = 1 + blockIdx.x * blockDim.x + threadIdx.x;
    *i = 1 + blockIdx.y * blockDim.y + threadIdx.y;
    return *i < rows - 1 && *j < cols - 1;
}

__global__ void width_kernel(int rows, int cols, const double *h, const double *Sf,
                             double *h_new)
{
    int i, j;
    if (!inside(rows, cols, &i, &j))
        return;
    double acc = h[IDX(i, j)];
    acc += Sf[OUTF(3, i - 1, j)] - Sf[OUTF(0, i, j)];
    acc += Sf[OUTF(2, i, j - 1)] - Sf[OUTF(1, i, j)];
    acc += Sf[OUTF(1, i, j + 1)] - Sf[OUTF(2, i, j)];
    acc += Sf[OUTF(0, i + 1, j)] - Sf[OUTF(3, i, j)];
    h_new[IDX(i, j)] = acc;
}

__global__ void flows_kernel(int rows, int cols, const double *z, const double *h, double *Sf)
{
    int i, j;
    if (!inside(rows, cols, &i, &j))
        return;
    const double p_r = SCIDDICAT_P_R, p_epsilon = SCIDDICAT_P_EPSILON;
    const double m = h[IDX(i, j)] - p_epsilon;
    double u[5];
    u[0] = z[IDX(i, j)] + p_epsilon;
    u[1] = z[IDX(i - 1, j)] + h[IDX(i - 1, j)];
    u[2] = z[IDX(i, j - 1)] + h[IDX(i, j - 1)];
    u[3] = z[IDX(i, j + 1)] + h[IDX(i, j + 1)];
    u[4] = z[IDX(i + 1, j)] + h[IDX(i + 1, j)];
    unsigned mask = 0;
    double avg;
    bool more;
    do {
        more = false;
        avg = m;
        int cnt = 0;
        for (int n = 0; n < 5; n++)
            if (!(mask & (1u << n))) {
                avg += u[n];
                cnt++;
            }
        if (cnt != 0)
            avg /= cnt;
        for (int n = 0; n < 5; n++)
            if (avg <= u[n] && !(mask & (1u << n))) {
                mask |= 1u << n;
                more = true;
            }
    } while (more);
    for (int k = 0; k < 4; k++)
        if (!(mask & (1u << (k + 1))))
            Sf[OUTF(k, i, j)] = (avg - u[k + 1]) * p_r;
}

__global__ void clear_sf(int rows, int cols, double *Sf)
{
    int i, j;
    if (inside(rows, cols, &i, &j))
        for (int k = 0; k < 4; k++)
            Sf[OUTF(k, i, j)] = 0.0;
}

static int do_work(int rows, int cols, const double *z, const double *h_in, double *h_out,
                     int steps, int block_x, int block_y, double **ptrs, lk_error *err)
{
    const size_t bytes = (size_t)rows * cols * sizeof(double);
    for (int q = 0; q < 3; q++)
        LK_CUDA_TRY(err, cudaMalloc(&ptrs[q], bytes));
    LK_CUDA_TRY(err, cudaMalloc(&ptrs[3], 4 * bytes));
    double *dz = ptrs[0], *dh[2] = {ptrs[1], ptrs[2]}, *dsf = ptrs[3];
    LK_CUDA_TRY(err, cudaMemset(dsf, 0, 4 * bytes));
    LK_CUDA_TRY(err, cudaMemcpy(dz, z, bytes, cudaMemcpyHostToDevice));
    LK_CUDA_TRY(err, cudaMemcpy(dh[0], h_in, bytes, cudaMemcpyHostToDevice));
    LK_CUDA_TRY(err, cudaMemcpy(dh[1], h_in, bytes, cudaMemcpyHostToDevice));
    int cur = 0;
    if (rows >= 3 && cols >= 3) {
        dim3 block(block_x, block_y);
        dim3 grid((cols - 2 + block_x - 1) / block_x, (rows - 2 + block_y - 1) / block_y);
        for (int step = 0; step < steps; step++) {
            clear_sf<<<grid, block>>>(rows, cols, dsf);
            LK_LAUNCH_TRY(err);
            flows_kernel<<<grid, block>>>(rows, cols, dz, dh[cur], dsf);
            LK_LAUNCH_TRY(err);
            width_kernel<<<grid, block>>>(rows, cols, dh[cur], dsf, dh[1 - cur]);
            LK_LAUNCH_TRY(err);
            cur = 1 - cur;
        }
    }
    LK_CUDA_TRY(err, cudaMemcpy(h_out, dh[cur], bytes, cudaMemcpyDeviceToHost));
    return 0;
}

extern "C" int lab01_gpu_run(int rows, int cols, const double *z, const double *h_in,
                             double *h_out, int steps, int block_x, int block_y, lk_error *err)
{
    double *ptrs[4] = {NULL, NULL, NULL, NULL};
    int result = do_work(rows, cols, z, h_in, h_out, steps, block_x, block_y, ptrs, err);
    for (int q = 0; q < 4; q++)
        cudaFree(ptrs[q]);
    return result;
}
