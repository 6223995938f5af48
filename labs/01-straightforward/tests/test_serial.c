/* CPU tests of the SciddicaT serial reference: the oracle every GPU test trusts. */
#include <math.h>
#include <string.h>

#include "labkit/rng.h"

#include "sciddicat/sciddicat_testing.h"

static double total(const double *h, size_t n)
{
    double s = 0.0;
    for (size_t i = 0; i < n; i++)
        s += h[i];
    return s;
}

/* Thickness is conserved: what is on the grid plus what left through the border. */
static void check_mass_balance(const char *name, int must_reach_border)
{
    sciddicat sim;
    int steps;
    lk_error err;
    lk_test_load_dataset(name, &sim, &steps, NULL);
    size_t n = (size_t)sim.rows * sim.cols;
    double *h = malloc(n * sizeof *h), lost;
    LK_ASSERT_OK(sciddicat_serial(&sim, steps, h, &lost, &err), &err);
    double before = total(sim.h0, n), after = total(h, n);
    cr_assert_gt(before, 0.0, "%s has no debris", name);
    cr_assert_leq(fabs(after + lost - before), 1e-9 * before,
                  "%s: mass not conserved after %d steps: before %.17g, after %.17g + lost "
                  "%.17g (difference %.3g)", name, steps, before, after, lost,
                  after + lost - before);
    if (must_reach_border)
        cr_assert_gt(lost, 1e-3 * before, "%s: the flow should leave through the border "
                     "within %d steps, but only %.3g of %.3g left", name, steps, lost, before);
    for (size_t i = 0; i < n; i++)
        cr_assert_geq(h[i], 0.0, "%s: negative thickness %.17g at cell %zu", name, h[i], i);
    free(h);
    sciddicat_free(&sim);
}

Test(serial, mass_balance_valley) { check_mass_balance("sciddicat-odd", 0); }
Test(serial, mass_balance_and_outflow_on_border_reaching_plane)
{
    check_mass_balance("sciddicat-border", 1);
}
Test(serial, mass_balance_thin_strips)
{
    check_mass_balance("sciddicat-thin-rows", 1);
    check_mass_balance("sciddicat-thin-cols", 0);
}

/* A 3x3 grid with a 1 m body on flat ground: every quantity can be worked out by hand.
   After init the centre's surface is 0; m = 0.999, u = {0.001, 0, 0, 0, 0}; the average
   is 0.2 and no neighbour is eliminated, so each outflow is 0.1 and 0.4 leaves the grid. */
Test(serial, one_step_on_a_bump_matches_the_hand_computation)
{
    sciddicat sim = {.rows = 3, .cols = 3};
    double z[9] = {0, 0, 0, 0, 1, 0, 0, 0, 0}, h0[9] = {0, 0, 0, 0, 1, 0, 0, 0, 0};
    sim.z = z;
    sim.h0 = h0;
    z[4] -= h0[4]; /* the initialisation the loaders apply */
    double h[9], lost;
    lk_error err;
    LK_ASSERT_OK(sciddicat_serial(&sim, 1, h, &lost, &err), &err);
    cr_assert_float_eq(h[4], 0.6, 1e-15, "centre thickness %.17g, expected 0.6", h[4]);
    cr_assert_float_eq(lost, 0.4, 1e-15, "lost %.17g, expected 0.4", lost);
    for (int k = 0; k < 9; k++)
        if (k != 4)
            cr_assert_eq(h[k], 0.0, "border cell %d changed to %.17g", k, h[k]);
}

/* The course subtracts the source thickness from the DEM on interior cells only. */
Test(serial, initialisation_lowers_wet_interior_cells_only)
{
    char dir[4096];
    lk_test_path(dir, sizeof dir, "datasets/sciddicat/sciddicat-tiny");
    char header[4200], dem[4200], source[4200];
    snprintf(header, sizeof header, "%s_header.txt", dir);
    snprintf(dem, sizeof dem, "%s_dem.txt", dir);
    snprintf(source, sizeof source, "%s_source.txt", dir);
    sciddicat sim;
    lk_error err;
    LK_ASSERT_OK(sciddicat_load(header, dem, source, &sim, &err), &err);
    double *raw = malloc((size_t)sim.rows * sim.cols * sizeof *raw);
    LK_ASSERT_OK(lk_read_body(dem, sim.rows, sim.cols, raw, &err), &err);
    int lowered = 0;
    for (int i = 0; i < sim.rows; i++)
        for (int j = 0; j < sim.cols; j++) {
            size_t at = sciddicat_at(i, j, sim.cols);
            int interior = i > 0 && j > 0 && i < sim.rows - 1 && j < sim.cols - 1;
            double want = interior && sim.h0[at] > 0 ? raw[at] - sim.h0[at] : raw[at];
            cr_assert_eq(sim.z[at], want, "z(%d,%d) = %.17g, expected %.17g", i, j, sim.z[at], want);
            lowered += sim.z[at] != raw[at];
        }
    cr_assert_gt(lowered, 0, "the tiny dataset should have a debris source");
    free(raw);
    sciddicat_free(&sim);
}

Test(serial, zero_steps_returns_the_initial_thickness)
{
    sciddicat sim;
    lk_error err;
    lk_test_load_dataset("sciddicat-tiny", &sim, NULL, NULL);
    size_t n = (size_t)sim.rows * sim.cols;
    double *h = malloc(n * sizeof *h);
    LK_ASSERT_OK(sciddicat_serial(&sim, 0, h, NULL, &err), &err);
    lk_assert_grid_eq(sim.h0, h, sim.rows, sim.cols, "0 steps");
    free(h);
    sciddicat_free(&sim);
}

/* serial.c writes the arithmetic out (porting it is lab 01's lesson); labs 04 and 07 use the
   shared cell functions of sciddicat/sciddicat.h. Both must be one model: a step of each on
   random states, dry, wet and tied cells included, gives the same bits. */
Test(serial, the_written_out_step_equals_the_shared_cell_functions)
{
    const int rows = 23, cols = 17;
    const size_t n = (size_t)rows * cols;
    double z[23 * 17], h0[23 * 17], h_serial[23 * 17], h_cells[23 * 17];
    double *Sf = calloc(4 * n, sizeof *Sf);
    lk_rng rng;
    lk_rng_seed(&rng, 2026);
    for (int trial = 0; trial < 50; trial++) {
        for (size_t k = 0; k < n; k++) {
            z[k] = (double)lk_rng_below(&rng, 4) + lk_rng_uniform(&rng);
            /* a third dry, some at exactly epsilon, the rest wet */
            unsigned kind = lk_rng_below(&rng, 3);
            h0[k] = kind == 0 ? 0.0 : kind == 1 ? SCIDDICAT_P_EPSILON : lk_rng_uniform(&rng);
        }
        sciddicat sim = {.rows = rows, .cols = cols, .z = z, .h0 = h0};
        lk_error err;
        LK_ASSERT_OK(sciddicat_serial(&sim, 1, h_serial, NULL, &err), &err);
        memcpy(h_cells, h0, sizeof h0);
        memset(Sf, 0, 4 * n * sizeof *Sf);
        for (int i = 1; i < rows - 1; i++)
            for (int j = 1; j < cols - 1; j++)
                sciddicat_flows_cell(i, j, rows, cols, z, h_cells, Sf, SCIDDICAT_P_R,
                                     SCIDDICAT_P_EPSILON);
        for (int i = 1; i < rows - 1; i++)
            for (int j = 1; j < cols - 1; j++)
                h_cells[sciddicat_at(i, j, cols)] =
                    sciddicat_width_cell(i, j, rows, cols, h_cells, Sf);
        lk_assert_grid_eq(h_cells, h_serial, rows, cols, "serial.c vs sciddicat/sciddicat.h");
    }
    free(Sf);
}
