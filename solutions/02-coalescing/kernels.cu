// Lab 02 solution: one coalesced step kernel on structure-of-arrays fields, one ghost
// kernel for all four walls, the state device-resident with a pointer swap per step.
// The arithmetic is the shared per-cell functions, so results equal the serial reference.

#include "lab.h"
#include "labkit/cuda_check.h"
#include "swe/swe.h"

// Threads 0..cols-1 take the two ends of a column (consecutive threads, consecutive
// addresses); the next rows threads take the two ends of a row (strided, but few).
__global__ void ghost_cells(int rows, int cols, double *__restrict__ Z,
                            double *__restrict__ Qx, double *__restrict__ Qy)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < cols)
        swe_ghost_column_ends(1 + t, rows, cols + 2, Z, Qx, Qy);
    else if (t < cols + rows)
        swe_ghost_row_ends(1 + t - cols, cols, cols + 2, Z, Qx, Qy);
}

// Thread (x, y) of the grid handles interior cell (1 + y, 1 + x): x runs along a row.
__global__ void lf_step(int rows, int cols, double r, const double *__restrict__ Z,
                        const double *__restrict__ Qx, const double *__restrict__ Qy,
                        double *__restrict__ Zn, double *__restrict__ Qxn,
                        double *__restrict__ Qyn)
{
    int j = 1 + blockIdx.x * blockDim.x + threadIdx.x;
    int i = 1 + blockIdx.y * blockDim.y + threadIdx.y;
    if (i <= rows && j <= cols)
        swe_step_cell(i, j, cols + 2, r, Z, Qx, Qy, Zn, Qxn, Qyn);
}

static int run_on_device(const swe *sim, int steps, const swe_fields *out,
                         int block_x, int block_y, double **d, lk_error *err)
{
    const size_t bytes = swe_cells(sim) * sizeof(double);
    for (int k = 0; k < 6; k++)
        LK_CUDA_TRY(err, cudaMalloc(&d[k], bytes));
    LK_CUDA_TRY(err, cudaMemcpy(d[0], sim->q.Z, bytes, cudaMemcpyHostToDevice));
    LK_CUDA_TRY(err, cudaMemcpy(d[1], sim->q.Qx, bytes, cudaMemcpyHostToDevice));
    LK_CUDA_TRY(err, cudaMemcpy(d[2], sim->q.Qy, bytes, cudaMemcpyHostToDevice));
    double *cur[3] = {d[0], d[1], d[2]}, *next[3] = {d[3], d[4], d[5]};

    const int rows = sim->rows, cols = sim->cols;
    const double r = swe_r(sim);
    dim3 block(block_x, block_y);
    dim3 grid((cols + block.x - 1) / block.x, (rows + block.y - 1) / block.y);
    const int ghost_block = 256, ghost_grid = (rows + cols + ghost_block - 1) / ghost_block;
    for (int s = 0; s < steps; s++) {
        ghost_cells<<<ghost_grid, ghost_block>>>(rows, cols, cur[0], cur[1], cur[2]);
        LK_LAUNCH_TRY(err);
        lf_step<<<grid, block>>>(rows, cols, r, cur[0], cur[1], cur[2], next[0], next[1],
                                 next[2]);
        LK_LAUNCH_TRY(err);
        for (int k = 0; k < 3; k++) {
            double *t = cur[k];
            cur[k] = next[k];
            next[k] = t;
        }
    }

    LK_CUDA_TRY(err, cudaMemcpy(out->Z, cur[0], bytes, cudaMemcpyDeviceToHost));
    LK_CUDA_TRY(err, cudaMemcpy(out->Qx, cur[1], bytes, cudaMemcpyDeviceToHost));
    LK_CUDA_TRY(err, cudaMemcpy(out->Qy, cur[2], bytes, cudaMemcpyDeviceToHost));
    return 0;
}

extern "C" int lab02_gpu_run(const swe *sim, int steps, const swe_fields *out,
                             int block_x, int block_y, lk_error *err)
{
    double *d[6] = {NULL, NULL, NULL, NULL, NULL, NULL};
    int rc = run_on_device(sim, steps, out, block_x, block_y, d, err);
    for (int k = 0; k < 6; k++)
        cudaFree(d[k]);
    return rc;
}
