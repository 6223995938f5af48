// Lab 01 solution: one thread per interior cell, 2-D blocks, three kernels per step, the
// serial loops of serial.c ported with their arithmetic in the same order.
//
// A careful port also skips the work the serial program does for nothing: most cells are
// dry, and a still cell (sciddicat/sciddicat.h, sciddicat_is_still) has no outflow. The
// flows kernel tests the thickness before loading any neighbour; the width update does not
// load outflows it knows are zero. To know that a neighbour is still, the width update must
// read the thickness of the step's start: the thickness is double-buffered (h_cur -> h_next).
// Most outflows are zeros the reset rewrites every step: the flows kernel notes in a byte per
// cell which directions it wrote (4 bits), and the next reset clears just those. Per dry
// cell and step that is 25 bytes of DRAM traffic instead of 128; a wet cell moves the one or
// two outflows it sends, not all four twice.

#include "lab.h"
#include "labkit/cuda_check.h"
#include "sciddicat/sciddicat.h"

#define AT(i, j) ((size_t)(i) * (size_t)cols + (size_t)(j))
#define FLOW(k, i, j) ((size_t)(k) * (size_t)rows * (size_t)cols + AT(i, j))

// Thread (x, y) of the grid handles cell (1 + y, x), interior cells only: x runs along a
// row, so a warp reads consecutive addresses, and column 0 starts a warp, so a warp's 32
// doubles are 8 whole 32-byte sectors (with x = column 1 first they would span 9).
__device__ static bool interior_cell(int rows, int cols, int *i, int *j)
{
    *j = blockIdx.x * blockDim.x + threadIdx.x;
    *i = 1 + blockIdx.y * blockDim.y + threadIdx.y;
    return *i < rows - 1 && *j >= 1 && *j < cols - 1;
}

// Bit k of written[cell]: outflow k may be nonzero (the last flows kernel wrote it). Every
// other outflow is zero, so the reset clears the written ones and nothing else.
__global__ void reset_flows(int rows, int cols, unsigned char *__restrict__ written,
                            double *__restrict__ Sf)
{
    int i, j;
    if (!interior_cell(rows, cols, &i, &j))
        return;
    const unsigned w = written[AT(i, j)];
    if (w == 0)
        return;
    for (int k = 0; k < 4; k++)
        if (w & (1u << k))
            Sf[FLOW(k, i, j)] = 0.0;
    written[AT(i, j)] = 0;
}

// const __restrict__ inputs go through the read-only data cache.
__global__ void compute_flows(int rows, int cols, const double *__restrict__ z,
                              const double *__restrict__ h, double *__restrict__ Sf,
                              unsigned char *__restrict__ written)
{
    int i, j;
    if (!interior_cell(rows, cols, &i, &j))
        return;
    const double h_c = h[AT(i, j)];
    if (sciddicat_is_still(h_c))
        return; // no outflow: Sf holds zeros (reset_flows), no neighbour is loaded
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
    unsigned kept = 0; // eliminated directions keep the reset's zeros
    for (int k = 0; k < 4; k++)
        if (!(eliminated & (1u << (k + 1)))) {
            Sf[FLOW(k, i, j)] = (average - u[k + 1]) * p_r;
            kept |= 1u << k;
        }
    if (kept)
        written[AT(i, j)] = (unsigned char)kept;
}

// The serial update, term by term. An outflow of a still cell is zero (reset_flows): a
// still cell loads none of its own. Border cells' outflows are zero too, and a border
// neighbour that is not still just costs a load of that zero.
__global__ void update_width(int rows, int cols, const double *__restrict__ h,
                             const double *__restrict__ Sf, double *__restrict__ h_next)
{
    int i, j;
    if (!interior_cell(rows, cols, &i, &j))
        return;
    const double h_c = h[AT(i, j)];
    const bool still = sciddicat_is_still(h_c);
    double in_n, in_w, in_e, in_s;
    if (still) {
        // A still cell's neighbours are mostly still: their thickness (rows of h the block
        // reads anyway) spares loading outflows that are zeros in DRAM.
        in_n = sciddicat_is_still(h[AT(i - 1, j)]) ? 0.0 : Sf[FLOW(3, i - 1, j)];
        in_w = sciddicat_is_still(h[AT(i, j - 1)]) ? 0.0 : Sf[FLOW(2, i, j - 1)];
        in_e = sciddicat_is_still(h[AT(i, j + 1)]) ? 0.0 : Sf[FLOW(1, i, j + 1)];
        in_s = sciddicat_is_still(h[AT(i + 1, j)]) ? 0.0 : Sf[FLOW(0, i + 1, j)];
    } else {
        // A moving cell's neighbours mostly move: their outflows are loaded (a still one's
        // is a zero) without four loads of h to test them first.
        in_n = Sf[FLOW(3, i - 1, j)];
        in_w = Sf[FLOW(2, i, j - 1)];
        in_e = Sf[FLOW(1, i, j + 1)];
        in_s = Sf[FLOW(0, i + 1, j)];
    }
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
                         double *h_out, int steps, int block_x, int block_y, void **d,
                         lk_error *err)
{
    const size_t cells = (size_t)rows * cols, bytes = cells * sizeof(double);
    LK_CUDA_TRY(err, cudaMalloc(&d[0], bytes));
    LK_CUDA_TRY(err, cudaMalloc(&d[1], bytes));
    LK_CUDA_TRY(err, cudaMalloc(&d[2], bytes));
    LK_CUDA_TRY(err, cudaMalloc(&d[3], 4 * bytes));
    LK_CUDA_TRY(err, cudaMalloc(&d[4], cells));
    double *d_z = (double *)d[0], *d_h[2] = {(double *)d[1], (double *)d[2]};
    double *d_Sf = (double *)d[3];
    unsigned char *d_written = (unsigned char *)d[4];
    // Border outflows are read by the width update and never written, and the reset clears
    // only what the flows kernel wrote: all zero once, nothing written yet.
    LK_CUDA_TRY(err, cudaMemset(d_Sf, 0, 4 * bytes));
    LK_CUDA_TRY(err, cudaMemset(d_written, 0, cells));
    LK_CUDA_TRY(err, cudaMemcpy(d_z, z, bytes, cudaMemcpyHostToDevice));
    // Border cells are never written: both buffers must hold them.
    LK_CUDA_TRY(err, cudaMemcpy(d_h[0], h_in, bytes, cudaMemcpyHostToDevice));
    LK_CUDA_TRY(err, cudaMemcpy(d_h[1], h_in, bytes, cudaMemcpyHostToDevice));
    int cur = 0;
    if (rows >= 3 && cols >= 3) {
        dim3 block(block_x, block_y);
        dim3 grid((cols - 1 + block.x - 1) / block.x, (rows - 2 + block.y - 1) / block.y);
        for (int s = 0; s < steps; s++) {
            reset_flows<<<grid, block>>>(rows, cols, d_written, d_Sf);
            LK_LAUNCH_TRY(err);
            compute_flows<<<grid, block>>>(rows, cols, d_z, d_h[cur], d_Sf, d_written);
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
    void *d[5] = {NULL, NULL, NULL, NULL, NULL};
    int rc = run_on_device(rows, cols, z, h_in, h_out, steps, block_x, block_y, d, err);
    for (int k = 0; k < 5; k++)
        cudaFree(d[k]);
    return rc;
}
