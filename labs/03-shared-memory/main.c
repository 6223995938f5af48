/* Lab 03 driver (read-only): the whole run in order. Load the input, run the serial
   program (serial.c, lab 02's), run the given time loop (given.cu) around your lab03_step
   (kernels.cu), or with `--variant global` around a global-memory step, as the harness
   plans it; compare and hash, report. `--bench` times both on the large grid. The harness
   (labkit/harness.h) owns the options, the poisoning, the timing and the reports. */
#include "given.h"
#include "swe/swe_driver.h"

static const lk_variant variants[] = {
    {.name = "global", .help = ": the given global-memory step kernel instead of yours",
     .given = 1},
    {0}};

static const lk_lab lab03 = {
    .name = LK_LAB,
    .title = "Shallow water",
    .options = LK_OPT_BLOCK | LK_OPT_TIME,
    .gen_help = SWE_GEN_HELP,
    .block_x = 64, .block_y = 4,
    .variants = variants,
    .standard_dataset = "swe-dam-1000",
    .bench_dataset = "swe-large",
    .bench_steps = 1000,
    .bench_serial_steps = 2,
};

int main(int argc, char **argv)
{
    lk_run run;
    swe sim = {0};
    if (lk_run_start(&run, &lab03, argc, argv) != 0)
        return run.status;
    swe_open(&run, &sim);
    if (lk_run_serial_begin(&run)) {
        swe_fields expected = swe_fields_of(&sim, run.expected);
        lk_run_serial_end(&run, swe_serial(&sim, run.serial_steps, &expected, &run.err));
    }
    for (lk_gpu_call *c; (c = lk_run_next_gpu_call(&run)) != NULL;) {
        swe_fields out = swe_fields_of(&sim, c->out);
        c->rc = c->given ? lab03_global_run(&sim, c->steps, &out, c->block_x, c->block_y,
                                            &c->err)
                         : lab03_gpu_run(&sim, c->steps, &out, c->block_x, c->block_y,
                                         &c->err);
    }
    swe_report(&run, &sim);
    swe_free(&sim);
    return lk_run_finish(&run);
}
