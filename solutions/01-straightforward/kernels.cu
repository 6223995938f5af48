// Lab 01 solution: one thread per interior cell, 2-D blocks, three kernels per step, the
// serial loops of serial.c ported with their arithmetic in the same order.
//
// A careful port also skips the work the serial program does for nothing: most cells are
// dry, and a still cell (sciddicat/sciddicat.h, sciddicat_is_still) has no outflow. The
// flows kernel tests the thickness before loading any neighbour; the width update does not
// load outflows it knows are zero. To know that a neighbour is still, the width update must
// read the thickness of the step's start: the thickness is double-buffered (h_cur -> h_next).
// Per dry cell and step that is 56 bytes of DRAM traffic instead of 128.

#include "lab.h"
#include "labkit/cuda_check.h"
#include "sciddicat/sciddicat.h"

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

// const __restrict__ inputs go through the read-only data cache.
__global__ void compute_flows(int rows, int cols, const double *__restrict__ z,
                              const double *__restrict__ h, double *__restrict__ Sf)
{
    int i, j;
    if (!interior_cell(rows, cols, &i, &j))
        return;
    const double h_c = h[AT(i, j)];
    if (sciddicat_is_still(h_c))
        return; // no outflow: Sf keeps the reset's zeros, no neighbour is loaded
    const double p_r = SCIDDICAT_P_R, p_epsilon = SCIDDICAT_P_EPSILON;
    const double m = h_c - p_epsilon;
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

// The serial update, term by term; an outflow of a still cell is zero (reset, and the flows
// kernel wrote none), so it is not loaded. Border cells' outflows are zero too, and a
// border neighbour that is not still just costs a load of that zero.
__global__ void update_width(int rows, int cols, const double *__restrict__ h,
                             const double *__restrict__ Sf, double *__restrict__ h_next)
{
    int i, j;
    if (!interior_cell(rows, cols, &i, &j))
        return;
    const double h_c = h[AT(i, j)];
    const bool still = sciddicat_is_still(h_c);
    const bool still_n = sciddicat_is_still(h[AT(i - 1, j)]);
    const bool still_w = sciddicat_is_still(h[AT(i, j - 1)]);
    const bool still_e = sciddicat_is_still(h[AT(i, j + 1)]);
    const bool still_s = sciddicat_is_still(h[AT(i + 1, j)]);
    const double in_n = still_n ? 0.0 : Sf[FLOW(3, i - 1, j)];
    const double in_w = still_w ? 0.0 : Sf[FLOW(2, i, j - 1)];
    const double in_e = still_e ? 0.0 : Sf[FLOW(1, i, j + 1)];
    const double in_s = still_s ? 0.0 : Sf[FLOW(0, i + 1, j)];
    double out[4] = {0.0, 0.0, 0.0, 0.0};
    if (!still)
        for (int k = 0; k < 4; k++)
            out[k] = Sf[FLOW(k, i, j)];
    double t = h_c;
    t += in_n - out[0];
    t += in_w - out[1];
    t += in_e - out[2];
    t += in_s - out[3];
    h_next[AT(i, j)] = t;
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
    LK_CUDA_TRY(err, cudaMalloc(&d[2], bytes));
    LK_CUDA_TRY(err, cudaMalloc(&d[3], 4 * bytes));
    double *d_z = d[0], *d_h[2] = {d[1], d[2]}, *d_Sf = d[3];
    // Border outflows are read by the width update and never written: zero them once.
    LK_CUDA_TRY(err, cudaMemset(d_Sf, 0, 4 * bytes));
    LK_CUDA_TRY(err, cudaMemcpy(d_z, z, bytes, cudaMemcpyHostToDevice));
    // Border cells are never written: both buffers must hold them.
    LK_CUDA_TRY(err, cudaMemcpy(d_h[0], h_in, bytes, cudaMemcpyHostToDevice));
    LK_CUDA_TRY(err, cudaMemcpy(d_h[1], h_in, bytes, cudaMemcpyHostToDevice));
    int cur = 0;
    if (rows >= 3 && cols >= 3) {
        dim3 block(block_x, block_y);
        dim3 grid((cols - 2 + block.x - 1) / block.x, (rows - 2 + block.y - 1) / block.y);
        for (int s = 0; s < steps; s++) {
            reset_flows<<<grid, block>>>(rows, cols, d_Sf);
            LK_LAUNCH_TRY(err);
            compute_flows<<<grid, block>>>(rows, cols, d_z, d_h[cur], d_Sf);
            LK_LAUNCH_TRY(err);
            update_width<<<grid, block>>>(rows, cols, d_h[cur], d_Sf, d_h[1 - cur]);
            LK_LAUNCH_TRY(err);
            cur = 1 - cur;
        }
    }
    LK_CUDA_TRY(err, cudaMemcpy(h_out, d_h[cur], bytes, cudaMemcpyDeviceToHost));
    return 0;
}

extern "C" int lab01_gpu_run(int rows, int cols, const double *z, const double *h_in,
                             double *h_out, int steps, int block_x, int block_y, lk_error *err)
{
    double *d[4] = {NULL, NULL, NULL, NULL};
    int rc = run_on_device(rows, cols, z, h_in, h_out, steps, block_x, block_y, d, err);
    for (int k = 0; k < 4; k++)
        cudaFree(d[k]);
    return rc;
}
