/* The copy kernel behind lk_gpu_copy_bandwidth (copy_bandwidth.c): the simplest memory-bound
   kernel, so that a stencil's bandwidth is compared with what plain loads and stores reach on
   this device, not only with cudaMemcpy (which some GPUs run on a slower copy engine). */
#include <stdint.h>

#include "labkit/cuda_check.h"
#include "labkit/copy_kernel.h"

/* 16-byte loads and stores, grid-stride, four loads in flight per thread before their stores
   (one at a time leaves HBM idle between round trips); the tail of a size that is not a
   multiple of 16 bytes is copied byte by byte by the first threads. */
static __global__ void copy_vectors(uint4 *__restrict__ dst, const uint4 *__restrict__ src,
                                    size_t n16, unsigned char *__restrict__ dst_tail,
                                    const unsigned char *__restrict__ src_tail, size_t tail)
{
    enum { UNROLL = 4 };
    size_t stride = (size_t)gridDim.x * blockDim.x;
    size_t first = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    size_t i = first;
    for (; i + (UNROLL - 1) * stride < n16; i += UNROLL * stride) {
        uint4 v[UNROLL];
#pragma unroll
        for (int k = 0; k < UNROLL; k++)
            v[k] = src[i + k * stride];
#pragma unroll
        for (int k = 0; k < UNROLL; k++)
            dst[i + k * stride] = v[k];
    }
    for (; i < n16; i += stride)
        dst[i] = src[i];
    if (first < tail)
        dst_tail[first] = src_tail[first];
}

extern "C" int lk_copy_kernel(void *dst, const void *src, size_t bytes, lk_error *err)
{
    int device, sms;
    LK_CUDA_TRY(err, cudaGetDevice(&device));
    LK_CUDA_TRY(err, cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    size_t n16 = bytes / 16, tail = bytes % 16;
    const int threads = 256;
    /* Enough resident blocks to keep every SM's load queue full, no more. */
    size_t blocks = (n16 + threads - 1) / threads;
    if (blocks > (size_t)sms * 8)
        blocks = (size_t)sms * 8;
    if (blocks == 0)
        blocks = 1;
    copy_vectors<<<(unsigned)blocks, threads>>>((uint4 *)dst, (const uint4 *)src, n16,
                                                (unsigned char *)dst + n16 * 16,
                                                (const unsigned char *)src + n16 * 16, tail);
    LK_LAUNCH_TRY(err);
    return 0;
}
