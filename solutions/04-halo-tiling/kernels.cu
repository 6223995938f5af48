// Lab 04 solution: SciddicaT with shared-memory tiles, with and without halo cells, a fused
// one-kernel step, and the fused step restricted to the cells near the debris (fast). The
// arithmetic is the shared per-cell code (lab04_cell_flows, lab04_cell_width), or for the
// fused steps cell_flows_fast, the same operations in the same order with a cheaper division,
// so every variant equals the serial reference bit for bit.
//
// Tile (tx, ty) of block (bx, by) covers interior cells from (1 + by*ty, 1 + bx*tx); grids
// round up, so a last partial tile is handled by the bounds checks, for any domain size.

#include <string.h>

#include <cuda_pipeline.h>

#include "lab.h"
#include "labkit/cuda_check.h"

// ---- Variant 1: halo. The block is the tile plus a one-cell ring; thread (lx, ly) stages
// cell (by*ty + ly, bx*tx + lx), i.e. the tile shifted by -1, and only inner threads compute.

__global__ void flows_halo(int rows, int cols, const double *__restrict__ z,
                           const double *__restrict__ h, double *__restrict__ Sf)
{
    extern __shared__ double smem[];
    const int bw = blockDim.x, bh = blockDim.y, lx = threadIdx.x, ly = threadIdx.y;
    double *s_z = smem, *s_h = smem + bw * bh;
    const int i = blockIdx.y * (bh - 2) + ly, j = blockIdx.x * (bw - 2) + lx;
    const int s = ly * bw + lx;
    const size_t at = lk_sciddicat_at(i, j, cols);
    const bool inside = i < rows && j < cols;
    s_z[s] = inside ? z[at] : 0.0; // out of the domain: a neutral value, never used
    s_h[s] = inside ? h[at] : 0.0;
    __syncthreads();
    if (lx == 0 || ly == 0 || lx == bw - 1 || ly == bh - 1 || i >= rows - 1 || j >= cols - 1)
        return;
    const double zn[5] = {s_z[s], s_z[s - bw], s_z[s - 1], s_z[s + 1], s_z[s + bw]};
    const double hn[5] = {s_h[s], s_h[s - bw], s_h[s - 1], s_h[s + 1], s_h[s + bw]};
    double f[LK_SCIDDICAT_NFLOWS];
    lab04_cell_flows(zn, hn, f);
    const size_t layer = (size_t)rows * cols;
    for (int k = 0; k < LK_SCIDDICAT_NFLOWS; k++)
        Sf[k * layer + at] = f[k];
}

// Each thread stages the outflows its cell contributes to the tile: all four for a tile cell,
// only the one pointing into the tile for a ring cell (South for the North ring row, ...).
__global__ void width_halo(int rows, int cols, double *__restrict__ h,
                           const double *__restrict__ Sf)
{
    extern __shared__ double s_f[]; // four layers of blockDim.x * blockDim.y
    const int bw = blockDim.x, bh = blockDim.y, lx = threadIdx.x, ly = threadIdx.y;
    const int nb = bw * bh;
    const int i = blockIdx.y * (bh - 2) + ly, j = blockIdx.x * (bw - 2) + lx;
    const int s = ly * bw + lx;
    const size_t layer = (size_t)rows * cols, at = lk_sciddicat_at(i, j, cols);
    const bool inside = i < rows && j < cols;
    const bool north = ly == 0, south = ly == bh - 1, west = lx == 0, east = lx == bw - 1;
    if (!north && !south && !west && !east) {
        for (int k = 0; k < LK_SCIDDICAT_NFLOWS; k++)
            s_f[k * nb + s] = inside ? Sf[k * layer + at] : 0.0;
    } else if (!west && !east) {
        const int k = north ? 3 : 0;
        s_f[k * nb + s] = inside ? Sf[k * layer + at] : 0.0;
    } else if (!north && !south) {
        const int k = west ? 2 : 1;
        s_f[k * nb + s] = inside ? Sf[k * layer + at] : 0.0;
    }
    __syncthreads();
    if (north || south || west || east || i >= rows - 1 || j >= cols - 1)
        return;
    const double out[4] = {s_f[s], s_f[nb + s], s_f[2 * nb + s], s_f[3 * nb + s]};
    const double in[4] = {s_f[3 * nb + s - bw], s_f[2 * nb + s - 1], s_f[nb + s + 1],
                          s_f[s + bw]};
    h[at] = lab04_cell_width(h[at], in, out);
}

// ---- Variant 2: no halo. The block is the tile; a neighbour outside it comes from global
// memory (in practice from L1/L2, where the neighbouring block's loads left it).

__global__ void flows_nohalo(int rows, int cols, const double *__restrict__ z,
                             const double *__restrict__ h, double *__restrict__ Sf)
{
    extern __shared__ double smem[];
    const int bw = blockDim.x, bh = blockDim.y, lx = threadIdx.x, ly = threadIdx.y;
    double *s_z = smem, *s_h = smem + bw * bh;
    const int i = 1 + blockIdx.y * bh + ly, j = 1 + blockIdx.x * bw + lx;
    const int s = ly * bw + lx;
    const size_t at = lk_sciddicat_at(i, j, cols);
    const bool inside = i < rows && j < cols;
    s_z[s] = inside ? z[at] : 0.0;
    s_h[s] = inside ? h[at] : 0.0;
    __syncthreads();
    if (i >= rows - 1 || j >= cols - 1)
        return;
    const double zn[5] = {s_z[s], ly > 0 ? s_z[s - bw] : z[at - cols], lx > 0 ? s_z[s - 1] : z[at - 1],
                          lx < bw - 1 ? s_z[s + 1] : z[at + 1], ly < bh - 1 ? s_z[s + bw] : z[at + cols]};
    const double hn[5] = {s_h[s], ly > 0 ? s_h[s - bw] : h[at - cols], lx > 0 ? s_h[s - 1] : h[at - 1],
                          lx < bw - 1 ? s_h[s + 1] : h[at + 1], ly < bh - 1 ? s_h[s + bw] : h[at + cols]};
    double f[LK_SCIDDICAT_NFLOWS];
    lab04_cell_flows(zn, hn, f);
    const size_t layer = (size_t)rows * cols;
    for (int k = 0; k < LK_SCIDDICAT_NFLOWS; k++)
        Sf[k * layer + at] = f[k];
}

__global__ void width_nohalo(int rows, int cols, double *__restrict__ h,
                             const double *__restrict__ Sf)
{
    extern __shared__ double s_f[]; // four layers of the tile
    const int bw = blockDim.x, bh = blockDim.y, lx = threadIdx.x, ly = threadIdx.y;
    const int nb = bw * bh;
    const int i = 1 + blockIdx.y * bh + ly, j = 1 + blockIdx.x * bw + lx;
    const int s = ly * bw + lx;
    const size_t layer = (size_t)rows * cols, at = lk_sciddicat_at(i, j, cols);
    const bool inside = i < rows && j < cols;
    for (int k = 0; k < LK_SCIDDICAT_NFLOWS; k++)
        s_f[k * nb + s] = inside ? Sf[k * layer + at] : 0.0;
    __syncthreads();
    if (i >= rows - 1 || j >= cols - 1)
        return;
    const double out[4] = {s_f[s], s_f[nb + s], s_f[2 * nb + s], s_f[3 * nb + s]};
    const double in[4] = {ly > 0 ? s_f[3 * nb + s - bw] : Sf[3 * layer + at - cols],
                          lx > 0 ? s_f[2 * nb + s - 1] : Sf[2 * layer + at - 1],
                          lx < bw - 1 ? s_f[nb + s + 1] : Sf[layer + at + 1],
                          ly < bh - 1 ? s_f[s + bw] : Sf[at + cols]};
    h[at] = lab04_cell_width(h[at], in, out);
}

// ---- The outflows of one cell, cheaper on the GPU than lab04_cell_flows and bit-identical to
// it (the same additions in the same order, the same correctly rounded quotient): on a wet grid
// the fused steps spend most of their time in the elimination loop, not in memory traffic.

// High 32 bits of a double (sign, exponent, top of the significand).
LK_HD static inline unsigned high_word(double x)
{
#ifdef __CUDA_ARCH__
    return (unsigned)__double2hiint(x);
#else
    unsigned long long b;
    memcpy(&b, &x, sizeof b);
    return (unsigned)(b >> 32);
#endif
}

// s / d for d in 1..5 and r = RN(1/d): the correctly rounded quotient of the `/` operator,
// without its reciprocal iterations. q = s * r is faithful, the remainder s - q*d is then exact
// (one FMA), and q + rem * r rounds to RN(s/d) (Markstein's theorem). That holds while nothing
// underflows or overflows: |s| in [2^-960, 2^960), else the real division runs. For d = 1, 2, 4
// the product is already exact and the remainder 0.
LK_HD static inline double divide_by(double s, double d, double r)
{
    const unsigned biased_exponent_bits = high_word(s) & 0x7ff00000u;
    if (biased_exponent_bits - (63u << 20) >= ((1983u - 63u) << 20))
        return s / d;
    const double q = s * r;
    return fma(fma(-q, d, s), r, q);
}

// s / count for count in 1..4 (the rounds after the first, which divides by 5).
LK_HD static inline double divide_by_count_upto4(double s, int count)
{
    return divide_by(s, count == 4 ? 4.0 : count == 3 ? 3.0 : count == 2 ? 2.0 : 1.0,
                     count == 4 ? 0.25 : count == 3 ? 1.0 / 3.0 : count == 2 ? 0.5 : 1.0);
}

LK_HD static inline int count_bits(unsigned x)
{
#ifdef __CUDA_ARCH__
    return __popc(x);
#else
    return __builtin_popcount(x);
#endif
}

// lab04_cell_flows, restructured: u[n] kept in the average are the set bits of `keep`; the sum
// adds -0.0 (x + -0.0 is x to the bit, zeros included) for the others, so every kept term is
// added in the reference's order; the first round, where all five are kept, is peeled.
LK_HD static inline void cell_flows_fast(const double z[5], const double h[5], double f[4])
{
    const double m = h[0] - LK_SCIDDICAT_P_EPSILON;
    const double u0 = z[0] + LK_SCIDDICAT_P_EPSILON, u1 = z[1] + h[1], u2 = z[2] + h[2],
                 u3 = z[3] + h[3], u4 = z[4] + h[4];
    double average = divide_by(((((m + u0) + u1) + u2) + u3) + u4, 5.0, 0.2);
    unsigned keep = 31u;
    for (;;) {
        const unsigned drop = keep & ((unsigned)(average <= u0) | (unsigned)(average <= u1) << 1 |
                                      (unsigned)(average <= u2) << 2 |
                                      (unsigned)(average <= u3) << 3 |
                                      (unsigned)(average <= u4) << 4);
        if (drop == 0)
            break;
        keep &= ~drop;
        double s = m;
        s += (keep & 1u) ? u0 : -0.0;
        s += (keep & 2u) ? u1 : -0.0;
        s += (keep & 4u) ? u2 : -0.0;
        s += (keep & 8u) ? u3 : -0.0;
        s += (keep & 16u) ? u4 : -0.0;
        average = keep != 0 ? divide_by_count_upto4(s, count_bits(keep)) : s;
    }
    f[0] = (keep & 2u) ? (average - u1) * LK_SCIDDICAT_P_R : 0.0;
    f[1] = (keep & 4u) ? (average - u2) * LK_SCIDDICAT_P_R : 0.0;
    f[2] = (keep & 8u) ? (average - u3) * LK_SCIDDICAT_P_R : 0.0;
    f[3] = (keep & 16u) ? (average - u4) * LK_SCIDDICAT_P_R : 0.0;
}

// ---- Stretch: fused step. The block is the tile plus a one-cell ring, as for halo; z and h
// are staged for the tile plus two rings, the outflows of the tile plus one ring are computed
// into shared memory (0 for border cells: the reset folded in), then the tile's width update
// writes h_out. Global traffic per cell and step: read z and h, write h (24 B instead of 128).
// Still cells skip their outflows (lk_sciddicat_is_still).

// The bounds keep it within 64 registers, so a 32x32 block launches on every supported GPU.
__global__ void __launch_bounds__(1024) step_fused(int rows, int cols, const double *__restrict__ z,
                                                   const double *__restrict__ h_in,
                                                   double *__restrict__ h_out)
{
    extern __shared__ double smem[];
    const int bw = blockDim.x, bh = blockDim.y, lx = threadIdx.x, ly = threadIdx.y;
    const int pw = bw + 2, ph = bh + 2, nb = bw * bh;
    double *s_z = smem, *s_h = smem + pw * ph, *s_f = smem + 2 * pw * ph;
    // Shared (0, 0) is cell (i0, j0), two cells before the tile's first interior cell.
    const int i0 = blockIdx.y * (bh - 2) - 1, j0 = blockIdx.x * (bw - 2) - 1;
    for (int r = ly; r < ph; r += bh)
        for (int c = lx; c < pw; c += bw) {
            const int gi = i0 + r, gj = j0 + c;
            const bool inside = gi >= 0 && gj >= 0 && gi < rows && gj < cols;
            const size_t at = inside ? lk_sciddicat_at(gi, gj, cols) : 0;
            s_z[r * pw + c] = inside ? z[at] : 0.0;
            s_h[r * pw + c] = inside ? h_in[at] : 0.0;
        }
    __syncthreads();

    const int i = i0 + 1 + ly, j = j0 + 1 + lx; // this thread's cell: tile or first ring
    const int sp = (ly + 1) * pw + lx + 1, s = ly * bw + lx;
    const bool corner = (lx == 0 || lx == bw - 1) && (ly == 0 || ly == bh - 1);
    double f[LK_SCIDDICAT_NFLOWS] = {0.0, 0.0, 0.0, 0.0};
    if (!corner && i >= 1 && j >= 1 && i < rows - 1 && j < cols - 1 &&
        !lk_sciddicat_is_still(s_h[sp])) {
        const double zn[5] = {s_z[sp], s_z[sp - pw], s_z[sp - 1], s_z[sp + 1], s_z[sp + pw]};
        const double hn[5] = {s_h[sp], s_h[sp - pw], s_h[sp - 1], s_h[sp + 1], s_h[sp + pw]};
        cell_flows_fast(zn, hn, f);
    }
    for (int k = 0; k < LK_SCIDDICAT_NFLOWS; k++)
        s_f[k * nb + s] = f[k];
    __syncthreads();

    if (lx == 0 || ly == 0 || lx == bw - 1 || ly == bh - 1 || i >= rows - 1 || j >= cols - 1)
        return;
    const double out[4] = {s_f[s], s_f[nb + s], s_f[2 * nb + s], s_f[3 * nb + s]};
    const double in[4] = {s_f[3 * nb + s - bw], s_f[2 * nb + s - 1], s_f[nb + s + 1],
                          s_f[s + bw]};
    h_out[lk_sciddicat_at(i, j, cols)] = lab04_cell_width(s_h[sp], in, out);
}

// ---- Stretch 2: fast. The fused step, restricted to the region of lab04_fast_region (the
// cells next to debris now or one step ago), and without the work still cells do not need:
// their flows are not computed. DRAM traffic per step is 24 bytes per cell of the region
// (read z and h, write h); a dry grid costs little more than the launch.
//
// The host never learns the region: a fixed grid of persistent blocks reads it from the
// boxes and walks its tiles. The block is the tile; it stages altitude and thickness of the
// tile and two rings (all loads of a tile in flight at once). On a wet grid the step is bound
// by the outflow arithmetic, not by memory, so each thread computes its own cell's outflows
// once, into registers; the threads of the first warps then compute the one-cell ring's, of
// which only the outflow into the tile is kept; one barrier later, the width update reads
// its inflows from shared memory and its outflows from registers.

// floor(k / d) for 0 <= k, k * d < 2^32, with magic = ceil(2^32 / d): no integer division.
__device__ static inline int divide_small(int k, unsigned magic)
{
    return (int)__umulhi((unsigned)k, magic);
}

// Start copying altitude and thickness of the tile from (i0, j0) and two rings into s_z and
// s_h (sw columns, ns cells), asynchronously: the copies of the next tile fly while the block
// computes the current one. Cells outside the grid get 0 (never used).
__device__ static inline void stage_tile(int i0, int j0, int rows, int cols, int sw, int ns,
                                         unsigned sw_magic, const double *__restrict__ z,
                                         const double *__restrict__ h, double *s_z, double *s_h)
{
    for (int k = threadIdx.y * blockDim.x + threadIdx.x; k < ns; k += blockDim.x * blockDim.y) {
        const int r = divide_small(k, sw_magic);
        const int gi = i0 - 2 + r, gj = j0 - 2 + (k - r * sw);
        if (gi >= 0 && gj >= 0 && gi < rows && gj < cols) {
            const size_t at = lk_sciddicat_at(gi, gj, cols);
            __pipeline_memcpy_async(&s_z[k], &z[at], sizeof(double));
            __pipeline_memcpy_async(&s_h[k], &h[at], sizeof(double));
        } else {
            s_z[k] = 0.0;
            s_h[k] = 0.0;
        }
    }
    __pipeline_commit();
}

// nbuf: 2 to stage the next tile while computing this one (double buffering), 1 when two
// buffers would not fit (fast_buffers).
__global__ void __launch_bounds__(1024) step_fast(int step, int rows, int cols, int nbuf,
                                                  const double *__restrict__ z,
                                                  const double *__restrict__ h_in,
                                                  double *__restrict__ h_out, lab04_box *boxes)
{
    extern __shared__ double smem[];
    __shared__ int s_wet[4]; // the block's box of wet cells: r0, r1, c0, c1
    const int tw = blockDim.x, th = blockDim.y;
    const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * tw + tx;
    const int sw = tw + 4, ns = sw * (th + 4), fw = tw + 2, nf = fw * (th + 2);
    const int nthreads = tw * th, nring = 2 * (tw + th);
    const unsigned sw_magic = 0xffffffffu / (unsigned)sw + 1u;
    // Buffer b: altitude at smem + 2*b*ns, thickness after it; then 4 layers of nf outflows.
    double *s_f = smem + 2 * nbuf * ns;
    const lab04_box region = lab04_fast_region(boxes, step, rows, cols);
    if (tid == 0) {
        s_wet[0] = s_wet[2] = 0x7fffffff;
        s_wet[1] = s_wet[3] = -1;
        if (blockIdx.x == 0) // no block of this step reads it
            boxes[lab04_fast_slot(step, LAB04_TO_CLEAR)] = lab04_box_empty();
    }
    __syncthreads();

    int wr0 = 0x7fffffff, wr1 = -1, wc0 = 0x7fffffff, wc1 = -1;
    // Every value in the loop conditions is the same for the whole block: the
    // __syncthreads() inside are reached by all its threads.
    const int tiles_x = lab04_box_is_empty(region) ? 0 : (region.c1 - region.c0 + tw) / tw;
    const int tiles_y = lab04_box_is_empty(region) ? 0 : (region.r1 - region.r0 + th) / th;
    const int ntiles = tiles_x * tiles_y;
    const int sp = (ty + 2) * sw + tx + 2, fk = (ty + 1) * fw + tx + 1; // this thread's cell
    // Tile t's first cell is (region.r0 + (t / tiles_x) * th, region.c0 + (t % tiles_x) * tw);
    // a last partial tile runs past the region, into cells whose update is exact as well (or
    // out of the interior: skipped).
    if (nbuf == 2 && (int)blockIdx.x < ntiles)
        stage_tile(region.r0 + (blockIdx.x / tiles_x) * th, region.c0 + (blockIdx.x % tiles_x) * tw,
                   rows, cols, sw, ns, sw_magic, z, h_in, smem, smem + ns);
    int b = 0;
    for (int t = blockIdx.x; t < ntiles; t += gridDim.x) {
        const int i0 = region.r0 + (t / tiles_x) * th, j0 = region.c0 + (t % tiles_x) * tw;
        // Every thread is past the last tile's second barrier: nobody reads the buffer that
        // is written now any more.
        if (nbuf == 1) {
            stage_tile(i0, j0, rows, cols, sw, ns, sw_magic, z, h_in, smem, smem + ns);
            __pipeline_wait_prior(0);
        } else {
            const int next = t + gridDim.x;
            if (next < ntiles)
                stage_tile(region.r0 + (next / tiles_x) * th, region.c0 + (next % tiles_x) * tw,
                           rows, cols, sw, ns, sw_magic, z, h_in, smem + 2 * (b ^ 1) * ns,
                           smem + 2 * (b ^ 1) * ns + ns);
            else
                __pipeline_commit(); // an empty group: the wait below counts groups
            __pipeline_wait_prior(1);
        }
        __syncthreads(); // this tile staged; every thread done reading the last tile's s_f
        const double *s_z = smem + 2 * b * ns, *s_h = s_z + ns;

        // Own cell (i, j); i, j >= 1 since the region is interior.
        const int i = i0 + ty, j = j0 + tx;
        const bool interior = i < rows - 1 && j < cols - 1;
        const double hc = s_h[sp];
        {
            double f[LK_SCIDDICAT_NFLOWS] = {0.0, 0.0, 0.0, 0.0};
            if (interior && !lk_sciddicat_is_still(hc)) {
                const double zn[5] = {s_z[sp], s_z[sp - sw], s_z[sp - 1], s_z[sp + 1],
                                      s_z[sp + sw]};
                const double hn[5] = {hc, s_h[sp - sw], s_h[sp - 1], s_h[sp + 1], s_h[sp + sw]};
                cell_flows_fast(zn, hn, f);
            }
            for (int q = 0; q < LK_SCIDDICAT_NFLOWS; q++) // read back after the barrier:
                s_f[q * nf + fk] = f[q];                  // registers are scarce meanwhile
        }
        // The ring: North row, South row, West column, East column (corners send nothing
        // into the tile). Ring cell q keeps its outflow towards the tile only.
        for (int q = tid; q < nring; q += nthreads) {
            int r, c, dir;
            if (q < tw) {
                r = -1, c = q, dir = 3;
            } else if (q < 2 * tw) {
                r = th, c = q - tw, dir = 0;
            } else if (q < 2 * tw + th) {
                r = q - 2 * tw, c = -1, dir = 2;
            } else {
                r = q - 2 * tw - th, c = tw, dir = 1;
            }
            const int gi = i0 + r, gj = j0 + c, rp = (r + 2) * sw + c + 2;
            double f[LK_SCIDDICAT_NFLOWS] = {0.0, 0.0, 0.0, 0.0};
            if (gi >= 1 && gj >= 1 && gi < rows - 1 && gj < cols - 1 &&
                !lk_sciddicat_is_still(s_h[rp])) {
                const double zn[5] = {s_z[rp], s_z[rp - sw], s_z[rp - 1], s_z[rp + 1], s_z[rp + sw]};
                const double hn[5] = {s_h[rp], s_h[rp - sw], s_h[rp - 1], s_h[rp + 1], s_h[rp + sw]};
                cell_flows_fast(zn, hn, f);
            }
            // (a select, not f[dir]: a dynamic index would put f in local memory)
            const double into_tile = dir == 0 ? f[0] : dir == 1 ? f[1] : dir == 2 ? f[2] : f[3];
            s_f[dir * nf + (r + 1) * fw + c + 1] = into_tile;
        }
        __syncthreads(); // (also: every thread is done reading this tile's s_z and s_h)

        if (interior) {
            const double out[4] = {s_f[fk], s_f[nf + fk], s_f[2 * nf + fk], s_f[3 * nf + fk]};
            const double in[4] = {s_f[3 * nf + fk - fw], s_f[2 * nf + fk - 1], s_f[nf + fk + 1],
                                  s_f[fk + fw]};
            const double h = lab04_cell_width(hc, in, out);
            h_out[lk_sciddicat_at(i, j, cols)] = h;
            if (!lk_sciddicat_is_still(h)) {
                wr0 = min(wr0, i);
                wr1 = max(wr1, i);
                wc0 = min(wc0, j);
                wc1 = max(wc1, j);
            }
        }
        // No barrier here: the next tile's staging writes only s_z and s_h, and its outflows
        // reach s_f after its first barrier, once every thread has read this one's.
        b ^= nbuf - 1;
    }

    if (wr1 >= 0) {
        atomicMin(&s_wet[0], wr0);
        atomicMax(&s_wet[1], wr1);
        atomicMin(&s_wet[2], wc0);
        atomicMax(&s_wet[3], wc1);
    }
    __syncthreads();
    if (tid == 0 && s_wet[1] >= 0) {
        lab04_box *next = &boxes[lab04_fast_slot(step, LAB04_WET_NEXT)];
        atomicMin(&next->r0, s_wet[0]);
        atomicMax(&next->r1, s_wet[1]);
        atomicMin(&next->c0, s_wet[2]);
        atomicMax(&next->c1, s_wet[3]);
    }
}

// ---- Launch shapes, shared by the launchers and lab04_describe_kernel so they cannot
// disagree.

// The fast kernel double-buffers its staged tile while both buffers and the outflows fit in
// 48 KiB (every tile up to 64x8 or 32x16; no opt-in needed, several blocks per SM).
static int fast_buffers(int tile_x, int tile_y)
{
    const size_t staged = 2 * (size_t)(tile_x + 4) * (tile_y + 4);
    const size_t flows = LK_SCIDDICAT_NFLOWS * (size_t)(tile_x + 2) * (tile_y + 2);
    return (2 * staged + flows) * sizeof(double) <= 48 * 1024 ? 2 : 1;
}

static int launch_shape(lab04_variant variant, lab04_process process, int tile_x, int tile_y,
                        lab04_kernel_info *out, lk_error *err)
{
    const size_t d = sizeof(double);
    const size_t ring = (size_t)(tile_x + 2) * (tile_y + 2), tile = (size_t)tile_x * tile_y;
    if (variant == LAB04_HALO && process == LAB04_FLOWS)
        *out = (lab04_kernel_info){(const void *)flows_halo, tile_x + 2, tile_y + 2, 2 * ring * d};
    else if (variant == LAB04_HALO && process == LAB04_WIDTH)
        *out = (lab04_kernel_info){(const void *)width_halo, tile_x + 2, tile_y + 2,
                                   LK_SCIDDICAT_NFLOWS * ring * d};
    else if (variant == LAB04_NOHALO && process == LAB04_FLOWS)
        *out = (lab04_kernel_info){(const void *)flows_nohalo, tile_x, tile_y, 2 * tile * d};
    else if (variant == LAB04_NOHALO && process == LAB04_WIDTH)
        *out = (lab04_kernel_info){(const void *)width_nohalo, tile_x, tile_y,
                                   LK_SCIDDICAT_NFLOWS * tile * d};
    else if (variant == LAB04_FUSED && process == LAB04_STEP)
        *out = (lab04_kernel_info){(const void *)step_fused, tile_x + 2, tile_y + 2,
                                   (2 * (size_t)(tile_x + 4) * (tile_y + 4) +
                                    LK_SCIDDICAT_NFLOWS * ring) * d};
    else if (variant == LAB04_FAST && process == LAB04_STEP)
        *out = (lab04_kernel_info){(const void *)step_fast, tile_x, tile_y,
                                   (2 * (size_t)fast_buffers(tile_x, tile_y) * (tile_x + 4) *
                                        (tile_y + 4) +
                                    LK_SCIDDICAT_NFLOWS * ring) * d};
    else
        return lk_fail(err, "kernels.cu: the %s variant has no kernel for process %d",
                       lab04_variant_name(variant), (int)process);
    return 0;
}

// Blocks cover the interior, rounded up: a partial last tile in each direction.
static dim3 grid_of(int rows, int cols, int tile_x, int tile_y)
{
    return dim3((cols - 2 + tile_x - 1) / tile_x, (rows - 2 + tile_y - 1) / tile_y);
}

// Above 48 KiB of dynamic shared memory a kernel must opt in: fused tiles from about 30x30.
static int allow_shared(const lab04_kernel_info *k, lk_error *err)
{
    if (k->dynamic_shared_bytes > 48 * 1024)
        LK_CUDA_TRY(err, cudaFuncSetAttribute(k->kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                              (int)k->dynamic_shared_bytes));
    return 0;
}

extern "C" int lab04_flows(lab04_variant variant, int tile_x, int tile_y, int rows, int cols,
                           const double *d_z, const double *d_h, double *d_Sf, lk_error *err)
{
    lab04_kernel_info k = {};
    if (rows < 3 || cols < 3)
        return 0;
    if (launch_shape(variant, LAB04_FLOWS, tile_x, tile_y, &k, err) != 0)
        return -1;
    const dim3 grid = grid_of(rows, cols, tile_x, tile_y), block(k.block_x, k.block_y);
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
    if (rows < 3 || cols < 3)
        return 0;
    if (launch_shape(variant, LAB04_WIDTH, tile_x, tile_y, &k, err) != 0)
        return -1;
    const dim3 grid = grid_of(rows, cols, tile_x, tile_y), block(k.block_x, k.block_y);
    if (variant == LAB04_HALO)
        width_halo<<<grid, block, k.dynamic_shared_bytes>>>(rows, cols, d_h, d_Sf);
    else
        width_nohalo<<<grid, block, k.dynamic_shared_bytes>>>(rows, cols, d_h, d_Sf);
    LK_LAUNCH_TRY(err);
    return 0;
}

extern "C" int lab04_fused_step(int tile_x, int tile_y, int rows, int cols, const double *d_z,
                                const double *d_h_in, double *d_h_out, lk_error *err)
{
    lab04_kernel_info k = {};
    if (rows < 3 || cols < 3)
        return 0;
    if (launch_shape(LAB04_FUSED, LAB04_STEP, tile_x, tile_y, &k, err) != 0 ||
        allow_shared(&k, err) != 0)
        return -1;
    step_fused<<<grid_of(rows, cols, tile_x, tile_y), dim3(k.block_x, k.block_y),
                 k.dynamic_shared_bytes>>>(rows, cols, d_z, d_h_in, d_h_out);
    LK_LAUNCH_TRY(err);
    return 0;
}

// As many blocks as the GPU runs at once (no more than the interior has tiles): the step's
// kernel finds its region on the device and spreads the region's tiles over them.
static int resident_blocks(const lab04_kernel_info *k, int rows, int cols, int tile_x,
                           int tile_y, int *blocks, lk_error *err)
{
    static int cached_device = -1, cached_threads, cached_sms, cached_per_sm;
    static size_t cached_shared;
    int device;
    LK_CUDA_TRY(err, cudaGetDevice(&device));
    const int threads = k->block_x * k->block_y;
    if (device != cached_device || threads != cached_threads ||
        k->dynamic_shared_bytes != cached_shared) {
        int sms, per_sm;
        LK_CUDA_TRY(err, cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
        LK_CUDA_TRY(err, cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                             &per_sm, step_fast, threads, k->dynamic_shared_bytes));
        cached_device = device;
        cached_threads = threads;
        cached_shared = k->dynamic_shared_bytes;
        cached_sms = sms;
        cached_per_sm = per_sm > 0 ? per_sm : 1; // 0: the launch fails and says why
    }
    const long tiles = (long)((cols - 2 + tile_x - 1) / tile_x) * ((rows - 2 + tile_y - 1) / tile_y);
    const long most = (long)cached_sms * cached_per_sm;
    *blocks = (int)(tiles < most ? tiles : most);
    return 0;
}

extern "C" int lab04_fast_step(int step, int tile_x, int tile_y, int rows, int cols,
                               const double *d_z, const double *d_h_in, double *d_h_out,
                               lab04_box *d_boxes, lk_error *err)
{
    lab04_kernel_info k = {};
    int blocks = 0;
    if (rows < 3 || cols < 3)
        return 0;
    if (launch_shape(LAB04_FAST, LAB04_STEP, tile_x, tile_y, &k, err) != 0 ||
        allow_shared(&k, err) != 0 ||
        resident_blocks(&k, rows, cols, tile_x, tile_y, &blocks, err) != 0)
        return -1;
    step_fast<<<blocks, dim3(k.block_x, k.block_y), k.dynamic_shared_bytes>>>(
        step, rows, cols, fast_buffers(tile_x, tile_y), d_z, d_h_in, d_h_out, d_boxes);
    LK_LAUNCH_TRY(err);
    return 0;
}

extern "C" int lab04_describe_kernel(lab04_variant variant, lab04_process process,
                                     int tile_x, int tile_y, lab04_kernel_info *out,
                                     lk_error *err)
{
    return launch_shape(variant, process, tile_x, tile_y, out, err);
}
