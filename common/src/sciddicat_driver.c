/* SciddicaT plugged into the shared driver (driver.c): loading, the serial reference, the
   course hash and the pictures; everything else is the driver's. */
#include "labkit/sciddicat_driver.h"

#include <stdio.h>

#include "labkit/compare.h"
#include "labkit/grid_io.h"
#include "labkit/png.h"
#include "labkit/sciddicat.h"

static int load_dataset(const char *manifest, const char *name, void *p, int *steps,
                        lk_error *err)
{
    return lk_sciddicat_load_dataset(manifest, name, p, steps, NULL, err);
}

static int load_spec(const char *s, void *p, lk_error *err)
{
    lk_sciddicat_spec spec;
    return lk_sciddicat_spec_parse(s, &spec, err) || lk_sciddicat_load_generated(&spec, p, err)
               ? -1
               : 0;
}

static int load_files(int n, const char *const *files, void *p, char *label, size_t size,
                      lk_error *err)
{
    if (n == 3) {
        snprintf(label, size, "%s", files[1]);
        return lk_sciddicat_load(files[0], files[1], files[2], p, err);
    }
    snprintf(label, size, "%s", files[0]);
    return lk_sciddicat_load_asc(files[0], files[1], p, err);
}

static void free_problem(void *p) { lk_sciddicat_free(p); }

static int default_steps(const void *p) { return 4000; }

static void dims(const void *p, int *rows, int *cols)
{
    const lk_sciddicat *sim = p;
    *rows = sim->rows;
    *cols = sim->cols;
}

static size_t output_len(const void *p)
{
    const lk_sciddicat *sim = p;
    return (size_t)sim->rows * sim->cols;
}

static int serial(const void *p, int steps, double *out, lk_error *err)
{
    return lk_sciddicat_serial(p, steps, out, NULL, err);
}

static int md5_text(const void *p, const double *h, char hex[33], lk_error *err)
{
    const lk_sciddicat *sim = p;
    return lk_course_text_md5(h, sim->rows, sim->cols, hex, err);
}

static int md5_bin(const void *p, const double *h, char hex[33], lk_error *err)
{
    return lk_binary_md5(h, output_len(p), hex, err);
}

static size_t compare(const void *p, const double *expected, const double *got, int kfirst,
                      const char *what, FILE *f, char *buf, size_t size)
{
    const lk_sciddicat *sim = p;
    lk_compare cmp;
    size_t ndiff = lk_compare_grids(expected, got, sim->rows, sim->cols, kfirst, &cmp);
    if (!what)
        what = "thickness h";
    if (ndiff && f)
        lk_compare_print(f, &cmp, sim->rows, sim->cols, what);
    if (ndiff && buf)
        lk_compare_format(buf, size, &cmp, sim->rows, sim->cols, what);
    return ndiff;
}

static int write_text(const char *path, const void *p, const double *h, lk_error *err)
{
    const lk_sciddicat *sim = p;
    return lk_write_course_text(path, h, sim->rows, sim->cols, err);
}

static int write_bin(const char *path, const void *p, const double *h, lk_error *err)
{
    return lk_write_binary(path, h, output_len(p), err);
}

static int write_png(const char *path, const void *p, const double *h, const char *label,
                     int steps, lk_error *err)
{
    const lk_sciddicat *sim = p;
    char title[320];
    snprintf(title, sizeof title, "SciddicaT %s: debris thickness", label);
    return lk_png_terrain(path, sim->z, h, sim->rows, sim->cols, sim->hdr.cellsize,
                          LK_SCIDDICAT_P_EPSILON, title, err);
}

static size_t copy_bytes(const void *p) { return output_len(p) * sizeof(double) * 4; }

static const char *const usage_forms[] = {
    "[options] HEADER DEM SOURCE     (course layout: header + body files)",
    "[options] DEM.asc SOURCE.asc    (single-file ESRI grids)",
    "[options] --dataset NAME | --gen KIND:ROWSxCOLS:SEED | --standard",
    NULL};

const lk_model lk_sciddicat_model = {
    .title = "SciddicaT",
    .usage_forms = usage_forms,
    .gen_help = "a generated dataset, e.g. valley:610x496:1 or plane:97x131:7",
    .steps_help = "steps to run (default: the dataset's, else 4000)",
    .out_help = "write h in the course text format (its md5 is the hash)",
    .bin_help = "write h as raw little-endian doubles",
    .png_help = "picture of the terrain and the debris",
    .files_ok = (1u << 2) | (1u << 3),
    .files_hint = "give HEADER DEM SOURCE, or DEM.asc SOURCE.asc, or use --dataset/--gen",
    .problem_size = sizeof(lk_sciddicat),
    .load_dataset = load_dataset,
    .load_spec = load_spec,
    .load_files = load_files,
    .free_problem = free_problem,
    .default_steps = default_steps,
    .dims = dims,
    .output_len = output_len,
    .serial = serial,
    .md5 = md5_text,
    .md5_bin = md5_bin,
    .compare = compare,
    .write_text = write_text,
    .write_bin = write_bin,
    .write_png = write_png,
    .bytes_per_cell_step = LK_SCIDDICAT_BYTES_PER_CELL_STEP,
    .copy_bytes = copy_bytes,
};

static int run_lab(const void *ctx, const void *p, double *h_out, int steps,
                   const lk_launch *launch, lk_error *err)
{
    const lk_sciddicat_lab *lab = ctx;
    const lk_sciddicat *sim = p;
    return lab->run(sim->rows, sim->cols, sim->z, sim->h0, h_out, steps, launch, err);
}

int lk_sciddicat_driver(int argc, char **argv, const lk_sciddicat_lab *lab)
{
    const lk_driver_lab d = {
        .name = lab->name,
        .run = run_lab,
        .ctx = lab,
        .launch = lab->launch,
        .launch_label = lab->launch_label,
        .standard_dataset = lab->standard_dataset,
        .bench_dataset = lab->bench_dataset,
        .bench_steps = lab->bench_steps,
        .bench_serial_steps = lab->bench_serial_steps,
        .bench_variants = lab->bench_variants,
    };
    return lk_driver_main(argc, argv, &lk_sciddicat_model, &d);
}
