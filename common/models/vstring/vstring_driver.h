/**
 * @file vstring_driver.h
 * @brief The vibrating-string steps of a lab driver (labkit/harness.h): open the input the
 * command line names, and report (hashes, comparison, output files).
 *
 * A run's output is the final state, 2N doubles interleaved (u_0, v_0, u_1, v_1, ...): to
 * the harness one row of 2N cells, one cell per component. The correctness hash is the md5
 * of those doubles as `--bin` writes them (vstring_md5()).
 */
#ifndef LABKIT_VSTRING_DRIVER_H
#define LABKIT_VSTRING_DRIVER_H

#include "labkit/harness.h"
#include "vstring/vstring.h"

#ifdef __cplusplus
extern "C" {
#endif

/** `--gen` forms of the string lab, for its lk_lab. */
#define VSTRING_GEN_HELP "KIND:1xN:SEED, KIND sine, pluck or random, N mass points (e.g. pluck:1x1000:7)"

/** Steps of a run when neither the dataset nor `--steps` says. */
#define VSTRING_DEFAULT_STEPS 1000

/** Load the input @p run's options name into @p sim and tell the harness its shape. */
int vstring_open(lk_run *run, vstring *sim);

/** Hash the serial and GPU states, compare them, write `--out`, `--bin` and `--png` (u and v
    as a 2 x N field). */
void vstring_report(lk_run *run, const vstring *sim);

#ifdef __cplusplus
}
#endif
#endif
