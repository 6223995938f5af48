// Lab 07: the per-rank SciddicaT step on the GPU. This is one of your two files (the other
// is exchange.c); the handout (README.md) explains the background and the tasks.
//
// Rules of the lab:
//  - use the shared cell functions of sciddicat/sciddicat.h (sciddicat_reset_cell,
//    sciddicat_flows_cell, sciddicat_width_cell) on the slab's local arrays: the
//    arithmetic stays the serial reference's, and the gathered grid is compared bit for bit;
//  - launch on the stream you are given, without synchronising (the overlap variant runs
//    two streams at once), and check every launch with LK_LAUNCH_TRY(err);
//  - any slab must work: 1 row or 3 columns, rows that reach into the ghost rows, a range
//    with no interior row at all.

#include "lab.h"
#include "labkit/cuda_check.h"

// TODO 5: a kernel for the reset and the flows of local rows [row_begin, row_end), one
// thread per cell, x along the columns: sciddicat_reset_cell then sciddicat_flows_cell
// with the slab's sizes (s->lrows rows, s->cols columns).

// TODO 6: a kernel for the width update of local rows [row_begin, row_end):
// h(l, j) = sciddicat_width_cell(l, j, ...).

// TODO 7: the two launchers (contract in lab.h): clip the rows with lab07_interior_rows,
// cover columns 1 .. cols - 2 and the clipped rows with s->block_x x s->block_y blocks,
// launch on `stream`, LK_LAUNCH_TRY(err).
extern "C" int lab07_gpu_flows(const lab07_slab *s, int row_begin, int row_end,
                               cudaStream_t stream, lk_error *err)
{
    return lk_fail(err, "kernels.cu: lab07_gpu_flows is not written yet: TODO 5 "
                        "(see labs/07-mpi-split/README.md)");
}

extern "C" int lab07_gpu_width(const lab07_slab *s, int row_begin, int row_end,
                               cudaStream_t stream, lk_error *err)
{
    return lk_fail(err, "kernels.cu: lab07_gpu_width is not written yet: TODO 6 "
                        "(see labs/07-mpi-split/README.md)");
}
