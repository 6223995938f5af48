/* Lab 02, given (read-only): the deliberately slow version of given.cu that `--variant
   uncoalesced` runs and `make bench` compares yours with. */
#ifndef LAB02_GIVEN_H
#define LAB02_GIVEN_H

#include "lab.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * The given, deliberately slow version (given.cu; `--variant uncoalesced`):
 * same contract, but threadIdx.x walks the rows i, the three fields are interleaved per
 * cell, and the ghost cells are set on the host, with the whole state copied to the device
 * and back every step. Its block's x runs along the rows.
 */
int lab02_uncoalesced_run(const swe *sim, int steps, const swe_fields *out,
                          int block_x, int block_y, lk_error *err);

#ifdef __cplusplus
}
#endif
#endif
