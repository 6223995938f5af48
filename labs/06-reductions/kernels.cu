/* Lab 06: YOUR FILE. The reduction ladder for the sum of a field, one pass for its max,
   count and bounding box, and Lagrange interpolation as per-point reductions. The contract
   is lab.h; README.md walks through the tasks. Each function below compiles and runs, and
   tells the tests it is not written yet: replace its body.

   Rules of this file: launch work only (kernels, cudaMemsetAsync); check every launch with
   LK_LAUNCH_TRY(err) and every runtime call with LK_CUDA_TRY(err, call); keep block sizes
   a multiple of 32 (warp shuffles assume whole warps). */
#include <math.h>

#include <cuda_runtime.h>

#include "lab.h"
#include "labkit/cuda_check.h"

/* TODO 1: max, count of values above the threshold, bounding box of their cells, in one
   pass (grid-stride loop, warp shuffles, then one atomic per warp or block). These are
   exact in any order, so atomics are fine: atomicMin/atomicMax on ints, atomicAdd on the
   count, and for the max of doubles an order-preserving map to unsigned long long (NaN
   above everything: the max of a field with a NaN is NaN). Initialise *d_stats first. */
extern "C" int lab06_stats(const double *d_x, int rows, int cols, double threshold,
                           lab06_field_stats *d_stats, lk_error *err)
{
    return lk_fail(err, "TODO 1 in kernels.cu: lab06_stats (max, count, bounding box) is not "
                        "written yet");
}

/* TODO 2 (tree): a kernel where each block loads one value per thread into shared memory
   (0.0 past the end) and adds them in a tree: stride blockDim/2, /4, ... 1, with
   __syncthreads() between levels; thread 0 writes the block's partial sum. Launch it pass
   after pass, partial sums into d_work, until one block is left: it writes *d_sum.

   TODO 3 (shuffle): the same passes, but inside a block: __shfl_down_sync within each warp,
   one shared slot per warp, and the first warp adds the slots.

   TODO 4 (gridstride): a grid just large enough to fill the GPU (cudaDevAttrMultiProcessorCount
   x blocks per SM); each thread adds many values (i += gridDim.x * blockDim.x), wide loads
   (double2) and several accumulators; one partial per block into d_work; a second kernel of
   one block adds the partials into *d_sum.

   TODO 5 (singlepass): as gridstride in one kernel: each block writes its partial,
   __threadfence(), takes a ticket with atomicAdd(d_counter, 1); the block with the last
   ticket adds all partials in a fixed order, writes *d_sum, and sets *d_counter back to 0.

   TODO 6 (atomic): zero *d_sum (cudaMemsetAsync), then each block atomicAdd's its partial.
   Measure how many bits change from run to run (README, question 3).

   The order of the additions of the first four must depend only on n and the device:
   the tests run each twice and compare the bits. */
extern "C" int lab06_sum(lab06_variant variant, const double *d_x, size_t n, double *d_work,
                         unsigned int *d_counter, double *d_sum, lk_error *err)
{
    static const char *const names[LAB06_NVARIANTS] = {"tree", "shuffle", "gridstride",
                                                       "singlepass", "atomic"};
    return lk_fail(err, "TODO %d in kernels.cu: lab06_sum, variant %s, is not written yet",
                   (int)variant + 2,
                   (int)variant >= 0 && (int)variant < LAB06_NVARIANTS ? names[variant] : "?");
}

/* TODO 7: Lagrange interpolation. For each point s, ys[s] = sum over j of y_j L_j(xs_s),
   L_j = product over i != j of (xs_s - x_i) / (x_j - x_i) in the order i = 0..n (a product
   reduction), then the sum over j (a sum reduction, any order). The thesis gives each point
   a 32 x 32 block; one warp per point (lanes over j, products in registers, a shuffle sum)
   is simpler. Work for n1 = 1 (L_0 = 1) and for S not a multiple of anything. */
extern "C" int lab06_lagrange(const double *d_x, const double *d_y, int n1, const double *d_xs,
                              double *d_ys, int S, lk_error *err)
{
    return lk_fail(err, "TODO 7 in kernels.cu: lab06_lagrange is not written yet");
}
