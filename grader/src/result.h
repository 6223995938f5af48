/**
 * @file result.h
 * @brief What grading found: checks, per-lab results, per-student results; saved as JSON
 * so that a later run can reuse unchanged results.
 */
#ifndef GRADER_RESULT_H
#define GRADER_RESULT_H

#include <stdio.h>

#include "jsonr.h"
#include "labkit/error.h"
#include "score.h"

/** Check statuses. */
#define GR_PASS "pass"
#define GR_FAIL "fail"
#define GR_NOT_RUN "not-run"
#define GR_INCONCLUSIVE "inconclusive"
/** A timing faster than physics or the rubric's factor allows: no points until reviewed. */
#define GR_IMPLAUSIBLE "implausible"

/** Lab outcomes (gr_lab_result.outcome). */
#define GR_OUT_MISSING "missing"          /**< A student file was not found. */
#define GR_OUT_REJECTED "rejected"        /**< Failed an integrity check (includes, symbols). */
#define GR_OUT_BUILD_FAILED "build-failed" /**< Did not compile or link. */
#define GR_OUT_GPU_NOT_RUN "gpu-not-run"  /**< Built and checked; no GPU to run it on. */
#define GR_OUT_INCORRECT "incorrect"      /**< Ran; a dataset failed. */
#define GR_OUT_CORRECT "correct"          /**< Every dataset passed; performance measured, or
                                               too slow for its time limit (no points). */
#define GR_OUT_ERROR "grader-error"       /**< The grader could not grade it (not the student's fault). */
#define GR_OUT_SKELETON "skeleton"        /**< The student files are the kit's, unchanged. */

/** One check: a named step with its verdict and why. */
typedef struct gr_check {
    char *stage;   /**< files, includes, build, symbols, correctness, performance. */
    char *name;    /**< What was checked, e.g. "hidden plane:53x37:42 (200 steps)". */
    char *status;  /**< GR_PASS, GR_FAIL, GR_NOT_RUN or GR_INCONCLUSIVE. */
    char *reason;  /**< One line. */
    char *detail;  /**< Several lines (compiler errors, first differing cells), or NULL. */
    double seconds; /**< Wall time it took (0 when not timed). */
} gr_check;

/** Performance measurement of one lab. */
typedef struct gr_perf {
    int measured;        /**< 1 when the rounds ran and gave numbers. */
    char *dataset;       /**< Driver dataset argument, e.g. "sciddicat-large". */
    int steps;           /**< Steps of each run. */
    int rounds;          /**< A/B rounds run. */
    double *student_ms;  /**< GPU time of the student's steps in each round (see @ref timed). */
    double *solution_ms; /**< Same for the solution, same rounds. */
    double serial_ms;    /**< Serial reference time for @ref steps steps. */
    int serial_steps;    /**< Steps actually timed on the CPU. */
    int extrapolated;    /**< 1 when serial_ms was scaled up from serial_steps. */
    char *baseline;      /**< The lab's given version (--variant) the minimum speedup is
                              judged against, or NULL (judged against serial). */
    double baseline_ms;  /**< Its GPU time for @ref steps steps. */
    int baseline_steps;  /**< Steps it was actually timed on. */
    int baseline_extrapolated; /**< 1 when baseline_ms was scaled up from baseline_steps. */
    gr_perf_score score; /**< Ratios, spreads, points, verdict. */
    int have_solution;   /**< 0 when the kit has no solution to compare with. */
    int implausible;     /**< 1 when the timing broke the rubric's `plausible` rules. */
    double bound_ms;     /**< The physical bound for @ref steps steps (0: none measured). */
    double copy_GBps;    /**< The device's copy bandwidth the bound was computed from. */
    double overhead_ms;  /**< The trusted driver's 0-step call, subtracted from every call. */
    char *timed;         /**< What was timed, in a sentence for the report (NULL: unknown). */
} gr_perf;

/** Result of one lab of one student. */
typedef struct gr_lab_result {
    char *lab;             /**< Lab name. */
    char *outcome;         /**< One of GR_OUT_*. */
    char *summary;         /**< One line for people. */
    int decided;           /**< 1 when the score is final (0: GPU stages not run). */
    double score;          /**< Points (meaningful when decided). */
    double max;            /**< Points possible. */
    double correctness;    /**< Correctness points obtained. */
    double performance;    /**< Performance points obtained. */
    char *key;             /**< Reuse key: student files, kit version, GPU. */
    char *files_md5;       /**< md5 of the student files. */
    char *graded_at;       /**< UTC date of grading. */
    char *gpu;             /**< The GPU its GPU stages ran on, "model (UUID)", when graded
                                with --gpus (NULL: without it, the session's one GPU). */
    char *seed;            /**< Hidden-dataset seed used ("" when none ran); in memory only:
                                no file or report shows it (the session log has it). */
    int reused;            /**< Taken from an earlier run (not saved). */
    gr_check *checks;      /**< Checks in order. */
    int nchecks;           /**< Their number. */
    gr_perf perf;          /**< Performance measurement. */
} gr_lab_result;

/** One change of a saved grade, for the student's audit trail (OUT/students/DIR/audit.jsonl). */
typedef struct gr_audit {
    char *when;          /**< UTC date of the change. */
    char *who;           /**< Who ran the grader. */
    char *lab;           /**< The lab. */
    char *reason;        /**< Why: the --regrade reason, or what changed. */
    char *old_outcome;   /**< Outcome of the saved result before. */
    char *new_outcome;   /**< Outcome of the saved result after. */
    double old_score;    /**< Score before (meaningful when old_decided). */
    double new_score;    /**< Score after (meaningful when new_decided). */
    int old_decided;     /**< The score before was final. */
    int new_decided;     /**< The score after is final. */
} gr_audit;

/** Result of one student. */
typedef struct gr_student {
    char *name;           /**< Folder name in the submissions (as given). */
    char *dir;            /**< Safe folder name for the reports. */
    char *root;           /**< Absolute path of the submission. */
    gr_lab_result *labs;  /**< One per graded lab, in rubric order. */
    int nlabs;            /**< Their number. */
    int done;             /**< 1 once every lab has a result. */
    char **attempts;      /**< Folders under attempts/ (resubmissions), in submission order
                               (names compared as version numbers: 2 before 10); NULL: the
                               folder is the one submission. */
    int nattempts;        /**< Their number. */
    gr_audit *audit;      /**< Changes of the student's saved grades, oldest first. */
    int naudit;           /**< Their number. */
} gr_student;

/** Start a lab result. */
void gr_lab_init(gr_lab_result *r, const char *lab, double max);
/** Free a lab result's contents. */
void gr_lab_free(gr_lab_result *r);
/** Drop the checks of @p r from index @p keep on (a measurement taken again replaces its own). */
void gr_lab_drop_checks(gr_lab_result *r, int keep);
/** Free what @p p holds and zero it. */
void gr_perf_clear(gr_perf *p);
/** Append a check; @p detail may be NULL. Returns the check. */
gr_check *gr_lab_add(gr_lab_result *r, const char *stage, const char *name, const char *status,
                     const char *reason, const char *detail);
/** Set the outcome and the summary line (printf-style). */
void gr_lab_outcome(gr_lab_result *r, const char *outcome, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/**
 * Is @p r "not gradable": nothing of the student's to grade (the kit's skeleton unchanged) or
 * nothing that runs (does not build)? Its 0 points are shown apart from a graded 0.
 */
int gr_lab_not_gradable(const gr_lab_result *r);

/** Total score of a student over decided labs, the maximum, and whether all are decided. */
void gr_student_total(const gr_student *s, double *score, double *max, int *decided);

/** Write a lab result as one JSON object. */
void gr_lab_write_json(FILE *f, const gr_lab_result *r);
/** Read a lab result written by gr_lab_write_json(). */
int gr_lab_from_json(const gr_json *j, gr_lab_result *r, lk_error *err);
/** Read a saved lab result file. */
int gr_lab_load(const char *path, gr_lab_result *r, lk_error *err);
/** Save a lab result file atomically. */
int gr_lab_save(const char *path, const gr_lab_result *r, lk_error *err);

/**
 * Save a lab result atomically, sealed: the file is the result's JSON with a last member
 * "seal", the HMAC-SHA256 under @p secret (GR_SECRET_BYTES, the grader's own secret) of
 * everything else in it, the reuse key included. Only the grader can make a seal that holds.
 */
int gr_lab_save_sealed(const char *path, const gr_lab_result *r, const unsigned char *secret,
                       lk_error *err);

/**
 * Read a file saved by gr_lab_save_sealed() with @p secret. A file whose seal is missing or
 * does not hold (written by anything but this grader with this secret, or changed since) is
 * refused (-1): the caller grades the lab again.
 */
int gr_lab_load_sealed(const char *path, gr_lab_result *r, const unsigned char *secret,
                       lk_error *err);

/** Append @p a to the audit trail @p path, one JSON line (created mode 0644; never through a
    link). */
int gr_audit_append(const char *path, const gr_audit *a, lk_error *err);

/** Read the audit trail @p path (none: *n is 0) into a new array. */
int gr_audit_load(const char *path, gr_audit **out, int *n, lk_error *err);

/** Free @p n audit entries and the array. */
void gr_audit_free(gr_audit *a, int n);

/**
 * Remove the session seed @p seed from every text of @p r that a report shows (summary,
 * check names, reasons and details, what was timed): gr_redact_seed() on each.
 */
void gr_lab_redact(gr_lab_result *r, unsigned long long seed);

#endif
