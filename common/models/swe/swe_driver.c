/* The shallow-water steps of a lab driver: what only this model knows (its inputs, hash,
   comparison and pictures); the order of the steps is each lab's main.c. */
#include "swe/swe_driver.h"

#include <stdio.h>

int swe_open(lk_run *run, swe *sim)
{
    if (run->status != 0)
        return -1;
    const lk_options *o = &run->opt;
    int dataset_steps = -1;
    if (lk_run_open_dataset(run, &swe_datasets, sim, &dataset_steps) != 0)
        return -1;
    if (o->time >= 0.0) {
        if (swe_steps_for_time(sim, o->time, &run->steps, &run->err) != 0)
            return lk_run_fail(run);
    } else {
        int default_steps = 0;
        swe_steps_for_time(sim, SWE_DEFAULT_TIME, &default_steps, &run->err);
        run->steps = lk_run_choose_steps(run, dataset_steps, default_steps);
    }
    snprintf(run->details, sizeof run->details, " of %.6g s (t = %.4g s), dx %.6g m", sim->dt,
             run->steps * sim->dt, sim->dx);
    const size_t bytes = swe_cells(sim) * sizeof(double);
    const lk_output_shape shape = {.rows = sim->rows, .cols = sim->cols, .fields = 3,
                                   .ghost = 1,
                                   .bytes_per_cell_step = SWE_BYTES_PER_CELL_STEP,
                                   .min_bytes_per_cell_step = SWE_BYTES_PER_CELL_STEP,
                                   .copy_bytes = 3 * bytes};
    const void *inputs[3] = {sim->q.Z, sim->q.Qx, sim->q.Qy};
    const size_t input_bytes[3] = {bytes, bytes, bytes};
    return lk_run_loaded(run, &shape, 3, inputs, input_bytes);
}

void swe_report(lk_run *run, const swe *sim)
{
    if (run->status != 0 || run->opt.bench)
        return;
    const lk_options *o = &run->opt;
    lk_run_result *r = &run->r;
    lk_error *err = &run->err;
    swe_fields expected = swe_fields_of(sim, run->expected);
    swe_fields got = swe_fields_of(sim, run->gpu);
    if (r->ran_serial && lk_run_hashes(run) && swe_md5(sim, &expected, r->serial_md5, err) != 0)
        goto failed;
    if (r->ran_gpu && lk_run_hashes(run)) {
        if (swe_md5(sim, &got, r->gpu_md5, err) != 0)
            goto failed;
        snprintf(r->gpu_md5_bin, sizeof r->gpu_md5_bin, "%s", r->gpu_md5);
    }
    if (r->ran_serial && r->ran_gpu) {
        r->compared = 1;
        r->match = swe_compare(sim, &expected, &got, 8, NULL, NULL, r->mismatch,
                               sizeof r->mismatch) == 0;
    }
    swe_fields final = swe_fields_of(sim, (double *)lk_run_output(run));
    char title[320];
    snprintf(title, sizeof title, "Shallow water %s, t = %.3f s: water height Z (m)",
             run->label, run->steps * sim->dt);
    if ((o->out && swe_write_text(o->out, sim, &final, err) != 0) ||
        (o->bin && swe_write_binary(o->bin, sim, &final, err) != 0) ||
        (o->png && swe_write_png(o->png, sim, &final, title, err) != 0))
        goto failed;
    return;
failed:
    lk_run_fail(run);
}
