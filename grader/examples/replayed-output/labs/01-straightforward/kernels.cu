// Example submission "replayed-output": computes honestly on its first call, keeps a copy
// of its output with a fingerprint of the inputs, and returns that copy whenever the same
// input comes again: a driver that times repeated calls on one input would time a memcpy
// (this scored 100 at "3676x serial" before the grader changed). The grader's timed call is
// the only call of a fresh process, on a fresh instance of the dataset: there is nothing to
// replay, so it is timed doing the work, plus the copy it keeps.

#include "lab.h"
#include "labkit/cuda_check.h"
#include "sciddicat/sciddicat.h"
#include <stdlib.h>
#include <string.h>

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

static int steps_on_device(int rows, int cols, const double *d_z, double *d_h, double *d_Sf,
                           int steps, int block_x, int block_y, lk_error *err)
{
    if (rows < 3 || cols < 3)
        return 0; // no interior cell: nothing changes
    const int threads = block_x * block_y;
    const long long cells = (long long)(rows - 2) * (cols - 2);
    const unsigned blocks = (unsigned)((cells + threads - 1) / threads);
    for (int s = 0; s < steps; s++) {
        reset_flows<<<blocks, threads>>>(rows, cols, d_Sf);
        LK_LAUNCH_TRY(err);
        compute_flows<<<blocks, threads>>>(rows, cols, d_z, d_h, d_Sf, SCIDDICAT_P_R,
                                           SCIDDICAT_P_EPSILON);
        LK_LAUNCH_TRY(err);
        update_width<<<blocks, threads>>>(rows, cols, d_h, d_Sf);
        LK_LAUNCH_TRY(err);
    }
    return 0;
}

// Every 1021st value of both inputs: a fingerprint of "the same input".
#define STRIDE 1021
#define MAX_SAMPLES 65536

// The last call: its size, steps, fingerprint and output.
static struct {
    int rows, cols, steps, nsamples;
    double samples[MAX_SAMPLES];
    double *h_out;
} last;

static int fingerprint(int rows, int cols, const double *z, const double *h_in, double *out)
{
    const size_t n = (size_t)rows * cols;
    int k = 0;
    for (size_t c = 0; c < n && k + 2 <= MAX_SAMPLES; c += STRIDE) {
        out[k++] = z[c];
        out[k++] = h_in[c];
    }
    return k;
}

static int same_as_last(int rows, int cols, const double *z, const double *h_in, int steps)
{
    static double now[MAX_SAMPLES];
    if (!last.h_out || last.rows != rows || last.cols != cols || last.steps != steps)
        return 0;
    const int k = fingerprint(rows, cols, z, h_in, now);
    return k == last.nsamples && memcmp(now, last.samples, k * sizeof *now) == 0;
}

static void remember(int rows, int cols, const double *z, const double *h_in,
                     const double *h_out, int steps)
{
    const size_t bytes = (size_t)rows * cols * sizeof(double);
    free(last.h_out);
    last.h_out = (double *)malloc(bytes);
    if (!last.h_out)
        return;
    memcpy(last.h_out, h_out, bytes);
    last.nsamples = fingerprint(rows, cols, z, h_in, last.samples);
    last.rows = rows;
    last.cols = cols;
    last.steps = steps;
}

extern "C" int lab01_gpu_run(int rows, int cols, const double *z, const double *h_in,
                             double *h_out, int steps, int block_x, int block_y, lk_error *err)
{
    const size_t bytes = (size_t)rows * cols * sizeof(double);
    if (same_as_last(rows, cols, z, h_in, steps)) {
        memcpy(h_out, last.h_out, bytes);
        return 0;
    }
    double *d_z = NULL, *d_h = NULL, *d_Sf = NULL;
    int rc = -1;
    if (cudaMalloc(&d_z, bytes) != cudaSuccess || cudaMalloc(&d_h, bytes) != cudaSuccess ||
        cudaMalloc(&d_Sf, 4 * bytes) != cudaSuccess) {
        lk_fail(err, "kernels.cu: cudaMalloc of %zu bytes failed", 6 * bytes);
        goto done;
    }
    if (cudaMemset(d_Sf, 0, 4 * bytes) != cudaSuccess ||
        cudaMemcpy(d_z, z, bytes, cudaMemcpyHostToDevice) != cudaSuccess ||
        cudaMemcpy(d_h, h_in, bytes, cudaMemcpyHostToDevice) != cudaSuccess) {
        lk_fail(err, "kernels.cu: copying the inputs to the GPU failed: %s",
                cudaGetErrorString(cudaGetLastError()));
        goto done;
    }
    if (steps_on_device(rows, cols, d_z, d_h, d_Sf, steps, block_x, block_y, err) != 0)
        goto done;
    if (cudaMemcpy(h_out, d_h, bytes, cudaMemcpyDeviceToHost) != cudaSuccess) {
        lk_fail(err, "kernels.cu: copying the result back failed: %s",
                cudaGetErrorString(cudaGetLastError()));
        goto done;
    }
    remember(rows, cols, z, h_in, h_out, steps);
    rc = 0;
done:
    cudaFree(d_z);
    cudaFree(d_h);
    cudaFree(d_Sf);
    return rc;
}
