// Example submission "tiles-rounded-down", lab 04: the 2021 course's bug. The kernels of both
// variants are right, but the launchers round the number of tiles DOWN, (cols - 2) / tile_x,
// instead of up, so the last partial column and row of tiles is never launched and the cells
// there are never updated. A grid smaller than one tile would get zero blocks, which cannot
// launch, so the student made it "at least one block" instead of finding the real bug.
// The public datasets never carry debris into the skipped cells, so they pass; the hidden
// dome datasets, whose debris leaves through every border, fail. The fused stretch is not
// attempted.

#include "lab.h"
#include "labkit/cuda_check.h"

// ---- Variant 1: halo. Block = tile plus a one-cell ring: blockDim = (tile_x + 2, tile_y + 2).

__global__ void flows_halo(int rows, int cols, const double *__restrict__ z,
                           const double *__restrict__ h, double *__restrict__ Sf)
{
    extern __shared__ double smem[];
    const int bw = blockDim.x, bh = blockDim.y;
    const int lx = threadIdx.x, ly = threadIdx.y;
    const int i = blockIdx.y * (bh - 2) + ly, j = blockIdx.x * (bw - 2) + lx;
    double *sz = smem, *sh = smem + bw * bh;
    const int s = ly * bw + lx;
    if (i < rows && j < cols) {
        sz[s] = z[i * cols + j];
        sh[s] = h[i * cols + j];
    } else {
        sz[s] = 0.0;
        sh[s] = 0.0;
    }
    __syncthreads();
    if (lx > 0 && ly > 0 && lx < bw - 1 && ly < bh - 1 && i < rows - 1 && j < cols - 1) {
        const double zz[5] = {sz[s], sz[s - bw], sz[s - 1], sz[s + 1], sz[s + bw]};
        const double hh[5] = {sh[s], sh[s - bw], sh[s - 1], sh[s + 1], sh[s + bw]};
        double f[4];
        lab04_cell_flows(zz, hh, f);
        for (int k = 0; k < 4; k++)
            Sf[k * rows * cols + i * cols + j] = f[k];
    }
}

__global__ void width_halo(int rows, int cols, double *__restrict__ h,
                           const double *__restrict__ Sf)
{
    extern __shared__ double smem[];
    const int bw = blockDim.x, bh = blockDim.y, n = bw * bh;
    const int lx = threadIdx.x, ly = threadIdx.y;
    const int i = blockIdx.y * (bh - 2) + ly, j = blockIdx.x * (bw - 2) + lx;
    const int s = ly * bw + lx;
    const bool inside = i < rows && j < cols;
    const bool edge_x = lx == 0 || lx == bw - 1, edge_y = ly == 0 || ly == bh - 1;
    if (!edge_x && !edge_y) {
        for (int k = 0; k < 4; k++)
            smem[k * n + s] = inside ? Sf[k * rows * cols + i * cols + j] : 0.0;
    } else if (edge_y && !edge_x) {
        const int k = ly == 0 ? 3 : 0; // North ring: its South outflow; South ring: North
        smem[k * n + s] = inside ? Sf[k * rows * cols + i * cols + j] : 0.0;
    } else if (edge_x && !edge_y) {
        const int k = lx == 0 ? 2 : 1; // West ring: its East outflow; East ring: West
        smem[k * n + s] = inside ? Sf[k * rows * cols + i * cols + j] : 0.0;
    }
    __syncthreads();
    if (!edge_x && !edge_y && i < rows - 1 && j < cols - 1) {
        const double in[4] = {smem[3 * n + s - bw], smem[2 * n + s - 1], smem[1 * n + s + 1],
                              smem[0 * n + s + bw]};
        const double out[4] = {smem[s], smem[n + s], smem[2 * n + s], smem[3 * n + s]};
        h[i * cols + j] = lab04_cell_width(h[i * cols + j], in, out);
    }
}

// ---- Variant 2: no halo. Block = tile: blockDim = (tile_x, tile_y).

__global__ void flows_nohalo(int rows, int cols, const double *__restrict__ z,
                             const double *__restrict__ h, double *__restrict__ Sf)
{
    extern __shared__ double smem[];
    const int bw = blockDim.x, bh = blockDim.y;
    const int lx = threadIdx.x, ly = threadIdx.y;
    const int i = 1 + blockIdx.y * bh + ly, j = 1 + blockIdx.x * bw + lx;
    double *sz = smem, *sh = smem + bw * bh;
    const int s = ly * bw + lx;
    const int c = i * cols + j;
    sz[s] = i < rows && j < cols ? z[c] : 0.0;
    sh[s] = i < rows && j < cols ? h[c] : 0.0;
    __syncthreads();
    if (i < rows - 1 && j < cols - 1) {
        double zz[5], hh[5];
        zz[0] = sz[s];
        hh[0] = sh[s];
        if (ly > 0) { zz[1] = sz[s - bw]; hh[1] = sh[s - bw]; }
        else { zz[1] = z[c - cols]; hh[1] = h[c - cols]; }
        if (lx > 0) { zz[2] = sz[s - 1]; hh[2] = sh[s - 1]; }
        else { zz[2] = z[c - 1]; hh[2] = h[c - 1]; }
        if (lx < bw - 1) { zz[3] = sz[s + 1]; hh[3] = sh[s + 1]; }
        else { zz[3] = z[c + 1]; hh[3] = h[c + 1]; }
        if (ly < bh - 1) { zz[4] = sz[s + bw]; hh[4] = sh[s + bw]; }
        else { zz[4] = z[c + cols]; hh[4] = h[c + cols]; }
        double f[4];
        lab04_cell_flows(zz, hh, f);
        for (int k = 0; k < 4; k++)
            Sf[k * rows * cols + c] = f[k];
    }
}

__global__ void width_nohalo(int rows, int cols, double *__restrict__ h,
                             const double *__restrict__ Sf)
{
    extern __shared__ double smem[];
    const int bw = blockDim.x, bh = blockDim.y, n = bw * bh;
    const int lx = threadIdx.x, ly = threadIdx.y;
    const int i = 1 + blockIdx.y * bh + ly, j = 1 + blockIdx.x * bw + lx;
    const int s = ly * bw + lx, c = i * cols + j, layer = rows * cols;
    for (int k = 0; k < 4; k++)
        smem[k * n + s] = i < rows && j < cols ? Sf[k * layer + c] : 0.0;
    __syncthreads();
    if (i < rows - 1 && j < cols - 1) {
        double in[4], out[4];
        for (int k = 0; k < 4; k++)
            out[k] = smem[k * n + s];
        in[0] = ly > 0 ? smem[3 * n + s - bw] : Sf[3 * layer + c - cols];
        in[1] = lx > 0 ? smem[2 * n + s - 1] : Sf[2 * layer + c - 1];
        in[2] = lx < bw - 1 ? smem[1 * n + s + 1] : Sf[1 * layer + c + 1];
        in[3] = ly < bh - 1 ? smem[0 * n + s + bw] : Sf[0 * layer + c + cols];
        h[c] = lab04_cell_width(h[c], in, out);
    }
}

// ---- Stretch: fused step, not attempted.
__global__ void step_fused(int rows, int cols, const double *__restrict__ z,
                           const double *__restrict__ h_in, double *__restrict__ h_out)
{
}

// ---- Launch shapes: used by the launchers and by lab04_describe_kernel.
static int launch_shape(lab04_variant variant, lab04_process process, int tile_x, int tile_y,
                        lab04_kernel_info *out, lk_error *err)
{
    const size_t halo_cells = (size_t)(tile_x + 2) * (tile_y + 2);
    const size_t tile_cells = (size_t)tile_x * tile_y;
    if (variant == LAB04_FUSED)
        return LAB04_NOT_ATTEMPTED;
    if (variant == LAB04_HALO && process == LAB04_FLOWS)
        *out = (lab04_kernel_info){(const void *)flows_halo, tile_x + 2, tile_y + 2,
                                   2 * halo_cells * sizeof(double)};
    else if (variant == LAB04_HALO && process == LAB04_WIDTH)
        *out = (lab04_kernel_info){(const void *)width_halo, tile_x + 2, tile_y + 2,
                                   4 * halo_cells * sizeof(double)};
    else if (variant == LAB04_NOHALO && process == LAB04_FLOWS)
        *out = (lab04_kernel_info){(const void *)flows_nohalo, tile_x, tile_y,
                                   2 * tile_cells * sizeof(double)};
    else if (variant == LAB04_NOHALO && process == LAB04_WIDTH)
        *out = (lab04_kernel_info){(const void *)width_nohalo, tile_x, tile_y,
                                   4 * tile_cells * sizeof(double)};
    else
        return lk_fail(err, "kernels.cu: no %s kernel for process %d",
                       lab04_variant_name(variant), (int)process);
    return 0;
}

// THE BUG: one block per WHOLE tile (rounded down), so a partial last tile is never
// launched. Zero blocks cannot launch, hence the max(1, ...), which hides the problem on
// grids smaller than one tile.
static dim3 grid_of(int rows, int cols, int tile_x, int tile_y)
{
    int gx = (cols - 2) / tile_x, gy = (rows - 2) / tile_y;
    if (gx < 1)
        gx = 1;
    if (gy < 1)
        gy = 1;
    return dim3(gx, gy);
}

extern "C" int lab04_flows(lab04_variant variant, int tile_x, int tile_y, int rows, int cols,
                           const double *d_z, const double *d_h, double *d_Sf, lk_error *err)
{
    lab04_kernel_info k = {};
    if (launch_shape(variant, LAB04_FLOWS, tile_x, tile_y, &k, err) != 0)
        return -1;
    if (variant == LAB04_HALO)
        flows_halo<<<grid_of(rows, cols, tile_x, tile_y), dim3(k.block_x, k.block_y),
                     k.dynamic_shared_bytes>>>(rows, cols, d_z, d_h, d_Sf);
    else
        flows_nohalo<<<grid_of(rows, cols, tile_x, tile_y), dim3(k.block_x, k.block_y),
                       k.dynamic_shared_bytes>>>(rows, cols, d_z, d_h, d_Sf);
    LK_LAUNCH_TRY(err);
    return 0;
}

extern "C" int lab04_width(lab04_variant variant, int tile_x, int tile_y, int rows, int cols,
                           double *d_h, const double *d_Sf, lk_error *err)
{
    lab04_kernel_info k = {};
    if (launch_shape(variant, LAB04_WIDTH, tile_x, tile_y, &k, err) != 0)
        return -1;
    if (variant == LAB04_HALO)
        width_halo<<<grid_of(rows, cols, tile_x, tile_y), dim3(k.block_x, k.block_y),
                     k.dynamic_shared_bytes>>>(rows, cols, d_h, d_Sf);
    else
        width_nohalo<<<grid_of(rows, cols, tile_x, tile_y), dim3(k.block_x, k.block_y),
                       k.dynamic_shared_bytes>>>(rows, cols, d_h, d_Sf);
    LK_LAUNCH_TRY(err);
    return 0;
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
    return launch_shape(variant, process, tile_x, tile_y, out, err);
}
