/**
 * @file sciddicat_driver.h
 * @brief The SciddicaT steps of a lab driver (labkit/harness.h): open the input the command
 * line names, and report (hashes, comparison, output files).
 *
 * The correctness hash is the md5 of the thickness grid in the course text format
 * (lk_course_text_md5()); `--bin` writes the grid as raw little-endian doubles.
 */
#ifndef LABKIT_SCIDDICAT_DRIVER_H
#define LABKIT_SCIDDICAT_DRIVER_H

#include "labkit/harness.h"
#include "sciddicat/sciddicat.h"

#ifdef __cplusplus
extern "C" {
#endif

/** `--gen` and positional-file forms of the SciddicaT labs, for their lk_lab. */
#define SCIDDICAT_GEN_HELP "KIND:ROWSxCOLS:SEED, KIND valley, plane, dome or flood (e.g. valley:610x496:1)"
/** Positional input forms of the SciddicaT labs (lk_lab::files_usage). */
#define SCIDDICAT_FILES_USAGE                                                           \
    "HEADER DEM SOURCE     (course layout: header + body files)\n"                        \
    "DEM.asc SOURCE.asc    (single-file ESRI grids)"

/** Load the input @p run's options name into @p sim and tell the harness its shape.
    Default steps: the dataset's, else 4000. */
int sciddicat_open(lk_run *run, sciddicat *sim);

/** Hash the serial and GPU thickness, compare them, write `--out`, `--bin`, `--png`. */
void sciddicat_report(lk_run *run, const sciddicat *sim);

#ifdef __cplusplus
}
#endif
#endif
