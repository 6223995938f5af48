// Lab 01 (zoe, last year). A 1-D launch over all rows*cols cells; border cells return at once.
#include "lab.h"
#include "labkit/cuda_check.h"
#include "sciddicat/sciddicat.h"

// On a failed CUDA call: the message, then the common exit that frees everything.
#define CHECK(call)                                                                       \
    do {                                                                                  \
        cudaError_t e_ = (call);                                                          \
        if (e_ != cudaSuccess) {                                                          \
            lk_fail(err, "kernels.cu:%d: %s: %s", __LINE__, #call, cudaGetErrorString(e_)); \
            goto cleanup;                                                                 \
        }                                                                                 \
    } while (0)

__device__ static int neighbour(int cell, int dir, int width)
{
    switch (dir) {
    case 1: return cell - width; // north
    case 2: return cell - 1;     // west
    case 3: return cell + 1;     // east
    case 4: return cell + width; // south
    default: return cell;
    }
}

__device__ static bool on_border(int cell, int height, int width)
{
    int r = cell / width, c = cell % width;
    return r == 0 || c == 0 || r == height - 1 || c == width - 1;
}

__global__ void phase_reset(double *flow, int height, int width)
{
    int cell = blockIdx.x * blockDim.x + threadIdx.x;
    int total = height * width;
    if (cell >= total || on_border(cell, height, width))
        return;
    for (int d = 0; d < 4; d++)
        flow[d * total + cell] = 0.0;
}

__global__ void phase_flows(double *flow, const double *ground, const double *debris, int height,
                            int width)
{
    int cell = blockIdx.x * blockDim.x + threadIdx.x;
    int total = height * width;
    if (cell >= total || on_border(cell, height, width))
        return;
    double head[5];
    char active[5];
    for (int d = 0; d < 5; d++) {
        int nb = neighbour(cell, d, width);
        head[d] = d == 0 ? ground[nb] + SCIDDICAT_P_EPSILON : ground[nb] + debris[nb];
        active[d] = 1;
    }
    double level = 0.0;
    for (;;) {
        int members = 0;
        level = debris[cell] - SCIDDICAT_P_EPSILON;
        for (int d = 0; d < 5; d++)
            if (active[d]) {
                level += head[d];
                members++;
            }
        if (members != 0)
            level /= members;
        int removed = 0;
        for (int d = 0; d < 5; d++)
            if (active[d] && level <= head[d]) {
                active[d] = 0;
                removed++;
            }
        if (removed == 0)
            break;
    }
    for (int d = 1; d < 5; d++)
        if (active[d])
            flow[(d - 1) * total + cell] = (level - head[d]) * SCIDDICAT_P_R;
}

__global__ void phase_balance(double *debris, const double *flow, int height, int width)
{
    int cell = blockIdx.x * blockDim.x + threadIdx.x;
    int total = height * width;
    if (cell >= total || on_border(cell, height, width))
        return;
    double sum = debris[cell];
    for (int d = 1; d < 5; d++) {
        int nb = neighbour(cell, d, width);
        sum += flow[(4 - d) * total + nb] - flow[(d - 1) * total + cell];
    }
    debris[cell] = sum;
}

extern "C" int lab01_gpu_run(int rows, int cols, const double *z, const double *h_in,
                             double *h_out, int steps, int block_x, int block_y, lk_error *err)
{
    const int total = rows * cols;
    const int per_block = block_x * block_y;
    const int nblocks = (total + per_block - 1) / per_block;
    double *ground = NULL, *debris = NULL, *flow = NULL;
    int result = -1;
    CHECK(cudaMalloc((void **)&ground, total * sizeof(double)));
    CHECK(cudaMalloc((void **)&debris, total * sizeof(double)));
    CHECK(cudaMalloc((void **)&flow, 4 * total * sizeof(double)));
    CHECK(cudaMemset(flow, 0, 4 * total * sizeof(double)));
    CHECK(cudaMemcpy(ground, z, total * sizeof(double), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(debris, h_in, total * sizeof(double), cudaMemcpyHostToDevice));
    for (int step = 0; step < steps; step++) {
        phase_reset<<<nblocks, per_block>>>(flow, rows, cols);
        CHECK(cudaGetLastError());
        phase_flows<<<nblocks, per_block>>>(flow, ground, debris, rows, cols);
        CHECK(cudaGetLastError());
        phase_balance<<<nblocks, per_block>>>(debris, flow, rows, cols);
        CHECK(cudaGetLastError());
    }
    CHECK(cudaMemcpy(h_out, debris, total * sizeof(double), cudaMemcpyDeviceToHost));
    result = 0;
cleanup:
    cudaFree(ground);
    cudaFree(debris);
    cudaFree(flow);
    return result;
}
