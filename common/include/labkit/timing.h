/**
 * @file timing.h
 * @brief Timing a region repeated N times after a warm-up: CUDA events or wall clock.
 */
#ifndef LABKIT_TIMING_H
#define LABKIT_TIMING_H

#include "labkit/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Summary of repeated timings, in milliseconds. */
typedef struct lk_stats {
    double median; /**< Median (mean of the two middle samples for even counts). */
    double min;    /**< Fastest sample. */
    double max;    /**< Slowest sample. */
    int n;         /**< Number of samples. */
} lk_stats;

/**
 * Time per step from runs of @p steps steps, each paired with the 0-step run (allocation and
 * transfers only) made right after it: the median over the pairs of their difference over
 * @p steps. Pairing cancels drift in the transfers' time, which a difference of two medians
 * taken at different times keeps. 0 when @p pairs or @p steps < 1 (or out of memory).
 */
double lk_per_step_of_pairs(const double *runs, const double *zero_step_runs, int pairs,
                            int steps);

/**
 * The spread of the 0-step runs, ms: twice their median absolute deviation from their median.
 * For two runs that is their range; unlike the range, one slow run (a fresh process's first
 * call, say) does not widen it. 0 when @p pairs < 1 (or out of memory).
 */
double lk_zero_step_spread(const double *zero_step_runs, int pairs);

/**
 * Whether the steps of lk_per_step_of_pairs' runs stand out of the run-to-run noise: the median
 * of the pairs' differences is positive and at least twice lk_zero_step_spread().
 * When it is not, the time per step is noise: time more steps, or read a kernel profile.
 * 0 when @p pairs < 1 (or out of memory).
 */
int lk_steps_resolved(const double *runs, const double *zero_step_runs, int pairs);

/** A region to time: returns 0 on success, -1 with @p err filled on failure. */
typedef int (*lk_region_fn)(void *ctx, lk_error *err);

/** Monotonic wall-clock time in seconds. */
double lk_wall_seconds(void);

/** Summarise @p n samples (sorted in place). n must be at least 1. */
void lk_stats_of(double *samples, int n, lk_stats *out);

/**
 * Run @p fn @p warmup times untimed, then @p repeats times, each timed with CUDA events
 * recorded on the default stream around it (the events see all work @p fn queues there).
 */
int lk_time_cuda(lk_region_fn fn, void *ctx, int warmup, int repeats, lk_stats *ms,
                 lk_error *err);

/** As lk_time_cuda() for CPU code, with the monotonic wall clock. */
int lk_time_wall(lk_region_fn fn, void *ctx, int warmup, int repeats, lk_stats *ms,
                 lk_error *err);

#ifdef __cplusplus
}
#endif
#endif
