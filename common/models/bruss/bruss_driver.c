/* The Brusselator steps of a lab driver: what only this model knows (its inputs, hash and
   comparison); the order of the steps is the lab's main.c. */
#include "bruss/bruss_driver.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "labkit/grid_io.h"
#include "labkit/manifest.h"
#include "labkit/png.h"

int bruss_input(const lk_options *o)
{
    if (o->gen)
        return bruss_is_spec(o->gen);
    if (!o->dataset)
        return 0;
    lk_manifest m;
    lk_error err;
    if (lk_manifest_read(LK_TOP_DIR "/datasets/MANIFEST", &m, &err) != 0)
        return 0; /* the model's loader reports the manifest's problem */
    const lk_manifest_entry *e = lk_manifest_find(&m, o->dataset);
    int is_bruss = e && strcmp(e->model, "bruss") == 0;
    lk_manifest_free(&m);
    return is_bruss;
}

int bruss_open(lk_run *run, bruss *sim)
{
    if (run->status != 0)
        return -1;
    int dataset_steps = -1;
    if (lk_run_open_dataset(run, &bruss_datasets, sim, &dataset_steps) != 0)
        return -1;
    run->steps = lk_run_choose_steps(run, dataset_steps, BRUSS_DEFAULT_STEPS);
    snprintf(run->details, sizeof run->details,
             " (Brusselator %d x %d, U and V interleaved per point; h %g)", sim->m, sim->m,
             bruss_h(sim->m));
    const size_t bytes = bruss_components(sim->m) * sizeof(double);
    /* m rows of 2m cells; the copy yardstick moves one state, as a linear step does. */
    const lk_output_shape shape = {.rows = sim->m, .cols = 2 * sim->m, .fields = 1, .ghost = 0,
                                   .bytes_per_cell_step = BRUSS_BYTES_PER_COMPONENT_STEP,
                                   .copy_bytes = bytes};
    const void *inputs[1] = {sim->y0};
    const size_t input_bytes[1] = {bytes};
    return lk_run_loaded(run, &shape, 1, inputs, input_bytes);
}

/* The picture: U on the m x m grid. */
static int write_png(const char *path, const double *y, int m, const char *title, lk_error *err)
{
    double *u = malloc((size_t)m * m * sizeof *u);
    if (!u)
        return lk_fail(err, "%s: out of memory for the picture", path);
    for (size_t p = 0; p < (size_t)m * m; p++)
        u[p] = y[2 * p];
    int rc = lk_png_field(path, u, m, m, title, err);
    free(u);
    return rc;
}

void bruss_report(lk_run *run, const bruss *sim)
{
    if (run->status != 0 || run->opt.bench)
        return;
    const lk_options *o = &run->opt;
    lk_error *err = &run->err;
    if (lk_run_binary_verdict(run, "row k; col 2j is U, 2j+1 is V of point j") != 0)
        goto failed;
    const double *y = lk_run_output(run);
    char title[320];
    snprintf(title, sizeof title, "Brusselator %s after %d steps: U", run->label, run->steps);
    if ((o->out && bruss_write_text(o->out, y, sim->m, err) != 0) ||
        (o->bin && lk_write_binary(o->bin, y, bruss_components(sim->m), err) != 0) ||
        (o->png && write_png(o->png, y, sim->m, title, err) != 0))
        goto failed;
    return;
failed:
    lk_run_fail(run);
}
