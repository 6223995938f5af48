#include "labkit/cuda_check.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "labkit/compare.h"

#ifndef LK_CUDA_ARCHS
#define LK_CUDA_ARCHS "(unknown: built outside the kit's Makefile)"
#endif

static const double GIB = 1024.0 * 1024.0 * 1024.0;

/* What to do about a code, in one line; empty when the error name says it all. */
static void hint_for(cudaError_t code, int have_dev, int major, int minor, char *buf,
                     size_t size)
{
    size_t free_b, total_b;
    switch (code) {
    case cudaErrorNoKernelImageForDevice:
    case cudaErrorUnsupportedPtxVersion:
    case cudaErrorInvalidKernelImage:
        if (have_dev)
            snprintf(buf, size,
                     "this binary was built for %s but the device is sm_%d%d: rebuild with "
                     "`make CUDA_ARCH=sm_%d%d`",
                     LK_CUDA_ARCHS, major, minor, major, minor);
        else
            snprintf(buf, size,
                     "this binary was built for %s: rebuild with `make CUDA_ARCH=sm_XY`, XY "
                     "being the device's compute capability (nvidia-smi "
                     "--query-gpu=compute_cap)",
                     LK_CUDA_ARCHS);
        break;
    case cudaErrorMemoryAllocation:
        if (have_dev && cudaMemGetInfo(&free_b, &total_b) == cudaSuccess)
            snprintf(buf, size,
                     "the device has %.2f GiB free of %.2f GiB: use a smaller dataset or free "
                     "buffers you no longer need",
                     free_b / GIB, total_b / GIB);
        else
            snprintf(buf, size,
                     "the device is out of memory: use a smaller dataset or free buffers you no "
                     "longer need");
        break;
    /* Where a wild address lands decides which of these a bad access raises (an address
       far past an array can fall outside the global window: InvalidAddressSpace). */
    case cudaErrorIllegalAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorLaunchFailure:
    case cudaErrorMisalignedAddress:
        snprintf(buf, size,
                 "illegal memory access: a kernel accessed memory out of bounds; the CUDA "
                 "context is now unusable; run under compute-sanitizer to find the line");
        break;
    case cudaErrorInvalidConfiguration:
        snprintf(buf, size,
                 "check the block size (at most 1024 threads per block, each dimension within "
                 "the device limits) and grid size");
        break;
    case cudaErrorLaunchOutOfResources:
        snprintf(buf, size,
                 "the block needs more registers or shared memory than the device has: use "
                 "a smaller block or less shared memory per block");
        break;
    case cudaErrorInsufficientDriver:
    case cudaErrorNoDevice:
        if (lk_nvidia_driver_loaded())
            snprintf(buf, size, "no usable GPU: run `make doctor`");
        else
            snprintf(buf, size, LK_NO_GPU ": run on a machine with an NVIDIA GPU (`make doctor` "
                                "says what this one has)");
        break;
    default:
        buf[0] = '\0';
    }
}

int lk_cuda_fail(lk_error *err, cudaError_t code, const char *what, const char *file, int line)
{
    /* Only plain queries here: anything that could fail back into lk_cuda_fail or reset the
       device would hide the error being reported. */
    int dev = -1;
    struct cudaDeviceProp prop;
    int have_dev = cudaGetDevice(&dev) == cudaSuccess &&
                   cudaGetDeviceProperties(&prop, dev) == cudaSuccess;
    char where[320];
    if (have_dev)
        snprintf(where, sizeof where, "device %d '%s' (sm_%d%d)", dev, prop.name, prop.major,
                 prop.minor);
    else
        snprintf(where, sizeof where, "device unknown");
    char hint[512];
    hint_for(code, have_dev, have_dev ? prop.major : 0, have_dev ? prop.minor : 0, hint,
             sizeof hint);
    /* The error is reported now; clear the runtime's last-error slot so that a later
       LK_LAUNCH_TRY does not report it again as a launch failure (sticky errors stay). */
    (void)cudaGetLastError();
    return lk_fail(err, "%s:%d: %s failed: %s (%s) on %s%s%s", file ? file : "?", line,
                   what ? what : "CUDA call", cudaGetErrorName(code), cudaGetErrorString(code),
                   where, hint[0] ? ": " : "", hint);
}

int lk_nvidia_driver_loaded(void)
{
    return access("/dev/nvidiactl", F_OK) == 0 || access("/proc/driver/nvidia/version", F_OK) == 0;
}

/* Without the kernel driver the runtime says "driver version is insufficient" (no libcuda)
   or "no CUDA-capable device": both mean there is no GPU to use here. */
static int means_no_gpu(cudaError_t code)
{
    return code == cudaErrorInsufficientDriver || code == cudaErrorNoDevice;
}

void lk_gpu_unusable_reason(cudaError_t code, const char *step, int driver_loaded, char *reason,
                            size_t reason_size)
{
    if (!reason || reason_size == 0)
        return;
    if (means_no_gpu(code) && !driver_loaded)
        snprintf(reason, reason_size, "%s", LK_NO_GPU);
    else
        snprintf(reason, reason_size, "%s%s%s: %s", step ? step : "", step ? ": " : "",
                 cudaGetErrorName(code), cudaGetErrorString(code));
}

int lk_gpu_available(char *reason, size_t reason_size)
{
    int count = 0;
    cudaError_t c = cudaGetDeviceCount(&count);
    if (c == cudaSuccess && count == 0)
        c = cudaErrorNoDevice;
    if (c != cudaSuccess) {
        lk_gpu_unusable_reason(c, NULL, lk_nvidia_driver_loaded(), reason, reason_size);
        return 0;
    }
    /* A device can be listed yet refuse a context (exclusive mode, MIG without a slice, a
       driver/toolkit mismatch): only creating one proves it usable. */
    if ((c = cudaSetDevice(0)) != cudaSuccess) {
        lk_gpu_unusable_reason(c, "cudaSetDevice(0)", 1, reason, reason_size);
        return 0;
    }
    if ((c = cudaFree(0)) != cudaSuccess) {
        lk_gpu_unusable_reason(c, "creating a CUDA context on device 0", 1, reason, reason_size);
        return 0;
    }
    if (reason && reason_size > 0)
        reason[0] = '\0';
    return 1;
}

int lk_gpu_describe(char *out, size_t out_size, lk_error *err)
{
    if (!out || out_size == 0)
        return lk_fail(err, "lk_gpu_describe: no output buffer given: pass a buffer and its size");
    struct cudaDeviceProp p;
    int drv = 0, rt = 0;
    LK_CUDA_TRY(err, cudaGetDeviceProperties(&p, 0));
    LK_CUDA_TRY(err, cudaDriverGetVersion(&drv));
    LK_CUDA_TRY(err, cudaRuntimeGetVersion(&rt));
    /* The CUDA version the driver supports, not the driver's own version (nvidia-smi's). */
    snprintf(out, out_size,
             "%s (sm_%d%d, %d SMs, %.1f GiB, CUDA driver API %d.%d, runtime %d.%d)", p.name,
             p.major, p.minor, p.multiProcessorCount, p.totalGlobalMem / GIB, drv / 1000,
             drv % 1000 / 10, rt / 1000, rt % 1000 / 10);
    return 0;
}

/* Host staging size: big enough that copies run at full speed, small enough to allocate. */
#define POISON_CHUNK (8u << 20)

int lk_gpu_poison(void *d, size_t bytes, lk_error *err)
{
    if (bytes == 0)
        return 0;
    if (!d)
        return lk_fail(err, "lk_gpu_poison: no device buffer given for %zu bytes: pass the "
                            "pointer cudaMalloc returned", bytes);
    size_t first = bytes < POISON_CHUNK ? bytes : POISON_CHUNK;
    unsigned char *host = malloc(first);
    if (!host)
        return lk_fail(err, "lk_gpu_poison: out of host memory for a %zu-byte staging buffer: "
                            "poison a smaller buffer", first);
    const uint64_t pattern = LK_POISON_BITS;
    for (size_t i = 0; i < first; i += sizeof pattern)
        memcpy(host + i, &pattern, first - i < sizeof pattern ? first - i : sizeof pattern);
    unsigned char *dst = d;
    cudaError_t c;
    const char *what = "cudaMemcpy(d, host, first, cudaMemcpyHostToDevice)";
    int line = __LINE__ + 1;
    c = cudaMemcpy(dst, host, first, cudaMemcpyHostToDevice);
    free(host);
    /* Double the poisoned prefix on the device: log2(bytes / 8 MiB) copies instead of one
       host transfer per chunk. The prefix is a whole number of patterns, so it stays aligned. */
    for (size_t done = first; c == cudaSuccess && done < bytes;) {
        size_t n = bytes - done < done ? bytes - done : done;
        what = "cudaMemcpy(d + done, d, n, cudaMemcpyDeviceToDevice)";
        line = __LINE__ + 1;
        c = cudaMemcpy(dst + done, dst, n, cudaMemcpyDeviceToDevice);
        done += n;
    }
    if (c == cudaSuccess) {
        what = "cudaStreamSynchronize(0)";
        line = __LINE__ + 1;
        c = cudaStreamSynchronize(0);
    }
    return c == cudaSuccess ? 0 : lk_cuda_fail(err, c, what, __FILE__, line);
}
