/* Scoring: the performance curve, correctness credit, spreads and "inconclusive". */
#include <math.h>
#include <string.h>

#include "grader_testing.h"
#include "score.h"

Test(score, the_curve_is_full_above_full_zero_below_zero_linear_between)
{
    cr_assert_eq(gr_curve(1.5, 0.8, 0.3), 1.0);
    cr_assert_eq(gr_curve(0.8, 0.8, 0.3), 1.0, "full credit at exactly the full point");
    cr_assert_eq(gr_curve(0.29, 0.8, 0.3), 0.0);
    cr_assert_eq(gr_curve(0.3, 0.8, 0.3), 0.0, "zero credit at exactly the zero point");
    cr_assert_float_eq(gr_curve(0.55, 0.8, 0.3), 0.5, 1e-12);
    cr_assert_float_eq(gr_curve(0.7, 0.8, 0.3), 0.8, 1e-12);
    cr_assert_eq(gr_curve(NAN, 0.8, 0.3), 0.0, "no measurement, no credit");
}

Test(score, correctness_credit_all_or_proportional)
{
    cr_assert_eq(gr_correctness_points(9, 9, 70, 1), 70);
    cr_assert_eq(gr_correctness_points(8, 9, 70, 1), 0);
    cr_assert_float_eq(gr_correctness_points(6, 9, 70, 0), 70.0 * 6 / 9, 1e-12);
    cr_assert_eq(gr_correctness_points(0, 9, 70, 0), 0);
    cr_assert_eq(gr_correctness_points(0, 0, 70, 0), 0, "no dataset, no credit");
}

Test(score, spread_is_the_full_range_for_few_values_and_the_middle_half_for_more)
{
    gr_spread s;
    double three[] = {1.0, 3.0, 2.0};
    gr_spread_of(three, 3, &s);
    cr_assert_eq(s.median, 2.0);
    cr_assert_eq(s.lo, 1.0);
    cr_assert_eq(s.hi, 3.0);
    double seven[] = {10, 1, 2, 3, 4, 5, 100};
    gr_spread_of(seven, 7, &s);
    cr_assert_eq(s.median, 4.0);
    cr_assert_float_eq(s.lo, 2.5, 1e-12);
    cr_assert_float_eq(s.hi, 7.5, 1e-12);
    cr_assert_eq(seven[0], 10, "the input is not reordered");
    double four[] = {4, 1, 3, 2};
    gr_spread_of(four, 4, &s);
    cr_assert_float_eq(s.median, 2.5, 1e-12);
}

Test(score, straddling_means_values_on_both_sides_of_the_threshold)
{
    gr_spread s = {.median = 0.8, .lo = 0.75, .hi = 0.85, .n = 3};
    cr_assert(gr_straddles(&s, 0.8));
    cr_assert(!gr_straddles(&s, 0.7));
    cr_assert(!gr_straddles(&s, 0.9));
    gr_spread at = {.median = 0.85, .lo = 0.8, .hi = 0.9, .n = 3};
    cr_assert(!gr_straddles(&at, 0.8), "all values at or above: decided");
}

Test(score, fast_student_gets_full_points)
{
    double stu[] = {10.0, 10.5, 9.8}, sol[] = {9.0, 9.2, 9.1};
    gr_perf_score p;
    gr_perf_score_rounds(stu, sol, 3, 5000.0, NULL, 0, 5, 0.8, 0.3, 30, &p);
    cr_assert_eq(p.points, 30);
    cr_assert(!p.inconclusive);
    cr_assert(p.speedup.median > 400);
    cr_assert(strstr(p.reason, "full credit"), "%s", p.reason);
}

Test(score, slow_student_gets_points_on_the_curve_and_none_below_it)
{
    double stu[] = {20.0, 20.0, 20.0}, sol[] = {11.0, 11.0, 11.0};
    gr_perf_score p;
    gr_perf_score_rounds(stu, sol, 3, 5000.0, NULL, 0, 5, 0.8, 0.3, 30, &p);
    cr_assert_float_eq(p.ratio.median, 0.55, 1e-12);
    cr_assert_float_eq(p.points, 15.0, 1e-9);
    double slow[] = {100.0, 100.0, 100.0};
    gr_perf_score_rounds(slow, sol, 3, 5000.0, NULL, 0, 5, 0.8, 0.3, 30, &p);
    cr_assert_eq(p.points, 0);
    cr_assert(strstr(p.reason, "no performance points"), "%s", p.reason);
}

Test(score, below_the_minimum_speedup_no_points_even_if_as_fast_as_the_solution)
{
    double stu[] = {100.0, 100.0, 100.0}, sol[] = {100.0, 100.0, 100.0};
    gr_perf_score p;
    gr_perf_score_rounds(stu, sol, 3, 300.0, NULL, 0, 5, 0.8, 0.3, 30, &p);
    cr_assert_float_eq(p.speedup.median, 3.0, 1e-12);
    cr_assert_eq(p.points, 0);
    cr_assert(strstr(p.reason, "below the minimum"), "%s", p.reason);
}

Test(score, two_rounds_settle_only_a_verdict_they_agree_on)
{
    double sol[] = {10.0, 10.0};
    gr_perf_score p;
    /* Both above full credit (0.8): 0.9 and 1.2 disagree, but not about the points. */
    double fast[] = {10.0 / 0.9, 10.0 / 1.2};
    gr_perf_score_rounds(fast, sol, 2, 1e6, NULL, 0, 5, 0.8, 0.3, 30, &p);
    cr_assert(!p.unsettled && p.points == 30);
    /* Both on the linear part, within 15% of each other: their mean decides. */
    double close[] = {10.0 / 0.50, 10.0 / 0.55};
    gr_perf_score_rounds(close, sol, 2, 1e6, NULL, 0, 5, 0.8, 0.3, 30, &p);
    cr_assert(!p.unsettled);
    cr_assert_float_eq(p.ratio.median, 0.525, 1e-12);
    /* 0.40 and 0.60: one slow round would cost 20% of the points; more rounds decide. */
    double apart[] = {10.0 / 0.40, 10.0 / 0.60};
    gr_perf_score_rounds(apart, sol, 2, 1e6, NULL, 0, 5, 0.8, 0.3, 30, &p);
    cr_assert(p.unsettled && !p.inconclusive);
    /* The same spread over three rounds is settled by their median. */
    double three[] = {10.0 / 0.40, 10.0 / 0.60, 10.0 / 0.50}, sol3[] = {10.0, 10.0, 10.0};
    gr_perf_score_rounds(three, sol3, 3, 1e6, NULL, 0, 5, 0.8, 0.3, 30, &p);
    cr_assert(!p.unsettled);
    /* A straddle is always unsettled. */
    double straddle[] = {10.0 / 0.78, 10.0 / 0.82};
    gr_perf_score_rounds(straddle, sol, 2, 1e6, NULL, 0, 5, 0.8, 0.3, 30, &p);
    cr_assert(p.unsettled && p.inconclusive);
}

Test(score, one_slow_round_stops_mattering_two_rounds_later)
{
    /* The grader adds one round at a time while the verdict is unsettled. */
    double ratio[] = {0.9, 0.7, 0.92, 0.91}, stu[4], sol[4];
    for (int i = 0; i < 4; i++) {
        sol[i] = 10.0;
        stu[i] = 10.0 / ratio[i];
    }
    gr_perf_score p;
    for (int n = 2; n <= 4; n++) {
        gr_perf_score_rounds(stu, sol, n, 1e6, NULL, 0, 5, 0.8, 0.3, 30, &p);
        cr_assert_eq(p.unsettled, n < 4, "%d rounds: %s", n, p.reason);
    }
    cr_assert_eq(p.points, 30, "%s", p.reason);
}

Test(score, a_spread_across_a_threshold_is_inconclusive_and_scored_from_the_median)
{
    /* Ratios 0.75, 0.82, 0.85: they straddle the full-credit point 0.8. */
    double stu[] = {10.0 / 0.75, 10.0 / 0.82, 10.0 / 0.85}, sol[] = {10.0, 10.0, 10.0};
    gr_perf_score p;
    gr_perf_score_rounds(stu, sol, 3, 1e6, NULL, 0, 5, 0.8, 0.3, 30, &p);
    cr_assert(p.inconclusive);
    cr_assert_eq(p.points, 30, "the median 0.82 is above 0.8");
    cr_assert(strstr(p.reason, "INCONCLUSIVE"), "%s", p.reason);
}

Test(score, without_a_solution_only_the_minimum_speedup_counts)
{
    double stu[] = {10.0, 10.0, 10.0};
    gr_perf_score p;
    gr_perf_score_rounds(stu, NULL, 3, 1000.0, NULL, 0, 5, 0.8, 0.3, 30, &p);
    cr_assert_eq(p.points, 30);
    cr_assert(strstr(p.reason, "provisional"), "%s", p.reason);
}

Test(score, with_a_baseline_the_minimum_is_judged_against_the_given_version)
{
    /* 10x serial and as fast as the solution, but only 1.3x the given version: no points. */
    double stu[] = {100.0, 100.0, 100.0}, sol[] = {100.0, 100.0, 100.0};
    gr_perf_score p;
    gr_perf_score_rounds(stu, sol, 3, 1000.0, "uncoalesced", 130.0, 20, 0.8, 0.3, 30, &p);
    cr_assert_float_eq(p.speedup.median, 10.0, 1e-12, "the speedup vs serial is still reported");
    cr_assert_float_eq(p.vs_baseline.median, 1.3, 1e-12);
    cr_assert_eq(p.vs_baseline.n, 3);
    cr_assert_eq(p.points, 0);
    cr_assert_str_eq(p.reason, "speedup vs the given version (--variant uncoalesced) 1.3x is "
                               "below the minimum 20x: no performance points");
    /* 0.5x serial, but 25x the given version: above the minimum, scored on the curve. */
    gr_perf_score_rounds(stu, sol, 3, 50.0, "uncoalesced", 2500.0, 20, 0.8, 0.3, 30, &p);
    cr_assert_float_eq(p.speedup.median, 0.5, 1e-12);
    cr_assert_float_eq(p.vs_baseline.median, 25.0, 1e-12);
    cr_assert_eq(p.points, 30);
    cr_assert(strstr(p.reason, "full credit"), "%s", p.reason);
    double slower[] = {200.0, 200.0, 200.0};
    gr_perf_score_rounds(slower, sol, 3, 50.0, "uncoalesced", 5000.0, 20, 0.8, 0.3, 30, &p);
    cr_assert_float_eq(p.points, 12.0, 1e-9, "0.5 of the solution's speed: 40%% of the points");
    /* Without a solution the minimum over the given version decides, provisionally. */
    gr_perf_score_rounds(stu, NULL, 3, 50.0, "uncoalesced", 2500.0, 20, 0.8, 0.3, 30, &p);
    cr_assert_eq(p.points, 30);
    cr_assert(strstr(p.reason, "speedup vs the given version (--variant uncoalesced) 25.0x "
                               "meets the minimum 20x"), "%s", p.reason);
}

Test(score, a_spread_across_the_minimum_over_the_given_version_is_inconclusive)
{
    /* 19x, 21x, 22x the given version straddle 20x; the serial speedup (200x+) does not. */
    double stu[] = {100.0 / 19, 100.0 / 21, 100.0 / 22}, sol[] = {1.0, 1.0, 1.0};
    gr_perf_score p;
    gr_perf_score_rounds(stu, sol, 3, 1000.0, "uncoalesced", 100.0, 20, 0.8, 0.3, 30, &p);
    cr_assert(p.inconclusive);
    cr_assert_eq(p.points, 0, "the median 21x meets the minimum, the ratio 0.21 is below zero");
    cr_assert(strstr(p.reason, "INCONCLUSIVE"), "%s", p.reason);
    /* The same student judged against serial is decided. */
    gr_perf_score_rounds(stu, sol, 3, 1000.0, NULL, 0, 20, 0.8, 0.3, 30, &p);
    cr_assert(!p.inconclusive, "%s", p.reason);
    cr_assert_eq(p.vs_baseline.n, 0, "no baseline, no speedup over it");
}
