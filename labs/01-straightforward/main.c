/* Lab 01 driver (read-only): the whole run in order. Load the input, run the serial
   program (serial.c), call your lab01_gpu_run (kernels.cu) as the harness plans it (one
   checked call, then timed ones), compare and hash, report. The harness
   (labkit/harness.h) owns the options, the poisoning, the timing and the reports. */
#include "lab.h"
#include "sciddicat/sciddicat_driver.h"

static const lk_lab lab01 = {
    .name = LK_LAB,
    .title = "SciddicaT",
    .options = LK_OPT_BLOCK | LK_OPT_FILES,
    .gen_help = SCIDDICAT_GEN_HELP,
    .files_usage = SCIDDICAT_FILES_USAGE,
    .block_x = 128, .block_y = 2,
    .standard_dataset = "sciddicat-course-size",
    .bench_dataset = "sciddicat-large",
    .bench_steps = 1000, // as lab 04 and the public codes it is compared with
    .bench_serial_steps = 5,
};

int main(int argc, char **argv)
{
    lk_run run;
    sciddicat sim = {0};
    if (lk_run_start(&run, &lab01, argc, argv) != 0)
        return run.status;
    sciddicat_open(&run, &sim);
    if (lk_run_serial_begin(&run))
        lk_run_serial_end(&run, sciddicat_serial(&sim, run.serial_steps, run.expected,
                                                 NULL, &run.err));
    for (lk_gpu_call *c; (c = lk_run_next_gpu_call(&run)) != NULL;)
        c->rc = lab01_gpu_run(sim.rows, sim.cols, sim.z, sim.h0, c->out, c->steps,
                              c->block_x, c->block_y, &c->err);
    sciddicat_report(&run, &sim);
    sciddicat_free(&sim);
    return lk_run_finish(&run);
}
