/* CPU tests of lab 06: the serial reference, the generators, and the tolerance rule the GPU
   results are judged by. Every tolerance test also plants an error just past the bound and
   checks that the rule rejects it. */
#include "helpers.h"

/* The double nearest @p reference + @p bound that is just farther than |bound| from it. */
static double just_past(double reference, double bound)
{
    double v = reference + 1.01 * bound;
    while (fabs(v - reference) <= 1.001 * fabs(bound))
        v = nextafter(v, bound > 0 ? INFINITY : -INFINITY);
    return v;
}

static void reduce(const double *x, int rows, int cols, double threshold, double *out)
{
    double sum_abs;
    reduce_serial(x, rows, cols, threshold, out, &sum_abs);
}

Test(serial, sum_max_count_and_box_of_a_small_grid)
{
    const double x[3 * 4] = {0, 1, 0, 0,
                             0, 0, 5, 2,
                             -1, 0, 0, 0};
    double out[REDUCE_NOUT];
    reduce(x, 3, 4, 0.5, out);
    cr_assert_eq(out[LK_OUT_SUM], 7.0);
    cr_assert_eq(out[LK_OUT_MAX], 5.0);
    cr_assert_eq(out[LK_OUT_COUNT], 3.0);
    cr_assert_eq(out[LK_OUT_ROW_MIN], 0.0);
    cr_assert_eq(out[LK_OUT_ROW_MAX], 1.0);
    cr_assert_eq(out[LK_OUT_COL_MIN], 1.0);
    cr_assert_eq(out[LK_OUT_COL_MAX], 3.0);
}

Test(serial, nothing_above_the_threshold_gives_the_empty_box)
{
    const double x[6] = {1, 2, 3, 4, 5, 6};
    double out[REDUCE_NOUT];
    reduce(x, 2, 3, 6.0, out);
    cr_assert_eq(out[LK_OUT_COUNT], 0.0);
    cr_assert_eq(out[LK_OUT_ROW_MIN], 2.0, "row_min of no cell is rows");
    cr_assert_eq(out[LK_OUT_ROW_MAX], -1.0);
    cr_assert_eq(out[LK_OUT_COL_MIN], 3.0, "col_min of no cell is cols");
    cr_assert_eq(out[LK_OUT_COL_MAX], -1.0);
}

Test(serial, a_nan_anywhere_makes_the_max_nan_and_is_not_counted)
{
    for (int at = 0; at < 5; at++) {
        double x[5] = {1, 2, 3, 4, 5}, out[REDUCE_NOUT];
        x[at] = NAN;
        reduce(x, 1, 5, 0.0, out);
        cr_assert(isnan(out[LK_OUT_MAX]), "NaN at %d: max is %g", at, out[LK_OUT_MAX]);
        cr_assert(isnan(out[LK_OUT_SUM]));
        cr_assert_eq(out[LK_OUT_COUNT], 4.0);
    }
}

Test(serial, max_of_negative_infinities)
{
    const double x[3] = {-INFINITY, -INFINITY, -INFINITY};
    double out[REDUCE_NOUT];
    reduce(x, 1, 3, 0.0, out);
    cr_assert_eq(out[LK_OUT_MAX], -INFINITY);
}

/* The compensated sum keeps what a plain sum loses: 1e16 + 1 - 1e16 is 1, not 0. */
Test(serial, the_compensated_sum_survives_cancellation)
{
    const double x[3] = {1e16, 1.0, -1e16};
    double out[REDUCE_NOUT];
    reduce(x, 1, 3, 0.0, out);
    cr_assert_eq(out[LK_OUT_SUM], 1.0, "got %.17g", out[LK_OUT_SUM]);
}

/* ---- generators ------------------------------------------------------------------------ */

Test(generators, same_spec_same_bits)
{
    static const char *specs[] = {"debris:37x53:5", "lake:37x53:5", "equal:3x7:2",
                                  "alternating:1x99:3", "denormal:9x9:4", "nan:9x9:5",
                                  "runge:33x100:0", "sign:33x100:7"};
    for (size_t k = 0; k < sizeof specs / sizeof *specs; k++) {
        reduce_input a, b;
        gen(specs[k], &a);
        gen(specs[k], &b);
        if (a.lagrange)
            cr_assert(memcmp(a.xs, b.xs, a.S * sizeof(double)) == 0 &&
                      memcmp(a.y, b.y, a.n1 * sizeof(double)) == 0, "%s", specs[k]);
        else
            cr_assert(memcmp(a.field, b.field, (size_t)a.rows * a.cols * sizeof(double)) == 0,
                      "%s", specs[k]);
        cr_assert(memcmp(a.gold, b.gold, a.nout * sizeof(double)) == 0, "%s", specs[k]);
        reduce_input_free(&a);
        reduce_input_free(&b);
    }
}

Test(generators, adversarial_sets_are_what_they_say)
{
    reduce_input in;
    gen("equal:1x1025:1", &in);
    for (int i = 1; i < 1025; i++)
        cr_assert_eq(in.field[i], in.field[0]);
    cr_assert_neq(in.field[0] * 1025.0, in.gold[LK_OUT_SUM] + 1.0, "sanity");
    reduce_input_free(&in);

    gen("alternating:1x1000:2", &in);
    double sum_abs = 0.0;
    for (int i = 0; i < 1000; i++) {
        cr_assert((in.field[i] > 0) == (i % 2 == 0), "value %d has the wrong sign", i);
        sum_abs += fabs(in.field[i]);
    }
    cr_assert_lt(fabs(in.gold[LK_OUT_SUM]), sum_abs * 1e-5, "the sum must cancel");
    reduce_input_free(&in);

    gen("denormal:33x65:3", &in);
    for (int i = 0; i < 33 * 65; i++)
        cr_assert_eq(fpclassify(in.field[i]), FP_SUBNORMAL, "value %d is not subnormal", i);
    reduce_input_free(&in);

    gen("nan:97x131:4", &in);
    int nans = 0;
    for (int i = 0; i < 97 * 131; i++)
        nans += isnan(in.field[i]) != 0;
    cr_assert_eq(nans, 1);
    reduce_input_free(&in);

    gen("debris:97x131:7", &in);
    cr_assert_gt(in.gold[LK_OUT_COUNT], 0.0, "the debris blob has cells above the threshold");
    cr_assert_lt(in.gold[LK_OUT_COUNT], 97.0 * 131.0);
    reduce_input_free(&in);
}

Test(generators, bad_specs_are_explained)
{
    static const char *bad[][2] = {
        {"debris:10x10", "KIND:ROWSxCOLS:SEED"}, {"lava:10x10:1", "unknown kind 'lava'"},
        {"debris:0x10:1", "size"}, {"debris:10x10:x", "seed"},
        {"runge:5000x10:0", "at most 4096"}, {"debris:65536x65536:1", "2^31"}};
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        reduce_spec s;
        lk_error err;
        lk_error_clear(&err);
        cr_assert_eq(reduce_spec_parse(bad[k][0], &s, &err), -1, "%s accepted", bad[k][0]);
        cr_assert(strstr(err.msg, bad[k][1]), "%s: message lacks '%s': %s", bad[k][0],
                  bad[k][1], err.msg);
    }
}

/* ---- the tolerance rule ---------------------------------------------------------------- */

/* Pairwise sum of v[0..n). */
static double pairwise(const double *v, size_t n)
{
    return n == 1 ? v[0] : pairwise(v, n / 2) + pairwise(v + n / 2, n - n / 2);
}

/* The orders the rule admits: runs of at most sqrt(n) values, then a tree. */
static double runs_then_tree(const double *x, size_t n)
{
    const size_t run = (size_t)sqrt((double)n) > 0 ? (size_t)sqrt((double)n) : 1;
    const size_t runs = (n + run - 1) / run;
    double *partial = malloc(runs * sizeof *partial);
    for (size_t r = 0; r < runs; r++) {
        partial[r] = 0.0;
        for (size_t i = r * run; i < n && i < (r + 1) * run; i++)
            partial[r] += x[i];
    }
    double s = pairwise(partial, runs);
    free(partial);
    return s;
}

/* Sums in the orders the rule admits (pairwise, runs then a tree) are within the bound;
   one just past the bound, or one that dropped a value, is rejected. */
static void check_sum_rule(const char *spec)
{
    reduce_input in;
    gen(spec, &in);
    const size_t n = (size_t)in.rows * in.cols;
    double got[REDUCE_NOUT];
    memcpy(got, in.gold, sizeof got);
    got[LK_OUT_SUM] = pairwise(in.field, n);
    assert_judged_ok(&in, got, spec);
    got[LK_OUT_SUM] = runs_then_tree(in.field, n);
    assert_judged_ok(&in, got, spec);
    const double g = in.gold[LK_OUT_SUM], b = in.bound[LK_OUT_SUM];
    got[LK_OUT_SUM] = g + 0.9 * b;
    assert_judged_ok(&in, got, spec);
    got[LK_OUT_SUM] = just_past(g, -b);
    cr_assert_eq(reduce_judge(&in, got, NULL, 0), 1, "%s: planted error 1.01 x bound "
                 "accepted", spec);
    /* Dropping a value, even the smallest nonzero one, is outside the bound. */
    double smallest = INFINITY;
    for (size_t i = 0; i < n; i++)
        if (in.field[i] != 0.0 && fabs(in.field[i]) < smallest)
            smallest = fabs(in.field[i]);
    got[LK_OUT_SUM] = g - smallest;
    cr_assert_eq(reduce_judge(&in, got, NULL, 0), 1, "%s: a sum without its smallest "
                 "value (%g) accepted", spec, smallest);
    reduce_input_free(&in);
}

Test(tolerance, sum_bound_admits_plain_orders_and_rejects_planted_errors)
{
    check_sum_rule("debris:97x131:7");
    check_sum_rule("lake:129x257:3");
    check_sum_rule("equal:1x1025:1");
    check_sum_rule("equal:1x100000:3");
    check_sum_rule("alternating:1x100004:2");
    check_sum_rule("debris:1024x1024:1");
}

/* The serial loop's own order is not one the rule admits: adding 10^5 equal values one after
   the other drifts by far more than sqrt(n) roundings (README, question 2). */
Test(tolerance, a_left_to_right_sum_of_equal_values_is_out_of_bounds)
{
    reduce_input in;
    gen("equal:1x100000:3", &in);
    double got[REDUCE_NOUT];
    memcpy(got, in.gold, sizeof got);
    got[LK_OUT_SUM] = 0.0;
    for (int i = 0; i < 100000; i++)
        got[LK_OUT_SUM] += in.field[i];
    cr_assert_eq(reduce_judge(&in, got, NULL, 0), 1, "left to right: off by %.3g, bound %.3g",
                 fabs(got[LK_OUT_SUM] - in.gold[LK_OUT_SUM]), in.bound[LK_OUT_SUM]);
    reduce_input_free(&in);
}

Test(tolerance, exact_results_must_be_equal)
{
    reduce_input in;
    gen("debris:97x131:7", &in);
    for (int k = LK_OUT_MAX; k < REDUCE_NOUT; k++) {
        double got[REDUCE_NOUT];
        memcpy(got, in.gold, sizeof got);
        got[k] = k == LK_OUT_MAX ? nextafter(got[k], 0.0) : got[k] + 1.0;
        char where[512];
        cr_assert_eq(reduce_judge(&in, got, where, sizeof where), 1,
                     "result %d off by one (ulp) accepted", k);
        cr_assert(strstr(where, "exact"), "%s", where);
    }
    reduce_input_free(&in);
}

Test(tolerance, nan_where_the_reference_has_none_and_poison_are_rejected)
{
    reduce_input in;
    gen("debris:5x7:1", &in);
    double got[REDUCE_NOUT];
    memcpy(got, in.gold, sizeof got);
    got[LK_OUT_SUM] = NAN;
    cr_assert_eq(reduce_judge(&in, got, NULL, 0), 1);
    lk_poison(got, REDUCE_NOUT);
    cr_assert_eq(reduce_judge(&in, got, NULL, 0), REDUCE_NOUT);
    reduce_input_free(&in);

    gen("nan:9x9:5", &in);
    memcpy(got, in.gold, sizeof got);
    got[LK_OUT_SUM] = -NAN; /* a NaN with other bits is still the right answer */
    assert_judged_ok(&in, got, "nan set");
    got[LK_OUT_MAX] = 1.0;
    cr_assert_eq(reduce_judge(&in, got, NULL, 0), 1, "a max that missed the NaN accepted");
    reduce_input_free(&in);
}

/* The judged form (--bin) turns the derived bound into the grader's relative 0.5 around 2. */
Test(tolerance, judged_form_maps_the_bound_to_relative_one_half)
{
    cr_assert_eq(reduce_judged(3.0, 3.0, 0.0), 2.0);
    cr_assert_eq(reduce_judged(NAN, NAN, 1.0), 2.0);
    cr_assert_eq(reduce_judged(1.0 + 0x1p-40, 1.0, 0x1p-40), 3.0);
    cr_assert_eq(reduce_judged(1.0 - 0x1p-40, 1.0, 0x1p-40), 1.0);
    cr_assert(fabs(reduce_judged(1.0 + 0x1p-39, 1.0, 0x1p-40) - 2.0) / 2.0 > 0.5);
    cr_assert(isinf(reduce_judged(4.0, 3.0, 0.0)));
}

/* ---- Lagrange -------------------------------------------------------------------------- */

/* Naive values of @p spec judged against the barycentric gold; then a planted error. */
static void check_naive_within_bound(const char *spec)
{
    reduce_input in;
    gen(spec, &in);
    double *ys = malloc(in.S * sizeof *ys);
    reduce_lagrange_naive(in.x, in.y, in.n1, in.xs, ys, in.S);
    assert_judged_ok(&in, ys, spec);
    int s = in.S / 2;
    ys[s] = just_past(in.gold[s], in.bound[s]);
    cr_assert_eq(reduce_judge(&in, ys, NULL, 0), 1, "%s: planted error accepted", spec);
    free(ys);
    reduce_input_free(&in);
}

Test(lagrange, naive_matches_gold_for_every_edge_size, .timeout = 120)
{
    static const int n1s[] = {1, 2, 31, 32, 33, 34, 320};
    static const int Ss[] = {1, 1023, 1025};
    for (size_t a = 0; a < sizeof n1s / sizeof *n1s; a++)
        for (size_t b = 0; b < sizeof Ss / sizeof *Ss; b++) {
            char spec[64];
            snprintf(spec, sizeof spec, "runge:%dx%d:%zu", n1s[a], Ss[b], a + 1);
            check_naive_within_bound(spec);
            snprintf(spec, sizeof spec, "sign:%dx%d:0", n1s[a], Ss[b]);
            check_naive_within_bound(spec);
        }
}

Test(lagrange, partition_of_unity)
{
    static const char *specs[] = {"ones:1x101:0", "ones:51x1001:3", "ones:320x1025:4"};
    for (size_t k = 0; k < 3; k++) {
        reduce_input in;
        gen(specs[k], &in);
        double *ys = malloc(in.S * sizeof *ys);
        reduce_lagrange_naive(in.x, in.y, in.n1, in.xs, ys, in.S);
        for (int s = 0; s < in.S; s++) {
            cr_assert_leq(fabs(ys[s] - 1.0), in.bound[s], "%s: sum of L_j(%g) = %.17g",
                          specs[k], in.xs[s], ys[s]);
            cr_assert_leq(fabs(in.gold[s] - 1.0), in.bound[s]);
        }
        /* Planted: without its last basis polynomial the sum is no longer one. */
        in.y[in.n1 - 1] = 0.0;
        reduce_lagrange_naive(in.x, in.y, in.n1, in.xs, ys, in.S);
        cr_assert_gt(reduce_judge(&in, ys, NULL, 0), 0, "%s: planted error", specs[k]);
        free(ys);
        reduce_input_free(&in);
    }
}

Test(lagrange, reproduces_a_cubic_exactly_up_to_rounding)
{
    static const char *specs[] = {"cubic:4x1001:0", "cubic:33x1025:5", "cubic:320x513:6"};
    for (size_t k = 0; k < 3; k++) {
        reduce_input in;
        gen(specs[k], &in);
        double *ys = malloc(in.S * sizeof *ys);
        reduce_lagrange_naive(in.x, in.y, in.n1, in.xs, ys, in.S);
        for (int s = 0; s < in.S; s++) {
            const double x = in.xs[s], f = x * x * x - 2.0 * x;
            cr_assert_leq(fabs(ys[s] - f), 2.0 * in.bound[s] + 1e-12 * fabs(f),
                          "%s at %g: %.17g instead of %.17g", specs[k], x, ys[s], f);
        }
        free(ys);
        reduce_input_free(&in);
    }
}

Test(lagrange, interpolates_at_the_nodes_exactly)
{
    reduce_input in;
    gen("runge:51x51:0", &in);
    memcpy(in.xs, in.x, 51 * sizeof(double));
    lab06_reference(&in);
    double ys[51];
    reduce_lagrange_naive(in.x, in.y, in.n1, in.xs, ys, in.S);
    for (int j = 0; j < 51; j++) {
        cr_assert_eq(ys[j], in.y[j], "naive at node %d: %.17g, not %.17g", j, ys[j], in.y[j]);
        cr_assert_eq(in.gold[j], in.y[j], "gold at node %d", j);
        cr_assert_eq(in.bound[j], lk_lagrange_bound(51, fabs(in.y[j])));
    }
    ys[7] = just_past(in.gold[7], in.bound[7]);
    cr_assert_eq(reduce_judge(&in, ys, NULL, 0), 1, "planted error at a node accepted");
    reduce_input_free(&in);
}

/* Runge on [-5, 5], 51 Chebyshev nodes, 301 points: 3.96e-5, computed for the kit; Ingargiola
   2019/20, section 4.1 (full reference in labs/06-reductions/README.md), reports an error of
   the order of 1e-5 for n = 50. */
Test(lagrange, runge_n50_s301_error_is_3_96e_5)
{
    reduce_input in;
    gen("runge:51x301:0", &in);
    double ys[301];
    reduce_lagrange_naive(in.x, in.y, in.n1, in.xs, ys, in.S);
    const double naive = runge_error(&in, ys), gold = runge_error(&in, in.gold);
    cr_assert(fabs(naive - 3.96e-5) <= 0.05 * 3.96e-5, "naive: max error %.4g", naive);
    cr_assert(fabs(gold - 3.96e-5) <= 0.05 * 3.96e-5, "gold: max error %.4g", gold);
    /* Planted: 50 nodes instead of 51 is a different polynomial, a different error. */
    gen("runge:50x301:0", &in);
    reduce_lagrange_naive(in.x, in.y, in.n1, in.xs, ys, in.S);
    cr_assert(fabs(runge_error(&in, ys) - 3.96e-5) > 0.05 * 3.96e-5);
    reduce_input_free(&in);
}

Test(lagrange, barycentric_weights_do_not_overflow_for_4096_nodes)
{
    reduce_input in;
    gen("runge:4096x64:9", &in);
    for (int s = 0; s < in.S; s++)
        cr_assert(isfinite(in.gold[s]) && isfinite(in.bound[s]), "point %d", s);
    cr_assert_lt(runge_error(&in, in.gold), 1e-12);
    reduce_input_free(&in);
}
