// yuri lab01
#include "lab.h"
#include "labkit/cuda_check.h"
#include "sciddicat/sciddicat.h"

// On a failed CUDA call: the message, then the common exit that frees everything.
#define CHECK(call)                                                                       \
    do {                                                                                  \
        cudaError_t e_ = (call);                                                          \
        if (e_ != cudaSuccess) {                                                          \
            lk_fail(err, "kernels.cu:%d: %s: %s", __LINE__, #call, cudaGetErrorString(e_)); \
            goto out;                                                                 \
        }                                                                                 \
    } while (0)

__device__ static int nbr(int cell, int dir, int width)
{
    switch (dir) {
    case 1: return cell - width; // north
    case 2: return cell - 1;     // west
    case 3: return cell + 1;     // east
    case 4: return cell + width; // south
    default: return cell;
    }
}

__device__ static bool edge(int cell, int height, int width)
{
    int r = cell / width, c = cell % width;
    return r == 0 || c == 0 || r == height - 1 || c == width - 1;
}

__global__ void k1(double *df, int height, int width)
{
    int cell = blockIdx.x * blockDim.x + threadIdx.x;
    int total = height * width;
    if (cell >= total || edge(cell, height, width))
        return;
    for (int d = 0; d < 4; d++)
        df[d * total + cell] = 0.0;
}

__global__ void k2(double *df, const double *dz, const double *dh, int height,
                            int width)
{
    int cell = blockIdx.x * blockDim.x + threadIdx.x;
    int total = height * width;
    if (cell >= total || edge(cell, height, width))
        return;
    double hv[5];
    char on[5];
    for (int d = 0; d < 5; d++) {
        int nb = nbr(cell, d, width);
        hv[d] = d == 0 ? dz[nb] + SCIDDICAT_P_EPSILON : dz[nb] + dh[nb];
        on[d] = 1;
    }
    double lv = 0.0;
    for (;;) {
        int cnt = 0;
        lv = dh[cell] - SCIDDICAT_P_EPSILON;
        for (int d = 0; d < 5; d++)
            if (on[d]) {
                lv += hv[d];
                cnt++;
            }
        if (cnt != 0)
            lv /= cnt;
        int rm = 0;
        for (int d = 0; d < 5; d++)
            if (on[d] && lv <= hv[d]) {
                on[d] = 0;
                rm++;
            }
        if (rm == 0)
            break;
    }
    for (int d = 1; d < 5; d++)
        if (on[d])
            df[(d - 1) * total + cell] = (lv - hv[d]) * SCIDDICAT_P_R;
}

__global__ void k3(double *dh, const double *df, int height, int width)
{
    int cell = blockIdx.x * blockDim.x + threadIdx.x;
    int total = height * width;
    if (cell >= total || edge(cell, height, width))
        return;
    double sum = dh[cell];
    for (int d = 1; d < 5; d++) {
        int nb = nbr(cell, d, width);
        sum += df[(4 - d) * total + nb] - df[(d - 1) * total + cell];
    }
    dh[cell] = sum;
}

extern "C" int lab01_gpu_run(int rows, int cols, const double *z, const double *h_in,
                             double *h_out, int steps, int block_x, int block_y, lk_error *err)
{
    const int total = rows * cols;
    const int per_block = block_x * block_y;
    const int nblocks = (total + per_block - 1) / per_block;
    double *dz = NULL, *dh = NULL, *df = NULL;
    int ret = -1;
    CHECK(cudaMalloc((void **)&dz, total * sizeof(double)));
    CHECK(cudaMalloc((void **)&dh, total * sizeof(double)));
    CHECK(cudaMalloc((void **)&df, 4 * total * sizeof(double)));
    CHECK(cudaMemset(df, 0, 4 * total * sizeof(double)));
    CHECK(cudaMemcpy(dz, z, total * sizeof(double), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dh, h_in, total * sizeof(double), cudaMemcpyHostToDevice));
    for (int step = 0; step < steps; step++) {
        k1<<<nblocks, per_block>>>(df, rows, cols);
        CHECK(cudaGetLastError());
        k2<<<nblocks, per_block>>>(df, dz, dh, rows, cols);
        CHECK(cudaGetLastError());
        k3<<<nblocks, per_block>>>(dh, df, rows, cols);
        CHECK(cudaGetLastError());
    }
    CHECK(cudaMemcpy(h_out, dh, total * sizeof(double), cudaMemcpyDeviceToHost));
    ret = 0;
out:
    cudaFree(dz);
    cudaFree(dh);
    cudaFree(df);
    return ret;
}
