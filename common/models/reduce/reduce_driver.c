/* The lab 06 steps of a lab driver: what only this lab's inputs know (loading, judging,
   output files); the order of the steps is the lab's main.c. */
#include "reduce/reduce_driver.h"

#include <stdio.h>
#include <stdlib.h>

#include "labkit/grid_io.h"
#include "labkit/png.h"

int reduce_open(lk_run *run, reduce_input *in)
{
    if (run->status != 0)
        return -1;
    int dataset_steps = -1;
    if (lk_run_open_dataset(run, &reduce_datasets, in, &dataset_steps) != 0)
        return -1;
    if (run->opt.png && in->lagrange) {
        lk_fail(&run->err, "--png: a Lagrange problem has no picture: use --out (x and p(x) "
                           "per line) and plot it");
        return lk_run_fail(run);
    }
    run->steps = lk_run_choose_steps(run, dataset_steps, 0);
    lk_output_shape shape = {.rows = 1, .cols = (int)in->nout, .fields = 1,
                             .judge = reduce_judge, .judge_ctx = in};
    if (in->lagrange) {
        /* A step reads the nodes from cache and each point once: 16 bytes per point. */
        shape.bytes_per_cell_step = 16.0;
        shape.copy_bytes = (size_t)in->S * sizeof(double);
        snprintf(run->details, sizeof run->details,
                 " (Lagrange: n = %d, S = %d points, %.3g basis factors a step)", in->n1 - 1,
                 in->S, (double)in->S * in->n1 * (in->n1 - 1));
    } else {
        /* A step (one sum) reads every value once: its points are the values, not the 7
           outputs. */
        const size_t n = (size_t)in->rows * in->cols;
        shape.points = n;
        shape.bytes_per_cell_step = sizeof(double);
        shape.copy_bytes = n * sizeof(double);
        snprintf(run->details, sizeof run->details,
                 " (a field of %d x %d = %zu values, threshold %g)", in->rows, in->cols, n,
                 in->threshold);
    }
    if (in->lagrange) {
        const void *inputs[3] = {in->x, in->y, in->xs};
        const size_t bytes[3] = {in->n1 * sizeof(double), in->n1 * sizeof(double),
                                 in->S * sizeof(double)};
        return lk_run_loaded(run, &shape, 3, inputs, bytes);
    }
    const void *inputs[1] = {in->field};
    const size_t bytes[1] = {(size_t)in->rows * in->cols * sizeof(double)};
    return lk_run_loaded(run, &shape, 1, inputs, bytes);
}

static int write_text(const char *path, const reduce_input *in, const double *v,
                      lk_error *err)
{
    static const char *const names[REDUCE_NOUT] = {
        "sum", "max", "count", "row_min", "row_max", "col_min", "col_max"};
    FILE *f = fopen(path, "w");
    if (!f)
        return lk_fail(err, "%s: cannot open for writing: check the folder exists", path);
    for (size_t i = 0; i < in->nout; i++) {
        if (in->lagrange)
            fprintf(f, "%.17g %.17g\n", in->xs[i], v[i]);
        else
            fprintf(f, "%-8s %.17g\n", names[i], v[i]);
    }
    if (!in->lagrange)
        fprintf(f, "%-8s %.17g\n", "bound", in->bound[LK_OUT_SUM]);
    if (fclose(f) != 0)
        return lk_fail(err, "%s: write failed: check the disk", path);
    return 0;
}

/* md5 of what `--bin` writes: the judged form (the raw one in a graded build). */
static int judged_md5(const reduce_input *in, const double *v, char hex[33], lk_error *err)
{
    double *w = malloc(in->nout * sizeof *w);
    if (!w)
        return lk_fail(err, "out of memory for %zu values", in->nout);
    for (size_t i = 0; i < in->nout; i++)
        w[i] = in->have_reference ? reduce_judged(v[i], in->gold[i], in->bound[i]) : v[i];
    int rc = lk_binary_md5(w, in->nout, hex, err);
    free(w);
    return rc;
}

void reduce_report(lk_run *run, const reduce_input *in)
{
    if (run->status != 0 || run->opt.bench)
        return;
    const lk_options *o = &run->opt;
    lk_run_result *r = &run->r;
    lk_error *err = &run->err;
    if (r->ran_serial && lk_run_hashes(run) &&
        lk_binary_md5(run->expected, in->nout, r->serial_md5, err) != 0)
        goto failed;
    if (r->ran_gpu && lk_run_hashes(run) &&
        (lk_binary_md5(run->gpu, in->nout, r->gpu_md5, err) != 0 ||
         judged_md5(in, run->gpu, r->gpu_md5_bin, err) != 0))
        goto failed;
    if (r->ran_serial && r->ran_gpu) {
        /* Not bit for bit: the GPU result is judged against the reference (reduce/reduce.h). */
        char where[512];
        r->compared = 1;
        size_t bad = reduce_judge(in, run->gpu, where, sizeof where);
        r->match = bad == 0;
        if (!r->match)
            snprintf(r->mismatch, sizeof r->mismatch,
                     "%zu of %zu values out of their bounds: first %s\n", bad, in->nout, where);
    }
    const double *v = lk_run_output(run);
    char title[320];
    if (!in->lagrange)
        snprintf(title, sizeof title, "%s: %.0f cells above %g in rows %.0f-%.0f, columns "
                 "%.0f-%.0f", run->label, v[LK_OUT_COUNT], in->threshold, v[LK_OUT_ROW_MIN],
                 v[LK_OUT_ROW_MAX], v[LK_OUT_COL_MIN], v[LK_OUT_COL_MAX]);
    if ((o->out && write_text(o->out, in, v, err) != 0) ||
        (o->bin && reduce_write_judged(o->bin, in, v, err) != 0) ||
        (o->png && lk_png_field(o->png, in->field, in->rows, in->cols, title, err) != 0))
        goto failed;
    return;
failed:
    lk_run_fail(run);
}
