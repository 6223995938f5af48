// Lab 05: diamond tiling of the vibrating string. This is the file you edit.
//
// Work through the numbered TODOs in order; the handout (README.md) explains each one and
// draws the tiles. `make check` tells you what is still wrong; `./sweep.sh` times tiles.
//
// Rules of the lab:
//  - compute with lk_vstring_point_step (labkit/vstring.h): it is the serial reference's
//    arithmetic, so your result equals it bit for bit wherever the values come from. The
//    new state of a level comes from the level below only: u' reads v, v' reads the u of
//    the neighbours;
//  - the geometry is lab.h's: tile i of row r has its middle at level r*H over the points
//    [m, m + W), m = lab05_tile_left(r, i, W, H), and covers [m + d, m + W - d) at the
//    levels r*H -+ d. Use the helpers (lab05_tiles_in_row, lab05_left_writer,
//    lab05_edge_at); any n and any steps must work: half tiles at both ends, a last row
//    that stops at level `steps`, n = 1;
//  - never read or write a point outside 0..n-1; its neighbour beyond a fixed end has u = 0;
//  - every thread of a block must reach every __syncthreads(): no early return before one;
//  - check every launch with LK_LAUNCH_TRY(err). The launcher only launches: the given loop
//    (given.cu) allocates, copies, and calls it for rows 0, 1, 2, ...

#include "lab.h"
#include "labkit/cuda_check.h"

// TODO 1: the diamond kernel, one block per tile, one thread per point of the middle:
// thread j owns point x = m + j and is active at the levels r*H - dj .. r*H + dj,
// dj = min(j, W - 1 - j).
//   a. shared memory (extern __shared__ double smem[]): the u of the level below, W + 2
//      slots (slot k = point m + k - 1), twice (one buffer per level parity: then one
//      __syncthreads() per level is enough); keep your own (u, v) in registers;
//   b. the start: row 0 loads its whole middle, level 0, from y; a row r >= 1 starts from
//      the level r*H - H where a diamond has no point: everything of its bottom half comes
//      from the edge records of row r - 1 (lab05_left_writer and the tile after it);
//   c. loop over the levels the tile owns, up to min(steps, r*H + H): in the bottom half
//      the two entering threads (j = d and j = W - 1 - d) take their (u, v) of the level
//      below and the u just outside from the records, __syncthreads(), then every active
//      thread steps its point with lk_vstring_point_step into the other buffer;
//   d. at the levels L = r*H + j, j < H and L < steps, write your two leftmost and two
//      rightmost points' (u, v) into your own records (lab05_edge_at(n, r, i, side, j, W,
//      H)); at level `steps` write your points into y.
// Hints: load the records a tile needs once, at the start, into shared memory; a point
// outside 0..n-1 holds u = 0 in shared memory and is never stepped.

// TODO 2: the launcher: lab05_tiles_in_row(n, row, W, H) blocks of W threads (none when
// 0), the dynamic shared memory of TODO 1 (above 48 KB: cudaFuncSetAttribute with
// cudaFuncAttributeMaxDynamicSharedMemorySize), LK_LAUNCH_TRY(err).

// TODO 3: run `make check` (bit-exact on odd n and steps, n = 1, steps not a multiple of
// H), then `make bench`: diamonds against the given one-step-per-launch version.

// TODO 4 (stretch): the honeycomb. A hexagon is a diamond with a flat part a = W - 2H: the
// same kernel with H < W/2 reads its bottom flat from y and writes its top flat to y at
// level r*H + H (row r + 2 starts from it). Then sweep the height (./sweep.sh) and find
// the best W / H on your GPU.

extern "C" int lab05_tile_row(lab05_variant variant, int n, int steps, int row, int width,
                              int height, double *d_y, double *d_edges, lk_error *err)
{
    if (variant == LAB05_HONEYCOMB)
        return LAB05_NOT_ATTEMPTED;
    return lk_fail(err, "lab05_tile_row: the diamond kernel is not written yet: TODO 1 and "
                        "2 in kernels.cu");
}

// TODO 5 (stretch model, not graded; README "Stretch: the Brusselator"): temporal blocking
// over the rows of the 2-D Brusselator (labkit/bruss.h), lab05_bruss_launch() in lab.h.
// One block per band of `rows` grid rows: load the rows [r - steps, r + rows + steps) of
// d_in (clipped to the grid) into shared memory, advance them `steps` steps with
// lk_bruss_point_step (one row fewer on each side per step; at the border the reflection
// reads inside the grid: lk_bruss_reflect), write the band's rows into d_out. Then compare
// it with the given bruss-linear at m = 200, 500 and 2048 (make bench) and answer the
// questions of the handout.

extern "C" int lab05_bruss_launch(int m, int steps, int rows, const double *d_in,
                                  double *d_out, lk_error *err)
{
    return LAB05_NOT_ATTEMPTED;
}
