/* CPU tests of the given code: the row split and the CPU back end of the per-rank step on
   one slab, against the serial reference. No MPI ranks, no GPU. */
#include "given.h"
#include "sciddicat/sciddicat_testing.h"

/* Every row owned by exactly one rank, in rank order, sizes within one of each other, at
   least LAB07_MIN_ROWS per active rank, empty ranks only after the active ones. */
static void check_split(int rows, int nranks)
{
    int next = 0, active = 0, smallest = rows + 1, largest = 0, seen_empty = 0;
    for (int r = 0; r < nranks; r++) {
        int first, n;
        lab07_decompose(rows, nranks, r, &first, &n);
        if (n == 0) {
            cr_assert_eq(first, rows, "%d rows, %d ranks: empty rank %d starts at %d, not %d",
                         rows, nranks, r, first, rows);
            seen_empty = 1;
            continue;
        }
        cr_assert(!seen_empty, "%d rows, %d ranks: rank %d owns rows after an empty rank",
                  rows, nranks, r);
        cr_assert_eq(first, next, "%d rows, %d ranks: rank %d starts at row %d, expected %d",
                     rows, nranks, r, first, next);
        next += n;
        active++;
        smallest = n < smallest ? n : smallest;
        largest = n > largest ? n : largest;
    }
    cr_assert_eq(next, rows, "%d rows, %d ranks: the ranks own %d rows", rows, nranks, next);
    cr_assert_leq(largest - smallest, 1, "%d rows, %d ranks: slabs of %d to %d rows", rows,
                  nranks, smallest, largest);
    if (active > 1)
        cr_assert_geq(smallest, LAB07_MIN_ROWS, "%d rows, %d ranks: a slab of %d rows", rows,
                      nranks, smallest);
    const int expected_active = rows / LAB07_MIN_ROWS < 1 ? 1
                                : rows / LAB07_MIN_ROWS < nranks ? rows / LAB07_MIN_ROWS : nranks;
    cr_assert_eq(active, expected_active, "%d rows, %d ranks: %d active ranks", rows, nranks,
                 active);
}

Test(split, every_row_once_any_size)
{
    for (int rows = 1; rows <= 70; rows++)
        for (int nranks = 1; nranks <= 17; nranks++)
            check_split(rows, nranks);
    check_split(8192, 3);
    check_split(16384, 8);
}

Test(split, uneven_rows_go_to_the_first_ranks)
{
    int first, n;
    lab07_decompose(97, 3, 0, &first, &n);
    cr_assert(first == 0 && n == 33);
    lab07_decompose(97, 3, 2, &first, &n);
    cr_assert(first == 65 && n == 32);
    lab07_decompose(3, 4, 1, &first, &n);
    cr_assert(first == 3 && n == 0, "3 rows, 4 ranks: rank 1 is empty");
}

/* A slab as given.c makes it, for one rank owning [first, first + nrows) of sim. */
static void slab_of(const sciddicat *sim, int first, int nrows, lab07_slab *s)
{
    memset(s, 0, sizeof *s);
    s->rows = sim->rows;
    s->cols = sim->cols;
    s->first = first;
    s->nrows = nrows;
    s->lrows = nrows + 2 * LAB07_GHOST;
    s->up = s->down = MPI_PROC_NULL;
    const size_t n = (size_t)s->lrows * s->cols;
    s->z = malloc(n * sizeof *s->z);
    s->h = malloc(n * sizeof *s->h);
    s->Sf = calloc(SCIDDICAT_NFLOWS * n, sizeof *s->Sf);
    cr_assert(s->z && s->h && s->Sf);
    lk_poison(s->z, n);
    lk_poison(s->h, n);
    for (int l = 0; l < s->lrows; l++) {
        const int g = first - LAB07_GHOST + l;
        if (g < 0 || g >= sim->rows)
            continue;
        memcpy(s->z + (size_t)l * s->cols, sim->z + (size_t)g * s->cols, s->cols * sizeof(double));
        memcpy(s->h + (size_t)l * s->cols, sim->h0 + (size_t)g * s->cols, s->cols * sizeof(double));
    }
}

static void slab_free(lab07_slab *s)
{
    free(s->z);
    free(s->h);
    free(s->Sf);
}

/* One rank owning the whole grid: the CPU back end's steps are serial.c's. */
static void whole_grid_equals_serial(const char *dataset)
{
    sciddicat sim;
    int steps;
    lk_test_load_dataset(dataset, &sim, &steps, NULL);
    lab07_slab s;
    slab_of(&sim, 0, sim.rows, &s);
    for (int step = 0; step < steps; step++) {
        lab07_cpu_flows(&s, LAB07_GHOST - 1, LAB07_GHOST + sim.rows + 1);
        lab07_cpu_width(&s, LAB07_GHOST, LAB07_GHOST + sim.rows);
    }
    const size_t n = (size_t)sim.rows * sim.cols;
    double *expected = malloc(n * sizeof *expected);
    lk_error err;
    LK_ASSERT_OK(sciddicat_serial(&sim, steps, expected, NULL, &err), &err);
    char what[128];
    snprintf(what, sizeof what, "%s, %d steps, CPU back end on one slab", dataset, steps);
    lk_assert_grid_eq(expected, s.h + (size_t)LAB07_GHOST * sim.cols, sim.rows, sim.cols, what);
    free(expected);
    slab_free(&s);
    sciddicat_free(&sim);
}

Test(cpu_back_end, whole_grid_odd) { whole_grid_equals_serial("sciddicat-odd"); }
Test(cpu_back_end, whole_grid_border) { whole_grid_equals_serial("sciddicat-border"); }
Test(cpu_back_end, whole_grid_thin_rows) { whole_grid_equals_serial("sciddicat-thin-rows"); }
Test(cpu_back_end, whole_grid_row_strip) { whole_grid_equals_serial("sciddicat-row-strip"); }

/* Rows of a slab that are not interior rows of the grid are never computed: the border
   rows, and ghost rows beyond the grid. */
Test(cpu_back_end, interior_rows_clip_to_the_grid)
{
    lab07_slab s = {.rows = 10, .cols = 5, .first = 0, .nrows = 5, .lrows = 9};
    int b, e;
    cr_assert_eq(lab07_interior_rows(&s, 0, 9, &b, &e), 6); /* global rows 1..6 */
    cr_assert(b == 3 && e == 9, "got [%d, %d)", b, e);
    s.first = 5;
    cr_assert_eq(lab07_interior_rows(&s, 0, 9, &b, &e), 6); /* global rows 3..8 */
    cr_assert(b == 0 && e == 6, "got [%d, %d)", b, e);
    cr_assert_eq(lab07_interior_rows(&s, 7, 9, &b, &e), 0); /* global rows 10, 11: outside */
    s.rows = 1, s.first = 0, s.nrows = 1, s.lrows = 5;
    cr_assert_eq(lab07_interior_rows(&s, 0, 5, &b, &e), 0);
}

/* A step on rows next to a ghost row that was never filled reads NaN: the poison shows
   what a missing exchange does (the MPI tests rely on it). */
Test(cpu_back_end, unfilled_ghost_rows_spread_nan)
{
    sciddicat sim;
    lk_test_load_dataset("sciddicat-odd", &sim, NULL, NULL);
    lab07_slab s;
    slab_of(&sim, 40, 20, &s);
    for (int l = 0; l < LAB07_GHOST; l++)
        lk_poison(s.h + (size_t)l * s.cols, s.cols);
    lab07_cpu_flows(&s, LAB07_GHOST - 1, LAB07_GHOST + s.nrows + 1);
    lab07_cpu_width(&s, LAB07_GHOST, LAB07_GHOST + s.nrows);
    int nan_cells = 0;
    for (int j = 1; j < s.cols - 1; j++)
        nan_cells += lk_is_poison(s.h[(size_t)LAB07_GHOST * s.cols + j]) ||
                     isnan(s.h[(size_t)LAB07_GHOST * s.cols + j]);
    cr_assert_gt(nan_cells, 0, "a NaN ghost row should reach the first owned row");
    slab_free(&s);
    sciddicat_free(&sim);
}
