/* The SciddicaT steps of a lab driver: what only this model knows (its inputs, hash,
   comparison and pictures); the order of the steps is each lab's main.c. */
#include "sciddicat/sciddicat_driver.h"

#include <stdio.h>
#include <string.h>

#include "labkit/compare.h"
#include "labkit/grid_io.h"
#include "labkit/png.h"

/* The input files the command line names, in the course layout or as ESRI grids. */
static int load_files(const lk_options *o, sciddicat *sim, char *label, size_t size,
                      lk_error *err)
{
    if (o->nfiles == 3) {
        snprintf(label, size, "%s", o->files[1]);
        return sciddicat_load(o->files[0], o->files[1], o->files[2], sim, err);
    }
    if (o->nfiles == 2) {
        snprintf(label, size, "%s", o->files[0]);
        if (sciddicat_load_asc(o->files[0], o->files[1], sim, err) == 0)
            return 0;
        /* Two of the course layout's three files read as ESRI grids fail on the header:
           say which forms there are. */
        size_t n = strlen(err->msg);
        snprintf(err->msg + n, sizeof err->msg - n, " (two files are read as DEM.asc "
                 "SOURCE.asc, ESRI grids with their header; the course layout takes three: "
                 "HEADER DEM SOURCE)");
        return -1;
    }
    return lk_fail(err, "%d input files given: give HEADER DEM SOURCE, or DEM.asc SOURCE.asc, "
                        "or use --dataset/--gen (see -h)", o->nfiles);
}

int sciddicat_open(lk_run *run, sciddicat *sim)
{
    if (run->status != 0)
        return -1;
    int dataset_steps = -1;
    if (run->opt.dataset || run->opt.gen) {
        if (lk_run_open_dataset(run, &sciddicat_datasets, sim, &dataset_steps) != 0)
            return -1;
    } else if (load_files(&run->opt, sim, run->label, sizeof run->label, &run->err) != 0)
        return lk_run_fail(run);
    run->steps = lk_run_choose_steps(run, dataset_steps, 4000);
    const size_t n = (size_t)sim->rows * sim->cols;
    /* The copy yardstick moves as many bytes as the four outflow layers a step rewrites. */
    const lk_output_shape shape = {.rows = sim->rows, .cols = sim->cols, .fields = 1,
                                   .bytes_per_cell_step = SCIDDICAT_BYTES_PER_CELL_STEP,
                                   .min_bytes_per_cell_step = SCIDDICAT_MIN_BYTES_PER_CELL_STEP,
                                   .copy_bytes = 4 * n * sizeof(double)};
    const void *inputs[2] = {sim->z, sim->h0};
    const size_t bytes[2] = {n * sizeof(double), n * sizeof(double)};
    return lk_run_loaded(run, &shape, 2, inputs, bytes);
}

void sciddicat_report(lk_run *run, const sciddicat *sim)
{
    if (run->status != 0 || run->opt.bench)
        return;
    const lk_options *o = &run->opt;
    lk_run_result *r = &run->r;
    const int rows = sim->rows, cols = sim->cols;
    const size_t n = (size_t)rows * cols;
    lk_error *err = &run->err;
    if (r->ran_serial && lk_run_hashes(run) &&
        lk_course_text_md5(run->expected, rows, cols, r->serial_md5, err) != 0)
        goto failed;
    if (r->ran_gpu && lk_run_hashes(run) &&
        (lk_course_text_md5(run->gpu, rows, cols, r->gpu_md5, err) != 0 ||
                       lk_binary_md5(run->gpu, n, r->gpu_md5_bin, err) != 0))
        goto failed;
    if (r->ran_serial && r->ran_gpu) {
        lk_compare cmp;
        r->compared = 1;
        r->match = lk_compare_grids(run->expected, run->gpu, rows, cols, 8, &cmp) == 0;
        if (!r->match)
            lk_compare_format(r->mismatch, sizeof r->mismatch, &cmp, rows, cols, "thickness h");
    }
    const double *h = lk_run_output(run);
    char title[320];
    snprintf(title, sizeof title, "SciddicaT %s: debris thickness", run->label);
    if ((o->out && lk_write_course_text(o->out, h, rows, cols, err) != 0) ||
        (o->bin && lk_write_binary(o->bin, h, n, err) != 0) ||
        (o->png && lk_png_terrain(o->png, sim->z, h, rows, cols, sim->hdr.cellsize,
                                  SCIDDICAT_P_EPSILON, title, err) != 0))
        goto failed;
    return;
failed:
    lk_run_fail(run);
}
