// Lab 03 harness (read-only): the device-resident time loop that calls your lab03_step(),
// and the global-memory step kernel `--variant global` and `--bench` compare you with.
// This file answers lab 02's tasks (ghost kernel, coalesced step, pointer swap): finish
// lab 02 before you read it.

#include "given.h"
#include "labkit/cuda_check.h"
#include "labkit/swe.h"

// One thread per pair of ghost cells: threads 0..cols-1 the ends of a column, then the
// ends of each row.
static __global__ void ghost_cells(int rows, int cols, double *__restrict__ Z,
                                   double *__restrict__ Qx, double *__restrict__ Qy)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < cols)
        lk_swe_ghost_column_ends(1 + t, rows, cols + 2, Z, Qx, Qy);
    else if (t < cols + rows)
        lk_swe_ghost_row_ends(1 + t - cols, cols, cols + 2, Z, Qx, Qy);
}

// The global-memory step: thread (x, y) of the grid updates interior cell (1 + y, 1 + x).
static __global__ void lf_step_global(int rows, int cols, double r,
                                      const double *__restrict__ Z,
                                      const double *__restrict__ Qx,
                                      const double *__restrict__ Qy, double *__restrict__ Zn,
                                      double *__restrict__ Qxn, double *__restrict__ Qyn)
{
    int j = 1 + blockIdx.x * blockDim.x + threadIdx.x;
    int i = 1 + blockIdx.y * blockDim.y + threadIdx.y;
    if (i <= rows && j <= cols)
        lk_swe_step_cell(i, j, cols + 2, r, Z, Qx, Qy, Zn, Qxn, Qyn);
}

static int step_global(int rows, int cols, double r, lk_swe_fields cur, lk_swe_fields next,
                       int block_x, int block_y, lk_error *err)
{
    dim3 block(block_x, block_y);
    dim3 grid((cols + block.x - 1) / block.x, (rows + block.y - 1) / block.y);
    lf_step_global<<<grid, block>>>(rows, cols, r, cur.Z, cur.Qx, cur.Qy, next.Z, next.Qx,
                                    next.Qy);
    LK_LAUNCH_TRY(err);
    return 0;
}

typedef int (*step_fn)(int rows, int cols, double r, lk_swe_fields cur, lk_swe_fields next,
                       int block_x, int block_y, lk_error *err);

static int run_on_device(const lk_swe *sim, int steps, const lk_swe_fields *out,
                         int block_x, int block_y, step_fn step, double **d, lk_error *err)
{
    const size_t bytes = lk_swe_cells(sim) * sizeof(double);
    for (int k = 0; k < 6; k++)
        LK_CUDA_TRY(err, cudaMalloc(&d[k], bytes));
    LK_CUDA_TRY(err, cudaMemcpy(d[0], sim->q.Z, bytes, cudaMemcpyHostToDevice));
    LK_CUDA_TRY(err, cudaMemcpy(d[1], sim->q.Qx, bytes, cudaMemcpyHostToDevice));
    LK_CUDA_TRY(err, cudaMemcpy(d[2], sim->q.Qy, bytes, cudaMemcpyHostToDevice));
    lk_swe_fields cur = {d[0], d[1], d[2]}, next = {d[3], d[4], d[5]};
    const int rows = sim->rows, cols = sim->cols;
    const int ghost_block = 256, ghost_grid = (rows + cols + ghost_block - 1) / ghost_block;
    for (int s = 0; s < steps; s++) {
        ghost_cells<<<ghost_grid, ghost_block>>>(rows, cols, cur.Z, cur.Qx, cur.Qy);
        LK_LAUNCH_TRY(err);
        if (step(rows, cols, lk_swe_r(sim), cur, next, block_x, block_y, err) != 0)
            return -1;
        lk_swe_fields t = cur;
        cur = next;
        next = t;
    }
    LK_CUDA_TRY(err, cudaMemcpy(out->Z, cur.Z, bytes, cudaMemcpyDeviceToHost));
    LK_CUDA_TRY(err, cudaMemcpy(out->Qx, cur.Qx, bytes, cudaMemcpyDeviceToHost));
    LK_CUDA_TRY(err, cudaMemcpy(out->Qy, cur.Qy, bytes, cudaMemcpyDeviceToHost));
    return 0;
}

static int run(const lk_swe *sim, int steps, const lk_swe_fields *out, int block_x, int block_y,
               step_fn step, lk_error *err)
{
    double *d[6] = {NULL, NULL, NULL, NULL, NULL, NULL};
    int rc = run_on_device(sim, steps, out, block_x, block_y, step, d, err);
    for (int k = 0; k < 6; k++)
        cudaFree(d[k]);
    return rc;
}

extern "C" int lab03_gpu_run(const lk_swe *sim, int steps, const lk_swe_fields *out,
                             int block_x, int block_y, lk_error *err)
{
    return run(sim, steps, out, block_x, block_y, lab03_step, err);
}

extern "C" int lab03_global_run(const lk_swe *sim, int steps, const lk_swe_fields *out,
                                int block_x, int block_y, lk_error *err)
{
    return run(sim, steps, out, block_x, block_y, step_global, err);
}
