/* Lab 04 driver (read-only): the whole run in order. Check --variant and --tile, load the
   input, run the serial program (serial.c, lab 01's), run the given time loop (given.c)
   with your launchers (kernels.cu) as the harness plans it; compare and hash, report.
   `make bench` times each variant at its default tile; ./sweep.sh other tiles. The harness
   (labkit/harness.h) owns the options, the poisoning, the timing and the reports. */
#include "given.h"
#include "sciddicat/sciddicat_driver.h"

static const lk_lab lab04 = {
    .name = LK_LAB,
    .title = "SciddicaT",
    .options = LK_OPT_TILE | LK_OPT_FILES,
    .gen_help = SCIDDICAT_GEN_HELP,
    .files_usage = SCIDDICAT_FILES_USAGE,
    .variants = lab04_variants,
    .standard_dataset = "sciddicat-course-size",
    .bench_dataset = "sciddicat-large",
    .bench_steps = 1000, // fast's dry step (0.01 ms) is lost in the jitter of 200-step runs
    .bench_serial_steps = 5,
};

int main(int argc, char **argv)
{
    lk_run run;
    sciddicat sim = {0};
    if (lk_run_start(&run, &lab04, argc, argv) != 0)
        return run.status;
    if (lab04_check_options(run.opt.variant, run.opt.tile_x, run.opt.tile_y, &run.err) != 0)
        return lk_run_usage_error(&run);
    sciddicat_open(&run, &sim);
    if (lk_run_serial_begin(&run))
        lk_run_serial_end(&run, sciddicat_serial(&sim, run.serial_steps, run.expected,
                                                 NULL, &run.err));
    for (lk_gpu_call *c; (c = lk_run_next_gpu_call(&run)) != NULL;) {
        lab04_variant variant;
        c->rc = lab04_variant_parse(c->variant, &variant, &c->err) ||
                lab04_gpu_run(sim.rows, sim.cols, sim.z, sim.h0, c->out, c->steps, variant,
                              c->tile_x, c->tile_y, &c->err);
    }
    sciddicat_report(&run, &sim);
    sciddicat_free(&sim);
    return lk_run_finish(&run);
}
