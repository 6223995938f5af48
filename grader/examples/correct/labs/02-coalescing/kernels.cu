// Example submission "correct", lab 02: the lab done right, in its own way. The state lives
// on the device as two swe_fields structs that swap every step; walls are set by one
// kernel whose threads first take the columns, then the rows; the step kernel maps x to the
// contiguous column index so that a warp reads consecutive doubles of each field.

#include "lab.h"
#include "labkit/cuda_check.h"
#include "swe/swe.h"

// (1) One launch for every ghost cell. Thread t < cols: both ends of column 1 + t;
// cols <= t < cols + rows: both ends of row 1 + (t - cols). The rest of the last block idles.
__global__ void ghost_cells(int rows, int cols, double *Z, double *Qx, double *Qy)
{
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    const int width = cols + 2;
    if (t < cols) {
        swe_ghost_column_ends(t + 1, rows, width, Z, Qx, Qy);
        return;
    }
    const int row = t - cols + 1;
    if (row <= rows)
        swe_ghost_row_ends(row, cols, width, Z, Qx, Qy);
}

// (2) Thread (x, y) of the grid -> interior cell (1 + y, 1 + x); x walks along a row.
__global__ void lf_step(int rows, int cols, double r, const double *__restrict__ Z,
                        const double *__restrict__ Qx, const double *__restrict__ Qy,
                        double *__restrict__ Zn, double *__restrict__ Qxn,
                        double *__restrict__ Qyn)
{
    const int col = 1 + blockIdx.x * blockDim.x + threadIdx.x;
    const int row = 1 + blockIdx.y * blockDim.y + threadIdx.y;
    if (col > cols || row > rows)
        return; // past the last column or row of a partial block
    swe_step_cell(row, col, cols + 2, r, Z, Qx, Qy, Zn, Qxn, Qyn);
}

// Number of blocks of `per_block` threads that cover `n` threads.
static unsigned blocks_for(int n, unsigned per_block)
{
    return ((unsigned)n + per_block - 1) / per_block;
}

static int run_on_device(const swe *sim, int steps, const swe_fields *out,
                         int block_x, int block_y, double **d, lk_error *err)
{
    // (3) Two device states, d[0..2] the current one, d[3..5] the next one.
    const size_t field_bytes = swe_cells(sim) * sizeof(double);
    for (int k = 0; k < 6; k++)
        LK_CUDA_TRY(err, cudaMalloc((void **)&d[k], field_bytes));
    swe_fields now = {d[0], d[1], d[2]};
    swe_fields then = {d[3], d[4], d[5]};
    LK_CUDA_TRY(err, cudaMemcpy(now.Z, sim->q.Z, field_bytes, cudaMemcpyHostToDevice));
    LK_CUDA_TRY(err, cudaMemcpy(now.Qx, sim->q.Qx, field_bytes, cudaMemcpyHostToDevice));
    LK_CUDA_TRY(err, cudaMemcpy(now.Qy, sim->q.Qy, field_bytes, cudaMemcpyHostToDevice));

    // (4) Launch shapes. Step: the requested block, enough of them for every cell.
    // Walls: 256-thread blocks over rows + cols threads.
    const int rows = sim->rows, cols = sim->cols;
    const dim3 step_block(block_x, block_y);
    const dim3 step_grid(blocks_for(cols, step_block.x), blocks_for(rows, step_block.y));
    const unsigned wall_block = 256;
    const unsigned wall_grid = blocks_for(rows + cols, wall_block);
    const double r = swe_r(sim);

    // (5) The time loop never leaves the device; the two states swap roles each step.
    for (int s = 0; s < steps; s++) {
        ghost_cells<<<wall_grid, wall_block>>>(rows, cols, now.Z, now.Qx, now.Qy);
        LK_LAUNCH_TRY(err);
        lf_step<<<step_grid, step_block>>>(rows, cols, r, now.Z, now.Qx, now.Qy, then.Z,
                                           then.Qx, then.Qy);
        LK_LAUNCH_TRY(err);
        const swe_fields old = now;
        now = then;
        then = old;
    }

    // (6) The final state is `now` (after the last swap).
    LK_CUDA_TRY(err, cudaMemcpy(out->Z, now.Z, field_bytes, cudaMemcpyDeviceToHost));
    LK_CUDA_TRY(err, cudaMemcpy(out->Qx, now.Qx, field_bytes, cudaMemcpyDeviceToHost));
    LK_CUDA_TRY(err, cudaMemcpy(out->Qy, now.Qy, field_bytes, cudaMemcpyDeviceToHost));
    return 0;
}

extern "C" int lab02_gpu_run(const swe *sim, int steps, const swe_fields *out,
                             int block_x, int block_y, lk_error *err)
{
    double *d[6] = {NULL, NULL, NULL, NULL, NULL, NULL};
    int rc = run_on_device(sim, steps, out, block_x, block_y, d, err);
    for (int k = 0; k < 6; k++)
        cudaFree(d[k]); // cudaFree(NULL) does nothing: safe after a failure
    return rc;
}
