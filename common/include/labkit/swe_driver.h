/**
 * @file swe_driver.h
 * @brief The command-line driver shared by every shallow-water lab (its `main.c` is a few
 * lines): the shallow-water model (labkit/swe.h) plugged into the shared driver
 * (labkit/driver.h). Run a lab's program with `-h` for its options.
 *
 * A run's output is the three fields of the final state, each lk_swe_cells() values with
 * the ghost layer; only the interior is compared, hashed and written. The correctness hash
 * is lk_swe_md5(): the interior of Z, Qx, Qy as raw little-endian doubles, which is also
 * what `--bin` writes: three rows x cols grids one after the other (the JSON line says
 * `"fields":3`).
 */
#ifndef LABKIT_SWE_DRIVER_H
#define LABKIT_SWE_DRIVER_H

#include "labkit/driver.h"
#include "labkit/error.h"
#include "labkit/swe.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * A shallow-water lab's GPU entry point: run @p steps steps from the initial state sim->q
 * (host memory) and leave the final state in @p out (host memory, three fields of
 * lk_swe_cells(sim) values; every interior cell must be written, the ghost layer is not
 * read).
 */
typedef int (*lk_swe_gpu_fn)(const lk_swe *sim, int steps, const lk_swe_fields *out,
                             const lk_launch *launch, lk_error *err);

/** What the driver needs to know about a shallow-water lab. */
typedef struct lk_swe_lab {
    const char *name;             /**< Lab folder name, e.g. "02-coalescing". */
    lk_swe_gpu_fn run;            /**< The GPU code under test (`--variant` not given). */
    lk_swe_gpu_fn baseline;       /**< A given version to compare with (NULL: none). */
    const char *baseline_name;    /**< `--variant NAME` runs the given version instead. */
    const char *baseline_help;    /**< One line describing it, for `-h`. */
    int baseline_steps;           /**< GPU steps `--bench` times it for (0: as many as yours). */
    lk_launch launch;             /**< Default launch configuration. */
    const char *standard_dataset; /**< Manifest dataset of `make run`. */
    const char *bench_dataset;    /**< Manifest dataset of `make bench`. */
    int bench_steps;              /**< GPU steps timed by `make bench`. */
    int bench_serial_steps;       /**< Serial steps timed by `make bench` (per-step rate). */
} lk_swe_lab;

/** The shallow-water model as the shared driver sees it (problem: lk_swe). */
extern const lk_model lk_swe_model;

/** Simulated time (s) of the default run when neither the dataset nor an option says. */
#define LK_SWE_DEFAULT_TIME 5.0

/**
 * The three fields of a driver output buffer of 3 * lk_swe_cells(sim) doubles:
 * Z, then Qx, then Qy.
 */
static inline lk_swe_fields lk_swe_fields_of(const lk_swe *sim, double *out)
{
    lk_swe_fields f;
    f.Z = out;
    f.Qx = out + lk_swe_cells(sim);
    f.Qy = out + 2 * lk_swe_cells(sim);
    return f;
}

/** Parse the command line and run; returns the process exit status (see `-h`). */
int lk_swe_driver(int argc, char **argv, const lk_swe_lab *lab);

#ifdef __cplusplus
}
#endif
#endif
