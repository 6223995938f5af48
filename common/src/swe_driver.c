/* The shallow-water model plugged into the shared driver (driver.c): loading, the serial
   reference, the hash, the comparison and the outputs of a state with a ghost layer. */
#include "labkit/swe_driver.h"

#include <stdio.h>
#include <string.h>

static int load_dataset(const char *manifest, const char *name, void *p, int *steps,
                        lk_error *err)
{
    return lk_swe_load_dataset(manifest, name, p, steps, NULL, err);
}

static int load_spec(const char *s, void *p, lk_error *err)
{
    lk_swe_spec spec;
    return lk_swe_spec_parse(s, &spec, err) || lk_swe_generate(&spec, p, err) ? -1 : 0;
}

static void free_problem(void *p) { lk_swe_free(p); }

static int steps_for_time(const void *p, double seconds, int *steps, lk_error *err)
{
    return lk_swe_steps_for_time(p, seconds, steps, err);
}

static int default_steps(const void *p)
{
    int steps = 0;
    lk_error err;
    lk_swe_steps_for_time(p, LK_SWE_DEFAULT_TIME, &steps, &err);
    return steps;
}

static void dims(const void *p, int *rows, int *cols)
{
    const lk_swe *sim = p;
    *rows = sim->rows;
    *cols = sim->cols;
}

static void describe(const void *p, int steps, char *buf, size_t size)
{
    const lk_swe *sim = p;
    snprintf(buf, size, " of %.6g s (t = %.4g s), dx %.6g m", sim->dt, steps * sim->dt,
             sim->dx);
}

static size_t output_len(const void *p) { return 3 * lk_swe_cells(p); }

static int serial(const void *p, int steps, double *out, lk_error *err)
{
    lk_swe_fields f = lk_swe_fields_of(p, out);
    return lk_swe_serial(p, steps, &f, err);
}

static int md5(const void *p, const double *out, char hex[33], lk_error *err)
{
    lk_swe_fields f = lk_swe_fields_of(p, (double *)out);
    return lk_swe_md5(p, &f, hex, err);
}

static size_t compare(const void *p, const double *expected, const double *got, int kfirst,
                      const char *what, FILE *f, char *buf, size_t size)
{
    lk_swe_fields e = lk_swe_fields_of(p, (double *)expected);
    lk_swe_fields g = lk_swe_fields_of(p, (double *)got);
    return lk_swe_compare(p, &e, &g, kfirst, what, f, buf, size);
}

static int write_text(const char *path, const void *p, const double *out, lk_error *err)
{
    lk_swe_fields f = lk_swe_fields_of(p, (double *)out);
    return lk_swe_write_text(path, p, &f, err);
}

static int write_bin(const char *path, const void *p, const double *out, lk_error *err)
{
    lk_swe_fields f = lk_swe_fields_of(p, (double *)out);
    return lk_swe_write_binary(path, p, &f, err);
}

static int write_png(const char *path, const void *p, const double *out, const char *label,
                     int steps, lk_error *err)
{
    const lk_swe *sim = p;
    lk_swe_fields f = lk_swe_fields_of(p, (double *)out);
    char title[320];
    snprintf(title, sizeof title, "Shallow water %s, t = %.3f s: water height Z (m)", label,
             steps * sim->dt);
    return lk_swe_write_png(path, sim, &f, title, err);
}

static size_t copy_bytes(const void *p) { return output_len(p) * sizeof(double); }

static const char *const usage_forms[] = {
    "[options] --dataset NAME | --gen KIND:ROWSxCOLS[:SEED] | --standard", NULL};

const lk_model lk_swe_model = {
    .title = "Shallow water",
    .usage_forms = usage_forms,
    .gen_help = "a generated dataset: dam:ROWSxCOLS, damrot:ROWSxCOLS or bumps:ROWSxCOLS:SEED",
    .steps_help = "steps to run (default: the dataset's, else those of --time 5)",
    .time_help = "run the steps that reach this simulated time (ceil(time / dt))",
    .out_help = "write Z, Qx, Qy as text (%.17g, one grid row per line)",
    .bin_help = "write Z, Qx, Qy as raw little-endian doubles (its md5 is the hash)",
    .png_help = "picture of the water height Z",
    .files_ok = 0,
    .files_hint = "the shallow-water labs take no input files, use --dataset, --gen or "
                  "--standard",
    .problem_size = sizeof(lk_swe),
    .load_dataset = load_dataset,
    .load_spec = load_spec,
    .free_problem = free_problem,
    .default_steps = default_steps,
    .steps_for_time = steps_for_time,
    .dims = dims,
    .output_fields = 3,
    .describe = describe,
    .output_len = output_len,
    .serial = serial,
    .md5 = md5,
    .md5_bin = md5,
    .compare = compare,
    .write_text = write_text,
    .write_bin = write_bin,
    .write_png = write_png,
    .bytes_per_cell_step = LK_SWE_BYTES_PER_CELL_STEP,
    .copy_bytes = copy_bytes,
};

/* The lab's code, or the given version when --variant names it. */
static int run_lab(const void *ctx, const void *p, double *out, int steps,
                   const lk_launch *launch, lk_error *err)
{
    const lk_swe_lab *lab = ctx;
    lk_swe_fields f = lk_swe_fields_of(p, out);
    if (launch->variant[0] == '\0')
        return lab->run(p, steps, &f, launch, err);
    if (lab->baseline && strcmp(launch->variant, lab->baseline_name) == 0)
        return lab->baseline(p, steps, &f, launch, err);
    if (lab->baseline)
        return lk_fail(err, "--variant %s: unknown variant: leave --variant out to run your "
                            "code, or give --variant %s for the given version", launch->variant,
                       lab->baseline_name);
    return lk_fail(err, "--variant %s: this lab has no variants: leave --variant out",
                   launch->variant);
}

static int run_baseline(const void *ctx, const void *p, double *out, int steps,
                        const lk_launch *launch, lk_error *err)
{
    const lk_swe_lab *lab = ctx;
    lk_swe_fields f = lk_swe_fields_of(p, out);
    return lab->baseline(p, steps, &f, launch, err);
}

int lk_swe_driver(int argc, char **argv, const lk_swe_lab *lab)
{
    char variant_help[200] = "";
    if (lab->baseline)
        snprintf(variant_help, sizeof variant_help, "%s: %s", lab->baseline_name,
                 lab->baseline_help ? lab->baseline_help : "the given version");
    const lk_driver_lab d = {
        .name = lab->name,
        .run = run_lab,
        .ctx = lab,
        .baseline = lab->baseline ? run_baseline : NULL,
        .baseline_name = lab->baseline_name,
        .baseline_steps = lab->baseline_steps,
        .variant_help = lab->baseline ? variant_help : "(this lab has no variants)",
        .launch = lab->launch,
        .standard_dataset = lab->standard_dataset,
        .bench_dataset = lab->bench_dataset,
        .bench_steps = lab->bench_steps,
        .bench_serial_steps = lab->bench_serial_steps,
    };
    return lk_driver_main(argc, argv, &lk_swe_model, &d);
}
