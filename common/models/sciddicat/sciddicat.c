#include "sciddicat/sciddicat.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "labkit/cli.h"
#include "labkit/manifest.h"
#include "labkit/parallel.h"

int sciddicat_terrain_parse(const char *name, sciddicat_terrain *out, lk_error *err)
{
    if (strcmp(name, "valley") == 0)
        *out = LK_TERRAIN_VALLEY;
    else if (strcmp(name, "plane") == 0)
        *out = LK_TERRAIN_PLANE;
    else if (strcmp(name, "dome") == 0)
        *out = LK_TERRAIN_DOME;
    else if (strcmp(name, "flood") == 0)
        *out = LK_TERRAIN_FLOOD;
    else
        return lk_fail(err, "unknown terrain '%s': use 'valley', 'plane', 'dome' or 'flood'", name);
    return 0;
}

const char *sciddicat_terrain_name(sciddicat_terrain t)
{
    return t == LK_TERRAIN_PLANE   ? "plane"
           : t == LK_TERRAIN_DOME  ? "dome"
           : t == LK_TERRAIN_FLOOD ? "flood"
                                   : "valley";
}

int sciddicat_spec_parse(const char *s, sciddicat_spec *out, lk_error *err)
{
    char buf[128];
    if (strlen(s) >= sizeof buf)
        return lk_fail(err, "generator spec '%.40s...' is too long: use KIND:ROWSxCOLS:SEED", s);
    strcpy(buf, s);
    char *kind = buf, *dims = strchr(buf, ':'), *seed = NULL;
    if (dims) {
        *dims++ = '\0';
        seed = strchr(dims, ':');
        if (seed)
            *seed++ = '\0';
    }
    if (!dims || !seed)
        return lk_fail(err, "generator spec '%s' is malformed: use KIND:ROWSxCOLS:SEED, "
                            "e.g. valley:610x496:1", s);
    sciddicat_spec spec;
    int rows, cols;
    lk_error sub;
    if (sciddicat_terrain_parse(kind, &spec.terrain, &sub) != 0 ||
        lk_parse_grid_size(dims, &rows, &cols, &sub) != 0 ||
        lk_parse_seed("seed", seed, &spec.seed, &sub) != 0)
        return lk_fail(err, "generator spec '%s': %s", s, sub.msg);
    if ((long long)rows * cols > LK_GRID_MAX_CELLS)
        return lk_fail(err, "generator spec '%s': %d x %d cells is too many (at most %lld)",
                       s, rows, cols, LK_GRID_MAX_CELLS);
    spec.rows = rows;
    spec.cols = cols;
    *out = spec;
    return 0;
}

/* Noise from hashed lattice values, smoothly interpolated. Only +, -, *, / are used so the
   terrain is bit-identical on every libm. */
static double lattice_value(uint64_t seed, int64_t li, int64_t lj, uint64_t octave)
{
    uint64_t z = seed ^ ((uint64_t)li * 0x9e3779b97f4a7c15ULL) ^
                 ((uint64_t)lj * 0xc2b2ae3d27d4eb4fULL) ^ (octave * 0x165667b19e3779f9ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return (double)(z >> 11) * 0x1.0p-52 - 1.0; /* [-1, 1) */
}

static double smooth(double t) { return t * t * (3.0 - 2.0 * t); }

static double value_noise(uint64_t seed, uint64_t octave, int i, int j, int spacing)
{
    int64_t li = i / spacing, lj = j / spacing;
    double ti = smooth((double)(i % spacing) / spacing);
    double tj = smooth((double)(j % spacing) / spacing);
    double a = lattice_value(seed, li, lj, octave), b = lattice_value(seed, li, lj + 1, octave);
    double c = lattice_value(seed, li + 1, lj, octave), d = lattice_value(seed, li + 1, lj + 1, octave);
    double top = a + (b - a) * tj, bottom = c + (d - c) * tj;
    return top + (bottom - top) * ti;
}

/* Millimetre resolution, like a surveyed DEM; k / 1000.0 is the double nearest to k mm. */
static double to_mm(double v) { return floor(v * 1000.0 + 0.5) / 1000.0; }

int sciddicat_generate(const sciddicat_spec *spec, lk_grid_header *hdr, double *dem,
                       double *source, lk_error *err)
{
    const int rows = spec->rows, cols = spec->cols;
    if (rows < 1 || cols < 1)
        return lk_fail(err, "generator: %d x %d is not a grid: rows and cols must be >= 1",
                       rows, cols);
    const int valley = spec->terrain == LK_TERRAIN_VALLEY;
    const int dome = spec->terrain == LK_TERRAIN_DOME;
    const int flood = spec->terrain == LK_TERRAIN_FLOOD;
    const double cellsize = 10.0;
    const double drop_per_row = valley ? 1.0 : 8.0; /* metres per cell southwards */
    const double centre_j = (cols - 1) / 2.0;
    const double half_width = cols > 1 ? (cols - 1) / 2.0 : 1.0;
    /* The blob sits near the top of the valley, mid-way down the plane, on top of the dome. */
    const double blob_i = (rows - 1) * (valley ? 0.15 : dome ? 0.5 : 0.4);
    const double centre_i = (rows - 1) / 2.0;
    const double min_dim = rows < cols ? rows : cols;
    const double blob_r = min_dim * 0.06 > 1.5 ? min_dim * 0.06 : 1.5;

#pragma omp parallel for schedule(static) if ((long)rows * cols >= LK_PARALLEL_MIN_CELLS)
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++) {
            double dx = (j - centre_j) / half_width;
            double z = 1000.0 + drop_per_row * (rows - 1 - i);
            /* The valley floor levels out and rises again in its last 40%: a basin where the
               debris comes to rest instead of leaving the grid. */
            const double basin_i = 0.6 * (rows - 1), basin_len = (rows - 1) - basin_i;
            if (valley && i > basin_i)
                z += 1.5 * drop_per_row * (i - basin_i) * (i - basin_i) / basin_len;
            if (dome) {
                /* A square pyramid, 4 m lower per cell away from the centre (the larger of
                   the row and column distance): its four faces end on the four borders. */
                double di_c = i > centre_i ? i - centre_i : centre_i - i;
                double dj_c = j > centre_j ? j - centre_j : centre_j - j;
                z = 1000.0 - 4.0 * (di_c > dj_c ? di_c : dj_c) +
                    1.5 * value_noise(spec->seed, 1, i, j, 8) +
                    0.4 * value_noise(spec->seed, 2, i, j, 3);
            } else if (flood)
                /* A gentle noisy slope southwards: the debris keeps moving everywhere. */
                z = 1000.0 + 0.5 * (rows - 1 - i) + 3.0 * value_noise(spec->seed, 1, i, j, 24) +
                    1.0 * value_noise(spec->seed, 2, i, j, 6);
            else if (valley)
                z += 20.0 * dx * dx + 5.0 * value_noise(spec->seed, 1, i, j, 24) +
                     1.0 * value_noise(spec->seed, 2, i, j, 6);
            else
                z += 4.0 * dx + 1.5 * value_noise(spec->seed, 1, i, j, 8) +
                     0.4 * value_noise(spec->seed, 2, i, j, 3);
            dem[sciddicat_at(i, j, cols)] = to_mm(z);

            double di = (i - blob_i) / blob_r, dj = (j - centre_j) / blob_r;
            double d2 = di * di + dj * dj;
            int interior = i > 0 && j > 0 && i < rows - 1 && j < cols - 1;
            if (flood)
                /* Debris 0.5 to 1.5 m thick on every interior cell. */
                source[sciddicat_at(i, j, cols)] =
                    interior ? to_mm(1.0 + 0.5 * value_noise(spec->seed, 3, i, j, 16)) : 0.0;
            else
                source[sciddicat_at(i, j, cols)] =
                    interior && d2 < 1.0 ? to_mm(6.0 * (1.0 - d2)) : 0.0;
        }
    hdr->ncols = cols;
    hdr->nrows = rows;
    hdr->xllcorner = 0.0;
    hdr->yllcorner = 0.0;
    hdr->cellsize = cellsize;
    hdr->nodata = -9999.0;
    return 0;
}

/* The course's initialisation: the DEM includes the landslide body, so its thickness is
   removed from the interior cells to get the sliding surface. */
static void initialise(sciddicat *sim)
{
#pragma omp parallel for schedule(static) if ((long)sim->rows * sim->cols >= LK_PARALLEL_MIN_CELLS)
    for (int i = 1; i < sim->rows - 1; i++)
        for (int j = 1; j < sim->cols - 1; j++) {
            size_t at = sciddicat_at(i, j, sim->cols);
            if (sim->h0[at] > 0.0)
                sim->z[at] = sim->z[at] - sim->h0[at];
        }
}

static int allocate(sciddicat *sim, const lk_grid_header *hdr, lk_error *err)
{
    memset(sim, 0, sizeof *sim);
    size_t n = (size_t)hdr->nrows * (size_t)hdr->ncols;
    sim->z = malloc(n * sizeof *sim->z);
    sim->h0 = malloc(n * sizeof *sim->h0);
    if (!sim->z || !sim->h0) {
        sciddicat_free(sim);
        return lk_fail(err, "out of memory for a %d x %d grid (%.1f MiB): use a smaller grid",
                       hdr->nrows, hdr->ncols, 2.0 * n * sizeof(double) / 1048576.0);
    }
    sim->rows = hdr->nrows;
    sim->cols = hdr->ncols;
    sim->hdr = *hdr;
    return 0;
}

/* A negative thickness is not debris: reject it rather than simulate nonsense. */
static int check_source(const sciddicat *sim, const char *path, lk_error *err)
{
    for (int i = 0; i < sim->rows; i++)
        for (int j = 0; j < sim->cols; j++) {
            double h = sim->h0[sciddicat_at(i, j, sim->cols)];
            if (h < 0.0)
                return lk_fail(err, "%s: cell (row %d, col %d) has thickness %g: the source "
                                    "thickness must be >= 0 (is this the DEM by mistake?)",
                               path, i, j, h);
        }
    return 0;
}

/* The limits that make skipping still cells exact (sciddicat_is_still): far beyond any
   terrain, so only a unit mistake or a corrupted file meets them. */
static int check_scale(const sciddicat *sim, const char *path, lk_error *err)
{
    double total = 0.0;
    for (int i = 0; i < sim->rows; i++)
        for (int j = 0; j < sim->cols; j++) {
            const size_t at = sciddicat_at(i, j, sim->cols);
            if (fabs(sim->z[at]) > SCIDDICAT_MAX_ALTITUDE)
                return lk_fail(err, "%s: cell (row %d, col %d) has altitude %g m: altitudes "
                                    "must be within +-%g m (are the units metres?)",
                               path, i, j, sim->z[at], SCIDDICAT_MAX_ALTITUDE);
            total += sim->h0[at];
        }
    if (total > SCIDDICAT_MAX_TOTAL_THICKNESS)
        return lk_fail(err, "%s: the thicknesses add up to %g m: the total must be at most %g m "
                            "(are the units metres?)",
                       path, total, SCIDDICAT_MAX_TOTAL_THICKNESS);
    return 0;
}

int sciddicat_load(const char *header, const char *dem, const char *source,
                   sciddicat *sim, lk_error *err)
{
    lk_grid_header hdr;
    if (lk_read_header(header, &hdr, err) != 0 || allocate(sim, &hdr, err) != 0)
        return -1;
    if (lk_read_body(dem, hdr.nrows, hdr.ncols, sim->z, err) != 0 ||
        lk_read_body(source, hdr.nrows, hdr.ncols, sim->h0, err) != 0 ||
        check_source(sim, source, err) != 0 || check_scale(sim, dem, err) != 0) {
        sciddicat_free(sim);
        return -1;
    }
    initialise(sim);
    return 0;
}

int sciddicat_load_asc(const char *dem, const char *source, sciddicat *sim,
                       lk_error *err)
{
    lk_grid_header hdem, hsrc;
    lk_grid gdem = {0}, gsrc = {0};
    if (lk_read_asc(dem, &hdem, &gdem, err) != 0)
        return -1;
    if (lk_read_asc(source, &hsrc, &gsrc, err) != 0) {
        lk_grid_free(&gdem);
        return -1;
    }
    int rc = -1;
    if (hdem.nrows != hsrc.nrows || hdem.ncols != hsrc.ncols)
        lk_fail(err, "%s: grid is %d rows x %d cols but %s is %d x %d: the DEM and the "
                     "source must cover the same grid",
                source, hsrc.nrows, hsrc.ncols, dem, hdem.nrows, hdem.ncols);
    else if (allocate(sim, &hdem, err) == 0) {
        size_t bytes = (size_t)hdem.nrows * hdem.ncols * sizeof(double);
        memcpy(sim->z, gdem.data, bytes);
        memcpy(sim->h0, gsrc.data, bytes);
        if (check_source(sim, source, err) == 0 && check_scale(sim, dem, err) == 0) {
            initialise(sim);
            rc = 0;
        } else
            sciddicat_free(sim);
    }
    lk_grid_free(&gdem);
    lk_grid_free(&gsrc);
    return rc;
}

int sciddicat_load_generated(const sciddicat_spec *spec, sciddicat *sim,
                             lk_error *err)
{
    lk_grid_header hdr = {.nrows = spec->rows, .ncols = spec->cols};
    if (spec->rows < 1 || spec->cols < 1)
        return lk_fail(err, "generator: %d x %d is not a grid: rows and cols must be >= 1",
                       spec->rows, spec->cols);
    if (allocate(sim, &hdr, err) != 0)
        return -1;
    if (sciddicat_generate(spec, &sim->hdr, sim->z, sim->h0, err) != 0 ||
        check_scale(sim, "generator", err) != 0) {
        sciddicat_free(sim);
        return -1;
    }
    initialise(sim);
    return 0;
}

/* A generator spec to a problem, for the manifest's datasets and --gen (labkit/manifest.h). */
static int generate_from_spec(const char *text, void *problem, lk_error *err)
{
    sciddicat_spec spec;
    if (sciddicat_spec_parse(text, &spec, err) != 0)
        return LK_BAD_SPEC;
    return sciddicat_load_generated(&spec, problem, err);
}

/* A stored dataset's three files in the course layout: DIR/sciddicat/NAME_*.txt. */
static int load_stored(const char *dir, const char *name, void *problem, lk_error *err)
{
    char header[4200], dem[4200], source[4200];
    snprintf(header, sizeof header, "%s/sciddicat/%s_header.txt", dir, name);
    snprintf(dem, sizeof dem, "%s/sciddicat/%s_dem.txt", dir, name);
    snprintf(source, sizeof source, "%s/sciddicat/%s_source.txt", dir, name);
    return sciddicat_load(header, dem, source, problem, err);
}

const lk_dataset_kind sciddicat_datasets = {
    .model = "sciddicat", .noun = "SciddicaT", .generate = generate_from_spec,
    .load_stored = load_stored};

int sciddicat_load_dataset(const char *manifest_path, const char *name, sciddicat *sim,
                           int *steps, char *md5, lk_error *err)
{
    return lk_dataset_load(&sciddicat_datasets, manifest_path, name, sim, steps, md5, err);
}

void sciddicat_free(sciddicat *sim)
{
    free(sim->z);
    free(sim->h0);
    sim->z = sim->h0 = NULL;
    sim->rows = sim->cols = 0;
}
