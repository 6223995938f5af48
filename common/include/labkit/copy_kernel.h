/**
 * @file copy_kernel.h
 * @brief A plain device-to-device copy kernel, the yardstick of lk_gpu_copy_bandwidth().
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

#ifdef __cplusplus
}
#endif
#endif
