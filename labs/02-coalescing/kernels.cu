// Lab 02: a coalesced, device-resident shallow-water solver. The file you edit: the TODOs
// in order, each explained in README.md ("Tasks"). The arithmetic is given (swe/swe.h);
// check every CUDA call with LK_CUDA_TRY and every launch with LK_LAUNCH_TRY.

#include "lab.h"
#include "labkit/cuda_check.h"
#include "swe/swe.h"

// TODO 1: the ghost-cell kernel: every ghost cell of a state in one launch.

// TODO 2: the coalesced step kernel, on structure-of-arrays fields.

// The whole run on the device. d[0..5] are the two states (Z, Qx, Qy each); the caller
// frees them, also when this function fails half way.
static int run_on_device(const swe *sim, int steps, const swe_fields *out,
                         int block_x, int block_y, double **d, lk_error *err)
{
    // TODO 3: the whole run on the device, swapping pointers between steps.
    return lk_fail(err, "kernels.cu: lab02_gpu_run is not written yet: start with TODO 1 "
                        "(see labs/02-coalescing/README.md)");
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
