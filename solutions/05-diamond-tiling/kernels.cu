// Lab 05 solution: diamonds and hexagons of the (space, time) plane, one kernel for both
// (a diamond is a hexagon whose flat part is 0 points wide).
//
// One block per tile, one thread per point of the tile's middle. A thread keeps its point's
// (u, v) in registers for the levels it is active; the u of the level below lives in shared
// memory, two buffers by parity, so one __syncthreads() per level suffices. Global memory
// sees only what must cross tiles: the initial middle (row 0) or the bottom flat, the
// neighbours' edge records of the bottom half (read once, at the start, into shared
// memory: no global load inside the level loop), the tile's own edge records, its top flat
// and its points of the last level. A row of tiles therefore moves about
// 8 H (4 + 4) doubles per tile for H steps of W - H points: 64 / (W - H) bytes per point
// per step plus the flats, against 32 for one step per launch.

#include <cuda_pipeline.h>

#include "lab.h"
#include "labkit/cuda_check.h"

// u of point x as the level below holds it: 0 beyond the fixed ends.
static __device__ double u_or_zero(long x, int n, double u)
{
    return x >= 0 && x < n ? u : 0.0;
}

// What leaves the tile at level t, for a thread active there: its share of the edge records
// (levels mid .. mid + H - 1 below `steps`), the top flat (level mid + H) and the last level.
static __device__ __forceinline__ void leave(int t, int j, int W, int H, int mid, int steps,
                                             double u, double v, double *edges, size_t mine,
                                             double2 *y2, long x)
{
    const int je = t - mid;
    if (je >= 0 && je < H && t < steps) {
        if (j - je == 0 || j - je == 1) // left edge: points m + je, m + je + 1
            ((double2 *)(edges + mine + 4 * je))[j - je] = make_double2(u, v);
        const int r0 = W - je - 2;      // right edge: points m + r0, m + r0 + 1
        if (j - r0 == 0 || j - r0 == 1)
            ((double2 *)(edges + mine + 4 * H + 4 * je))[j - r0] =
                make_double2(u, v);
    }
    if (t == steps || t == mid + H)
        y2[x] = make_double2(u, v);
}

static __global__ void __launch_bounds__(LAB05_MAX_WIDTH)
tile_row_kernel(int n, int steps, int row, int W, int H, double *__restrict__ y,
                double *__restrict__ edges)
{
    extern __shared__ double smem[];
    const int j = threadIdx.x;        // my point in the tile's middle
    const long tile = blockIdx.x;
    const long m = lab05_tile_left(row, tile, W, H);
    const long x = m + j;
    const bool inside = x >= 0 && x < n;
    const int dj = min(j, W - 1 - j); // active at levels mid - dj .. mid + dj
    // Levels are ints (steps <= 1e8): 32-bit compares in the level loops.
    const int mid = row * H;                                   // level of the tile's middle
    const int lo = row == 0 ? 0 : mid - H;                     // the level it starts from
    const int hi = min(steps, mid + H);                        // the last level it computes
    double *cur_u = smem, *next_u = smem + W + 2;              // u of a level: slot k = point m + k - 1
    double *se = smem + 2 * (W + 2);                           // neighbours' edges: [side][level][4]
    // Records of tile i, side s of a row start at that row's first record + (2i + s) * 4H
    // (lab05_edge_at); computed once, the index needs 64-bit divisions.
    const size_t side_len = 4 * (size_t)H;
    const size_t mine = lab05_edge_at(n, row, 0, 0, 0, W, H) + 2 * (size_t)tile * side_len;
    double2 *y2 = (double2 *)y;

    // The neighbours' edge records of the levels lo .. min(mid, steps) - 1, coalesced: side 0
    // is the right edge of the tile on the left, side 1 the left edge of the one on the right.
    if (row > 0) {
        const long left = lab05_left_writer(row, tile);
        const long writers = lab05_tiles_in_row(n, row - 1, W, H);
        const size_t below = lab05_edge_at(n, row - 1, 0, 0, 0, W, H);
        const int levels = min(H, steps - lo), per_side = 4 * levels;
        for (int k = j; k < 2 * per_side; k += W) {
            const int side = k >= per_side, at = k - side * per_side;
            const long w = left + side;
            if (w >= 0 && w < writers)
                se[side * 4 * H + at] = edges[below + (2 * (size_t)w + 1 - side) * side_len + at];
        }
    }
    __syncthreads(); // the records are read by the entering threads, before the level's barrier

    // The start level: row 0 its middle (level 0, whose edges it writes), other rows their
    // bottom flat.
    double u = 0.0, v = 0.0;
    if (dj >= mid - lo) {
        if (inside) {
            const double2 uv = y2[x];
            u = uv.x;
            v = uv.y;
            leave(lo, j, W, H, mid, steps, u, v, edges, mine, y2, x);
        }
        cur_u[j + 1] = u_or_zero(x, n, u);
    }

    // Lower half (rows >= 1): level t + 1 gains two points on each side, whose level t comes
    // from the neighbours' records with the u just outside.
    int t = lo;
    for (; t < mid && t < hi; t++) {
        const int d = mid - t - 1; // level t + 1 covers the threads dj >= d
        if (j == d) {              // record: (u, v) of x - 1, then of x
            const double *rec = se + 4 * (t - lo);
            if (inside) {
                u = rec[2];
                v = rec[3];
            }
            cur_u[j] = x - 1 >= 0 && x - 1 < n ? rec[0] : 0.0;
            cur_u[j + 1] = u_or_zero(x, n, u);
        } else if (j == W - 1 - d) { // record: (u, v) of x, then of x + 1
            const double *rec = se + 4 * H + 4 * (t - lo);
            if (inside) {
                u = rec[0];
                v = rec[1];
            }
            cur_u[j + 2] = x + 1 < n && x + 1 >= 0 ? rec[2] : 0.0;
            cur_u[j + 1] = u_or_zero(x, n, u);
        }
        __syncthreads();
        if (dj >= d) {
            if (inside) {
                double un, vn;
                vstring_point_step(cur_u[j], u, cur_u[j + 2], v, &un, &vn);
                u = un;
                v = vn;
                leave(t + 1, j, W, H, mid, steps, u, v, edges, mine, y2, x);
            }
            next_u[j + 1] = u_or_zero(x, n, u);
        }
        double *swap = cur_u;
        cur_u = next_u;
        next_u = swap;
    }
    // Upper half: level t + 1 loses a point on each side; everything it needs is here.
    for (; t < hi; t++) {
        const int d = t + 1 - mid;
        __syncthreads();
        if (dj >= d) {
            if (inside) {
                double un, vn;
                vstring_point_step(cur_u[j], u, cur_u[j + 2], v, &un, &vn);
                u = un;
                v = vn;
                leave(t + 1, j, W, H, mid, steps, u, v, edges, mine, y2, x);
            }
            next_u[j + 1] = u_or_zero(x, n, u);
        }
        double *swap = cur_u;
        cur_u = next_u;
        next_u = swap;
    }
}

extern "C" int lab05_tile_row(lab05_variant variant, int n, int steps, int row, int width,
                              int height, double *d_y, double *d_edges, lk_error *err)
{
    const long tiles = lab05_tiles_in_row(n, row, width, height);
    if (tiles == 0)
        return 0;
    const size_t shared = (2 * (size_t)(width + 2) + 8 * (size_t)height) * sizeof(double);
    LK_CUDA_TRY(err, cudaFuncSetAttribute(tile_row_kernel,
                                          cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          (int)shared));
    tile_row_kernel<<<(unsigned)tiles, width, shared>>>(n, steps, row, width, height, d_y,
                                                         d_edges);
    LK_LAUNCH_TRY(err);
    return 0;
}

// ---- Stretch model: the Brusselator, temporal blocking over row bands ------------------
//
// One block per band of R grid rows [r0, r0 + R). It loads the rows [r0 - T, r0 + R + T) of
// the state, clipped to the grid, into shared memory, computes level s = 1 .. T on the rows
// [r0 - (T - s), r0 + R + (T - s)) (clipped: at the border the reflection reads inside the
// grid, which the band holds), two buffers by parity and one barrier per level, and writes
// level T of its own rows to d_out. Global memory sees R + 2T rows read and R rows written
// per T steps; the price is the halo rows computed twice (by this block and its
// neighbour) and a band that must fit in shared memory: 2 (R + 2T) rows of 16 m bytes.

// A band fills most of shared memory, so an SM holds one block: the most threads a block may
// have, for warps enough to hide the shared-memory latency of each level.
#define BRUSS_THREADS 1024

static __global__ void bruss_band_kernel(int m, int T, int R, const double *__restrict__ d_in,
                                         double *__restrict__ d_out)
{
    extern __shared__ double2 band[];
    const int r0 = blockIdx.x * R;
    const int lo = max(0, r0 - T), hi = min(m, r0 + R + T);
    const int held = (hi - lo) * m; // fits shared memory, so an int
    double2 *cur = band, *next = band + held;
    const double2 *in2 = (const double2 *)d_in;
    double2 *out2 = (double2 *)d_out;
    // Asynchronous copies, all in flight at once: a load and a store per pair would wait out
    // the memory's latency once per pass of the block (6 passes at m = 500, 12 rows held).
    for (int q = threadIdx.x; q < held; q += blockDim.x)
        __pipeline_memcpy_async(cur + q, in2 + (long)lo * m + q, sizeof(double2));
    __pipeline_commit();
    __pipeline_wait_prior(0);
    __syncthreads();
    const double h = bruss_h(m), c = bruss_c(m);
    for (int s = 1; s <= T; s++) {
        const int a = max(0, r0 - (T - s)), b = min(m, r0 + R + (T - s));
        const int count = (b - a) * m;
        for (int q = threadIdx.x; q < count; q += blockDim.x) {
            const int k = a + q / m, j = q % m, row = (k - lo) * m;
            const double2 me = cur[row + j];
            const double2 nn = cur[(bruss_reflect(k - 1, m) - lo) * m + j];
            const double2 ss = cur[(bruss_reflect(k + 1, m) - lo) * m + j];
            const double2 ww = cur[row + bruss_reflect(j - 1, m)];
            const double2 ee = cur[row + bruss_reflect(j + 1, m)];
            double2 r;
            bruss_point_step(h, c, me.x, me.y, &nn.x, &ss.x, &ww.x, &ee.x, &r.x, &r.y);
            if (s == T) // rows a..b are the band's own now
                out2[(long)k * m + j] = r;
            else
                next[row + j] = r;
        }
        __syncthreads();
        double2 *swap = cur;
        cur = next;
        next = swap;
    }
}

// One step, one thread per point, a grid row per blockIdx.y: what a band of one step comes
// to without the detour through shared memory.
#define BRUSS_POINT_THREADS 256

static __global__ void bruss_point_kernel(int m, const double *__restrict__ d_in,
                                          double *__restrict__ d_out)
{
    const int k = blockIdx.y, j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= m)
        return;
    const double2 *in2 = (const double2 *)d_in;
    const long row = (long)k * m;
    const double2 me = in2[row + j];
    const double2 nn = in2[(long)bruss_reflect(k - 1, m) * m + j];
    const double2 ss = in2[(long)bruss_reflect(k + 1, m) * m + j];
    const double2 ww = in2[row + bruss_reflect(j - 1, m)];
    const double2 ee = in2[row + bruss_reflect(j + 1, m)];
    double2 r;
    bruss_point_step(bruss_h(m), bruss_c(m), me.x, me.y, &nn.x, &ss.x, &ww.x, &ee.x,
                        &r.x, &r.y);
    ((double2 *)d_out)[row + j] = r;
}

extern "C" int lab05_bruss_launch(int m, int steps, int rows, const double *d_in,
                                  double *d_out, lk_error *err)
{
    if (steps <= 0)
        return 0;
    if (rows < 1 || m < BRUSS_MIN_M)
        return lk_fail(err, "lab05_bruss_launch: %d rows per band of a grid of side %d: both "
                            "must be >= 1 (m >= 2)", rows, m);
    // One step per launch is what is left when shared memory cannot hold a row with two halo
    // rows on each side (the given tile lowers H to 1 then, m = 2048 on 227 KB): no level is
    // reused, and a band would only cut occupancy. The plain step streams at full bandwidth.
    if (steps == 1) {
        const dim3 grid((unsigned)((m + BRUSS_POINT_THREADS - 1) / BRUSS_POINT_THREADS),
                        (unsigned)m);
        bruss_point_kernel<<<grid, BRUSS_POINT_THREADS>>>(m, d_in, d_out);
        LK_LAUNCH_TRY(err);
        return 0;
    }
    const long held_rows = (long)rows + 2L * steps < m ? (long)rows + 2L * steps : m;
    const size_t shared = 2 * (size_t)held_rows * (size_t)m * 2 * sizeof(double);
    int dev = 0, limit = 0;
    LK_CUDA_TRY(err, cudaGetDevice(&dev));
    LK_CUDA_TRY(err, cudaDeviceGetAttribute(&limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    if (shared > (size_t)limit)
        return lk_fail(err, "lab05_bruss_launch: a band of %d rows and %d steps at m = %d holds "
                            "2 x %ld rows of %d doubles, %zu bytes of shared memory; this GPU "
                            "allows %d per block: use fewer rows or steps (--tile 0xH lets the "
                            "given code choose)", rows, steps, m, held_rows, 2 * m, shared,
                       limit);
    LK_CUDA_TRY(err, cudaFuncSetAttribute(bruss_band_kernel,
                                          cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          (int)shared));
    const unsigned blocks = (unsigned)((m + rows - 1) / rows);
    bruss_band_kernel<<<blocks, BRUSS_THREADS, shared>>>(m, steps, rows, d_in, d_out);
    LK_LAUNCH_TRY(err);
    return 0;
}
