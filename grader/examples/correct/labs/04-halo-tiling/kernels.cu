// Example submission "correct", lab 04: the halo and no-halo variants done right, in their
// own way; the fused stretch is not attempted (what most students hand in). Every kernel
// works out its cell once, keeps a `computes` flag instead of returning early, and gathers
// the five-cell neighbourhood (or the four inflows) through small helpers that read shared
// memory inside the tile and global memory outside it.

#include "lab.h"
#include "labkit/cuda_check.h"

// Outflow layers, as in lab.h: Sf[k * rows * cols + i * cols + j].
enum { OUT_N = 0, OUT_W = 1, OUT_E = 2, OUT_S = 3 };

__device__ static inline void store_outflows(double *__restrict__ Sf, size_t layer, size_t at,
                                             const double f[4])
{
    Sf[OUT_N * layer + at] = f[OUT_N];
    Sf[OUT_W * layer + at] = f[OUT_W];
    Sf[OUT_E * layer + at] = f[OUT_E];
    Sf[OUT_S * layer + at] = f[OUT_S];
}

// ---- Variant 1: halo. Block = tile plus a one-cell ring: blockDim = (tile_x + 2, tile_y + 2).

// Thread (lx, ly) stages cell (by * tile_y + ly, bx * tile_x + lx): the tile shifted one cell
// up and left, so the ring threads hold the halo.
__global__ void flows_halo(int rows, int cols, const double *__restrict__ z,
                           const double *__restrict__ h, double *__restrict__ Sf)
{
    extern __shared__ double smem[];
    const int w = blockDim.x, nthreads = blockDim.x * blockDim.y;
    double *zs = smem, *hs = smem + nthreads;
    const int lx = threadIdx.x, ly = threadIdx.y, me = ly * w + lx;
    const int i = blockIdx.y * (blockDim.y - 2) + ly;
    const int j = blockIdx.x * (blockDim.x - 2) + lx;
    const size_t at = (size_t)i * cols + j;

    const bool in_grid = i < rows && j < cols;
    zs[me] = in_grid ? z[at] : 0.0; // past the grid: neutral, never used
    hs[me] = in_grid ? h[at] : 0.0;
    __syncthreads();

    const bool ring = lx == 0 || ly == 0 || lx == w - 1 || ly == (int)blockDim.y - 1;
    const bool computes = !ring && i <= rows - 2 && j <= cols - 2;
    if (computes) {
        // centre, North, West, East, South
        const double zn[5] = {zs[me], zs[me - w], zs[me - 1], zs[me + 1], zs[me + w]};
        const double hn[5] = {hs[me], hs[me - w], hs[me - 1], hs[me + 1], hs[me + w]};
        double f[4];
        lab04_cell_flows(zn, hn, f);
        store_outflows(Sf, (size_t)rows * cols, at, f);
    }
}

// Same cells as flows_halo. A tile thread stages its four outflows; a ring thread only the
// one that points into the tile; the four corners stage nothing.
__global__ void width_halo(int rows, int cols, double *__restrict__ h,
                           const double *__restrict__ Sf)
{
    extern __shared__ double smem[];
    const int w = blockDim.x, hgt = blockDim.y, nthreads = w * hgt;
    const int lx = threadIdx.x, ly = threadIdx.y, me = ly * w + lx;
    const int i = blockIdx.y * (hgt - 2) + ly;
    const int j = blockIdx.x * (w - 2) + lx;
    const size_t layer = (size_t)rows * cols, at = (size_t)i * cols + j;
    const bool in_grid = i < rows && j < cols;

    const bool top = ly == 0, bottom = ly == hgt - 1, left = lx == 0, right = lx == w - 1;
    const bool vertical_ring = top || bottom, horizontal_ring = left || right;
    if (!vertical_ring && !horizontal_ring) {
        for (int k = 0; k < 4; k++)
            smem[k * nthreads + me] = in_grid ? Sf[k * layer + at] : 0.0;
    } else if (vertical_ring != horizontal_ring) { // ring, but not a corner
        const int k = top ? OUT_S : bottom ? OUT_N : left ? OUT_E : OUT_W;
        smem[k * nthreads + me] = in_grid ? Sf[k * layer + at] : 0.0;
    }
    __syncthreads();

    const bool computes = !vertical_ring && !horizontal_ring && i <= rows - 2 && j <= cols - 2;
    if (computes) {
        const double out[4] = {smem[OUT_N * nthreads + me], smem[OUT_W * nthreads + me],
                               smem[OUT_E * nthreads + me], smem[OUT_S * nthreads + me]};
        // what the neighbours send: N's South, W's East, E's West, S's North outflow
        const double in[4] = {smem[OUT_S * nthreads + me - w], smem[OUT_E * nthreads + me - 1],
                              smem[OUT_W * nthreads + me + 1], smem[OUT_N * nthreads + me + w]};
        h[at] = lab04_cell_width(h[at], in, out);
    }
}

// ---- Variant 2: no halo. Block = tile: blockDim = (tile_x, tile_y).

// A value of a neighbour: from the shared tile when it is in the tile, else from global
// memory (only then is the global load made).
__device__ static inline double neighbour(bool in_tile, const double *s, int s_at,
                                          const double *__restrict__ g, size_t g_at)
{
    if (in_tile)
        return s[s_at];
    return g[g_at];
}

__global__ void flows_nohalo(int rows, int cols, const double *__restrict__ z,
                             const double *__restrict__ h, double *__restrict__ Sf)
{
    extern __shared__ double smem[];
    const int w = blockDim.x, hgt = blockDim.y, nthreads = w * hgt;
    double *zs = smem, *hs = smem + nthreads;
    const int lx = threadIdx.x, ly = threadIdx.y, me = ly * w + lx;
    const int i = 1 + blockIdx.y * hgt + ly;
    const int j = 1 + blockIdx.x * w + lx;
    const size_t at = (size_t)i * cols + j;

    const bool in_grid = i < rows && j < cols;
    zs[me] = in_grid ? z[at] : 0.0;
    hs[me] = in_grid ? h[at] : 0.0;
    __syncthreads();

    if (i <= rows - 2 && j <= cols - 2) {
        const bool n_in = ly > 0, w_in = lx > 0, e_in = lx < w - 1, s_in = ly < hgt - 1;
        const double zn[5] = {zs[me], neighbour(n_in, zs, me - w, z, at - cols),
                              neighbour(w_in, zs, me - 1, z, at - 1),
                              neighbour(e_in, zs, me + 1, z, at + 1),
                              neighbour(s_in, zs, me + w, z, at + cols)};
        const double hn[5] = {hs[me], neighbour(n_in, hs, me - w, h, at - cols),
                              neighbour(w_in, hs, me - 1, h, at - 1),
                              neighbour(e_in, hs, me + 1, h, at + 1),
                              neighbour(s_in, hs, me + w, h, at + cols)};
        double f[4];
        lab04_cell_flows(zn, hn, f);
        store_outflows(Sf, (size_t)rows * cols, at, f);
    }
}

__global__ void width_nohalo(int rows, int cols, double *__restrict__ h,
                             const double *__restrict__ Sf)
{
    extern __shared__ double smem[];
    const int w = blockDim.x, hgt = blockDim.y, nthreads = w * hgt;
    const int lx = threadIdx.x, ly = threadIdx.y, me = ly * w + lx;
    const int i = 1 + blockIdx.y * hgt + ly;
    const int j = 1 + blockIdx.x * w + lx;
    const size_t layer = (size_t)rows * cols, at = (size_t)i * cols + j;

    const bool in_grid = i < rows && j < cols;
    for (int k = 0; k < 4; k++)
        smem[k * nthreads + me] = in_grid ? Sf[k * layer + at] : 0.0;
    __syncthreads();

    if (i <= rows - 2 && j <= cols - 2) {
        const double *sN = smem + OUT_N * nthreads, *sW = smem + OUT_W * nthreads;
        const double *sE = smem + OUT_E * nthreads, *sS = smem + OUT_S * nthreads;
        const double out[4] = {sN[me], sW[me], sE[me], sS[me]};
        const double in[4] = {neighbour(ly > 0, sS, me - w, Sf + OUT_S * layer, at - cols),
                              neighbour(lx > 0, sE, me - 1, Sf + OUT_E * layer, at - 1),
                              neighbour(lx < w - 1, sW, me + 1, Sf + OUT_W * layer, at + 1),
                              neighbour(ly < hgt - 1, sN, me + w, Sf + OUT_N * layer, at + cols)};
        h[at] = lab04_cell_width(h[at], in, out);
    }
}

// ---- Stretch: fused step (TODO 8): not attempted; the kernel stays empty and the fused
// functions answer LAB04_NOT_ATTEMPTED, as in the skeleton.
__global__ void step_fused(int rows, int cols, const double *__restrict__ z,
                           const double *__restrict__ h_in, double *__restrict__ h_out)
{
}

// ---- Launch shapes: used by the launchers and by lab04_describe_kernel.

static int launch_shape(lab04_variant variant, lab04_process process, int tile_x, int tile_y,
                        lab04_kernel_info *out, lk_error *err)
{
    if (variant == LAB04_FUSED)
        return LAB04_NOT_ATTEMPTED;
    const int halo = variant == LAB04_HALO;
    if (!halo && variant != LAB04_NOHALO)
        return lk_fail(err, "kernels.cu: unknown variant %d", (int)variant);
    if (process != LAB04_FLOWS && process != LAB04_WIDTH)
        return lk_fail(err, "kernels.cu: the %s variant has a flows and a width kernel, no "
                            "process %d", lab04_variant_name(variant), (int)process);
    const int bx = halo ? tile_x + 2 : tile_x, by = halo ? tile_y + 2 : tile_y;
    const size_t per_thread = process == LAB04_FLOWS ? 2 : 4; // z and h / four outflows
    const void *kernel;
    if (process == LAB04_FLOWS)
        kernel = halo ? (const void *)flows_halo : (const void *)flows_nohalo;
    else
        kernel = halo ? (const void *)width_halo : (const void *)width_nohalo;
    out->kernel = kernel;
    out->block_x = bx;
    out->block_y = by;
    out->dynamic_shared_bytes = per_thread * (size_t)bx * (size_t)by * sizeof(double);
    return 0;
}

// One block per tile over the (rows - 2) x (cols - 2) interior, the last ones partial.
static dim3 tiles_over_interior(int rows, int cols, int tile_x, int tile_y)
{
    const int inner_rows = rows - 2, inner_cols = cols - 2;
    return dim3((inner_cols + tile_x - 1) / tile_x, (inner_rows + tile_y - 1) / tile_y);
}

extern "C" int lab04_flows(lab04_variant variant, int tile_x, int tile_y, int rows, int cols,
                           const double *d_z, const double *d_h, double *d_Sf, lk_error *err)
{
    lab04_kernel_info k = {};
    if (launch_shape(variant, LAB04_FLOWS, tile_x, tile_y, &k, err) != 0)
        return -1;
    const dim3 grid = tiles_over_interior(rows, cols, tile_x, tile_y);
    const dim3 block(k.block_x, k.block_y);
    if (variant == LAB04_HALO)
        flows_halo<<<grid, block, k.dynamic_shared_bytes>>>(rows, cols, d_z, d_h, d_Sf);
    else
        flows_nohalo<<<grid, block, k.dynamic_shared_bytes>>>(rows, cols, d_z, d_h, d_Sf);
    LK_LAUNCH_TRY(err);
    return 0;
}

extern "C" int lab04_width(lab04_variant variant, int tile_x, int tile_y, int rows, int cols,
                           double *d_h, const double *d_Sf, lk_error *err)
{
    lab04_kernel_info k = {};
    if (launch_shape(variant, LAB04_WIDTH, tile_x, tile_y, &k, err) != 0)
        return -1;
    const dim3 grid = tiles_over_interior(rows, cols, tile_x, tile_y);
    const dim3 block(k.block_x, k.block_y);
    if (variant == LAB04_HALO)
        width_halo<<<grid, block, k.dynamic_shared_bytes>>>(rows, cols, d_h, d_Sf);
    else
        width_nohalo<<<grid, block, k.dynamic_shared_bytes>>>(rows, cols, d_h, d_Sf);
    LK_LAUNCH_TRY(err);
    return 0;
}

// The stretch task is not attempted.
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
