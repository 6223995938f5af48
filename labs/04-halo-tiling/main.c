/* Lab 04 driver (read-only): the shared SciddicaT driver with this lab's harness, which runs
   the variant and tile chosen with --variant halo|nohalo|fused and --tile WxH. */
#include "lab.h"

int main(int argc, char **argv)
{
    /* `make bench` times each variant at its default tile; ./sweep.sh times other tiles. */
    static const char *const bench_variants[] = {"halo", "nohalo", "fused", NULL};
    const lk_sciddicat_lab lab = {
        .name = LK_LAB,
        .run = lab04_gpu_run,
        /* The block follows from the tile (lab04_block_of_tile); --block is not used. */
        .launch = {.block_x = 32, .block_y = 8},
        .launch_label = lab04_launch_label,
        .standard_dataset = "sciddicat-course-size",
        .bench_dataset = "sciddicat-large",
        .bench_steps = 200,
        .bench_serial_steps = 5,
        .bench_variants = bench_variants,
    };
    return lk_sciddicat_driver(argc, argv, &lab);
}
