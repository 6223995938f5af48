/**
 * @file driver.h
 * @brief Running a lab driver (the student's or the trusted one) in the sandbox: its
 * arguments, limits and private result descriptor, and reading what it reported.
 */
#ifndef GRADER_DRIVER_H
#define GRADER_DRIVER_H

#include "grade.h"
#include "jsonr.h"
#include "sandbox.h"
#include "util.h"

/** One run of a driver. */
typedef struct gr_driver_run {
    gr_outcome o;         /**< How it ended. */
    gr_json *res;         /**< Its result line, or NULL. */
    char why[512];        /**< Why there is no result line. */
    char *out_path;       /**< Its stdout, kept in its run folder. */
    char *err_path;       /**< Its stderr. */
} gr_driver_run;

/**
 * Run @p driver with @p args (NULL-terminated) plus `--result-fd N` in the sandbox, in the
 * folder @p cwd (the only one it may write), killed after @p wall seconds; @p bin_bytes is
 * the size of the output file it may write. @p ranks > 0 starts it with `mpirun -np RANKS`
 * (the rubric's `launcher mpirun`), and the result line is rank 0's. @p tag names its
 * stdout/stderr files. 0 when it ran (whatever it did: see @p dr), -1 on grader errors.
 */
int gr_run_driver(gr_session *s, const char *driver, const char *cwd, const char *const *args,
                  int ranks, double wall, long long bin_bytes, const char *tag,
                  gr_driver_run *dr, lk_error *err);

/** The process count of the lab's trusted runs (serial reference): 1 under a launcher, else
    0 (started directly). */
int gr_reference_ranks(const gr_lab_rubric *lab);

/** The process count the performance rounds use: the last of `ranks`, else 0. */
int gr_performance_ranks(const gr_lab_rubric *lab);

/** Free a run's contents. */
void gr_driver_run_free(gr_driver_run *dr);

/**
 * Did the run fail (crash, time limit, error status, no result line)? If so, 1 with one
 * line in @p reason and the head of its output in @p detail (@p src_prefix, when given, is
 * cut from paths); else 0.
 */
int gr_run_failed(const gr_driver_run *dr, const char *src_prefix, char *reason, size_t size,
                  gr_buf *detail);

/** Create @p dir (and parents) owned by the user the sandbox runs code as. */
int gr_prepare_dir(const gr_session *s, const char *dir, lk_error *err);

#endif
