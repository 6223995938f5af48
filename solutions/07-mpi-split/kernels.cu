// Lab 07 solution, kernels.cu: the per-rank step on a slab. One thread per cell of the
// requested rows, x along the columns (coalesced); reset folded into the flows kernel (each
// interior cell writes all four outflows, zero where the direction left the average), so a
// step is two launches per row range. The arithmetic is the shared cell functions, so any
// split of the rows gives the serial reference's bits.

#include "lab.h"
#include "labkit/cuda_check.h"

// Thread (x, y) of the grid handles local row row_begin + y, column 1 + x.
__device__ static bool cell_of(int row_begin, int row_end, int cols, int *l, int *j)
{
    *j = 1 + blockIdx.x * blockDim.x + threadIdx.x;
    *l = row_begin + blockIdx.y * blockDim.y + threadIdx.y;
    return *l < row_end && *j < cols - 1;
}

__global__ void flows_rows(int row_begin, int row_end, int lrows, int cols,
                           const double *__restrict__ z, const double *__restrict__ h,
                           double *__restrict__ Sf)
{
    int l, j;
    if (!cell_of(row_begin, row_end, cols, &l, &j))
        return;
    sciddicat_reset_cell(l, j, lrows, cols, Sf);
    sciddicat_flows_cell(l, j, lrows, cols, z, h, Sf, SCIDDICAT_P_R,
                            SCIDDICAT_P_EPSILON);
}

__global__ void width_rows(int row_begin, int row_end, int lrows, int cols,
                           double *__restrict__ h, const double *__restrict__ Sf)
{
    int l, j;
    if (!cell_of(row_begin, row_end, cols, &l, &j))
        return;
    h[sciddicat_at(l, j, cols)] = sciddicat_width_cell(l, j, lrows, cols, h, Sf);
}

// Blocks cover the interior columns and the clipped rows, rounded up.
static dim3 grid_of(const lab07_slab *s, int rows)
{
    return dim3((s->cols - 2 + s->block_x - 1) / s->block_x, (rows + s->block_y - 1) / s->block_y);
}

extern "C" int lab07_gpu_flows(const lab07_slab *s, int row_begin, int row_end,
                               cudaStream_t stream, lk_error *err)
{
    int b, e;
    if (lab07_interior_rows(s, row_begin, row_end, &b, &e) == 0 || s->cols < 3)
        return 0;
    flows_rows<<<grid_of(s, e - b), dim3(s->block_x, s->block_y), 0, stream>>>(
        b, e, s->lrows, s->cols, s->z, s->h, s->Sf);
    LK_LAUNCH_TRY(err);
    return 0;
}

extern "C" int lab07_gpu_width(const lab07_slab *s, int row_begin, int row_end,
                               cudaStream_t stream, lk_error *err)
{
    int b, e;
    if (lab07_interior_rows(s, row_begin, row_end, &b, &e) == 0 || s->cols < 3)
        return 0;
    width_rows<<<grid_of(s, e - b), dim3(s->block_x, s->block_y), 0, stream>>>(
        b, e, s->lrows, s->cols, s->h, s->Sf);
    LK_LAUNCH_TRY(err);
    return 0;
}
