/**
 * @file bruss_driver.h
 * @brief The Brusselator steps of a lab driver (labkit/harness.h): open the input the
 * command line names, and report (hashes, comparison, output files).
 *
 * A run's output is the final state, 2m^2 doubles: to the harness m rows of 2m cells (row
 * k holds U, V of its points in turn). The correctness hash is the md5 of those doubles as
 * `--bin` writes them (bruss_md5()).
 */
#ifndef LABKIT_BRUSS_DRIVER_H
#define LABKIT_BRUSS_DRIVER_H

#include "bruss/bruss.h"
#include "labkit/harness.h"

#ifdef __cplusplus
extern "C" {
#endif

/** `--gen` form of the Brusselator. */
#define BRUSS_GEN_HELP "bruss:MxM:SEED, an M x M Brusselator (SEED 0: Korch's start)"

/** Steps of a run when neither the dataset nor `--steps` says. */
#define BRUSS_DEFAULT_STEPS 100

/** 1 when the input @p o names is a Brusselator: `--gen bruss:...`, or a `--dataset` of
    model `bruss` in the kit's manifest. */
int bruss_input(const lk_options *o);

/** Load the input @p run's options name into @p sim and tell the harness its shape. */
int bruss_open(lk_run *run, bruss *sim);

/** Hash the serial and GPU states, compare them, write `--out`, `--bin` and `--png` (U). */
void bruss_report(lk_run *run, const bruss *sim);

#ifdef __cplusplus
}
#endif
#endif
