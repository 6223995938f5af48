/* CPU tests of what the GPU tests rely on: the datasets reach every border, the per-cell
   helpers of lab.h are the serial reference's arithmetic, the harness's variant and tile
   handling, and the exactly-once checks catch the coverage bugs they are meant to catch
   (a tiled CPU loop with planted off-by-ones stands in for a buggy kernel). */
#include "helpers.h"

/* ---- Datasets ----------------------------------------------------------------------- */

/* Every border-coverage case leaves through the borders it promises (and all together
   through all four), with the mass balanced: the GPU tests' border cases mean something. */
Test(datasets, border_cases_leave_through_each_of_the_four_borders)
{
    lab04_border_case cases[LAB04_MAX_BORDER_CASES];
    const int ncases = lab04_border_cases(cases);
    double reached[4] = {0, 0, 0, 0};
    for (int k = 0; k < ncases; k++) {
        lab04_border_case *c = &cases[k];
        const size_t n = (size_t)c->sim.rows * c->sim.cols;
        double *h = malloc(n * sizeof *h), out[4];
        cr_assert(h, "out of memory");
        lab04_serial_outflow(&c->sim, c->steps, h, out);
        double before = 0.0, after = 0.0;
        for (size_t i = 0; i < n; i++) {
            before += c->sim.h0[i];
            after += h[i];
        }
        const double lost = out[0] + out[1] + out[2] + out[3];
        cr_assert_leq(fabs(after + lost - before), 1e-9 * before,
                      "%s: mass not conserved: %.17g before, %.17g after + %.17g out", c->name,
                      before, after, lost);
        for (int b = 0; b < 4; b++) {
            if (c->must_leave[b])
                cr_assert_gt(out[b], c->fraction * before,
                             "%s: only %.3g of %.3g left through the %s border in %d steps "
                             "(N %.3g, W %.3g, E %.3g, S %.3g)", c->name, out[b], before,
                             lab04_border_names[b], c->steps, out[0], out[1], out[2], out[3]);
            reached[b] += out[b];
        }
        free(h);
        sciddicat_free(&c->sim);
    }
    for (int b = 0; b < 4; b++)
        cr_assert_gt(reached[b], 0.0, "no flow through the %s border", lab04_border_names[b]);
}

/* The turn itself: a quarter turn clockwise moves the top-left corner to the top-right. */
Test(datasets, a_quarter_turn_is_clockwise)
{
    double z[6] = {1, 2, 3, 4, 5, 6}, h[6] = {0, 0, 0, 0, 0, 0};
    sciddicat sim = {.rows = 2, .cols = 3, .z = z, .h0 = h}, t;
    lab04_rotate(&sim, 1, &t); /* 1 2 3 / 4 5 6  ->  4 1 / 5 2 / 6 3 */
    static const double want[6] = {4, 1, 5, 2, 6, 3};
    cr_assert(t.rows == 3 && t.cols == 2, "turned grid is %dx%d, expected 3x2", t.rows, t.cols);
    for (int k = 0; k < 6; k++)
        cr_assert_eq(t.z[k], want[k], "element %d: %g, expected %g", k, t.z[k], want[k]);
    sciddicat_free(&t);
}

/* The one-call tests rely on every interior cell's result differing from what a skipped,
   doubly updated or never written cell would hold: check that premise for every size. */
Test(datasets, one_call_test_data_makes_every_interior_cell_count)
{
    for (int s = 0; s < LAB04_NSIZES; s++) {
        const int rows = lab04_once_sizes[s][0], cols = lab04_once_sizes[s][1];
        const size_t n = (size_t)rows * cols;
        double *z = malloc(n * sizeof *z), *h = malloc(n * sizeof *h);
        double *Sf = calloc(SCIDDICAT_NFLOWS * n, sizeof *Sf);
        double *w = malloc(n * sizeof *w), *w2 = malloc(n * sizeof *w2);
        cr_assert(z && h && Sf && w && w2, "out of memory");
        lab04_random_state(rows, cols, 3000 + rows * 7 + cols, z, h);
        lab04_serial_flows(rows, cols, z, h, Sf);
        for (int i = 1; i < rows - 1; i++)
            for (int j = 1; j < cols - 1; j++) {
                int any = 0;
                for (int k = 0; k < SCIDDICAT_NFLOWS; k++)
                    any |= Sf[sciddicat_flow_at(k, i, j, rows, cols)] != 0.0;
                cr_assert(any, "%dx%d: interior cell (%d, %d) has no outflow: a kernel that "
                          "skips it would go unnoticed", rows, cols, i, j);
            }
        lab04_random_state(rows, cols, 1000 + rows * 7 + cols, z, h);
        lab04_random_flows(rows, cols, 2000 + rows * 7 + cols, Sf);
        memcpy(w, h, n * sizeof *h);
        lab04_serial_width(rows, cols, w, Sf);
        memcpy(w2, w, n * sizeof *w);
        lab04_serial_width(rows, cols, w2, Sf);
        for (int i = 1; i < rows - 1; i++)
            for (int j = 1; j < cols - 1; j++) {
                const size_t at = sciddicat_at(i, j, cols);
                cr_assert(!lab04_same(w[at], h[at]) && !lab04_same(w2[at], w[at]),
                          "%dx%d: cell (%d, %d): the width update does not change it (or a "
                          "second one does not): %.17g -> %.17g -> %.17g", rows, cols, i, j,
                          h[at], w[at], w2[at]);
            }
        free(z); free(h); free(Sf); free(w); free(w2);
    }
}

/* ---- Per-cell helpers --------------------------------------------------------------- */

/* lab04_cell_flows / lab04_cell_width must give the model functions' bits on every cell. */
static void check_helpers_on(int rows, int cols, const double *z, const double *h,
                             const char *what)
{
    const size_t n = (size_t)rows * cols;
    double *Sf = calloc(SCIDDICAT_NFLOWS * n, sizeof *Sf);
    cr_assert(Sf, "out of memory");
    lab04_serial_flows(rows, cols, z, h, Sf);
    for (int i = 1; i < rows - 1; i++)
        for (int j = 1; j < cols - 1; j++) {
            const size_t c = sciddicat_at(i, j, cols);
            const size_t nb[5] = {c, c - cols, c - 1, c + 1, c + cols};
            double zn[5], hn[5], f[4], in[4], out[4];
            for (int k = 0; k < 5; k++) {
                zn[k] = z[nb[k]];
                hn[k] = h[nb[k]];
            }
            lab04_cell_flows(zn, hn, f);
            for (int k = 0; k < SCIDDICAT_NFLOWS; k++) {
                const double want = Sf[sciddicat_flow_at(k, i, j, rows, cols)];
                cr_assert(lab04_same(f[k], want), "%s: cell (%d, %d) outflow %d: "
                          "lab04_cell_flows gives %.17g, the model %.17g", what, i, j, k, f[k], want);
                out[k] = want;
            }
            in[0] = Sf[sciddicat_flow_at(3, i - 1, j, rows, cols)];
            in[1] = Sf[sciddicat_flow_at(2, i, j - 1, rows, cols)];
            in[2] = Sf[sciddicat_flow_at(1, i, j + 1, rows, cols)];
            in[3] = Sf[sciddicat_flow_at(0, i + 1, j, rows, cols)];
            const double got = lab04_cell_width(h[c], in, out);
            const double want = sciddicat_width_cell(i, j, rows, cols, h, Sf);
            cr_assert(lab04_same(got, want), "%s: cell (%d, %d): lab04_cell_width gives %.17g, "
                      "the model %.17g", what, i, j, got, want);
        }
    free(Sf);
}

Test(cells, helpers_equal_the_model_on_random_cells)
{
    const int rows = 41, cols = 37;
    double z[41 * 37], h[41 * 37];
    lab04_random_state(rows, cols, 11, z, h);
    check_helpers_on(rows, cols, z, h, "random dome");
    /* Thin debris, below and around p_epsilon, on rough ground: most cells stay put. */
    lk_rng rng;
    lk_rng_seed(&rng, 12);
    for (int k = 0; k < rows * cols; k++) {
        z[k] = 10.0 * lk_rng_uniform(&rng);
        h[k] = 0.002 * lk_rng_uniform(&rng);
    }
    check_helpers_on(rows, cols, z, h, "thin debris");
}

/* Ties (a neighbour level equal to the average) and a flat pool take every branch of the
   elimination loop. */
Test(cells, helpers_equal_the_model_on_ties_and_flat_ground)
{
    const int rows = 5, cols = 5;
    double z[25], h[25];
    for (int k = 0; k < 25; k++) {
        z[k] = (double)(k % 3);
        h[k] = (k % 4) * 0.5;
    }
    check_helpers_on(rows, cols, z, h, "ties");
    for (int k = 0; k < 25; k++) {
        z[k] = 0.0;
        h[k] = 1.0;
    }
    check_helpers_on(rows, cols, z, h, "flat pool");
}

Test(cells, the_hand_computed_bump)
{
    /* As lab 01's hand computation: m = 0.999, u = {0.001, 0, 0, 0, 0}: every outflow 0.1. */
    const double zn[5] = {0.0, 0.0, 0.0, 0.0, 0.0}, hn[5] = {1.0, 0.0, 0.0, 0.0, 0.0};
    double f[4];
    lab04_cell_flows(zn, hn, f);
    for (int k = 0; k < 4; k++)
        cr_assert_float_eq(f[k], 0.1, 1e-15, "outflow %d is %.17g, expected 0.1", k, f[k]);
    const double in[4] = {0, 0, 0, 0};
    cr_assert_float_eq(lab04_cell_width(1.0, in, f), 0.6, 1e-15, "new thickness");
}

/* ---- Harness ----------------------------------------------------------------------- */

Test(harness, variant_names_round_trip)
{
    lk_error err;
    for (int v = 0; v < LAB04_NVARIANTS; v++) {
        lab04_variant got;
        const char *name = lab04_variant_name((lab04_variant)v);
        LK_ASSERT_OK(lab04_variant_parse(name, &got, &err), &err);
        cr_assert_eq((int)got, v, "%s parsed as %d", name, (int)got);
    }
    lab04_variant got;
    LK_ASSERT_OK(lab04_variant_parse("", &got, &err), &err);
    cr_assert_eq(got, LAB04_HALO);
    cr_assert_eq(lab04_variant_parse("tiled", &got, &err), -1);
    cr_assert(strstr(err.msg, "tiled") && strstr(err.msg, "halo, nohalo, fused or fast"),
              "message should name the bad variant and the good ones: %s", err.msg);
}

Test(harness, tile_limits_follow_the_block_shape)
{
    lk_error err;
    int bx, by;
    lab04_block_of_tile(LAB04_HALO, 30, 6, &bx, &by);
    cr_assert(bx == 32 && by == 8, "halo block of tile 30x6 is %dx%d, expected 32x8", bx, by);
    lab04_block_of_tile(LAB04_NOHALO, 32, 8, &bx, &by);
    cr_assert(bx == 32 && by == 8, "nohalo block of tile 32x8 is %dx%d", bx, by);
    lab04_block_of_tile(LAB04_FUSED, 30, 14, &bx, &by);
    cr_assert(bx == 32 && by == 16, "fused block of tile 30x14 is %dx%d", bx, by);

    LK_ASSERT_OK(lab04_check_tile(LAB04_HALO, 30, 30, &err), &err);
    LK_ASSERT_OK(lab04_check_tile(LAB04_NOHALO, 32, 32, &err), &err);
    LK_ASSERT_OK(lab04_check_tile(LAB04_NOHALO, 1024, 1, &err), &err);
    LK_ASSERT_OK(lab04_check_tile(LAB04_FUSED, 1, 1, &err), &err);
    cr_assert_eq(lab04_check_tile(LAB04_HALO, 31, 30, &err), -1, "33x32 threads accepted");
    cr_assert(strstr(err.msg, "33x32") && strstr(err.msg, "1056") && strstr(err.msg, "ring"),
              "message should explain the halo block: %s", err.msg);
    cr_assert_eq(lab04_check_tile(LAB04_NOHALO, 33, 32, &err), -1, "1056 threads accepted");
    cr_assert_eq(lab04_check_tile(LAB04_FUSED, 1023, 1, &err), -1, "1025x3 threads accepted");
    cr_assert_eq(lab04_check_tile(LAB04_NOHALO, 0, 8, &err), -1, "a 0-wide tile accepted");
    cr_assert_eq(lab04_check_tile(LAB04_NOHALO, 8, -1, &err), -1, "a negative tile accepted");
    LK_ASSERT_OK(lab04_check_tile(LAB04_FAST, 32, 1, &err), &err);
    cr_assert_eq(lab04_check_tile(LAB04_FAST, 7, 4, &err), -1, "a fast block of 28 threads accepted");
    cr_assert(strstr(err.msg, "7x4") && strstr(err.msg, "warp") && strstr(err.msg, "32x1"),
              "message should explain the fast block's warp: %s", err.msg);
}

Test(harness, default_tiles_are_usable)
{
    for (int v = 0; v < LAB04_NVARIANTS; v++) {
        lk_error err;
        LK_ASSERT_OK(lab04_check_tile((lab04_variant)v, lab04_variants[v].tile_x,
                                      lab04_variants[v].tile_y, &err), &err);
    }
}

/* Every tile of the one-call tests is usable by every variant it applies to. */
Test(harness, one_call_tiles_are_usable)
{
    lk_error err;
    for (int v = 0; v < LAB04_NVARIANTS; v++) {
        for (int t = 0; t < LAB04_NTILES; t++)
            if (lab04_tile_applies((lab04_variant)v, lab04_once_tiles[t][0], lab04_once_tiles[t][1]))
                LK_ASSERT_OK(lab04_check_tile((lab04_variant)v, lab04_once_tiles[t][0],
                                          lab04_once_tiles[t][1], &err), &err);
        const int m = lab04_max_square_tile((lab04_variant)v);
        LK_ASSERT_OK(lab04_check_tile((lab04_variant)v, m, m, &err), &err);
    }
}

/* ---- The exactly-once checks catch coverage bugs ------------------------------------ */

/* Coverage bugs a tiled kernel can have, planted in a CPU loop that visits the cells the way
   a kernel's blocks and bounds tests would. */
typedef enum planted {
    CORRECT,
    FLOOR_GRID,     /* blocks = (rows - 2) / tile (rounded down): the last partial tile skipped */
    SKIP_LAST_ROW,  /* bounds test i < rows - 2: the last interior row skipped */
    SKIP_LAST_COL,  /* bounds test j < cols - 2 */
    SKIP_FIRST_ROW, /* tiles start at row 0, bounds test i >= 1 forgotten the other way */
    WRITE_BORDER,   /* bounds test i <= rows - 1: the South border row written */
    OVERLAP         /* tiles step by tile - 1 rows: the first row of each tile done twice */
} planted;

/* Call @p visit(i, j) in the order and with the coverage of a tiled launch with bug @p bug. */
static void tiled_loop(planted bug, int rows, int cols, int tx, int ty,
                       void (*visit)(int i, int j, void *ctx), void *ctx)
{
    const int step_y = bug == OVERLAP && ty > 1 ? ty - 1 : ty;
    const int gy = bug == FLOOR_GRID ? (rows - 2) / ty : (rows - 2 + step_y - 1) / step_y;
    const int gx = bug == FLOOR_GRID ? (cols - 2) / tx : (cols - 2 + tx - 1) / tx;
    for (int by = 0; by < gy; by++)
        for (int bx = 0; bx < gx; bx++)
            for (int ly = 0; ly < ty; ly++)
                for (int lx = 0; lx < tx; lx++) {
                    const int i = 1 + by * step_y + ly, j = 1 + bx * tx + lx;
                    int row_end = rows - 1, col_end = cols - 1, row_start = 1;
                    if (bug == SKIP_LAST_ROW) row_end = rows - 2;
                    if (bug == SKIP_LAST_COL) col_end = cols - 2;
                    if (bug == SKIP_FIRST_ROW) row_start = 2;
                    if (bug == WRITE_BORDER) row_end = rows;
                    if (i >= row_start && i < row_end && j < col_end)
                        visit(i, j, ctx);
                }
}

typedef struct width_ctx {
    int rows, cols;
    double *h;
    const double *Sf;
} width_ctx;

/* Border cells read outflows of row `rows` and beyond: a zero pad below the grid stands in. */
static void visit_width(int i, int j, void *p)
{
    width_ctx *c = p;
    c->h[sciddicat_at(i, j, c->cols)] = sciddicat_width_cell(i, j, c->rows, c->cols,
                                                                  c->h, c->Sf);
}

static size_t planted_width(planted bug, int rows, int cols, int tx, int ty, char *msg, size_t size)
{
    const size_t n = (size_t)rows * cols;
    double *z = malloc(n * sizeof *z), *before = malloc(n * sizeof *before);
    double *expected = malloc(n * sizeof *expected), *twice = malloc(n * sizeof *twice);
    double *got = malloc(n * sizeof *got);
    /* Four layers and one spare row of zeros, so a planted border write stays in memory. */
    double *Sf = calloc(SCIDDICAT_NFLOWS * n + 2 * (size_t)cols, sizeof *Sf);
    cr_assert(z && before && expected && twice && got && Sf, "out of memory");
    lab04_random_state(rows, cols, 1, z, before);
    lab04_random_flows(rows, cols, 2, Sf);
    memcpy(expected, before, n * sizeof *before);
    lab04_serial_width(rows, cols, expected, Sf);
    memcpy(twice, expected, n * sizeof *before);
    lab04_serial_width(rows, cols, twice, Sf);
    memcpy(got, before, n * sizeof *before);
    width_ctx c = {rows, cols, got, Sf};
    /* A border row write of the planted bug lands on row rows - 1 only. */
    tiled_loop(bug, rows, cols, tx, ty, visit_width, &c);
    size_t bad = lab04_check_width_once(rows, cols, before, expected, twice, got, msg, size);
    free(z); free(before); free(expected); free(twice); free(got); free(Sf);
    return bad;
}

typedef struct flows_ctx {
    int rows, cols;
    const double *z, *h;
    double *Sf;
} flows_ctx;

static void visit_flows(int i, int j, void *p)
{
    flows_ctx *c = p;
    sciddicat_flows_cell(i, j, c->rows, c->cols, c->z, c->h, c->Sf, SCIDDICAT_P_R,
                         SCIDDICAT_P_EPSILON);
}

static size_t planted_flows(planted bug, int rows, int cols, int tx, int ty, char *msg, size_t size)
{
    const size_t n = (size_t)rows * cols, nf = SCIDDICAT_NFLOWS * n;
    /* One spare row of z and h below the grid, so a planted border write stays in memory. */
    double *z = calloc(n + 2 * (size_t)cols, sizeof *z), *h = calloc(n + 2 * (size_t)cols, sizeof *h);
    double *Sf = malloc(nf * sizeof *Sf), *expected = malloc(nf * sizeof *expected);
    cr_assert(z && h && Sf && expected, "out of memory");
    lab04_random_state(rows, cols, 3, z, h);
    lab04_flows_input(rows, cols, z, h, Sf, expected);
    flows_ctx c = {rows, cols, z, h, Sf};
    /* Writes of a planted border row beyond the last layer are not possible here: keep the
       WRITE_BORDER plant to rows whose outflows stay inside the array (all but layer 3). */
    tiled_loop(bug, rows, cols, tx, ty, visit_flows, &c);
    size_t bad = lab04_check_flows_once(rows, cols, expected, Sf, msg, size);
    free(z); free(h); free(Sf); free(expected);
    return bad;
}

Test(checks, correct_tiled_loops_pass_every_check)
{
    char msg[4096];
    for (int s = 0; s < LAB04_NSIZES; s++)
        for (int t = 0; t < LAB04_NTILES; t++) {
            const int rows = lab04_once_sizes[s][0], cols = lab04_once_sizes[s][1];
            const int tx = lab04_once_tiles[t][0], ty = lab04_once_tiles[t][1];
            cr_assert_eq(planted_width(CORRECT, rows, cols, tx, ty, msg, sizeof msg), 0,
                         "width %dx%d tile %dx%d:%s", rows, cols, tx, ty, msg);
            cr_assert_eq(planted_flows(CORRECT, rows, cols, tx, ty, msg, sizeof msg), 0,
                         "flows %dx%d tile %dx%d:%s", rows, cols, tx, ty, msg);
        }
}

/* The planted off-by-one of the lab: the last interior row skipped. Both checks name every
   skipped cell's kind and the row they sit in. */
Test(checks, a_skipped_last_interior_row_is_caught_and_located)
{
    char msg[4096];
    for (int s = 0; s < LAB04_NSIZES; s++) {
        const int rows = lab04_once_sizes[s][0], cols = lab04_once_sizes[s][1];
        const size_t want = (size_t)cols - 2;
        char row[64];
        snprintf(row, sizeof row, "rows %d..%d", rows - 2, rows - 2);
        size_t bad = planted_width(SKIP_LAST_ROW, rows, cols, 32, 8, msg, sizeof msg);
        cr_assert_eq(bad, want, "width %dx%d: %zu bad cells reported, expected %zu:%s", rows,
                     cols, bad, want, msg);
        cr_assert(strstr(msg, "not updated") && strstr(msg, row), "width %dx%d:%s", rows, cols, msg);
        bad = planted_flows(SKIP_LAST_ROW, rows, cols, 32, 8, msg, sizeof msg);
        cr_assert_eq(bad, want, "flows %dx%d: %zu bad cells reported, expected %zu:%s", rows,
                     cols, bad, want, msg);
        cr_assert(strstr(msg, "not computed") && strstr(msg, row), "flows %dx%d:%s", rows, cols, msg);
    }
}

Test(checks, other_coverage_bugs_are_caught)
{
    char msg[4096];
    static const planted bugs[] = {SKIP_LAST_COL, SKIP_FIRST_ROW, WRITE_BORDER, OVERLAP};
    static const char *const words[] = {"not updated", "not updated", "border", "twice"};
    for (int b = 0; b < 4; b++) {
        size_t bad = planted_width(bugs[b], 97, 131, 16, 16, msg, sizeof msg);
        cr_assert_gt(bad, 0, "width: planted bug %d not caught", (int)bugs[b]);
        cr_assert(strstr(msg, words[b]), "width: bug %d reported as:%s", (int)bugs[b], msg);
        if (bugs[b] == OVERLAP)
            continue; /* recomputing outflows twice writes the same values: harmless */
        bad = planted_flows(bugs[b], 97, 131, 16, 16, msg, sizeof msg);
        cr_assert_gt(bad, 0, "flows: planted bug %d not caught", (int)bugs[b]);
    }
}

/* The course's 2021 bug (grids rounded down) hides on sizes that the tile divides; for every
   tile of the one-call tests some size leaves a partial tile in each direction, and there
   the check fires. */
Test(checks, rounded_down_grids_are_caught_for_every_tile)
{
    char msg[4096];
    for (int t = 0; t < LAB04_NTILES; t++) {
        const int tx = lab04_once_tiles[t][0], ty = lab04_once_tiles[t][1];
        int caught_rows = tx == 1 && ty == 1, caught_cols = caught_rows;
        for (int s = 0; s < LAB04_NSIZES; s++) {
            const int rows = lab04_once_sizes[s][0], cols = lab04_once_sizes[s][1];
            if ((rows - 2) % ty == 0 && (cols - 2) % tx == 0)
                continue;
            size_t bad = planted_width(FLOOR_GRID, rows, cols, tx, ty, msg, sizeof msg);
            cr_assert_gt(bad, 0, "%dx%d tile %dx%d: a rounded-down grid went unnoticed", rows,
                         cols, tx, ty);
            caught_rows |= (rows - 2) % ty != 0 && (rows - 2) >= ty;
            caught_cols |= (cols - 2) % tx != 0 && (cols - 2) >= tx;
        }
        cr_assert(caught_rows && caught_cols, "tile %dx%d: no size leaves a partial tile in "
                  "both directions: add one to lab04_once_sizes", tx, ty);
    }
}

Test(checks, fused_check_catches_unwritten_and_border_cells)
{
    const int rows = 9, cols = 8;
    const size_t n = (size_t)rows * cols;
    double expected[72], got[72];
    char msg[4096];
    for (size_t k = 0; k < n; k++)
        expected[k] = 1.0 + (double)k;
    lk_poison(got, n);
    for (int i = 1; i < rows - 2; i++) /* the last interior row never written */
        for (int j = 1; j < cols - 1; j++)
            got[sciddicat_at(i, j, cols)] = expected[sciddicat_at(i, j, cols)];
    cr_assert_eq(lab04_check_fused_once(rows, cols, expected, got, msg, sizeof msg),
                 (size_t)cols - 2, "%s", msg);
    cr_assert(strstr(msg, "not written") && strstr(msg, "rows 7..7"), "%s", msg);
    got[sciddicat_at(7, 1, cols)] = expected[sciddicat_at(7, 1, cols)];
    got[sciddicat_at(0, 3, cols)] = 2.0;
    lab04_check_fused_once(rows, cols, expected, got, msg, sizeof msg);
    cr_assert(strstr(msg, "border written") && strstr(msg, "(0, 3)"), "%s", msg);
}

/* ---- The fast variant's algorithm (tests/helpers.h runs it on the CPU) ------------------- */

Test(fast, boxes_rotate_without_a_step_reading_what_it_writes)
{
    for (int step = 0; step < 8; step++) {
        int used = 0;
        for (int role = 0; role < LAB04_FAST_BOXES; role++)
            used |= 1 << lab04_fast_slot(step, (lab04_fast_role)role);
        cr_assert_eq(used, (1 << LAB04_FAST_BOXES) - 1, "step %d: two roles share a box", step);
        /* What a step grows is what the next one reads as now; what it reads now, the next
           reads as one step earlier; what it clears, the next one grows. */
        cr_assert_eq(lab04_fast_slot(step, LAB04_WET_NEXT), lab04_fast_slot(step + 1, LAB04_WET_NOW));
        cr_assert_eq(lab04_fast_slot(step, LAB04_WET_NOW), lab04_fast_slot(step + 1, LAB04_WET_PREV));
        cr_assert_eq(lab04_fast_slot(step, LAB04_TO_CLEAR), lab04_fast_slot(step + 1, LAB04_WET_NEXT));
    }
}

Test(fast, region_is_one_cell_around_both_boxes_within_the_interior)
{
    lab04_box b[LAB04_FAST_BOXES];
    lab04_fast_boxes_init(20, 30, b);
    lab04_box r = lab04_fast_region(b, 0, 20, 30);
    cr_assert(r.r0 == 1 && r.r1 == 18 && r.c0 == 1 && r.c1 == 28, "first step: %d..%d x %d..%d",
              r.r0, r.r1, r.c0, r.c1);
    for (int k = 0; k < LAB04_FAST_BOXES; k++)
        b[k] = lab04_box_empty();
    cr_assert(lab04_box_is_empty(lab04_fast_region(b, 5, 20, 30)), "no wet cell, yet a region");
    b[lab04_fast_slot(5, LAB04_WET_NOW)] = (lab04_box){4, 6, 10, 10};
    b[lab04_fast_slot(5, LAB04_WET_PREV)] = (lab04_box){7, 7, 1, 2};
    r = lab04_fast_region(b, 5, 20, 30);
    cr_assert(r.r0 == 3 && r.r1 == 8 && r.c0 == 1 && r.c1 == 11, "region %d..%d x %d..%d",
              r.r0, r.r1, r.c0, r.c1);
    b[lab04_fast_slot(5, LAB04_WET_PREV)] = lab04_box_empty();
    b[lab04_fast_slot(5, LAB04_WET_NOW)] = (lab04_box){18, 18, 28, 28};
    r = lab04_fast_region(b, 5, 20, 30);
    cr_assert(r.r0 == 17 && r.r1 == 18 && r.c0 == 27 && r.c1 == 28, "region %d..%d x %d..%d",
              r.r0, r.r1, r.c0, r.c1);
}

/* Run the fast algorithm for @p steps steps; @p first_full 0 plants a bug: the boxes start
   as the wet cells' box, so the first steps skip cells the reference rewrites. Returns the
   fewest cells a step updated. */
static size_t fast_cpu_run(const sciddicat *sim, int steps, int first_full, double *h)
{
    const int rows = sim->rows, cols = sim->cols;
    const size_t n = (size_t)rows * cols;
    double *other = malloc(n * sizeof *other);
    cr_assert(other, "out of memory");
    memcpy(h, sim->h0, n * sizeof *h);
    memcpy(other, sim->h0, n * sizeof *h);
    lab04_box boxes[LAB04_FAST_BOXES];
    lab04_fast_boxes_init(rows, cols, boxes);
    if (!first_full) {
        lab04_box wet = lab04_box_empty();
        for (int i = 1; i < rows - 1; i++)
            for (int j = 1; j < cols - 1; j++)
                if (!sciddicat_is_still(sim->h0[sciddicat_at(i, j, cols)])) {
                    wet.r0 = i < wet.r0 ? i : wet.r0;
                    wet.r1 = i > wet.r1 ? i : wet.r1;
                    wet.c0 = j < wet.c0 ? j : wet.c0;
                    wet.c1 = j > wet.c1 ? j : wet.c1;
                }
        boxes[lab04_fast_slot(0, LAB04_WET_NOW)] = wet;
        boxes[lab04_fast_slot(0, LAB04_WET_PREV)] = lab04_box_empty();
    }
    double *buf[2] = {h, other};
    int cur = 0;
    size_t fewest = n;
    for (int s = 0; s < steps && rows >= 3 && cols >= 3; s++) {
        size_t u = lab04_fast_cpu_step(s, rows, cols, sim->z, buf[cur], buf[1 - cur], boxes);
        fewest = u < fewest ? u : fewest;
        cur = 1 - cur;
    }
    if (cur == 1)
        memcpy(h, other, n * sizeof *h);
    free(other);
    return fewest;
}

static void fast_cpu_matches_serial(const sciddicat *sim, int steps, const char *name)
{
    const size_t n = (size_t)sim->rows * sim->cols;
    double *expected = malloc(n * sizeof *expected), *got = malloc(n * sizeof *got);
    cr_assert(expected && got, "out of memory");
    lk_error err;
    LK_ASSERT_OK(sciddicat_serial(sim, steps, expected, NULL, &err), &err);
    fast_cpu_run(sim, steps, 1, got);
    char label[160];
    snprintf(label, sizeof label, "fast algorithm on the CPU, %s, %d steps", name, steps);
    lk_assert_grid_eq(expected, got, sim->rows, sim->cols, label);
    free(expected);
    free(got);
}

Test(fast, cpu_algorithm_equals_the_reference_on_dry_wet_and_border_data, .timeout = 120)
{
    static const char *names[] = {"sciddicat-tiny", "sciddicat-3x3", "sciddicat-thin-rows",
                                  "sciddicat-thin-cols", "sciddicat-odd", "sciddicat-wet-odd",
                                  "sciddicat-border"};
    for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
        sciddicat sim;
        int steps;
        char md5[33];
        lk_test_load_dataset(names[k], &sim, &steps, md5);
        fast_cpu_matches_serial(&sim, steps, names[k]);
        sciddicat_free(&sim);
    }
    lab04_border_case cases[LAB04_MAX_BORDER_CASES];
    const int ncases = lab04_border_cases(cases);
    for (int k = 0; k < ncases; k++) {
        fast_cpu_matches_serial(&cases[k].sim, cases[k].steps, cases[k].name);
        sciddicat_free(&cases[k].sim);
    }
}

/* The point of the variant: on mostly dry data the region is a small part of the grid. */
Test(fast, region_stays_near_the_debris)
{
    sciddicat sim;
    int steps;
    char md5[33];
    lk_test_load_dataset("sciddicat-odd", &sim, &steps, md5);
    double *h = malloc((size_t)sim.rows * sim.cols * sizeof *h);
    cr_assert(h, "out of memory");
    const size_t fewest = fast_cpu_run(&sim, steps, 1, h);
    const size_t interior = (size_t)(sim.rows - 2) * (sim.cols - 2);
    cr_assert_lt(fewest, interior / 4, "the fewest cells a step updated is %zu of %zu", fewest,
                 interior);
    free(h);
    sciddicat_free(&sim);
}

/* A -0.0 thickness (a text grid may say "-0") becomes +0.0 in the reference's first step:
   the first two steps must rewrite every interior cell of both buffers. */
Test(fast, negative_zero_thickness_is_rewritten_as_the_reference_does)
{
    sciddicat sim;
    int steps;
    char md5[33];
    lk_test_load_dataset("sciddicat-odd", &sim, &steps, md5);
    for (int i = 1; i < sim.rows - 1; i += 7)
        for (int j = 1; j < sim.cols - 1; j += 5)
            if (sim.h0[sciddicat_at(i, j, sim.cols)] == 0.0)
                sim.h0[sciddicat_at(i, j, sim.cols)] = -0.0;
    const size_t n = (size_t)sim.rows * sim.cols;
    double *expected = malloc(n * sizeof *expected), *got = malloc(n * sizeof *got);
    cr_assert(expected && got, "out of memory");
    lk_error err;
    for (int s = 1; s <= 3; s++) {
        LK_ASSERT_OK(sciddicat_serial(&sim, s, expected, NULL, &err), &err);
        fast_cpu_run(&sim, s, 1, got);
        lk_assert_grid_eq(expected, got, sim.rows, sim.cols, "-0.0 cells, fast on the CPU");
        /* The planted bug: starting from the wet cells' box leaves those -0.0 in place. */
        fast_cpu_run(&sim, s, 0, got);
        lk_compare c;
        cr_assert_neq(lk_compare_grids(expected, got, sim.rows, sim.cols, 8, &c), 0,
                      "%d steps: starting from the wet box went unnoticed", s);
    }
    free(expected);
    free(got);
    sciddicat_free(&sim);
}
