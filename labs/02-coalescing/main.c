/* Lab 02 driver (read-only): the shared shallow-water driver with this lab's entry points.
   `--variant uncoalesced` runs the given version (uncoalesced.cu) instead of yours, and
   `--bench` times both on the large grid. */
#include "lab.h"

int main(int argc, char **argv)
{
    const lk_swe_lab lab = {
        .name = LK_LAB,
        .run = lab02_gpu_run,
        .baseline = lab02_uncoalesced_run,
        .baseline_name = "uncoalesced",
        .baseline_help = "run the given version (uncoalesced.cu) instead of yours",
        .baseline_steps = 2,
        .launch = {.block_x = 32, .block_y = 8},
        .standard_dataset = "swe-dam-1000",
        .bench_dataset = "swe-large",
        .bench_steps = 1000,
        .bench_serial_steps = 2,
    };
    return lk_swe_driver(argc, argv, &lab);
}
