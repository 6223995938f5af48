#include "score.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double gr_curve(double ratio, double full, double zero)
{
    if (!(ratio == ratio) || ratio < zero)
        return 0.0;
    if (ratio >= full)
        return 1.0;
    return (ratio - zero) / (full - zero);
}

double gr_correctness_points(int passed, int total, double points, int all_or_nothing)
{
    if (total <= 0 || passed <= 0)
        return 0.0;
    if (passed >= total)
        return points;
    return all_or_nothing ? 0.0 : points * passed / total;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Value at fraction q of the sorted values, interpolated between neighbours. */
static double quantile(const double *sorted, int n, double q)
{
    double pos = q * (n - 1);
    int i = (int)pos;
    if (i >= n - 1)
        return sorted[n - 1];
    return sorted[i] + (pos - i) * (sorted[i + 1] - sorted[i]);
}

void gr_spread_of(const double *v, int n, gr_spread *s)
{
    memset(s, 0, sizeof *s);
    s->n = n;
    if (n <= 0)
        return;
    double *sorted = malloc(n * sizeof *sorted);
    if (!sorted)
        return;
    memcpy(sorted, v, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, cmp_double);
    s->median = quantile(sorted, n, 0.5);
    s->lo = n < 4 ? sorted[0] : quantile(sorted, n, 0.25);
    s->hi = n < 4 ? sorted[n - 1] : quantile(sorted, n, 0.75);
    free(sorted);
}

int gr_straddles(const gr_spread *s, double threshold)
{
    return s->n > 0 && s->lo < threshold && s->hi >= threshold;
}

void gr_perf_score_rounds(const double *student_ms, const double *solution_ms, int n,
                          double serial_ms, const char *baseline, double baseline_ms,
                          double min_speedup, double full, double zero, double points,
                          gr_perf_score *out)
{
    memset(out, 0, sizeof *out);
    int vs_baseline = baseline && baseline[0];
    double *ratio = malloc((n > 0 ? n : 1) * sizeof *ratio);
    double *speedup = malloc((n > 0 ? n : 1) * sizeof *speedup);
    double *over = malloc((n > 0 ? n : 1) * sizeof *over);
    if (!ratio || !speedup || !over || n <= 0) {
        free(ratio);
        free(speedup);
        free(over);
        snprintf(out->reason, sizeof out->reason, "no performance measurement");
        return;
    }
    for (int i = 0; i < n; i++) {
        speedup[i] = student_ms[i] > 0 ? serial_ms / student_ms[i] : 0.0;
        over[i] = student_ms[i] > 0 ? baseline_ms / student_ms[i] : 0.0;
        ratio[i] = solution_ms && student_ms[i] > 0 ? solution_ms[i] / student_ms[i] : 0.0;
    }
    gr_spread_of(speedup, n, &out->speedup);
    if (vs_baseline)
        gr_spread_of(over, n, &out->vs_baseline);
    if (solution_ms)
        gr_spread_of(ratio, n, &out->ratio);
    free(ratio);
    free(speedup);
    free(over);

    /* The minimum is judged against the given version when the lab has one, else serial. */
    const gr_spread *judged = vs_baseline ? &out->vs_baseline : &out->speedup;
    char what[96];
    if (vs_baseline)
        snprintf(what, sizeof what, "speedup vs the given version (--variant %s)", baseline);
    else
        snprintf(what, sizeof what, "speedup vs serial");
    out->inconclusive = gr_straddles(judged, min_speedup) ||
                        (solution_ms && (gr_straddles(&out->ratio, full) ||
                                         gr_straddles(&out->ratio, zero)));
    /* A mean of two rounds that disagree could move the points by the noise of one round. */
    out->unsettled = out->inconclusive ||
                     (solution_ms && n < 3 && out->ratio.lo < full && out->ratio.hi >= zero &&
                      out->ratio.hi > GR_ROUNDS_AGREE * out->ratio.lo);
    if (judged->median < min_speedup) {
        out->points = 0.0;
        snprintf(out->reason, sizeof out->reason,
                 "%s %.1fx is below the minimum %gx: no performance points", what,
                 judged->median, min_speedup);
    } else if (!solution_ms) {
        out->points = points;
        snprintf(out->reason, sizeof out->reason,
                 "%s %.1fx meets the minimum %gx; no solution in this kit to compare with: "
                 "full points, provisional", what, judged->median, min_speedup);
    } else {
        double f = gr_curve(out->ratio.median, full, zero);
        out->points = points * f;
        if (f >= 1.0)
            snprintf(out->reason, sizeof out->reason,
                     "%.2f of the solution's speed (full credit from %g)", out->ratio.median, full);
        else if (f <= 0.0)
            snprintf(out->reason, sizeof out->reason,
                     "%.2f of the solution's speed, below %g: no performance points",
                     out->ratio.median, zero);
        else
            snprintf(out->reason, sizeof out->reason,
                     "%.2f of the solution's speed: %.0f%% of the points (full from %g, none "
                     "below %g)", out->ratio.median, 100.0 * f, full, zero);
    }
    if (out->inconclusive) {
        size_t len = strlen(out->reason);
        snprintf(out->reason + len, sizeof out->reason - len,
                 "; INCONCLUSIVE: the measurements straddle a threshold, scored from the medians");
    }
}
