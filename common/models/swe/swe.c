#include "swe/swe.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "labkit/cli.h"
#include "labkit/compare.h"
#include "labkit/grid_io.h"
#include "labkit/manifest.h"
#include "labkit/md5.h"
#include "labkit/parallel.h"
#include "labkit/png.h"
#include "labkit/rng.h"

int swe_spec_parse(const char *s, swe_spec *out, lk_error *err)
{
    static const char *forms = "use dam:ROWSxCOLS, damrot:ROWSxCOLS or bumps:ROWSxCOLS:SEED, "
                               "e.g. dam:256x256";
    char buf[128];
    if (strlen(s) >= sizeof buf)
        return lk_fail(err, "generator spec '%.40s...' is too long: %s", s, forms);
    strcpy(buf, s);
    char *kind = buf, *dims = strchr(buf, ':'), *seed = NULL;
    if (dims) {
        *dims++ = '\0';
        seed = strchr(dims, ':');
        if (seed)
            *seed++ = '\0';
    }
    swe_spec spec = {0};
    if (strcmp(kind, "dam") == 0)
        spec.kind = SWE_DAM;
    else if (strcmp(kind, "damrot") == 0)
        spec.kind = SWE_DAM_ROT;
    else if (strcmp(kind, "bumps") == 0)
        spec.kind = SWE_BUMPS;
    else
        return lk_fail(err, "generator spec '%s': unknown kind '%s': %s", s, kind, forms);
    if (!dims)
        return lk_fail(err, "generator spec '%s' is malformed: %s", s, forms);
    if (spec.kind == SWE_BUMPS && !seed)
        return lk_fail(err, "generator spec '%s': bumps needs a seed: bumps:ROWSxCOLS:SEED", s);
    if (spec.kind != SWE_BUMPS && seed)
        return lk_fail(err, "generator spec '%s': a %s has no seed: write %s:ROWSxCOLS", s,
                       kind, kind);
    lk_error sub;
    if (lk_parse_grid_size(dims, &spec.rows, &spec.cols, &sub) != 0 ||
        (seed && lk_parse_seed("seed", seed, &spec.seed, &sub) != 0))
        return lk_fail(err, "generator spec '%s': %s", s, sub.msg);
    if ((long long)(spec.rows + 2) * (spec.cols + 2) > LK_GRID_MAX_CELLS)
        return lk_fail(err, "generator spec '%s': %d x %d cells is too many (at most %lld "
                            "with the ghost layer)", s, spec.rows, spec.cols, LK_GRID_MAX_CELLS);
    *out = spec;
    return 0;
}

int swe_fields_alloc(swe_fields *f, int rows, int cols, lk_error *err)
{
    memset(f, 0, sizeof *f);
    if (rows < 1 || cols < 1)
        return lk_fail(err, "shallow water: %d x %d is not a grid: rows and cols must be >= 1",
                       rows, cols);
    if (rows > LK_GRID_MAX_DIM || cols > LK_GRID_MAX_DIM ||
        (long long)(rows + 2) * (cols + 2) > LK_GRID_MAX_CELLS)
        return lk_fail(err, "shallow water: %d x %d cells is too many: use a smaller grid",
                       rows, cols);
    size_t n = (size_t)(rows + 2) * (size_t)(cols + 2);
    f->Z = calloc(n, sizeof *f->Z);
    f->Qx = calloc(n, sizeof *f->Qx);
    f->Qy = calloc(n, sizeof *f->Qy);
    if (!f->Z || !f->Qx || !f->Qy) {
        swe_fields_free(f);
        return lk_fail(err, "shallow water: out of memory for a %d x %d state (%.1f MiB): use "
                            "a smaller grid", rows, cols, 3.0 * n * sizeof(double) / 1048576.0);
    }
    return 0;
}

void swe_fields_free(swe_fields *f)
{
    free(f->Z);
    free(f->Qx);
    free(f->Qy);
    f->Z = f->Qx = f->Qy = NULL;
}

void swe_fields_copy(const swe *sim, const swe_fields *src, const swe_fields *dst)
{
    size_t bytes = swe_cells(sim) * sizeof(double);
    memcpy(dst->Z, src->Z, bytes);
    memcpy(dst->Qx, src->Qx, bytes);
    memcpy(dst->Qy, src->Qy, bytes);
}

int swe_alloc(swe *sim, int rows, int cols, double dx, lk_error *err)
{
    memset(sim, 0, sizeof *sim);
    if (!(dx > 0.0) || !isfinite(dx))
        return lk_fail(err, "shallow water: cell size %g: it must be a positive number", dx);
    if (swe_fields_alloc(&sim->q, rows, cols, err) != 0)
        return -1;
    sim->rows = rows;
    sim->cols = cols;
    sim->dx = dx;
    return 0;
}

void swe_free(swe *sim)
{
    swe_fields_free(&sim->q);
    memset(sim, 0, sizeof *sim);
}

int swe_time_step(const swe *sim, const swe_fields *q, double *dt, lk_error *err)
{
    const int width = sim->cols + 2;
    double smax = 0.0;
    for (int i = 1; i <= sim->rows; i++)
        for (int j = 1; j <= sim->cols; j++) {
            size_t at = swe_at(i, j, width);
            double z = q->Z[at], qx = q->Qx[at], qy = q->Qy[at];
            if (!isfinite(z) || !isfinite(qx) || !isfinite(qy))
                return lk_fail(err, "shallow water: cell (%d, %d) is not finite (Z %g, Qx %g, "
                                    "Qy %g)", i, j, z, qx, qy);
            if (!(z > 0.0))
                return lk_fail(err, "shallow water: cell (%d, %d) has water height %g: the "
                                    "scheme has no dry cells, every Z must be > 0", i, j, z);
            double s = fmax(fabs(qx), fabs(qy)) / z + sqrt(SWE_G * z);
            if (s > smax)
                smax = s;
        }
    *dt = SWE_COURANT * sim->dx / smax;
    return 0;
}

int swe_steps_for_time(const swe *sim, double seconds, int *steps, lk_error *err)
{
    if (!(seconds >= 0.0) || !isfinite(seconds))
        return lk_fail(err, "simulated time %g s: give a time >= 0", seconds);
    double n = ceil(seconds / sim->dt);
    if (n > 100000000.0)
        return lk_fail(err, "simulated time %g s needs %.0f steps of %g s: at most 100000000",
                       seconds, n, sim->dt);
    *steps = (int)n;
    return 0;
}

int swe_finish(swe *sim, lk_error *err)
{
    if (swe_time_step(sim, &sim->q, &sim->dt, err) != 0)
        return -1;
    swe_ghosts(sim->rows, sim->cols, &sim->q);
    return 0;
}

/* Round humps (1 - d^2/R^2)^2 on a lake: only +, -, *, / so every libm gives the same bits. */
static void add_bumps(swe *sim, unsigned long long seed)
{
    lk_rng rng;
    lk_rng_seed(&rng, seed);
    const double lx = sim->rows * sim->dx, ly = sim->cols * sim->dx;
    const int nbumps = 3 + (int)lk_rng_below(&rng, 6);
    const int width = sim->cols + 2;
    for (int b = 0; b < nbumps; b++) {
        double ci = lk_rng_uniform(&rng) * lx, cj = lk_rng_uniform(&rng) * ly;
        double radius = 20.0 + 100.0 * lk_rng_uniform(&rng);
        double height = 1.0 + 4.0 * lk_rng_uniform(&rng);
        /* Each cell adds the bumps in their order, whichever thread has its row. */
#pragma omp parallel for schedule(static) if ((long)sim->rows * sim->cols >= LK_PARALLEL_MIN_CELLS)
        for (int i = 1; i <= sim->rows; i++)
            for (int j = 1; j <= sim->cols; j++) {
                double di = ((i - 0.5) * sim->dx - ci) / radius;
                double dj = ((j - 0.5) * sim->dx - cj) / radius;
                double d2 = di * di + dj * dj;
                if (d2 < 1.0)
                    sim->q.Z[swe_at(i, j, width)] += height * (1.0 - d2) * (1.0 - d2);
            }
    }
}

int swe_generate(const swe_spec *spec, swe *sim, lk_error *err)
{
    const int rows = spec->rows, cols = spec->cols;
    const int along = spec->kind == SWE_DAM ? rows
                      : spec->kind == SWE_DAM_ROT ? cols
                      : rows > cols ? rows : cols;
    if (rows < 1 || cols < 1)
        return lk_fail(err, "generator: %d x %d is not a grid: rows and cols must be >= 1",
                       rows, cols);
    if (swe_alloc(sim, rows, cols, SWE_DOMAIN / along, err) != 0)
        return -1;
    const int width = cols + 2;
#pragma omp parallel for schedule(static) if ((long)rows * cols >= LK_PARALLEL_MIN_CELLS)
    for (int i = 1; i <= rows; i++)
        for (int j = 1; j <= cols; j++) {
            /* Deep where the cell centre is within 100 m of the wall: (k - 1/2) * 500 / n
               < 100, in integers so that every grid size gets the same rule exactly. */
            int k = spec->kind == SWE_DAM ? i : j;
            int deep = spec->kind != SWE_BUMPS && 5 * (2 * k - 1) < 2 * along;
            sim->q.Z[swe_at(i, j, width)] = deep ? SWE_DEEP : SWE_SHALLOW;
        }
    if (spec->kind == SWE_BUMPS)
        add_bumps(sim, spec->seed);
    if (swe_finish(sim, err) != 0) {
        swe_free(sim);
        return -1;
    }
    return 0;
}

/* A generator spec to a problem, for the manifest's datasets and --gen (labkit/manifest.h). */
static int generate_from_spec(const char *text, void *problem, lk_error *err)
{
    swe_spec spec;
    if (swe_spec_parse(text, &spec, err) != 0)
        return LK_BAD_SPEC;
    return swe_generate(&spec, problem, err);
}

const lk_dataset_kind swe_datasets = {
    .model = "swe", .noun = "shallow-water", .generate = generate_from_spec};

int swe_load_dataset(const char *manifest_path, const char *name, swe *sim, int *steps,
                     char *md5, lk_error *err)
{
    return lk_dataset_load(&swe_datasets, manifest_path, name, sim, steps, md5, err);
}

void swe_ghosts(int rows, int cols, const swe_fields *q)
{
    const int width = cols + 2;
    for (int j = 1; j <= cols; j++)
        swe_ghost_column_ends(j, rows, width, q->Z, q->Qx, q->Qy);
    for (int i = 1; i <= rows; i++)
        swe_ghost_row_ends(i, cols, width, q->Z, q->Qx, q->Qy);
}

double swe_mass(const swe *sim, const swe_fields *q)
{
    /* Neumaier summation: the test of conservation must see the scheme, not the sum. */
    const int width = sim->cols + 2;
    double sum = 0.0, comp = 0.0;
    for (int i = 1; i <= sim->rows; i++)
        for (int j = 1; j <= sim->cols; j++) {
            double v = q->Z[swe_at(i, j, width)], t = sum + v;
            comp += fabs(sum) >= fabs(v) ? (sum - t) + v : (v - t) + sum;
            sum = t;
        }
    return (sum + comp) * sim->dx * sim->dx;
}

/* Where the interior rows of a field go: an md5 or a file, as little-endian bytes. */
typedef struct sink {
    lk_md5 *md5;
    FILE *f;
    const char *path;
    unsigned char *buf;
} sink;

static int emit_fields(sink *s, const swe *sim, const swe_fields *q, lk_error *err)
{
    const int width = sim->cols + 2;
    const double *fields[3] = {q->Z, q->Qx, q->Qy};
    const size_t row_bytes = (size_t)sim->cols * 8;
    for (int k = 0; k < 3; k++)
        for (int i = 1; i <= sim->rows; i++) {
            const double *row = fields[k] + swe_at(i, 1, width);
            for (int j = 0; j < sim->cols; j++) {
                uint64_t bits;
                memcpy(&bits, &row[j], 8);
                for (int b = 0; b < 8; b++)
                    s->buf[(size_t)j * 8 + b] = (unsigned char)(bits >> (8 * b));
            }
            if (s->md5 && lk_md5_update(s->md5, s->buf, row_bytes, err) != 0)
                return -1;
            if (s->f && fwrite(s->buf, 1, row_bytes, s->f) != row_bytes)
                return lk_fail(err, "%s: write failed: %s: check the disk space", s->path,
                               strerror(errno));
        }
    return 0;
}

int swe_md5(const swe *sim, const swe_fields *q, char hex[33], lk_error *err)
{
    sink s = {.buf = malloc((size_t)sim->cols * 8)};
    if (!s.buf)
        return lk_fail(err, "md5: out of memory");
    s.md5 = lk_md5_begin(err);
    int rc = -1;
    if (s.md5) {
        if (emit_fields(&s, sim, q, err) == 0)
            rc = lk_md5_end(s.md5, hex, err);
        else
            lk_md5_abort(s.md5);
    }
    free(s.buf);
    return rc;
}

int swe_write_binary(const char *path, const swe *sim, const swe_fields *q,
                     lk_error *err)
{
    sink s = {.path = path, .buf = malloc((size_t)sim->cols * 8)};
    if (!s.buf)
        return lk_fail(err, "%s: out of memory", path);
    s.f = fopen(path, "wb");
    if (!s.f) {
        free(s.buf);
        return lk_fail(err, "%s: cannot open for writing: %s: check the folder exists", path,
                       strerror(errno));
    }
    int rc = emit_fields(&s, sim, q, err);
    if (fclose(s.f) != 0 && rc == 0)
        rc = lk_fail(err, "%s: write failed: %s: check the disk space", path, strerror(errno));
    free(s.buf);
    if (rc != 0)
        remove(path);
    return rc;
}

int swe_write_text(const char *path, const swe *sim, const swe_fields *q,
                   lk_error *err)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return lk_fail(err, "%s: cannot open for writing: %s: check the folder exists", path,
                       strerror(errno));
    const int width = sim->cols + 2;
    const char *names[3] = {"Z", "Qx", "Qy"};
    const double *fields[3] = {q->Z, q->Qx, q->Qy};
    for (int k = 0; k < 3; k++) {
        fprintf(f, "# %s %d %d\n", names[k], sim->rows, sim->cols);
        for (int i = 1; i <= sim->rows; i++)
            for (int j = 1; j <= sim->cols; j++)
                fprintf(f, "%.17g%c", fields[k][swe_at(i, j, width)],
                        j == sim->cols ? '\n' : ' ');
    }
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        remove(path);
        return lk_fail(err, "%s: write failed: %s: check the disk space", path, strerror(errno));
    }
    return 0;
}

int swe_write_png(const char *path, const swe *sim, const swe_fields *q,
                  const char *title, lk_error *err)
{
    const int width = sim->cols + 2;
    double *z = malloc((size_t)sim->rows * sim->cols * sizeof *z);
    if (!z)
        return lk_fail(err, "%s: out of memory for the picture", path);
    for (int i = 1; i <= sim->rows; i++)
        memcpy(z + (size_t)(i - 1) * sim->cols, q->Z + swe_at(i, 1, width),
               (size_t)sim->cols * sizeof *z);
    int rc = lk_png_field(path, z, sim->rows, sim->cols, title, err);
    free(z);
    return rc;
}

/* Bit-equality of two doubles (the comparison's rule: -0.0 differs from 0.0). */
static int same_bits(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

/* Differing cells in the band next to the walls: rows 1 and rows, columns 1 and cols. */
static size_t wall_band_diffs(const swe *sim, const double *e, const double *g)
{
    const int width = sim->cols + 2;
    size_t n = 0;
    for (int i = 1; i <= sim->rows; i++)
        for (int j = 1; j <= sim->cols; j++) {
            if (i != 1 && i != sim->rows && j != 1 && j != sim->cols)
                continue;
            size_t at = swe_at(i, j, width);
            n += !same_bits(e[at], g[at]);
        }
    return n;
}

/* Appends to a buffer and/or prints to a file. */
typedef struct explainer {
    FILE *f;
    char *buf;
    size_t size;
} explainer;

static void emit(explainer *o, const char *text)
{
    if (o->f)
        fputs(text, o->f);
    if (o->buf && o->size > 0) {
        size_t len = strlen(o->buf);
        snprintf(o->buf + len, o->size - len, "%s", text);
    }
}

size_t swe_compare(const swe *sim, const swe_fields *expected,
                   const swe_fields *got, int kfirst, const char *what, FILE *f,
                   char *buf, size_t size)
{
    static const char *names[3] = {"water height Z", "discharge Qx", "discharge Qy"};
    const double *ef[3] = {expected->Z, expected->Qx, expected->Qy};
    const double *gf[3] = {got->Z, got->Qx, got->Qy};
    const int rows = sim->rows, cols = sim->cols, width = cols + 2;
    const size_t cells = swe_cells(sim);
    explainer o = {f, buf, size};
    if (buf && size > 0)
        buf[0] = '\0';
    /* The ghost layer is not a result: explain with a copy of got whose ghosts are
       expected's (made only when there is something to explain). */
    double *masked = NULL;
    size_t total = 0, near_wall = 0;
    for (int k = 0; k < 3; k++) {
        size_t nd = 0;
        for (int i = 1; i <= rows; i++)
            for (int j = 1; j <= cols; j++)
                nd += !same_bits(ef[k][swe_at(i, j, width)], gf[k][swe_at(i, j, width)]);
        if (nd == 0)
            continue;
        total += nd;
        near_wall += wall_band_diffs(sim, ef[k], gf[k]);
        if (!f && !buf)
            continue;
        char label[160], line[320];
        snprintf(label, sizeof label, "%s%s%s", what ? what : "", what ? ": " : "", names[k]);
        if (!masked)
            masked = malloc(cells * sizeof *masked);
        if (!masked) {
            snprintf(line, sizeof line, "%s: %zu interior cells differ (no memory to say which)\n",
                     label, nd);
            emit(&o, line);
            continue;
        }
        memcpy(masked, gf[k], cells * sizeof *masked);
        for (int j = 0; j < width; j++) {
            masked[swe_at(0, j, width)] = ef[k][swe_at(0, j, width)];
            masked[swe_at(rows + 1, j, width)] = ef[k][swe_at(rows + 1, j, width)];
        }
        for (int i = 1; i <= rows; i++) {
            masked[swe_at(i, 0, width)] = ef[k][swe_at(i, 0, width)];
            masked[swe_at(i, cols + 1, width)] = ef[k][swe_at(i, cols + 1, width)];
        }
        lk_compare c;
        lk_compare_grids(ef[k], masked, rows + 2, cols + 2, kfirst, &c);
        if (f)
            lk_compare_print(f, &c, rows + 2, cols + 2, label);
        if (buf && size > 0) {
            size_t len = strlen(buf);
            if (len + 1 < size)
                lk_compare_format(buf + len, size - len, &c, rows + 2, cols + 2, label);
        }
    }
    free(masked);
    if (total > 0) {
        char line[400];
        snprintf(line, sizeof line,
                 "  (row, col) count the ghost layer: the interior is rows 1..%d, columns "
                 "1..%d, and only the interior is compared\n", rows, cols);
        emit(&o, line);
        /* Only meaningful when some cells are not next to a wall. */
        if (near_wall == total && rows >= 3 && cols >= 3) {
            snprintf(line, sizeof line,
                     "  every difference is next to a wall (row 1 or %d, column 1 or %d): check "
                     "the ghost cells, which must follow the wall rule before every step\n",
                     rows, cols);
            emit(&o, line);
        }
    }
    return total;
}

/* Rarefaction speed minus shock speed of the middle state h: zero at the Stoker depth. */
static double stoker_mismatch(double h, double hl, double hr, double g)
{
    double from_left = 2.0 * (sqrt(g * hl) - sqrt(g * h));
    double from_right = (h - hr) * sqrt(g * (h + hr) / (2.0 * h * hr));
    return from_left - from_right;
}

int lk_stoker_solve(double hl, double hr, double g, lk_stoker *s, lk_error *err)
{
    if (!(hr > 0.0) || !(hl > hr) || !(g > 0.0) || !isfinite(hl))
        return lk_fail(err, "Stoker: depths %g and %g, g %g: need 0 < hr < hl and g > 0", hl,
                       hr, g);
    /* The mismatch falls from 2 (sqrt(g hl) - sqrt(g hr)) > 0 at hr to < 0 at hl. */
    double lo = hr, hi = hl;
    for (int it = 0; it < 200; it++) {
        double mid = 0.5 * (lo + hi);
        if (mid <= lo || mid >= hi)
            break;
        if (stoker_mismatch(mid, hl, hr, g) > 0.0)
            lo = mid;
        else
            hi = mid;
    }
    s->hl = hl;
    s->hr = hr;
    s->g = g;
    s->hm = 0.5 * (lo + hi);
    s->um = 2.0 * (sqrt(g * hl) - sqrt(g * s->hm));
    s->shock = s->hm * s->um / (s->hm - hr);
    return 0;
}

void lk_stoker_eval(const lk_stoker *s, double xi, double t, double *h, double *u)
{
    const double cl = sqrt(s->g * s->hl), cm = sqrt(s->g * s->hm);
    if (xi <= -cl * t) {
        *h = s->hl;
        *u = 0.0;
    } else if (xi <= (s->um - cm) * t) {
        double w = 2.0 * cl - xi / t;
        *h = w * w / (9.0 * s->g);
        *u = 2.0 / 3.0 * (cl + xi / t);
    } else if (xi < s->shock * t) {
        *h = s->hm;
        *u = s->um;
    } else {
        *h = s->hr;
        *u = 0.0;
    }
}
