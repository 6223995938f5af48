/**
 * @file cuda_check.h
 * @brief Checking every CUDA call and launch, and probing for a usable GPU.
 *
 * Usage in a function that returns int and takes `lk_error *err`:
 * @code
 *   LK_CUDA_TRY(err, cudaMalloc(&d_h, bytes));
 *   step_kernel<<<grid, block>>>(...);
 *   LK_LAUNCH_TRY(err);
 * @endcode
 * On failure the message names file:line, the call, the CUDA error name and string, the
 * device and its compute capability, and for "no kernel image" the architectures the binary
 * was built for and how to rebuild.
 */
#ifndef LABKIT_CUDA_CHECK_H
#define LABKIT_CUDA_CHECK_H

#include <stddef.h>
#include <cuda_runtime_api.h>
#include "labkit/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Fill @p err with a full description of @p code raised by @p what at @p file:@p line; -1.
 * Also clears the runtime's last-error state, so that a later LK_LAUNCH_TRY does not report
 * the same (non-sticky) error again as a launch failure.
 */
int lk_cuda_fail(lk_error *err, cudaError_t code, const char *what, const char *file, int line);

/** If @p code is an error, fill @p err via lk_cuda_fail and return -1 from the caller. */
#define LK_CUDA_TRY(err, call)                                                        \
    do {                                                                              \
        cudaError_t lk_code_ = (call);                                                \
        if (lk_code_ != cudaSuccess)                                                  \
            return lk_cuda_fail((err), lk_code_, #call, __FILE__, __LINE__);          \
    } while (0)

/** After a kernel launch: report a launch-configuration error from the caller. */
#define LK_LAUNCH_TRY(err)                                                            \
    do {                                                                              \
        cudaError_t lk_code_ = cudaGetLastError();                                    \
        if (lk_code_ != cudaSuccess)                                                  \
            return lk_cuda_fail((err), lk_code_, "kernel launch", __FILE__, __LINE__); \
    } while (0)

/**
 * The one reason that drivers, test skips, reports and `make doctor` give when this machine
 * has no GPU, instead of the runtime's "CUDA driver version is insufficient", which reads as
 * "upgrade your driver".
 */
#define LK_NO_GPU "no GPU on this machine"

/**
 * Is a CUDA device usable? Returns 1 if so, 0 if not, with the reason in @p reason:
 * LK_NO_GPU when the machine has no NVIDIA driver loaded and CUDA finds no device, else the
 * step that failed and the runtime's error (a GPU with a broken or too old driver).
 * Initialises CUDA: call it in the process that will use the GPU (inside a test body, never
 * in a runner).
 */
int lk_gpu_available(char *reason, size_t reason_size);

/**
 * 1 when the NVIDIA kernel driver is loaded (its control device /dev/nvidiactl or
 * /proc/driver/nvidia/version exists): then a CUDA failure is a driver problem, not a
 * missing GPU.
 */
int lk_nvidia_driver_loaded(void);

/**
 * The reason lk_gpu_available() gives for @p code, raised by @p step (NULL for the device
 * count), on a machine where the NVIDIA driver is loaded or not (@p driver_loaded): LK_NO_GPU
 * for "no driver" or "no device" without a loaded driver, else "STEP: NAME: STRING".
 */
void lk_gpu_unusable_reason(cudaError_t code, const char *step, int driver_loaded, char *reason,
                            size_t reason_size);

/** One line describing device 0: name, compute capability, memory, driver and runtime. */
int lk_gpu_describe(char *out, size_t out_size, lk_error *err);

/**
 * Fill the @p bytes of device memory at @p d with LK_POISON_BITS (labkit/compare.h), one
 * pattern per 8 bytes from @p d on (a trailing partial pattern when @p bytes is not a multiple
 * of 8); returns once the fill is done. Poison device outputs with it before a run: a cell
 * still holding the pattern afterwards was never written.
 */
int lk_gpu_poison(void *d, size_t bytes, lk_error *err);

/**
 * While @p on, every cudaMalloc made by code linked with `-Wl,--wrap=cudaMalloc` (every lab
 * program and test, see labs/lab.mk) returns memory filled with LK_POISON_BITS, so a device
 * buffer read before it is written gives NaN instead of the zeros a fresh allocation happens
 * to hold (drivers hand out zeroed memory). Off by default; never on while timing.
 */
void lk_poison_device_allocations(int on);

#ifdef __cplusplus
}
#endif
#endif
