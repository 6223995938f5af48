/**
 * @file driver.h
 * @brief The model-independent command-line driver behind every lab's `main.c`.
 *
 * The driver owns option parsing, the inputs, the serial reference, the checked GPU run
 * (output and device allocations poisoned), the timed runs, the repeatability check, the
 * comparison and its explanation, output files, the JSON result line and `--bench`. A model
 * (SciddicaT, shallow water, ...) plugs in through an lk_model; a lab through an
 * lk_driver_lab. Model adapters (labkit/sciddicat_driver.h, labkit/swe_driver.h) wrap both
 * so that a lab's `main.c` stays a few lines.
 */
#ifndef LABKIT_DRIVER_H
#define LABKIT_DRIVER_H

#include <stddef.h>
#include <stdio.h>

#include "labkit/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/** How a lab's GPU code is launched, from the command line. */
typedef struct lk_launch {
    int block_x;      /**< Threads per block along x (columns). */
    int block_y;      /**< Threads per block along y (rows). */
    int tile_x;       /**< Tile width for tiled labs (0: the lab's default). */
    int tile_y;       /**< Tile height for tiled labs (0: the lab's default). */
    char variant[32]; /**< Kernel variant for labs with several ("": the default). */
} lk_launch;

/**
 * A model as the driver sees it. The problem is an opaque struct of @ref problem_size bytes
 * that the driver allocates zeroed and the load functions fill; the output of a run is an
 * array of @ref output_len doubles whose layout only the model knows.
 */
typedef struct lk_model {
    const char *title;               /**< Name for people, e.g. "SciddicaT". */
    const char *const *usage_forms;  /**< Command forms after "usage: PROG ", NULL-terminated. */
    const char *gen_help;            /**< Text of --gen, e.g. "a generated dataset, e.g. ...". */
    const char *steps_help;          /**< Text of --steps. */
    const char *time_help;           /**< Text of --time; NULL when the model has no time. */
    const char *out_help;            /**< Text of --out. */
    const char *bin_help;            /**< Text of --bin. */
    const char *png_help;            /**< Text of --png. */
    unsigned files_ok;               /**< Bit n set: n positional input files are accepted. */
    const char *files_hint;          /**< What to give instead when the file count is wrong. */
    size_t problem_size;             /**< Bytes of the model's problem struct. */
    /** Load manifest dataset @p name; @p steps receives its step count. */
    int (*load_dataset)(const char *manifest, const char *name, void *problem, int *steps,
                        lk_error *err);
    /** Build a problem from a generator spec. */
    int (*load_spec)(const char *spec, void *problem, lk_error *err);
    /** Load @p n positional files; write a label for them into @p label. NULL: none. */
    int (*load_files)(int n, const char *const *files, void *problem, char *label,
                      size_t label_size, lk_error *err);
    /** Free what the load functions allocated. */
    void (*free_problem)(void *problem);
    /** Steps when neither the dataset nor --steps/--time says. */
    int (*default_steps)(const void *problem);
    /** Steps to reach @p seconds of simulated time (needed when time_help is set). */
    int (*steps_for_time)(const void *problem, double seconds, int *steps, lk_error *err);
    /** Grid size for messages, JSON and per-cell rates. */
    void (*dims)(const void *problem, int *rows, int *cols);
    /**
     * Grids in the --bin output, one rows x cols grid after the other (0 or 1: one). When
     * more than one, the JSON line says `"fields":N` after `"cols"`.
     */
    int output_fields;
    /** Append details after "R x C cells, N steps" (may be NULL). */
    void (*describe)(const void *problem, int steps, char *buf, size_t size);
    /** Doubles in the output of a run. */
    size_t (*output_len)(const void *problem);
    /** Serial reference: @p steps steps into @p out. */
    int (*serial)(const void *problem, int steps, double *out, lk_error *err);
    /** The correctness hash of an output (the `md5` of the JSON line). */
    int (*md5)(const void *problem, const double *out, char hex[33], lk_error *err);
    /** md5 of the output as --bin writes it (the `md5_bin` of the JSON line). */
    int (*md5_bin)(const void *problem, const double *out, char hex[33], lk_error *err);
    /**
     * Compare two outputs bit for bit (the parts that are results) and return the number of
     * differing values. When they differ, explain, remembering at most @p kfirst first
     * differences per grid: to @p f if not NULL, into @p buf (@p size bytes) if not NULL.
     * @p what names the comparison (NULL: the model names its fields).
     */
    size_t (*compare)(const void *problem, const double *expected, const double *got,
                      int kfirst, const char *what, FILE *f, char *buf, size_t size);
    /** --out writer. */
    int (*write_text)(const char *path, const void *problem, const double *out, lk_error *err);
    /** --bin writer. */
    int (*write_bin)(const char *path, const void *problem, const double *out, lk_error *err);
    /** --png writer; @p label names the input, @p steps the steps run. */
    int (*write_png)(const char *path, const void *problem, const double *out,
                     const char *label, int steps, lk_error *err);
    /** Bytes a step must move per cell at least (bandwidth figures of --bench). */
    double bytes_per_cell_step;
    /** Bytes of the device-to-device copy that measures the copy bandwidth in --bench. */
    size_t (*copy_bytes)(const void *problem);
} lk_model;

/**
 * A GPU entry point as the driver calls it: run @p steps steps of @p problem, leaving the
 * output (lk_model::output_len doubles, host memory) in @p out. @p ctx is lk_driver_lab::ctx.
 */
typedef int (*lk_driver_gpu_fn)(const void *ctx, const void *problem, double *out, int steps,
                                const lk_launch *launch, lk_error *err);

/**
 * Describe @p launch for the reports into @p buf (e.g. "variant halo, tile 30x6, block
 * 32x8"); returns 0, or -1 when it cannot (the driver then prints "block WxH").
 */
typedef int (*lk_launch_label_fn)(const lk_launch *launch, char *buf, size_t size);

/** What the driver needs to know about a lab. */
typedef struct lk_driver_lab {
    const char *name;             /**< Lab folder name, e.g. "01-straightforward". */
    lk_driver_gpu_fn run;         /**< The GPU code under test (it may read launch->variant). */
    const void *ctx;              /**< Passed to @ref run and @ref baseline. */
    lk_driver_gpu_fn baseline;    /**< A given version --bench compares with (NULL: none). */
    const char *baseline_name;    /**< Its name in the --bench report. */
    int baseline_steps;           /**< GPU steps --bench times it for (0: as many as run). */
    const char *variant_help;     /**< Text of --variant (NULL: a generic one). */
    lk_launch launch;             /**< Default launch configuration. */
    lk_launch_label_fn launch_label; /**< How reports name a launch (NULL: "block WxH"). */
    const char *standard_dataset; /**< Manifest dataset of `make run`. */
    const char *bench_dataset;    /**< Manifest dataset of `make bench`. */
    int bench_steps;              /**< GPU steps timed by `make bench`. */
    int bench_serial_steps;       /**< Serial steps timed by `make bench` (per-step rate). */
    /** Variants `--bench` times in turn, each at its default tile, when --variant is not
        given (NULL-terminated; NULL: only the default launch). */
    const char *const *bench_variants;
} lk_driver_lab;

/** Parse the command line and run; returns the process exit status (see `-h`). */
int lk_driver_main(int argc, char **argv, const lk_model *model, const lk_driver_lab *lab);

#ifdef __cplusplus
}
#endif
#endif
