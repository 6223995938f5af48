/* Lab 04, given (read-only): variants and tiles, device buffers and the step loop. Your
   launchers (kernels.cu) only launch kernels on buffers owned here. */
#include <stdio.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "given.h"
#include "labkit/cuda_check.h"

const lk_variant lab04_variants[LAB04_NVARIANTS + 1] = {
    {.name = "halo", .help = ": tiles with a halo of cells (default)", .tile_x = 30, .tile_y = 6},
    {.name = "nohalo", .help = ": tiles without a halo", .tile_x = 32, .tile_y = 8},
    {.name = "fused", .help = ": stretch, one kernel per step", .tile_x = 30, .tile_y = 14},
    /* 32x8: eight warps, the fastest tile of the solution on the wet grid in the sweep of
       README.md. */
    {.name = "fast", .help = ": stretch 2, the fused step near the debris only", .tile_x = 32,
     .tile_y = 8},
    {0}};

int lab04_variant_parse(const char *name, lab04_variant *out, lk_error *err)
{
    if (!name || !name[0]) {
        *out = LAB04_HALO;
        return 0;
    }
    for (int v = 0; v < LAB04_NVARIANTS; v++)
        if (strcmp(name, lab04_variants[v].name) == 0) {
            *out = (lab04_variant)v;
            return 0;
        }
    return lk_fail(err, "--variant %s: unknown variant: use halo, nohalo, fused or fast", name);
}

const char *lab04_variant_name(lab04_variant variant)
{
    return (int)variant >= 0 && (int)variant < LAB04_NVARIANTS ? lab04_variants[variant].name
                                                               : "?";
}

void lab04_block_of_tile(lab04_variant variant, int tile_x, int tile_y, int *block_x,
                         int *block_y)
{
    int ring = variant == LAB04_NOHALO || variant == LAB04_FAST ? 0 : 2;
    *block_x = tile_x + ring;
    *block_y = tile_y + ring;
}

int lab04_check_tile(lab04_variant variant, int tile_x, int tile_y, lk_error *err)
{
    if (tile_x < 1 || tile_y < 1 || tile_x > LAB04_MAX_BLOCK_THREADS ||
        tile_y > LAB04_MAX_BLOCK_THREADS)
        return lk_fail(err, "--tile %dx%d: each side of a tile must be between 1 and %d",
                       tile_x, tile_y, LAB04_MAX_BLOCK_THREADS);
    int bx, by;
    lab04_block_of_tile(variant, tile_x, tile_y, &bx, &by);
    if ((long)bx * by > LAB04_MAX_BLOCK_THREADS)
        return lk_fail(err, "--tile %dx%d: the %s variant's block is %s, %dx%d = %ld threads, "
                            "more than %d: use a smaller tile",
                       tile_x, tile_y, lab04_variant_name(variant),
                       variant == LAB04_NOHALO || variant == LAB04_FAST
                           ? "the tile"
                           : "the tile plus a one-cell ring",
                       bx, by, (long)bx * by, LAB04_MAX_BLOCK_THREADS);
    if (variant == LAB04_FAST && (long)bx * by < LAB04_FAST_MIN_THREADS)
        return lk_fail(err, "--tile %dx%d: the fast variant's block is the tile, %d threads, "
                            "fewer than one warp (%d): use a tile of at least %d threads "
                            "(e.g. 32x1)",
                       tile_x, tile_y, bx * by, LAB04_FAST_MIN_THREADS, LAB04_FAST_MIN_THREADS);
    return 0;
}

int lab04_check_options(const char *variant, int tile_x, int tile_y, lk_error *err)
{
    lab04_variant v = LAB04_HALO;
    if (lab04_variant_parse(variant, &v, err) != 0)
        return -1;
    if (tile_x == 0 && tile_y == 0)
        return 0;
    return lab04_check_tile(v, tile_x, tile_y, err);
}

/* The second stretch while kernels.cu does not define it (a weak definition: the linker
   takes kernels.cu's when there is one). */
__attribute__((weak)) int lab04_fast_step(int step, int tile_x, int tile_y, int rows, int cols,
                                          const double *d_z, const double *d_h_in,
                                          double *d_h_out, lab04_box *d_boxes, lk_error *err)
{
    return LAB04_NOT_ATTEMPTED;
}

/* A launcher that fails must say why; one that returns -1 silently gets a message here. */
static int student_call(int rc, const char *what, lk_error *err)
{
    if (rc == 0)
        return 0;
    if (rc == LAB04_NOT_ATTEMPTED)
        return lk_fail(err, "%s returned LAB04_NOT_ATTEMPTED: the %s variant is a stretch "
                            "task (README.md); use --variant halo or nohalo", what,
                       strcmp(what, "lab04_fast_step") == 0 ? "fast" : "fused");
    if (!err->msg[0])
        return lk_fail(err, "%s returned %d without a message: fill err (LK_LAUNCH_TRY, "
                            "lk_fail) so the failure can be explained", what, rc);
    return -1;
}

/* Like LK_CUDA_TRY, but leaves through the cleanup below instead of returning. */
#define CUDA_GO(call)                                                                       \
    do {                                                                                    \
        cudaError_t code_ = (call);                                                         \
        if (code_ != cudaSuccess) {                                                         \
            lk_cuda_fail(err, code_, #call, __FILE__, __LINE__);                            \
            goto done;                                                                      \
        }                                                                                   \
    } while (0)

int lab04_gpu_run(int rows, int cols, const double *z, const double *h_in, double *h_out,
                  int steps, lab04_variant variant, int tile_x, int tile_y, lk_error *err)
{
    lk_error_clear(err);
    if (lab04_check_tile(variant, tile_x, tile_y, err) != 0)
        return -1;

    const size_t n = (size_t)rows * (size_t)cols, bytes = n * sizeof(double);
    const int fused = variant == LAB04_FUSED || variant == LAB04_FAST;
    double *d_z = NULL, *d_h[2] = {NULL, NULL}, *d_Sf = NULL;
    lab04_box *d_boxes = NULL;
    int rc = -1, cur = 0;
    CUDA_GO(cudaMalloc((void **)&d_z, bytes));
    CUDA_GO(cudaMalloc((void **)&d_h[0], bytes));
    CUDA_GO(cudaMemcpy(d_z, z, bytes, cudaMemcpyHostToDevice));
    CUDA_GO(cudaMemcpy(d_h[0], h_in, bytes, cudaMemcpyHostToDevice));
    if (fused) {
        /* Ping-pong: the border cells, which no step writes, must be right in both buffers. */
        CUDA_GO(cudaMalloc((void **)&d_h[1], bytes));
        CUDA_GO(cudaMemcpy(d_h[1], h_in, bytes, cudaMemcpyHostToDevice));
    } else {
        CUDA_GO(cudaMalloc((void **)&d_Sf, SCIDDICAT_NFLOWS * bytes));
    }

    if (variant == LAB04_FAST) {
        lab04_box boxes[LAB04_FAST_BOXES];
        lab04_fast_boxes_init(rows, cols, boxes);
        CUDA_GO(cudaMalloc((void **)&d_boxes, sizeof boxes));
        CUDA_GO(cudaMemcpy(d_boxes, boxes, sizeof boxes, cudaMemcpyHostToDevice));
    }

    if (rows >= 3 && cols >= 3) {
        for (int s = 0; s < steps; s++) {
            if (variant == LAB04_FAST) {
                if (student_call(lab04_fast_step(s, tile_x, tile_y, rows, cols, d_z, d_h[cur],
                                                 d_h[1 - cur], d_boxes, err),
                                 "lab04_fast_step", err) != 0)
                    goto done;
                cur = 1 - cur;
                continue;
            }
            if (fused) {
                if (student_call(lab04_fused_step(tile_x, tile_y, rows, cols, d_z, d_h[cur],
                                                  d_h[1 - cur], err),
                                 "lab04_fused_step", err) != 0)
                    goto done;
                cur = 1 - cur;
                continue;
            }
            /* Reset: zeroing the border outflows too is harmless, they are always zero. */
            CUDA_GO(cudaMemsetAsync(d_Sf, 0, SCIDDICAT_NFLOWS * bytes, 0));
            if (student_call(lab04_flows(variant, tile_x, tile_y, rows, cols, d_z, d_h[0], d_Sf,
                                         err), "lab04_flows", err) != 0 ||
                student_call(lab04_width(variant, tile_x, tile_y, rows, cols, d_h[0], d_Sf, err),
                             "lab04_width", err) != 0)
                goto done;
        }
    }
    /* Errors inside the kernels (an out-of-bounds access) surface here, not at the launch. */
    CUDA_GO(cudaDeviceSynchronize());
    CUDA_GO(cudaMemcpy(h_out, d_h[cur], bytes, cudaMemcpyDeviceToHost));
    rc = 0;
done:
    /* After a kernel fault every call fails: keep the first message, free what we can. */
    cudaFree(d_z);
    cudaFree(d_h[0]);
    cudaFree(d_h[1]);
    cudaFree(d_Sf);
    cudaFree(d_boxes);
    return rc;
}
