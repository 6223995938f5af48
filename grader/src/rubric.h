/**
 * @file rubric.h
 * @brief The grading rubric: what each lab is graded on and how.
 *
 * Each lab folder holds its block (labs/NN-name/rubric); grader/rubric.txt documents the
 * language and holds the course's own lines (late-tokens). Parsing is strict: every problem
 * is reported as `file:line: what is wrong: what to write`.
 */
#ifndef GRADER_RUBRIC_H
#define GRADER_RUBRIC_H

#include "labkit/error.h"

/** Most student files, entry points and forbidden-symbol patterns per lab. */
#define GR_MAX_FILES 8
/** Longest lab, file, driver or dataset name. */
#define GR_NAME_MAX 128
/** Longest `--variant` name plus its NUL (the drivers' lk_options.variant). */
#define GR_VARIANT_MAX 32

/** Most process counts of a lab's `ranks` line. */
#define GR_MAX_RANKS 8

/** How a lab's driver is started. */
typedef enum gr_launcher {
    GR_LAUNCHER_NONE,  /**< Directly. */
    GR_LAUNCHER_MPIRUN /**< `mpirun -np N --oversubscribe ... DRIVER ...` (`launcher mpirun`). */
} gr_launcher;

/** How outputs are judged. */
typedef enum gr_policy {
    GR_POLICY_HASH_COURSE_TEXT, /**< md5 of the course text dump must equal the reference's. */
    GR_POLICY_HASH_BINARY,      /**< md5 of the raw binary output must equal the reference's. */
    GR_POLICY_TOLERANCE         /**< max relative difference at most `tolerance`, no NaN. */
} gr_policy;

/** One dataset a lab is run on. */
typedef struct gr_dataset {
    char name[GR_NAME_MAX]; /**< Manifest name, or generator spec (hidden: without seed). */
    int generated;          /**< 1 when @ref name is a generator spec (contains ':'). */
    int hidden;             /**< 1 for hidden datasets: the session seed is appended. */
    int steps;              /**< Steps to run; -1: the manifest's (public manifest datasets). */
    int line;               /**< Rubric line. */
} gr_dataset;

/** A student file: its name and the lab.mk variable that receives its path. */
typedef struct gr_student_file {
    char name[GR_NAME_MAX]; /**< File name, e.g. "kernels.cu". */
    char var[64];           /**< make variable, e.g. "KERNELS". */
} gr_student_file;

/** Everything the grader needs to know about one lab. */
typedef struct gr_lab_rubric {
    char name[GR_NAME_MAX];   /**< Lab folder, e.g. "01-straightforward". */
    int line;                 /**< Line of its `lab` keyword. */
    char file[1024];          /**< The file its block is in (messages: file:line). */
    char driver[64];          /**< Driver program built by lab.mk, e.g. "lab01". */
    gr_student_file files[GR_MAX_FILES]; /**< Student files. */
    int nfiles;               /**< Their number (>= 1). */
    char entries[GR_MAX_FILES][GR_NAME_MAX]; /**< Entry points the student defines (C names). */
    int nentries;             /**< Their number (>= 1). */
    gr_policy policy;         /**< Correctness policy. */
    double tolerance;         /**< Relative bound for GR_POLICY_TOLERANCE. */
    gr_dataset *datasets;     /**< Public then hidden datasets, in rubric order. */
    int ndatasets;            /**< Their number (>= 1). */
    gr_dataset perf;          /**< The performance dataset (steps > 0). */
    int serial_steps;         /**< Serial steps timed, extrapolated to perf.steps. */
    double points_correct;    /**< Points for correctness. */
    double points_perf;       /**< Points for performance. */
    int credit_all;           /**< 1: correctness points only if every dataset passes;
                                   0: in proportion to the datasets passed. */
    double curve_full;        /**< Full performance credit at this fraction of the solution's speed. */
    double curve_zero;        /**< No performance credit below this fraction. */
    double min_speedup;       /**< Minimum speedup for any performance credit: vs the
                                   baseline when there is one, else vs serial. */
    char baseline[GR_VARIANT_MAX]; /**< The lab's given version (`--variant` of the trusted
                                   driver) that min_speedup is judged against; "": none. */
    int baseline_steps;       /**< GPU steps the baseline is timed on, extrapolated to perf.steps. */
    int rounds;               /**< A/B rounds of the performance measurement. */
    int extra_rounds;         /**< More rounds when the first ones are inconclusive. */
    int repeat;               /**< Timed runs per driver invocation (--repeat). */
    double limit_build;       /**< Seconds for a build. */
    double limit_run;         /**< Seconds for a correctness run. */
    double limit_perf;        /**< Seconds for a performance run. */
    double limit_relative;    /**< A performance call may take at most this many times the
                                   solution's call on the same instance (a CPU fallback may not). */
    char forbid[32][GR_NAME_MAX]; /**< Extra forbidden symbols ("name" or "prefix*"). */
    int nforbid;              /**< Their number. */
    char forbid_source[32][GR_NAME_MAX]; /**< Identifiers the student's source may not
                                   name: what the lab asks students to write themselves. */
    int nforbid_source;       /**< Their number. */
    double plausible_bytes;   /**< Bytes a step must move per cell (0: no physical bound). */
    double plausible_margin;  /**< A run faster than the bound divided by this is implausible. */
    double plausible_factor;  /**< A run more than this many times the solution's speed is
                                   implausible (0: no such rule). */
    gr_launcher launcher;     /**< How the driver is started (GR_LAUNCHER_NONE: directly). */
    int judge_trusted;        /**< `judge trusted`: the student's driver writes raw values
                                   (its graded build has no reference to judge them by); the
                                   trusted driver judges them (--judge) before the policy
                                   compares them with the reference's. */
    int ranks[GR_MAX_RANKS];  /**< Process counts every dataset is checked at (launcher
                                   mpirun); the performance rounds use the last one. */
    int nranks;               /**< Their number (0 without a launcher). */
    gr_dataset *stretch;      /**< `stretch` datasets: checked after the scored ones and
                                   reported, never scored (hidden: seeded at grading time). */
    int nstretch;             /**< Their number. */
    int deadline_set;         /**< `deadline` given. */
    long long deadline;       /**< Its time, seconds since the epoch (UTC). */
    double late_per_day;      /**< `late per-day P`: percent of the lab's points off per day
                                   (or part of one) late; 0: a late lab loses nothing. */
    double late_floor;        /**< `late ... floor F`: never below F percent of the points. */
    double contest_points;    /**< `contest points P top K`: bonus points for the fastest
                                   correct submissions of the class (0: no contest). */
    int contest_top;          /**< K: how many are ranked for them. */
    int resubmit_best;        /**< `resubmissions best`: of a student's attempts the best
                                   score counts (0: `last`, the latest attempt). */
} gr_lab_rubric;

/** A parsed rubric. */
typedef struct gr_rubric {
    gr_lab_rubric *labs; /**< Labs in file order. */
    int nlabs;           /**< Their number. */
    int late_tokens;     /**< `late-tokens N` (outside the lab blocks): days late each
                              student may use over the course without penalty. */
    int late_tokens_line; /**< Its line (0: none). */
} gr_rubric;

/** Parse rubric text; @p path names it in messages. */
int gr_rubric_parse(const char *path, const char *text, gr_rubric *r, lk_error *err);
/** Read and parse one rubric file holding every lab's block (`--rubric FILE`). */
int gr_rubric_read(const char *path, gr_rubric *r, lk_error *err);
/** Read the kit's rubric: the course lines of KIT/grader/rubric.txt (if there) and the block
    of each lab folder, KIT/labs/NN-name/rubric, which must exist, in folder order. */
int gr_rubric_read_kit(const char *kit, gr_rubric *r, lk_error *err);
/** Read one lab's block alone, KIT/labs/@p name/rubric (which must exist). */
int gr_rubric_read_lab(const char *kit, const char *name, gr_rubric *r, lk_error *err);
/** The kit's labs: the folders labs/NN-name that hold a lab.h, sorted; free each and the list. */
void gr_kit_labs(const char *kit, char ***names, int *n);
/** The lab called @p name, or NULL. */
const gr_lab_rubric *gr_rubric_find(const gr_rubric *r, const char *name);
/** Free a rubric (safe on a zeroed struct). */
void gr_rubric_free(gr_rubric *r);

/** Does @p symbol match @p pattern ("name" exactly, or "prefix*")? */
int gr_symbol_matches(const char *pattern, const char *symbol);

#endif
