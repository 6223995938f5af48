// Lab 05, given (read-only): the two baselines and the loop over rows of tiles
// that calls your lab05_tile_row(). The baselines are lab 02's lesson on this model: one
// thread per mass point reading (u, v) as one 16-byte load, so a warp reads 512 contiguous
// bytes; their arithmetic is vstring_point_step(), the serial reference's. The stretch
// model's baseline, bruss-linear, is the same lesson on the Brusselator: one thread per grid
// point, (U, V) as one 16-byte load, bruss_point_step().

#include <stdio.h>
#include <string.h>

#include <cooperative_groups.h>

#include "given.h"
#include "labkit/cuda_check.h"

static const char *const method_names[6] = {"diamond", "honeycomb",    "linear",
                                            "persistent", "bruss", "bruss-linear"};

int lab05_method_parse(const char *name, lab05_method *out, lk_error *err)
{
    if (!name || !name[0]) {
        *out = LAB05_RUN_DIAMOND;
        return 0;
    }
    for (int m = 0; m < 6; m++)
        if (strcmp(name, method_names[m]) == 0) {
            *out = (lab05_method)m;
            return 0;
        }
    return lk_fail(err, "--variant %s: unknown variant: use diamond, honeycomb, linear or "
                        "persistent (strings), bruss or bruss-linear (Brusselator)", name);
}

int lab05_method_is_bruss(lab05_method method)
{
    return method == LAB05_RUN_BRUSS || method == LAB05_RUN_BRUSS_LINEAR;
}

int lab05_check_model(const char *variant, int bruss, lk_error *err)
{
    lab05_method m = bruss ? LAB05_RUN_BRUSS : LAB05_RUN_DIAMOND;
    if (variant && variant[0] && lab05_method_parse(variant, &m, err) != 0)
        return -1;
    if (lab05_method_is_bruss(m) == bruss)
        return 0;
    if (bruss)
        return lk_fail(err, "--variant %s runs on a string; the input is a Brusselator (model "
                            "bruss): use --variant bruss or bruss-linear, or leave --variant "
                            "out", variant);
    return lk_fail(err, "--variant %s runs on a Brusselator (--gen bruss:MxM:SEED or a bruss "
                        "dataset); the input is a string: use diamond, honeycomb, linear or "
                        "persistent", variant);
}

int lab05_check_tile(lab05_method method, int width, int height, lk_error *err)
{
    if (method == LAB05_RUN_BRUSS) {
        if (width < 0 || width > LAB05_MAX_WIDTH || height < 1 || height > LAB05_MAX_WIDTH)
            return lk_fail(err, "--tile %dx%d: the Brusselator's tile is ROWSxSTEPS, grid rows "
                                "per block and steps per launch, each 1 to %d (leave --tile out "
                                "to let the given code choose): e.g. --tile 8x4", width, height,
                           LAB05_MAX_WIDTH);
        return 0;
    }
    if (method == LAB05_RUN_BRUSS_LINEAR) {
        if (width < 1 || width > LAB05_MAX_WIDTH || height != 1)
            return lk_fail(err, "--tile %dx%d: the bruss-linear baseline does one step per "
                                "launch with blocks of 1 to %d threads: use e.g. --tile 256x1",
                           width, height, LAB05_MAX_WIDTH);
        return 0;
    }
    if (width < 1 || width > LAB05_MAX_WIDTH || height < 1)
        return lk_fail(err, "--tile %dx%d: the width must be from 1 to %d points and the "
                            "height at least 1 step", width, height, LAB05_MAX_WIDTH);
    switch (method) {
    case LAB05_RUN_LINEAR:
    case LAB05_RUN_PERSISTENT:
        if (height != 1)
            return lk_fail(err, "--tile %dx%d: the %s baseline does one step per %s: use "
                                "--tile %dx1", width, height, method_names[method],
                           method == LAB05_RUN_LINEAR ? "launch" : "barrier", width);
        return 0;
    case LAB05_RUN_DIAMOND:
        if (width % 2 != 0 || width < 2 || height != width / 2)
            return lk_fail(err, "--tile %dx%d: a diamond W points wide is W/2 steps high, W "
                                "even: use e.g. --tile %dx%d (or --variant honeycomb)", width,
                           height, width < 2 ? 2 : width + width % 2, (width + width % 2) / 2);
        return 0;
    case LAB05_RUN_HONEYCOMB:
        if (2 * height > width)
            return lk_fail(err, "--tile %dx%d: a hexagon W points wide is at most W/2 steps "
                                "high: use a height <= %d", width, height, width / 2);
        return 0;
    case LAB05_RUN_BRUSS:
    case LAB05_RUN_BRUSS_LINEAR:
        break; /* checked above */
    }
    return lk_fail(err, "unknown variant %d", (int)method);
}

void lab05_tile_for_call(const char *call_variant, int call_given, const char *chosen_variant,
                         int *width, int *height)
{
    if (!call_given || strcmp(call_variant, chosen_variant) == 0)
        return;
    for (int v = 0; lab05_variants[v].name; v++)
        if (strcmp(lab05_variants[v].name, call_variant) == 0) {
            *width = lab05_variants[v].tile_x;
            *height = lab05_variants[v].tile_y;
        }
}

int lab05_check_options(const char *variant, int width, int height, lk_error *err)
{
    lab05_method m = LAB05_RUN_DIAMOND;
    if (lab05_method_parse(variant, &m, err) != 0)
        return -1;
    if (width == 0 && height == 0)
        return 0;
    return lab05_check_tile(m, width, height, err);
}

// u of point q of a state, 0 beyond the fixed ends.
static __device__ double u_at(const double *y, int n, long q)
{
    return q >= 0 && q < n ? y[2 * q] : 0.0;
}

// One Euler step of point p from cur into next (16-byte load and store of (u, v)). No
// __restrict__ here: the persistent kernel rewrites what it read two steps before, which
// the read-only cache that restrict allows could serve stale.
static __device__ void step_point(int n, long p, const double *cur, double *next)
{
    const double2 uv = ((const double2 *)cur)[p];
    double2 out;
    vstring_point_step(u_at(cur, n, p - 1), uv.x, u_at(cur, n, p + 1), uv.y, &out.x, &out.y);
    ((double2 *)next)[p] = out;
}

static __global__ void linear_step(int n, const double *__restrict__ cur,
                                   double *__restrict__ next)
{
    const long p = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (p < n)
        step_point(n, p, cur, next);
}

// All steps in one launch: every block stays resident (cooperative launch), a grid-wide
// barrier separates the steps; the result is in y[steps % 2].
static __global__ void persistent_steps(int n, int steps, double *y0, double *y1)
{
    const long stride = (long)gridDim.x * blockDim.x;
    for (int s = 0; s < steps; s++) {
        const double *cur = s % 2 == 0 ? y0 : y1;
        double *next = s % 2 == 0 ? y1 : y0;
        for (long p = (long)blockIdx.x * blockDim.x + threadIdx.x; p < n; p += stride)
            step_point(n, p, cur, next);
        cooperative_groups::this_grid().sync(); // CUDA's only grid-wide barrier is this C++ API
    }
}

static int run_linear(int n, int steps, int block, double **d, int *result, lk_error *err)
{
    const unsigned grid = (unsigned)((n + block - 1) / block);
    int cur = 0;
    for (int s = 0; s < steps; s++) {
        linear_step<<<grid, block>>>(n, d[cur], d[1 - cur]);
        LK_LAUNCH_TRY(err);
        cur = 1 - cur;
    }
    *result = cur;
    return 0;
}

static int run_persistent(int n, int steps, int block, double **d, int *result, lk_error *err)
{
    int dev = 0, coop = 0, sms = 0, per_sm = 0;
    LK_CUDA_TRY(err, cudaGetDevice(&dev));
    LK_CUDA_TRY(err, cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, dev));
    if (!coop)
        return lk_fail(err, "persistent: this GPU cannot launch cooperative kernels: use "
                            "--variant linear");
    LK_CUDA_TRY(err, cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    LK_CUDA_TRY(err, cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, persistent_steps,
                                                                   block, 0));
    if (per_sm < 1)
        return lk_fail(err, "persistent: a block of %d threads does not fit on an SM: use a "
                            "smaller --tile width", block);
    // Every block must be resident for the barrier: at most per_sm blocks per SM.
    long blocks = (long)per_sm * sms, needed = ((long)n + block - 1) / block;
    if (needed < blocks)
        blocks = needed;
    void *args[] = {&n, &steps, &d[0], &d[1]};
    if (steps > 0) {
        LK_CUDA_TRY(err, cudaLaunchCooperativeKernel((const void *)persistent_steps,
                                                     dim3((unsigned)blocks), dim3(block), args,
                                                     0, 0));
    }
    *result = steps % 2;
    return 0;
}

// A launcher that fails must say why; one that returns -1 silently gets a message here.
static int student_call(int rc, lk_error *err)
{
    if (rc == 0)
        return 0;
    if (rc == LAB05_NOT_ATTEMPTED)
        return lk_fail(err, "lab05_tile_row returned LAB05_NOT_ATTEMPTED: the honeycomb is "
                            "the stretch task (TODO 4 in kernels.cu); use --variant diamond");
    if (!err->msg[0])
        return lk_fail(err, "lab05_tile_row returned %d without a message: fill err "
                            "(LK_LAUNCH_TRY, lk_fail) so the failure can be explained", rc);
    return -1;
}

static int run_tiled(lab05_variant variant, int n, int steps, int width, int height,
                     double *d_y, double **d_edges, lk_error *err)
{
    const size_t edges = lab05_edge_doubles(n, width, height);
    LK_CUDA_TRY(err, cudaMalloc((void **)d_edges, edges * sizeof(double)));
    for (int row = 0; row < lab05_rows(steps, height); row++)
        if (student_call(lab05_tile_row(variant, n, steps, row, width, height, d_y, *d_edges,
                                         err), err) != 0)
            return -1;
    return 0;
}

// Like LK_CUDA_TRY, but leaves through the cleanup below instead of returning.
#define CUDA_GO(call)                                                                       \
    do {                                                                                    \
        cudaError_t code_ = (call);                                                         \
        if (code_ != cudaSuccess) {                                                         \
            lk_cuda_fail(err, code_, #call, __FILE__, __LINE__);                            \
            goto done;                                                                      \
        }                                                                                   \
    } while (0)

extern "C" int lab05_gpu_run(lab05_method method, int n, const double *y0, double *y_out,
                             int steps, int width, int height, lk_error *err)
{
    lk_error_clear(err);
    if (lab05_method_is_bruss(method))
        return lk_fail(err, "variant %s runs on a Brusselator, not on a string",
                       method_names[method]);
    if (lab05_check_tile(method, width, height, err) != 0)
        return -1;
    if (n < 1)
        return lk_fail(err, "a string of %d mass points: n must be >= 1", n);
    const size_t bytes = 2 * (size_t)n * sizeof(double);
    double *d[2] = {NULL, NULL}, *d_edges = NULL;
    int rc = -1, result = 0;
    CUDA_GO(cudaMalloc((void **)&d[0], bytes));
    CUDA_GO(cudaMemcpy(d[0], y0, bytes, cudaMemcpyHostToDevice));
    if (method == LAB05_RUN_LINEAR || method == LAB05_RUN_PERSISTENT) {
        CUDA_GO(cudaMalloc((void **)&d[1], bytes));
        if ((method == LAB05_RUN_LINEAR ? run_linear : run_persistent)(n, steps, width, d,
                                                                       &result, err) != 0)
            goto done;
    } else if (run_tiled((lab05_variant)method, n, steps, width, height, d[0], &d_edges,
                         err) != 0) {
        goto done;
    }
    // Errors inside the kernels (an out-of-bounds access) surface here, not at the launch.
    CUDA_GO(cudaDeviceSynchronize());
    CUDA_GO(cudaMemcpy(y_out, d[result], bytes, cudaMemcpyDeviceToHost));
    rc = 0;
done:
    // After a kernel fault every call fails: keep the first message, free what we can.
    cudaFree(d[0]);
    cudaFree(d[1]);
    cudaFree(d_edges);
    return rc;
}

// ---- the stretch model: the Brusselator --------------------------------------------------

// One Euler step of grid point p = k m + j from cur into next: its (U, V) and its four
// neighbours' (reflected at the border) as 16-byte loads.
static __global__ void bruss_linear_step(int m, const double *__restrict__ cur,
                                         double *__restrict__ next)
{
    const long p = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= (long)m * m)
        return;
    const int k = (int)(p / m), j = (int)(p % m);
    const double2 *y = (const double2 *)cur;
    const double2 me = y[p];
    const double2 n = y[(long)bruss_reflect(k - 1, m) * m + j];
    const double2 s = y[(long)bruss_reflect(k + 1, m) * m + j];
    const double2 w = y[(long)k * m + bruss_reflect(j - 1, m)];
    const double2 e = y[(long)k * m + bruss_reflect(j + 1, m)];
    double2 out;
    bruss_point_step(bruss_h(m), bruss_c(m), me.x, me.y, &n.x, &s.x, &w.x, &e.x,
                        &out.x, &out.y);
    ((double2 *)next)[p] = out;
}

static int run_bruss_linear(int m, int steps, int block, double **d, int *result, lk_error *err)
{
    const unsigned grid = (unsigned)(((long)m * m + block - 1) / block);
    int cur = 0;
    for (int s = 0; s < steps; s++) {
        bruss_linear_step<<<grid, block>>>(m, d[cur], d[1 - cur]);
        LK_LAUNCH_TRY(err);
        cur = 1 - cur;
    }
    *result = cur;
    return 0;
}

// A kernels.cu written before the stretch model existed has no lab05_bruss_launch: this weak
// default lets it build, and reports the stretch as not attempted. Yours replaces it.
extern "C" __attribute__((weak)) int lab05_bruss_launch(int, int, int, const double *, double *,
                                                        lk_error *)
{
    return LAB05_NOT_ATTEMPTED;
}

// As student_call, for the stretch's launcher.
static int bruss_call(int rc, lk_error *err)
{
    if (rc == 0)
        return 0;
    if (rc == LAB05_NOT_ATTEMPTED)
        return lk_fail(err, "lab05_bruss_launch returned LAB05_NOT_ATTEMPTED: the Brusselator "
                            "is the stretch model (TODO 5 in kernels.cu), not attempted; "
                            "--variant bruss-linear runs the given version");
    if (!err->msg[0])
        return lk_fail(err, "lab05_bruss_launch returned %d without a message: fill err "
                            "(LK_LAUNCH_TRY, lk_fail) so the failure can be explained", rc);
    return -1;
}

// Your launcher once per `height` steps (the last launch fewer), the states swapped between.
static int run_bruss_rows(int m, int steps, int rows, int height, double **d, int *result,
                          lk_error *err)
{
    if (rows == 0) {
        int dev = 0, sms = 0, smem = 0;
        LK_CUDA_TRY(err, cudaGetDevice(&dev));
        LK_CUDA_TRY(err, cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
        LK_CUDA_TRY(err, cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerBlockOptin,
                                                dev));
        if (lab05_bruss_auto_tile(m, sms, (size_t)smem, &rows, &height) != 0)
            return lk_fail(err, "m = %d: one grid row with a halo row on each side needs %zu "
                                "bytes of shared memory in two buffers, this GPU allows %d per "
                                "block: row bands cannot hold this grid (the stretch's lesson, "
                                "README.md); use --variant bruss-linear", m,
                           lab05_bruss_band_bytes(m, 1, 1), smem);
    }
    int cur = 0;
    for (int done = 0; done < steps; done += height) {
        const int levels = steps - done < height ? steps - done : height;
        if (bruss_call(lab05_bruss_launch(m, levels, rows, d[cur], d[1 - cur], err), err) != 0)
            return -1;
        cur = 1 - cur;
    }
    *result = cur;
    return 0;
}

extern "C" int lab05_bruss_gpu_run(lab05_method method, int m, const double *y0,
                                   double *y_out, int steps, int width, int height,
                                   lk_error *err)
{
    lk_error_clear(err);
    if (!lab05_method_is_bruss(method))
        return lk_fail(err, "variant %s runs on a string, not on a Brusselator",
                       method_names[method]);
    if (lab05_check_tile(method, width, height, err) != 0)
        return -1;
    if (m < BRUSS_MIN_M || m > BRUSS_MAX_M)
        return lk_fail(err, "a Brusselator of side %d: m must be from %d to %d", m,
                       BRUSS_MIN_M, BRUSS_MAX_M);
    const size_t bytes = bruss_components(m) * sizeof(double);
    double *d[2] = {NULL, NULL};
    int rc = -1, result = 0;
    CUDA_GO(cudaMalloc((void **)&d[0], bytes));
    CUDA_GO(cudaMalloc((void **)&d[1], bytes));
    CUDA_GO(cudaMemcpy(d[0], y0, bytes, cudaMemcpyHostToDevice));
    if ((method == LAB05_RUN_BRUSS_LINEAR
             ? run_bruss_linear(m, steps, width, d, &result, err)
             : run_bruss_rows(m, steps, width, height, d, &result, err)) != 0)
        goto done;
    // Errors inside the kernels (an out-of-bounds access) surface here, not at the launch.
    CUDA_GO(cudaDeviceSynchronize());
    CUDA_GO(cudaMemcpy(y_out, d[result], bytes, cudaMemcpyDeviceToHost));
    rc = 0;
done:
    cudaFree(d[0]);
    cudaFree(d[1]);
    return rc;
}
