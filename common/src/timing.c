#include "labkit/timing.h"

#include <math.h>
#include <stdlib.h>
#include <time.h>

#include "labkit/cuda_check.h"

double lk_wall_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void lk_stats_of(double *samples, int n, lk_stats *out)
{
    if (n < 1) {
        *out = (lk_stats){0, 0, 0, 0};
        return;
    }
    qsort(samples, (size_t)n, sizeof *samples, cmp_double);
    out->n = n;
    out->min = samples[0];
    out->max = samples[n - 1];
    out->median = n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
}

/* The median over the pairs of a run less its 0-step run, ms; 0 without pairs (or memory). */
static double median_pair_difference(const double *runs, const double *zero_step_runs, int pairs)
{
    double *diffs = pairs > 0 ? malloc((size_t)pairs * sizeof *diffs) : NULL;
    if (!diffs)
        return 0.0;
    for (int i = 0; i < pairs; i++)
        diffs[i] = runs[i] - zero_step_runs[i];
    lk_stats s;
    lk_stats_of(diffs, pairs, &s);
    free(diffs);
    return s.median;
}

double lk_per_step_of_pairs(const double *runs, const double *zero_step_runs, int pairs,
                            int steps)
{
    return steps > 0 ? median_pair_difference(runs, zero_step_runs, pairs) / steps : 0.0;
}

double lk_zero_step_spread(const double *zero_step_runs, int pairs)
{
    double *v = pairs > 0 ? malloc((size_t)pairs * sizeof *v) : NULL;
    if (!v)
        return 0.0;
    for (int i = 0; i < pairs; i++)
        v[i] = zero_step_runs[i];
    lk_stats s;
    lk_stats_of(v, pairs, &s);
    for (int i = 0; i < pairs; i++)
        v[i] = fabs(v[i] - s.median);
    lk_stats_of(v, pairs, &s);
    free(v);
    return 2.0 * s.median;
}

int lk_steps_resolved(const double *runs, const double *zero_step_runs, int pairs)
{
    if (pairs < 1)
        return 0;
    const double steps_ms = median_pair_difference(runs, zero_step_runs, pairs);
    return steps_ms > 0.0 && steps_ms >= 2.0 * lk_zero_step_spread(zero_step_runs, pairs);
}

static int check_args(const char *who, lk_region_fn fn, int warmup, int repeats,
                      const lk_stats *ms, lk_error *err)
{
    if (!fn || !ms)
        return lk_fail(err, "%s: no region or no result given: pass a function and an lk_stats",
                       who);
    if (warmup < 0)
        return lk_fail(err, "%s: warmup %d is negative: give 0 or more warm-up runs", who,
                       warmup);
    if (repeats < 1)
        return lk_fail(err, "%s: repeats %d is less than 1: give at least one timed run", who,
                       repeats);
    return 0;
}

static double *alloc_samples(const char *who, int repeats, lk_error *err)
{
    double *v = malloc((size_t)repeats * sizeof *v);
    if (!v)
        lk_fail(err, "%s: out of host memory for %d timing samples: use fewer repeats", who,
                repeats);
    return v;
}

int lk_time_wall(lk_region_fn fn, void *ctx, int warmup, int repeats, lk_stats *ms,
                 lk_error *err)
{
    if (check_args("lk_time_wall", fn, warmup, repeats, ms, err) != 0)
        return -1;
    double *samples = alloc_samples("lk_time_wall", repeats, err);
    if (!samples)
        return -1;
    int rc = 0;
    for (int i = 0; i < warmup && rc == 0; i++)
        rc = fn(ctx, err);
    for (int i = 0; i < repeats && rc == 0; i++) {
        double t0 = lk_wall_seconds();
        rc = fn(ctx, err);
        samples[i] = (lk_wall_seconds() - t0) * 1e3;
    }
    if (rc == 0)
        lk_stats_of(samples, repeats, ms);
    free(samples);
    return rc == 0 ? 0 : -1;
}

/* Like LK_CUDA_TRY, but jumps to the cleanup that destroys the events. */
#define TRY_OR_CLEANUP(call)                                                                \
    do {                                                                                    \
        cudaError_t c_ = (call);                                                            \
        if (c_ != cudaSuccess) {                                                            \
            rc = lk_cuda_fail(err, c_, #call, __FILE__, __LINE__);                          \
            goto cleanup;                                                                   \
        }                                                                                   \
    } while (0)

int lk_time_cuda(lk_region_fn fn, void *ctx, int warmup, int repeats, lk_stats *ms,
                 lk_error *err)
{
    if (check_args("lk_time_cuda", fn, warmup, repeats, ms, err) != 0)
        return -1;
    double *samples = alloc_samples("lk_time_cuda", repeats, err);
    if (!samples)
        return -1;
    cudaEvent_t start = NULL, stop = NULL;
    int rc = 0;
    TRY_OR_CLEANUP(cudaEventCreate(&start));
    TRY_OR_CLEANUP(cudaEventCreate(&stop));
    for (int i = 0; i < warmup; i++) {
        if ((rc = fn(ctx, err)) != 0)
            goto cleanup;
        TRY_OR_CLEANUP(cudaGetLastError());
    }
    for (int i = 0; i < repeats; i++) {
        TRY_OR_CLEANUP(cudaEventRecord(start, 0));
        if ((rc = fn(ctx, err)) != 0)
            goto cleanup;
        /* A region that forgot to check its own launch would otherwise time an empty
           stream and report a fast, wrong result. */
        TRY_OR_CLEANUP(cudaGetLastError());
        TRY_OR_CLEANUP(cudaEventRecord(stop, 0));
        TRY_OR_CLEANUP(cudaEventSynchronize(stop));
        float f;
        TRY_OR_CLEANUP(cudaEventElapsedTime(&f, start, stop));
        samples[i] = f;
    }
    lk_stats_of(samples, repeats, ms);
cleanup:
    /* On an earlier failure the message already says what went wrong; keep it. */
    if (stop) {
        cudaError_t c = cudaEventDestroy(stop);
        if (c != cudaSuccess && rc == 0)
            rc = lk_cuda_fail(err, c, "cudaEventDestroy(stop)", __FILE__, __LINE__);
    }
    if (start) {
        cudaError_t c = cudaEventDestroy(start);
        if (c != cudaSuccess && rc == 0)
            rc = lk_cuda_fail(err, c, "cudaEventDestroy(start)", __FILE__, __LINE__);
    }
    free(samples);
    return rc == 0 ? 0 : -1;
}
