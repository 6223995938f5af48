/* Poisoning of device allocations: lab programs and tests are linked with
   -Wl,--wrap=cudaMalloc, which routes the student's cudaMalloc calls here. */
#include <stdio.h>

#include "labkit/cuda_check.h"

cudaError_t __real_cudaMalloc(void **ptr, size_t size);
cudaError_t __wrap_cudaMalloc(void **ptr, size_t size);

static int poisoning;

void lk_poison_device_allocations(int on) { poisoning = on; }

cudaError_t __wrap_cudaMalloc(void **ptr, size_t size)
{
    cudaError_t code = __real_cudaMalloc(ptr, size);
    if (code == cudaSuccess && poisoning && size > 0) {
        lk_error err;
        if (lk_gpu_poison(*ptr, size, &err) != 0) {
            /* The allocation itself worked: report, and let the student's code go on. */
            fprintf(stderr, "labkit: could not poison a %zu-byte allocation: %s\n", size, err.msg);
        }
    }
    return code;
}
