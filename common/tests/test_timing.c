#include <criterion/criterion.h>
#include <string.h>
#include <time.h>

#include "labkit/testing.h"
#include "labkit/timing.h"

/* strstr as a truth value, so that assertions read the same in either Criterion API. */
static int contains(const char *s, const char *sub) { return strstr(s, sub) != NULL; }

/* ---- lk_stats_of ---- */

Test(timing, stats_odd_count)
{
    double v[] = {5, 1, 3, 9, 2};
    lk_stats s;
    lk_stats_of(v, 5, &s);
    cr_assert_eq(s.n, 5);
    cr_assert_eq(s.median, 3);
    cr_assert_eq(s.min, 1);
    cr_assert_eq(s.max, 9);
    const double sorted[] = {1, 2, 3, 5, 9};
    cr_assert_arr_eq(v, sorted, sizeof sorted, "samples are sorted in place");
}

Test(timing, stats_even_count_averages_middle_two)
{
    double v[] = {4, 1, 3, 2};
    lk_stats s;
    lk_stats_of(v, 4, &s);
    cr_assert_eq(s.n, 4);
    cr_assert_eq(s.median, 2.5);
    cr_assert_eq(s.min, 1);
    cr_assert_eq(s.max, 4);
}

Test(timing, stats_one_sample)
{
    double v[] = {7.25};
    lk_stats s;
    lk_stats_of(v, 1, &s);
    cr_assert_eq(s.n, 1);
    cr_assert_eq(s.median, 7.25);
    cr_assert_eq(s.min, 7.25);
    cr_assert_eq(s.max, 7.25);
}

Test(timing, stats_with_equal_and_negative_samples)
{
    double v[] = {2, -1, 2, 2, -1, 8};
    lk_stats s;
    lk_stats_of(v, 6, &s);
    cr_assert_eq(s.median, 2);
    cr_assert_eq(s.min, -1);
    cr_assert_eq(s.max, 8);
}

/* ---- lk_per_step_of_pairs ---- */

/* The second pair's transfers were slow in its 0-step run only, and the third's in both: each
   good pair holds 1 ms a step, while the medians' difference, (120 - 250) / 10, is -13. */
Test(timing, per_step_subtracts_each_run_s_own_zero_step_run)
{
    const double runs[] = {110, 120, 300}, zero[] = {100, 250, 290};
    cr_assert_eq(lk_per_step_of_pairs(runs, zero, 3, 10), 1.0);
    const double before[] = {110, 120, 300}, after[] = {100, 250, 290};
    cr_assert_arr_eq(runs, before, sizeof before, "the runs are left in their order");
    cr_assert_arr_eq(zero, after, sizeof after, "the 0-step runs are left in their order");
}

Test(timing, per_step_takes_the_median_pair)
{
    const double runs[] = {30, 90, 40, 50}, zero[] = {10, 10, 10, 10};
    cr_assert_eq(lk_per_step_of_pairs(runs, zero, 4, 2), 17.5); /* (15 + 20) / 2 */
    cr_assert_eq(lk_per_step_of_pairs(runs, zero, 1, 2), 10.0, "only the pairs counted");
}

Test(timing, per_step_without_pairs_or_steps_is_zero)
{
    const double runs[] = {30}, zero[] = {10};
    cr_assert_eq(lk_per_step_of_pairs(runs, zero, 0, 2), 0.0);
    cr_assert_eq(lk_per_step_of_pairs(runs, zero, 1, 0), 0.0);
}

/* ---- lk_steps_resolved ---- */

/* 0-step runs spread over 10 ms: steps that add 20 ms stand out, 19 do not. */
Test(timing, steps_resolved_when_they_add_twice_the_zero_step_spread)
{
    const double zero[] = {100, 110, 105};
    const double runs_20[] = {120, 130, 125}, runs_19[] = {119, 129, 124};
    cr_assert_eq(lk_steps_resolved(runs_20, zero, 3), 1);
    cr_assert_eq(lk_steps_resolved(runs_19, zero, 3), 0);
}

/* A fast kernel's steps drowned in the transfers' jitter: some pairs even come out negative. */
Test(timing, steps_within_the_noise_are_not_resolved)
{
    const double runs[] = {75, 69, 81, 78, 72}, zero[] = {78, 80, 70, 77, 79};
    cr_assert_eq(lk_steps_resolved(runs, zero, 5), 0);
    const double none[] = {100, 100}, same_zero[] = {100, 100};
    cr_assert_eq(lk_steps_resolved(none, same_zero, 2), 0, "no time added is never resolved");
    cr_assert_eq(lk_steps_resolved(runs, zero, 0), 0, "no pairs");
}

/* The first call of a fresh process can be slow: one such 0-step run must not turn 12.6 ms of
   steps into noise (the range, 6.4 ms, did: lab 04's sweep called its first entry noise). */
Test(timing, one_slow_zero_step_run_leaves_the_steps_resolved)
{
    const double zero[] = {11.2, 11.3, 17.5, 11.1, 11.25};
    const double runs[] = {23.8, 23.9, 23.85, 23.7, 23.9};
    cr_assert_float_eq(lk_zero_step_spread(zero, 5), 0.1, 1e-12);
    cr_assert_eq(lk_steps_resolved(runs, zero, 5), 1);
}

/* Evenly spread 0-step runs keep a spread near their range (here 4 of 8 ms). */
Test(timing, zero_step_spread_is_twice_the_median_deviation)
{
    const double zero[] = {10, 14, 18, 12, 16};
    cr_assert_float_eq(lk_zero_step_spread(zero, 5), 4.0, 1e-12);
    const double adds_7[] = {17, 21, 25, 19, 23}, adds_8[] = {18, 22, 26, 20, 24};
    cr_assert_eq(lk_steps_resolved(adds_7, zero, 5), 0);
    cr_assert_eq(lk_steps_resolved(adds_8, zero, 5), 1);
    const double two[] = {100, 110};
    cr_assert_float_eq(lk_zero_step_spread(two, 2), 10.0, 1e-12, "two runs: their range");
    cr_assert_eq(lk_zero_step_spread(two, 0), 0.0);
}

/* ---- lk_wall_seconds / lk_time_wall ---- */

typedef struct counter {
    int calls;
    int fail_at; /* call number (1-based) that fails; 0 = never */
    long sleep_ns;
} counter;

static int counted_region(void *ctx, lk_error *err)
{
    counter *c = ctx;
    c->calls++;
    if (c->sleep_ns > 0) {
        struct timespec ts = {0, c->sleep_ns};
        while (nanosleep(&ts, &ts) != 0) {
        }
    }
    if (c->calls == c->fail_at)
        return lk_fail(err, "region.c:12: step %d failed: fix the region", c->calls);
    return 0;
}

Test(timing, wall_clock_is_monotonic_and_advances)
{
    double t0 = lk_wall_seconds();
    struct timespec ts = {0, 5000000};
    nanosleep(&ts, NULL);
    double t1 = lk_wall_seconds();
    cr_assert_geq(t1 - t0, 0.004, "5 ms sleep measured as %g s", t1 - t0);
    cr_assert_lt(t1 - t0, 1.0, "5 ms sleep measured as %g s", t1 - t0);
}

Test(timing, wall_calls_region_warmup_plus_repeats_times)
{
    counter c = {0, 0, 0};
    lk_stats ms;
    lk_error err = {{0}};
    LK_ASSERT_OK(lk_time_wall(counted_region, &c, 3, 5, &ms, &err), &err);
    cr_assert_eq(c.calls, 8);
    cr_assert_eq(ms.n, 5);
    cr_assert(ms.min >= 0 && ms.min <= ms.median && ms.median <= ms.max);

    c.calls = 0;
    LK_ASSERT_OK(lk_time_wall(counted_region, &c, 0, 1, &ms, &err), &err);
    cr_assert_eq(c.calls, 1);
    cr_assert_eq(ms.n, 1);
}

Test(timing, wall_measures_a_sleep_in_milliseconds)
{
    counter c = {0, 0, 2000000};
    lk_stats ms;
    lk_error err = {{0}};
    LK_ASSERT_OK(lk_time_wall(counted_region, &c, 1, 5, &ms, &err), &err);
    cr_assert_geq(ms.min, 2.0, "a 2 ms sleep measured as min %g ms", ms.min);
    cr_assert_geq(ms.median, 2.0, "a 2 ms sleep measured as median %g ms", ms.median);
    cr_assert_lt(ms.median, 200.0, "a 2 ms sleep measured as median %g ms", ms.median);
}

Test(timing, wall_failing_region_stops_and_keeps_its_error)
{
    lk_stats ms = {-1, -1, -1, -1};
    lk_error err = {{0}};
    counter c = {0, 3, 0}; /* fails on its first timed run after 2 warm-ups */
    cr_assert_eq(lk_time_wall(counted_region, &c, 2, 10, &ms, &err), -1);
    cr_assert_eq(c.calls, 3, "timing went on after the failure: %d calls", c.calls);
    cr_assert_str_eq(err.msg, "region.c:12: step 3 failed: fix the region");
    cr_assert_eq(ms.n, -1, "stats written on failure");

    counter w = {0, 1, 0}; /* fails during warm-up */
    cr_assert_eq(lk_time_wall(counted_region, &w, 2, 10, &ms, &err), -1);
    cr_assert_eq(w.calls, 1);
    cr_assert_str_eq(err.msg, "region.c:12: step 1 failed: fix the region");
}

Test(timing, rejects_bad_counts_without_calling_region)
{
    counter c = {0, 0, 0};
    lk_stats ms;
    lk_error err = {{0}};
    cr_assert_eq(lk_time_wall(counted_region, &c, 0, 0, &ms, &err), -1);
    cr_assert(contains(err.msg, "repeats 0") && contains(err.msg, "at least one"), "%s", err.msg);
    cr_assert_eq(lk_time_wall(counted_region, &c, -1, 3, &ms, &err), -1);
    cr_assert(contains(err.msg, "warmup -1"), "%s", err.msg);
    cr_assert_eq(lk_time_wall(NULL, &c, 0, 3, &ms, &err), -1);
    cr_assert_eq(lk_time_wall(counted_region, &c, 0, 3, NULL, &err), -1);
    /* The CUDA variant validates before touching CUDA, so this holds without a GPU too. */
    cr_assert_eq(lk_time_cuda(counted_region, &c, 0, 0, &ms, &err), -1);
    cr_assert(contains(err.msg, "lk_time_cuda: repeats 0"), "%s", err.msg);
    cr_assert_eq(lk_time_cuda(counted_region, &c, -2, 1, &ms, &err), -1);
    cr_assert(contains(err.msg, "warmup -2"), "%s", err.msg);
    cr_assert_eq(c.calls, 0);
}

/* ---- lk_time_cuda ---- */

Test(timing, cuda_without_gpu_fails_cleanly)
{
    char reason[256];
    if (lk_gpu_available(reason, sizeof reason))
        cr_skip_test("a GPU is present: this test covers machines without one");
    counter c = {0, 0, 0};
    lk_stats ms = {-1, -1, -1, -1};
    lk_error err = {{0}};
    cr_assert_eq(lk_time_cuda(counted_region, &c, 1, 3, &ms, &err), -1);
    cr_assert(contains(err.msg, "cudaEventCreate"), "%s", err.msg);
    cr_assert_eq(c.calls, 0, "region run although no events could be made");
    cr_assert_eq(ms.n, -1);
}

typedef struct memset_ctx {
    void *d;
    size_t bytes;
    int calls;
    int fail_at;
} memset_ctx;

static int memset_region(void *ctx, lk_error *err)
{
    memset_ctx *m = ctx;
    m->calls++;
    if (m->calls == m->fail_at)
        return lk_fail(err, "memset region: failing on purpose at call %d", m->calls);
    LK_CUDA_TRY(err, cudaMemsetAsync(m->d, m->calls & 0xff, m->bytes, 0));
    return 0;
}

Test(timing, cuda_times_a_memset)
{
    LK_REQUIRE_GPU();
    memset_ctx m = {NULL, (size_t)256 << 20, 0, 0};
    cr_assert_eq(cudaMalloc(&m.d, m.bytes), cudaSuccess);
    lk_stats ms;
    lk_error err = {{0}};
    LK_ASSERT_OK(lk_time_cuda(memset_region, &m, 2, 7, &ms, &err), &err);
    cr_assert_eq(m.calls, 9);
    cr_assert_eq(ms.n, 7);
    cr_assert(ms.min > 0 && ms.min <= ms.median && ms.median <= ms.max, "%g %g %g", ms.min,
              ms.median, ms.max);
    /* No GPU writes 256 MiB faster than 10 TB/s; a faster result means the events did not
       surround the work. */
    double floor_ms = m.bytes / 1e13 * 1e3;
    cr_assert(ms.min > floor_ms && ms.median < 1000, "min %g ms, median %g ms", ms.min,
              ms.median);
    cr_log_info("memset of 256 MiB: median %.3f ms (%.0f GB/s)", ms.median,
                m.bytes / (ms.median * 1e-3) / 1e9);
    cr_assert_eq(cudaFree(m.d), cudaSuccess);
}

Test(timing, cuda_failing_region_stops_and_keeps_its_error)
{
    LK_REQUIRE_GPU();
    memset_ctx m = {NULL, 1 << 20, 0, 3};
    cr_assert_eq(cudaMalloc(&m.d, m.bytes), cudaSuccess);
    lk_stats ms = {-1, -1, -1, -1};
    lk_error err = {{0}};
    cr_assert_eq(lk_time_cuda(memset_region, &m, 1, 10, &ms, &err), -1);
    cr_assert_eq(m.calls, 3);
    cr_assert_str_eq(err.msg, "memset region: failing on purpose at call 3");
    cr_assert_eq(ms.n, -1);
    /* The events were destroyed and the device is still fine for the next timing. */
    m.calls = 0;
    m.fail_at = 0;
    LK_ASSERT_OK(lk_time_cuda(memset_region, &m, 0, 2, &ms, &err), &err);
    cr_assert_eq(m.calls, 2);
    cr_assert_eq(cudaFree(m.d), cudaSuccess);
}

Test(timing, cuda_region_error_from_cuda_is_reported_with_location)
{
    LK_REQUIRE_GPU();
    /* A memset on a null pointer: the region's LK_CUDA_TRY reports it with its file:line. */
    memset_ctx m = {NULL, 1 << 20, 0, 0};
    lk_stats ms;
    lk_error err = {{0}};
    cr_assert_eq(lk_time_cuda(memset_region, &m, 0, 3, &ms, &err), -1);
    cr_assert_eq(m.calls, 1);
    cr_assert(contains(err.msg, "test_timing.c:") && contains(err.msg, "cudaMemsetAsync"), "%s",
              err.msg);
}
