/* The vibrating-string steps of a lab driver: what only this model knows (its inputs, hash
   and comparison); the order of the steps is the lab's main.c. */
#include "vstring/vstring_driver.h"

#include <stdio.h>
#include <stdlib.h>

#include "labkit/grid_io.h"
#include "labkit/png.h"

int vstring_open(lk_run *run, vstring *sim)
{
    if (run->status != 0)
        return -1;
    int dataset_steps = -1;
    if (lk_run_open_dataset(run, &vstring_datasets, sim, &dataset_steps) != 0)
        return -1;
    run->steps = lk_run_choose_steps(run, dataset_steps, VSTRING_DEFAULT_STEPS);
    snprintf(run->details, sizeof run->details, " (%d mass points, u and v interleaved; h %g)",
             sim->n, VSTRING_H);
    const size_t bytes = vstring_components(sim) * sizeof(double);
    /* One row of 2N cells; the copy yardstick moves one state, as a linear step does. */
    const lk_output_shape shape = {.rows = 1, .cols = 2 * sim->n, .fields = 1, .ghost = 0,
                                   .bytes_per_cell_step = VSTRING_BYTES_PER_COMPONENT_STEP,
                                   .copy_bytes = bytes};
    const void *inputs[1] = {sim->y0};
    const size_t input_bytes[1] = {bytes};
    return lk_run_loaded(run, &shape, 1, inputs, input_bytes);
}

/* The picture: a 2 x N field, u on the top row and v below it. */
static int write_png(const char *path, const double *y, int n, const char *title, lk_error *err)
{
    double *rows = malloc(2 * (size_t)n * sizeof *rows);
    if (!rows)
        return lk_fail(err, "%s: out of memory for the picture", path);
    for (size_t p = 0; p < (size_t)n; p++) {
        rows[p] = y[2 * p];
        rows[n + p] = y[2 * p + 1];
    }
    int rc = lk_png_field(path, rows, 2, n, title, err);
    free(rows);
    return rc;
}

void vstring_report(lk_run *run, const vstring *sim)
{
    if (run->status != 0 || run->opt.bench)
        return;
    const lk_options *o = &run->opt;
    lk_error *err = &run->err;
    if (lk_run_binary_verdict(run, "col 2p is u_p, 2p+1 is v_p") != 0)
        goto failed;
    const double *y = lk_run_output(run);
    char title[320];
    snprintf(title, sizeof title, "String %s after %d steps: u (top row) and v along the string",
             run->label, run->steps);
    if ((o->out && vstring_write_text(o->out, y, sim->n, err) != 0) ||
        (o->bin && lk_write_binary(o->bin, y, vstring_components(sim), err) != 0) ||
        (o->png && write_png(o->png, y, sim->n, title, err) != 0))
        goto failed;
    return;
failed:
    lk_run_fail(run);
}
