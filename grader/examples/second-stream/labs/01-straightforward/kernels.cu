// Example submission "second-stream": does its work on a second, non-blocking CUDA stream
// and returns as soon as everything is queued, without waiting: device memory allocated and
// freed in stream order, the output pinned so that the copy back is asynchronous too. A
// clock stopped when the call returns would time the queueing only. The kit's drivers
// synchronise the whole device (every stream) before they stop the clock, so the work is
// timed; the output is complete when the driver reads it.

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

// Interior cell number k of an (rows-2) x (cols-2) interior, row-major, to (i, j). Grids
// have fewer than 2^31 cells, so 32-bit arithmetic is enough (and much cheaper than 64-bit
// division on a GPU).
__device__ static bool interior_cell(int rows, int cols, int *i, int *j)
{
    unsigned k = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned inner_cols = cols - 2;
    if (k >= (unsigned)(rows - 2) * inner_cols)
        return false;
    *i = 1 + (int)(k / inner_cols);
    *j = 1 + (int)(k % inner_cols);
    return true;
}

__global__ void reset_flows(int rows, int cols, double *Sf)
{
    int i, j;
    if (interior_cell(rows, cols, &i, &j))
        for (int k = 0; k < 4; k++)
            Sf[sciddicat_flow_at(k, i, j, rows, cols)] = 0.0;
}

__global__ void compute_flows(int rows, int cols, const double *z, const double *h, double *Sf,
                              double p_r, double p_epsilon)
{
    int i, j;
    if (!interior_cell(rows, cols, &i, &j))
        return;
    // The minimisation of differences, ported by hand in the serial order.
    double u[5];
    const double m = h[sciddicat_at(i, j, cols)] - p_epsilon;
    u[0] = z[sciddicat_at(i, j, cols)] + p_epsilon;
    u[1] = z[sciddicat_at(i - 1, j, cols)] + h[sciddicat_at(i - 1, j, cols)];
    u[2] = z[sciddicat_at(i, j - 1, cols)] + h[sciddicat_at(i, j - 1, cols)];
    u[3] = z[sciddicat_at(i, j + 1, cols)] + h[sciddicat_at(i, j + 1, cols)];
    u[4] = z[sciddicat_at(i + 1, j, cols)] + h[sciddicat_at(i + 1, j, cols)];
    bool out[5] = {false, false, false, false, false};
    double average;
    bool again;
    do {
        again = false;
        average = m;
        int count = 0;
        for (int n = 0; n < 5; n++)
            if (!out[n]) {
                average += u[n];
                count++;
            }
        if (count != 0)
            average /= count;
        for (int n = 0; n < 5; n++)
            if (average <= u[n] && !out[n]) {
                out[n] = true;
                again = true;
            }
    } while (again);
    for (int k = 0; k < 4; k++)
        if (!out[k + 1])
            Sf[sciddicat_flow_at(k, i, j, rows, cols)] = (average - u[k + 1]) * p_r;
}

__global__ void update_width(int rows, int cols, double *h, const double *Sf)
{
    int i, j;
    if (interior_cell(rows, cols, &i, &j))
        h[sciddicat_at(i, j, cols)] = new_width(i, j, rows, cols, h, Sf);
}

extern "C" int lab01_gpu_run(int rows, int cols, const double *z, const double *h_in,
                             double *h_out, int steps, int block_x, int block_y, lk_error *err)
{
    const size_t bytes = (size_t)rows * cols * sizeof(double);
    cudaStream_t side;
    LK_CUDA_TRY(err, cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
    // Pinned, so that cudaMemcpyAsync returns at once. The driver page-locks outputs from
    // 1 MiB up itself and may hand the same buffer again: already registered is fine.
    cudaError_t reg = cudaHostRegister(h_out, bytes, cudaHostRegisterDefault);
    if (reg == cudaErrorHostMemoryAlreadyRegistered)
        cudaGetLastError();
    else
        LK_CUDA_TRY(err, reg);
    double *d_z = NULL, *d_h = NULL, *d_Sf = NULL;
    LK_CUDA_TRY(err, cudaMallocAsync(&d_z, bytes, side));
    LK_CUDA_TRY(err, cudaMallocAsync(&d_h, bytes, side));
    LK_CUDA_TRY(err, cudaMallocAsync(&d_Sf, 4 * bytes, side));
    LK_CUDA_TRY(err, cudaMemsetAsync(d_Sf, 0, 4 * bytes, side));
    // These two return once the data is staged (pageable, under 1 MiB) or queued (page-locked).
    LK_CUDA_TRY(err, cudaMemcpyAsync(d_z, z, bytes, cudaMemcpyHostToDevice, side));
    LK_CUDA_TRY(err, cudaMemcpyAsync(d_h, h_in, bytes, cudaMemcpyHostToDevice, side));
    if (rows >= 3 && cols >= 3) {
        const int threads = block_x * block_y;
        const long long cells = (long long)(rows - 2) * (cols - 2);
        const unsigned blocks = (unsigned)((cells + threads - 1) / threads);
        for (int s = 0; s < steps; s++) {
            reset_flows<<<blocks, threads, 0, side>>>(rows, cols, d_Sf);
            LK_LAUNCH_TRY(err);
            compute_flows<<<blocks, threads, 0, side>>>(rows, cols, d_z, d_h, d_Sf,
                                                        SCIDDICAT_P_R,
                                                        SCIDDICAT_P_EPSILON);
            LK_LAUNCH_TRY(err);
            update_width<<<blocks, threads, 0, side>>>(rows, cols, d_h, d_Sf);
            LK_LAUNCH_TRY(err);
        }
    }
    LK_CUDA_TRY(err, cudaMemcpyAsync(h_out, d_h, bytes, cudaMemcpyDeviceToHost, side));
    LK_CUDA_TRY(err, cudaFreeAsync(d_z, side));
    LK_CUDA_TRY(err, cudaFreeAsync(d_h, side));
    LK_CUDA_TRY(err, cudaFreeAsync(d_Sf, side));
    // No cudaStreamSynchronize: the work is still running when this returns.
    LK_CUDA_TRY(err, cudaStreamDestroy(side));
    return 0;
}
