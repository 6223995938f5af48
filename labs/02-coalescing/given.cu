// Lab 02, given (read-only): a deliberately slow CUDA version of the shallow-water step, in
// the spirit of the first OpenCL port of Stramare 2012 (full reference in the lab's
// README.md). Run it with `--variant uncoalesced`.
// What is wrong with it is what the lab fixes:
//  1. threadIdx.x walks the rows i, so the 32 threads of a warp read cells (cols + 2) apart;
//  2. the fields are interleaved per cell (an array of swe_q structures), so even a
//     well-mapped warp would read every third double of what it fetches;
//  3. the ghost cells are set on the host: every step copies the whole state to the host
//     and back, through PCIe, for a few thousand border values.
// The arithmetic is the shared swe_update(), so the results equal the serial reference.

#include <stdlib.h>

#include "given.h"
#include "labkit/cuda_check.h"
#include "swe/swe.h"

// Thread (x, y) of the grid -> interior cell (1 + x, 1 + y): x runs down a column.
static __global__ void lf_step_aos(int rows, int cols, double r, const swe_q *cur,
                                   swe_q *next)
{
    int i = 1 + blockIdx.x * blockDim.x + threadIdx.x;
    int j = 1 + blockIdx.y * blockDim.y + threadIdx.y;
    if (i <= rows && j <= cols) {
        const int w = cols + 2;
        const size_t c = swe_at(i, j, w);
        next[c] = swe_update(cur[c - w], cur[c + w], cur[c - 1], cur[c + 1], r);
    }
}

// The wall rule on the host copy, rows then columns, as the serial reference does it.
static void host_ghosts(int rows, int cols, swe_q *q)
{
    const int w = cols + 2;
    for (int j = 1; j <= cols; j++) {
        q[swe_at(0, j, w)] = swe_wall_x(q[swe_at(1, j, w)]);
        q[swe_at(rows + 1, j, w)] = swe_wall_x(q[swe_at(rows, j, w)]);
    }
    for (int i = 1; i <= rows; i++) {
        q[swe_at(i, 0, w)] = swe_wall_y(q[swe_at(i, 1, w)]);
        q[swe_at(i, cols + 1, w)] = swe_wall_y(q[swe_at(i, cols, w)]);
    }
}

static int run(const swe *sim, int steps, const swe_fields *out, int block_x, int block_y,
               swe_q *h, swe_q **d, lk_error *err)
{
    const size_t n = swe_cells(sim), bytes = n * sizeof(swe_q);
    for (size_t k = 0; k < n; k++)
        h[k] = swe_load(sim->q.Z, sim->q.Qx, sim->q.Qy, k);
    LK_CUDA_TRY(err, cudaMalloc(&d[0], bytes));
    LK_CUDA_TRY(err, cudaMalloc(&d[1], bytes));
    dim3 block(block_x, block_y);
    dim3 grid((sim->rows + block.x - 1) / block.x, (sim->cols + block.y - 1) / block.y);
    for (int s = 0; s < steps; s++) {
        host_ghosts(sim->rows, sim->cols, h);
        LK_CUDA_TRY(err, cudaMemcpy(d[0], h, bytes, cudaMemcpyHostToDevice));
        lf_step_aos<<<grid, block>>>(sim->rows, sim->cols, swe_r(sim), d[0], d[1]);
        LK_LAUNCH_TRY(err);
        LK_CUDA_TRY(err, cudaMemcpy(h, d[1], bytes, cudaMemcpyDeviceToHost));
    }
    for (size_t k = 0; k < n; k++)
        swe_store(out->Z, out->Qx, out->Qy, k, h[k]);
    return 0;
}

extern "C" int lab02_uncoalesced_run(const swe *sim, int steps, const swe_fields *out,
                                     int block_x, int block_y, lk_error *err)
{
    swe_q *h = (swe_q *)malloc(swe_cells(sim) * sizeof *h);
    if (!h)
        return lk_fail(err, "given.cu: out of host memory for a %d x %d state", sim->rows,
                       sim->cols);
    swe_q *d[2] = {NULL, NULL};
    int rc = run(sim, steps, out, block_x, block_y, h, d, err);
    cudaFree(d[0]);
    cudaFree(d[1]);
    free(h);
    return rc;
}
