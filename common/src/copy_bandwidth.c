/* The copy bandwidth, the yardstick of "% of copy": cudaMemcpy and the kit's copy kernel, each
   timed with CUDA events. Apart from cuda_check.c so that the timing code, which reports CUDA
   errors through it, and the error code do not depend on each other. */
#include "labkit/copy_kernel.h"

#include "labkit/cuda_check.h"
#include "labkit/timing.h"

typedef struct copy_ctx {
    void *dst;
    const void *src;
    size_t bytes;
} copy_ctx;

static int copy_memcpy(void *ctx, lk_error *err)
{
    copy_ctx *c = ctx;
    LK_CUDA_TRY(err, cudaMemcpy(c->dst, c->src, c->bytes, cudaMemcpyDeviceToDevice));
    return 0;
}

static int copy_kernel(void *ctx, lk_error *err)
{
    copy_ctx *c = ctx;
    return lk_copy_kernel(c->dst, c->src, c->bytes, err);
}

/* Read + write bytes per second of one way of copying, median of @p repeats. */
static int time_copy(lk_region_fn fn, copy_ctx *c, int repeats, double *bps, lk_error *err)
{
    lk_stats ms;
    if (lk_time_cuda(fn, c, 1, repeats, &ms, err) != 0)
        return -1;
    if (ms.median <= 0)
        return lk_fail(err, "lk_gpu_copy_bandwidth: a %zu-byte copy took %g ms: copy more bytes",
                       c->bytes, ms.median);
    *bps = 2.0 * (double)c->bytes / (ms.median * 1e-3);
    return 0;
}

int lk_gpu_copy_bandwidth(size_t bytes, int repeats, lk_copy_bandwidth *bw, lk_error *err)
{
    if (bytes == 0 || repeats < 1 || !bw)
        return lk_fail(err,
                       "lk_gpu_copy_bandwidth: bytes %zu, repeats %d: give at least one byte, "
                       "one repeat and a result pointer",
                       bytes, repeats);
    copy_ctx c = {NULL, NULL, bytes};
    void *src = NULL;
    int rc = 0;
    cudaError_t e;
    if ((e = cudaMalloc(&src, bytes)) != cudaSuccess) {
        rc = lk_cuda_fail(err, e, "cudaMalloc(&src, bytes)", __FILE__, __LINE__);
        goto done;
    }
    if ((e = cudaMalloc(&c.dst, bytes)) != cudaSuccess) {
        rc = lk_cuda_fail(err, e, "cudaMalloc(&dst, bytes)", __FILE__, __LINE__);
        goto done;
    }
    c.src = src;
    lk_copy_bandwidth got;
    if ((rc = time_copy(copy_memcpy, &c, repeats, &got.memcpy_bps, err)) != 0 ||
        (rc = time_copy(copy_kernel, &c, repeats, &got.kernel_bps, err)) != 0)
        goto done;
    got.best_bps = got.memcpy_bps > got.kernel_bps ? got.memcpy_bps : got.kernel_bps;
    *bw = got;
done:
    /* Free both on every path; report a free failure only if nothing failed before. */
    if (c.dst && (e = cudaFree(c.dst)) != cudaSuccess && rc == 0)
        rc = lk_cuda_fail(err, e, "cudaFree(dst)", __FILE__, __LINE__);
    if (src && (e = cudaFree(src)) != cudaSuccess && rc == 0)
        rc = lk_cuda_fail(err, e, "cudaFree(src)", __FILE__, __LINE__);
    return rc;
}
