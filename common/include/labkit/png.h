/**
 * @file png.h
 * @brief PNG pictures of results (libpng): terrain with debris, scalar fields, differences.
 */
#ifndef LABKIT_PNG_H
#define LABKIT_PNG_H

#include "labkit/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Where the map of a grid lies in every image written below, so that a tool or a test can
 * find a cell's pixels. Each map element shows block x block cells: block is 1 when the
 * long side has at most 1200 cells, else ceil(long side / 1200). Each element is
 * cell_w x cell_h pixels: small grids are enlarged by an integer factor (long side
 * 600..1199 px) and a very thin grid (e.g. 1 x N) is stretched across its short side to
 * at least 32 px. Cell (r, c) covers x in map_x + (c / block) * cell_w + [0, cell_w) and
 * likewise for y.
 */
typedef struct lk_png_geometry {
    int width;  /**< Image width in pixels. */
    int height; /**< Image height in pixels. */
    int map_x;  /**< Left column of the map. */
    int map_y;  /**< Top row of the map. */
    int map_w;  /**< Map width in pixels. */
    int map_h;  /**< Map height in pixels. */
    int block;  /**< Grid cells per map element along each axis (>= 1). */
    int cell_w; /**< Pixels per map element horizontally (>= 1). */
    int cell_h; /**< Pixels per map element vertically (>= 1). */
} lk_png_geometry;

/** Fill @p g with the layout of the images of a rows x cols grid; -1 if rows or cols < 1. */
int lk_png_layout(int rows, int cols, lk_png_geometry *g, lk_error *err);

/**
 * Hillshaded terrain @p z in grey (light from the north-west, 45 degrees up; a little
 * brighter with altitude so that gentle valleys show) with the thickness @p h drawn over
 * it in a colour map (viridis) where h > @p h_min, plus a legend bar with its scale
 * (metres: min, middle and max of h over those cells; logarithmic when they span more
 * than two decades; one colour when they agree to a millionth) and a title line (@p title
 * may be NULL). Where a map element covers several cells it shows the mean of z and the
 * max of h. Cells where h is NaN or infinite are magenta. Both grids are rows x cols,
 * row-major, row 0 at the top. @p cellsize (> 0, metres) scales the shading.
 * Returns 0, or -1 with a message in @p err.
 */
int lk_png_terrain(const char *path, const double *z, const double *h, int rows, int cols,
                   double cellsize, double h_min, const char *title, lk_error *err);

/**
 * A scalar field @p v (rows x cols, row-major) in a colour map (viridis, linear) with a
 * legend bar (min, middle and max of the finite values; one colour when they agree to a
 * millionth) and a title line (@p title may be NULL). A map element covering several
 * cells shows their mean; NaN or infinite cells are magenta. Returns 0, or -1 with a
 * message in @p err.
 */
int lk_png_field(const char *path, const double *v, int rows, int cols, const char *title,
                 lk_error *err);

/**
 * Where @p got differs from @p expected bit for bit (as lk_compare_grids()): equal cells
 * light grey, differing cells red, differing cells where got is NaN (the poison included)
 * magenta; a map element covering several cells takes the worst of them. The title line
 * states the count ("N of M cells differ"). Returns 0, or -1 with a message in @p err.
 */
int lk_png_diff(const char *path, const double *expected, const double *got, int rows,
                int cols, lk_error *err);

#ifdef __cplusplus
}
#endif
#endif
