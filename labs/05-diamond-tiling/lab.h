/**
 * @file labs/05-diamond-tiling/lab.h
 * @brief Lab 05 contract between the harness and your `kernels.cu` (read-only).
 *
 * You write lab05_tile_row(): one row of tiles of the (space, time) plane per call. The
 * given loop (given.cu) copies y0 into d_y, calls it for rows 0 .. lab05_rows() - 1 and
 * copies d_y back. README.md ("Diamond tiling") draws the tiles and lists what a tile reads
 * and writes. The invariants the tests check: level t is the state after t steps, point x
 * is (u_x = y[2x], v_x = y[2x+1]); tile i of row r has its middle at level rH over the
 * points [m, m + W), m = lab05_tile_left(r, i, W, H), and covers [m + d, m + W - d) at the
 * levels rH -+ d (0 <= d <= H); rows r and r + 1 cover every point of every level exactly
 * once. Points outside 0..n-1 are never computed, read or written; a neighbour beyond a
 * fixed end has u = 0. Levels above `steps` are not computed.
 */
#ifndef LAB05_LAB_H
#define LAB05_LAB_H

#include <stddef.h>

#include "bruss/bruss.h"
#include "labkit/error.h"
#include "vstring/vstring.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Your variants (`--variant NAME`); the given ones are in given.h. */
typedef enum lab05_variant {
    LAB05_DIAMOND = 0,  /**< Task 1: diamonds, height = width / 2. */
    LAB05_HONEYCOMB = 1 /**< Task 4 (stretch): hexagons, any height with 2 height <= width. */
} lab05_variant;

/** Return value of lab05_tile_row() for the honeycomb while the stretch is not attempted. */
#define LAB05_NOT_ATTEMPTED 1

/** Most points in a tile (one thread per point of its middle: a block of at most 1024). */
#define LAB05_MAX_WIDTH 1024

/* Your side: kernels.cu defines this. */

/**
 * Launch row @p row of tiles: one block of @p width threads per tile (lab05_tiles_in_row()
 * of them; none if that is 0), computing every point of every level the row owns. Only
 * launch: no allocation, synchronisation or copy. The caller calls the rows in order on one
 * stream and checked the tile (diamond: width even, height = width / 2; honeycomb:
 * 1 <= height, 2 height <= width).
 *
 * @param variant  LAB05_DIAMOND or LAB05_HONEYCOMB
 * @param n        mass points (>= 1; any n, not a multiple of anything)
 * @param steps    steps of the whole run (>= 1; any, not a multiple of @p height)
 * @param row      the row, 0 .. lab05_rows(steps, height) - 1
 * @param width    W, points of a tile's middle (threads per block)
 * @param height   H, steps per launch
 * @param d_y      the state, 2n doubles
 * @param d_edges  the edge records, lab05_edge_doubles(n, width, height) doubles
 * @param err      on failure, the message
 * @return 0, -1 on failure, or LAB05_NOT_ATTEMPTED for the honeycomb before the stretch
 */
int lab05_tile_row(lab05_variant variant, int n, int steps, int row, int width, int height,
                   double *d_y, double *d_edges, lk_error *err);

/* The geometry, for the given loop and your kernels (host and device). */

/** Launches (rows of tiles) for @p steps steps of height @p height: 0 for 0 steps, else
    ceil(steps / height) + 1 (the last row finishes the levels the one before left). */
LK_HD static inline int lab05_rows(int steps, int height)
{
    return steps <= 0 ? 0 : (steps + height - 1) / height + 1;
}

/** Distance between the middles of two tiles of a row: 2 (W - H) points. */
LK_HD static inline long lab05_period(int width, int height)
{
    return 2L * (width - height);
}

/** First point of tile @p i's middle in row @p row: even rows start at -H, odd rows at
    a = W - 2H, then every period. */
LK_HD static inline long lab05_tile_left(int row, long i, int width, int height)
{
    const long offset = row % 2 == 0 ? -(long)height : (long)(width - 2 * height);
    return offset + i * lab05_period(width, height);
}

/** Tiles of row @p row that touch the points 0..n-1 (tiles i = 0 .. count - 1). */
LK_HD static inline long lab05_tiles_in_row(int n, int row, int width, int height)
{
    const long first = lab05_tile_left(row, 0, width, height), period = lab05_period(width, height);
    return first >= n ? 0 : (n - first + period - 1) / period;
}

/** Index in row @p row - 1 of the tile whose right edge borders tile @p i of row @p row on
    the left (-1: none); the tile on the right is this index + 1. */
LK_HD static inline long lab05_left_writer(int row, long i)
{
    return row % 2 == 1 ? i : i - 1;
}

/** Tiles per row the edge records have room for. */
LK_HD static inline long lab05_edge_tiles(int n, int width, int height)
{
    const long even = lab05_tiles_in_row(n, 0, width, height);
    const long odd = lab05_tiles_in_row(n, 1, width, height);
    return even > odd ? even : odd;
}

/** Doubles of the edge records: 2 parities x tiles x 2 sides x H levels x 4. */
LK_HD static inline size_t lab05_edge_doubles(int n, int width, int height)
{
    return 2 * (size_t)lab05_edge_tiles(n, width, height) * 2 * (size_t)height * 4;
}

/** Where the edge record (4 doubles: u, v of the left point, then of the right one) of tile
    @p i of row @p row, side @p side (0 left, 1 right), level rH + @p j starts in d_edges.
    Rows of even and odd parity have separate records. */
LK_HD static inline size_t lab05_edge_at(int n, int row, long i, int side, int j, int width,
                                         int height)
{
    const size_t tiles = (size_t)lab05_edge_tiles(n, width, height);
    return ((((size_t)(row % 2) * tiles + (size_t)i) * 2 + (size_t)side) * (size_t)height +
            (size_t)j) * 4;
}

/* Stretch model (not graded; README.md, "Stretch: the Brusselator"): kernels.cu defines
 * lab05_bruss_launch(). */

/**
 * Advance the m x m Brusselator @p steps explicit Euler steps from @p d_in into @p d_out
 * (2m^2 doubles each, bruss/bruss.h's layout) in one launch, each block writing @p rows
 * grid rows. The given loop calls it with steps = the tile height H (the last launch fewer)
 * and swaps the buffers between calls. @p d_in is never written (other blocks read it).
 * Only launch: no allocation, synchronisation or copy. Compute with bruss_point_step().
 *
 * @param m      grid side (2 <= m <= BRUSS_MAX_M, odd or even)
 * @param steps  Euler steps of this launch (0: nothing to do, launch nothing)
 * @param rows   grid rows per block (>= 1; may exceed m: one block then)
 * @param d_in   device state at the launch's first level (read only)
 * @param d_out  device state receiving the state @p steps steps later
 * @param err    filled on failure
 * @return 0, -1 on failure (say why in @p err: e.g. a tile that needs more shared memory than
 *         the GPU has), or LAB05_NOT_ATTEMPTED while the stretch is not attempted.
 */
int lab05_bruss_launch(int m, int steps, int rows, const double *d_in, double *d_out,
                       lk_error *err);

/** Shared memory of the handout's row bands: two levels of W + 2H rows of 2m doubles. */
static inline size_t lab05_bruss_band_bytes(int m, int rows, int steps)
{
    return 2 * ((size_t)rows + 2 * (size_t)steps) * 2 * (size_t)m * sizeof(double);
}

/**
 * The given loop's tile for `--tile 0xH` (the default 0x4) on @p sms SMs with @p smem bytes
 * of shared memory per block: H lowered until one row and H halo rows on each side fit, W as
 * many rows as fit but at most ceil(m / sms). -1 when not even H = 1 fits.
 */
static inline int lab05_bruss_auto_tile(int m, int sms, size_t smem, int *rows, int *height)
{
    int h = *height < 1 ? 1 : *height;
    while (h > 1 && lab05_bruss_band_bytes(m, 1, h) > smem)
        h--;
    if (lab05_bruss_band_bytes(m, 1, h) > smem)
        return -1;
    const size_t per_row = lab05_bruss_band_bytes(m, 1, 0);
    size_t fit = smem / per_row - 2 * (size_t)h;
    const size_t spread = ((size_t)m + (size_t)sms - 1) / (size_t)(sms < 1 ? 1 : sms);
    if (fit > spread)
        fit = spread;
    *rows = fit < 1 ? 1 : (int)fit;
    *height = h;
    return 0;
}

#ifdef __cplusplus
}
#endif
#endif
