/* Lab 04, given (read-only): the variants and tiles of the command line, and the time loop
   (given.c) that owns the device buffers and calls your launchers. */
#ifndef LAB04_GIVEN_H
#define LAB04_GIVEN_H

#include "lab.h"
#include "labkit/harness.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Most threads in a block. */
#define LAB04_MAX_BLOCK_THREADS 1024
/** Fewest threads in a fast block: one whole warp, so its kernel may work warp by warp. */
#define LAB04_FAST_MIN_THREADS 32

/** The variants `--variant` names, in lab04_variant order, with their default tiles (the
    halo and fused tiles leave room for the ring in a block of whole warps). */
extern const lk_variant lab04_variants[LAB04_NVARIANTS + 1];

/** Parse a variant name ("halo", "nohalo", "fused", "fast"; "" means the first, halo). */
int lab04_variant_parse(const char *name, lab04_variant *out, lk_error *err);

/**
 * Block shape of @p variant for a tile: halo and fused blocks are the tile plus a one-cell
 * ring (tile_x + 2 by tile_y + 2), nohalo and fast blocks are the tile.
 */
void lab04_block_of_tile(lab04_variant variant, int tile_x, int tile_y, int *block_x,
                         int *block_y);

/** Check that a tile is usable by @p variant: each side >= 1, its block at most 1024 threads
    (and for fast at least LAB04_FAST_MIN_THREADS). */
int lab04_check_tile(lab04_variant variant, int tile_x, int tile_y, lk_error *err);

/**
 * Check `--variant` and `--tile` of a command line before anything runs: the variant is
 * known, the tile (or the variant's default) fits a block. Returns 0 or -1 with @p err.
 */
int lab04_check_options(const char *variant, int tile_x, int tile_y, lk_error *err);

/**
 * Allocate, copy, run @p steps steps of @p variant with a tile of tile_x x tile_y through
 * your launchers, copy the thickness back, free.
 */
int lab04_gpu_run(int rows, int cols, const double *z, const double *h_in, double *h_out,
                  int steps, lab04_variant variant, int tile_x, int tile_y, lk_error *err);

#ifdef __cplusplus
}
#endif
#endif
