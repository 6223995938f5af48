// Lab 05: diamond tiling of the vibrating string; the honeycomb is not attempted.
//
// One block per diamond, thread j on point m + j of its middle, active at the levels
// mid - dj .. mid + dj (dj = min(j, W - 1 - j)). Each thread's life is three phases that
// are plain functions of its state (struct walker): `begin` fetches what it will need from
// global memory (row 0: its point of level 0; later rows: the one edge record it enters
// the diamond with, into registers, so the level loop never waits on global memory);
// `enter` puts an entering point and its outside neighbour into the level's shared buffer;
// `advance` steps an active point with vstring_point_step and sends out what leaves the
// tile (edge records, the points of level `steps`). One barrier per level between them;
// the shared u of a level alternates between two buffers by the level's parity.

#include "lab.h"
#include "labkit/cuda_check.h"

// One thread's view of its diamond and its point.
typedef struct walker {
    int j, W, H, n, steps;
    int mid;        // level of the diamond's middle
    int reach;      // dj: active at the levels mid - reach .. mid + reach
    long x;         // its point
    bool inside;    // 0 <= x < n
    double u, v;    // its point at the last level it computed
    double rec_out; // entering: u of the neighbour outside the diamond (x - 1 or x + 1)
    double rec_u, rec_v;
    size_t mine;    // its tile's first edge record (side 0, level mid)
} walker;

// Where walker w's tile's edges and its entering record live, and row 0's level 0.
LK_HD static inline void begin(walker *w, int row, long tile, const double *y,
                               const double *edges, double *level_u)
{
    const int W = w->W, H = w->H, j = w->j;
    w->mid = row * H;
    w->reach = j < W - 1 - j ? j : W - 1 - j;
    w->x = lab05_tile_left(row, tile, W, H) + j;
    w->inside = w->x >= 0 && w->x < w->n;
    w->u = w->v = w->rec_out = w->rec_u = w->rec_v = 0.0;
    w->mine = lab05_edge_at(w->n, row, tile, 0, 0, W, H);
    if (row == 0) { // level 0 is the middle: every point starts there
        if (w->inside) {
            w->u = y[2 * w->x];
            w->v = y[2 * w->x + 1];
        }
        level_u[j + 1] = w->u;
        return;
    }
    // Thread j enters at level mid - reach from level mid - reach - 1, which is level
    // H - 1 - reach of the row below: the left half from the right edge of the tile on the
    // left, the right half from the left edge of the tile on the right.
    const int level = w->mid - w->reach - 1;
    if (level >= w->steps)
        return; // it never enters
    const bool left_half = j == w->reach;
    const long writer = lab05_left_writer(row, tile) + (left_half ? 0 : 1);
    if (writer < 0 || writer >= lab05_tiles_in_row(w->n, row - 1, W, H))
        return; // beyond the string's ends: every point involved is outside
    const double *rec = edges + lab05_edge_at(w->n, row - 1, writer, left_half ? 1 : 0,
                                              H - 1 - w->reach, W, H);
    // Left half: (u, v) of x - 1, then of x. Right half: (u, v) of x, then of x + 1.
    const long out = left_half ? w->x - 1 : w->x + 1;
    w->rec_out = out >= 0 && out < w->n ? rec[left_half ? 0 : 2] : 0.0;
    if (w->inside) {
        w->rec_u = rec[left_half ? 2 : 0];
        w->rec_v = rec[left_half ? 3 : 1];
    }
}

// Level t + 1 of the bottom half gains the threads of reach mid - t - 1: they put their
// point of level t and the u just outside into level t's buffer.
LK_HD static inline void enter(walker *w, int t, double *level_u)
{
    if (t >= w->mid || w->reach != w->mid - t - 1)
        return;
    w->u = w->rec_u;
    w->v = w->rec_v;
    level_u[w->j + 1] = w->u;
    if (w->j == w->reach)
        level_u[w->j] = w->rec_out;
    else
        level_u[w->j + 2] = w->rec_out;
}

// Send out the point of level t if it leaves the tile: the edge records of the levels
// mid .. mid + H - 1 below `steps` (left edge: threads je and je + 1 at level mid + je;
// right edge: W - je - 2 and W - je - 1), and level `steps` into y.
LK_HD static inline void emit(const walker *w, int t, double *y, double *edges)
{
    if (!w->inside)
        return;
    const int je = t - w->mid;
    if (je >= 0 && je < w->H && t < w->steps) {
        const int at_left = w->j - je, at_right = w->j - (w->W - je - 2);
        double *left = edges + w->mine + 4 * (size_t)je;
        double *right = edges + w->mine + 4 * (size_t)w->H + 4 * (size_t)je;
        if (at_left == 0 || at_left == 1) {
            left[2 * at_left] = w->u;
            left[2 * at_left + 1] = w->v;
        }
        if (at_right == 0 || at_right == 1) {
            right[2 * at_right] = w->u;
            right[2 * at_right + 1] = w->v;
        }
    }
    if (t == w->steps) {
        y[2 * w->x] = w->u;
        y[2 * w->x + 1] = w->v;
    }
}

// Level t + 1 from level t's buffer, into level t + 1's, for the threads active there.
LK_HD static inline void advance(walker *w, int t, const double *below_u, double *level_u,
                                 double *y, double *edges)
{
    const int d = t + 1 - w->mid;
    if (w->reach < (d < 0 ? -d : d))
        return;
    if (w->inside) {
        double u_new, v_new;
        vstring_point_step(below_u[w->j], w->u, below_u[w->j + 2], w->v, &u_new, &v_new);
        w->u = u_new;
        w->v = v_new;
    }
    level_u[w->j + 1] = w->inside ? w->u : 0.0;
    emit(w, t + 1, y, edges);
}

// The levels a row computes: from its start (0 for row 0, else mid - H, where a diamond has
// no point) up to min(steps, mid + H - 1), the top tip.
LK_HD static inline int first_level(int row, int H) { return row == 0 ? 0 : row * H - H; }
LK_HD static inline int last_level(int row, int H, int steps)
{
    return row * H + H - 1 < steps ? row * H + H - 1 : steps;
}

static __global__ void __launch_bounds__(LAB05_MAX_WIDTH)
diamond_row(int n, int steps, int row, int W, int H, double *y, double *edges)
{
    extern __shared__ double level_u[]; // two buffers of W + 2: slot k is point m + k - 1
    walker w;
    w.j = threadIdx.x;
    w.W = W;
    w.H = H;
    w.n = n;
    w.steps = steps;
    const int lo = first_level(row, H), hi = last_level(row, H, steps);
    begin(&w, row, blockIdx.x, y, edges, level_u + (lo & 1) * (W + 2));
    if (row == 0)
        emit(&w, 0, y, edges);
    for (int t = lo; t < hi; t++) {
        double *below = level_u + (t & 1) * (W + 2), *above = level_u + (~t & 1) * (W + 2);
        enter(&w, t, below);
        __syncthreads();
        advance(&w, t, below, above, y, edges);
    }
}

extern "C" int lab05_tile_row(lab05_variant variant, int n, int steps, int row, int width,
                              int height, double *d_y, double *d_edges, lk_error *err)
{
    if (variant == LAB05_HONEYCOMB)
        return LAB05_NOT_ATTEMPTED;
    if (variant != LAB05_DIAMOND)
        return lk_fail(err, "lab05_tile_row: unknown variant %d", (int)variant);
    if (width < 2 || width > LAB05_MAX_WIDTH || width != 2 * height)
        return lk_fail(err, "lab05_tile_row: a diamond is W points wide and W/2 high, got "
                            "%dx%d", width, height);
    const long tiles = lab05_tiles_in_row(n, row, width, height);
    if (tiles == 0)
        return 0;
    const size_t shared = 2 * (size_t)(width + 2) * sizeof(double);
    diamond_row<<<(unsigned)tiles, width, shared>>>(n, steps, row, width, height, d_y, d_edges);
    LK_LAUNCH_TRY(err);
    return 0;
}
