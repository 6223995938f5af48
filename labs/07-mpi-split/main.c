/* Lab 07 driver (read-only): the whole run in order. Every rank starts here; ranks other
   than 0 serve rank 0's runs (given.c). Rank 0 loads the input, runs the serial program
   (serial.c, lab 01's), runs the given time loop on every rank with your exchange.c and
   kernels.cu as the harness plans it, compares and hashes, reports. Start it under mpirun:
   `mpirun -np 4 ./build/student/lab07 --dataset sciddicat-odd`. */
#include "given.h"
#include "sciddicat/sciddicat_driver.h"

static const lk_lab lab07 = {
    .name = LK_LAB,
    .title = "SciddicaT",
    .options = LK_OPT_BLOCK | LK_OPT_FILES,
    .gen_help = SCIDDICAT_GEN_HELP,
    .files_usage = SCIDDICAT_FILES_USAGE,
    .block_x = 128, .block_y = 2,
    .variants = lab07_variants,
    .standard_dataset = "sciddicat-course-size",
    .bench_dataset = "sciddicat-scale",
    .bench_steps = 50,
    .bench_serial_steps = 1,
};

int main(int argc, char **argv)
{
    lab07_world world;
    if (lab07_world_start(&argc, &argv, &world) != 0)
        return 1;
    if (world.rank != 0)
        return lab07_serve(&world);
    lk_run run;
    sciddicat sim = {0};
    if (lk_run_start(&run, &lab07, argc, argv) != 0)
        return lab07_world_end(&world, run.status);
    sciddicat_open(&run, &sim);
    lab07_describe(&world, &run);
    if (lk_run_serial_begin(&run))
        lk_run_serial_end(&run, sciddicat_serial(&sim, run.serial_steps, run.expected,
                                                 NULL, &run.err));
    for (lk_gpu_call *c; (c = lk_run_next_gpu_call(&run)) != NULL;) {
        lab07_variant variant;
        c->rc = lab07_variant_parse(c->variant, &variant, &c->err) ||
                lab07_run(&world, &sim, c->out, c->steps, variant, c->block_x, c->block_y,
                          &c->err);
    }
    sciddicat_report(&run, &sim);
    lab07_bench_report(&world, &run);
    sciddicat_free(&sim);
    return lab07_world_end(&world, lk_run_finish(&run));
}
