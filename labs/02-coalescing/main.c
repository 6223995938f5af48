/* Lab 02 driver (read-only): the whole run in order. Load the input, run the serial
   program (serial.c), call your lab02_gpu_run (kernels.cu), or with `--variant uncoalesced`
   the given version (given.cu), as the harness plans it; compare and hash, report.
   `--bench` times both on the large grid. The harness (labkit/harness.h) owns the options,
   the poisoning, the timing and the reports. */
#include "given.h"
#include "swe/swe_driver.h"

static const lk_variant variants[] = {
    {.name = "uncoalesced", .help = ": run the given version (given.cu) instead of yours",
     .given = 1},
    {0}};

static const lk_lab lab02 = {
    .name = LK_LAB,
    .title = "Shallow water",
    .options = LK_OPT_BLOCK | LK_OPT_TIME,
    .gen_help = SWE_GEN_HELP,
    .block_x = 32, .block_y = 8,
    .variants = variants,
    .standard_dataset = "swe-dam-1000",
    .bench_dataset = "swe-large",
    .bench_steps = 1000,
    .bench_serial_steps = 2,
    .baseline_steps = 2,
};

int main(int argc, char **argv)
{
    lk_run run;
    swe sim = {0};
    if (lk_run_start(&run, &lab02, argc, argv) != 0)
        return run.status;
    swe_open(&run, &sim);
    if (lk_run_serial_begin(&run)) {
        swe_fields expected = swe_fields_of(&sim, run.expected);
        lk_run_serial_end(&run, swe_serial(&sim, run.serial_steps, &expected, &run.err));
    }
    for (lk_gpu_call *c; (c = lk_run_next_gpu_call(&run)) != NULL;) {
        swe_fields out = swe_fields_of(&sim, c->out);
        c->rc = c->given ? lab02_uncoalesced_run(&sim, c->steps, &out, c->block_x, c->block_y,
                                                 &c->err)
                         : lab02_gpu_run(&sim, c->steps, &out, c->block_x, c->block_y,
                                         &c->err);
    }
    swe_report(&run, &sim);
    swe_free(&sim);
    return lk_run_finish(&run);
}
