/* CPU tests of lab 05: the serial program's physics (an exact solution of the Euler map,
   symmetries, the fixed ends), the datasets, the tile geometry of lab.h that the given
   loop and your kernels share, and the given code's option checks. */
#include "given.h"
#include "labkit/testing.h"
#include "vstring/vstring.h"

#define EPS 0x1p-53 /* unit roundoff of double */

static double *serial_of(const vstring *sim, int steps)
{
    double *y = malloc(vstring_components(sim) * sizeof *y);
    lk_error err;
    LK_ASSERT_OK(vstring_serial(sim, steps, y, &err), &err);
    return y;
}

static vstring generated(vstring_kind kind, int n, unsigned long long seed)
{
    vstring_spec spec = {kind, n, seed};
    vstring sim;
    lk_error err;
    LK_ASSERT_OK(vstring_generate(&spec, &sim, &err), &err);
    return sim;
}

/* Sine mode q of N points, S steps: the state stays (a_S, b_S) * sin(theta (p + 1)),
   theta = q pi / (N + 1), with (a_S, b_S) = M^S (1, 0), M = [[1, h], [-h w^2, 1]],
   w^2 = 4 K^2 sin^2(theta / 2) (mode q of the second difference with fixed ends, derived for
   the kit; Kulbe 2012 states no modes). The exact values are computed in long double
   (64-bit mantissa, 2^11 times finer than double).
   Tolerance. Each step rounds each component at most 4 times (u: h v, +; v: -2u exact,
   -, +, h *, +), each time by at most EPS times a value of size <= 4A, where A bounds |a|
   and |b| (|a| <= g, |b| <= w g <= 2g, g = (1 + 4 h^2)^(S/2) the Euler growth): at most
   16 EPS A per step. The map multiplies older errors by at most sqrt(1 + 4 h^2) = 1 +
   2e-6 per step, and the initial state carries the generator's own error e0 (measured):
   |error| <= g (e0 + 16 S EPS A). */
static void check_sine_mode(int n, int q, int steps)
{
    vstring sim = generated(VSTRING_SINE, n, (unsigned long long)(q - 1));
    double *y = serial_of(&sim, steps);
    const long double h = VSTRING_H, pi = 3.141592653589793238462643383279502884L;
    const long double theta = q * pi / (n + 1), w2 = 4 * VSTRING_K2 * powl(sinl(theta / 2), 2);
    long double a = 1, b = 0;
    for (int s = 0; s < steps; s++) {
        long double an = a + h * b, bn = b - h * w2 * a;
        a = an;
        b = bn;
    }
    double e0 = 0.0;
    for (int p = 0; p < n; p++)
        e0 = fmax(e0, fabs(sim.y0[2 * p] - (double)sinl(theta * (p + 1))));
    const double g = pow(1.0 + 4.0 * VSTRING_H * VSTRING_H, steps / 2.0), A = 2.0 * g;
    const double tol = g * (e0 + 16.0 * steps * EPS * A);
    double worst = 0.0;
    int at = -1;
    for (int p = 0; p < n; p++) {
        const long double s = sinl(theta * (p + 1));
        double du = fabs(y[2 * p] - (double)(a * s)), dv = fabs(y[2 * p + 1] - (double)(b * s));
        if (fmax(du, dv) > worst)
            worst = fmax(du, dv), at = p;
    }
    cr_expect_leq(worst, tol, "sine mode %d of %d points after %d steps: point %d is %.3g off "
                  "the exact M^S solution, the derived tolerance is %.3g", q, n, steps, at,
                  worst, tol);
    /* The bound is not vacuous: the mode really moved. */
    cr_expect_gt(fabsl(1 - a) + fabsl(b), 1000 * tol, "the test moved too little to mean anything");
    free(y);
    vstring_free(&sim);
}

Test(physics, sine_mode_1_of_1_point) { check_sine_mode(1, 1, 500); }
Test(physics, sine_mode_1_of_100_points) { check_sine_mode(100, 1, 2000); }
Test(physics, sine_mode_7_of_101_points) { check_sine_mode(101, 7, 1500); }
Test(physics, sine_mode_high_of_64_points) { check_sine_mode(64, 63, 777); }

/* The map is linear, and negation is exact in IEEE arithmetic: -y0 gives exactly -y. */
Test(physics, negated_start_gives_the_negated_state_bit_for_bit)
{
    vstring sim = generated(VSTRING_RANDOM, 513, 5);
    double *y = serial_of(&sim, 211);
    for (size_t k = 0; k < vstring_components(&sim); k++)
        sim.y0[k] = -sim.y0[k];
    double *z = serial_of(&sim, 211);
    for (size_t k = 0; k < vstring_components(&sim); k++)
        cr_assert(z[k] == -y[k], "component %zu: %.17g, expected %.17g", k, z[k], -y[k]);
    free(y);
    free(z);
    vstring_free(&sim);
}

/* Mirror symmetry: the string reversed end to end evolves as the reversed string. The sums
   u_{p-1} - 2u_p + u_{p+1} are added in the other order, so equal up to rounding: the same
   16 EPS A per step as above, A <= 2 g max|y0|. */
Test(physics, mirrored_start_gives_the_mirrored_state)
{
    const int n = 300, steps = 400;
    vstring sim = generated(VSTRING_RANDOM, n, 9);
    double *y = serial_of(&sim, steps);
    for (int p = 0; p < n / 2; p++)
        for (int c = 0; c < 2; c++) {
            double t = sim.y0[2 * p + c];
            sim.y0[2 * p + c] = sim.y0[2 * (n - 1 - p) + c];
            sim.y0[2 * (n - 1 - p) + c] = t;
        }
    double *z = serial_of(&sim, steps);
    const double g = pow(1.0 + 4.0 * VSTRING_H * VSTRING_H, steps / 2.0);
    const double tol = g * 16.0 * steps * EPS * 2.0 * g * 4.0; /* |y0| < 1, |v| grows to <= 2 + 2 */
    for (int p = 0; p < n; p++)
        for (int c = 0; c < 2; c++)
            cr_assert_leq(fabs(z[2 * p + c] - y[2 * (n - 1 - p) + c]), tol,
                          "point %d (%s): %.17g, mirror %.17g", p, c ? "v" : "u", z[2 * p + c],
                          y[2 * (n - 1 - p) + c]);
    free(y);
    free(z);
    vstring_free(&sim);
}

/* The fixed ends: one step of a state with only the end points displaced, by hand. */
Test(physics, fixed_ends_read_zero_beyond_the_string)
{
    vstring sim = generated(VSTRING_SINE, 5, 0);
    memset(sim.y0, 0, 10 * sizeof(double));
    sim.y0[0] = 0.5;  /* u_0 */
    sim.y0[1] = 0.25; /* v_0 */
    sim.y0[8] = -0.75; /* u_4 */
    double *y = serial_of(&sim, 1);
    const double h = VSTRING_H;
    cr_expect(y[0] == 0.5 + h * 0.25);
    cr_expect(y[1] == 0.25 + h * (VSTRING_K2 * (0.0 - 2.0 * 0.5 + 0.0)), "v_0 must see u_{-1} = 0");
    cr_expect(y[3] == 0.0 + h * (VSTRING_K2 * (0.5 - 0.0 + 0.0)), "v_1 sees u_0");
    cr_expect(y[7] == 0.0 + h * (VSTRING_K2 * (0.0 - 0.0 + -0.75)), "v_3 sees u_4");
    cr_expect(y[9] == 0.0 + h * (VSTRING_K2 * (0.0 - 2.0 * -0.75 + 0.0)), "v_4 must see u_5 = 0");
    for (int k = 4; k <= 6; k += 2)
        cr_expect(y[k] == 0.0, "u of an untouched point moved");
    free(y);
    vstring_free(&sim);
}

Test(physics, one_point_string_oscillates_between_its_fixed_ends)
{
    vstring sim = generated(VSTRING_PLUCK, 1, 3);
    cr_assert(sim.y0[0] == 1.0 && sim.y0[1] == 0.0, "a one-point pluck is u = 1, v = 0");
    double *y = serial_of(&sim, 2);
    const double h = VSTRING_H, u1 = 1.0 + h * 0.0, v1 = 0.0 + h * (VSTRING_K2 * (0.0 - 2.0 * 1.0 + 0.0));
    cr_expect(y[0] == u1 + h * v1);
    cr_expect(y[1] == v1 + h * (VSTRING_K2 * (0.0 - 2.0 * u1 + 0.0)));
    free(y);
    vstring_free(&sim);
}

/* The contract the kernels rely on: the serial reference is vstring_point_step applied
   to every point, bit for bit. */
Test(physics, serial_equals_the_shared_point_step_bit_for_bit)
{
    const int n = 97, steps = 13;
    vstring sim = generated(VSTRING_RANDOM, n, 4);
    double *y = serial_of(&sim, steps);
    double *a = malloc(2 * n * sizeof *a), *b = malloc(2 * n * sizeof *b);
    memcpy(a, sim.y0, 2 * n * sizeof *a);
    for (int s = 0; s < steps; s++) {
        for (int p = 0; p < n; p++)
            vstring_point_step(p > 0 ? a[2 * p - 2] : 0.0, a[2 * p], p < n - 1 ? a[2 * p + 2] : 0.0,
                               a[2 * p + 1], &b[2 * p], &b[2 * p + 1]);
        double *t = a;
        a = b;
        b = t;
    }
    lk_assert_grid_eq(y, a, 1, 2 * n, "vstring_point_step loop");
    free(a);
    free(b);
    free(y);
    vstring_free(&sim);
}

Test(physics, zero_steps_is_the_initial_state)
{
    vstring sim = generated(VSTRING_RANDOM, 11, 1);
    double *y = serial_of(&sim, 0);
    lk_assert_grid_eq(sim.y0, y, 1, 22, "0 steps");
    free(y);
    vstring_free(&sim);
}

/* ---- datasets ------------------------------------------------------------------------ */

static void check_manifest_hash(const char *name)
{
    char manifest[4096], md5[33], hex[33];
    int steps;
    vstring sim;
    lk_error err;
    lk_test_path(manifest, sizeof manifest, "datasets/MANIFEST");
    LK_ASSERT_OK(vstring_load_dataset(manifest, name, &sim, &steps, md5, &err), &err);
    double *y = serial_of(&sim, steps);
    LK_ASSERT_OK(vstring_md5(y, sim.n, hex, &err), &err);
    cr_expect_str_eq(hex, md5, "dataset %s: the serial reference gives md5 %s after %d steps, "
                     "the manifest says %s", name, hex, steps, md5);
    free(y);
    vstring_free(&sim);
}

Test(datasets, small_string_hashes)
{
    check_manifest_hash("string-pluck-1");
    check_manifest_hash("string-sine-tiny");
    check_manifest_hash("string-pluck-odd");
    check_manifest_hash("string-random-odd");
    check_manifest_hash("string-random-40k");
}

Test(datasets, bad_specs_are_refused_with_the_form)
{
    static const char *bad[][2] = {{"pluck:2x10:1", "the string is 1-D"},
                                   {"pluck:1x10", "malformed"},
                                   {"wave:1x10:1", "unknown kind 'wave'"},
                                   {"random:1x0:1", "mass points N"},
                                   {"sine:1x600000000:1", "mass points N"},
                                   {"sine:10:1", "not ROWSxCOLS"}};
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        vstring_spec spec;
        lk_error err;
        cr_expect_eq(vstring_spec_parse(bad[k][0], &spec, &err), -1, "%s was accepted", bad[k][0]);
        cr_expect(strstr(err.msg, bad[k][1]), "%s: the message lacks '%s': %s", bad[k][0],
                  bad[k][1], err.msg);
    }
}

/* ---- the tile geometry of lab.h ------------------------------------------------------- */

/* Every point of every level 1..steps is owned by exactly one tile of the rows the given
   loop launches, and lab05_tiles_in_row lists every tile that owns a point. */
static void check_tiling(int n, int steps, int W, int H)
{
    unsigned char *owners = calloc((size_t)n * (steps + 1), 1);
    const long P = lab05_period(W, H);
    for (int r = 0; r < lab05_rows(steps, H); r++) {
        const long tiles = lab05_tiles_in_row(n, r, W, H);
        for (long i = -2; i < tiles + 2; i++) {
            const long m = lab05_tile_left(r, i, W, H);
            for (long t = (long)r * H - H + 1; t <= (long)r * H + H; t++) {
                if (t < 1 || t > steps)
                    continue;
                const long d = labs(t - (long)r * H);
                for (long x = m + d; x < m + W - d; x++) {
                    if (x < 0 || x >= n)
                        continue;
                    cr_assert(i >= 0 && i < tiles, "n %d, %dx%d: tile %ld of row %d owns point "
                              "%ld at level %ld but is not among the %ld tiles of the row", n,
                              W, H, i, r, x, t, tiles);
                    owners[t * (size_t)n + x]++;
                }
            }
        }
        cr_assert_eq(lab05_tile_left(r, 1, W, H) - lab05_tile_left(r, 0, W, H), P);
    }
    for (int t = 1; t <= steps; t++)
        for (int x = 0; x < n; x++)
            cr_assert_eq(owners[t * (size_t)n + x], 1, "n %d, steps %d, tile %dx%d: point %d "
                         "of level %d has %d owners", n, steps, W, H, x, t,
                         owners[t * (size_t)n + x]);
    free(owners);
}

Test(geometry, tiles_cover_every_point_once)
{
    static const int tiles[][2] = {{2, 1}, {4, 2}, {8, 4}, {128, 64}, {9, 3}, {10, 1}, {512, 64}};
    static const int ns[] = {1, 2, 7, 100, 1001};
    static const int steps[] = {1, 3, 64, 65, 129};
    for (size_t a = 0; a < sizeof tiles / sizeof *tiles; a++)
        for (size_t b = 0; b < sizeof ns / sizeof *ns; b++)
            for (size_t c = 0; c < sizeof steps / sizeof *steps; c++)
                check_tiling(ns[b], steps[c], tiles[a][0], tiles[a][1]);
}

Test(geometry, edge_records_fit_and_do_not_overlap)
{
    const int n = 1001, W = 12, H = 4;
    const size_t size = lab05_edge_doubles(n, W, H);
    unsigned char *used = calloc(size, 1);
    for (int r = 0; r < 2; r++)
        for (long i = 0; i < lab05_tiles_in_row(n, r, W, H); i++)
            for (int side = 0; side < 2; side++)
                for (int j = 0; j < H; j++) {
                    size_t at = lab05_edge_at(n, r, i, side, j, W, H);
                    cr_assert_leq(at + 4, size);
                    for (int k = 0; k < 4; k++)
                        cr_assert_eq(used[at + k]++, 0, "record of tile %ld row %d side %d level "
                                     "%d overlaps another", i, r, side, j);
                }
    free(used);
}

/* The neighbours lab05_left_writer names are the tiles of the row below whose middles end
   where the reader's first level needs them: the reader's first computed level rH - H + 1
   covers [m + H - 1, m + W - H + 1), so it reads level rH - H at m + H - 2, m + H - 1 (the
   left writer's last two points) and m + W - H, m + W - H + 1 (the right writer's first). */
Test(geometry, writers_are_the_tiles_below_on_either_side)
{
    static const int tiles[][2] = {{2, 1}, {8, 4}, {9, 3}, {512, 64}};
    for (size_t a = 0; a < sizeof tiles / sizeof *tiles; a++) {
        const int W = tiles[a][0], H = tiles[a][1];
        for (int r = 1; r < 5; r++)
            for (long i = 0; i < 4; i++) {
                const long m = lab05_tile_left(r, i, W, H), w = lab05_left_writer(r, i);
                cr_assert_eq(lab05_tile_left(r - 1, w, W, H) + W, m + H,
                             "%dx%d row %d tile %ld: left writer", W, H, r, i);
                cr_assert_eq(lab05_tile_left(r - 1, w + 1, W, H), m + W - H,
                             "%dx%d row %d tile %ld: right writer", W, H, r, i);
            }
    }
}

Test(geometry, rows_for_steps)
{
    cr_expect_eq(lab05_rows(0, 4), 0);
    cr_expect_eq(lab05_rows(1, 4), 2);
    cr_expect_eq(lab05_rows(4, 4), 2);
    cr_expect_eq(lab05_rows(5, 4), 3);
}

/* ---- the given code's checks ------------------------------------------------------------ */

Test(given, tiles_are_checked_per_variant)
{
    static const struct { const char *variant; int w, h; const char *phrase; } bad[] = {
        {"diamond", 128, 32, "W/2 steps high"},
        {"diamond", 7, 3, "W even"},
        {"honeycomb", 100, 51, "at most W/2 steps"},
        {"linear", 256, 4, "one step per launch"},
        {"persistent", 256, 2, "one step per barrier"},
        {"diamond", 2048, 1024, "from 1 to 1024"},
        {"spiral", 0, 0, "unknown variant"}};
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        lk_error err;
        lk_error_clear(&err);
        cr_expect_eq(lab05_check_options(bad[k].variant, bad[k].w, bad[k].h, &err), -1,
                     "%s %dx%d was accepted", bad[k].variant, bad[k].w, bad[k].h);
        cr_expect(strstr(err.msg, bad[k].phrase), "the message lacks '%s': %s", bad[k].phrase,
                  err.msg);
    }
    lk_error err;
    cr_expect_eq(lab05_check_options("honeycomb", 100, 50, &err), 0, "%s", err.msg);
    cr_expect_eq(lab05_check_options("diamond", 2, 1, &err), 0, "%s", err.msg);
    cr_expect_eq(lab05_check_options("", 0, 0, &err), 0, "%s", err.msg);
}

Test(given, default_tiles_pass_their_own_checks)
{
    for (int v = 0; lab05_variants[v].name; v++) {
        lab05_method m;
        lk_error err;
        LK_ASSERT_OK(lab05_method_parse(lab05_variants[v].name, &m, &err), &err);
        LK_ASSERT_OK(lab05_check_tile(m, lab05_variants[v].tile_x, lab05_variants[v].tile_y, &err),
                     &err);
    }
}

/* Under --bench --tile 64x32 the linear baseline must keep its 256x1 block; a baseline
   chosen with --variant keeps the tile given. */
Test(given, baseline_of_a_bench_comparison_keeps_its_own_tile)
{
    int w = 64, h = 32;
    lab05_tile_for_call("linear", 1, "diamond", &w, &h);
    cr_expect(w == 256 && h == 1, "linear as the baseline of diamond ran with %dx%d", w, h);
    w = 64, h = 32;
    lab05_tile_for_call("linear", 1, "", &w, &h);
    cr_expect(w == 256 && h == 1, "linear as the baseline of the default variant ran with %dx%d", w, h);
    w = 512, h = 1;
    lab05_tile_for_call("linear", 1, "linear", &w, &h);
    cr_expect(w == 512 && h == 1, "--variant linear --tile 512x1 ran with %dx%d", w, h);
    w = 64, h = 32;
    lab05_tile_for_call("diamond", 0, "", &w, &h);
    cr_expect(w == 64 && h == 32, "your diamond ran with %dx%d", w, h);
}

/* ---- the stretch model: the Brusselator (bruss/bruss.h, serial.c) ---------------------- */

static bruss bruss_generated(int m, unsigned long long seed)
{
    bruss_spec spec = {m, seed};
    bruss sim;
    lk_error err;
    LK_ASSERT_OK(bruss_generate(&spec, &sim, &err), &err);
    return sim;
}

static double *bruss_serial_of(const bruss *sim, int steps)
{
    double *y = malloc(bruss_components(sim->m) * sizeof *y);
    lk_error err;
    LK_ASSERT_OK(bruss_serial(sim, steps, y, &err), &err);
    return y;
}

#define AT(m, k, j, v) (2 * ((size_t)(m) * (k) + (j)) + (v))

/* One step of Korch's start on a 3 x 3 grid, by hand (c = 2e-3 * 2^2 = 8e-3, h = 1e-3):
   U(k, j) = 0.5 + j/2, V(k, j) = 1 + 5k/2. Corner (0, 0): north and west are missing, so
   they are second copies of south (1, 0) and east (0, 1): f_U = 1 + 0.25 - 2.2 + c (0.5 +
   0.5 + 1 + 1 - 2) = -0.942, f_V = 1.7 - 0.25 + c (3.5 + 3.5 + 1 + 1 - 4) = 1.49. Centre
   (1, 1): f_U = 1 + 3.5 - 4.4 + c (1 + 1 + 0.5 + 1.5 - 4) = 0.1, f_V = 3.4 - 3.5 + c (1 + 6
   + 3.5 + 3.5 - 14) = -0.1. Corner (2, 2), south and east missing: f_U = 1 + 13.5 - 6.6 +
   c (1.5 + 1.5 + 1 + 1 - 6) = 7.892, f_V = 5.1 - 13.5 + c (3.5 + 3.5 + 6 + 6 - 24) = -8.44. */
Test(bruss, one_step_by_hand_at_corners_and_centre)
{
    bruss sim = bruss_generated(3, 0);
    cr_assert_eq(bruss_h(3), 1e-3);
    cr_assert_eq(bruss_c(3), 8e-3);
    double *y = bruss_serial_of(&sim, 1);
    static const struct { int k, j; double u, v; } want[] = {
        {0, 0, 0.5 - 0.000942, 1.0 + 0.00149},
        {1, 1, 1.0 + 0.0001, 3.5 - 0.0001},
        {2, 2, 1.5 + 0.007892, 6.0 - 0.00844}};
    for (size_t p = 0; p < sizeof want / sizeof *want; p++) {
        const double u = y[AT(3, want[p].k, want[p].j, 0)], v = y[AT(3, want[p].k, want[p].j, 1)];
        cr_expect(fabs(u - want[p].u) < 1e-12 && fabs(v - want[p].v) < 1e-12,
                  "point (%d, %d): U %.17g V %.17g, by hand %.17g %.17g", want[p].k, want[p].j,
                  u, v, want[p].u, want[p].v);
    }
    free(y);
    bruss_free(&sim);
}

/* The uniform state U = 1, V = 3.4 is the Brusselator's steady state (A = 1, B = 3.4):
   f_U = 1 + 3.4 - 4.4 and f_V = 3.4 - 3.4 vanish up to one rounding of 4.4 (EPS * 4.4 per
   step), the Laplacian is exactly 0. After S steps |U - 1| <= S h 4 EPS 4.4 and the
   unstable mode (B > 1 + A^2) grows by at most (1 + 2.4 h)^S: 1.002 at S = 1000. */
Test(bruss, uniform_steady_state_stays_steady)
{
    const int m = 9, steps = 1000;
    bruss sim = bruss_generated(m, 0);
    for (size_t i = 0; i < bruss_components(m); i += 2) {
        sim.y0[i] = 1.0;
        sim.y0[i + 1] = 3.4;
    }
    double *y = bruss_serial_of(&sim, steps);
    const double tol = 1.01 * steps * bruss_h(m) * 4 * EPS * 4.4 + 4 * EPS;
    for (size_t i = 0; i < bruss_components(m); i += 2)
        cr_assert(fabs(y[i] - 1.0) <= tol && fabs(y[i + 1] - 3.4) <= tol,
                  "component %zu: U %.17g V %.17g drifted beyond %.3g", i, y[i], y[i + 1], tol);
    free(y);
    bruss_free(&sim);
}

/* A start that is mirror-symmetric in j and in k stays so bit for bit: the Laplacian sums
   ((n + s) + (w + e)), and the reflection at the borders is itself a mirror. */
Test(bruss, mirror_symmetric_start_stays_symmetric_bit_for_bit)
{
    static const int ms[] = {2, 7, 10, 31};
    for (size_t t = 0; t < sizeof ms / sizeof *ms; t++) {
        const int m = ms[t];
        bruss sim = bruss_generated(m, 11);
        for (int k = 0; k < m; k++)
            for (int j = 0; j < m; j++)
                for (int v = 0; v < 2; v++) {
                    const int kk = k < m - 1 - k ? k : m - 1 - k, jj = j < m - 1 - j ? j : m - 1 - j;
                    sim.y0[AT(m, k, j, v)] = sim.y0[AT(m, kk, jj, v)];
                }
        double *y = bruss_serial_of(&sim, 150);
        for (int k = 0; k < m; k++)
            for (int j = 0; j < m; j++)
                for (int v = 0; v < 2; v++) {
                    const double a = y[AT(m, k, j, v)];
                    cr_assert(a == y[AT(m, k, m - 1 - j, v)] && a == y[AT(m, m - 1 - k, j, v)],
                              "m %d: (%d, %d) %s %.17g lost its mirror images %.17g, %.17g", m,
                              k, j, v ? "V" : "U", a, y[AT(m, k, m - 1 - j, v)],
                              y[AT(m, m - 1 - k, j, v)]);
                }
        free(y);
        bruss_free(&sim);
    }
}

/* Rows that start equal stay equal: the reflection makes row -1 a copy of row 1. Korch's
   start is not symmetric, so the perturbed grid also tells the directions apart. */
Test(bruss, equal_rows_stay_equal_and_korch_start_moves)
{
    const int m = 13;
    bruss sim = bruss_generated(m, 5);
    for (int k = 1; k < m; k++)
        memcpy(&sim.y0[AT(m, k, 0, 0)], &sim.y0[AT(m, 0, 0, 0)], 2 * m * sizeof(double));
    double *y = bruss_serial_of(&sim, 99);
    for (int k = 1; k < m; k++)
        cr_assert(memcmp(&y[AT(m, k, 0, 0)], y, 2 * m * sizeof(double)) == 0,
                  "row %d differs from row 0", k);
    free(y);
    bruss_free(&sim);
    bruss korch = bruss_generated(m, 0);
    y = bruss_serial_of(&korch, 10);
    cr_assert(y[0] != korch.y0[0] && isfinite(y[0]), "the state did not move: %.17g", y[0]);
    free(y);
    bruss_free(&korch);
}

/* The serial program's component-wise ode_eval_comp equals the shared point step that the
   kernels call, bit for bit, on odd and even grids. */
Test(bruss, serial_equals_the_shared_point_step_bit_for_bit)
{
    static const int ms[] = {2, 3, 8, 17};
    for (size_t t = 0; t < sizeof ms / sizeof *ms; t++) {
        const int m = ms[t], steps = 21;
        bruss sim = bruss_generated(m, 3 + t);
        double *want = bruss_serial_of(&sim, steps);
        const size_t len = bruss_components(m);
        double *cur = malloc(len * sizeof *cur), *next = malloc(len * sizeof *next);
        memcpy(cur, sim.y0, len * sizeof *cur);
        for (int s = 0; s < steps; s++) {
            for (int k = 0; k < m; k++)
                for (int j = 0; j < m; j++)
                    bruss_point_step(bruss_h(m), bruss_c(m), cur[AT(m, k, j, 0)],
                                     cur[AT(m, k, j, 1)],
                                     &cur[AT(m, bruss_reflect(k - 1, m), j, 0)],
                                     &cur[AT(m, bruss_reflect(k + 1, m), j, 0)],
                                     &cur[AT(m, k, bruss_reflect(j - 1, m), 0)],
                                     &cur[AT(m, k, bruss_reflect(j + 1, m), 0)],
                                     &next[AT(m, k, j, 0)], &next[AT(m, k, j, 1)]);
            double *swap = cur;
            cur = next;
            next = swap;
        }
        lk_assert_grid_eq(want, cur, m, 2 * m, "Brusselator by bruss_point_step");
        free(want);
        free(cur);
        free(next);
        bruss_free(&sim);
    }
}

Test(bruss, step_is_half_the_stability_bound_at_most_1e_3)
{
    cr_expect_eq(bruss_h(2), 1e-3);
    cr_expect_eq(bruss_h(200), 1e-3, "m = 200: the bound 3.16e-3 halved is above 1e-3");
    cr_expect_eq(bruss_h(500), 1.0 / (8.0 * bruss_c(500)));
    cr_expect(fabs(bruss_h(500) - 2.5e-4 / (499.0 * 499.0 / 250000.0)) < 1e-18, "%.17g",
              bruss_h(500));
    cr_expect(bruss_h(2048) < 1.5e-5 && bruss_h(2048) > 1.4e-5, "%.17g", bruss_h(2048));
}

Test(bruss, bad_specs_are_refused_with_the_form)
{
    static const struct { const char *spec, *phrase; } bad[] = {
        {"bruss:1x1:0", "out of range"},
        {"bruss:16385x16385:0", "out of range"},
        {"bruss:4x5:0", "write bruss:4x4:0"},
        {"bruss:5x5", "malformed"},
        {"bruss:5:1", "not MxM"},
        {"brusselator:5x5:1", "unknown kind"},
        {"bruss:5x5:-1", "seed"}};
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        bruss_spec spec;
        lk_error err;
        lk_error_clear(&err);
        cr_expect_eq(bruss_spec_parse(bad[k].spec, &spec, &err), -1, "%s was accepted",
                     bad[k].spec);
        cr_expect(strstr(err.msg, bad[k].phrase) && strstr(err.msg, "bruss:MxM:SEED"),
                  "%s: the message lacks '%s' or the form: %s", bad[k].spec, bad[k].phrase,
                  err.msg);
    }
    bruss_spec spec;
    lk_error err;
    LK_ASSERT_OK(bruss_spec_parse("bruss:2x2:9", &spec, &err), &err);
    cr_expect(spec.m == 2 && spec.seed == 9);
}

Test(bruss, small_dataset_hashes)
{
    static const char *const names[] = {"bruss-tiny", "bruss-odd"};
    for (size_t k = 0; k < 2; k++) {
        char manifest[4096], md5[33], hex[33];
        int steps;
        bruss sim;
        lk_error err;
        lk_test_path(manifest, sizeof manifest, "datasets/MANIFEST");
        LK_ASSERT_OK(bruss_load_dataset(manifest, names[k], &sim, &steps, md5, &err), &err);
        double *y = bruss_serial_of(&sim, steps);
        LK_ASSERT_OK(bruss_md5(y, sim.m, hex, &err), &err);
        cr_expect_str_eq(hex, md5, "%s", names[k]);
        free(y);
        bruss_free(&sim);
    }
}

/* The default tile 0x4 on an H100 (132 SMs, 227 KB per block): every SM gets a band while
   it fits; at m = 2048 one row with one halo row each side is all that fits; m = 4096 has
   no room at all. */
Test(bruss, auto_tile_fits_shared_memory_and_spreads_over_the_sms)
{
    const size_t smem = 232448;
    int rows = 0, height = 4;
    cr_assert_eq(lab05_bruss_auto_tile(200, 132, smem, &rows, &height), 0);
    cr_expect(rows == 2 && height == 4, "m 200: %dx%d", rows, height);
    rows = 0, height = 4;
    cr_assert_eq(lab05_bruss_auto_tile(500, 132, smem, &rows, &height), 0);
    cr_expect(rows == 4 && height == 4, "m 500: %dx%d", rows, height);
    cr_expect(lab05_bruss_band_bytes(500, rows, height) <= smem);
    rows = 0, height = 4;
    cr_assert_eq(lab05_bruss_auto_tile(2048, 132, smem, &rows, &height), 0);
    cr_expect(rows == 1 && height == 1, "m 2048: %dx%d", rows, height);
    rows = 0, height = 4;
    cr_expect_eq(lab05_bruss_auto_tile(4096, 132, smem, &rows, &height), -1);
    rows = 0, height = 4;
    cr_assert_eq(lab05_bruss_auto_tile(20, 1, smem, &rows, &height), 0);
    cr_expect(rows == 20 && height == 4, "one SM, m 20: the whole grid in one band, %dx%d",
              rows, height);
}

Test(bruss, variants_must_match_the_model)
{
    lk_error err;
    cr_expect_eq(lab05_check_model("", 1, &err), 0, "%s", err.msg);
    cr_expect_eq(lab05_check_model("bruss-linear", 1, &err), 0, "%s", err.msg);
    cr_expect_eq(lab05_check_model("", 0, &err), 0, "%s", err.msg);
    cr_expect_eq(lab05_check_model("diamond", 1, &err), -1);
    cr_expect(strstr(err.msg, "use --variant bruss or bruss-linear"), "%s", err.msg);
    cr_expect_eq(lab05_check_model("bruss", 0, &err), -1);
    cr_expect(strstr(err.msg, "the input is a string"), "%s", err.msg);
    cr_expect_eq(lab05_check_options("bruss", 0, 0, &err), 0, "%s", err.msg);
    cr_expect_eq(lab05_check_options("bruss", 0, 4, &err), 0, "the default tile: %s", err.msg);
    cr_expect_eq(lab05_check_options("bruss-linear", 256, 4, &err), -1);
    cr_expect(strstr(err.msg, "one step per launch"), "%s", err.msg);
    cr_expect_eq(lab05_check_options("bruss", 8, 2000, &err), -1);
    cr_expect(strstr(err.msg, "ROWSxSTEPS"), "%s", err.msg);
}
