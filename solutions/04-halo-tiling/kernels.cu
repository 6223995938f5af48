// Lab 04 solution: SciddicaT with shared-memory tiles, with and without halo cells, a fused
// one-kernel step, and the fused step restricted to the cells near the debris (fast). The
// arithmetic is the shared per-cell code (lab04_cell_flows, lab04_cell_width), or for the
// fused steps cell_flows_fast (the same roundings in the same order, a cheaper division) and,
// in fast, its rounds run for two cells at once and lab04_cell_width's sum split over two
// rows' iterations; so every variant equals the serial reference bit for bit.
//
// Tile (tx, ty) of block (bx, by) covers interior cells from (1 + by*ty, 1 + bx*tx); grids
// round up, so a last partial tile is handled by the bounds checks, for any domain size.

#include "lab.h"
#include "labkit/cuda_check.h"

// Both variants skip what the caller's zeroed outflows already hold: a still cell
// (sciddicat_is_still) has no outflow, so the flows kernel neither computes nor writes it
// and the width update stages zeros for it without loading; an eliminated direction's zero
// is not written. Per dry cell that saves the 32 bytes written and the 32 read of Sf.

// The outflows of cell `at` that are not zero (a kept direction's is positive).
__device__ static inline void store_outflows(int rows, int cols, size_t at,
                                             const double f[SCIDDICAT_NFLOWS],
                                             double *__restrict__ Sf)
{
    const size_t layer = (size_t)rows * cols;
    for (int k = 0; k < SCIDDICAT_NFLOWS; k++)
        if (f[k] != 0.0)
            Sf[k * layer + at] = f[k];
}

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
    const size_t at = sciddicat_at(i, j, cols);
    const bool inside = i < rows && j < cols;
    s_z[s] = inside ? z[at] : 0.0; // out of the domain: a neutral value, never used
    s_h[s] = inside ? h[at] : 0.0;
    __syncthreads();
    if (lx == 0 || ly == 0 || lx == bw - 1 || ly == bh - 1 || i >= rows - 1 || j >= cols - 1 ||
        sciddicat_is_still(s_h[s]))
        return;
    const double zn[5] = {s_z[s], s_z[s - bw], s_z[s - 1], s_z[s + 1], s_z[s + bw]};
    const double hn[5] = {s_h[s], s_h[s - bw], s_h[s - 1], s_h[s + 1], s_h[s + bw]};
    double f[SCIDDICAT_NFLOWS];
    lab04_cell_flows(zn, hn, f);
    store_outflows(rows, cols, at, f, Sf);
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
    const size_t layer = (size_t)rows * cols, at = sciddicat_at(i, j, cols);
    const bool inside = i < rows && j < cols;
    const bool north = ly == 0, south = ly == bh - 1, west = lx == 0, east = lx == bw - 1;
    // A tile cell's thickness at the step's start: only its own thread writes it, after the
    // barrier.
    const bool tile_cell = !north && !south && !west && !east;
    const double h_c = tile_cell && inside ? h[at] : 0.0;
    if (tile_cell) {
        const bool moves = inside && !sciddicat_is_still(h_c);
        for (int k = 0; k < SCIDDICAT_NFLOWS; k++)
            s_f[k * nb + s] = moves ? Sf[k * layer + at] : 0.0;
    } else if (!west && !east) {
        const int k = north ? 3 : 0;
        s_f[k * nb + s] = inside ? Sf[k * layer + at] : 0.0;
    } else if (!north && !south) {
        const int k = west ? 2 : 1;
        s_f[k * nb + s] = inside ? Sf[k * layer + at] : 0.0;
    }
    __syncthreads();
    if (!tile_cell || i >= rows - 1 || j >= cols - 1)
        return;
    const double out[4] = {s_f[s], s_f[nb + s], s_f[2 * nb + s], s_f[3 * nb + s]};
    const double in[4] = {s_f[3 * nb + s - bw], s_f[2 * nb + s - 1], s_f[nb + s + 1],
                          s_f[s + bw]};
    h[at] = lab04_cell_width(h_c, in, out);
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
    const size_t at = sciddicat_at(i, j, cols);
    const bool inside = i < rows && j < cols;
    s_z[s] = inside ? z[at] : 0.0;
    s_h[s] = inside ? h[at] : 0.0;
    __syncthreads();
    if (i >= rows - 1 || j >= cols - 1 || sciddicat_is_still(s_h[s]))
        return;
    const double zn[5] = {s_z[s], ly > 0 ? s_z[s - bw] : z[at - cols], lx > 0 ? s_z[s - 1] : z[at - 1],
                          lx < bw - 1 ? s_z[s + 1] : z[at + 1], ly < bh - 1 ? s_z[s + bw] : z[at + cols]};
    const double hn[5] = {s_h[s], ly > 0 ? s_h[s - bw] : h[at - cols], lx > 0 ? s_h[s - 1] : h[at - 1],
                          lx < bw - 1 ? s_h[s + 1] : h[at + 1], ly < bh - 1 ? s_h[s + bw] : h[at + cols]};
    double f[SCIDDICAT_NFLOWS];
    lab04_cell_flows(zn, hn, f);
    store_outflows(rows, cols, at, f, Sf);
}

__global__ void width_nohalo(int rows, int cols, double *__restrict__ h,
                             const double *__restrict__ Sf)
{
    extern __shared__ double s_f[]; // four layers of the tile
    const int bw = blockDim.x, bh = blockDim.y, lx = threadIdx.x, ly = threadIdx.y;
    const int nb = bw * bh;
    const int i = 1 + blockIdx.y * bh + ly, j = 1 + blockIdx.x * bw + lx;
    const int s = ly * bw + lx;
    const size_t layer = (size_t)rows * cols, at = sciddicat_at(i, j, cols);
    const bool inside = i < rows && j < cols;
    const double h_c = inside ? h[at] : 0.0; // only this thread writes it, after the barrier
    const bool moves = inside && !sciddicat_is_still(h_c);
    for (int k = 0; k < SCIDDICAT_NFLOWS; k++)
        s_f[k * nb + s] = moves ? Sf[k * layer + at] : 0.0;
    __syncthreads();
    if (i >= rows - 1 || j >= cols - 1)
        return;
    const double out[4] = {s_f[s], s_f[nb + s], s_f[2 * nb + s], s_f[3 * nb + s]};
    const double in[4] = {ly > 0 ? s_f[3 * nb + s - bw] : Sf[3 * layer + at - cols],
                          lx > 0 ? s_f[2 * nb + s - 1] : Sf[2 * layer + at - 1],
                          lx < bw - 1 ? s_f[nb + s + 1] : Sf[layer + at + 1],
                          ly < bh - 1 ? s_f[s + bw] : Sf[at + cols]};
    h[at] = lab04_cell_width(h_c, in, out);
}

// ---- The outflows of one cell, cheaper on the GPU than lab04_cell_flows and bit-identical to
// it (the same additions in the same order, the same correctly rounded quotient): on a wet grid
// the fused steps spend most of their time in the elimination loop, not in memory traffic.

// High 32 bits of a double (sign, exponent, top of the significand).
__device__ static inline unsigned high_word(double x)
{
    return (unsigned)__double2hiint(x);
}

// s / d for d in 1..5 and r = RN(1/d): the correctly rounded quotient of the `/` operator,
// without its reciprocal iterations. q = s * r is faithful, the remainder s - q*d is then exact
// (one FMA), and q + rem * r rounds to RN(s/d) (Markstein's theorem). That holds while nothing
// underflows or overflows: |s| in [2^-960, 2^960), else the real division runs. For d = 1, 2, 4
// the product is already exact and the remainder 0.
__device__ static inline double divide_by(double s, double d, double r)
{
    const unsigned biased_exponent_bits = high_word(s) & 0x7ff00000u;
    if (biased_exponent_bits - (63u << 20) >= ((1983u - 63u) << 20))
        return s / d;
    const double q = s * r;
    return fma(fma(-q, d, s), r, q);
}

// s / count for count = 1.0 .. 4.0 (the rounds after the first, which divides by 5), with
// r = RN(1/count) from the bits of count: 1, 1/2 and 1/4 are powers of two (the high word's
// exponent mirrored), 1/3 is 0x3fd5555555555555.
__device__ static inline double divide_by_count_upto4(double s, double count)
{
    const unsigned count_high = high_word(count);
    const double r = count_high == 0x40080000u ? __hiloint2double(0x3fd55555, 0x55555555)
                                               : __hiloint2double(0x7fe00000 - (int)count_high, 0);
    return divide_by(s, count, r);
}

// A kept term's weight as the high word of a double (0x3ff00000 is 1.0, 0 is 0.0): one integer
// select per term and round keeps it, and its shift by 29 is 1 or 0 for the count.
#define WEIGHT_ONE 0x3ff00000u

__device__ static inline double weight_of(unsigned high_word_of_weight)
{
    return __hiloint2double((int)high_word_of_weight, 0);
}

// The thresholds of the fused steps as constant-bank operands: a double literal costs two
// uniform moves before each instruction that uses it, and the elimination rounds use several.
__constant__ double fast_epsilon = SCIDDICAT_P_EPSILON;
__constant__ double fast_still_limit = 0.5 * SCIDDICAT_P_EPSILON; // sciddicat_is_still's

__device__ static inline bool fast_is_still(double h)
{
    return h <= fast_still_limit;
}

// The weight of a kept term's outflow, P_R = 0.5, from the term's weight: 0x3fe00000 is the high
// word of 0.5 (its low word is 0) and lies within WEIGHT_ONE's bits, so one AND selects it.
static_assert(SCIDDICAT_P_R == 0.5, "flow_weight_of builds P_R from the bits of 0.5");

__device__ static inline double flow_weight_of(unsigned high_word_of_weight)
{
    return __hiloint2double((int)(high_word_of_weight & 0x3fe00000u), 0);
}

// lab04_cell_flows, restructured, from the cell's altitude zc and thickness hc and its
// neighbours' levels v (z + h of North, West, East, South: the sums the reference forms).
// The reference adds the terms still in the average, in index order; here every term is added
// as fma(u, weight, s), weight 1.0 or 0.0. Both give its bits: fma(u, 1, s) rounds u + s once,
// and fma(u, 0, s) = s + (+-0) = s because u is finite (the loaders bound altitudes and
// thickness) and s is never -0 (m = hc - p_epsilon is not, and a rounded sum is -0 only when
// both terms are). A round that drops nothing leaves the count unchanged and ends the loop; the
// first round, where all five are kept, is peeled.
__device__ static inline void cell_flows_fast(double zc, double hc, const double v[4], double f[4])
{
    const double m = hc - fast_epsilon, u0 = zc + fast_epsilon;
    double average = divide_by(((((m + u0) + v[0]) + v[1]) + v[2]) + v[3], 5.0, 0.2);
    unsigned w0 = average <= u0 ? 0u : WEIGHT_ONE, w1 = average <= v[0] ? 0u : WEIGHT_ONE,
             w2 = average <= v[1] ? 0u : WEIGHT_ONE, w3 = average <= v[2] ? 0u : WEIGHT_ONE,
             w4 = average <= v[3] ? 0u : WEIGHT_ONE;
    int count = (int)((w0 >> 29) + (w1 >> 29) + (w2 >> 29) + (w3 >> 29) + (w4 >> 29));
    for (int before = 5; count != before;) {
        before = count;
        const double s = fma(v[3], weight_of(w4),
                             fma(v[2], weight_of(w3),
                                 fma(v[1], weight_of(w2),
                                     fma(v[0], weight_of(w1), fma(u0, weight_of(w0), m)))));
        average = count != 0 ? divide_by_count_upto4(s, (double)count) : s;
        w0 = average <= u0 ? 0u : w0;
        w1 = average <= v[0] ? 0u : w1;
        w2 = average <= v[1] ? 0u : w2;
        w3 = average <= v[2] ? 0u : w3;
        w4 = average <= v[3] ? 0u : w4;
        count = (int)((w0 >> 29) + (w1 >> 29) + (w2 >> 29) + (w3 >> 29) + (w4 >> 29));
    }
    // A kept term has average > v, so (average - v) * P_R > 0: fma with weight P_R rounds it
    // as the product does; a dropped one gives (<= 0) * 0 + 0 = +0, the reference's 0.0.
    f[0] = fma(average - v[0], flow_weight_of(w1), 0.0);
    f[1] = fma(average - v[1], flow_weight_of(w2), 0.0);
    f[2] = fma(average - v[2], flow_weight_of(w3), 0.0);
    f[3] = fma(average - v[3], flow_weight_of(w4), 0.0);
}

// The elimination of two cells at once, its first three rounds without a loop: on the wet grid
// most cells settle within three (the last dropping nothing; all but 0.1 % in the first ten
// steps, 90 % at step 995), and as straight-line code the two cells' rounds interleave. Further
// rounds run in lockstep across the warp until all its cells settle. Once a cell's kept set
// settles, a further round repeats the same sum and quotient, so the extra rounds leave its
// bits as the reference's. The sums are cell_flows_fast's: every term added as fma(u, w, s).

#define FAST_FULL_MASK 0xffffffffu
#define FAST_CELLS 2 // cells per lane, their rounds interleaved

// A round's divisor (the count of kept terms) and its rounded reciprocal, indexed by bits 20-23
// of the sum of the terms' weights (count x 0x3ff00000, modulo 2^32): 0, 15, 14, 13, 12 and 11
// for counts 0 to 5. Count 0 divides by 1, which returns the sum m, as the reference does.
__constant__ double2 fast_divisors[16] = {
    {1.0, 1.0}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {},
    {5.0, 0.2}, {4.0, 0.25}, {3.0, 1.0 / 3.0}, {2.0, 0.5}, {1.0, 1.0}};
__constant__ double fast_five = 5.0, fast_fifth = 0.2;
__constant__ double fast_markstein_min = 0x1p-960; // divide_by's range, from below

// Copies fast_divisors to shared memory, where lanes with different counts read theirs in one
// access (the constant bank serialises different addresses). A barrier must follow.
__device__ static inline void stage_divisors(double2 *s_divisors, int thread)
{
    if (thread < 16)
        s_divisors[thread] = fast_divisors[thread];
}

// One round for a lane's cells, their operations interleaved so that the cells' chains of dependent
// additions overlap: the sum of m and the kept terms in index order; its quotient by their
// count, with divide_by's steps (in_range clears when the sum is outside their range); the
// terms the new average drops. Weights in kept (WEIGHT_ONE or 0) rather than flags: two cells'
// five flags do not fit the predicate registers, and spilled flags serialise the cells. Their
// sum, in weights, stands for the count (two additions where counting takes five).
__device__ static inline void elimination_round(const double m[FAST_CELLS],
                                                const double u[FAST_CELLS][5],
                                                unsigned kept[FAST_CELLS][5],
                                                const double2 *divisors,
                                                double average[FAST_CELLS],
                                                bool in_range[FAST_CELLS],
                                                unsigned weights[FAST_CELLS])
{
    double s[FAST_CELLS];
#pragma unroll
    for (int c = 0; c < FAST_CELLS; c++) {
        s[c] = m[c];
        weights[c] = kept[c][0] + kept[c][1] + kept[c][2] + kept[c][3] + kept[c][4];
    }
#pragma unroll
    for (int n = 0; n < 5; n++)
#pragma unroll
        for (int c = 0; c < FAST_CELLS; c++)
            s[c] = fma(u[c][n], weight_of(kept[c][n]), s[c]);
#pragma unroll
    for (int c = 0; c < FAST_CELLS; c++) {
        in_range[c] = in_range[c] && fabs(s[c]) >= fast_markstein_min;
        const double2 divisor = divisors[(weights[c] >> 20) & 15u]; // (count, RN(1 / count))
        const double q = s[c] * divisor.y;
        average[c] = fma(fma(-q, divisor.x, s[c]), divisor.y, q);
    }
#pragma unroll
    for (int n = 0; n < 5; n++)
#pragma unroll
        for (int c = 0; c < FAST_CELLS; c++)
            kept[c][n] = average[c] <= u[c][n] ? 0u : kept[c][n];
}

// Whether every cell kept, in the round just made, all the terms it summed.
__device__ static inline bool cells_settled(const unsigned kept[FAST_CELLS][5],
                                            const unsigned weights[FAST_CELLS])
{
    bool settled = true;
#pragma unroll
    for (int c = 0; c < FAST_CELLS; c++)
        settled = settled &&
                  kept[c][0] + kept[c][1] + kept[c][2] + kept[c][3] + kept[c][4] == weights[c];
    return settled;
}

// cell_flows_fast's outflows of a lane's cells, for each cell that moves (the others keep no term from
// the first round on, so they settle at once and get zeros), by rounds in lockstep. Returns a
// bit per cell with a sum outside divide_by's range, f unset, for the caller's cell_flows_fast.
// The first round keeps all five terms: the plain sum over 5. (|sums| stay below 2^960: the
// loaders bound levels.) Call it with the whole warp.
__device__ static inline unsigned cells_flows(const double zc[FAST_CELLS],
                                             const double hc[FAST_CELLS],
                                             const double v[FAST_CELLS][4],
                                             const bool moves[FAST_CELLS], double f[FAST_CELLS][4],
                                             const double2 *divisors)
{
    double m[FAST_CELLS], u[FAST_CELLS][5], average[FAST_CELLS];
    bool in_range[FAST_CELLS];
    unsigned kept[FAST_CELLS][5];
    unsigned weights[FAST_CELLS];
#pragma unroll
    for (int c = 0; c < FAST_CELLS; c++) {
        m[c] = hc[c] - fast_epsilon;
        u[c][0] = zc[c] + fast_epsilon;
#pragma unroll
        for (int n = 0; n < 4; n++)
            u[c][n + 1] = v[c][n];
    }
    double s[FAST_CELLS];
#pragma unroll
    for (int c = 0; c < FAST_CELLS; c++)
        s[c] = m[c] + u[c][0];
#pragma unroll
    for (int n = 1; n < 5; n++)
#pragma unroll
        for (int c = 0; c < FAST_CELLS; c++)
            s[c] = s[c] + u[c][n];
#pragma unroll
    for (int c = 0; c < FAST_CELLS; c++) {
        in_range[c] = fabs(s[c]) >= fast_markstein_min;
        const double q = s[c] * fast_fifth;
        average[c] = fma(fma(-q, fast_five, s[c]), fast_fifth, q);
    }
#pragma unroll
    for (int n = 0; n < 5; n++)
#pragma unroll
        for (int c = 0; c < FAST_CELLS; c++)
            kept[c][n] = moves[c] && average[c] > u[c][n] ? WEIGHT_ONE : 0u; // > is !(<=): no NaN
    elimination_round(m, u, kept, divisors, average, in_range, weights);
    elimination_round(m, u, kept, divisors, average, in_range, weights);
    while (!__all_sync(FAST_FULL_MASK, cells_settled(kept, weights)))
        elimination_round(m, u, kept, divisors, average, in_range, weights);
    unsigned out_of_range = 0;
#pragma unroll
    for (int c = 0; c < FAST_CELLS; c++) {
#pragma unroll
        for (int k = 0; k < 4; k++)
            f[c][k] = fma(average[c] - u[c][k + 1], flow_weight_of(kept[c][k + 1]), 0.0);
        if (moves[c] && !in_range[c])
            out_of_range |= 1u << c;
    }
    return out_of_range;
}

// ---- Stretch: fused step. The block is the tile plus a one-cell ring, as for halo; z and h
// are staged for the tile plus two rings, the outflows of the tile plus one ring are computed
// into shared memory (0 for border cells: the reset folded in), then the tile's width update
// writes h_out. Global traffic per cell and step: read z and h, write h (24 B instead of 128).
// Still cells skip their outflows (sciddicat_is_still).

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
            const size_t at = inside ? sciddicat_at(gi, gj, cols) : 0;
            s_z[r * pw + c] = inside ? z[at] : 0.0;
            s_h[r * pw + c] = inside ? h_in[at] : 0.0;
        }
    __syncthreads();

    const int i = i0 + 1 + ly, j = j0 + 1 + lx; // this thread's cell: tile or first ring
    const int sp = (ly + 1) * pw + lx + 1, s = ly * bw + lx;
    const bool corner = (lx == 0 || lx == bw - 1) && (ly == 0 || ly == bh - 1);
    double f[SCIDDICAT_NFLOWS] = {0.0, 0.0, 0.0, 0.0};
    if (!corner && i >= 1 && j >= 1 && i < rows - 1 && j < cols - 1 &&
        !fast_is_still(s_h[sp])) {
        const double v[4] = {s_z[sp - pw] + s_h[sp - pw], s_z[sp - 1] + s_h[sp - 1],
                             s_z[sp + 1] + s_h[sp + 1], s_z[sp + pw] + s_h[sp + pw]};
        cell_flows_fast(s_z[sp], s_h[sp], v, f);
    }
    for (int k = 0; k < SCIDDICAT_NFLOWS; k++)
        s_f[k * nb + s] = f[k];
    __syncthreads();

    if (lx == 0 || ly == 0 || lx == bw - 1 || ly == bh - 1 || i >= rows - 1 || j >= cols - 1)
        return;
    const double out[4] = {s_f[s], s_f[nb + s], s_f[2 * nb + s], s_f[3 * nb + s]};
    const double in[4] = {s_f[3 * nb + s - bw], s_f[2 * nb + s - 1], s_f[nb + s + 1],
                          s_f[s + bw]};
    h_out[sciddicat_at(i, j, cols)] = lab04_cell_width(s_h[sp], in, out);
}

// ---- Stretch 2: fast. The fused step, restricted to the region of lab04_fast_region (the
// cells next to debris now or one step ago), and without the work still cells do not need.
// DRAM traffic per step is 24 bytes per cell of the region (read z and h, write h); a dry
// grid costs the launch and a few rows of latency.
//
// On a wet grid the step is bound by the outflow arithmetic, so the kernel spends almost no
// instruction on anything else: each warp streams a strip of columns down the region, one
// row per iteration, with every value in registers. Lane l holds the pair of columns
// j0 - 2 + 2l and the next one, whose rounds interleave; the neighbours' levels and outflows
// cross between lanes by shuffles, the rows above and below stay in registers from the
// iterations before. The 64 columns compute the outflows of 62 and write 60: the two columns
// on each side are the strip's halo, as the row above and the row below a segment are.
// Nothing is staged, so there is no barrier in the loop.
//
// The host never learns the region: a fixed grid of persistent warps reads it from the boxes
// and takes its (strip, segment) items in turn.

#define FAST_LANES 32
#define FAST_STRIP (2 * FAST_LANES - 4) // columns a warp writes

// Rows of a segment: each strip cut into as many segments as the grid's warps allow, so that
// no warp takes more than one (a warp with one more item than the rest adds a whole item to
// the step) and segments are long where the region is large (each costs two rows of halo at
// either end, read from DRAM again). A small region leaves warps idle and its step is one
// warp's latency: there segments are short, down to 2 rows (measured on the dry grid: 16.6 us
// a step against 22.4 with at least 8).
__device__ static inline int segment_rows(lab04_box region, int strips, int warps)
{
    const int region_rows = region.r1 - region.r0 + 1;
    const int segments = max(1, warps / strips); // per strip
    const int rows = (region_rows + segments - 1) / segments;
    return rows < 2 ? 2 : rows;
}

// A lane's two columns (a, then b) in one row: altitude and thickness, and their levels.
typedef struct {
    double za, ha, zb, hb;
} cell_pair;
typedef struct {
    double a, b;
} level_pair;

// Row i of the pair at `at` (column a; b follows), 0 outside the grid (never used).
__device__ static inline void load_pair(int i, bool a_in_grid, bool b_in_grid, int rows,
                                        long long at, const double *__restrict__ z,
                                        const double *__restrict__ h, cell_pair *c)
{
    const bool row_in_grid = i >= 0 && i < rows;
    c->za = row_in_grid && a_in_grid ? z[at] : 0.0;
    c->ha = row_in_grid && a_in_grid ? h[at] : 0.0;
    c->zb = row_in_grid && b_in_grid ? z[at + 1] : 0.0;
    c->hb = row_in_grid && b_in_grid ? h[at + 1] : 0.0;
}

// What a warp's segment of a strip fixes for all its rows: the rows it reads and writes, and
// which of a lane's two columns lie in the grid, compute outflows and write.
typedef struct {
    int rows, cols, first, load_last;
    bool a_in_grid, b_in_grid, a_computes, b_computes, a_writes, b_writes;
} fast_segment;

// What one row hands the next: where the loads ahead stand; row r - 1's new thickness so far
// (lab04_cell_width's sum up to its third term) and South outflow, which wait one row for the
// North outflow of their South neighbour; and the wet rows and columns written so far.
typedef struct {
    long long ahead;
    double partial_a, south_out_a, partial_b, south_out_b;
    int first_wet, last_wet;
    unsigned wet_columns; // bit 0: a, bit 1: b
} fast_carry;

// Row r of a segment: its z and h in c, the levels of rows r-1 and r in vn and vh; forms row
// r+1's levels vs from cs (loaded two rows before), loads row r+3 into next, computes row r's
// outflows and writes row r - 1. The caller rotates the slots, so rows never move between
// registers.
__device__ static inline void fast_row(const fast_segment *seg, fast_carry *carry, int r,
                                       const cell_pair *c, level_pair vn, level_pair vh,
                                       const cell_pair *cs, level_pair *vs, cell_pair *next,
                                       const double *__restrict__ z,
                                       const double *__restrict__ h_in,
                                       double *__restrict__ h_out, const double2 *divisors)
{
    // Row r+3's loads must issue after row r+1's levels are formed: the loads in flight share
    // one scoreboard, and a use placed after the next loads waits for those too (measured: a
    // fifth of the wet step). Their predicate reads the levels, which orders them; it always
    // holds, the loaders keep levels finite. A row past load_last or a column outside the
    // grid keeps the slot's old (finite) values: no cell that computes reads them.
    vs->a = cs->za + cs->ha;
    vs->b = cs->zb + cs->hb;
    if (r <= seg->load_last && vs->a == vs->a && vs->b == vs->b) {
        if (seg->a_in_grid) {
            next->za = z[carry->ahead];
            next->ha = h_in[carry->ahead];
        }
        if (seg->b_in_grid) {
            next->zb = z[carry->ahead + 1];
            next->hb = h_in[carry->ahead + 1];
        }
    }
    const double west_a = __shfl_up_sync(FAST_FULL_MASK, vh.b, 1);
    const double east_b = __shfl_down_sync(FAST_FULL_MASK, vh.a, 1);
    double f[FAST_CELLS][SCIDDICAT_NFLOWS] = {{0.0}};
    const bool row_computes = r >= 1 && r <= seg->rows - 2;
    const bool moves[FAST_CELLS] = {seg->a_computes && row_computes && !fast_is_still(c->ha),
                                    seg->b_computes && row_computes && !fast_is_still(c->hb)};
    const double zc[FAST_CELLS] = {c->za, c->zb}, hc[FAST_CELLS] = {c->ha, c->hb};
    const double v[FAST_CELLS][4] = {{vn.a, west_a, vh.b, vs->a}, {vn.b, vh.a, east_b, vs->b}};
    // Cells that do not move compute on finite stand-ins and keep zero outflows, so the two
    // cells' rounds run as one block.
    if (__any_sync(FAST_FULL_MASK, moves[0] || moves[1])) {
        const unsigned out_of_range = cells_flows(zc, hc, v, moves, f, divisors);
        if (out_of_range != 0u) { // rare: one test on the common path
            if (out_of_range & 1u)
                cell_flows_fast(c->za, c->ha, v[0], f[0]);
            if (out_of_range & 2u)
                cell_flows_fast(c->zb, c->hb, v[1], f[1]);
        }
    }
    const double *fa = f[0], *fb = f[1];
    // What a receives from the West (the lane before's b) and b from the East.
    const double in_w_a = __shfl_up_sync(FAST_FULL_MASK, fb[2], 1);
    const double in_e_b = __shfl_down_sync(FAST_FULL_MASK, fa[1], 1);
    if (r > seg->first) { // row r - 1
        const long long above = carry->ahead - 4 * (long long)seg->cols;
        const double ha_new = carry->partial_a + (fa[0] - carry->south_out_a);
        const double hb_new = carry->partial_b + (fb[0] - carry->south_out_b);
        if (seg->a_writes)
            h_out[above] = ha_new;
        if (seg->b_writes)
            h_out[above + 1] = hb_new;
        const bool a_wet = seg->a_writes && !fast_is_still(ha_new);
        const bool b_wet = seg->b_writes && !fast_is_still(hb_new);
        if (a_wet || b_wet) {
            carry->first_wet = min(carry->first_wet, r - 1);
            carry->last_wet = r - 1;
            carry->wet_columns |= (a_wet ? 1u : 0u) | (b_wet ? 2u : 0u);
        }
    }
    carry->ahead += seg->cols;
    carry->partial_a = ((c->ha + (carry->south_out_a - fa[0])) + (in_w_a - fa[1])) + (fb[1] - fa[2]);
    carry->partial_b = ((c->hb + (carry->south_out_b - fb[0])) + (fa[2] - fb[1])) + (in_e_b - fb[2]);
    carry->south_out_a = fa[3];
    carry->south_out_b = fb[3];
}

// The step, for each of the kernels below (one per block-size bound): they differ only in the
// registers the bound leaves. A lane's two cells need 128 registers: 256- and 512-thread blocks
// keep them (16 warps per SM, each with two cells' rounds interleaved); 1024-thread blocks,
// held to 64, spill.
__device__ static __forceinline__ void fast_step(int step, int rows, int cols,
                                                 const double *__restrict__ z,
                                                 const double *__restrict__ h_in,
                                                 double *__restrict__ h_out, lab04_box *boxes)
{
    __shared__ int s_wet[4]; // the block's box of wet cells: r0, r1, c0, c1
    __shared__ double2 s_divisors[16];
    const int tid = threadIdx.y * blockDim.x + threadIdx.x, lane = tid % FAST_LANES;
    stage_divisors(s_divisors, tid);
    // Only whole warps stream strips (lab04_check_tile: a fast block holds at least one);
    // the threads of a last partial warp only join the box's reduction.
    const int warps = (int)(blockDim.x * blockDim.y) / FAST_LANES, warp = tid / FAST_LANES;
    const lab04_box region = lab04_fast_region(boxes, step, rows, cols);
    if (tid == 0) {
        s_wet[0] = s_wet[2] = 0x7fffffff;
        s_wet[1] = s_wet[3] = -1;
        if (blockIdx.x == 0) // no block of this step reads it
            boxes[lab04_fast_slot(step, LAB04_TO_CLEAR)] = lab04_box_empty();
    }
    __syncthreads();

    int wr0 = 0x7fffffff, wr1 = -1, wc0 = 0x7fffffff, wc1 = -1;
    if (warp < warps && !lab04_box_is_empty(region)) {
        const int strips = (region.c1 - region.c0 + FAST_STRIP) / FAST_STRIP;
        const int seg_rows = segment_rows(region, strips, (int)gridDim.x * warps);
        const int items = strips * ((region.r1 - region.r0 + seg_rows) / seg_rows);
        for (int item = blockIdx.x * warps + warp; item < items; item += gridDim.x * warps) {
            const int strip = item % strips;
            const int first = region.r0 + (item / strips) * seg_rows;
            const int last = min(first + seg_rows - 1, region.r1);
            const int ja = region.c0 - 2 + strip * FAST_STRIP + 2 * lane, jb = ja + 1;
            const bool inner_lane = lane >= 1 && lane <= FAST_LANES - 2;
            // Rows first-2 .. last+2 are read, the outflows of rows first-1 .. last+1
            // computed, rows first .. last written (row r - 1 in the iteration of row r).
            // Loads run two rows ahead: one row of arithmetic does not cover DRAM's latency.
            const fast_segment seg = {
                rows, cols, first,
                min(last - 1, rows - 4), // load_last: row r + 3 loaded while r <= it
                ja >= 0 && ja < cols, jb >= 0 && jb < cols,
                lane >= 1 && ja >= 1 && ja <= cols - 2,
                lane <= FAST_LANES - 2 && jb >= 1 && jb <= cols - 2,
                inner_lane && ja <= region.c1, inner_lane && jb <= region.c1};
            const long long at0 = (long long)(first - 2) * cols + ja;
            cell_pair c0, c1, c2, c3;
            load_pair(first - 2, seg.a_in_grid, seg.b_in_grid, rows, at0, z, h_in, &c0);
            load_pair(first - 1, seg.a_in_grid, seg.b_in_grid, rows, at0 + cols, z, h_in, &c1);
            load_pair(first, seg.a_in_grid, seg.b_in_grid, rows, at0 + 2 * (long long)cols, z,
                      h_in, &c2);
            load_pair(first + 1, seg.a_in_grid, seg.b_in_grid, rows, at0 + 3 * (long long)cols,
                      z, h_in, &c3);
            fast_carry carry = {at0 + 4 * (long long)cols, // row first + 2
                                0.0, 0.0, 0.0, 0.0, 0x7fffffff, -1, 0u};
            level_pair v0 = {c0.za + c0.ha, c0.zb + c0.hb}, v1 = {c1.za + c1.ha, c1.zb + c1.hb},
                       v2 = {0.0, 0.0}, v3 = {0.0, 0.0};
            // Slots: c1/v1 row r, c2/v2 row r+1, c3 row r+2 (in flight), c0/v0 row r-1 / r+3.
            for (int r = first - 1;; r += 4) {
                fast_row(&seg, &carry, r, &c1, v0, v1, &c2, &v2, &c0, z, h_in, h_out, s_divisors);
                if (r + 1 > last + 1)
                    break;
                fast_row(&seg, &carry, r + 1, &c2, v1, v2, &c3, &v3, &c1, z, h_in, h_out,
                         s_divisors);
                if (r + 2 > last + 1)
                    break;
                fast_row(&seg, &carry, r + 2, &c3, v2, v3, &c0, &v0, &c2, z, h_in, h_out,
                         s_divisors);
                if (r + 3 > last + 1)
                    break;
                fast_row(&seg, &carry, r + 3, &c0, v3, v0, &c1, &v1, &c3, z, h_in, h_out,
                         s_divisors);
                if (r + 4 > last + 1)
                    break;
            }
            if (carry.last_wet >= 0) {
                wr0 = min(wr0, carry.first_wet);
                wr1 = max(wr1, carry.last_wet);
                wc0 = min(wc0, carry.wet_columns & 1u ? ja : jb);
                wc1 = max(wc1, carry.wet_columns & 2u ? jb : ja);
            }
        }
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

// One kernel per block-size bound (C has no templates): the bound sets the registers.
#define FAST_KERNEL(name, max_threads, min_blocks)                                              \
    __global__ void __launch_bounds__(max_threads, min_blocks)                                  \
        name(int step, int rows, int cols, const double *__restrict__ z,                        \
             const double *__restrict__ h_in, double *__restrict__ h_out, lab04_box *boxes)     \
    {                                                                                           \
        fast_step(step, rows, cols, z, h_in, h_out, boxes);                                     \
    }
FAST_KERNEL(step_fast_256, 256, 2)
FAST_KERNEL(step_fast_512, 512, 1)
FAST_KERNEL(step_fast_1024, 1024, 1)

// The kernel for a block of `threads`.
static const void *fast_kernel(int threads)
{
    return threads <= 256   ? (const void *)step_fast_256
           : threads <= 512 ? (const void *)step_fast_512
                            : (const void *)step_fast_1024;
}

// ---- Launch shapes, shared by the launchers and lab04_describe_kernel so they cannot
// disagree.

static int launch_shape(lab04_variant variant, lab04_process process, int tile_x, int tile_y,
                        lab04_kernel_info *out, lk_error *err)
{
    const size_t d = sizeof(double);
    const size_t ring = (size_t)(tile_x + 2) * (tile_y + 2), tile = (size_t)tile_x * tile_y;
    if (variant == LAB04_HALO && process == LAB04_FLOWS)
        *out = (lab04_kernel_info){(const void *)flows_halo, tile_x + 2, tile_y + 2, 2 * ring * d};
    else if (variant == LAB04_HALO && process == LAB04_WIDTH)
        *out = (lab04_kernel_info){(const void *)width_halo, tile_x + 2, tile_y + 2,
                                   SCIDDICAT_NFLOWS * ring * d};
    else if (variant == LAB04_NOHALO && process == LAB04_FLOWS)
        *out = (lab04_kernel_info){(const void *)flows_nohalo, tile_x, tile_y, 2 * tile * d};
    else if (variant == LAB04_NOHALO && process == LAB04_WIDTH)
        *out = (lab04_kernel_info){(const void *)width_nohalo, tile_x, tile_y,
                                   SCIDDICAT_NFLOWS * tile * d};
    else if (variant == LAB04_FUSED && process == LAB04_STEP)
        *out = (lab04_kernel_info){(const void *)step_fused, tile_x + 2, tile_y + 2,
                                   (2 * (size_t)(tile_x + 4) * (tile_y + 4) +
                                    SCIDDICAT_NFLOWS * ring) * d};
    else if (variant == LAB04_FAST && process == LAB04_STEP)
        *out = (lab04_kernel_info){fast_kernel(tile_x * tile_y), tile_x, tile_y, 0};
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

// As many blocks as the GPU runs at once (no more than the whole interior has strips and
// 64-row segments for their warps): the step's kernel finds its region on the device and
// spreads the region's items over them.
static int resident_blocks(const lab04_kernel_info *k, int rows, int cols, int *blocks,
                           lk_error *err)
{
    static int cached_device = -1, cached_threads, cached_sms, cached_per_sm;
    int device;
    LK_CUDA_TRY(err, cudaGetDevice(&device));
    const int threads = k->block_x * k->block_y;
    if (device != cached_device || threads != cached_threads) {
        int sms, per_sm;
        LK_CUDA_TRY(err, cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
        LK_CUDA_TRY(err, cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k->kernel,
                                                                       threads, 0));
        cached_device = device;
        cached_threads = threads;
        cached_sms = sms;
        cached_per_sm = per_sm > 0 ? per_sm : 1; // 0: the launch fails and says why
    }
    const long items = (long)((cols - 2 + FAST_STRIP - 1) / FAST_STRIP) * ((rows - 2 + 63) / 64);
    const long warps = threads / FAST_LANES, needed = (items + warps - 1) / warps;
    const long most = (long)cached_sms * cached_per_sm;
    *blocks = (int)(needed < most ? needed : most);
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
    if (tile_x * tile_y < FAST_LANES)
        return lk_fail(err, "kernels.cu: the fast variant's block %dx%d holds no whole warp "
                            "(%d threads)", tile_x, tile_y, FAST_LANES);
    if (launch_shape(LAB04_FAST, LAB04_STEP, tile_x, tile_y, &k, err) != 0 ||
        resident_blocks(&k, rows, cols, &blocks, err) != 0)
        return -1;
    void *args[] = {&step, &rows, &cols, (void *)&d_z, (void *)&d_h_in, &d_h_out, &d_boxes};
    LK_CUDA_TRY(err, cudaLaunchKernel(k.kernel, dim3(blocks), dim3(k.block_x, k.block_y), args, 0,
                                      0));
    LK_LAUNCH_TRY(err);
    return 0;
}

extern "C" int lab04_describe_kernel(lab04_variant variant, lab04_process process,
                                     int tile_x, int tile_y, lab04_kernel_info *out,
                                     lk_error *err)
{
    return launch_shape(variant, process, tile_x, tile_y, out, err);
}
