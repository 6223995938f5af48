#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "labkit/rng.h"
#include "sciddicat/sciddicat.h"
#include "labkit/testing.h"

Test(sciddicat, spec_parses_and_rejects_malformed_specs)
{
    sciddicat_spec s;
    lk_error err;
    LK_ASSERT_OK(sciddicat_spec_parse("plane:97x131:0x10", &s, &err), &err);
    cr_assert_eq(s.terrain, LK_TERRAIN_PLANE);
    cr_assert_eq(s.rows, 97);
    cr_assert_eq(s.cols, 131);
    cr_assert_eq(s.seed, 16);
    const char *bad[] = {"valley", "valley:3x3", "hill:3x3:1", "valley:0x3:1", "valley:3x:1",
                         "valley:3x3:-1", "valley:3x3:1:2", ""};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        cr_assert_eq(sciddicat_spec_parse(bad[i], &s, &err), -1, "accepted '%s'", bad[i]);
        cr_assert(strstr(err.msg, bad[i]) || !bad[i][0], "message lacks the spec: %s", err.msg);
    }
}

/* `--gen valley:0x5:1` once answered "give WIDTHxHEIGHT": the spec gives rows first. */
Test(sciddicat, spec_size_errors_show_the_rows_first_form)
{
    sciddicat_spec s;
    lk_error err;
    const char *bad[] = {"valley:0x5:1", "plane:5x:1", "dome:5:1"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        cr_assert_eq(sciddicat_spec_parse(bad[i], &s, &err), -1, "accepted '%s'", bad[i]);
        cr_assert(strstr(err.msg, "is not ROWSxCOLS") && strstr(err.msg, "e.g. 610x496"),
                  "%s", err.msg);
        cr_assert_null(strstr(err.msg, "WIDTH"), "%s", err.msg);
    }
}

Test(sciddicat, generator_is_deterministic_and_seed_dependent)
{
    sciddicat_spec s = {LK_TERRAIN_VALLEY, 40, 30, 5};
    double a[1200], b[1200], sa[1200], sb[1200];
    lk_grid_header h;
    lk_error err;
    LK_ASSERT_OK(sciddicat_generate(&s, &h, a, sa, &err), &err);
    LK_ASSERT_OK(sciddicat_generate(&s, &h, b, sb, &err), &err);
    cr_assert_eq(memcmp(a, b, sizeof a), 0);
    cr_assert_eq(memcmp(sa, sb, sizeof sa), 0);
    cr_assert_eq(h.nrows, 40);
    cr_assert_eq(h.ncols, 30);
    s.seed = 6;
    LK_ASSERT_OK(sciddicat_generate(&s, &h, b, sb, &err), &err);
    cr_assert_neq(memcmp(a, b, sizeof a), 0, "another seed must give another terrain");
    int wet = 0;
    for (int k = 0; k < 1200; k++) {
        cr_assert_geq(sa[k], 0.0);
        wet += sa[k] > 0;
    }
    cr_assert_gt(wet, 0, "the source blob is empty");
}

static double row_mean(const double *z, int i, int cols)
{
    double s = 0;
    for (int j = 0; j < cols; j++)
        s += z[sciddicat_at(i, j, cols)];
    return s / cols;
}

/* The valley falls southwards into a basin whose far side rises again, so debris comes to
   rest inside the grid. */
Test(sciddicat, valley_descends_into_a_basin_and_source_avoids_the_border)
{
    sciddicat_spec s = {LK_TERRAIN_VALLEY, 100, 60, 1};
    double *z = malloc(6000 * sizeof *z), *src = malloc(6000 * sizeof *src);
    lk_grid_header h;
    lk_error err;
    LK_ASSERT_OK(sciddicat_generate(&s, &h, z, src, &err), &err);
    cr_assert_gt(row_mean(z, 0, 60), row_mean(z, 60, 60) + 20.0, "the valley must descend");
    cr_assert_gt(row_mean(z, 99, 60), row_mean(z, 73, 60) + 5.0, "the basin must rise again");
    for (int i = 0; i < 100; i++)
        for (int j = 0; j < 60; j++)
            if (i == 0 || j == 0 || i == 99 || j == 59)
                cr_assert_eq(src[sciddicat_at(i, j, 60)], 0.0, "source on border (%d,%d)", i, j);
    free(z);
    free(src);
}


#define HEADER "ncols 3\nnrows 3\nxllcorner 0\nyllcorner 0\ncellsize 10\nNODATA_value -9999\n"

Test(sciddicat, load_applies_initialisation, .init = lk_tmpdir_make, .fini = lk_tmpdir_remove)
{
    const char *hdr = lk_tmp_put("h.txt", HEADER);
    const char *dem = lk_tmp_put("d.txt", "5 5 5\n5 9 5\n5 5 5\n");
    const char *src = lk_tmp_put("s.txt", "0 0 0\n0 2 0\n0 0 0\n");
    sciddicat sim;
    lk_error err;
    LK_ASSERT_OK(sciddicat_load(hdr, dem, src, &sim, &err), &err);
    cr_assert_eq(sim.z[4], 7.0);
    cr_assert_eq(sim.h0[4], 2.0);
    cr_assert_eq(sim.z[0], 5.0);
    sciddicat_free(&sim);
}

Test(sciddicat, negative_source_thickness_is_rejected, .init = lk_tmpdir_make, .fini = lk_tmpdir_remove)
{
    const char *hdr = lk_tmp_put("h.txt", HEADER);
    const char *dem = lk_tmp_put("d.txt", "5 5 5\n5 9 5\n5 5 5\n");
    const char *src = lk_tmp_put("s.txt", "0 0 0\n0 -2 0\n0 0 0\n");
    sciddicat sim;
    lk_error err;
    cr_assert_eq(sciddicat_load(hdr, dem, src, &sim, &err), -1);
    cr_assert(strstr(err.msg, src) && strstr(err.msg, "row 1, col 1") && strstr(err.msg, ">= 0"),
              "%s", err.msg);
}

Test(sciddicat, asc_grids_of_different_sizes_are_rejected, .init = lk_tmpdir_make, .fini = lk_tmpdir_remove)
{
    const char *dem = lk_tmp_put("d.asc", HEADER "5 5 5\n5 9 5\n5 5 5\n");
    const char *src = lk_tmp_put("s.asc", "ncols 2\nnrows 3\nxllcorner 0\nyllcorner 0\ncellsize 10\n"
                                   "0 0\n0 1\n0 0\n");
    sciddicat sim;
    lk_error err;
    cr_assert_eq(sciddicat_load_asc(dem, src, &sim, &err), -1);
    cr_assert(strstr(err.msg, "same grid") && strstr(err.msg, src), "%s", err.msg);
}

Test(sciddicat, unknown_dataset_lists_the_known_ones)
{
    char manifest[4096];
    sciddicat sim;
    lk_error err;
    lk_test_path(manifest, sizeof manifest, "datasets/MANIFEST");
    cr_assert_eq(sciddicat_load_dataset(manifest, "no-such", &sim, NULL, NULL, &err), -1);
    cr_assert(strstr(err.msg, "no dataset named 'no-such'") && strstr(err.msg, "sciddicat-tiny"),
              "%s", err.msg);
}

Test(sciddicat, absurd_altitudes_and_thickness_totals_are_rejected, .init = lk_tmpdir_make,
     .fini = lk_tmpdir_remove)
{
    const char *hdr = lk_tmp_put("h.txt", HEADER);
    const char *dem = lk_tmp_put("d.txt", "5 5 5\n5 2e10 5\n5 5 5\n");
    const char *src = lk_tmp_put("s.txt", "0 0 0\n0 2 0\n0 0 0\n");
    sciddicat sim;
    lk_error err;
    cr_assert_eq(sciddicat_load(hdr, dem, src, &sim, &err), -1);
    cr_assert(strstr(err.msg, dem) && strstr(err.msg, "row 1, col 1") && strstr(err.msg, "metres"),
              "%s", err.msg);
    const char *dem_ok = lk_tmp_put("d2.txt", "5 5 5\n5 9 5\n5 5 5\n");
    const char *deep = lk_tmp_put("s2.txt", "0 0 0\n0 6e9 0\n0 6e9 0\n");
    cr_assert_eq(sciddicat_load(hdr, dem_ok, deep, &sim, &err), -1);
    cr_assert(strstr(err.msg, "add up to") && strstr(err.msg, "at most"), "%s", err.msg);
}

/* The outflows of the reference's flows process at a cell of thickness h whose neighbours
   have levels u[1..4] and altitude z0; returns the bitmask of directions that get one. */
static unsigned flows_of(double z0, double h, const double u[4])
{
    double z[9] = {0}, hh[9] = {0}, f[36] = {0};
    const int at[4] = {1, 3, 5, 7}; /* N, W, E, S in a 3x3 window */
    z[4] = z0;
    hh[4] = h;
    for (int k = 0; k < 4; k++)
        z[at[k]] = u[k]; /* neighbour thickness 0: its level is its altitude */
    sciddicat_flows_cell(1, 1, 3, 3, z, hh, f, SCIDDICAT_P_R, SCIDDICAT_P_EPSILON);
    unsigned mask = 0;
    for (int k = 0; k < 4; k++)
        mask |= (f[sciddicat_flow_at(k, 1, 1, 3, 3)] != 0.0) << k;
    return mask;
}

/* Why the skip test is h <= p_epsilon / 2 and not m <= 0: with m = 0 and near-equal levels
   (a pond surface), the reference sends outflows of one rounding error. */
Test(sciddicat, m_zero_can_flow_but_still_cells_never_do)
{
    const double level = 0x1.d157df61a2afcp+10, below = 0x1.d157df61a2afbp+10;
    const double u[4] = {below, below, below, level};
    const double eps = SCIDDICAT_P_EPSILON;
    cr_assert_neq(flows_of(level - eps, eps, u), 0u,
                  "the m = 0 counterexample no longer flows: the comment of "
                  "sciddicat_is_still() needs another one");
    cr_assert(!sciddicat_is_still(eps));

    /* Still cells: random near-ties around levels of every magnitude the loaders accept. */
    lk_rng r;
    lk_rng_seed(&r, 13);
    for (int t = 0; t < 2000000; t++) {
        const double scale = ldexp(1.0, (int)lk_rng_below(&r, 37)); /* 1 m .. 6.9e10 m */
        const double base = (lk_rng_uniform(&r) - 0.25) * scale;
        double v[4];
        for (int k = 0; k < 4; k++) {
            const int kind = (int)lk_rng_below(&r, 3);
            v[k] = kind == 0 ? base : kind == 1 ? nextafter(base, -INFINITY)
                                                : base + (lk_rng_uniform(&r) - 0.5) * 1e-3;
        }
        const double h = lk_rng_below(&r, 2) ? 0.5 * eps : lk_rng_uniform(&r) * 0.5 * eps;
        const double z0 = lk_rng_below(&r, 2) ? base - eps : v[lk_rng_below(&r, 4)] - eps;
        cr_assert(sciddicat_is_still(h));
        cr_assert_eq(flows_of(z0, h, v), 0u, "still cell h=%a z=%a flows to %a %a %a %a", h,
                     z0, v[0], v[1], v[2], v[3]);
    }
}

/* The wet dataset's terrain: debris on every interior cell, none on the border. */
Test(sciddicat, flood_covers_every_interior_cell)
{
    sciddicat_spec s;
    lk_error err;
    LK_ASSERT_OK(sciddicat_spec_parse("flood:61x47:3", &s, &err), &err);
    cr_assert_eq(s.terrain, LK_TERRAIN_FLOOD);
    cr_assert_str_eq(sciddicat_terrain_name(s.terrain), "flood");
    sciddicat sim;
    LK_ASSERT_OK(sciddicat_load_generated(&s, &sim, &err), &err);
    for (int i = 0; i < sim.rows; i++)
        for (int j = 0; j < sim.cols; j++) {
            const double h = sim.h0[sciddicat_at(i, j, sim.cols)];
            const int border = i == 0 || j == 0 || i == sim.rows - 1 || j == sim.cols - 1;
            if (border)
                cr_assert_eq(h, 0.0, "debris on border cell (%d, %d)", i, j);
            else
                cr_assert(h >= 0.5 && h <= 1.5 && !sciddicat_is_still(h),
                          "cell (%d, %d) has %g m", i, j, h);
        }
    sciddicat_free(&sim);
}
