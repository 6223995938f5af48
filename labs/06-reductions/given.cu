/* Lab 06, given (read-only): the reference the GPU output is judged against,
   the device buffers and copies around your functions (kernels.cu), and the baseline of
   `make bench`: CUB's DeviceReduce::Sum, the sum the CUDA toolkit ships. */
#include <math.h>
#include <string.h>

#include <cub/device/device_reduce.cuh>
#include <cuda_runtime_api.h>

#include "given.h"
#include "labkit/cuda_check.h"

extern "C" {

/* The rung of lab06_sum() of each entry of lab06_variants before cub. */
static const lab06_variant rungs[LAB06_NVARIANTS] = {LAB06_SINGLEPASS, LAB06_TREE,
                                                     LAB06_SHUFFLE, LAB06_GRIDSTRIDE,
                                                     LAB06_ATOMIC};

static int variant_index(const char *name)
{
    for (int v = 0; lab06_variants[v].name; v++)
        if (strcmp(name, lab06_variants[v].name) == 0)
            return v;
    return -1;
}

int lab06_check_variant(const char *variant, const reduce_input *in, int bench,
                        lk_error *err)
{
    const int lagrange_variant = strcmp(variant, "lagrange") == 0;
    if (in->lagrange && variant[0] && !lagrange_variant)
        return lk_fail(err, "--variant %s reduces fields, and this is a Lagrange dataset: "
                            "use --variant lagrange or leave --variant out", variant);
    if (in->lagrange && bench && !variant[0])
        return lk_fail(err, "--bench on a Lagrange dataset: add --variant lagrange");
    if (!in->lagrange && lagrange_variant)
        return lk_fail(err, "--variant lagrange interpolates, and this is a field: give a "
                            "Lagrange dataset (e.g. --gen runge:51x301:0) or another variant");
    return 0;
}

double lab06_reference(reduce_input *in)
{
    const double t0 = lk_wall_seconds();
    if (in->lagrange) {
        reduce_lagrange_barycentric(in->x, in->y, in->n1, in->xs, in->gold, in->bound, in->S);
        const double seconds = lk_wall_seconds() - t0;
        for (int s = 0; s < in->S; s++)
            in->bound[s] = lk_lagrange_bound(in->n1, in->bound[s]);
        in->have_reference = 1;
        return seconds;
    }
    double sum_abs;
    reduce_serial(in->field, in->rows, in->cols, in->threshold, in->gold, &sum_abs);
    for (int k = 0; k < REDUCE_NOUT; k++)
        in->bound[k] = 0.0;
    in->bound[LK_OUT_SUM] =
        reduce_sum_bound((size_t)in->rows * in->cols, sum_abs, in->gold[LK_OUT_SUM]);
    in->have_reference = 1;
    return lk_wall_seconds() - t0;
}

int lab06_serial(const reduce_input *in, int steps, double *out, lk_error *err)
{
    for (int s = 0; s < (steps > 1 ? steps : 1); s++) {
        if (in->lagrange)
            reduce_lagrange_naive(in->x, in->y, in->n1, in->xs, out, in->S);
        else
            reduce_serial(in->field, in->rows, in->cols, in->threshold, out, NULL);
    }
    return 0;
}

} /* extern "C" */

/* Device buffers of one run; every pointer starts NULL so that one cleanup frees them. */
typedef struct buffers {
    double *x, *work, *sum, *y, *xs, *ys;
    unsigned int *counter;
    lab06_field_stats *stats;
    void *cub_temp;
} buffers;

static void free_buffers(buffers *b)
{
    cudaFree(b->x);
    cudaFree(b->work);
    cudaFree(b->sum);
    cudaFree(b->y);
    cudaFree(b->xs);
    cudaFree(b->ys);
    cudaFree(b->counter);
    cudaFree(b->stats);
    cudaFree(b->cub_temp);
}

static int run_field(const reduce_input *in, int variant, int steps, double *out,
                     buffers *b, lk_error *err)
{
    const size_t n = (size_t)in->rows * in->cols;
    LK_CUDA_TRY(err, cudaMalloc(&b->x, n * sizeof(double)));
    LK_CUDA_TRY(err, cudaMalloc(&b->work, LAB06_WORK_DOUBLES(n) * sizeof(double)));
    LK_CUDA_TRY(err, cudaMalloc(&b->sum, sizeof(double)));
    LK_CUDA_TRY(err, cudaMalloc(&b->counter, sizeof(unsigned int)));
    LK_CUDA_TRY(err, cudaMalloc(&b->stats, sizeof(lab06_field_stats)));
    LK_CUDA_TRY(err, cudaMemcpy(b->x, in->field, n * sizeof(double), cudaMemcpyHostToDevice));
    LK_CUDA_TRY(err, cudaMemset(b->counter, 0, sizeof(unsigned int)));
    const int cub = strcmp(lab06_variants[variant].name, "cub") == 0;
    size_t cub_bytes = 0;
    if (cub) {
        LK_CUDA_TRY(err, cub::DeviceReduce::Sum(NULL, cub_bytes, b->x, b->sum, (long long)n));
        LK_CUDA_TRY(err, cudaMalloc(&b->cub_temp, cub_bytes ? cub_bytes : 1));
    }
    if (lab06_stats(b->x, in->rows, in->cols, in->threshold, b->stats, err) != 0)
        return -1;
    for (int s = 0; s <= steps; s++) {
        if (cub)
            LK_CUDA_TRY(err, cub::DeviceReduce::Sum(b->cub_temp, cub_bytes, b->x, b->sum,
                                                    (long long)n));
        else if (lab06_sum(rungs[variant], b->x, n, b->work, b->counter, b->sum, err) != 0)
            return -1;
    }
    lab06_field_stats st;
    LK_CUDA_TRY(err, cudaMemcpy(&out[LK_OUT_SUM], b->sum, sizeof(double), cudaMemcpyDeviceToHost));
    LK_CUDA_TRY(err, cudaMemcpy(&st, b->stats, sizeof st, cudaMemcpyDeviceToHost));
    out[LK_OUT_MAX] = st.max;
    out[LK_OUT_COUNT] = (double)st.count;
    out[LK_OUT_ROW_MIN] = st.row_min;
    out[LK_OUT_ROW_MAX] = st.row_max;
    out[LK_OUT_COL_MIN] = st.col_min;
    out[LK_OUT_COL_MAX] = st.col_max;
    return 0;
}

static int run_lagrange(const reduce_input *in, int steps, double *out, buffers *b,
                        lk_error *err)
{
    LK_CUDA_TRY(err, cudaMalloc(&b->x, in->n1 * sizeof(double)));
    LK_CUDA_TRY(err, cudaMalloc(&b->y, in->n1 * sizeof(double)));
    LK_CUDA_TRY(err, cudaMalloc(&b->xs, in->S * sizeof(double)));
    LK_CUDA_TRY(err, cudaMalloc(&b->ys, in->S * sizeof(double)));
    LK_CUDA_TRY(err, cudaMemcpy(b->x, in->x, in->n1 * sizeof(double), cudaMemcpyHostToDevice));
    LK_CUDA_TRY(err, cudaMemcpy(b->y, in->y, in->n1 * sizeof(double), cudaMemcpyHostToDevice));
    LK_CUDA_TRY(err, cudaMemcpy(b->xs, in->xs, in->S * sizeof(double), cudaMemcpyHostToDevice));
    for (int s = 0; s <= steps; s++)
        if (lab06_lagrange(b->x, b->y, in->n1, b->xs, b->ys, in->S, err) != 0)
            return -1;
    LK_CUDA_TRY(err, cudaMemcpy(out, b->ys, in->S * sizeof(double), cudaMemcpyDeviceToHost));
    return 0;
}

extern "C" int lab06_gpu_run(const reduce_input *in, const char *variant, int steps,
                             double *out, lk_error *err)
{
    int v = variant[0] ? variant_index(variant) : 0;
    if (v < 0)
        return lk_fail(err, "--variant %s: unknown variant", variant);
    buffers b;
    memset(&b, 0, sizeof b);
    int rc = in->lagrange ? run_lagrange(in, steps, out, &b, err)
                          : run_field(in, v, steps, out, &b, err);
    /* The copies above synchronise; an error of your kernels shows up there or here. */
    if (rc == 0) {
        cudaError_t e = cudaDeviceSynchronize();
        if (e != cudaSuccess)
            rc = lk_cuda_fail(err, e, "cudaDeviceSynchronize() after your kernels", __FILE__,
                              __LINE__);
    }
    free_buffers(&b);
    return rc;
}
