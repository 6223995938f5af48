/* CPU tests of the shallow-water serial program (serial.c): the oracle of labs 02 and 03,
   so its physics is pinned by invariants that break when a flux, a sign or a wall rule is
   wrong, by the Stoker dam-break solution, and by the manifest's hashes. */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "labkit/grid_io.h"
#include "labkit/manifest.h"
#include "labkit/md5.h"
#include "swe/swe_testing.h"

/* ---- the scheme, by hand ---- */

/* Three cells in a column, 20 | 10 | 10, at rest: one step worked out on paper. Cell 1
   sees its ghost (20) above and cell 2 (10) below, itself on both sides (even copies):
   Z = (10 + 20 + 20 + 20) / 4 = 17.5; Qx = -r (F(10) - F(20)) with F(h) = 4.9 h^2. */
Test(swe_scheme, one_step_by_hand)
{
    swe sim;
    lk_error err;
    LK_ASSERT_OK(swe_alloc(&sim, 3, 1, 2.0, &err), &err);
    sim.q.Z[swe_at(1, 1, 3)] = 20.0;
    sim.q.Z[swe_at(2, 1, 3)] = 10.0;
    sim.q.Z[swe_at(3, 1, 3)] = 10.0;
    LK_ASSERT_OK(swe_finish(&sim, &err), &err);
    swe_fields out;
    lk_test_swe_serial(&sim, 1, &out);
    const double r = swe_r(&sim);
    cr_assert_eq(out.Z[swe_at(1, 1, 3)], 17.5);
    cr_assert_eq(out.Z[swe_at(2, 1, 3)], 12.5);
    cr_assert_eq(out.Z[swe_at(3, 1, 3)], 10.0);
    cr_assert_float_eq(out.Qx[swe_at(1, 1, 3)], 4.9 * (400.0 - 100.0) * r, 1e-12);
    cr_assert_float_eq(out.Qx[swe_at(2, 1, 3)], 4.9 * (400.0 - 100.0) * r, 1e-12);
    cr_assert_eq(out.Qx[swe_at(3, 1, 3)], 0.0);
    for (int i = 1; i <= 3; i++)
        cr_assert_eq(out.Qy[swe_at(i, 1, 3)], 0.0);
    swe_fields_free(&out);
    swe_free(&sim);
}

/* The flux divisions skip dividing a zero numerator (a GPU slow path); every quotient must
   keep the division's bits: the sign of a zero, NaN and infinities included. */
Test(swe_scheme, skipped_zero_divisions_keep_the_bits_of_the_division)
{
    const double nums[] = {0.0, -0.0, 1.0, -3.5, 1e-300, 5e-324, INFINITY, NAN};
    const double dens[] = {2.0, -2.0, 0.0, -0.0, INFINITY, -INFINITY, NAN, 5e-324, 1e308};
    for (size_t a = 0; a < sizeof nums / sizeof nums[0]; a++)
        for (size_t b = 0; b < sizeof dens / sizeof dens[0]; b++) {
            volatile double num = nums[a], den = dens[b];
            const double want = num / den, got = swe_div(num, den);
            uint64_t w, g;
            memcpy(&w, &want, sizeof w);
            memcpy(&g, &got, sizeof g);
            cr_assert(isnan(want) ? isnan(got) : w == g,
                      "swe_div(%g, %g) = %g (bits %016" PRIx64 "), the division gives %g "
                      "(bits %016" PRIx64 ")",
                      nums[a], dens[b], got, g, want, w);
        }
}

Test(swe_scheme, lake_at_rest_stays_at_rest)
{
    swe sim;
    lk_error err;
    LK_ASSERT_OK(swe_alloc(&sim, 17, 23, 3.0, &err), &err);
    for (size_t k = 0; k < swe_cells(&sim); k++)
        sim.q.Z[k] = 7.25;
    LK_ASSERT_OK(swe_finish(&sim, &err), &err);
    swe_fields out;
    lk_test_swe_serial(&sim, 40, &out);
    lk_test_swe_assert_eq(&sim, &sim.q, &out, "lake at rest after 40 steps");
    swe_fields_free(&out);
    swe_free(&sim);
}

Test(swe_scheme, zero_steps_returns_the_initial_state)
{
    swe sim;
    swe_fields out;
    lk_test_swe_gen("bumps:9x11:4", &sim);
    lk_test_swe_serial(&sim, 0, &out);
    lk_test_swe_assert_eq(&sim, &sim.q, &out, "0 steps");
    swe_fields_free(&out);
    swe_free(&sim);
}

/* ---- invariants of the serial reference ---- */

static void check_mass(const char *spec, int steps)
{
    swe sim;
    swe_fields out;
    lk_test_swe_gen(spec, &sim);
    lk_test_swe_serial(&sim, steps, &out);
    char what[128];
    snprintf(what, sizeof what, "%s after %d steps", spec, steps);
    lk_test_swe_check_mass(&sim, &out, what);
    swe_fields_free(&out);
    swe_free(&sim);
}

Test(swe_invariants, mass_is_conserved)
{
    check_mass("dam:37x53", 300);
    check_mass("damrot:53x37", 300);
    check_mass("bumps:61x47:3", 500);
    check_mass("bumps:1x40:2", 200);
    check_mass("bumps:40x1:2", 200);
}

Test(swe_invariants, the_initial_mass_of_the_dam_is_3e6_cubic_metres)
{
    swe sim;
    lk_test_swe_gen("dam:500x500", &sim);
    double m = swe_mass(&sim, &sim.q);
    cr_assert_float_eq(m, 3.0e6, 1e-6, "mass %.17g, expected 500 (100 * 20 + 400 * 10)", m);
    swe_free(&sim);
}

static void check_uniform(const char *spec, int steps, int along_j)
{
    swe sim;
    swe_fields out;
    lk_test_swe_gen(spec, &sim);
    lk_test_swe_serial(&sim, steps, &out);
    char what[128];
    snprintf(what, sizeof what, "%s after %d steps", spec, steps);
    lk_test_swe_check_uniform(&sim, &out, along_j, what);
    swe_fields_free(&out);
    swe_free(&sim);
}

Test(swe_invariants, a_dam_uniform_along_one_axis_stays_uniform)
{
    check_uniform("dam:37x53", 200, 1);
    check_uniform("damrot:53x37", 200, 0);
    check_uniform("dam:64x3", 100, 1);
    check_uniform("damrot:1x64", 100, 0);
}

/* The rotated dam's result is the transposed dam's result with Qx and Qy swapped, bit
   for bit: the scheme treats both axes alike. */
Test(swe_invariants, transposition_symmetry_of_the_dam)
{
    swe a, b;
    swe_fields ra, rb, t;
    lk_test_swe_gen("dam:37x53", &a);
    lk_test_swe_gen("damrot:53x37", &b);
    lk_test_swe_serial(&a, 150, &ra);
    lk_test_swe_serial(&b, 150, &rb);
    lk_test_swe_transpose(&a, &ra, &t);
    lk_test_swe_assert_eq(&b, &rb, &t, "damrot:53x37 vs transposed dam:37x53, 150 steps");
    swe_fields_free(&ra);
    swe_fields_free(&rb);
    swe_fields_free(&t);
    swe_free(&a);
    swe_free(&b);
}

/* The same with water moving along both axes, where the cross fluxes Qx Qy / Z matter. */
Test(swe_invariants, transposition_symmetry_in_two_dimensions)
{
    swe a, b;
    swe_fields ra, rb, t;
    lk_error err;
    lk_test_swe_gen("bumps:41x29:5", &a);
    LK_ASSERT_OK(swe_alloc(&b, a.cols, a.rows, a.dx, &err), &err);
    lk_test_swe_transpose(&a, &a.q, &t);
    swe_fields_copy(&b, &t, &b.q);
    swe_fields_free(&t);
    LK_ASSERT_OK(swe_finish(&b, &err), &err);
    cr_assert_eq(a.dt, b.dt);
    lk_test_swe_serial(&a, 300, &ra);
    lk_test_swe_serial(&b, 300, &rb);
    lk_test_swe_transpose(&a, &ra, &t);
    lk_test_swe_assert_eq(&b, &rb, &t, "transposed bumps:41x29:5 vs bumps, 300 steps");
    double qmax = 0.0;
    for (size_t k = 0; k < swe_cells(&a); k++)
        qmax = fmax(qmax, fabs(ra.Qx[k] * ra.Qy[k]));
    cr_assert_gt(qmax, 1.0, "the bumps should make both discharges move (max |Qx Qy| %g)", qmax);
    swe_fields_free(&ra);
    swe_fields_free(&rb);
    swe_fields_free(&t);
    swe_free(&a);
    swe_free(&b);
}

Test(swe_invariants, long_runs_stay_finite_and_wet)
{
    swe sim;
    swe_fields out;
    lk_test_swe_gen("bumps:48x64:12", &sim);
    lk_test_swe_serial(&sim, 3000, &out);
    for (int i = 1; i <= sim.rows; i++)
        for (int j = 1; j <= sim.cols; j++) {
            size_t at = swe_at(i, j, sim.cols + 2);
            cr_assert(isfinite(out.Z[at]) && out.Z[at] > 5.0 && isfinite(out.Qx[at]) &&
                      isfinite(out.Qy[at]), "cell (%d, %d): Z %g, Qx %g, Qy %g after 3000 "
                      "steps: the time step is not stable", i, j, out.Z[at], out.Qx[at],
                      out.Qy[at]);
        }
    swe_fields_free(&out);
    swe_free(&sim);
}

/* ---- the Stoker dam-break solution ---- */

Test(swe_stoker, middle_state_of_the_seed_dam)
{
    lk_stoker s;
    lk_error err;
    LK_ASSERT_OK(lk_stoker_solve(20.0, 10.0, 9.8, &s, &err), &err);
    cr_assert_float_eq(s.hm, 14.5384, 1e-4, "h_m %.10g", s.hm);
    cr_assert_float_eq(s.um, 4.1273, 1e-4, "u_m %.10g", s.um);
    cr_assert_float_eq(s.shock, 13.2215, 1e-4, "shock speed %.10g", s.shock);
    /* Both sides of the Stoker equation agree, and mass crosses the shock consistently. */
    double from_right = (s.hm - 10.0) * sqrt(9.8 * (s.hm + 10.0) / (2.0 * s.hm * 10.0));
    cr_assert_float_eq(s.um, from_right, 1e-12);
    double h, u;
    lk_stoker_eval(&s, -14.0 * 5.0 - 1e-9, 5.0, &h, &u); /* just behind the rarefaction head */
    cr_assert(h == 20.0 && u == 0.0);
    lk_stoker_eval(&s, (s.um - sqrt(9.8 * s.hm)) * 5.0, 5.0, &h, &u); /* its tail */
    cr_assert_float_eq(h, s.hm, 1e-9);
    cr_assert_float_eq(u, s.um, 1e-9);
    lk_stoker_eval(&s, s.shock * 5.0 + 1e-9, 5.0, &h, &u);
    cr_assert(h == 10.0 && u == 0.0);
    cr_assert_eq(lk_stoker_solve(10.0, 20.0, 9.8, &s, &err), -1);
}

/* Lax-Friedrichs is first order and smears the shock, so the error shrinks roughly like
   dx^0.6-0.7 here; measured (m^2): 112.5 at N = 100, 73.1 at 200, 45.2 at 400. */
Test(swe_stoker, l1_error_decreases_under_refinement)
{
    double e[3];
    int n[3] = {100, 200, 400};
    for (int k = 0; k < 3; k++) {
        e[k] = lk_test_swe_stoker_l1(n[k], 0.0);
        cr_log_info("Stoker L1 error of Z at t = 5 s, N = %d: %.4f m^2", n[k], e[k]);
    }
    for (int k = 1; k < 3; k++)
        cr_assert_lt(e[k], 0.8 * e[k - 1], "L1 error %.4f at N = %d is not clearly below "
                     "%.4f at N = %d: the scheme does not converge to Stoker", e[k], n[k],
                     e[k - 1], n[k - 1]);
    cr_assert_lt(e[2], 60.0, "L1 error %.4f m^2 at N = 400 (expected about 45)", e[2]);
}

/* A dam across the diagonal direction (2, 1) is the same 1-D problem along its normal, so
   far from the walls it must converge to the same Stoker profile. This is the test that
   sees the cross fluxes: differencing Qx Qy / Z along the wrong axis (as the seed did)
   leaves the 1-D tests intact but makes this error 13% larger than the axis-aligned one. */
Test(swe_stoker, oblique_dam_matches_the_axis_aligned_one)
{
    const int n = 400;
    swe sim;
    lk_error err;
    LK_ASSERT_OK(swe_alloc(&sim, n, 2 * n, 500.0 / n, &err), &err);
    const double nx = 2.0 / sqrt(5.0), ny = 1.0 / sqrt(5.0), x0 = 250.0, y0 = 500.0;
    const int w = sim.cols + 2;
    for (int i = 1; i <= sim.rows; i++)
        for (int j = 1; j <= sim.cols; j++) {
            double x = (i - 0.5) * sim.dx - x0, y = (j - 0.5) * sim.dx - y0;
            sim.q.Z[swe_at(i, j, w)] = x * nx + y * ny < 0.0 ? 20.0 : 10.0;
        }
    LK_ASSERT_OK(swe_finish(&sim, &err), &err);
    int steps;
    LK_ASSERT_OK(swe_steps_for_time(&sim, 5.0, &steps, &err), &err);
    swe_fields out;
    lk_test_swe_serial(&sim, steps, &out);
    lk_stoker st;
    LK_ASSERT_OK(lk_stoker_solve(20.0, 10.0, SWE_G, &st, &err), &err);
    /* Mean |Z - Stoker| in a band 220 m across the dam and 200 m along it, centred. */
    double e = 0.0, area = 0.0;
    for (int i = 1; i <= sim.rows; i++)
        for (int j = 1; j <= sim.cols; j++) {
            double x = (i - 0.5) * sim.dx - x0, y = (j - 0.5) * sim.dx - y0;
            double xi = x * nx + y * ny, along = -x * ny + y * nx, h, u;
            if (fabs(xi) > 110.0 || fabs(along) > 100.0)
                continue;
            lk_stoker_eval(&st, xi, steps * sim.dt, &h, &u);
            e += fabs(out.Z[swe_at(i, j, w)] - h);
            area += 1.0;
        }
    double oblique = e / area, straight = lk_test_swe_stoker_l1(n, 110.0) / 220.0;
    cr_log_info("mean |Z - Stoker| near the dam, N = %d: oblique %.5f m, axis-aligned %.5f m",
                n, oblique, straight);
    cr_assert(fabs(oblique / straight - 1.0) < 0.03,
              "an oblique dam break differs from the axis-aligned one: mean error %.5f m vs "
              "%.5f m (ratio %.4f, allowed 1 +- 0.03): the 2-D fluxes are wrong", oblique,
              straight, oblique / straight);
    swe_fields_free(&out);
    swe_free(&sim);
}

/* ---- outputs ---- */

Test(swe_output, binary_file_md5_is_the_hash_and_text_and_png_are_written,
     .init = lk_tmpdir_make, .fini = lk_tmpdir_remove)
{
    swe sim;
    swe_fields out;
    lk_error err;
    lk_test_swe_gen("bumps:13x9:1", &sim);
    lk_test_swe_serial(&sim, 20, &out);
    char hex[33], file_hex[33];
    const char *bin = lk_tmp_path("out.bin"), *txt = lk_tmp_path("out.txt"),
               *png = lk_tmp_path("out.png");
    LK_ASSERT_OK(swe_md5(&sim, &out, hex, &err), &err);
    LK_ASSERT_OK(swe_write_binary(bin, &sim, &out, &err), &err);
    LK_ASSERT_OK(lk_md5_file(bin, file_hex, &err), &err);
    cr_assert_str_eq(hex, file_hex);
    /* The file is the interior of Z, Qx, Qy in that order. */
    double v[3 * 13 * 9];
    LK_ASSERT_OK(lk_read_binary(bin, v, 3 * 13 * 9, &err), &err);
    cr_assert_eq(v[0], out.Z[swe_at(1, 1, 11)]);
    cr_assert_eq(v[13 * 9 + 8], out.Qx[swe_at(1, 9, 11)]);
    cr_assert_eq(v[2 * 13 * 9 + 13 * 9 - 1], out.Qy[swe_at(13, 9, 11)]);
    LK_ASSERT_OK(swe_write_text(txt, &sim, &out, &err), &err);
    FILE *f = fopen(txt, "r");
    cr_assert_not_null(f);
    char line[1024];
    cr_assert_not_null(fgets(line, sizeof line, f));
    cr_assert_str_eq(line, "# Z 13 9\n");
    double first;
    cr_assert_eq(fscanf(f, "%lf", &first), 1);
    cr_assert_eq(first, out.Z[swe_at(1, 1, 11)], "the text dump does not round-trip");
    fclose(f);
    LK_ASSERT_OK(swe_write_png(png, &sim, &out, "test", &err), &err);
    LK_ASSERT_OK(lk_md5_file(png, file_hex, &err), &err);
    swe_fields_free(&out);
    swe_free(&sim);
}

Test(swe_output, the_hash_ignores_the_ghost_layer)
{
    swe sim;
    swe_fields out;
    lk_error err;
    lk_test_swe_gen("dam:6x5", &sim);
    lk_test_swe_serial(&sim, 3, &out);
    char a[33], b[33];
    LK_ASSERT_OK(swe_md5(&sim, &out, a, &err), &err);
    lk_test_swe_poison_ghosts(&sim, &out);
    LK_ASSERT_OK(swe_md5(&sim, &out, b, &err), &err);
    cr_assert_str_eq(a, b);
    out.Qy[swe_at(6, 5, 7)] = -0.0; /* a sign of zero is a different result */
    LK_ASSERT_OK(swe_md5(&sim, &out, b, &err), &err);
    cr_assert_str_neq(a, b);
    swe_fields_free(&out);
    swe_free(&sim);
}

Test(swe_output, comparison_names_the_field_the_cell_and_the_walls)
{
    swe sim;
    swe_fields a, b;
    lk_test_swe_gen("dam:6x5", &sim);
    lk_test_swe_serial(&sim, 3, &a);
    lk_test_swe_serial(&sim, 3, &b);
    b.Qx[swe_at(1, 3, 7)] += 1.0;
    b.Qy[swe_at(6, 2, 7)] = 5.0;
    char buf[4096];
    size_t n = swe_compare(&sim, &a, &b, 8, NULL, NULL, buf, sizeof buf);
    cr_assert_eq(n, 2);
    cr_assert(strstr(buf, "discharge Qx") && strstr(buf, "(1, 3)"), "%s", buf);
    cr_assert(strstr(buf, "discharge Qy") && strstr(buf, "(6, 2)"), "%s", buf);
    cr_assert(!strstr(buf, "water height Z"), "%s", buf);
    cr_assert(strstr(buf, "next to a wall"), "%s", buf);
    b.Z[swe_at(3, 3, 7)] = 0.0;
    n = swe_compare(&sim, &a, &b, 8, "again", NULL, buf, sizeof buf);
    cr_assert_eq(n, 3);
    cr_assert(strstr(buf, "again: water height Z") && !strstr(buf, "next to a wall"), "%s", buf);
    swe_fields_free(&a);
    swe_fields_free(&b);
    swe_free(&sim);
}

/* ---- the manifest's shallow-water datasets ---- */

static void check_hash(const char *name)
{
    swe sim;
    swe_fields out;
    int steps;
    char md5[33], hex[33];
    lk_error err;
    lk_test_swe_load(name, &sim, &steps, md5);
    lk_test_swe_serial(&sim, steps, &out);
    LK_ASSERT_OK(swe_md5(&sim, &out, hex, &err), &err);
    cr_expect_str_eq(hex, md5, "dataset %s: serial reference gives md5 %s after %d steps, the "
                     "manifest says %s", name, hex, steps, md5);
    swe_fields_free(&out);
    swe_free(&sim);
}

Test(swe_manifest, small_dataset_hashes)
{
    char path[4096];
    lk_manifest m;
    lk_error err;
    LK_ASSERT_OK(lk_manifest_read(lk_test_path(path, sizeof path, "datasets/MANIFEST"), &m, &err),
                 &err);
    int checked = 0;
    for (int i = 0; i < m.n; i++)
        if (strcmp(m.e[i].model, "swe") == 0 && strcmp(m.e[i].name, "swe-large") != 0 &&
            strcmp(m.e[i].name, "swe-dam-1000") != 0) {
            check_hash(m.e[i].name);
            checked++;
        }
    cr_assert_geq(checked, 10, "expected at least 10 small shallow-water datasets, found %d",
                  checked);
    lk_manifest_free(&m);
}

Test(swe_manifest, standard_dataset_hash, .timeout = 300) { check_hash("swe-dam-1000"); }
Test(swe_manifest, large_dataset_hash, .timeout = 600) { check_hash("swe-large"); }

Test(swe_manifest, unknown_or_foreign_datasets_are_explained)
{
    char manifest[4096];
    swe sim;
    lk_error err;
    lk_test_path(manifest, sizeof manifest, "datasets/MANIFEST");
    cr_assert_eq(swe_load_dataset(manifest, "swe-nope", &sim, NULL, NULL, &err), -1);
    cr_assert(strstr(err.msg, "swe-nope") && strstr(err.msg, "swe-dam-256"), "%s", err.msg);
    cr_assert_eq(swe_load_dataset(manifest, "sciddicat-tiny", &sim, NULL, NULL, &err), -1);
    cr_assert(strstr(err.msg, "not swe"), "%s", err.msg);
}
