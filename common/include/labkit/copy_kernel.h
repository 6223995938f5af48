/**
 * @file copy_kernel.h
 * @brief The copy bandwidth of a device, the yardstick of "% of copy", and the plain copy
 *        kernel it is measured with.
 */
#ifndef LABKIT_COPY_KERNEL_H
#define LABKIT_COPY_KERNEL_H

#include <stddef.h>
#include "labkit/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Launch a kernel that copies @p bytes from device memory @p src to @p dst (both 16-byte
 * aligned, as cudaMalloc returns them) on the default stream; returns after the launch, not
 * after the copy. -1 with @p err filled when the launch fails.
 */
int lk_copy_kernel(void *dst, const void *src, size_t bytes, lk_error *err);

/** Device-to-device copy bandwidth of one buffer size, in bytes read + written per second. */
typedef struct lk_copy_bandwidth {
    double memcpy_bps; /**< cudaMemcpy DeviceToDevice (a copy engine on some GPUs). */
    double kernel_bps; /**< The kit's copy kernel, lk_copy_kernel() in labkit/copy_kernel.h. */
    double best_bps;   /**< The larger of the two: the yardstick for "% of copy". */
} lk_copy_bandwidth;

/**
 * Measure how fast this device copies @p bytes from one buffer to another, with cudaMemcpy
 * and with a plain copy kernel; each the median of @p repeats after a warm-up.
 */
int lk_gpu_copy_bandwidth(size_t bytes, int repeats, lk_copy_bandwidth *bw, lk_error *err);

#ifdef __cplusplus
}
#endif
#endif
