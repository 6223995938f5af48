// Lab 07, the per-rank step: a 1-D grid over the interior cells of the clipped rows, each
// thread striding over as many cells as the grid leaves it (row and column from the cell's
// index). The cell functions of labkit/sciddicat.h keep the serial reference's arithmetic.

#include "lab.h"
#include "labkit/cuda_check.h"

// Cells of rows [b, b + nrows) x columns 1 .. cols - 2, numbered row by row.
__global__ void slab_flows(int b, int nrows, int lrows, int cols, const double *__restrict__ z,
                           const double *__restrict__ h, double *__restrict__ Sf)
{
    const long width = cols - 2, cells = (long)nrows * width;
    for (long c = (long)blockIdx.x * blockDim.x + threadIdx.x; c < cells;
         c += (long)gridDim.x * blockDim.x) {
        const int l = b + (int)(c / width), j = 1 + (int)(c % width);
        lk_sciddicat_reset_cell(l, j, lrows, cols, Sf);
        lk_sciddicat_flows_cell(l, j, lrows, cols, z, h, Sf, LK_SCIDDICAT_P_R,
                                LK_SCIDDICAT_P_EPSILON);
    }
}

__global__ void slab_width(int b, int nrows, int lrows, int cols, double *__restrict__ h,
                           const double *__restrict__ Sf)
{
    const long width = cols - 2, cells = (long)nrows * width;
    for (long c = (long)blockIdx.x * blockDim.x + threadIdx.x; c < cells;
         c += (long)gridDim.x * blockDim.x) {
        const int l = b + (int)(c / width), j = 1 + (int)(c % width);
        h[lk_sciddicat_at(l, j, cols)] = lk_sciddicat_width_cell(l, j, lrows, cols, h, Sf);
    }
}

// Threads per block (the --block area) and blocks: one cell per thread, up to a grid that
// strides beyond 2^20 blocks.
static int launch_shape(const lab07_slab *s, long cells, unsigned *blocks, unsigned *threads)
{
    *threads = (unsigned)(s->block_x * s->block_y);
    const long needed = (cells + *threads - 1) / *threads;
    *blocks = (unsigned)(needed < (1L << 20) ? needed : (1L << 20));
    return cells > 0;
}

extern "C" int lab07_gpu_flows(const lab07_slab *s, int row_begin, int row_end,
                               cudaStream_t stream, lk_error *err)
{
    int b, e;
    unsigned blocks, threads;
    const int rows = lab07_interior_rows(s, row_begin, row_end, &b, &e);
    if (s->cols < 3 || !launch_shape(s, (long)rows * (s->cols - 2), &blocks, &threads))
        return 0;
    slab_flows<<<blocks, threads, 0, stream>>>(b, rows, s->lrows, s->cols, s->z, s->h, s->Sf);
    LK_LAUNCH_TRY(err);
    return 0;
}

extern "C" int lab07_gpu_width(const lab07_slab *s, int row_begin, int row_end,
                               cudaStream_t stream, lk_error *err)
{
    int b, e;
    unsigned blocks, threads;
    const int rows = lab07_interior_rows(s, row_begin, row_end, &b, &e);
    if (s->cols < 3 || !launch_shape(s, (long)rows * (s->cols - 2), &blocks, &threads))
        return 0;
    slab_width<<<blocks, threads, 0, stream>>>(b, rows, s->lrows, s->cols, s->h, s->Sf);
    LK_LAUNCH_TRY(err);
    return 0;
}
