/* Lab 01 (bob). The interior cells are numbered 0 .. (rows-2)*(cols-2)-1 and every kernel
   walks them with a grid-stride loop, so any launch size covers any grid. */
#include "lab.h"
#include "labkit/cuda_check.h"
#include "sciddicat/sciddicat.h"

struct grid_shape {
    int rows, cols;
    long interior; /* (rows - 2) * (cols - 2) */
    long layer;    /* rows * cols, the distance between two outflow directions */
};

__device__ static long cell_index(struct grid_shape g, long n)
{
    long inner_cols = g.cols - 2;
    return (1 + n / inner_cols) * g.cols + 1 + n % inner_cols;
}

#define FOR_EACH_INTERIOR(n, g) \
    for (long n = blockIdx.x * (long)blockDim.x + threadIdx.x; n < (g).interior; \
         n += (long)gridDim.x * blockDim.x)

__global__ void zero_outflows(struct grid_shape g, double *out)
{
    FOR_EACH_INTERIOR(n, g)
    {
        long c = cell_index(g, n);
        out[c] = 0.0;
        out[g.layer + c] = 0.0;
        out[2 * g.layer + c] = 0.0;
        out[3 * g.layer + c] = 0.0;
    }
}

/* Neighbours in the order centre, N, W, E, S; dropped ones are marked in gone[]. */
__device__ static void minimise(const double *level, double mass, double *avg, int *gone)
{
    int changed = 1;
    while (changed) {
        changed = 0;
        double sum = mass;
        int kept = 0;
        for (int q = 0; q < 5; ++q) {
            if (gone[q] == 0) {
                sum = sum + level[q];
                kept = kept + 1;
            }
        }
        if (kept > 0)
            sum = sum / kept;
        *avg = sum;
        for (int q = 0; q < 5; ++q) {
            if (gone[q] == 0 && sum <= level[q]) {
                gone[q] = 1;
                changed = 1;
            }
        }
    }
}

__global__ void outflows(struct grid_shape g, const double *alt, const double *thick, double *out)
{
    const long offs[5] = {0, -g.cols, -1, 1, g.cols};
    FOR_EACH_INTERIOR(n, g)
    {
        long c = cell_index(g, n);
        double level[5];
        int gone[5] = {0, 0, 0, 0, 0};
        level[0] = alt[c] + SCIDDICAT_P_EPSILON;
        for (int q = 1; q < 5; ++q)
            level[q] = alt[c + offs[q]] + thick[c + offs[q]];
        double avg;
        minimise(level, thick[c] - SCIDDICAT_P_EPSILON, &avg, gone);
        for (int d = 0; d < 4; ++d)
            if (!gone[d + 1])
                out[d * g.layer + c] = (avg - level[d + 1]) * SCIDDICAT_P_R;
    }
}

__global__ void new_thickness(struct grid_shape g, double *thick, const double *out)
{
    FOR_EACH_INTERIOR(n, g)
    {
        long c = cell_index(g, n);
        double v = thick[c];
        v += out[3 * g.layer + c - g.cols] - out[c];
        v += out[2 * g.layer + c - 1] - out[g.layer + c];
        v += out[g.layer + c + 1] - out[2 * g.layer + c];
        v += out[c + g.cols] - out[3 * g.layer + c];
        thick[c] = v;
    }
}

extern "C" int lab01_gpu_run(int rows, int cols, const double *z, const double *h_in,
                             double *h_out, int steps, int block_x, int block_y, lk_error *err)
{
    struct grid_shape g = {rows, cols, 0, (long)rows * cols};
    if (rows > 2 && cols > 2)
        g.interior = (long)(rows - 2) * (cols - 2);
    size_t size = sizeof(double) * (size_t)g.layer;
    double *alt = NULL, *thick = NULL, *out = NULL;
    int status = -1;
    int threads = block_x * block_y;
    int blocks = (int)((g.interior + threads - 1) / threads);
    if (blocks > 65535)
        blocks = 65535; /* the grid-stride loops cover the rest */
    if (blocks < 1)
        blocks = 1;

    if (cudaMalloc(&alt, size) != cudaSuccess || cudaMalloc(&thick, size) != cudaSuccess ||
        cudaMalloc(&out, 4 * size) != cudaSuccess) {
        lk_fail(err, "kernels.cu: cudaMalloc failed");
        goto done;
    }
    if (cudaMemset(out, 0, 4 * size) != cudaSuccess ||
        cudaMemcpy(alt, z, size, cudaMemcpyHostToDevice) != cudaSuccess ||
        cudaMemcpy(thick, h_in, size, cudaMemcpyHostToDevice) != cudaSuccess) {
        lk_fail(err, "kernels.cu: copying the inputs failed");
        goto done;
    }
    for (int s = 0; s < steps && g.interior > 0; ++s) {
        zero_outflows<<<blocks, threads>>>(g, out);
        outflows<<<blocks, threads>>>(g, alt, thick, out);
        new_thickness<<<blocks, threads>>>(g, thick, out);
        if (cudaGetLastError() != cudaSuccess) {
            lk_fail(err, "kernels.cu: a kernel launch failed at step %d", s);
            goto done;
        }
    }
    if (cudaMemcpy(h_out, thick, size, cudaMemcpyDeviceToHost) != cudaSuccess) {
        lk_fail(err, "kernels.cu: copying the result back failed");
        goto done;
    }
    status = 0;
done:
    cudaFree(alt);
    cudaFree(thick);
    cudaFree(out);
    return status;
}
