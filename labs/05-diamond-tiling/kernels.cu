// Lab 05: diamond tiling of the vibrating string. The file you edit: the TODOs in order,
// each explained in README.md ("Tasks"; "Diamond tiling" has the geometry). Compute with
// vstring_point_step (vstring/vstring.h): it is the serial reference's arithmetic.

#include "lab.h"
#include "labkit/cuda_check.h"

// TODO 1: the diamond kernel, one block per tile, one thread per point of the middle.

// TODO 2: the launcher, lab05_tile_row below.
// TODO 3: `make check`, then `make bench`.
// TODO 4 (stretch): the honeycomb, the same kernel with H < W/2.
extern "C" int lab05_tile_row(lab05_variant variant, int n, int steps, int row, int width,
                              int height, double *d_y, double *d_edges, lk_error *err)
{
    if (variant == LAB05_HONEYCOMB)
        return LAB05_NOT_ATTEMPTED;
    return lk_fail(err, "lab05_tile_row: the diamond kernel is not written yet: TODO 1 and "
                        "2 in kernels.cu");
}

// TODO 5 (stretch model, not graded): temporal blocking over the rows of the Brusselator
// (README "Stretch: the Brusselator").
extern "C" int lab05_bruss_launch(int m, int steps, int rows, const double *d_in,
                                  double *d_out, lk_error *err)
{
    return LAB05_NOT_ATTEMPTED;
}
