/* CPU tests of the shallow-water model's common part (common/models/swe/swe.c): generator specs,
   initial states and time steps. The serial program's tests are in
   labs/02-coalescing/tests/test_serial.c. */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "labkit/grid_io.h"
#include "labkit/manifest.h"
#include "labkit/md5.h"
#include "swe/swe_testing.h"

/* ---- generator and parameters ---- */

Test(swe_spec, valid_specs)
{
    swe_spec s;
    lk_error err;
    LK_ASSERT_OK(swe_spec_parse("dam:256x128", &s, &err), &err);
    cr_assert(s.kind == SWE_DAM && s.rows == 256 && s.cols == 128);
    LK_ASSERT_OK(swe_spec_parse("damrot:1x200", &s, &err), &err);
    cr_assert(s.kind == SWE_DAM_ROT && s.rows == 1 && s.cols == 200);
    LK_ASSERT_OK(swe_spec_parse("bumps:37x53:0x2a", &s, &err), &err);
    cr_assert(s.kind == SWE_BUMPS && s.rows == 37 && s.cols == 53 && s.seed == 42);
}

static void expect_bad_spec(const char *spec, const char *phrase)
{
    swe_spec s;
    lk_error err;
    lk_error_clear(&err);
    cr_assert_eq(swe_spec_parse(spec, &s, &err), -1, "'%s' was accepted", spec);
    cr_assert(strstr(err.msg, phrase), "message for '%s' lacks '%s': %s", spec, phrase, err.msg);
    cr_assert(strstr(err.msg, spec), "message for '%s' does not quote it: %s", spec, err.msg);
}

/* A grid size gives the rows first; WIDTHxHEIGHT (columns first) would invite a swap. */
Test(swe_spec, size_errors_show_the_rows_first_form)
{
    expect_bad_spec("damrot:0x5", "size '0x5' is not ROWSxCOLS");
    swe_spec s;
    lk_error err;
    cr_assert_eq(swe_spec_parse("bumps:3x:1", &s, &err), -1);
    cr_assert_null(strstr(err.msg, "WIDTH"), "%s", err.msg);
}

Test(swe_spec, malformed_specs_are_explained)
{
    expect_bad_spec("lake:10x10", "unknown kind 'lake'");
    expect_bad_spec("dam", "malformed");
    expect_bad_spec("dam:10x", "size '10x' is not ROWSxCOLS");
    expect_bad_spec("dam:0x10", "each between 1 and 1000000");
    expect_bad_spec("dam:10x10:3", "has no seed");
    expect_bad_spec("bumps:10x10", "needs a seed");
    expect_bad_spec("bumps:10x10:x", "seed");
    expect_bad_spec("dam:1000000x1000000", "too many");
}

/* The thesis's case (Stramare 2012, section 5.1): 500 m along the dam axis, 20 m over the
   first 100 m, 10 m after. */
Test(swe_generator, dam_break_geometry_and_time_step)
{
    static const struct { const char *spec; int n, deep; } cases[] = {
        {"dam:1000x3", 1000, 200}, {"dam:256x5", 256, 51}, {"dam:5x7", 5, 1},
        {"dam:7x2", 7, 1}, {"dam:1x4", 1, 0}, {"dam:200x1", 200, 40}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        swe sim;
        lk_test_swe_gen(cases[c].spec, &sim);
        const int w = sim.cols + 2;
        cr_assert_eq(sim.dx, 500.0 / cases[c].n, "%s: dx %.17g", cases[c].spec, sim.dx);
        for (int i = 1; i <= sim.rows; i++)
            for (int j = 1; j <= sim.cols; j++) {
                size_t at = swe_at(i, j, w);
                double want = i <= cases[c].deep ? 20.0 : 10.0;
                cr_assert_eq(sim.q.Z[at], want, "%s: Z(%d, %d) = %g, expected %g (cell centre "
                             "%g m from the wall)", cases[c].spec, i, j, sim.q.Z[at], want,
                             (i - 0.5) * sim.dx);
                cr_assert(sim.q.Qx[at] == 0.0 && sim.q.Qy[at] == 0.0);
            }
        /* The time step: Courant number 0.4 with the fastest wave sqrt(g 20) = 14 m/s. */
        double want_dt = SWE_COURANT * sim.dx / sqrt(SWE_G * (cases[c].deep ? 20.0 : 10.0));
        cr_assert_eq(sim.dt, want_dt, "%s: dt %.17g, expected %.17g", cases[c].spec, sim.dt,
                     want_dt);
        /* The ghost layer already follows the wall rule. */
        cr_assert_eq(sim.q.Z[swe_at(0, 1, w)], sim.q.Z[swe_at(1, 1, w)]);
        cr_assert_eq(sim.q.Z[swe_at(sim.rows + 1, sim.cols, w)],
                     sim.q.Z[swe_at(sim.rows, sim.cols, w)]);
        swe_free(&sim);
    }
}

Test(swe_generator, rotated_dam_is_the_transposed_dam)
{
    swe a, b;
    swe_fields t;
    lk_test_swe_gen("dam:37x53", &a);
    lk_test_swe_gen("damrot:53x37", &b);
    cr_assert_eq(a.dx, b.dx);
    cr_assert_eq(a.dt, b.dt);
    lk_test_swe_transpose(&a, &a.q, &t);
    lk_test_swe_assert_eq(&b, &b.q, &t, "damrot:53x37 vs transposed dam:37x53 (initial)");
    swe_fields_free(&t);
    swe_free(&a);
    swe_free(&b);
}

Test(swe_generator, bumps_are_deterministic_and_differ_by_seed)
{
    swe a, b, c;
    lk_test_swe_gen("bumps:64x48:9", &a);
    lk_test_swe_gen("bumps:64x48:9", &b);
    lk_test_swe_gen("bumps:64x48:10", &c);
    lk_test_swe_assert_eq(&a, &a.q, &b.q, "same seed");
    char ha[33], hc[33];
    lk_error err;
    LK_ASSERT_OK(swe_md5(&a, &a.q, ha, &err), &err);
    LK_ASSERT_OK(swe_md5(&c, &c.q, hc, &err), &err);
    cr_assert_str_neq(ha, hc, "seeds 9 and 10 gave the same bumps");
    double zmax = 0.0;
    for (int i = 1; i <= a.rows; i++)
        for (int j = 1; j <= a.cols; j++) {
            double z = a.q.Z[swe_at(i, j, a.cols + 2)];
            cr_assert(z >= 10.0 && z <= 40.0, "Z(%d, %d) = %g", i, j, z);
            zmax = fmax(zmax, z);
        }
    cr_assert_gt(zmax, 11.0, "no bump rises above the lake");
    cr_assert_eq(a.dx, 500.0 / 64);
    swe_free(&a);
    swe_free(&b);
    swe_free(&c);
}

Test(swe_generator, dry_or_invalid_cells_are_refused)
{
    swe sim;
    lk_error err;
    LK_ASSERT_OK(swe_alloc(&sim, 3, 4, 1.0, &err), &err);
    for (size_t k = 0; k < swe_cells(&sim); k++)
        sim.q.Z[k] = 1.0;
    sim.q.Z[swe_at(2, 3, 6)] = 0.0;
    cr_assert_eq(swe_finish(&sim, &err), -1);
    cr_assert(strstr(err.msg, "(2, 3)") && strstr(err.msg, "> 0"), "%s", err.msg);
    sim.q.Z[swe_at(2, 3, 6)] = NAN;
    cr_assert_eq(swe_finish(&sim, &err), -1);
    cr_assert(strstr(err.msg, "not finite"), "%s", err.msg);
    swe_free(&sim);
}

Test(swe_generator, steps_for_a_simulated_time)
{
    swe sim;
    lk_error err;
    int steps;
    lk_test_swe_gen("dam:1000x4", &sim);
    LK_ASSERT_OK(swe_steps_for_time(&sim, 5.0, &steps, &err), &err);
    cr_assert_eq(steps, 350, "5 s at dt = 0.4 * 0.5 / 14 s: %d steps", steps);
    cr_assert_geq(steps * sim.dt, 5.0);
    cr_assert_lt((steps - 1) * sim.dt, 5.0);
    LK_ASSERT_OK(swe_steps_for_time(&sim, 0.0, &steps, &err), &err);
    cr_assert_eq(steps, 0);
    cr_assert_eq(swe_steps_for_time(&sim, -1.0, &steps, &err), -1);
    swe_free(&sim);
}
