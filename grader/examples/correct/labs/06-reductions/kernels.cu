/* Lab 06: the reduction ladder, the field's stats and Lagrange interpolation.

   Sum: the passes of tree and shuffle let each thread add two values while loading (a block
   of 256 threads folds 512 values per pass); their in-block trees are a shared-memory tree
   and a butterfly of __shfl_xor_sync. The grid-stride rungs run one block of 256 threads
   per resident slot of the device, four double2 loads in flight per thread, two
   accumulators. Every deterministic rung's order depends only on n and the device.
   Stats: blocks take segments of rows (strided over the grid), threads the columns of a
   segment, so the bounding box needs no division per value; shared atomics in the block,
   then one global atomic each.
   Lagrange: one block of 64 threads per point, threads over j. */
#include <math.h>

#include <cuda_runtime.h>

#include "lab.h"
#include "labkit/cuda_check.h"

#define THREADS 256
#define ALL_LANES 0xffffffffu

/* ---- in-block sums, the same tree for every rung -------------------------------------- */

__device__ static double butterfly(double v)
{
    for (int lanes = 16; lanes >= 1; lanes /= 2)
        v += __shfl_xor_sync(ALL_LANES, v, lanes);
    return v; /* every lane holds the warp's sum */
}

/* Sum over a block of blockDim.x threads (a multiple of 32): every thread gets it. All
   threads must call it; @p slots has blockDim.x / 32 doubles of shared memory. */
__device__ static double block_total(double v, double *slots)
{
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
    v = butterfly(v);
    if (lane == 0)
        slots[warp] = v;
    __syncthreads();
    v = lane < warps ? slots[lane] : 0.0;
    v = butterfly(v);
    __syncthreads(); /* slots may be reused by the caller */
    return v;
}

/* ---- rungs 1 and 2: a pass per level, two values per thread on load ------------------- */

__global__ void fold_tree(const double *__restrict__ in, size_t n, double *__restrict__ out)
{
    __shared__ double s[THREADS];
    const size_t i = (size_t)blockIdx.x * 2 * THREADS + threadIdx.x;
    const double a = i < n ? in[i] : 0.0, b = i + THREADS < n ? in[i + THREADS] : 0.0;
    s[threadIdx.x] = a + b;
    __syncthreads();
    for (int half = THREADS / 2; half >= 1; half /= 2) {
        if ((int)threadIdx.x < half)
            s[threadIdx.x] += s[threadIdx.x + half];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        out[blockIdx.x] = s[0];
}

__global__ void fold_shuffle(const double *__restrict__ in, size_t n, double *__restrict__ out)
{
    __shared__ double slots[THREADS / 32];
    const size_t i = (size_t)blockIdx.x * 2 * THREADS + threadIdx.x;
    const double a = i < n ? in[i] : 0.0, b = i + THREADS < n ? in[i + THREADS] : 0.0;
    const double v = block_total(a + b, slots);
    if (threadIdx.x == 0)
        out[blockIdx.x] = v;
}

/* n values -> ceil(n / 512) partials, into d_work one after the other, until one is left. */
static int sum_in_passes(int shuffle, const double *d_x, size_t n, double *d_work,
                         double *d_sum, lk_error *err)
{
    const double *in = d_x;
    double *out = d_work;
    for (;;) {
        const size_t blocks = (n + 2 * THREADS - 1) / (2 * THREADS);
        double *dst = blocks == 1 ? d_sum : out;
        if (shuffle)
            fold_shuffle<<<(unsigned)blocks, THREADS>>>(in, n, dst);
        else
            fold_tree<<<(unsigned)blocks, THREADS>>>(in, n, dst);
        LK_LAUNCH_TRY(err);
        if (blocks == 1)
            return 0;
        in = out;
        out += blocks;
        n = blocks;
    }
}

/* ---- rungs 3, 4, 5: the grid strides over the values ---------------------------------- */

/* This thread's sum: double2 loads, four in flight, into two accumulators. */
__device__ static double strided_sum(const double *__restrict__ x, size_t n)
{
    const double2 *__restrict__ pairs = (const double2 *)x;
    const size_t npairs = n / 2, step = (size_t)gridDim.x * THREADS;
    size_t p = (size_t)blockIdx.x * THREADS + threadIdx.x;
    double even = 0.0, odd = 0.0;
    while (p + 3 * step < npairs) {
        double2 q[4];
#pragma unroll
        for (int k = 0; k < 4; k++)
            q[k] = pairs[p + k * step];
#pragma unroll
        for (int k = 0; k < 4; k++) {
            even += q[k].x;
            odd += q[k].y;
        }
        p += 4 * step;
    }
    for (; p < npairs; p += step) {
        even += pairs[p].x;
        odd += pairs[p].y;
    }
    /* The odd value out goes to the last thread of the grid. */
    if (n % 2 == 1 && blockIdx.x == gridDim.x - 1 && threadIdx.x == THREADS - 1)
        even += x[n - 1];
    return even + odd;
}

__global__ void strided_partials(const double *__restrict__ x, size_t n,
                                 double *__restrict__ partial)
{
    __shared__ double slots[THREADS / 32];
    const double v = block_total(strided_sum(x, n), slots);
    if (threadIdx.x == 0)
        partial[blockIdx.x] = v;
}

/* One block of 1024 threads adds @p count partials in a fixed order. */
__global__ void add_partials(const double *__restrict__ partial, int count, double *sum)
{
    __shared__ double slots[32];
    double v = 0.0;
    for (int i = threadIdx.x; i < count; i += blockDim.x)
        v += partial[i];
    v = block_total(v, slots);
    if (threadIdx.x == 0)
        *sum = v;
}

__global__ void ticketed_sum(const double *__restrict__ x, size_t n, double *partial,
                             unsigned int *counter, double *sum)
{
    __shared__ double slots[THREADS / 32];
    __shared__ unsigned int ticket;
    const double v = block_total(strided_sum(x, n), slots);
    if (threadIdx.x == 0) {
        partial[blockIdx.x] = v;
        __threadfence(); /* the partial is visible before the ticket is taken */
        ticket = atomicAdd(counter, 1u);
    }
    __syncthreads();
    if (ticket != gridDim.x - 1)
        return; /* the whole block leaves together: no barrier follows for it */
    __threadfence();
    double t = 0.0;
    for (int i = threadIdx.x; i < (int)gridDim.x; i += THREADS)
        t += __ldcg(&partial[i]);
    t = block_total(t, slots);
    if (threadIdx.x == 0) {
        *sum = t;
        *counter = 0;
    }
}

__global__ void atomic_partials(const double *__restrict__ x, size_t n, double *sum)
{
    __shared__ double slots[THREADS / 32];
    const double v = block_total(strided_sum(x, n), slots);
    if (threadIdx.x == 0)
        atomicAdd(sum, v);
}

/* Blocks that are resident at once for the strided kernels (all three have the same
   resources), asked once; never more than one per 2048 values. */
static int strided_blocks(size_t n, lk_error *err)
{
    static int resident = 0;
    if (resident == 0) {
        int dev, sms, per_sm = 0;
        LK_CUDA_TRY(err, cudaGetDevice(&dev));
        LK_CUDA_TRY(err, cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
        LK_CUDA_TRY(err, cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                             &per_sm, (const void *)ticketed_sum, THREADS, 0));
        resident = sms * (per_sm > 0 ? per_sm : 1);
    }
    const size_t wanted = (n + 2047) / 2048;
    return wanted < (size_t)resident ? (int)wanted : resident;
}

extern "C" int lab06_sum(lab06_variant variant, const double *d_x, size_t n, double *d_work,
                         unsigned int *d_counter, double *d_sum, lk_error *err)
{
    if (n == 0)
        return lk_fail(err, "lab06_sum: n is 0 (at least one value)");
    if (variant == LAB06_TREE || variant == LAB06_SHUFFLE)
        return sum_in_passes(variant == LAB06_SHUFFLE, d_x, n, d_work, d_sum, err);
    const int blocks = strided_blocks(n, err);
    if (blocks <= 0)
        return -1;
    if (variant == LAB06_GRIDSTRIDE) {
        strided_partials<<<blocks, THREADS>>>(d_x, n, d_work);
        LK_LAUNCH_TRY(err);
        add_partials<<<1, 1024>>>(d_work, blocks, d_sum);
        LK_LAUNCH_TRY(err);
        return 0;
    }
    if (variant == LAB06_SINGLEPASS) {
        ticketed_sum<<<blocks, THREADS>>>(d_x, n, d_work, d_counter, d_sum);
        LK_LAUNCH_TRY(err);
        return 0;
    }
    if (variant == LAB06_ATOMIC) {
        LK_CUDA_TRY(err, cudaMemsetAsync(d_sum, 0, sizeof *d_sum));
        atomic_partials<<<blocks, THREADS>>>(d_x, n, d_sum);
        LK_LAUNCH_TRY(err);
        return 0;
    }
    return lk_fail(err, "lab06_sum: unknown variant %d", (int)variant);
}

/* ---- max, count, bounding box ---------------------------------------------------------- */

/* An unsigned key per double in the order of the doubles (negative ones reversed), with
   every NaN on top: the largest key is the max, NaN when there is one. */
#define NAN_KEY 0xffffffffffffffffull

__device__ static unsigned long long order_key(double v)
{
    if (isnan(v))
        return NAN_KEY;
    const unsigned long long bits = (unsigned long long)__double_as_longlong(v);
    return (bits & 0x8000000000000000ull) ? ~bits : bits ^ 0x8000000000000000ull;
}

__device__ static double key_to_double(unsigned long long key)
{
    if (key == NAN_KEY)
        return nan("");
    const unsigned long long bits =
        (key & 0x8000000000000000ull) ? key ^ 0x8000000000000000ull : ~key;
    return __longlong_as_double((long long)bits);
}

/* Columns of a row one block scans at a time. */
#define SEGMENT (16 * THREADS)

/* The accumulators of stats_rows, kept in d_stats->max as a key while the kernel runs. */
__global__ void stats_start(lab06_field_stats *st, int rows, int cols)
{
    *(unsigned long long *)&st->max = 0;
    st->count = 0;
    st->row_min = rows;
    st->row_max = -1;
    st->col_min = cols;
    st->col_max = -1;
}

__global__ void stats_rows(const double *__restrict__ x, int rows, int cols, double threshold,
                           lab06_field_stats *st)
{
    __shared__ unsigned long long key_s, count_s;
    __shared__ int r0_s, r1_s, c0_s, c1_s;
    if (threadIdx.x == 0) {
        key_s = 0;
        count_s = 0;
        r0_s = rows;
        r1_s = -1;
        c0_s = cols;
        c1_s = -1;
    }
    __syncthreads();
    unsigned long long key = 0, count = 0;
    int r0 = rows, r1 = -1, c0 = cols, c1 = -1;
    /* Segments of SEGMENT columns of one row, strided over the grid: one division per
       segment, none per value. */
    const int per_row = (cols + SEGMENT - 1) / SEGMENT;
    const long segments = (long)rows * per_row;
    for (long g = blockIdx.x; g < segments; g += gridDim.x) {
        const int r = (int)(g / per_row), first = (int)(g % per_row) * SEGMENT;
        const int end = min(cols, first + SEGMENT);
        const double *line = x + (size_t)r * cols;
        int above = 0;
        for (int c = first + threadIdx.x; c < end; c += blockDim.x) {
            const double v = line[c];
            const unsigned long long k = order_key(v);
            key = k > key ? k : key;
            if (v > threshold) {
                count++;
                above = 1;
                c0 = min(c0, c);
                c1 = max(c1, c);
            }
        }
        if (above) {
            r0 = min(r0, r);
            r1 = max(r1, r);
        }
    }
    atomicMax(&key_s, key);
    if (count) {
        atomicAdd(&count_s, count);
        atomicMin(&r0_s, r0);
        atomicMax(&r1_s, r1);
        atomicMin(&c0_s, c0);
        atomicMax(&c1_s, c1);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        atomicMax((unsigned long long *)&st->max, key_s);
        if (count_s) {
            atomicAdd(&st->count, count_s);
            atomicMin(&st->row_min, r0_s);
            atomicMax(&st->row_max, r1_s);
            atomicMin(&st->col_min, c0_s);
            atomicMax(&st->col_max, c1_s);
        }
    }
}

__global__ void stats_finish(lab06_field_stats *st)
{
    st->max = key_to_double(*(unsigned long long *)&st->max);
}

extern "C" int lab06_stats(const double *d_x, int rows, int cols, double threshold,
                           lab06_field_stats *d_stats, lk_error *err)
{
    if (rows < 1 || cols < 1)
        return lk_fail(err, "lab06_stats: a %d x %d field (at least 1 x 1)", rows, cols);
    const long segments = (long)rows * ((cols + SEGMENT - 1) / SEGMENT);
    const int blocks = segments < 4096 ? (int)segments : 4096;
    stats_start<<<1, 1>>>(d_stats, rows, cols);
    LK_LAUNCH_TRY(err);
    stats_rows<<<blocks, THREADS>>>(d_x, rows, cols, threshold, d_stats);
    LK_LAUNCH_TRY(err);
    stats_finish<<<1, 1>>>(d_stats);
    LK_LAUNCH_TRY(err);
    return 0;
}

/* ---- Lagrange: a block per point ------------------------------------------------------- */

#define LAGRANGE_THREADS 64

/* Thread t forms the terms y_j L_j(xs_s) of j = t, t + 64, ...: each product over i in the
   serial order, so it is serial's to the bit; the block adds the terms. */
__global__ void lagrange_point(const double *__restrict__ x, const double *__restrict__ y,
                               int n1, const double *__restrict__ xs, double *__restrict__ ys)
{
    extern __shared__ double node[];
    __shared__ double slots[LAGRANGE_THREADS / 32];
    for (int i = threadIdx.x; i < n1; i += LAGRANGE_THREADS)
        node[i] = x[i];
    __syncthreads();
    const double at = xs[blockIdx.x];
    double terms = 0.0;
    for (int j = threadIdx.x; j < n1; j += LAGRANGE_THREADS) {
        const double xj = node[j];
        double basis = 1.0;
        for (int i = 0; i < n1; i++)
            if (i != j)
                basis *= (at - node[i]) / (xj - node[i]);
        terms += y[j] * basis;
    }
    const double p = block_total(terms, slots);
    if (threadIdx.x == 0)
        ys[blockIdx.x] = p;
}

extern "C" int lab06_lagrange(const double *d_x, const double *d_y, int n1, const double *d_xs,
                              double *d_ys, int S, lk_error *err)
{
    if (n1 < 1 || n1 > 4096)
        return lk_fail(err, "lab06_lagrange: %d nodes (1 to 4096)", n1);
    if (S <= 0)
        return 0;
    lagrange_point<<<(unsigned)S, LAGRANGE_THREADS, (size_t)n1 * sizeof(double)>>>(
        d_x, d_y, n1, d_xs, d_ys);
    LK_LAUNCH_TRY(err);
    return 0;
}
