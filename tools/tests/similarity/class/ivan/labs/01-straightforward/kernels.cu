// Lab 01: a straightforward CUDA port of SciddicaT. This is the file you edit; the
// handout (README.md) explains the background and the steps.
//
// Rules of the lab:
//  - port serial.c: the same arithmetic in the same order, written here (the shared cell
//    functions of sciddicat/sciddicat.h are not allowed in this lab): results are compared
//    bit for bit;
//  - check every CUDA call with LK_CUDA_TRY(err, call) and every launch with
//    LK_LAUNCH_TRY(err), and free the device memory on every path, failures included;
//  - any grid size must work, 1 x N strips and 3 x 3 included.

#include "lab.h"
#include "labkit/cuda_check.h"
#include "sciddicat/sciddicat.h"

// TODO 1: a kernel for serial.c's reset_flows: one thread per interior cell.

// TODO 2: a kernel for serial.c's compute_flows.

// TODO 3: a kernel for serial.c's update_width.

// TODO 4: lab01_gpu_run (contract in lab.h): device copies of the inputs and the outflows,
// `steps` steps of the three kernels on a grid of block_x x block_y blocks covering the
// interior, the thickness back into h_out.
extern "C" int lab01_gpu_run(int rows, int cols, const double *z, const double *h_in,
                             double *h_out, int steps, int block_x, int block_y, lk_error *err)
{
    return lk_fail(err, "kernels.cu: lab01_gpu_run is not written yet: start with TODO 1 "
                        "(see labs/01-straightforward/README.md)");
}
