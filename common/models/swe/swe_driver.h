/**
 * @file swe_driver.h
 * @brief The shallow-water steps of a lab driver (labkit/harness.h): open the input the
 * command line names, and report (hashes, comparison, output files).
 *
 * A run's output is the three fields of the final state, each swe_cells() values with
 * the ghost layer; only the interior is compared, hashed and written. The correctness hash
 * is swe_md5(): the interior of Z, Qx, Qy as raw little-endian doubles, which is also
 * what `--bin` writes (the JSON line says `"fields":3`).
 */
#ifndef LABKIT_SWE_DRIVER_H
#define LABKIT_SWE_DRIVER_H

#include "labkit/harness.h"
#include "swe/swe.h"

#ifdef __cplusplus
extern "C" {
#endif

/** `--gen` forms of the shallow-water labs, for their lk_lab. */
#define SWE_GEN_HELP "dam:ROWSxCOLS, damrot:ROWSxCOLS or bumps:ROWSxCOLS:SEED"

/** Simulated time (s) of the default run when neither the dataset nor an option says. */
#define SWE_DEFAULT_TIME 5.0

/**
 * The three fields of an output buffer of 3 * swe_cells(sim) doubles: Z, then Qx, then
 * Qy.
 */
static inline swe_fields swe_fields_of(const swe *sim, double *out)
{
    swe_fields f;
    f.Z = out;
    f.Qx = out + swe_cells(sim);
    f.Qy = out + 2 * swe_cells(sim);
    return f;
}

/** Load the input @p run's options name into @p sim (steps: --time, --steps, the dataset's,
    else those of SWE_DEFAULT_TIME) and tell the harness its shape. */
int swe_open(lk_run *run, swe *sim);

/** Hash the serial and GPU states, compare them, write `--out`, `--bin`, `--png`. */
void swe_report(lk_run *run, const swe *sim);

#ifdef __cplusplus
}
#endif
#endif
