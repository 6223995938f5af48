// Lab 02: a coalesced, device-resident shallow-water solver. This is the file you edit.
//
// Work through the numbered TODOs in order; the handout (README.md) explains each one.
// `make check` tells you what is still wrong, `make run` times your code against serial,
// `make bench` against the given uncoalesced version (uncoalesced.cu) too.
//
// Rules of the lab:
//  - the arithmetic is given: every interior cell is lk_swe_step_cell() and every ghost
//    cell lk_swe_ghost_column_ends() / lk_swe_ghost_row_ends() (labkit/swe.h); your job is
//    which thread handles which cell, and where the data lives;
//  - check every CUDA call with LK_CUDA_TRY(err, call) and every launch with
//    LK_LAUNCH_TRY(err);
//  - any grid size must work: 1 x N and N x 1 strips, odd sizes, any block shape.

#include "lab.h"
#include "labkit/cuda_check.h"
#include "labkit/swe.h"

// TODO 1: the ghost-cell kernel: every ghost cell of one state with a single launch.
// Use one thread per pair of ghost cells: threads t = 0..cols-1 set the two ends of column
// j = 1 + t (lk_swe_ghost_column_ends), threads t = cols..cols+rows-1 set the two ends of
// row i = 1 + t - cols (lk_swe_ghost_row_ends). Extra threads of the last block do nothing.
__global__ void ghost_cells(int rows, int cols, double *Z, double *Qx, double *Qy)
{
}

// TODO 2: the coalesced step kernel. Thread (x, y) of the grid handles interior cell
// (i, j) = (1 + y, 1 + x), with x = blockIdx.x * blockDim.x + threadIdx.x (likewise y), so
// that the 32 threads of a warp read 32 consecutive doubles of each field. Guard the cells
// past the last row and column, then call lk_swe_step_cell(i, j, cols + 2, r, ...).
__global__ void lf_step(int rows, int cols, double r, const double *Z, const double *Qx,
                        const double *Qy, double *Zn, double *Qxn, double *Qyn)
{
}

// The whole run on the device. d[0..2] are the current state (Z, Qx, Qy), d[3..5] the next
// one; the caller frees them, also when this function fails half way.
static int run_on_device(const lk_swe *sim, int steps, const lk_swe_fields *out,
                         const lk_launch *launch, double **d, lk_error *err)
{
    // TODO 3: allocate the six device arrays d[0..5] with cudaMalloc, lk_swe_cells(sim)
    // doubles each, and copy the initial state sim->q into d[0..2] (Z, Qx, Qy).

    // TODO 4: the launch shapes. Step kernel: dim3 block(launch->block_x, launch->block_y)
    // and enough blocks to cover sim->cols columns (x) and sim->rows rows (y). Ghost kernel:
    // 1-D blocks of 256 threads covering rows + cols threads.

    // TODO 5: the time loop, everything on the device: for each step launch ghost_cells on
    // the current state, then lf_step from the current state into the next one (pass
    // lk_swe_r(sim) as r), each followed by LK_LAUNCH_TRY(err); then swap the current and
    // next pointers. No copies, no cudaDeviceSynchronize: launches on one stream run in
    // order.

    // TODO 6: copy the final state (the current one after the last swap) into out->Z,
    // out->Qx, out->Qy.

    // TODO 7: delete this line once TODOs 1-6 are done.
    return lk_fail(err, "kernels.cu: lab02_gpu_run is not written yet: start with TODO 1 "
                        "(see labs/02-coalescing/README.md)");
}

extern "C" int lab02_gpu_run(const lk_swe *sim, int steps, const lk_swe_fields *out,
                             const lk_launch *launch, lk_error *err)
{
    double *d[6] = {NULL, NULL, NULL, NULL, NULL, NULL};
    int rc = run_on_device(sim, steps, out, launch, d, err);
    for (int k = 0; k < 6; k++)
        cudaFree(d[k]); // cudaFree(NULL) does nothing: safe after a failure
    return rc;
}
