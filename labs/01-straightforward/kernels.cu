// Lab 01: a straightforward CUDA port of SciddicaT. This is the file you edit.
//
// Work through the numbered TODOs in order; the handout (README.md) explains each one.
// `make check` tells you what is still wrong, `make run` times your code against serial.
//
// Rules of the lab:
//  - same arithmetic, same order as the serial reference (common/src/sciddicat.c and the
//    per-cell functions in common/include/labkit/sciddicat.h): results are compared bit
//    for bit, so write (average - u[k]) * p_r exactly as serial does;
//  - check every CUDA call with LK_CUDA_TRY(err, call) and every launch with
//    LK_LAUNCH_TRY(err);
//  - any grid size must work, 1 x N strips and 3 x 3 included.

#include "lab.h"
#include "labkit/cuda_check.h"
#include "labkit/sciddicat.h"

// TODO 1: reset kernel. One thread per cell: each interior cell (rows 1..rows-2, columns
// 1..cols-2) sets its four outflows Sf[k * rows * cols + i * cols + j], k = 0..3, to 0.
__global__ void reset_flows(int rows, int cols, double *Sf)
{
}

// TODO 2: flows kernel. Port the minimisation of differences from the serial reference
// (lk_sciddicat_flows_cell in sciddicat.h): u[0] = z + p_epsilon, u[1..4] = z + h of the
// North, West, East, South neighbours, eliminate until stable, then write the outflows of
// the neighbours still in the average. Porting this arithmetic is part of the lab.
__global__ void compute_flows(int rows, int cols, const double *z, const double *h, double *Sf,
                              double p_r, double p_epsilon)
{
}

// TODO 3: width-update kernel. h += inflow - outflow for North, West, East, South, in that
// order (lk_sciddicat_width_cell).
__global__ void update_width(int rows, int cols, double *h, const double *Sf)
{
}

extern "C" int lab01_gpu_run(int rows, int cols, const double *z, const double *h_in,
                             double *h_out, int steps, const lk_launch *launch, lk_error *err)
{
    // TODO 4: allocate the device copies of z and h and the four outflow layers Sf with
    // cudaMalloc. Zero Sf: the width update reads outflows of border cells, which no
    // kernel ever writes, and cudaMalloc does not clear memory.

    // TODO 5: copy z and h_in to the device.

    // TODO 6: choose the launch shape: dim3 block(launch->block_x, launch->block_y) and
    // enough blocks to cover every interior cell. Careful with grids that have no interior
    // cell (rows or cols < 3): a grid of 0 blocks is a launch error.

    // TODO 7: for each step launch reset_flows, compute_flows, update_width (parameters
    // LK_SCIDDICAT_P_R and LK_SCIDDICAT_P_EPSILON), each followed by LK_LAUNCH_TRY(err).
    // No cudaDeviceSynchronize is needed between them: launches on one stream run in order.

    // TODO 8: copy the thickness back into h_out and free the device memory.

    // TODO 9: delete this line once TODOs 1-8 are done.
    return lk_fail(err, "kernels.cu: lab01_gpu_run is not written yet: start with TODO 4 "
                        "(see labs/01-straightforward/README.md)");
}
