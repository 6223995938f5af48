/* Lab 06 solution: the reduction ladder for the sum, one pass of atomics for max, count and
   bounding box, and one warp per point for Lagrange interpolation.

   Sum, deterministic rungs: the order of the additions depends only on n and on the launch
   shape, which depends only on n and the device, so a call gives the same bits every time.
   The fast rungs (gridstride, singlepass) read double2 (16 bytes) per load with four
   independent accumulators per thread, on a grid that just fills the device: about a
   thousand values per thread at 2^28, few enough for the tolerance's sqrt(n) run length. */
#include <math.h>

#include <cuda_runtime.h>

#include "lab.h"
#include "labkit/cuda_check.h"

#define BLOCK 256
#define FULL_MASK 0xffffffffu

/* ---- building blocks ------------------------------------------------------------------ */

__device__ static double warp_sum(double v)
{
    for (int offset = 16; offset > 0; offset >>= 1)
        v += __shfl_down_sync(FULL_MASK, v, offset);
    return v;
}

/* Sum over the block (blockDim.x a multiple of 32, at most 1024); the result is valid in
   thread 0. Every thread of the block must call it. */
__device__ static double block_sum(double v)
{
    __shared__ double warp_sums[32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    __syncthreads(); /* a previous call may still be reading warp_sums */
    v = warp_sum(v);
    if (lane == 0)
        warp_sums[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < (int)(blockDim.x >> 5) ? warp_sums[lane] : 0.0;
        v = warp_sum(v);
    }
    return v;
}

/* This thread's share of a grid-stride sum: eight double2 loads in flight per iteration
   (128 bytes a thread), streamed past the caches (__ldcs: each value is read once), four
   accumulators so that the additions do not wait on each other. */
#define LOADS 8
__device__ static double thread_sum(const double *__restrict__ x, size_t n)
{
    const double2 *__restrict__ x2 = (const double2 *)x;
    const size_t n2 = n / 2, stride = (size_t)gridDim.x * blockDim.x;
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    double acc[4] = {0.0, 0.0, 0.0, 0.0};
    for (; i + (LOADS - 1) * stride < n2; i += LOADS * stride) {
        double2 p[LOADS];
#pragma unroll
        for (int u = 0; u < LOADS; u++)
            p[u] = __ldcs(&x2[i + u * stride]);
#pragma unroll
        for (int u = 0; u < LOADS; u++) {
            acc[2 * u % 4] += p[u].x;
            acc[(2 * u + 1) % 4] += p[u].y;
        }
    }
    for (; i < n2; i += stride) {
        const double2 p = x2[i];
        acc[0] += p.x;
        acc[1] += p.y;
    }
    if (n % 2 == 1 && blockIdx.x == 0 && threadIdx.x == 0)
        acc[0] += x[n - 1];
    return (acc[0] + acc[1]) + (acc[2] + acc[3]);
}

/* Blocks of a grid-stride launch of @p kernel: as many as fit on the GPU at once (the
   occupancy calculator, asked once per kernel), no more than the data needs (8 values a
   thread). One wave: no block waits for another to finish. */
static int grid_blocks(const void *kernel, size_t n, lk_error *err)
{
    static struct {
        const void *kernel;
        int blocks;
    } known[8];
    int k = 0;
    while (k < 8 && known[k].kernel && known[k].kernel != kernel)
        k++;
    if (k == 8)
        return lk_fail(err, "grid_blocks: more than 8 kernels");
    if (!known[k].kernel) {
        int dev, sms, per_sm;
        LK_CUDA_TRY(err, cudaGetDevice(&dev));
        LK_CUDA_TRY(err, cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
        LK_CUDA_TRY(err, cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, BLOCK, 0));
        known[k].blocks = sms * (per_sm > 0 ? per_sm : 1);
        known[k].kernel = kernel;
    }
    const size_t needed = (n + 8 * BLOCK - 1) / (8 * BLOCK);
    return (int)(needed < (size_t)known[k].blocks ? (needed > 0 ? needed : 1) : known[k].blocks);
}

/* ---- rungs 1 and 2: one value per thread, a pass per level ---------------------------- */

__global__ void tree_pass(const double *in, size_t n, double *out)
{
    __shared__ double s[BLOCK];
    const size_t i = (size_t)blockIdx.x * BLOCK + threadIdx.x;
    s[threadIdx.x] = i < n ? in[i] : 0.0;
    __syncthreads();
    /* Sequential addressing: active threads stay contiguous, whole warps retire. */
    for (int stride = BLOCK / 2; stride > 0; stride >>= 1) {
        if (threadIdx.x < stride)
            s[threadIdx.x] += s[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        out[blockIdx.x] = s[0];
}

__global__ void shuffle_pass(const double *in, size_t n, double *out)
{
    const size_t i = (size_t)blockIdx.x * BLOCK + threadIdx.x;
    const double v = block_sum(i < n ? in[i] : 0.0);
    if (threadIdx.x == 0)
        out[blockIdx.x] = v;
}

/* Pass after pass, n values become ceil(n / BLOCK) partial sums in d_work, until one is
   left, written to d_sum. */
static int sum_by_passes(int shuffle, const double *d_x, size_t n, double *d_work,
                         double *d_sum, lk_error *err)
{
    const double *in = d_x;
    double *out = d_work;
    for (;;) {
        const size_t blocks = (n + BLOCK - 1) / BLOCK;
        double *dst = blocks == 1 ? d_sum : out;
        if (shuffle)
            shuffle_pass<<<(unsigned)blocks, BLOCK>>>(in, n, dst);
        else
            tree_pass<<<(unsigned)blocks, BLOCK>>>(in, n, dst);
        LK_LAUNCH_TRY(err);
        if (blocks == 1)
            return 0;
        in = out;
        out += blocks;
        n = blocks;
    }
}

/* ---- rungs 3, 4, 5: several values per thread ----------------------------------------- */

__global__ void gridstride_partials(const double *x, size_t n, double *partial)
{
    const double v = block_sum(thread_sum(x, n));
    if (threadIdx.x == 0)
        partial[blockIdx.x] = v;
}

__global__ void sum_partials(const double *partial, int count, double *sum)
{
    double v = 0.0;
    for (int i = threadIdx.x; i < count; i += blockDim.x)
        v += partial[i];
    v = block_sum(v);
    if (threadIdx.x == 0)
        *sum = v;
}

__global__ void singlepass_sum(const double *x, size_t n, double *partial,
                               unsigned int *counter, double *sum)
{
    __shared__ int last;
    const double v = block_sum(thread_sum(x, n));
    if (threadIdx.x == 0) {
        partial[blockIdx.x] = v;
        /* Make the partial visible to every block before taking a ticket. */
        __threadfence();
        last = atomicAdd(counter, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!last)
        return;
    /* The last block adds the partials in a fixed order: the result is reproducible. */
    double t = 0.0;
    for (int i = threadIdx.x; i < (int)gridDim.x; i += blockDim.x)
        t += __ldcg(&partial[i]);
    t = block_sum(t);
    if (threadIdx.x == 0) {
        *sum = t;
        *counter = 0; /* ready for the next call */
    }
}

__global__ void atomic_sum(const double *x, size_t n, double *sum)
{
    const double v = block_sum(thread_sum(x, n));
    if (threadIdx.x == 0)
        atomicAdd(sum, v);
}

extern "C" int lab06_sum(lab06_variant variant, const double *d_x, size_t n, double *d_work,
                         unsigned int *d_counter, double *d_sum, lk_error *err)
{
    if (variant == LAB06_TREE || variant == LAB06_SHUFFLE)
        return sum_by_passes(variant == LAB06_SHUFFLE, d_x, n, d_work, d_sum, err);
    const void *kernel = variant == LAB06_GRIDSTRIDE   ? (const void *)gridstride_partials
                         : variant == LAB06_SINGLEPASS ? (const void *)singlepass_sum
                                                       : (const void *)atomic_sum;
    const int blocks = grid_blocks(kernel, n, err);
    if (blocks <= 0)
        return -1;
    switch (variant) {
    case LAB06_GRIDSTRIDE:
        gridstride_partials<<<blocks, BLOCK>>>(d_x, n, d_work);
        LK_LAUNCH_TRY(err);
        sum_partials<<<1, 1024>>>(d_work, blocks, d_sum);
        LK_LAUNCH_TRY(err);
        return 0;
    case LAB06_SINGLEPASS:
        singlepass_sum<<<blocks, BLOCK>>>(d_x, n, d_work, d_counter, d_sum);
        LK_LAUNCH_TRY(err);
        return 0;
    case LAB06_ATOMIC:
        LK_CUDA_TRY(err, cudaMemsetAsync(d_sum, 0, sizeof(double)));
        atomic_sum<<<blocks, BLOCK>>>(d_x, n, d_sum);
        LK_LAUNCH_TRY(err);
        return 0;
    default:
        return lk_fail(err, "lab06_sum: unknown variant %d", (int)variant);
    }
}

/* ---- max, count, bounding box: exact in any order, so atomics are fine ------------------ */

/* Doubles as unsigned keys in the same order, NaN above everything: max of keys = max. */
__device__ static unsigned long long max_key(double v)
{
    if (isnan(v))
        return 0xfff8000000000000ull; /* above the key of +inf, 0xfff0... */
    const unsigned long long b = (unsigned long long)__double_as_longlong(v);
    return b >> 63 ? ~b : b | 0x8000000000000000ull;
}

__device__ static double key_value(unsigned long long k)
{
    if (k == 0xfff8000000000000ull)
        return __longlong_as_double(0x7ff8000000000000ll);
    return __longlong_as_double((long long)(k >> 63 ? k & 0x7fffffffffffffffull : ~k));
}

/* While the kernel runs, stats->max holds a key (max_key), not a double. */
__global__ void stats_init(lab06_field_stats *stats, int rows, int cols)
{
    *(unsigned long long *)&stats->max = 0;
    stats->count = 0;
    stats->row_min = rows;
    stats->row_max = -1;
    stats->col_min = cols;
    stats->col_max = -1;
}

__global__ void stats_pass(const double *x, int rows, int cols, double threshold,
                           lab06_field_stats *stats)
{
    const size_t n = (size_t)rows * cols, stride = (size_t)gridDim.x * blockDim.x;
    unsigned long long key = 0, count = 0;
    int r0 = rows, r1 = -1, c0 = cols, c1 = -1;
    for (size_t k = (size_t)blockIdx.x * blockDim.x + threadIdx.x; k < n; k += stride) {
        const double v = x[k];
        const unsigned long long kv = max_key(v);
        key = kv > key ? kv : key;
        if (v > threshold) {
            const int i = (int)(k / cols), j = (int)(k % cols); /* only for the few above */
            count++;
            r0 = min(r0, i);
            r1 = max(r1, i);
            c0 = min(c0, j);
            c1 = max(c1, j);
        }
    }
    for (int offset = 16; offset > 0; offset >>= 1) {
        const unsigned long long k2 = __shfl_down_sync(FULL_MASK, key, offset);
        key = k2 > key ? k2 : key;
        count += __shfl_down_sync(FULL_MASK, count, offset);
        r0 = min(r0, __shfl_down_sync(FULL_MASK, r0, offset));
        r1 = max(r1, __shfl_down_sync(FULL_MASK, r1, offset));
        c0 = min(c0, __shfl_down_sync(FULL_MASK, c0, offset));
        c1 = max(c1, __shfl_down_sync(FULL_MASK, c1, offset));
    }
    if ((threadIdx.x & 31) == 0) {
        atomicMax((unsigned long long *)&stats->max, key);
        if (count) {
            atomicAdd(&stats->count, count);
            atomicMin(&stats->row_min, r0);
            atomicMax(&stats->row_max, r1);
            atomicMin(&stats->col_min, c0);
            atomicMax(&stats->col_max, c1);
        }
    }
}

__global__ void stats_finish(lab06_field_stats *stats)
{
    stats->max = key_value(*(unsigned long long *)&stats->max);
}

extern "C" int lab06_stats(const double *d_x, int rows, int cols, double threshold,
                           lab06_field_stats *d_stats, lk_error *err)
{
    const size_t n = (size_t)rows * cols;
    const int blocks = grid_blocks((const void *)stats_pass, n / 4 + 1, err);
    if (blocks <= 0)
        return -1;
    stats_init<<<1, 1>>>(d_stats, rows, cols);
    LK_LAUNCH_TRY(err);
    stats_pass<<<blocks, BLOCK>>>(d_x, rows, cols, threshold, d_stats);
    LK_LAUNCH_TRY(err);
    stats_finish<<<1, 1>>>(d_stats);
    LK_LAUNCH_TRY(err);
    return 0;
}

/* ---- Lagrange: one warp per point ----------------------------------------------------- */

/* Lane l computes the basis values L_j for j = l, l + 32, ...: each a product over i in the
   serial order, in registers (the product reduction needs no communication); the warp then
   adds the lanes' sums with shuffles (the sum reduction). The nodes sit in shared memory:
   a warp reads the same x_i at once, a broadcast. */
__global__ void lagrange_warp(const double *x, const double *y, int n1, const double *xs,
                              double *ys, int S)
{
    extern __shared__ double nodes[];
    for (int k = threadIdx.x; k < n1; k += blockDim.x)
        nodes[k] = x[k];
    __syncthreads();
    const int s = (int)(((size_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5);
    const int lane = threadIdx.x & 31;
    if (s >= S)
        return;
    const double xv = xs[s];
    double acc = 0.0;
    for (int j = lane; j < n1; j += 32) {
        const double xj = nodes[j];
        double product = 1.0;
        for (int i = 0; i < n1; i++)
            if (i != j)
                product *= (xv - nodes[i]) / (xj - nodes[i]);
        acc += y[j] * product;
    }
    acc = warp_sum(acc);
    if (lane == 0)
        ys[s] = acc;
}

extern "C" int lab06_lagrange(const double *d_x, const double *d_y, int n1, const double *d_xs,
                              double *d_ys, int S, lk_error *err)
{
    const int points_per_block = BLOCK / 32;
    const unsigned blocks = (unsigned)((S + points_per_block - 1) / points_per_block);
    lagrange_warp<<<blocks, BLOCK, n1 * sizeof(double)>>>(d_x, d_y, n1, d_xs, d_ys, S);
    LK_LAUNCH_TRY(err);
    return 0;
}
