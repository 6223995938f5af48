/**
 * @file score.h
 * @brief Turning measurements into points: correctness credit, the performance curve
 * against the solution, spreads of repeated measurements and the "inconclusive" rule.
 */
#ifndef GRADER_SCORE_H
#define GRADER_SCORE_H

/**
 * Fraction of the performance points for a speed @p ratio (student speed / solution speed):
 * 1 at or above @p full, 0 below @p zero, linear in between.
 */
double gr_curve(double ratio, double full, double zero);

/**
 * Correctness points: @p points when every dataset passed; otherwise 0 when @p all_or_nothing,
 * else @p points * passed / total.
 */
double gr_correctness_points(int passed, int total, double points, int all_or_nothing);

/** Median and spread of repeated measurements. */
typedef struct gr_spread {
    double median; /**< Median (mean of the two middle values for even counts). */
    double lo;     /**< Low end of the spread. */
    double hi;     /**< High end of the spread. */
    int n;         /**< Number of values. */
} gr_spread;

/**
 * Spread of @p n values: with fewer than 4 values, their full range; from 4 on, the middle
 * half (lower to upper quartile), so that one outlier among many rounds does not make every
 * result inconclusive. @p v is not modified.
 */
void gr_spread_of(const double *v, int n, gr_spread *s);

/** Does the spread straddle @p threshold (some values below it, some at or above)? */
int gr_straddles(const gr_spread *s, double threshold);

/** Two rounds in the curve's linear part settle its points only when the larger ratio is at
    most this factor above the smaller: their mean is then the median of three to within the
    noise of a round. */
#define GR_ROUNDS_AGREE 1.15

/** Performance verdict of one lab. */
typedef struct gr_perf_score {
    gr_spread ratio;    /**< Per-round student speed / solution speed. */
    gr_spread speedup;  /**< Per-round speedup of the student over the serial reference. */
    gr_spread vs_baseline; /**< Per-round speedup over the lab's given version (n 0: none). */
    double points;      /**< Points awarded. */
    int inconclusive;   /**< The spread straddles a threshold: scored from the medians. */
    int unsettled;      /**< Worth more rounds: inconclusive, or two rounds between `zero`
                             and `full` that differ by more than GR_ROUNDS_AGREE. */
    char reason[384];   /**< One line: why these points. */
} gr_perf_score;

/**
 * Score @p n rounds: @p student_ms[i] and @p solution_ms[i] are the two drivers' median
 * times in round i, @p serial_ms the serial reference time of the same work. The minimum
 * speedup is judged against the serial reference, or, when @p baseline names the lab's
 * given version (its `--variant`), against that version's time @p baseline_ms of the same
 * work. With no solution (@p solution_ms NULL) only the minimum speedup counts: full
 * points if met.
 */
void gr_perf_score_rounds(const double *student_ms, const double *solution_ms, int n,
                          double serial_ms, const char *baseline, double baseline_ms,
                          double min_speedup, double full, double zero, double points,
                          gr_perf_score *out);

#endif
