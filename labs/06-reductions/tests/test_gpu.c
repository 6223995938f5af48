/* GPU tests of your kernels.cu, through the given code (given.cu) that the driver runs.
   Max, count and bounding box must equal the serial reference exactly; sums and
   interpolated values must be within the bounds derived from the algorithm
   (reduce/reduce.h); the deterministic variants must give the same bits on every call. */
#include "helpers.h"

static const char *const deterministic_variants[] = {"singlepass", "tree", "shuffle",
                                                     "gridstride"};

/* Run @p variant on @p in (steps extra sums) into @p out, asserting success. */
static void run(const reduce_input *in, const char *variant, int steps, double *out)
{
    lk_error err;
    lk_error_clear(&err);
    lk_poison(out, in->nout);
    int rc = lab06_gpu_run(in, variant, steps, out, &err);
    cr_assert_eq(rc, 0, "%s, variant %s: %s", in->lagrange ? "Lagrange" : "field", variant,
                 err.msg);
}

/* @p variant on @p spec, judged against the reference; twice, with more steps the second
   time, and (but for atomic and CUB's) bit for bit the same. */
static void check_field(const char *spec, const char *variant)
{
    LK_REQUIRE_GPU();
    reduce_input in;
    gen(spec, &in);
    double a[REDUCE_NOUT], b[REDUCE_NOUT];
    char what[160];
    snprintf(what, sizeof what, "%s, variant %s", spec, variant);
    run(&in, variant, 0, a);
    assert_judged_ok(&in, a, what);
    run(&in, variant, 3, b);
    assert_judged_ok(&in, b, what);
    if (strcmp(variant, "atomic") != 0 && strcmp(variant, "cub") != 0)
        cr_assert(memcmp(a, b, sizeof a) == 0, "%s: two calls gave different bits: sum %.17g, "
                  "then %.17g (the order of the additions must not change)", what,
                  a[LK_OUT_SUM], b[LK_OUT_SUM]);
    reduce_input_free(&in);
}

/* One suite per variant (make check lists them by name): odd sizes, one value, several
   passes of a tree, every adversarial set. */
#define FIELD_SUITE(V)                                                                     \
    Test(V, one_value) { check_field("debris:1x1:1", #V); }                                \
    Test(V, two_values) { check_field("nan:1x2:3", #V); }                                  \
    Test(V, thirty_one_values) { check_field("lake:1x31:2", #V); }                         \
    Test(V, thirty_three_values) { check_field("lake:3x11:2", #V); }                       \
    Test(V, a_block_and_one) { check_field("equal:1x257:5", #V); }                         \
    Test(V, sizes_around_1024)                                                             \
    {                                                                                      \
        check_field("lake:1x1023:4", #V);                                                  \
        check_field("lake:1x1025:4", #V);                                                  \
    }                                                                                      \
    Test(V, odd_grid) { check_field("debris:97x131:7", #V); }                              \
    Test(V, column_strip) { check_field("debris:1000x1:3", #V); }                          \
    Test(V, two_passes_of_a_tree) { check_field("alternating:1x65537:2", #V); }            \
    Test(V, three_passes_of_a_tree) { check_field("debris:1025x1023:6", #V); }             \
    Test(V, all_equal) { check_field("equal:1x100000:3", #V); }                            \
    Test(V, cancellation)                                                                  \
    {                                                                                      \
        check_field("alternating:1x100004:2", #V);                                         \
        check_field("alternating:33x65:9", #V);                                            \
    }                                                                                      \
    Test(V, denormals)                                                                     \
    {                                                                                      \
        check_field("denormal:33x65:3", #V);                                               \
        check_field("denormal:1x100001:4", #V);                                            \
    }                                                                                      \
    Test(V, one_nan)                                                                       \
    {                                                                                      \
        check_field("nan:97x131:4", #V);                                                   \
        check_field("nan:1x1:8", #V);                                                      \
    }                                                                                      \
    Test(V, nothing_above_the_threshold) { check_field("debris:5x5:1", #V); }              \
    Test(V, two_to_the_22_values, .timeout = 120) { check_field("debris:2048x2048:1", #V); }

FIELD_SUITE(tree)
FIELD_SUITE(shuffle)
FIELD_SUITE(gridstride)
FIELD_SUITE(singlepass)
FIELD_SUITE(atomic)
FIELD_SUITE(cub)

/* The deterministic rungs, called again and again: the same bits every time. */
Test(repeat, deterministic_variants_repeat_bit_for_bit)
{
    LK_REQUIRE_GPU();
    reduce_input in;
    gen("lake:513x1027:5", &in);
    for (int v = 0; v < 4; v++) {
        const char *name = deterministic_variants[v];
        double first[REDUCE_NOUT], again[REDUCE_NOUT];
        run(&in, name, 0, first);
        for (int k = 0; k < 10; k++) {
            run(&in, name, k % 3, again);
            cr_assert(memcmp(first, again, sizeof first) == 0, "variant %s, call %d: sum "
                      "%.17g instead of %.17g", name, k + 2, again[LK_OUT_SUM],
                      first[LK_OUT_SUM]);
        }
    }
    reduce_input_free(&in);
}

/* The atomic rung may change its bits between calls, never beyond the bound. */
Test(repeat, atomic_variant_stays_within_the_bound)
{
    LK_REQUIRE_GPU();
    reduce_input in;
    gen("alternating:1024x1024:7", &in);
    for (int k = 0; k < 10; k++) {
        double out[REDUCE_NOUT];
        run(&in, "atomic", k, out);
        assert_judged_ok(&in, out, "atomic, repeated");
    }
    reduce_input_free(&in);
}

/* ---- Lagrange -------------------------------------------------------------------------- */

static void check_lagrange(const char *spec)
{
    LK_REQUIRE_GPU();
    reduce_input in;
    gen(spec, &in);
    double *ys = malloc(in.S * sizeof *ys);
    run(&in, "lagrange", 0, ys);
    assert_judged_ok(&in, ys, spec);
    free(ys);
    reduce_input_free(&in);
}

Test(lagrange, edge_sizes, .timeout = 120)
{
    static const int n1s[] = {1, 2, 31, 32, 33, 34, 320};
    static const int Ss[] = {1, 1023, 1025};
    for (size_t a = 0; a < sizeof n1s / sizeof *n1s; a++)
        for (size_t b = 0; b < sizeof Ss / sizeof *Ss; b++) {
            char spec[64];
            snprintf(spec, sizeof spec, "runge:%dx%d:%zu", n1s[a], Ss[b], a + b + 1);
            check_lagrange(spec);
            snprintf(spec, sizeof spec, "sign:%dx%d:0", n1s[a], Ss[b]);
            check_lagrange(spec);
        }
}

Test(lagrange, a_million_points, .timeout = 300)
{
    check_lagrange("runge:2x1000000:3");
    check_lagrange("runge:33x1000000:0");
    check_lagrange("sign:320x1000000:5");
}

Test(lagrange, partition_of_unity_and_a_cubic)
{
    check_lagrange("ones:51x1025:3");
    check_lagrange("cubic:34x1025:0");
}

Test(lagrange, runge_n50_s301_error_is_3_96e_5)
{
    LK_REQUIRE_GPU();
    reduce_input in;
    gen("runge:51x301:0", &in);
    double ys[301];
    run(&in, "lagrange", 0, ys);
    assert_judged_ok(&in, ys, "runge:51x301:0");
    const double e = runge_error(&in, ys);
    cr_assert(fabs(e - 3.96e-5) <= 0.05 * 3.96e-5, "max |p - f| is %.4g, not 3.96e-5", e);
    reduce_input_free(&in);
}

Test(lagrange, exact_at_the_nodes)
{
    LK_REQUIRE_GPU();
    reduce_input in;
    gen("runge:33x33:0", &in);
    memcpy(in.xs, in.x, 33 * sizeof(double));
    lab06_reference(&in);
    double ys[33];
    run(&in, "lagrange", 0, ys);
    for (int j = 0; j < 33; j++)
        cr_assert_eq(ys[j], in.y[j], "at node %d: %.17g instead of %.17g", j, ys[j], in.y[j]);
    reduce_input_free(&in);
}
