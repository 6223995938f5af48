/* Lab 03, given (read-only): the time loop of given.cu around your lab03_step(), and the
   global-memory version `--variant global` runs and `make bench` compares yours with. */
#ifndef LAB03_GIVEN_H
#define LAB03_GIVEN_H

#include "lab.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------
 * The given side (given.cu, read-only).
 * ------------------------------------------------------------------------------------- */

/**
 * Run @p steps steps on the GPU with your lab03_step() (the driver's default), from the
 * initial state sim->q into @p out (host memory; every interior cell is written).
 */
int lab03_gpu_run(const swe *sim, int steps, const swe_fields *out,
                  int block_x, int block_y, lk_error *err);

/**
 * The same run with a plain global-memory step kernel, one thread per cell, coalesced, that
 * reads the walls through swe_cell_walled(); `--variant global` selects it and `--bench`
 * compares you with it.
 */
int lab03_global_run(const swe *sim, int steps, const swe_fields *out,
                     int block_x, int block_y, lk_error *err);

#ifdef __cplusplus
}
#endif
#endif
