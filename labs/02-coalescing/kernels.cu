// Lab 02: a coalesced, device-resident shallow-water solver. This is the file you edit;
// the handout (README.md) explains the background and the steps. `make check` tells you
// what is still wrong, `make bench` times your code against the given uncoalesced version
// (given.cu).
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

// TODO 1: a kernel that sets every ghost cell of one state (the wall rule of
// lk_swe_ghosts in serial.c) in a single launch.

// TODO 2: the step kernel, mapped so that the threads of a warp read consecutive doubles,
// on structure-of-arrays fields (one array per field).

// The whole run on the device. d[0..5] are the two states (Z, Qx, Qy each); the caller
// frees them, also when this function fails half way.
static int run_on_device(const lk_swe *sim, int steps, const lk_swe_fields *out,
                         int block_x, int block_y, double **d, lk_error *err)
{
    // TODO 3: the whole run on the device: the initial state in, `steps` steps of your two
    // kernels with no copy between steps (swap the states' pointers), the final state out.
    return lk_fail(err, "kernels.cu: lab02_gpu_run is not written yet: start with TODO 1 "
                        "(see labs/02-coalescing/README.md)");
}

extern "C" int lab02_gpu_run(const lk_swe *sim, int steps, const lk_swe_fields *out,
                             int block_x, int block_y, lk_error *err)
{
    double *d[6] = {NULL, NULL, NULL, NULL, NULL, NULL};
    int rc = run_on_device(sim, steps, out, block_x, block_y, d, err);
    for (int k = 0; k < 6; k++)
        cudaFree(d[k]); // cudaFree(NULL) does nothing: safe after a failure
    return rc;
}
