/**
 * @file grade.h
 * @brief A grading session and the grading of one lab of one student: files, integrity,
 * build, then the GPU stages (correctness on public and hidden datasets, performance).
 */
#ifndef GRADER_GRADE_H
#define GRADER_GRADE_H

#include <sys/types.h>

#include "build.h"
#include "integrity.h"
#include "env.h"
#include "gpus.h"
#include "labkit/manifest.h"
#include "result.h"
#include "rubric.h"

/** The solution is timed alongside the first GR_SOLUTION_TIMED_STUDENTS students of a
    session that reach the performance rounds, and every GR_SOLUTION_RETIME-th after them;
    the others are compared with the median of its timings on the same instance. */
#define GR_SOLUTION_TIMED_STUDENTS 3
#define GR_SOLUTION_RETIME 8
/** Most timings of the solution kept per performance instance. */
#define GR_SOLUTION_TIMES 16
/** The trusted 0-step calls per session whose median wall time the rounds subtract. */
#define GR_ZERO_CALLS 5

/** What a session knows about one graded lab. */
typedef struct gr_lab_ctx {
    const gr_lab_rubric *rub; /**< Its rubric entry. */
    char kit_hash[33];        /**< md5 of the kit parts that decide its grades. */
    char *kit_work;           /**< OUT/work/_kit/LAB: the solution build and reference runs. */
    int *steps;               /**< Steps of each rubric dataset (manifest defaults resolved). */
    int have_solution;        /**< solutions/LAB/ has every student file. */
    int ref_state;            /**< Solution driver: 0 not built yet, 1 ready, -1 failed. */
    char *ref_driver;         /**< Path of the solution's driver once built. */
    char *ref_error;          /**< Why it could not be built. */
    int serial_state;         /**< Serial timing: 0 not yet, 1 done, -1 failed. */
    double serial_ms;         /**< Serial time of the performance run. */
    int serial_steps;         /**< Steps timed on the CPU. */
    int serial_extrapolated;  /**< serial_ms scaled up from serial_steps. */
    char *serial_error;       /**< Why serial timing failed. */
    int baseline_state;       /**< Timing of the rubric's baseline: 0 not yet, 1 done, -1 failed. */
    double baseline_ms;       /**< Its GPU time for the performance run. */
    int baseline_steps;       /**< Steps it was timed on. */
    int baseline_extrapolated; /**< baseline_ms scaled up from baseline_steps. */
    char *baseline_error;     /**< Why timing it failed. */
    int zero_state;           /**< The trusted 0-step call: 0 not timed yet, 1 done, -1 failed. */
    double zero_ms;           /**< Its wall time, measured by the grader from outside the
                                   process (median of GR_ZERO_CALLS), which the rounds
                                   subtract: start, upload, download, exit. */
    double zero_internal_ms;  /**< The same calls' own figure (gpu.ms_median), median: what a
                                   round's own figure is cross-checked against. */
    double zero_sd_ms;        /**< Standard deviation of those wall times: the noise of one
                                   whole-process measurement. */
    char *zero_error;         /**< Why timing it failed. */
    char **perf_refs;         /**< The solution's output on each performance instance (NULL
                                   until a round made it). */
    int nperf_refs;           /**< Their number. */
    double (*sol_ms)[GR_SOLUTION_TIMES]; /**< The solution's timed calls on each performance
                                   instance this session (raw ms), at most GR_SOLUTION_TIMES. */
    int *nsol_ms;             /**< How many of each (arrays of nperf_refs). */
    int perf_students;        /**< Students that reached the performance rounds so far. */
    int timing_alone;         /**< The rounds time a student again with the machine to
                                   themselves: the solution is timed in every round. */
    int perf_rows, perf_cols; /**< Size of the performance dataset's output grid (rows:
                                   fields x the model's rows). */
    long long perf_cells;     /**< Points of its grid: a point with several fields (h, hu,
                                   hv) counts once, as the rubric's bytes per cell do. */
    double copy_GBps;         /**< Copy bandwidth the trusted driver measured (gpu.copy_GBps;
                                   0: it reports none). */
    int references_ready;     /**< Every dataset's serial reference is in the cache. */
} gr_lab_ctx;

/** A grading session. */
typedef struct gr_session {
    char *kit;             /**< Absolute path of the pristine kit. */
    char *out;             /**< Absolute report folder. */
    int out_lock;          /**< Its lock (OUT/.grader.lock), held for the session. */
    char *subs;            /**< Absolute submissions folder (NULL when self-grading). */
    char *rubric_path;     /**< The rubric file. */
    char *lib;             /**< The kit library students link. */
    char *manifest_path;   /**< datasets/MANIFEST. */
    gr_rubric rubric;      /**< The rubric. */
    gr_kit kitinfo;        /**< Build-stage knowledge of the kit. */
    gr_lab_ctx *labs;      /**< Graded labs (in the kit and in the rubric). */
    int nlabs;             /**< Their number. */
    const gr_lab_rubric **graded; /**< Their rubric entries, for layout decisions. */
    gr_env env;            /**< Provenance. */
    int gpu;               /**< 1 when the GPU stages run. */
    unsigned long long seed; /**< Hidden-dataset seed of the session. */
    int self;              /**< Grading the kit's own student files. */
    int force;             /**< Re-grade even unchanged results. */
    int drop;              /**< Untrusted commands run as nobody when root... */
    unsigned run_id;       /**< ...the current student's runs as this user (0: nobody). */
    int accept_implausible; /**< --accept-implausible: score implausible timings anyway. */
    char *gpu_lock;        /**< Machine-wide GPU lock file (a worker's: its GPU's). */
    char *state_dir;       /**< --session-state: where each GPU's per-lab session work is
                                kept for the next session (NULL: OUT/work/kit, this one). */
    int state_lock;        /**< The lock of this session's GPU's state there (-1: none). */
    char *host_lock;       /**< In a GPU worker: the machine's host lock (GPU lock path
                                + ".host"), shared while it runs GPU stages, exclusive while
                                it times a student again alone (NULL: no --gpus). */
    gr_gpu *gpus;          /**< --gpus: the GPUs a worker each grades on (NULL: none given). */
    int ngpus;             /**< Their number (0: no --gpus, the one GPU as before). */
    char *gpu_label;       /**< In a GPU worker: its GPU, "model (UUID)", which each result
                                that ran on it names (NULL: no --gpus). */
    double lock_timeout_s; /**< How long to wait for it (--lock-timeout; 0: no deadline). */
    gr_jail jail;          /**< What student builds and runs see (no namespaces when
                                --unsandboxed). */
    unsigned fd_state;     /**< Picks result descriptor numbers. */
    int runs;              /**< Correctness runs side by side (--runs). */
    lk_manifest manifest;  /**< Datasets of the kit. */
} gr_session;

/** Path of a student's saved result for lab @p lab. */
char *gr_result_path(const gr_session *s, const gr_student *st, const char *lab);

/** Reuse key of a lab result. */
void gr_result_key(const gr_session *s, const gr_lab_ctx *lc, const char *files_md5,
                   char key[33]);

/**
 * Grade lab @p li of student @p st into @p r (initialised here), reusing a saved result
 * with the same key unless the session forces; saves the result. -1 only on grader errors.
 */
int gr_grade_lab(gr_session *s, const gr_student *st, int li, gr_lab_result *r, lk_error *err);

/**
 * Start the CPU stages of lab @p li of @p st (files, reuse, integrity checks, build) in a
 * child process, a build job, so that they run while the grader uses the GPU. Returns its
 * pid, or -1 when none could be started (the lab is then graded from scratch).
 */
pid_t gr_prepare_in_background(gr_session *s, const gr_student *st, int li);

/**
 * gr_grade_lab() for a lab whose build job is @p job (-1: none): waits for it and finishes
 * the grading from what it prepared (or prepares the lab itself when the job died).
 */
int gr_grade_prepared(gr_session *s, const gr_student *st, int li, pid_t job,
                      gr_lab_result *r, lk_error *err);

/**
 * The GPU stages of one lab (run.c, with correctness.c and timing.c): correctness on every dataset against the serial
 * reference, then, when all pass, the A/B performance rounds against the solution. Sets the
 * lab's checks, points and outcome. -1 only on grader errors.
 */
int gr_gpu_stages(gr_session *s, gr_lab_ctx *lc, const char *work, const char *driver,
                  gr_lab_result *r, lk_error *err);

/** Driver arguments of dataset @p i of @p lc (hidden ones with their seed); @p spec must hold 192 bytes. */
void gr_dataset_args(const gr_session *s, const gr_lab_ctx *lc, int i, const char **flag,
                     char *spec, int *steps);

#endif
