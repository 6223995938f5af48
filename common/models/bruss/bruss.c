/* The Brusselator (bruss/bruss.h): generator specs, initial states, datasets, hashes and
   text output. The Euler steps are common/models/bruss/serial.c and the kernels. */
#include "bruss/bruss.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "labkit/cli.h"
#include "labkit/grid_io.h"
#include "labkit/manifest.h"
#include "labkit/rng.h"

static const char *forms = "use bruss:MxM:SEED (an M x M grid, M from 2 to 16384; SEED 0 is "
                           "Korch's initial state, others perturb it), e.g. bruss:201x201:0";

int bruss_is_spec(const char *spec)
{
    return spec && strncmp(spec, "bruss:", 6) == 0;
}

int bruss_spec_parse(const char *s, bruss_spec *out, lk_error *err)
{
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
    if (strcmp(kind, "bruss") != 0)
        return lk_fail(err, "generator spec '%s': unknown kind '%s': %s", s, kind, forms);
    if (!dims || !seed)
        return lk_fail(err, "generator spec '%s' is malformed: %s", s, forms);
    char *x = strchr(dims, 'x');
    if (!x)
        return lk_fail(err, "generator spec '%s': size '%s' is not MxM: %s", s, dims, forms);
    *x++ = '\0';
    int rows = 0, cols = 0;
    bruss_spec spec = {0};
    lk_error sub;
    if (lk_parse_int("rows", dims, BRUSS_MIN_M, BRUSS_MAX_M, &rows, &sub) != 0 ||
        lk_parse_int("columns", x, BRUSS_MIN_M, BRUSS_MAX_M, &cols, &sub) != 0 ||
        lk_parse_seed("seed", seed, &spec.seed, &sub) != 0)
        return lk_fail(err, "generator spec '%s': %s (every grid point needs a neighbour to "
                            "reflect, and 2M^2 values must fit an int index): %s", s, sub.msg,
                       forms);
    if (rows != cols)
        return lk_fail(err, "generator spec '%s': the Brusselator grid is square (N1 = M - 1 "
                            "scales both directions): write bruss:%dx%d:%s (bruss:MxM:SEED)",
                       s, rows, rows, seed);
    spec.m = rows;
    *out = spec;
    return 0;
}

int bruss_generate(const bruss_spec *spec, bruss *sim, lk_error *err)
{
    const int m = spec->m;
    if (m < BRUSS_MIN_M || m > BRUSS_MAX_M)
        return lk_fail(err, "Brusselator of side %d: M must be from %d to %d", m,
                       BRUSS_MIN_M, BRUSS_MAX_M);
    double *y = malloc(bruss_components(m) * sizeof *y);
    if (!y)
        return lk_fail(err, "out of memory for a %d x %d Brusselator", m, m);
    lk_rng rng;
    lk_rng_seed(&rng, spec->seed);
    for (int k = 0; k < m; k++)
        for (int j = 0; j < m; j++) {
            double u = 0.5 + (double)j / (m - 1), v = 1.0 + 5.0 * k / (m - 1);
            if (spec->seed != 0) {
                u += 0.2 * lk_rng_uniform(&rng) - 0.1;
                v += 0.2 * lk_rng_uniform(&rng) - 0.1;
            }
            const size_t i = 2 * ((size_t)m * k + j);
            y[i] = u;
            y[i + 1] = v;
        }
    sim->m = m;
    sim->y0 = y;
    return 0;
}

/* A generator spec to a problem, for the manifest's datasets and --gen (labkit/manifest.h). */
static int generate_from_spec(const char *text, void *problem, lk_error *err)
{
    bruss_spec spec;
    if (bruss_spec_parse(text, &spec, err) != 0)
        return LK_BAD_SPEC;
    return bruss_generate(&spec, problem, err);
}

const lk_dataset_kind bruss_datasets = {
    .model = "bruss", .noun = "Brusselator", .generate = generate_from_spec};

int bruss_load_dataset(const char *manifest_path, const char *name, bruss *sim,
                       int *steps, char *md5, lk_error *err)
{
    return lk_dataset_load(&bruss_datasets, manifest_path, name, sim, steps, md5, err);
}

void bruss_free(bruss *sim)
{
    free(sim->y0);
    sim->y0 = NULL;
    sim->m = 0;
}

int bruss_md5(const double *y, int m, char hex[33], lk_error *err)
{
    return lk_binary_md5(y, bruss_components(m), hex, err);
}

int bruss_write_text(const char *path, const double *y, int m, lk_error *err)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return lk_fail(err, "%s: cannot create: check the folder exists and is writable", path);
    for (int k = 0; k < m; k++)
        for (int j = 0; j < m; j++) {
            const size_t i = 2 * ((size_t)m * k + j);
            fprintf(f, "%d %d %.17g %.17g\n", k, j, y[i], y[i + 1]);
        }
    if (fclose(f) != 0)
        return lk_fail(err, "%s: write failed: check the disk", path);
    return 0;
}
