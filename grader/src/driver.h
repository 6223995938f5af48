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
    char *out_path;       /**< Its stdout, in the box's meta folder (the run never sees it). */
    char *err_path;       /**< Its stderr, beside it. */
    char *top;            /**< BASE/TAG: the box and its meta folder (gr_rm_rf when done). */
    char *box;            /**< BASE/TAG/run: the run's only writable folder, fresh. */
    char *meta;           /**< BASE/TAG/meta: stdout, stderr, result; grader only. */
    int box_fd;           /**< The box, opened before the run: outputs are read through it. */
} gr_driver_run;

/**
 * Run @p driver with @p args (NULL-terminated) plus `--result-fd N` in the sandbox, in a
 * fresh box BASE/TAG/run made for this run (its working folder and the only one it may
 * write: output names in @p args are relative to it), killed after @p wall seconds;
 * @p bin_bytes is the size of the output file it may write. @p ranks > 0 starts it with
 * `mpirun -np RANKS` (the rubric's `launcher mpirun`), and the result line is rank 0's.
 * 0 when it ran (whatever it did: see @p dr), -1 on grader errors. Free @p dr either way.
 */
int gr_run_driver(gr_session *s, const char *driver, const char *base, const char *const *args,
                  int ranks, double wall, long long bin_bytes, const char *tag,
                  gr_driver_run *dr, lk_error *err);

/** As gr_run_driver(), with what @p input_fd holds copied into the box as "input.bin" first
    (-1: nothing), e.g. a student's output for the trusted driver to judge (--judge). */
int gr_run_driver_on(gr_session *s, const char *driver, const char *base,
                     const char *const *args, int ranks, double wall, long long bin_bytes,
                     const char *tag, int input_fd, gr_driver_run *dr, lk_error *err);

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

/**
 * Open the output @p name a finished run left in its box: never through a link, never a
 * FIFO or device, a regular file of at most @p max_bytes (0: any size) with no other name.
 * A descriptor (read it through gr_fd_path()), or -1 with the reason in @p why.
 */
int gr_run_output(const gr_driver_run *dr, const char *name, long long max_bytes, char *why,
                  size_t size);

/** "/proc/self/fd/FD": a path that opens exactly the file behind @p fd (malloc'd). */
char *gr_fd_path(int fd);

/** Create @p dir (and parents) owned by the user the sandbox runs code as. */
int gr_prepare_dir(const gr_session *s, const char *dir, lk_error *err);

#endif
