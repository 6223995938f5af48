/* Lab 06: reductions. The file you edit: the TODOs in order, each explained in README.md
   ("Tasks"); the contract is lab.h. */
#include <math.h>

#include <cuda_runtime.h>

#include "lab.h"
#include "labkit/cuda_check.h"

/* TODO 1: max, count and bounding box in one pass (README "Tasks" 1). */
extern "C" int lab06_stats(const double *d_x, int rows, int cols, double threshold,
                           lab06_field_stats *d_stats, lk_error *err)
{
    return lk_fail(err, "TODO 1 in kernels.cu: lab06_stats (max, count, bounding box) is not "
                        "written yet");
}

/* TODOs 2-6: the sum, one variant each (README "The ladder", "Tasks" 2-6):
   TODO 2 tree, TODO 3 shuffle, TODO 4 gridstride, TODO 5 singlepass, TODO 6 atomic. */
extern "C" int lab06_sum(lab06_variant variant, const double *d_x, size_t n, double *d_work,
                         unsigned int *d_counter, double *d_sum, lk_error *err)
{
    static const char *const names[LAB06_NVARIANTS] = {"tree", "shuffle", "gridstride",
                                                       "singlepass", "atomic"};
    return lk_fail(err, "TODO %d in kernels.cu: lab06_sum, variant %s, is not written yet",
                   (int)variant + 2,
                   (int)variant >= 0 && (int)variant < LAB06_NVARIANTS ? names[variant] : "?");
}

/* TODO 7: Lagrange interpolation, per-point reductions (README "Lagrange interpolation"). */
extern "C" int lab06_lagrange(const double *d_x, const double *d_y, int n1, const double *d_xs,
                              double *d_ys, int S, lk_error *err)
{
    return lk_fail(err, "TODO 7 in kernels.cu: lab06_lagrange is not written yet");
}
