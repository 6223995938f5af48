#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "labkit/copy_kernel.h"
#include "labkit/testing.h"

/* strstr as a truth value, so that assertions read the same in either Criterion API. */
static int contains(const char *s, const char *sub) { return strstr(s, sub) != NULL; }

/* The device part of a message: "device unknown" without a usable GPU, else the device. */
static void assert_device_part(const char *msg)
{
    char reason[256];
    if (lk_gpu_available(reason, sizeof reason))
        cr_assert(contains(msg, " on device 0 '") && contains(msg, "(sm_"),
                  "device not described: %s", msg);
    else
        cr_assert(contains(msg, " on device unknown"), "device should be unknown: %s", msg);
}

static void fail_with(cudaError_t code, lk_error *err)
{
    cr_assert_eq(lk_cuda_fail(err, code, "cudaMalloc(&d_h, bytes)", "lab/kernels.cu", 42), -1);
    cr_assert_null(strchr(err->msg, '\n'), "one line expected: %s", err->msg);
    const char *head = "lab/kernels.cu:42: cudaMalloc(&d_h, bytes) failed: ";
    cr_assert(strncmp(err->msg, head, strlen(head)) == 0, "should start with '%s': %s", head,
              err->msg);
    char name[160];
    snprintf(name, sizeof name, "%s (%s)", cudaGetErrorName(code), cudaGetErrorString(code));
    cr_assert(contains(err->msg, name), "error name and string '%s' missing: %s", name, err->msg);
    assert_device_part(err->msg);
}

Test(cuda_check, no_kernel_image_says_how_to_rebuild)
{
    const cudaError_t codes[] = {cudaErrorNoKernelImageForDevice, cudaErrorUnsupportedPtxVersion,
                                 cudaErrorInvalidKernelImage};
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        lk_error err = {{0}};
        fail_with(codes[i], &err);
        cr_assert(contains(err.msg, "built for " LK_CUDA_ARCHS), "archs missing: %s", err.msg);
        cr_assert(contains(err.msg, "rebuild with `make CUDA_ARCH=sm_"), "%s", err.msg);
    }
}

Test(cuda_check, out_of_memory_hint)
{
    lk_error err = {{0}};
    fail_with(cudaErrorMemoryAllocation, &err);
    cr_assert(contains(err.msg, "cudaErrorMemoryAllocation"), "%s", err.msg);
    cr_assert(contains(err.msg, "use a smaller dataset or free buffers"), "%s", err.msg);
}

Test(cuda_check, bad_access_hint_names_compute_sanitizer)
{
    const cudaError_t codes[] = {cudaErrorIllegalAddress, cudaErrorInvalidAddressSpace,
                                 cudaErrorLaunchFailure, cudaErrorMisalignedAddress};
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        lk_error err = {{0}};
        fail_with(codes[i], &err);
        cr_assert(contains(err.msg, "illegal memory access: a kernel accessed memory out of "
                                    "bounds") &&
                      contains(err.msg, "context is now unusable") &&
                      contains(err.msg, "compute-sanitizer"),
                  "%s", err.msg);
    }
}

Test(cuda_check, invalid_configuration_hint)
{
    lk_error err = {{0}};
    fail_with(cudaErrorInvalidConfiguration, &err);
    cr_assert(contains(err.msg, "cudaErrorInvalidConfiguration"), "%s", err.msg);
    cr_assert(contains(err.msg, "at most 1024 threads per block") && contains(err.msg, "grid size"),
              "%s", err.msg);
}

Test(cuda_check, no_gpu_hint_points_to_doctor)
{
    const cudaError_t codes[] = {cudaErrorInsufficientDriver, cudaErrorNoDevice};
    const char *hint = lk_nvidia_driver_loaded() ? ": no usable GPU: run `make doctor`"
                                                 : ": " LK_NO_GPU ": run on a machine with an "
                                                   "NVIDIA GPU (`make doctor`";
    for (size_t i = 0; i < 2; i++) {
        lk_error err = {{0}};
        fail_with(codes[i], &err);
        cr_assert(contains(err.msg, hint), "'%s' missing: %s", hint, err.msg);
    }
}

Test(cuda_check, code_without_hint_ends_after_device)
{
    lk_error err = {{0}};
    fail_with(cudaErrorNotReady, &err);
    size_t n = strlen(err.msg);
    const char *end = lk_gpu_available(NULL, 0) ? ")" : "device unknown";
    cr_assert(n >= strlen(end) && strcmp(err.msg + n - strlen(end), end) == 0,
              "nothing should follow the device: %s", err.msg);
}

Test(cuda_check, null_error_and_null_strings_are_safe)
{
    cr_assert_eq(lk_cuda_fail(NULL, cudaErrorInvalidValue, "x", "f.c", 1), -1);
    lk_error err = {{0}};
    cr_assert_eq(lk_cuda_fail(&err, cudaErrorInvalidValue, NULL, NULL, 7), -1);
    cr_assert(contains(err.msg, ":7: ") && contains(err.msg, "cudaErrorInvalidValue"), "%s",
              err.msg);
}

static cudaError_t fake_call(cudaError_t code) { return code; }

static int uses_try(cudaError_t code, lk_error *err, int *line)
{
    *line = __LINE__ + 1;
    LK_CUDA_TRY(err, fake_call(code));
    return 0;
}

Test(cuda_check, try_macro_reports_the_call_and_its_location)
{
    lk_error err = {{0}};
    int line = 0;
    cr_assert_eq(uses_try(cudaSuccess, &err, &line), 0);
    cr_assert_eq(err.msg[0], '\0');
    cr_assert_eq(uses_try(cudaErrorLaunchFailure, &err, &line), -1);
    char where[256];
    snprintf(where, sizeof where, "%s:%d: fake_call(code) failed: cudaErrorLaunchFailure",
             __FILE__, line);
    cr_assert(strncmp(err.msg, where, strlen(where)) == 0, "expected '%s...': %s", where,
              err.msg);
}

/* ---- probing ---- */

Test(cuda_check, gpu_available_gives_a_reason_or_a_working_device)
{
    char reason[256];
    memset(reason, 'x', sizeof reason);
    if (lk_gpu_available(reason, sizeof reason)) {
        cr_assert_eq(reason[0], '\0', "reason should be empty when usable: %s", reason);
        /* Usable means a context exists: a real allocation must work. */
        void *d = NULL;
        cr_assert_eq(cudaMalloc(&d, 1 << 20), cudaSuccess);
        cr_assert_eq(cudaFree(d), cudaSuccess);
    } else {
        cr_assert_neq(reason[0], '\0', "no reason given");
        cr_assert_lt(strlen(reason), sizeof reason);
        if (lk_nvidia_driver_loaded())
            cr_assert(contains(reason, "cudaError"), "reason should name the runtime error: %s",
                      reason);
        else
            cr_assert_str_eq(reason, LK_NO_GPU);
        cr_log_info("no GPU here: %s", reason);
    }
}

/* Without a loaded NVIDIA driver, "no driver" and "no device" are one plain fact. */
Test(cuda_check, no_driver_and_no_device_read_as_no_gpu)
{
    const cudaError_t codes[] = {cudaErrorInsufficientDriver, cudaErrorNoDevice};
    for (size_t i = 0; i < 2; i++) {
        char reason[256];
        lk_gpu_unusable_reason(codes[i], NULL, 0, reason, sizeof reason);
        cr_assert_str_eq(reason, "no GPU on this machine");
    }
}

/* With the driver loaded the same codes are a driver problem: the runtime's words stay. */
Test(cuda_check, a_loaded_driver_keeps_the_real_error)
{
    char reason[256];
    lk_gpu_unusable_reason(cudaErrorInsufficientDriver, NULL, 1, reason, sizeof reason);
    cr_assert_str_eq(reason, "cudaErrorInsufficientDriver: CUDA driver version is insufficient "
                             "for CUDA runtime version");
    lk_gpu_unusable_reason(cudaErrorNoDevice, NULL, 1, reason, sizeof reason);
    cr_assert(contains(reason, "cudaErrorNoDevice: "), "%s", reason);
    /* Any other failure is reported as it is, with its step, driver or not. */
    lk_gpu_unusable_reason(cudaErrorDevicesUnavailable, "cudaSetDevice(0)", 0, reason,
                           sizeof reason);
    cr_assert(strncmp(reason, "cudaSetDevice(0): cudaErrorDevicesUnavailable: ", 47) == 0, "%s",
              reason);
    char small[4] = "xxx";
    lk_gpu_unusable_reason(cudaErrorNoDevice, NULL, 0, small, sizeof small);
    cr_assert_str_eq(small, "no ");
    lk_gpu_unusable_reason(cudaErrorNoDevice, NULL, 0, NULL, 0);
}

Test(cuda_check, gpu_available_truncates_and_accepts_no_buffer)
{
    char small[8];
    memset(small, 'x', sizeof small);
    int a = lk_gpu_available(small, sizeof small);
    cr_assert(memchr(small, '\0', sizeof small) != NULL, "reason not terminated");
    cr_assert_eq(lk_gpu_available(NULL, 0), a);
}

Test(cuda_check, no_gpu_paths_fail_cleanly)
{
    char reason[256];
    if (lk_gpu_available(reason, sizeof reason))
        cr_skip_test("a GPU is present: this test covers machines without one");
    lk_error err = {{0}};
    char line[256];
    cr_assert_eq(lk_gpu_describe(line, sizeof line, &err), -1);
    cr_assert(contains(err.msg, "cudaGetDeviceProperties") && contains(err.msg, "cuda_check.c:"),
              "%s", err.msg);
    lk_copy_bandwidth bw = {-1, -1, -1};
    cr_assert_eq(lk_gpu_copy_bandwidth(1 << 20, 3, &bw, &err), -1);
    cr_assert(contains(err.msg, "cudaMalloc"), "%s", err.msg);
    cr_assert(bw.memcpy_bps == -1 && bw.kernel_bps == -1 && bw.best_bps == -1,
              "result written on failure");
}

Test(cuda_check, bad_arguments_rejected_before_cuda)
{
    lk_error err = {{0}};
    lk_copy_bandwidth bw;
    cr_assert_eq(lk_gpu_copy_bandwidth(0, 3, &bw, &err), -1);
    cr_assert(contains(err.msg, "lk_gpu_copy_bandwidth"), "%s", err.msg);
    cr_assert_eq(lk_gpu_copy_bandwidth(1024, 0, &bw, &err), -1);
    cr_assert(contains(err.msg, "repeats 0"), "%s", err.msg);
    cr_assert_eq(lk_gpu_copy_bandwidth(1024, 1, NULL, &err), -1);
    cr_assert_eq(lk_gpu_describe(NULL, 0, &err), -1);
    cr_assert(contains(err.msg, "lk_gpu_describe"), "%s", err.msg);
    cr_assert_eq(lk_gpu_poison(NULL, 0, &err), 0);
    cr_assert_eq(lk_gpu_poison(NULL, 64, &err), -1);
    cr_assert(contains(err.msg, "lk_gpu_poison: no device buffer"), "%s", err.msg);
}

/* ---- on a GPU ---- */

Test(cuda_check, describe_names_the_device)
{
    LK_REQUIRE_GPU();
    char line[256];
    lk_error err = {{0}};
    LK_ASSERT_OK(lk_gpu_describe(line, sizeof line, &err), &err);
    struct cudaDeviceProp p;
    cr_assert_eq(cudaGetDeviceProperties(&p, 0), cudaSuccess);
    char cc[64];
    snprintf(cc, sizeof cc, "(sm_%d%d, %d SMs, ", p.major, p.minor, p.multiProcessorCount);
    cr_assert(strncmp(line, p.name, strlen(p.name)) == 0, "%s", line);
    cr_assert(contains(line, cc) && contains(line, " GiB, CUDA driver API ") &&
                  contains(line, ", runtime "),
              "%s", line);
    cr_assert_null(strchr(line, '\n'));
    cr_log_info("%s", line);
}

Test(cuda_check, copy_bandwidth_is_plausible)
{
    LK_REQUIRE_GPU();
    lk_copy_bandwidth bw = {0};
    lk_error err = {{0}};
    LK_ASSERT_OK(lk_gpu_copy_bandwidth((size_t)256 << 20, 5, &bw, &err), &err);
    /* Any supported GPU copies faster than 1 GB/s; none reaches 30 TB/s (read + write). */
    cr_assert(bw.memcpy_bps > 1e9 && bw.memcpy_bps < 3e13, "cudaMemcpy %g B/s", bw.memcpy_bps);
    cr_assert(bw.kernel_bps > 1e9 && bw.kernel_bps < 3e13, "copy kernel %g B/s", bw.kernel_bps);
    cr_assert(bw.best_bps == (bw.memcpy_bps > bw.kernel_bps ? bw.memcpy_bps : bw.kernel_bps));
    cr_log_info("device-to-device copy: cudaMemcpy %.0f GB/s, copy kernel %.0f GB/s (read + write)",
                bw.memcpy_bps / 1e9, bw.kernel_bps / 1e9);
}

/* The copy kernel copies every byte, a tail of under 16 bytes too, and nothing past the end. */
Test(cuda_check, copy_kernel_copies_every_byte)
{
    LK_REQUIRE_GPU();
    const size_t sizes[] = {1, 15, 16, 17, 4096 + 13, ((size_t)3 << 20) + 7};
    const size_t cap = ((size_t)3 << 20) + 64;
    unsigned char *h_src = malloc(cap), *h_dst = malloc(cap);
    cr_assert(h_src && h_dst);
    for (size_t i = 0; i < cap; i++)
        h_src[i] = (unsigned char)(i * 131 + 7);
    unsigned char *d_src = NULL, *d_dst = NULL;
    cr_assert_eq(cudaMalloc((void **)&d_src, cap), cudaSuccess);
    cr_assert_eq(cudaMalloc((void **)&d_dst, cap), cudaSuccess);
    cr_assert_eq(cudaMemcpy(d_src, h_src, cap, cudaMemcpyHostToDevice), cudaSuccess);
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        size_t n = sizes[k];
        cr_assert_eq(cudaMemset(d_dst, 0xAB, cap), cudaSuccess);
        lk_error err = {{0}};
        LK_ASSERT_OK(lk_copy_kernel(d_dst, d_src, n, &err), &err);
        cr_assert_eq(cudaDeviceSynchronize(), cudaSuccess);
        cr_assert_eq(cudaMemcpy(h_dst, d_dst, cap, cudaMemcpyDeviceToHost), cudaSuccess);
        for (size_t i = 0; i < cap; i++) {
            unsigned char want = i < n ? h_src[i] : 0xAB;
            cr_assert_eq(h_dst[i], want, "%zu-byte copy: byte %zu is %u, expected %u", n, i,
                         h_dst[i], want);
        }
    }
    cudaFree(d_src);
    cudaFree(d_dst);
    free(h_src);
    free(h_dst);
}

/* Poison [off, off + len) of a zeroed buffer of `bytes` and check every byte read back. */
static void check_poison(size_t bytes, size_t off, size_t len)
{
    unsigned char *d = NULL;
    cr_assert_eq(cudaMalloc((void **)&d, bytes), cudaSuccess);
    cr_assert_eq(cudaMemset(d, 0, bytes), cudaSuccess);
    lk_error err = {{0}};
    LK_ASSERT_OK(lk_gpu_poison(d + off, len, &err), &err);
    unsigned char *h = malloc(bytes);
    cr_assert_not_null(h);
    cr_assert_eq(cudaMemcpy(h, d, bytes, cudaMemcpyDeviceToHost), cudaSuccess);
    const uint64_t pattern = LK_POISON_BITS;
    const unsigned char *pb = (const unsigned char *)&pattern;
    for (size_t k = 0; k < bytes; k++) {
        unsigned char want = k >= off && k < off + len ? pb[(k - off) % 8] : 0;
        if (h[k] != want) /* test first: one assertion per byte is slow */
            cr_assert_eq(h[k], want, "buffer of %zu, poisoned [%zu, %zu): byte %zu is 0x%02x, "
                         "want 0x%02x", bytes, off, off + len, k, h[k], want);
    }
    if (len >= 8 && off % 8 == 0) {
        double v;
        memcpy(&v, h + off, sizeof v);
        cr_assert(isnan(v), "the poison should read back as a NaN double, got %g", v);
    }
    free(h);
    cr_assert_eq(cudaFree(d), cudaSuccess);
}

Test(cuda_check, poison_fills_exactly_the_range)
{
    LK_REQUIRE_GPU();
    check_poison(1000, 0, 1000);
    check_poison(64, 8, 40);                      /* neighbours stay untouched */
    check_poison(16, 0, 3);                       /* partial pattern */
    check_poison(8u << 20, 0, 8u << 20);          /* exactly one staging chunk */
    check_poison((40u << 20) + 32, 16, 40u << 20); /* doubling path, not a power of two */
    check_poison((20u << 20) + 24, 8, (20u << 20) + 13);
}

Test(cuda_check, real_out_of_memory_reports_free_memory)
{
    LK_REQUIRE_GPU();
    void *d = NULL;
    cudaError_t c = cudaMalloc(&d, (size_t)1 << 50);
    cr_assert_eq(c, cudaErrorMemoryAllocation);
    lk_error err = {{0}};
    lk_cuda_fail(&err, c, "cudaMalloc(&d, 1 PiB)", "t.c", 1);
    cr_assert(contains(err.msg, " on device 0 '") && contains(err.msg, "GiB free of"), "%s",
              err.msg);
    /* The reported error is cleared, so a later launch check does not report it again. */
    cr_assert_eq(cudaGetLastError(), cudaSuccess);
}
