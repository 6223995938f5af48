/* Lab 04 test helpers (read-only): problems for the tests, and the "every interior cell
   updated exactly once" checks of one launcher call against the serial per-cell code.
   The checks return the number of bad cells and an explanation, so that the CPU tests can
   show that they catch a planted bug; the GPU tests assert on them. */
#ifndef LAB04_TESTING_H
#define LAB04_TESTING_H

#include <stdarg.h>
#include <stdint.h>

#include "given.h"
#include "labkit/manifest.h"
#include "labkit/rng.h"
#include "sciddicat/sciddicat_testing.h"

/* ---- Problems ------------------------------------------------------------------------- */

/* @p src turned clockwise by @p quarter_turns quarter turns (z and h0; owned by @p dst). Flow
   leaving through the South border of @p src leaves through West, North, East after 1, 2, 3. */
static inline void lab04_rotate(const sciddicat *src, int quarter_turns, sciddicat *dst)
{
    const int turns = ((quarter_turns % 4) + 4) % 4;
    const int rows = turns % 2 ? src->cols : src->rows, cols = turns % 2 ? src->rows : src->cols;
    const size_t n = (size_t)rows * cols;
    memset(dst, 0, sizeof *dst);
    dst->rows = rows;
    dst->cols = cols;
    dst->hdr = src->hdr;
    dst->hdr.nrows = rows;
    dst->hdr.ncols = cols;
    dst->z = (double *)malloc(n * sizeof *dst->z);
    dst->h0 = (double *)malloc(n * sizeof *dst->h0);
    cr_assert(dst->z && dst->h0, "out of memory");
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++) {
            int si = i, sj = j; /* the source cell that lands on (i, j) */
            switch (turns) {
            case 1: si = src->rows - 1 - j; sj = i; break;
            case 2: si = src->rows - 1 - i; sj = src->cols - 1 - j; break;
            case 3: si = j; sj = src->cols - 1 - i; break;
            default: break;
            }
            dst->z[sciddicat_at(i, j, cols)] = src->z[sciddicat_at(si, sj, src->cols)];
            dst->h0[sciddicat_at(i, j, cols)] = src->h0[sciddicat_at(si, sj, src->cols)];
        }
}

enum { LAB04_NORTH, LAB04_WEST, LAB04_EAST, LAB04_SOUTH };
static const char *const lab04_border_names[4] = {"North", "West", "East", "South"};

/* The serial reference, step by step, adding up the thickness that leaves through each
   border (indexed LAB04_NORTH..LAB04_SOUTH); @p h receives the final thickness. */
static inline void lab04_serial_outflow(const sciddicat *sim, int steps, double *h,
                                        double out[4])
{
    const int rows = sim->rows, cols = sim->cols;
    const size_t n = (size_t)rows * cols;
    double *Sf = (double *)calloc(SCIDDICAT_NFLOWS * n, sizeof *Sf);
    cr_assert(Sf, "out of memory");
    memcpy(h, sim->h0, n * sizeof *h);
    for (int b = 0; b < 4; b++)
        out[b] = 0.0;
    for (int s = 0; s < steps; s++) {
        for (int i = 1; i < rows - 1; i++)
            for (int j = 1; j < cols - 1; j++) {
                sciddicat_reset_cell(i, j, rows, cols, Sf);
                sciddicat_flows_cell(i, j, rows, cols, sim->z, h, Sf, SCIDDICAT_P_R,
                                     SCIDDICAT_P_EPSILON);
            }
        for (int j = 1; j < cols - 1; j++) {
            out[LAB04_NORTH] += Sf[sciddicat_flow_at(0, 1, j, rows, cols)];
            out[LAB04_SOUTH] += Sf[sciddicat_flow_at(3, rows - 2, j, rows, cols)];
        }
        for (int i = 1; i < rows - 1; i++) {
            out[LAB04_WEST] += Sf[sciddicat_flow_at(1, i, 1, rows, cols)];
            out[LAB04_EAST] += Sf[sciddicat_flow_at(2, i, cols - 2, rows, cols)];
        }
        for (int i = 1; i < rows - 1; i++)
            for (int j = 1; j < cols - 1; j++)
                h[sciddicat_at(i, j, cols)] = sciddicat_width_cell(i, j, rows, cols, h, Sf);
    }
    free(Sf);
}

/* A problem whose debris leaves through given borders, for the border-coverage tests. */
typedef struct lab04_border_case {
    char name[96];
    sciddicat sim;
    int steps;
    char md5[33];      /* the manifest's hash of the result, "" when there is none */
    int must_leave[4]; /* borders (LAB04_NORTH..LAB04_SOUTH) the debris must leave through */
    double fraction;   /* ... each carrying at least this fraction of the initial mass */
} lab04_border_case;

#define LAB04_MAX_BORDER_CASES 16

/* sciddicat-border (a plane: the debris leaves through the South border) turned four ways,
   and every manifest dataset of the "dome" terrain (a pyramid with the debris on top: it
   leaves through all four borders). Returns the number of cases; free each sim. */
static inline int lab04_border_cases(lab04_border_case *cases)
{
    static const int leaves[4] = {LAB04_SOUTH, LAB04_WEST, LAB04_NORTH, LAB04_EAST};
    static const char *const turned[4] = {"", " turned 1/4 (flow leaving West)",
                                          " turned 2/4 (flow leaving North)",
                                          " turned 3/4 (flow leaving East)"};
    int n = 0, steps;
    char md5[33];
    sciddicat plane;
    lk_test_load_dataset("sciddicat-border", &plane, &steps, md5);
    for (int t = 0; t < 4; t++, n++) {
        lab04_border_case *c = &cases[n];
        memset(c, 0, sizeof *c);
        snprintf(c->name, sizeof c->name, "sciddicat-border%s", turned[t]);
        lab04_rotate(&plane, t, &c->sim);
        c->steps = steps;
        if (t == 0)
            strcpy(c->md5, md5);
        c->must_leave[leaves[t]] = 1;
        c->fraction = 0.5;
    }
    sciddicat_free(&plane);

    char path[4096];
    lk_manifest m;
    lk_error err;
    LK_ASSERT_OK(lk_manifest_read(lk_test_path(path, sizeof path, "datasets/MANIFEST"), &m, &err), &err);
    for (int k = 0; k < m.n && n < LAB04_MAX_BORDER_CASES; k++) {
        if (strcmp(m.e[k].model, "sciddicat") != 0 || strncmp(m.e[k].spec, "dome:", 5) != 0)
            continue;
        lab04_border_case *c = &cases[n++];
        memset(c, 0, sizeof *c);
        snprintf(c->name, sizeof c->name, "%s", m.e[k].name);
        lk_test_load_dataset(m.e[k].name, &c->sim, &c->steps, c->md5);
        for (int b = 0; b < 4; b++)
            c->must_leave[b] = 1;
        c->fraction = 0.1;
    }
    lk_manifest_free(&m);
    return n;
}

static inline int lab04_interior(int i, int j, int rows, int cols)
{
    return i > 0 && j > 0 && i < rows - 1 && j < cols - 1;
}

/* Random state for one-call tests: h in [1, 2) everywhere; z a dome, 3 m higher per cell away
   from the nearest border, plus noise in [0, 0.5). Every interior cell then has a neighbour
   whose z + h is below its own z + p_epsilon, so it sends a nonzero outflow: a cell that a
   kernel skips keeps the reset's zeros and cannot go unnoticed. */
static inline void lab04_random_state(int rows, int cols, uint64_t seed, double *z, double *h)
{
    lk_rng rng;
    lk_rng_seed(&rng, seed);
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++) {
            int d = i;
            if (j < d) d = j;
            if (rows - 1 - i < d) d = rows - 1 - i;
            if (cols - 1 - j < d) d = cols - 1 - j;
            z[sciddicat_at(i, j, cols)] = 100.0 + 3.0 * d + 0.5 * lk_rng_uniform(&rng);
            h[sciddicat_at(i, j, cols)] = 1.0 + lk_rng_uniform(&rng);
        }
}

/* Random outflows in [0.25, 0.5) for interior cells, 0 for border cells (as in a real step:
   border cells never compute outflows). */
static inline void lab04_random_flows(int rows, int cols, uint64_t seed, double *Sf)
{
    lk_rng rng;
    lk_rng_seed(&rng, seed);
    for (int k = 0; k < SCIDDICAT_NFLOWS; k++)
        for (int i = 0; i < rows; i++)
            for (int j = 0; j < cols; j++)
                Sf[sciddicat_flow_at(k, i, j, rows, cols)] =
                    lab04_interior(i, j, rows, cols) ? 0.25 + 0.25 * lk_rng_uniform(&rng) : 0.0;
}

/* Serial width update of every interior cell, in place (the serial reference's loop). */
static inline void lab04_serial_width(int rows, int cols, double *h, const double *Sf)
{
    for (int i = 1; i < rows - 1; i++)
        for (int j = 1; j < cols - 1; j++)
            h[sciddicat_at(i, j, cols)] = sciddicat_width_cell(i, j, rows, cols, h, Sf);
}

/* Serial flows computation of every interior cell into Sf (not reset here). */
static inline void lab04_serial_flows(int rows, int cols, const double *z, const double *h,
                                      double *Sf)
{
    for (int i = 1; i < rows - 1; i++)
        for (int j = 1; j < cols - 1; j++)
            sciddicat_flows_cell(i, j, rows, cols, z, h, Sf, SCIDDICAT_P_R,
                                 SCIDDICAT_P_EPSILON);
}

/* ---- Exactly-once checks ------------------------------------------------------------- */

/**
 * Input of a one-call flows check: Sf as the reset leaves it (zeros inside) but with the
 * border outflows poisoned, so that a border outflow written shows; @p expected receives
 * the serial flows of that input.
 */
static inline void lab04_flows_input(int rows, int cols, const double *z, const double *h,
                                     double *Sf, double *expected)
{
    const size_t nf = (size_t)SCIDDICAT_NFLOWS * rows * cols;
    for (int k = 0; k < SCIDDICAT_NFLOWS; k++)
        for (int i = 0; i < rows; i++)
            for (int j = 0; j < cols; j++) {
                const size_t at = sciddicat_flow_at(k, i, j, rows, cols);
                if (lab04_interior(i, j, rows, cols))
                    Sf[at] = 0.0;
                else
                    lk_poison(&Sf[at], 1);
            }
    memcpy(expected, Sf, nf * sizeof *Sf);
    lab04_serial_flows(rows, cols, z, h, expected);
}

static inline int lab04_same(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

/* Bad cells of one kind: how many, where, and the first few. */
typedef struct lab04_bad {
    const char *what;
    size_t n;
    int min_row, max_row, min_col, max_col;
    char first[512];
    size_t first_len;
} lab04_bad;

static inline void lab04_bad_init(lab04_bad *b, const char *what)
{
    memset(b, 0, sizeof *b);
    b->what = what;
}

__attribute__((format(printf, 4, 5))) static inline void
lab04_bad_add(lab04_bad *b, int i, int j, const char *fmt, ...)
{
    if (b->n == 0 || i < b->min_row) b->min_row = i;
    if (b->n == 0 || i > b->max_row) b->max_row = i;
    if (b->n == 0 || j < b->min_col) b->min_col = j;
    if (b->n == 0 || j > b->max_col) b->max_col = j;
    if (b->n < 4 && b->first_len < sizeof b->first - 1) {
        int k = snprintf(b->first + b->first_len, sizeof b->first - b->first_len, " (%d, %d)",
                         i, j);
        if (k > 0) b->first_len += (size_t)k;
        va_list ap;
        va_start(ap, fmt);
        if (b->first_len < sizeof b->first - 1) {
            k = vsnprintf(b->first + b->first_len, sizeof b->first - b->first_len, fmt, ap);
            if (k > 0) b->first_len += (size_t)k;
        }
        va_end(ap);
        if (b->first_len > sizeof b->first - 1) b->first_len = sizeof b->first - 1;
    }
    b->n++;
}

/* Append "N cells <what> (rows a..b, cols c..d), e.g. ..." to msg. */
static inline void lab04_bad_report(const lab04_bad *b, char *msg, size_t size)
{
    size_t len = strlen(msg);
    if (b->n == 0 || len >= size - 1)
        return;
    snprintf(msg + len, size - len, "\n  %zu cell%s %s (rows %d..%d, cols %d..%d), e.g.%s%s",
             b->n, b->n == 1 ? "" : "s", b->what, b->min_row, b->max_row, b->min_col,
             b->max_col, b->first, b->n > 4 ? " ..." : "");
}

/* One width-update call on @p before (in place) should give @p expected: classify each cell
   of @p got. @p twice is the serial update applied to @p expected again (what a cell updated
   twice in sequence holds). Returns the number of bad cells; the explanation goes to msg. */
static inline size_t lab04_check_width_once(int rows, int cols, const double *before,
                                            const double *expected, const double *twice,
                                            const double *got, char *msg, size_t size)
{
    lab04_bad skipped, doubled, wrong, border;
    lab04_bad_init(&skipped, "not updated (still the thickness before the call): a tile or "
                             "bounds test misses them");
    lab04_bad_init(&doubled, "updated twice (the increment added twice): tiles overlap");
    lab04_bad_init(&wrong, "with a wrong value");
    lab04_bad_init(&border, "on the border written (border cells must never change)");
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++) {
            const size_t at = sciddicat_at(i, j, cols);
            const double g = got[at];
            if (!lab04_interior(i, j, rows, cols)) {
                if (!lab04_same(g, before[at]))
                    lab04_bad_add(&border, i, j, ": %.17g -> %.17g", before[at], g);
            } else if (lab04_same(g, expected[at])) {
                continue;
            } else if (lab04_same(g, before[at])) {
                lab04_bad_add(&skipped, i, j, ": still %.17g, expected %.17g", g, expected[at]);
            } else if (lab04_same(g, twice[at])) {
                lab04_bad_add(&doubled, i, j, ": %.17g, expected %.17g", g, expected[at]);
            } else {
                lab04_bad_add(&wrong, i, j, ": expected %.17g, got %.17g", expected[at], g);
            }
        }
    msg[0] = '\0';
    lab04_bad_report(&skipped, msg, size);
    lab04_bad_report(&doubled, msg, size);
    lab04_bad_report(&wrong, msg, size);
    lab04_bad_report(&border, msg, size);
    return skipped.n + doubled.n + wrong.n + border.n;
}

/* One flows call on interior outflows zeroed by the reset and border outflows poisoned
   should give @p expected (border entries: still the poison). */
static inline size_t lab04_check_flows_once(int rows, int cols, const double *expected,
                                            const double *got, char *msg, size_t size)
{
    lab04_bad skipped, wrong, border;
    lab04_bad_init(&skipped, "not computed (their four outflows still the reset's zeros): a "
                             "tile or bounds test misses them");
    lab04_bad_init(&wrong, "with a wrong outflow");
    lab04_bad_init(&border, "on the border with an outflow written (border cells' outflows "
                            "must never be written)");
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++) {
            int zeros = 0, bad = -1, written = -1;
            for (int k = 0; k < SCIDDICAT_NFLOWS; k++) {
                const size_t at = sciddicat_flow_at(k, i, j, rows, cols);
                zeros += got[at] == 0.0;
                if (bad < 0 && !lab04_same(got[at], expected[at]))
                    bad = k;
                if (written < 0 && !lk_is_poison(got[at]))
                    written = k;
            }
            if (!lab04_interior(i, j, rows, cols)) {
                if (written >= 0)
                    lab04_bad_add(&border, i, j, ": outflow %d is %.17g", written,
                                  got[sciddicat_flow_at(written, i, j, rows, cols)]);
            } else if (bad >= 0) {
                const size_t at = sciddicat_flow_at(bad, i, j, rows, cols);
                if (zeros == SCIDDICAT_NFLOWS)
                    lab04_bad_add(&skipped, i, j, "%s", "");
                else
                    lab04_bad_add(&wrong, i, j, ": outflow %d expected %.17g, got %.17g", bad,
                                  expected[at], got[at]);
            }
        }
    msg[0] = '\0';
    lab04_bad_report(&skipped, msg, size);
    lab04_bad_report(&wrong, msg, size);
    lab04_bad_report(&border, msg, size);
    return skipped.n + wrong.n + border.n;
}

/* One fused step into an output poisoned everywhere should give @p expected on interior
   cells and leave the border poisoned. */
static inline size_t lab04_check_fused_once(int rows, int cols, const double *expected,
                                            const double *got, char *msg, size_t size)
{
    lab04_bad skipped, wrong, border;
    lab04_bad_init(&skipped, "not written (still the poison): a tile or bounds test misses them");
    lab04_bad_init(&wrong, "with a wrong value");
    lab04_bad_init(&border, "on the border written (the step must not write border cells)");
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++) {
            const size_t at = sciddicat_at(i, j, cols);
            if (!lab04_interior(i, j, rows, cols)) {
                if (!lk_is_poison(got[at]))
                    lab04_bad_add(&border, i, j, ": %.17g", got[at]);
            } else if (lk_is_poison(got[at])) {
                lab04_bad_add(&skipped, i, j, "%s", "");
            } else if (!lab04_same(got[at], expected[at])) {
                lab04_bad_add(&wrong, i, j, ": expected %.17g, got %.17g", expected[at], got[at]);
            }
        }
    msg[0] = '\0';
    lab04_bad_report(&skipped, msg, size);
    lab04_bad_report(&wrong, msg, size);
    lab04_bad_report(&border, msg, size);
    return skipped.n + wrong.n + border.n;
}

/* ---- The sizes and tiles of the one-call tests ---------------------------------------- */

/* Odd sizes, 3-cell strips, a 2 x 2 interior, an interior that is an exact multiple of the
   usual tiles (128 x 256) and the course size. */
static const int lab04_once_sizes[][2] = {{97, 131}, {3, 67}, {67, 3}, {4, 4}, {130, 258},
                                          {610, 496}};
#define LAB04_NSIZES ((int)(sizeof lab04_once_sizes / sizeof lab04_once_sizes[0]))

/* Tiles (x, y) tried with every size; the largest tile of each variant is added. */
static const int lab04_once_tiles[][2] = {{32, 8}, {16, 16}, {7, 5}, {1, 1}, {13, 3}, {3, 13}};
#define LAB04_NTILES ((int)(sizeof lab04_once_tiles / sizeof lab04_once_tiles[0]))

/* Whether a tile of the lists above applies to a variant: a fast block holds at least one
   whole warp (lab04_check_tile). */
static inline int lab04_tile_applies(lab04_variant v, int tx, int ty)
{
    return v != LAB04_FAST || tx * ty >= LAB04_FAST_MIN_THREADS;
}

/* The largest square tile of a variant: its block has (at most) 1024 threads. */
static inline int lab04_max_square_tile(lab04_variant v)
{
    return v == LAB04_NOHALO || v == LAB04_FAST ? 32 : 30;
}

/* ---- The fast variant's algorithm on the CPU, without tiles: what its kernel must do ---- */

/* Outflows of cell (i, j), zero for a border or still cell (whose reference outflows are
   zero: sciddicat_is_still). */
static inline void lab04_flows_or_zero(int rows, int cols, const double *z, const double *h,
                                       int i, int j, double f[4])
{
    for (int k = 0; k < 4; k++)
        f[k] = 0.0;
    const size_t at = sciddicat_at(i, j, cols);
    if (!lab04_interior(i, j, rows, cols) || sciddicat_is_still(h[at]))
        return;
    const double zn[5] = {z[at], z[at - cols], z[at - 1], z[at + 1], z[at + cols]};
    const double hn[5] = {h[at], h[at - cols], h[at - 1], h[at + 1], h[at + cols]};
    lab04_cell_flows(zn, hn, f);
}

/* Step @p step: the cells of lab04_fast_region from h_in into h_out, the boxes rotated as the
   kernel does. Returns the number of cells updated. */
static inline size_t lab04_fast_cpu_step(int step, int rows, int cols, const double *z,
                                         const double *h_in, double *h_out,
                                         lab04_box boxes[LAB04_FAST_BOXES])
{
    const lab04_box region = lab04_fast_region(boxes, step, rows, cols);
    lab04_box wet = boxes[lab04_fast_slot(step, LAB04_WET_NEXT)];
    boxes[lab04_fast_slot(step, LAB04_TO_CLEAR)] = lab04_box_empty();
    size_t updated = 0;
    for (int i = region.r0; i <= region.r1; i++)
        for (int j = region.c0; j <= region.c1; j++) {
            double out[4], fn[4], fw[4], fe[4], fs[4];
            lab04_flows_or_zero(rows, cols, z, h_in, i, j, out);
            lab04_flows_or_zero(rows, cols, z, h_in, i - 1, j, fn);
            lab04_flows_or_zero(rows, cols, z, h_in, i, j - 1, fw);
            lab04_flows_or_zero(rows, cols, z, h_in, i, j + 1, fe);
            lab04_flows_or_zero(rows, cols, z, h_in, i + 1, j, fs);
            const double in[4] = {fn[3], fw[2], fe[1], fs[0]};
            const size_t at = sciddicat_at(i, j, cols);
            h_out[at] = lab04_cell_width(h_in[at], in, out);
            updated++;
            if (!sciddicat_is_still(h_out[at])) {
                wet.r0 = i < wet.r0 ? i : wet.r0;
                wet.r1 = i > wet.r1 ? i : wet.r1;
                wet.c0 = j < wet.c0 ? j : wet.c0;
                wet.c1 = j > wet.c1 ? j : wet.c1;
            }
        }
    boxes[lab04_fast_slot(step, LAB04_WET_NEXT)] = wet;
    return updated;
}

#endif
