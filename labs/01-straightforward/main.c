/* Lab 01 driver (read-only): the shared SciddicaT driver with this lab's entry point. */
#include "lab.h"

int main(int argc, char **argv)
{
    const lk_sciddicat_lab lab = {
        .name = LK_LAB,
        .run = lab01_gpu_run,
        .launch = {.block_x = 128, .block_y = 2},
        .standard_dataset = "sciddicat-course-size",
        .bench_dataset = "sciddicat-large",
        .bench_steps = 200,
        .bench_serial_steps = 5,
    };
    return lk_sciddicat_driver(argc, argv, &lab);
}
