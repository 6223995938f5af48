/**
 * @file stages.h
 * @brief The parts of the GPU stages (run.c orchestrates them): correctness against the
 * serial reference (correctness.c) and timing against the solution (timing.c).
 */
#ifndef GRADER_STAGES_H
#define GRADER_STAGES_H

#include "grade.h"
#include "util.h"

/** The serial reference's output for one dataset, in the session's cache. */
typedef struct gr_ref_output {
    char *bin;     /**< The output file (raw doubles). */
    char hash[33]; /**< Its hash under the lab's policy. */
    int rows;      /**< Rows (fields x rows for models with several fields). */
    int cols;      /**< Columns. */
} gr_ref_output;

/**
 * Compare an output file with the reference file. 1 same, 0 differs (@p reason, @p detail),
 * -1 grader error (the reference cannot be read). @p ref_hash NULL compares bit for bit.
 */
int gr_compare_outputs(const gr_lab_rubric *lab, const char *ref_bin, const char *got_bin,
                       int rows, int cols, const char *ref_hash, char *reason, size_t size,
                       gr_buf *detail, lk_error *err);

/** Build the solution's driver once per session (the trusted reference and the B side of
    the rounds); lc->ref_state tells how it went. -1 on grader errors. */
int gr_ensure_solution(gr_session *s, gr_lab_ctx *lc, lk_error *err);

/**
 * The serial reference's output for a dataset, cached in OUT/cache (or the --session-state
 * folder) by dataset, steps and kit version. 1 ready, 0 the reference failed (@p problem),
 * -1 grader error.
 */
int gr_reference_output(gr_session *s, gr_lab_ctx *lc, const char *refdrv, const char *flag,
                        const char *spec, int steps, gr_ref_output *ref, char *problem,
                        size_t psize, lk_error *err);

/** The rubric's `judge trusted`: the kit's trusted driver judges the raw values a student
    run left (*@p got, @p bytes at most) on input FLAG SPEC after @p steps steps, in a box
    WORK/judge/TAG; *@p got becomes the judged file. 1 judged, 0 refused (@p reason), -1
    grader error. */
int gr_judge_output(gr_session *s, gr_lab_ctx *lc, const char *work, const char *tag,
                    const char *flag, const char *spec, int steps, long long bytes, int *got,
                    char *reason, size_t size, lk_error *err);

/** Run the student's driver on dataset @p idx (with @p ranks processes under the lab's
    launcher, 0: directly) and judge its output (adds the check @p name to @p r). 1 pass,
    0 fail (*hung when it hit the time limit), -1 grader error. */
int gr_check_dataset(gr_session *s, gr_lab_ctx *lc, const char *work, const char *driver,
                     const char *name, const char *flag, const char *spec, int steps,
                     int ranks, const gr_ref_output *ref, int idx, gr_lab_result *r, int *hung,
                     lk_error *err);

/**
 * The per-session timings of the trusted driver @p refdrv, each done once: the serial
 * reference's per-step time, the rubric's given version (baseline) and the 0-step call the
 * rounds subtract. 0 with *problem (malloc'd) when the kit failed, -1 on grader errors.
 */
int gr_time_references(gr_session *s, gr_lab_ctx *lc, const char *refdrv, char **problem,
                       lk_error *err);

/**
 * The A/B performance rounds: each round the student's driver, then the solution's, each
 * making one call (--once) in a fresh process on a fresh instance of the performance dataset,
 * the student's output checked against the solution's on that instance. Adds the output and
 * performance checks to @p r. *output_ok: 1 right, 0 wrong, -1 not checked; *too_slow when a
 * student run hit the performance time limit; *problem (malloc'd) when the kit failed.
 * -1 on grader errors.
 */
int gr_performance(gr_session *s, gr_lab_ctx *lc, const char *work, const char *driver,
                   gr_lab_result *r, int *output_ok, int *too_slow, char **problem,
                   lk_error *err);

/** Why a student run killed at the performance time limit gets no performance points. */
void gr_too_slow_reason(const gr_lab_rubric *lab, char *buf, size_t size);

#endif
