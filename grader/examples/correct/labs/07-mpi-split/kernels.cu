// Lab 07, the per-rank step: a 1-D grid over the interior cells of the clipped rows, each
// thread striding over as many cells as the grid leaves it (row and column from the cell's
// 32-bit index). The cell functions of sciddicat/sciddicat.h keep the serial reference's arithmetic.

#include "lab.h"
#include "labkit/cuda_check.h"

// Cells of rows [b, b + nrows) x columns 1 .. cols - 2, numbered row by row.
__global__ void slab_flows(int b, int nrows, int lrows, int cols, const double *__restrict__ z,
                           const double *__restrict__ h, double *__restrict__ Sf)
{
    const unsigned width = cols - 2, cells = (unsigned)nrows * width;
    for (unsigned c = blockIdx.x * blockDim.x + threadIdx.x; c < cells;
         c += gridDim.x * blockDim.x) {
        const int l = b + (int)(c / width), j = 1 + (int)(c % width);
        sciddicat_reset_cell(l, j, lrows, cols, Sf);
        sciddicat_flows_cell(l, j, lrows, cols, z, h, Sf, SCIDDICAT_P_R,
                                SCIDDICAT_P_EPSILON);
    }
}

__global__ void slab_width(int b, int nrows, int lrows, int cols, double *__restrict__ h,
                           const double *__restrict__ Sf)
{
    const unsigned width = cols - 2, cells = (unsigned)nrows * width;
    for (unsigned c = blockIdx.x * blockDim.x + threadIdx.x; c < cells;
         c += gridDim.x * blockDim.x) {
        const int l = b + (int)(c / width), j = 1 + (int)(c % width);
        h[sciddicat_at(l, j, cols)] = sciddicat_width_cell(l, j, lrows, cols, h, Sf);
    }
}

// Threads per block (the --block area) and blocks for cells > 0: one cell per thread, up to
// a grid of 2^20 blocks that strides beyond. Cells are numbered in 32 bits (a cheap division):
// a larger slab is an error.
static int launch_shape(const lab07_slab *s, long cells, unsigned *blocks, unsigned *threads,
                        lk_error *err)
{
    if (cells > 0x7fffffffL)
        return lk_fail(err, "kernels.cu: a slab of %ld interior cells; at most 2^31 - 1: run "
                            "on more ranks", cells);
    *threads = (unsigned)(s->block_x * s->block_y);
    const long needed = (cells + *threads - 1) / *threads;
    *blocks = (unsigned)(needed < (1L << 20) ? needed : (1L << 20));
    return 0;
}

extern "C" int lab07_gpu_flows(const lab07_slab *s, int row_begin, int row_end,
                               cudaStream_t stream, lk_error *err)
{
    int b, e;
    unsigned blocks = 0, threads = 0;
    const int rows = lab07_interior_rows(s, row_begin, row_end, &b, &e);
    if (s->cols < 3 || rows == 0)
        return 0;
    if (launch_shape(s, (long)rows * (s->cols - 2), &blocks, &threads, err) < 0)
        return -1;
    slab_flows<<<blocks, threads, 0, stream>>>(b, rows, s->lrows, s->cols, s->z, s->h, s->Sf);
    LK_LAUNCH_TRY(err);
    return 0;
}

extern "C" int lab07_gpu_width(const lab07_slab *s, int row_begin, int row_end,
                               cudaStream_t stream, lk_error *err)
{
    int b, e;
    unsigned blocks = 0, threads = 0;
    const int rows = lab07_interior_rows(s, row_begin, row_end, &b, &e);
    if (s->cols < 3 || rows == 0)
        return 0;
    if (launch_shape(s, (long)rows * (s->cols - 2), &blocks, &threads, err) < 0)
        return -1;
    slab_width<<<blocks, threads, 0, stream>>>(b, rows, s->lrows, s->cols, s->h, s->Sf);
    LK_LAUNCH_TRY(err);
    return 0;
}
