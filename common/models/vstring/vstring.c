/* The vibrating string (vstring/vstring.h): generator specs, initial states, datasets,
   hashes and text output. The Euler steps are common/models/vstring/serial.c and the kernels. */
#include "vstring/vstring.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "labkit/cli.h"
#include "labkit/grid_io.h"
#include "labkit/manifest.h"
#include "labkit/md5.h"
#include "labkit/rng.h"

static const char *forms = "use sine:1xN:SEED, pluck:1xN:SEED or random:1xN:SEED (N mass "
                           "points), e.g. pluck:1x1000:7";

int vstring_spec_parse(const char *s, vstring_spec *out, lk_error *err)
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
    vstring_spec spec = {0};
    if (strcmp(kind, "sine") == 0)
        spec.kind = VSTRING_SINE;
    else if (strcmp(kind, "pluck") == 0)
        spec.kind = VSTRING_PLUCK;
    else if (strcmp(kind, "random") == 0)
        spec.kind = VSTRING_RANDOM;
    else
        return lk_fail(err, "generator spec '%s': unknown kind '%s': %s", s, kind, forms);
    if (!dims || !seed)
        return lk_fail(err, "generator spec '%s' is malformed: %s", s, forms);
    /* Not lk_parse_grid_size: a string has up to VSTRING_MAX_POINTS points in its row. */
    char *x = strchr(dims, 'x');
    if (!x)
        return lk_fail(err, "generator spec '%s': size '%s' is not ROWSxCOLS: %s", s, dims, forms);
    *x++ = '\0';
    int rows = 0;
    lk_error sub;
    if (lk_parse_int("rows", dims, 1, 1000000, &rows, &sub) != 0 ||
        lk_parse_int("mass points N", x, 1, VSTRING_MAX_POINTS, &spec.n, &sub) != 0 ||
        lk_parse_seed("seed", seed, &spec.seed, &sub) != 0)
        return lk_fail(err, "generator spec '%s': %s", s, sub.msg);
    if (rows != 1)
        return lk_fail(err, "generator spec '%s': the string is 1-D: write %s:1x%s:%s (one row "
                            "of N mass points)", s, kind, x, seed);
    *out = spec;
    return 0;
}

int vstring_generate(const vstring_spec *spec, vstring *sim, lk_error *err)
{
    const int n = spec->n;
    if (n < 1 || n > VSTRING_MAX_POINTS)
        return lk_fail(err, "string of %d mass points: N must be from 1 to %d", n,
                       VSTRING_MAX_POINTS);
    double *y = malloc(2 * (size_t)n * sizeof *y);
    if (!y)
        return lk_fail(err, "out of memory for a string of %d mass points", n);
    lk_rng rng;
    lk_rng_seed(&rng, spec->seed);
    const double pi = 3.14159265358979323846;
    /* The pluck's peak: anywhere but the ends, the seed picks where. */
    const int peak = (int)lk_rng_below(&rng, (uint64_t)n);
    const int q = 1 + (int)(spec->seed % (unsigned long long)n);
    for (int p = 0; p < n; p++) {
        double u = 0.0, v = 0.0;
        switch (spec->kind) {
        case VSTRING_SINE:
            u = sin(q * pi * (p + 1) / (n + 1.0));
            break;
        case VSTRING_PLUCK:
            /* Zero at the fixed ends u_{-1} and u_N, 1 at the peak, straight in between. */
            u = p <= peak ? (p + 1.0) / (peak + 1.0) : (double)(n - p) / (n - peak);
            break;
        case VSTRING_RANDOM:
            u = 2.0 * lk_rng_uniform(&rng) - 1.0;
            v = 2.0 * lk_rng_uniform(&rng) - 1.0;
            break;
        }
        y[2 * (size_t)p] = u;
        y[2 * (size_t)p + 1] = v;
    }
    sim->n = n;
    sim->y0 = y;
    return 0;
}

/* A generator spec to a problem, for the manifest's datasets and --gen (labkit/manifest.h). */
static int generate_from_spec(const char *text, void *problem, lk_error *err)
{
    vstring_spec spec;
    if (vstring_spec_parse(text, &spec, err) != 0)
        return LK_BAD_SPEC;
    return vstring_generate(&spec, problem, err);
}

const lk_dataset_kind vstring_datasets = {
    .model = "vstring", .noun = "string", .generate = generate_from_spec};

int vstring_load_dataset(const char *manifest_path, const char *name, vstring *sim,
                         int *steps, char *md5, lk_error *err)
{
    return lk_dataset_load(&vstring_datasets, manifest_path, name, sim, steps, md5, err);
}

void vstring_free(vstring *sim)
{
    free(sim->y0);
    sim->y0 = NULL;
    sim->n = 0;
}

int vstring_md5(const double *y, int n, char hex[33], lk_error *err)
{
    return lk_binary_md5(y, 2 * (size_t)n, hex, err);
}

int vstring_write_text(const char *path, const double *y, int n, lk_error *err)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return lk_fail(err, "%s: cannot create: check the folder exists and is writable", path);
    for (int p = 0; p < n; p++)
        fprintf(f, "%d %.17g %.17g\n", p, y[2 * (size_t)p], y[2 * (size_t)p + 1]);
    if (fclose(f) != 0)
        return lk_fail(err, "%s: write failed: check the disk", path);
    return 0;
}
