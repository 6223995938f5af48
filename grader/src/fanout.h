/**
 * @file fanout.h
 * @brief Independent driver runs side by side: each task in a forked process of its own
 * (its sandboxed commands, their reaping and its result stay in that process), at most a
 * given weight in flight; the checks a task adds come back through a result file.
 */
#ifndef GRADER_FANOUT_H
#define GRADER_FANOUT_H

#include "grade.h"

/** One task's work, in the forked process: add its checks to @p r. Returns a code 0-99 for
    the parent (the task's own meaning), or -1 with @p err set (a grader error). */
typedef int (*gr_task_fn)(void *ctx, int task, gr_lab_result *r, lk_error *err);

/** What the parent learnt of a task. */
typedef struct gr_task_result {
    int started;        /**< 0 when it was never started (see gr_fanout's @p stop). */
    int code;           /**< The task's code; -1 when it failed (grader error, crash). */
    char *error;        /**< Why, when code is -1 (malloc'd). */
    int timed_out;      /**< 1 when it ran past the deadline and was killed (code -1). */
    gr_lab_result r;    /**< Its checks (lab "task", empty when it added none). */
} gr_task_result;

/**
 * Run tasks 0..@p ntasks-1 with @p fn, in task order, keeping the sum of the running tasks'
 * @p weights (NULL: 1 each) at most @p slots (a heavier task runs alone). @p stop, when not
 * NULL, is asked after each task ends with its code: nonzero starts no further task (those
 * come back with started 0). A task still running @p deadline_s seconds after it started is
 * killed with its commands (timed_out). Result files go to @p dir. Fills @p out[ntasks];
 * returns 0, or -1 when no process could be started (@p err).
 */
int gr_fanout(gr_session *s, const char *dir, int ntasks, const int *weights, int slots,
              double deadline_s,
              gr_task_fn fn, void *ctx, int (*stop)(void *ctx, int code),
              gr_task_result *out, lk_error *err);

/** Free what gr_fanout() put in @p out[n]. */
void gr_fanout_free(gr_task_result *out, int n);

/** Correctness runs side by side by default: three quarters of the CPUs, at most 12, at
    least 1. */
int gr_default_runs(void);

#endif
