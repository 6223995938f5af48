/**
 * @file sciddicat_driver.h
 * @brief The command-line driver shared by every SciddicaT lab (its `main.c` is a few lines).
 *
 * The driver owns the inputs, the serial reference, timing, hashing and output files; the
 * lab supplies one GPU entry point. This is the SciddicaT model plugged into the shared
 * driver (labkit/driver.h, where lk_launch is defined). Run a lab's program with `-h` for
 * its options.
 */
#ifndef LABKIT_SCIDDICAT_DRIVER_H
#define LABKIT_SCIDDICAT_DRIVER_H

#include "labkit/driver.h"
#include "labkit/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * A lab's GPU entry point: run @p steps steps on a rows x cols grid with altitude @p z and
 * initial thickness @p h_in (host memory), leaving the final thickness in @p h_out (host).
 */
typedef int (*lk_sciddicat_gpu_fn)(int rows, int cols, const double *z, const double *h_in,
                                   double *h_out, int steps, const lk_launch *launch,
                                   lk_error *err);

/** What the driver needs to know about a lab. */
typedef struct lk_sciddicat_lab {
    const char *name;             /**< Lab folder name, e.g. "01-straightforward". */
    lk_sciddicat_gpu_fn run;      /**< The GPU entry point. */
    lk_launch launch;             /**< Default launch configuration. */
    lk_launch_label_fn launch_label; /**< How reports name a launch (NULL: "block WxH"). */
    const char *standard_dataset; /**< Manifest dataset of `make run`. */
    const char *bench_dataset;    /**< Manifest dataset of `make bench`. */
    int bench_steps;              /**< GPU steps timed by `make bench`. */
    int bench_serial_steps;       /**< Serial steps timed by `make bench` (per-step rate). */
    const char *const *bench_variants; /**< See lk_driver_lab::bench_variants. */
} lk_sciddicat_lab;

/** The SciddicaT model as the shared driver sees it (problem: lk_sciddicat). */
extern const lk_model lk_sciddicat_model;

/** Parse the command line and run; returns the process exit status (see `-h`). */
int lk_sciddicat_driver(int argc, char **argv, const lk_sciddicat_lab *lab);

#ifdef __cplusplus
}
#endif
#endif
