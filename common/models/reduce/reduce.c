/* The inputs of lab 06 and the tolerance rule of its sums (reduce/reduce.h). */
#include "reduce/reduce.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "labkit/cli.h"
#include "labkit/grid_io.h"
#include "labkit/manifest.h"
#include "labkit/rng.h"
#include "sciddicat/sciddicat.h"
#include "swe/swe.h"

static const char *const kind_names[REDUCE_NKINDS] = {
    "debris", "lake", "equal", "alternating", "denormal", "nan",
    "runge", "sign", "ones", "cubic"};

/* Count and bounding box take the values above these (the debris that moved, the humps). */
static const double thresholds[LK_LAGRANGE_RUNGE] = {1.0, 10.5, 0.0, 0.0, 0.0, 0.5};

int reduce_spec_parse(const char *s, reduce_spec *out, lk_error *err)
{
    char kind[32], dims[64], seed[64];
    const char *c1 = strchr(s, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    if (!c1 || !c2 || c1 - s >= (long)sizeof kind || c2 - c1 - 1 >= (long)sizeof dims ||
        strlen(c2 + 1) >= sizeof seed)
        return lk_fail(err, "generator spec '%s': expected KIND:ROWSxCOLS:SEED, e.g. "
                            "debris:1024x1024:1 or runge:51x301:0", s);
    memcpy(kind, s, c1 - s);
    kind[c1 - s] = '\0';
    memcpy(dims, c1 + 1, c2 - c1 - 1);
    dims[c2 - c1 - 1] = '\0';
    strcpy(seed, c2 + 1);
    memset(out, 0, sizeof *out);
    int k = 0;
    while (k < REDUCE_NKINDS && strcmp(kind_names[k], kind) != 0)
        k++;
    if (k == REDUCE_NKINDS)
        return lk_fail(err, "generator spec '%s': unknown kind '%s': use debris, lake, equal, "
                            "alternating, denormal, nan (fields) or runge, sign, ones, cubic "
                            "(Lagrange)", s, kind);
    out->kind = (reduce_kind)k;
    lk_error sub;
    if (lk_parse_dims("size", dims, 1 << 30, &out->cols, &out->rows, &sub) != 0)
        return lk_fail(err, "generator spec '%s': %s", s, sub.msg);
    /* lk_parse_dims reads WxH; the spec is ROWSxCOLS. */
    int t = out->rows;
    out->rows = out->cols;
    out->cols = t;
    if (lk_parse_seed("seed", seed, &out->seed, &sub) != 0)
        return lk_fail(err, "generator spec '%s': %s", s, sub.msg);
    if ((size_t)out->rows * (size_t)out->cols > ((size_t)1 << 31))
        return lk_fail(err, "generator spec '%s': %d x %d is more than 2^31 values: make it "
                            "smaller", s, out->rows, out->cols);
    if (out->kind >= LK_LAGRANGE_RUNGE && out->rows > 4096)
        return lk_fail(err, "generator spec '%s': %d nodes: at most 4096 (n <= 4095)", s,
                       out->rows);
    return 0;
}

static double *alloc_doubles(size_t n, lk_error *err)
{
    double *p = malloc((n ? n : 1) * sizeof *p);
    if (!p)
        lk_fail(err, "out of memory for %zu values", n);
    return p;
}

static int make_field(const reduce_spec *spec, reduce_input *in, lk_error *err)
{
    const size_t n = (size_t)spec->rows * spec->cols;
    lk_rng rng;
    lk_rng_seed(&rng, spec->seed);
    in->rows = spec->rows;
    in->cols = spec->cols;
    in->threshold = thresholds[spec->kind];
    if (!(in->field = alloc_doubles(n, err)))
        return -1;
    switch (spec->kind) {
    case REDUCE_DEBRIS: {
        sciddicat_spec s = {LK_TERRAIN_VALLEY, spec->rows, spec->cols, spec->seed};
        lk_grid_header hdr;
        double *dem = alloc_doubles(n, err);
        int rc = dem ? sciddicat_generate(&s, &hdr, dem, in->field, err) : -1;
        free(dem);
        return rc;
    }
    case REDUCE_LAKE: {
        swe_spec s = {SWE_BUMPS, spec->rows, spec->cols, spec->seed ? spec->seed : 1};
        swe sim;
        if (swe_generate(&s, &sim, err) != 0)
            return -1;
        for (int i = 0; i < spec->rows; i++)
            memcpy(in->field + (size_t)i * spec->cols,
                   sim.q.Z + swe_at(i + 1, 1, spec->cols + 2), spec->cols * sizeof(double));
        swe_free(&sim);
        return 0;
    }
    case REDUCE_EQUAL: {
        /* 1/3, 1/5, ... are not exact in binary: n equal values do not sum exactly. */
        const double v = 1.0 / (double)(3 + 2 * lk_rng_below(&rng, 8));
        for (size_t i = 0; i < n; i++)
            in->field[i] = v;
        return 0;
    }
    case REDUCE_ALTERNATING:
        /* +-(1e8 + r): neighbours cancel to about 1, the sum is tiny next to sum |x|. */
        for (size_t i = 0; i < n; i++)
            in->field[i] = (i % 2 ? -1.0 : 1.0) * (1e8 + lk_rng_uniform(&rng));
        return 0;
    case REDUCE_DENORMAL:
        /* Subnormal values of both signs, a few slightly positive ones above the threshold. */
        for (size_t i = 0; i < n; i++) {
            double m = (double)(1 + lk_rng_below(&rng, 1ull << 40)) * 0x1p-1074;
            in->field[i] = lk_rng_below(&rng, 2) ? m : -m;
        }
        return 0;
    case REDUCE_NAN:
        for (size_t i = 0; i < n; i++)
            in->field[i] = lk_rng_uniform(&rng);
        in->field[lk_rng_below(&rng, n)] = NAN;
        return 0;
    default:
        return lk_fail(err, "internal: kind %d is not a field", (int)spec->kind);
    }
}

static double lagrange_data(reduce_kind kind, double x)
{
    switch (kind) {
    case LK_LAGRANGE_RUNGE: return 1.0 / (1.0 + x * x);
    case LK_LAGRANGE_SIGN: return x > 0.0 ? 1.0 : x < 0.0 ? -1.0 : 0.0;
    case LK_LAGRANGE_ONES: return 1.0;
    default: return x * x * x - 2.0 * x;
    }
}

static int make_lagrange(const reduce_spec *spec, reduce_input *in, lk_error *err)
{
    const int n1 = spec->rows, S = spec->cols;
    const double pi = 3.14159265358979323846;
    in->lagrange = 1;
    in->n1 = n1;
    in->S = S;
    if (!(in->x = alloc_doubles(n1, err)) || !(in->y = alloc_doubles(n1, err)) ||
        !(in->xs = alloc_doubles(S, err)))
        return -1;
    /* Chebyshev nodes of the first kind mapped to [-5, 5]: x_j = 5 cos((2j+1) pi / (2n+2)). */
    for (int j = 0; j < n1; j++) {
        in->x[j] = 5.0 * cos((2.0 * j + 1.0) * pi / (2.0 * n1));
        in->y[j] = lagrange_data(spec->kind, in->x[j]);
    }
    lk_rng rng;
    lk_rng_seed(&rng, spec->seed);
    for (int s = 0; s < S; s++)
        in->xs[s] = spec->seed == 0 ? (S > 1 ? -5.0 + 10.0 * s / (S - 1) : 0.0)
                                    : -5.0 + 10.0 * lk_rng_uniform(&rng);
    return 0;
}

int reduce_generate(const reduce_spec *spec, reduce_input *in, lk_error *err)
{
    memset(in, 0, sizeof *in);
    in->spec = *spec;
    if (spec->rows < 1 || spec->cols < 1)
        return lk_fail(err, "generator: %d x %d: rows and cols must be >= 1", spec->rows,
                       spec->cols);
    int rc = spec->kind < LK_LAGRANGE_RUNGE ? make_field(spec, in, err)
                                            : make_lagrange(spec, in, err);
    in->nout = in->lagrange ? (size_t)in->S : REDUCE_NOUT;
    if (rc == 0 && (!(in->gold = alloc_doubles(in->nout, err)) ||
                    !(in->bound = alloc_doubles(in->nout, err))))
        rc = -1;
    if (rc != 0)
        reduce_input_free(in);
    return rc;
}

/* A generator spec to a problem, for the manifest's datasets and --gen (labkit/manifest.h). */
static int generate_from_spec(const char *text, void *problem, lk_error *err)
{
    reduce_spec spec;
    if (reduce_spec_parse(text, &spec, err) != 0)
        return LK_BAD_SPEC;
    return reduce_generate(&spec, problem, err);
}

const lk_dataset_kind reduce_datasets = {
    .model = "reduce", .noun = "reduction", .generate = generate_from_spec};

int reduce_load_dataset(const char *manifest_path, const char *name, reduce_input *in,
                        int *steps, char *md5, lk_error *err)
{
    return lk_dataset_load(&reduce_datasets, manifest_path, name, in, steps, md5, err);
}

void reduce_input_free(reduce_input *in)
{
    free(in->field);
    free(in->x);
    free(in->y);
    free(in->xs);
    free(in->gold);
    free(in->bound);
    memset(in, 0, sizeof *in);
}

double reduce_sum_bound(size_t n, double sum_abs, double reference)
{
    const double u = REDUCE_U;
    double d = ceil(sqrt((double)n)) + ceil(log2(n > 1 ? (double)n : 1.0)) + 1.0;
    double nu = (double)n * u;
    return d * u / (1.0 - d * u) * sum_abs + 2.0 * u * fabs(reference) + nu * nu * sum_abs;
}

double lk_lagrange_bound(int n1, double kappa)
{
    return 10.0 * n1 * REDUCE_U * kappa;
}

double reduce_judged(double got, double reference, double bound)
{
    if (got == reference || (isnan(got) && isnan(reference)))
        return 2.0;
    return 2.0 + (got - reference) / bound;
}

static const char *const out_names[REDUCE_NOUT] = {
    "sum", "max", "count", "row_min", "row_max", "col_min", "col_max"};

size_t reduce_judge(const void *ctx, const double *got, char *buf, size_t size)
{
    const reduce_input *in = ctx;
    size_t bad = 0;
    if (!in->have_reference)
        return 0; /* a graded build: a trusted build judges its raw output (--judge) */
    for (size_t i = 0; i < in->nout; i++) {
        double w = reduce_judged(got[i], in->gold[i], in->bound[i]);
        if (w >= 1.0 && w <= 3.0)
            continue;
        if (!bad++ && buf) {
            char name[32];
            if (in->lagrange)
                snprintf(name, sizeof name, "y[%zu]", i);
            else
                snprintf(name, sizeof name, "%s", out_names[i]);
            if (in->bound[i] > 0.0)
                snprintf(buf, size, "%s is %.17g, the reference %.17g: off by %.3g, the bound "
                         "is %.3g", name, got[i], in->gold[i], fabs(got[i] - in->gold[i]),
                         in->bound[i]);
            else
                snprintf(buf, size, "%s is %.17g, the reference %.17g (exact: must be equal)",
                         name, got[i], in->gold[i]);
        }
    }
    return bad;
}

int reduce_write_judged(const char *path, const reduce_input *in, const double *v,
                        lk_error *err)
{
    double *w = alloc_doubles(in->nout, err);
    if (!w)
        return -1;
    for (size_t i = 0; i < in->nout; i++)
        w[i] = in->have_reference ? reduce_judged(v[i], in->gold[i], in->bound[i]) : v[i];
    int rc = lk_write_binary(path, w, in->nout, err);
    free(w);
    return rc;
}
