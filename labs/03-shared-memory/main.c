/* Lab 03 driver (read-only): the shared shallow-water driver with this lab's harness.
   `--variant global` runs the harness's global-memory step kernel instead of yours, and
   `--bench` times both on the large grid. */
#include "lab.h"

int main(int argc, char **argv)
{
    const lk_swe_lab lab = {
        .name = LK_LAB,
        .run = lab03_gpu_run,
        .baseline = lab03_global_run,
        .baseline_name = "global",
        .baseline_help = "run the harness's global-memory step kernel instead of yours",
        .baseline_steps = 0, /* as many as the timed run of yours */
        .launch = {.block_x = 32, .block_y = 4},
        .standard_dataset = "swe-dam-1000",
        .bench_dataset = "swe-large",
        .bench_steps = 1000,
        .bench_serial_steps = 2,
    };
    return lk_swe_driver(argc, argv, &lab);
}
