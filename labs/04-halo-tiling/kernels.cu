// Lab 04: halo tiling of SciddicaT. The file you edit: the TODOs in order, each explained
// in README.md ("Tasks"). Compute with lab04_cell_flows / lab04_cell_width (lab.h).

#include "lab.h"
#include "labkit/cuda_check.h"

// TODO 1: flows_halo (README "Tiles with halo cells").
__global__ void flows_halo(int rows, int cols, const double *__restrict__ z,
                           const double *__restrict__ h, double *__restrict__ Sf)
{
}

// TODO 2: width_halo, the same blocks as TODO 1.
__global__ void width_halo(int rows, int cols, double *__restrict__ h,
                           const double *__restrict__ Sf)
{
}

// TODO 3: flows_nohalo (README "Tiles without halo cells").
__global__ void flows_nohalo(int rows, int cols, const double *__restrict__ z,
                             const double *__restrict__ h, double *__restrict__ Sf)
{
}

// TODO 4: width_nohalo, the same blocks as TODO 3.
__global__ void width_nohalo(int rows, int cols, double *__restrict__ h,
                             const double *__restrict__ Sf)
{
}

// TODO 5: each kernel's block and dynamic shared memory (lab04_describe_kernel, lab.h).
static int launch_shape(lab04_variant variant, lab04_process process, int tile_x, int tile_y,
                        lab04_kernel_info *out, lk_error *err)
{
    return lk_fail(err, "kernels.cu: launch_shape: the %s %s kernel is not described yet: "
                        "TODO 5, see labs/04-halo-tiling/README.md",
                   lab04_variant_name(variant), process == LAB04_FLOWS ? "flows" : "width");
}

// TODO 6: the launchers: one block per tile, partial tiles included (README "Any domain size").
extern "C" int lab04_flows(lab04_variant variant, int tile_x, int tile_y, int rows, int cols,
                           const double *d_z, const double *d_h, double *d_Sf, lk_error *err)
{
    return lk_fail(err, "kernels.cu: lab04_flows (%s variant) is not written yet: start with "
                        "TODO 1 (see labs/04-halo-tiling/README.md)", lab04_variant_name(variant));
}

extern "C" int lab04_width(lab04_variant variant, int tile_x, int tile_y, int rows, int cols,
                           double *d_h, const double *d_Sf, lk_error *err)
{
    return lk_fail(err, "kernels.cu: lab04_width (%s variant) is not written yet: start with "
                        "TODO 1 (see labs/04-halo-tiling/README.md)", lab04_variant_name(variant));
}

// TODO 7 (stretch): step_fused, one kernel per step (README "Stretch: the fused and the fast
// step"). TODO 8: launch it, and describe it below in place of LAB04_NOT_ATTEMPTED.
__global__ void step_fused(int rows, int cols, const double *__restrict__ z,
                           const double *__restrict__ h_in, double *__restrict__ h_out)
{
}

extern "C" int lab04_fused_step(int tile_x, int tile_y, int rows, int cols, const double *d_z,
                                const double *d_h_in, double *d_h_out, lk_error *err)
{
    return LAB04_NOT_ATTEMPTED;
}

extern "C" int lab04_describe_kernel(lab04_variant variant, lab04_process process,
                                     int tile_x, int tile_y, lab04_kernel_info *out,
                                     lk_error *err)
{
    if (variant == LAB04_FUSED)
        return LAB04_NOT_ATTEMPTED;
    return launch_shape(variant, process, tile_x, tile_y, out, err);
}
