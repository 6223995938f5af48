/* Lab 05, given (read-only): the variants of the command line, the two baselines (one step
   per launch, and one persistent kernel with a grid-wide barrier per step) and the loop
   over rows of tiles that calls your lab05_tile_row() (given.cu); for the stretch model,
   the Brusselator's one-step-per-launch baseline and the loop that calls your
   lab05_bruss_launch(). */
#ifndef LAB05_GIVEN_H
#define LAB05_GIVEN_H

#include "lab.h"
#include "labkit/harness.h"

#ifdef __cplusplus
extern "C" {
#endif

/** What `--variant` runs: your two variants, then the given baselines. */
typedef enum lab05_method {
    LAB05_RUN_DIAMOND = LAB05_DIAMOND,     /**< Your diamonds (task 1). */
    LAB05_RUN_HONEYCOMB = LAB05_HONEYCOMB, /**< Your hexagons (task 2). */
    LAB05_RUN_LINEAR = 2,                  /**< Given: one step per launch, pointer swap. */
    LAB05_RUN_PERSISTENT = 3,              /**< Given: one cooperative launch, grid barrier per step. */
    LAB05_RUN_BRUSS = 4,                   /**< Your Brusselator (stretch), row bands. */
    LAB05_RUN_BRUSS_LINEAR = 5             /**< Given: Brusselator, one step per launch. */
} lab05_method;

/** The variants `--variant` names with their default tiles (WIDTHxHEIGHT: points per tile or
    block, steps per launch or per barrier; bruss: grid rows per block, steps per launch);
    `--bench` compares yours with `linear`, the Brusselator's with `bruss-linear`. The
    Brusselator's two run only on a Brusselator input (model bruss), where `bruss` is the
    default. */
extern const lk_variant lab05_variants[7];

/** Parse a variant name ("" means diamond). */
int lab05_method_parse(const char *name, lab05_method *out, lk_error *err);

/** Check a tile for a method: tiled ones as lab05_tile_row() says, the baselines
    WIDTH = threads per block (1..1024), HEIGHT = 1. */
int lab05_check_tile(lab05_method method, int width, int height, lk_error *err);

/**
 * The tile a GPU call runs with: the call's own, except for the given version that
 * `--bench` compares your variant with, which keeps its default tile (yours, e.g. a diamond
 * 64x32, is not a baseline's block): when @p call_variant is a given variant other than
 * @p chosen_variant (`--variant`, "" for none).
 */
void lab05_tile_for_call(const char *call_variant, int call_given, const char *chosen_variant,
                         int *width, int *height);

/** Check `--variant` and `--tile` before anything runs (0 x 0: the variant's default). */
int lab05_check_options(const char *variant, int width, int height, lk_error *err);

/** 1 for the variants of the Brusselator (bruss, bruss-linear). */
int lab05_method_is_bruss(lab05_method method);

/** Check that `--variant` @p variant ("" for the input's default) runs on the input: the
    string's variants on a string, the Brusselator's on a Brusselator (@p bruss 1). */
int lab05_check_model(const char *variant, int bruss, lk_error *err);

/**
 * Allocate, copy y0 (2n doubles) in, run @p steps steps of @p method with tile
 * width x height, copy the state into y_out, free.
 */
int lab05_gpu_run(lab05_method method, int n, const double *y0, double *y_out, int steps,
                  int width, int height, lk_error *err);

/**
 * The Brusselator's run: allocate two states, copy y0 (2m^2 doubles) in, run @p steps steps
 * of @p method (bruss-linear: blocks of @p width threads; bruss: lab05_bruss_launch() per
 * @p height steps with @p width rows per block, 0: lab05_bruss_auto_tile()), copy the
 * state into y_out, free.
 */
int lab05_bruss_gpu_run(lab05_method method, int m, const double *y0, double *y_out,
                        int steps, int width, int height, lk_error *err);

#ifdef __cplusplus
}
#endif
#endif
