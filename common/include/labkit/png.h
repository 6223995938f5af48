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
 * Hillshaded terrain @p z (grey) with the thickness @p h drawn over it in a colour map
 * where h > @p h_min, plus a legend bar with its scale (metres) and a title line.
 * Both grids are rows x cols, row-major, row 0 at the top. @p cellsize scales the shading.
 */
int lk_png_terrain(const char *path, const double *z, const double *h, int rows, int cols,
                   double cellsize, double h_min, const char *title, lk_error *err);

/** A scalar field in a colour map with a legend bar (min..max) and a title line. */
int lk_png_field(const char *path, const double *v, int rows, int cols, const char *title,
                 lk_error *err);

/**
 * Where @p got differs from @p expected: equal cells grey, differing cells red, NaN cells
 * magenta; a title line states the count.
 */
int lk_png_diff(const char *path, const double *expected, const double *got, int rows,
                int cols, lk_error *err);

#ifdef __cplusplus
}
#endif
#endif
