/**
 * @file swe_testing.h
 * @brief Criterion helpers for the shallow-water model and labs: load or generate a
 * problem, run the serial reference or a GPU entry point, compare bit for bit, and check
 * the physical invariants (include only from tests).
 */
#ifndef LABKIT_SWE_TESTING_H
#define LABKIT_SWE_TESTING_H

#include <math.h>
#include <string.h>

#include "swe/swe.h"
#include "swe/swe_driver.h"

/** A shallow-water lab's GPU entry point, as the tests call it. */
typedef int (*swe_test_fn)(const swe *sim, int steps, const swe_fields *out,
                              int block_x, int block_y, lk_error *err);
#include "labkit/testing.h"

/** Load manifest dataset @p name (model swe); fail the test if not. */
static inline void lk_test_swe_load(const char *name, swe *sim, int *steps, char md5[33])
{
    char manifest[4096];
    lk_error err;
    lk_test_path(manifest, sizeof manifest, "datasets/MANIFEST");
    LK_ASSERT_OK(swe_load_dataset(manifest, name, sim, steps, md5, &err), &err);
}

/** Generate the problem of spec @p spec (e.g. "dam:37x53"); fail the test if not. */
static inline void lk_test_swe_gen(const char *spec, swe *sim)
{
    swe_spec s;
    lk_error err;
    LK_ASSERT_OK(swe_spec_parse(spec, &s, &err), &err);
    LK_ASSERT_OK(swe_generate(&s, sim, &err), &err);
}

/** Allocate the fields of a state of @p sim's size; fail the test if not. */
static inline void lk_test_swe_fields(const swe *sim, swe_fields *f)
{
    lk_error err;
    LK_ASSERT_OK(swe_fields_alloc(f, sim->rows, sim->cols, &err), &err);
}

/** Allocate @p out and run the serial reference for @p steps steps into it. */
static inline void lk_test_swe_serial(const swe *sim, int steps, swe_fields *out)
{
    lk_error err;
    lk_test_swe_fields(sim, out);
    LK_ASSERT_OK(swe_serial(sim, steps, out, &err), &err);
}

/** Fill all three fields of @p f, ghost layers included, with the NaN poison. */
static inline void lk_test_swe_poison(const swe *sim, const swe_fields *f)
{
    lk_poison(f->Z, swe_cells(sim));
    lk_poison(f->Qx, swe_cells(sim));
    lk_poison(f->Qy, swe_cells(sim));
}

/** Poison the ghost layer of @p f only (a state whose walls have not been applied yet). */
static inline void lk_test_swe_poison_ghosts(const swe *sim, const swe_fields *f)
{
    const int width = sim->cols + 2;
    double *fields[3] = {f->Z, f->Qx, f->Qy};
    for (int k = 0; k < 3; k++) {
        for (int j = 0; j < width; j++) {
            lk_poison(&fields[k][swe_at(0, j, width)], 1);
            lk_poison(&fields[k][swe_at(sim->rows + 1, j, width)], 1);
        }
        for (int i = 1; i <= sim->rows; i++) {
            lk_poison(&fields[k][swe_at(i, 0, width)], 1);
            lk_poison(&fields[k][swe_at(i, sim->cols + 1, width)], 1);
        }
    }
}

/** Fail with the explanation unless the interiors of two states are bit-identical. */
static inline void lk_test_swe_assert_eq(const swe *sim, const swe_fields *expected,
                                         const swe_fields *got, const char *what)
{
    char buf[6144];
    if (swe_compare(sim, expected, got, 6, what, NULL, buf, sizeof buf) != 0)
        cr_assert_fail("%s", buf);
}

/**
 * Water volume is conserved: |mass(q) - mass(sim->q)| <= 1e-12 mass(sim->q) (the walls are
 * closed: the averages keep the sum of Z under the even ghost copies, and the flux
 * differences cancel in the sum under the odd ones).
 */
static inline void lk_test_swe_check_mass(const swe *sim, const swe_fields *q,
                                          const char *what)
{
    double before = swe_mass(sim, &sim->q), after = swe_mass(sim, q);
    cr_assert(fabs(after - before) <= 1e-12 * before,
              "%s: water volume not conserved: %.17g m^3 at the start, %.17g m^3 at the end "
              "(relative change %.3g, allowed 1e-12)", what, before, after,
              (after - before) / before);
}

/**
 * A state that started uniform along one axis stays exactly uniform along it, and the
 * discharge along it stays exactly 0. @p along_j: 1 for `dam` (uniform along j, Qy = 0),
 * 0 for `damrot` (uniform along i, Qx = 0).
 */
static inline void lk_test_swe_check_uniform(const swe *sim, const swe_fields *q,
                                             int along_j, const char *what)
{
    const int width = sim->cols + 2;
    const double *normal = along_j ? q->Qx : q->Qy, *across = along_j ? q->Qy : q->Qx;
    const char *nname = along_j ? "Qx" : "Qy", *aname = along_j ? "Qy" : "Qx";
    for (int i = 1; i <= sim->rows; i++)
        for (int j = 1; j <= sim->cols; j++) {
            size_t at = swe_at(i, j, width);
            size_t ref = along_j ? swe_at(i, 1, width) : swe_at(1, j, width);
            cr_assert(memcmp(&q->Z[at], &q->Z[ref], sizeof(double)) == 0,
                      "%s: the dam is uniform along %s, but Z(%d, %d) = %.17g differs from "
                      "Z(%d, %d) = %.17g", what, along_j ? "j" : "i", i, j, q->Z[at],
                      along_j ? i : 1, along_j ? 1 : j, q->Z[ref]);
            cr_assert(memcmp(&normal[at], &normal[ref], sizeof(double)) == 0,
                      "%s: the dam is uniform along %s, but %s(%d, %d) = %.17g differs from "
                      "%s(%d, %d) = %.17g", what, along_j ? "j" : "i", nname, i, j, normal[at],
                      nname, along_j ? i : 1, along_j ? 1 : j, normal[ref]);
            cr_assert(across[at] == 0.0,
                      "%s: the water only moves along %s, but %s(%d, %d) = %.17g, not 0", what,
                      along_j ? "i" : "j", aname, i, j, across[at]);
        }
}

/**
 * L1 error (m^2) of Z against the Stoker solution for the dam break on a dam:Nx2 grid
 * (@p n cells along the dam axis) after the steps that reach 5 s, before any wave reaches a
 * wall: sum of |Z - h| dx over the cells within @p window metres of the dam (0: all 500 m).
 */
static inline double lk_test_swe_stoker_l1(int n, double window)
{
    char spec[64];
    snprintf(spec, sizeof spec, "dam:%dx2", n);
    swe sim;
    swe_fields out;
    lk_stoker st;
    lk_error err;
    int steps;
    lk_test_swe_gen(spec, &sim);
    LK_ASSERT_OK(swe_steps_for_time(&sim, 5.0, &steps, &err), &err);
    lk_test_swe_serial(&sim, steps, &out);
    LK_ASSERT_OK(lk_stoker_solve(SWE_DEEP, SWE_SHALLOW, SWE_G, &st, &err), &err);
    const double t = steps * sim.dt;
    double e = 0.0;
    for (int i = 1; i <= sim.rows; i++) {
        double xi = (i - 0.5) * sim.dx - SWE_DAM_AT, h, u;
        if (window > 0.0 && fabs(xi) > window)
            continue;
        lk_stoker_eval(&st, xi, t, &h, &u);
        e += fabs(out.Z[swe_at(i, 1, sim.cols + 2)] - h) * sim.dx;
    }
    swe_fields_free(&out);
    swe_free(&sim);
    return e;
}

/**
 * Make @p t (allocated here, of size cols x rows) the transpose of state @p q of @p sim:
 * t(j, i) = q(i, j) with Qx and Qy swapped, ghost layers included.
 */
static inline void lk_test_swe_transpose(const swe *sim, const swe_fields *q,
                                         swe_fields *t)
{
    lk_error err;
    LK_ASSERT_OK(swe_fields_alloc(t, sim->cols, sim->rows, &err), &err);
    const int w = sim->cols + 2, tw = sim->rows + 2;
    for (int i = 0; i < sim->rows + 2; i++)
        for (int j = 0; j < sim->cols + 2; j++) {
            t->Z[swe_at(j, i, tw)] = q->Z[swe_at(i, j, w)];
            t->Qx[swe_at(j, i, tw)] = q->Qy[swe_at(i, j, w)];
            t->Qy[swe_at(j, i, tw)] = q->Qx[swe_at(i, j, w)];
        }
}

/**
 * Run GPU entry point @p fn for @p steps steps on @p sim into @p out (allocated here), with
 * the output and every device allocation poisoned; fail with the function's message if it
 * reports an error.
 */
static inline void lk_test_swe_run_gpu(swe_test_fn fn, const swe *sim, int steps,
                                       int block_x, int block_y, swe_fields *out,
                                       const char *what)
{
    lk_error err;
    lk_error_clear(&err);
    lk_test_swe_fields(sim, out);
    lk_test_swe_poison(sim, out);
    lk_poison_device_allocations(1);
    int rc = fn(sim, steps, out, block_x, block_y, &err);
    lk_poison_device_allocations(0);
    if (rc != 0)
        cr_assert_fail("%s: your GPU code returned an error: %s", what,
                       err.msg[0] ? err.msg : "(no message: fill err, e.g. with LK_CUDA_TRY)");
}

/**
 * Run @p fn on @p sim for @p steps steps with @p launch (output and device allocations
 * poisoned) and compare with the serial reference bit for bit; when @p expected_md5 is
 * given, check that hash first and run serial only to explain a mismatch.
 */
static inline void lk_test_swe_gpu_matches_serial(swe_test_fn fn, const swe *sim,
                                                  int steps, int block_x, int block_y,
                                                  const char *expected_md5, const char *what)
{
    char label[256];
    snprintf(label, sizeof label, "%s (%d x %d), %d steps, block %dx%d", what, sim->rows,
             sim->cols, steps, block_x, block_y);
    swe_fields got, expected;
    lk_test_swe_run_gpu(fn, sim, steps, block_x, block_y, &got, label);
    lk_error err;
    if (expected_md5) {
        char hex[33];
        LK_ASSERT_OK(swe_md5(sim, &got, hex, &err), &err);
        if (strcmp(hex, expected_md5) == 0) {
            swe_fields_free(&got);
            return;
        }
    }
    lk_test_swe_serial(sim, steps, &expected);
    lk_test_swe_assert_eq(sim, &expected, &got, label);
    if (expected_md5)
        cr_assert_fail("%s: the result equals the serial reference run here but not the "
                       "manifest hash %s: the serial reference itself changed", label,
                       expected_md5);
    swe_fields_free(&got);
    swe_fields_free(&expected);
}

#endif
