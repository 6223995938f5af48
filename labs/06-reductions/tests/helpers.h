/* Test helpers of lab 06: generated inputs with their reference, judged outputs. */
#ifndef LAB06_TESTS_HELPERS_H
#define LAB06_TESTS_HELPERS_H

#include "given.h"
#include "labkit/testing.h"

/* Generate @p spec and fill its reference (gold and bounds), as the driver does. */
static inline void gen(const char *spec, reduce_input *in)
{
    reduce_spec s;
    lk_error err;
    LK_ASSERT_OK(reduce_spec_parse(spec, &s, &err), &err);
    LK_ASSERT_OK(reduce_generate(&s, in, &err), &err);
    lab06_reference(in);
}

/* Assert that @p got is within the bounds of @p in's reference. */
static inline void assert_judged_ok(const reduce_input *in, const double *got,
                                    const char *what)
{
    char where[512] = "";
    size_t bad = reduce_judge(in, got, where, sizeof where);
    cr_assert_eq(bad, 0, "%s: %zu values out of their bounds, first %s", what, bad, where);
}

/* Max |p(x) - f(x)| of interpolated values @p ys of Runge's function at in->xs. */
static inline double runge_error(const reduce_input *in, const double *ys)
{
    double e = 0.0;
    for (int s = 0; s < in->S; s++) {
        double d = fabs(ys[s] - 1.0 / (1.0 + in->xs[s] * in->xs[s]));
        e = d > e ? d : e;
    }
    return e;
}

#endif
