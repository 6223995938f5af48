/* GPU tests of your kernels.cu. Whole runs must equal the serial reference bit for bit (the
   harness's step loop calling your launchers); single launcher calls on prepared data must
   update every interior cell exactly once and leave every border cell alone. */
#include <cuda_runtime_api.h>

#include "helpers.h"

#define CUDA_CHECK(call)                                                                    \
    do {                                                                                    \
        cudaError_t c_ = (call);                                                            \
        if (c_ != cudaSuccess)                                                              \
            cr_assert_fail("%s failed: %s (%s)", #call, cudaGetErrorName(c_),               \
                           cudaGetErrorString(c_));                                         \
    } while (0)

/* The fused variant is the stretch task: its tests skip while it is not attempted. */
static void require_fused(void)
{
    lab04_kernel_info info;
    lk_error err;
    lk_error_clear(&err);
    if (lab04_describe_kernel(LAB04_FUSED, LAB04_STEP, 30, 14, &info, &err) == LAB04_NOT_ATTEMPTED)
        cr_skip_test("the fused variant (stretch task, TODO 8) is not attempted: "
                     "lab04_describe_kernel returns LAB04_NOT_ATTEMPTED");
}

/* The fast variant is the second stretch: its tests skip while lab04_fast_step is given.c's
   default, which says LAB04_NOT_ATTEMPTED (a 3 x 3 run through the harness asks). */
static void require_fast(void)
{
    double z[9] = {0}, h[9] = {0}, out[9];
    lk_error err;
    lk_error_clear(&err);
    if (lab04_gpu_run(3, 3, z, h, out, 1, LAB04_FAST, 32, 1, &err) != 0 &&
        strstr(err.msg, "LAB04_NOT_ATTEMPTED"))
        cr_skip_test("the fast variant (stretch task) is not attempted: lab04_fast_step "
                     "is given.c's default");
}

static void require_stretch(const char *variant)
{
    if (strcmp(variant, "fused") == 0)
        require_fused();
    if (strcmp(variant, "fast") == 0)
        require_fast();
}

/* ---- Whole runs against the serial reference ----------------------------------------- */

typedef struct lab04_launch {
    lab04_variant variant;
    int tile_x, tile_y;
} lab04_launch;

static int run_lab04(const void *ctx, const sciddicat *sim, int steps, double *h_out,
                     lk_error *err)
{
    const lab04_launch *l = ctx;
    return lab04_gpu_run(sim->rows, sim->cols, sim->z, sim->h0, h_out, steps, l->variant,
                         l->tile_x, l->tile_y, err);
}

static void run_problem(const char *variant, const sciddicat *sim, int steps, int tile_x,
                        int tile_y, const char *md5, const char *name)
{
    lab04_variant v;
    lk_error err;
    LK_ASSERT_OK(lab04_variant_parse(variant, &v, &err), &err);
    const int is_default = tile_x == 0;
    if (is_default) {
        tile_x = lab04_variants[v].tile_x;
        tile_y = lab04_variants[v].tile_y;
    }
    const lab04_launch launch = {v, tile_x, tile_y};
    char what[160];
    snprintf(what, sizeof what, "%.80s, variant %s, tile %dx%d%s", name,
             lab04_variant_name(v), tile_x, tile_y, is_default ? " (default)" : "");
    lk_test_gpu_matches_serial(run_lab04, &launch, sim, steps, md5, what);
}

/* Dataset @p name for @p steps steps (-1: the manifest's); tile 0x0: the variant's default. */
static void run_dataset(const char *variant, const char *name, int steps, int tile_x,
                        int tile_y, int use_md5)
{
    LK_REQUIRE_GPU();
    require_stretch(variant);
    sciddicat sim;
    int dataset_steps;
    char md5[33];
    lk_test_load_dataset(name, &sim, &dataset_steps, md5);
    run_problem(variant, &sim, steps >= 0 ? steps : dataset_steps, tile_x, tile_y,
                use_md5 ? md5 : NULL, name);
    sciddicat_free(&sim);
}

/* The border-coverage cases (test_serial.c checks that their debris leaves through each of the
   four borders), so the cells along every border and in every last partial tile carry flow. */
static void run_every_border(const char *variant, int tile_x, int tile_y)
{
    LK_REQUIRE_GPU();
    require_stretch(variant);
    lab04_border_case cases[LAB04_MAX_BORDER_CASES];
    const int ncases = lab04_border_cases(cases);
    for (int k = 0; k < ncases; k++) {
        run_problem(variant, &cases[k].sim, cases[k].steps, tile_x, tile_y,
                    cases[k].md5[0] ? cases[k].md5 : NULL, cases[k].name);
        sciddicat_free(&cases[k].sim);
    }
}

/* The same list for each variant; (SX, SY) is its smallest tile, (WX, WY) a wide tile, M the
   largest square tile. */
#define VARIANT_RUNS(SUITE, V, SX, SY, WX, WY, M)                                                    \
    Test(SUITE, tiny_two_steps) { run_dataset(V, "sciddicat-tiny", -1, 0, 0, 0); }          \
    Test(SUITE, three_by_three) { run_dataset(V, "sciddicat-3x3", -1, 0, 0, 0); }           \
    Test(SUITE, one_row_strip_has_no_interior) { run_dataset(V, "sciddicat-row-strip", -1, 0, 0, 0); } \
    Test(SUITE, one_column_strip_has_no_interior) { run_dataset(V, "sciddicat-col-strip", -1, 0, 0, 0); } \
    Test(SUITE, three_row_strip_tile_7x5) { run_dataset(V, "sciddicat-thin-rows", -1, 7, 5, 0); } \
    Test(SUITE, three_column_strip_tile_7x5) { run_dataset(V, "sciddicat-thin-cols", -1, 7, 5, 0); } \
    Test(SUITE, odd_size_default_tile) { run_dataset(V, "sciddicat-odd", -1, 0, 0, 0); }    \
    Test(SUITE, odd_size_tile_7x5) { run_dataset(V, "sciddicat-odd", -1, 7, 5, 0); }       \
    Test(SUITE, odd_size_smallest_tile) { run_dataset(V, "sciddicat-odd", 20, SX, SY, 0); } \
    Test(SUITE, odd_size_wide_tile) { run_dataset(V, "sciddicat-odd", -1, WX, WY, 0); }    \
    Test(SUITE, odd_size_largest_tile) { run_dataset(V, "sciddicat-odd", -1, M, M, 0); }   \
    Test(SUITE, flow_reaching_each_border_tile_16x8) { run_every_border(V, 16, 8); }       \
    Test(SUITE, flow_reaching_each_border_tile_5x7) { run_every_border(V, 5, 7); }         \
    Test(SUITE, zero_steps_copies_the_input) { run_dataset(V, "sciddicat-odd", 0, 0, 0, 0); } \
    Test(SUITE, debris_on_every_cell_odd_size) { run_dataset(V, "sciddicat-wet-odd", -1, 0, 0, 1); } \
    Test(SUITE, course_size_610x496_4000_steps, .timeout = 600)                              \
    {                                                                                        \
        run_dataset(V, "sciddicat-course-size", -1, 0, 0, 1);                                \
    }

VARIANT_RUNS(halo, "halo", 1, 1, 62, 6, 30)
VARIANT_RUNS(nohalo, "nohalo", 1, 1, 128, 4, 32)
VARIANT_RUNS(fused, "fused", 1, 1, 62, 6, 30)
VARIANT_RUNS(fast, "fast", 32, 1, 128, 4, 32) /* one warp: lab04_check_tile */

/* No --variant and no --tile: the default variant with its default tile. */
Test(halo, default_variant_is_halo)
{
    lab04_variant v;
    lk_error err;
    LK_ASSERT_OK(lab04_variant_parse("", &v, &err), &err);
    cr_assert_eq(v, LAB04_HALO, "the default variant should be halo");
    run_dataset("", "sciddicat-odd", 50, 0, 0, 0);
}

/* ---- One launcher call: every interior cell exactly once, border cells untouched ------- */

/* A device copy of @p n doubles between two guard zones of poison, so that a write just
   before or after the array (row -1, row `rows`) is caught, not only a fault. */
typedef struct guarded {
    double *base, *p;
    size_t n, guard;
} guarded;

static void guarded_alloc(guarded *g, size_t n, size_t guard, const double *init)
{
    const size_t total = n + 2 * guard;
    double *host = (double *)malloc(total * sizeof *host);
    cr_assert(host, "out of memory");
    lk_poison(host, total);
    if (init)
        memcpy(host + guard, init, n * sizeof *host);
    g->n = n;
    g->guard = guard;
    CUDA_CHECK(cudaMalloc((void **)&g->base, total * sizeof *host));
    CUDA_CHECK(cudaMemcpy(g->base, host, total * sizeof *host, cudaMemcpyHostToDevice));
    g->p = g->base + guard;
    free(host);
}

/* Copy the array back into @p out and fail if a guard zone was written. */
static void guarded_fetch(guarded *g, double *out, const char *array, const char *label)
{
    const size_t total = g->n + 2 * g->guard;
    double *host = (double *)malloc(total * sizeof *host);
    cr_assert(host, "out of memory");
    CUDA_CHECK(cudaMemcpy(host, g->base, total * sizeof *host, cudaMemcpyDeviceToHost));
    for (size_t k = 0; k < g->guard; k++) {
        if (!lk_is_poison(host[g->guard - 1 - k]))
            cr_assert_fail("%s: %s was written %zu double(s) BEFORE its first element "
                           "(row -1?): check the bounds tests of your stores", label, array, k + 1);
        if (!lk_is_poison(host[g->guard + g->n + k]))
            cr_assert_fail("%s: %s was written %zu double(s) AFTER its last element (row "
                           "`rows`?): check the bounds tests of your stores", label, array, k + 1);
    }
    memcpy(out, host + g->guard, g->n * sizeof *host);
    free(host);
    CUDA_CHECK(cudaFree(g->base));
}

static void after_call(int rc, const lk_error *err, const char *label)
{
    if (rc != 0)
        cr_assert_fail("%s: returned %d: %s", label, rc,
                       err->msg[0] ? err->msg : "(no message: fill err)");
    cudaError_t c = cudaDeviceSynchronize();
    if (c != cudaSuccess)
        cr_assert_fail("%s: the kernel failed: %s (%s): an out-of-bounds access? run the test "
                       "under compute-sanitizer", label, cudaGetErrorName(c), cudaGetErrorString(c));
}

static void assert_unchanged(const double *before, const double *after, size_t n,
                             const char *array, const char *label)
{
    for (size_t k = 0; k < n; k++)
        if (!lab04_same(before[k], after[k]))
            cr_assert_fail("%s: %s changed at element %zu (%.17g -> %.17g): it is read-only",
                           label, array, k, before[k], after[k]);
}

static void once_width(lab04_variant v, int tx, int ty, int rows, int cols)
{
    const size_t n = (size_t)rows * cols, nf = SCIDDICAT_NFLOWS * n;
    double *z = malloc(n * sizeof *z), *before = malloc(n * sizeof *before);
    double *expected = malloc(n * sizeof *expected), *twice = malloc(n * sizeof *twice);
    double *got = malloc(n * sizeof *got), *Sf = malloc(nf * sizeof *Sf);
    double *Sf_after = malloc(nf * sizeof *Sf_after);
    cr_assert(z && before && expected && twice && got && Sf && Sf_after, "out of memory");
    lab04_random_state(rows, cols, 1000 + rows * 7 + cols, z, before);
    lab04_random_flows(rows, cols, 2000 + rows * 7 + cols, Sf);
    memcpy(expected, before, n * sizeof *before);
    lab04_serial_width(rows, cols, expected, Sf);
    memcpy(twice, expected, n * sizeof *before);
    lab04_serial_width(rows, cols, twice, Sf);

    char label[160];
    snprintf(label, sizeof label, "lab04_width, variant %s, tile %dx%d, %dx%d grid, one call",
             lab04_variant_name(v), tx, ty, rows, cols);
    guarded d_h, d_Sf;
    guarded_alloc(&d_h, n, 2 * (size_t)cols + 64, before);
    guarded_alloc(&d_Sf, nf, 2 * (size_t)cols + 64, Sf);
    lk_error err;
    lk_error_clear(&err);
    after_call(lab04_width(v, tx, ty, rows, cols, d_h.p, d_Sf.p, &err), &err, label);
    guarded_fetch(&d_h, got, "h", label);
    guarded_fetch(&d_Sf, Sf_after, "Sf", label);
    assert_unchanged(Sf, Sf_after, nf, "Sf", label);
    char msg[4096];
    if (lab04_check_width_once(rows, cols, before, expected, twice, got, msg, sizeof msg) != 0)
        cr_assert_fail("%s:%s", label, msg);
    free(z); free(before); free(expected); free(twice); free(got); free(Sf); free(Sf_after);
}

static void once_flows(lab04_variant v, int tx, int ty, int rows, int cols)
{
    const size_t n = (size_t)rows * cols, nf = SCIDDICAT_NFLOWS * n;
    double *z = malloc(n * sizeof *z), *h = malloc(n * sizeof *h);
    double *z_after = malloc(n * sizeof *z), *h_after = malloc(n * sizeof *h);
    double *Sf = malloc(nf * sizeof *Sf), *expected = malloc(nf * sizeof *expected);
    double *got = malloc(nf * sizeof *got);
    cr_assert(z && h && z_after && h_after && Sf && expected && got, "out of memory");
    lab04_random_state(rows, cols, 3000 + rows * 7 + cols, z, h);
    lab04_flows_input(rows, cols, z, h, Sf, expected);

    char label[160];
    snprintf(label, sizeof label, "lab04_flows, variant %s, tile %dx%d, %dx%d grid, one call",
             lab04_variant_name(v), tx, ty, rows, cols);
    guarded d_z, d_h, d_Sf;
    guarded_alloc(&d_z, n, 2 * (size_t)cols + 64, z);
    guarded_alloc(&d_h, n, 2 * (size_t)cols + 64, h);
    guarded_alloc(&d_Sf, nf, 2 * (size_t)cols + 64, Sf);
    lk_error err;
    lk_error_clear(&err);
    after_call(lab04_flows(v, tx, ty, rows, cols, d_z.p, d_h.p, d_Sf.p, &err), &err, label);
    guarded_fetch(&d_z, z_after, "z", label);
    guarded_fetch(&d_h, h_after, "h", label);
    guarded_fetch(&d_Sf, got, "Sf", label);
    assert_unchanged(z, z_after, n, "z", label);
    assert_unchanged(h, h_after, n, "h", label);
    char msg[4096];
    if (lab04_check_flows_once(rows, cols, expected, got, msg, sizeof msg) != 0)
        cr_assert_fail("%s:%s", label, msg);
    free(z); free(h); free(z_after); free(h_after); free(Sf); free(expected); free(got);
}

static void once_fused(int tx, int ty, int rows, int cols)
{
    const size_t n = (size_t)rows * cols;
    double *z = malloc(n * sizeof *z), *h = malloc(n * sizeof *h), *h_after = malloc(n * sizeof *h);
    double *expected = malloc(n * sizeof *expected), *got = malloc(n * sizeof *got);
    double *poison = malloc(n * sizeof *poison);
    cr_assert(z && h && h_after && expected && got && poison, "out of memory");
    lab04_random_state(rows, cols, 5000 + rows * 7 + cols, z, h);
    sciddicat sim = {.rows = rows, .cols = cols, .z = z, .h0 = h};
    lk_error err;
    LK_ASSERT_OK(sciddicat_serial(&sim, 1, expected, NULL, &err), &err);
    lk_poison(poison, n);

    char label[160];
    snprintf(label, sizeof label, "lab04_fused_step, tile %dx%d, %dx%d grid, one call", tx, ty,
             rows, cols);
    guarded d_z, d_h, d_out;
    guarded_alloc(&d_z, n, 2 * (size_t)cols + 64, z);
    guarded_alloc(&d_h, n, 2 * (size_t)cols + 64, h);
    guarded_alloc(&d_out, n, 2 * (size_t)cols + 64, poison);
    lk_error_clear(&err);
    int rc = lab04_fused_step(tx, ty, rows, cols, d_z.p, d_h.p, d_out.p, &err);
    if (rc == LAB04_NOT_ATTEMPTED)
        cr_skip_test("the fused variant (stretch task) is not attempted");
    after_call(rc, &err, label);
    guarded_fetch(&d_z, got, "z", label);
    assert_unchanged(z, got, n, "z", label);
    guarded_fetch(&d_h, h_after, "h_in", label);
    assert_unchanged(h, h_after, n, "h_in", label);
    guarded_fetch(&d_out, got, "h_out", label);
    char msg[4096];
    if (lab04_check_fused_once(rows, cols, expected, got, msg, sizeof msg) != 0)
        cr_assert_fail("%s:%s", label, msg);
    free(z); free(h); free(h_after); free(expected); free(got); free(poison);
}

/* The fast variant's first step updates every interior cell (its boxes start as the whole
   grid): one call must write each of them once and no border cell. */
static void once_fast(int tx, int ty, int rows, int cols)
{
    const size_t n = (size_t)rows * cols;
    double *z = malloc(n * sizeof *z), *h = malloc(n * sizeof *h), *h_after = malloc(n * sizeof *h);
    double *expected = malloc(n * sizeof *expected), *got = malloc(n * sizeof *got);
    double *poison = malloc(n * sizeof *poison);
    cr_assert(z && h && h_after && expected && got && poison, "out of memory");
    lab04_random_state(rows, cols, 7000 + rows * 7 + cols, z, h);
    sciddicat sim = {.rows = rows, .cols = cols, .z = z, .h0 = h};
    lk_error err;
    LK_ASSERT_OK(sciddicat_serial(&sim, 1, expected, NULL, &err), &err);
    lk_poison(poison, n);

    char label[160];
    snprintf(label, sizeof label, "lab04_fast_step, tile %dx%d, %dx%d grid, step 0", tx, ty,
             rows, cols);
    lab04_box boxes[LAB04_FAST_BOXES], *d_boxes;
    lab04_fast_boxes_init(rows, cols, boxes);
    CUDA_CHECK(cudaMalloc((void **)&d_boxes, sizeof boxes));
    CUDA_CHECK(cudaMemcpy(d_boxes, boxes, sizeof boxes, cudaMemcpyHostToDevice));
    guarded d_z, d_h, d_out;
    guarded_alloc(&d_z, n, 2 * (size_t)cols + 64, z);
    guarded_alloc(&d_h, n, 2 * (size_t)cols + 64, h);
    guarded_alloc(&d_out, n, 2 * (size_t)cols + 64, poison);
    lk_error_clear(&err);
    after_call(lab04_fast_step(0, tx, ty, rows, cols, d_z.p, d_h.p, d_out.p, d_boxes, &err),
               &err, label);
    CUDA_CHECK(cudaFree(d_boxes));
    guarded_fetch(&d_z, got, "z", label);
    assert_unchanged(z, got, n, "z", label);
    guarded_fetch(&d_h, h_after, "h_in", label);
    assert_unchanged(h, h_after, n, "h_in", label);
    guarded_fetch(&d_out, got, "h_out", label);
    char msg[4096];
    if (lab04_check_fused_once(rows, cols, expected, got, msg, sizeof msg) != 0)
        cr_assert_fail("%s:%s", label, msg);
    free(z); free(h); free(h_after); free(expected); free(got); free(poison);
}

/* Every size with every tile, plus the variant's largest square tile. */
static void once_everywhere(lab04_variant v, lab04_process p)
{
    LK_REQUIRE_GPU();
    if (v == LAB04_FUSED)
        require_fused();
    if (v == LAB04_FAST)
        require_fast();
    for (int s = 0; s < LAB04_NSIZES; s++)
        for (int t = 0; t <= LAB04_NTILES; t++) {
            const int rows = lab04_once_sizes[s][0], cols = lab04_once_sizes[s][1];
            const int tx = t < LAB04_NTILES ? lab04_once_tiles[t][0] : lab04_max_square_tile(v);
            const int ty = t < LAB04_NTILES ? lab04_once_tiles[t][1] : lab04_max_square_tile(v);
            if (!lab04_tile_applies(v, tx, ty))
                continue;
            lk_error err;
            LK_ASSERT_OK(lab04_check_tile(v, tx, ty, &err), &err);
            if (p == LAB04_FLOWS)
                once_flows(v, tx, ty, rows, cols);
            else if (p == LAB04_WIDTH)
                once_width(v, tx, ty, rows, cols);
            else if (v == LAB04_FAST)
                once_fast(tx, ty, rows, cols);
            else
                once_fused(tx, ty, rows, cols);
        }
}

Test(once, halo_flows_every_interior_cell_exactly_once) { once_everywhere(LAB04_HALO, LAB04_FLOWS); }
Test(once, halo_width_every_interior_cell_exactly_once) { once_everywhere(LAB04_HALO, LAB04_WIDTH); }
Test(once, nohalo_flows_every_interior_cell_exactly_once) { once_everywhere(LAB04_NOHALO, LAB04_FLOWS); }
Test(once, nohalo_width_every_interior_cell_exactly_once) { once_everywhere(LAB04_NOHALO, LAB04_WIDTH); }
Test(once, fused_step_every_interior_cell_exactly_once) { once_everywhere(LAB04_FUSED, LAB04_STEP); }
Test(once, fast_first_step_every_interior_cell_exactly_once) { once_everywhere(LAB04_FAST, LAB04_STEP); }

/* ---- The fast variant's boxes ------------------------------------------------------------ */

/* Step by step through lab04_fast_step: after each step the boxes and the thickness equal
   the CPU model's (tests/helpers.h), so the region is as tight as designed, not just safe. */
static void fast_boxes_follow_the_model(const char *name, int steps, int tx, int ty,
                                        int negative_zeros)
{
    LK_REQUIRE_GPU();
    require_fast();
    sciddicat sim;
    int dataset_steps;
    char md5[33];
    lk_test_load_dataset(name, &sim, &dataset_steps, md5);
    const int rows = sim.rows, cols = sim.cols;
    const size_t n = (size_t)rows * cols, bytes = n * sizeof(double);
    if (negative_zeros) /* a text grid may say "-0": the reference's first step makes it +0 */
        for (size_t k = 0; k < n; k += 3)
            if (sim.h0[k] == 0.0)
                sim.h0[k] = -0.0;
    double *cpu[2] = {malloc(bytes), malloc(bytes)}, *got = malloc(bytes);
    cr_assert(cpu[0] && cpu[1] && got, "out of memory");
    memcpy(cpu[0], sim.h0, bytes);
    memcpy(cpu[1], sim.h0, bytes);
    lab04_box boxes[LAB04_FAST_BOXES], gpu_boxes[LAB04_FAST_BOXES], *d_boxes;
    lab04_fast_boxes_init(rows, cols, boxes);
    double *d_z, *d_h[2];
    CUDA_CHECK(cudaMalloc((void **)&d_boxes, sizeof boxes));
    CUDA_CHECK(cudaMalloc((void **)&d_z, bytes));
    CUDA_CHECK(cudaMalloc((void **)&d_h[0], bytes));
    CUDA_CHECK(cudaMalloc((void **)&d_h[1], bytes));
    CUDA_CHECK(cudaMemcpy(d_boxes, boxes, sizeof boxes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_z, sim.z, bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_h[0], sim.h0, bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_h[1], sim.h0, bytes, cudaMemcpyHostToDevice));
    int cur = 0;
    for (int s = 0; s < steps; s++) {
        char label[200];
        snprintf(label, sizeof label, "fast variant, %s%s, tile %dx%d, step %d", name,
                 negative_zeros ? " with -0.0 cells" : "", tx, ty, s);
        lk_error err;
        lk_error_clear(&err);
        after_call(lab04_fast_step(s, tx, ty, rows, cols, d_z, d_h[cur], d_h[1 - cur], d_boxes,
                                   &err), &err, label);
        lab04_fast_cpu_step(s, rows, cols, sim.z, cpu[cur], cpu[1 - cur], boxes);
        cur = 1 - cur;
        CUDA_CHECK(cudaMemcpy(gpu_boxes, d_boxes, sizeof boxes, cudaMemcpyDeviceToHost));
        for (int k = 0; k < LAB04_FAST_BOXES; k++)
            cr_assert(memcmp(&gpu_boxes[k], &boxes[k], sizeof boxes[k]) == 0,
                      "%s: box %d is rows %d..%d x cols %d..%d, the model's %d..%d x %d..%d",
                      label, k, gpu_boxes[k].r0, gpu_boxes[k].r1, gpu_boxes[k].c0,
                      gpu_boxes[k].c1, boxes[k].r0, boxes[k].r1, boxes[k].c0, boxes[k].c1);
        CUDA_CHECK(cudaMemcpy(got, d_h[cur], bytes, cudaMemcpyDeviceToHost));
        lk_assert_grid_eq(cpu[cur], got, rows, cols, label);
    }
    double *expected = malloc(bytes);
    cr_assert(expected, "out of memory");
    lk_error err;
    LK_ASSERT_OK(sciddicat_serial(&sim, steps, expected, NULL, &err), &err);
    lk_assert_grid_eq(expected, got, rows, cols, "fast variant against the serial reference");
    cudaFree(d_boxes);
    cudaFree(d_z);
    cudaFree(d_h[0]);
    cudaFree(d_h[1]);
    free(cpu[0]); free(cpu[1]); free(got); free(expected);
    sciddicat_free(&sim);
}

Test(fast, boxes_follow_the_model_on_dry_data) { fast_boxes_follow_the_model("sciddicat-odd", 120, 32, 16, 0); }
Test(fast, boxes_follow_the_model_tile_7x5) { fast_boxes_follow_the_model("sciddicat-odd", 60, 7, 5, 0); }
Test(fast, boxes_follow_the_model_to_the_border) { fast_boxes_follow_the_model("sciddicat-dome", 150, 16, 8, 0); }
Test(fast, negative_zero_thickness_as_the_reference) { fast_boxes_follow_the_model("sciddicat-odd", 4, 32, 16, 1); }

/* ---- Shared memory and block shapes ---------------------------------------------------- */

/* The kernel a launcher describes must exist, have the variant's block shape, and use at
   least one double of shared memory per thread of its block (static + dynamic). */
static void check_kernel(lab04_variant v, lab04_process p, int tx, int ty, const void **kernel)
{
    lab04_kernel_info info;
    memset(&info, 0, sizeof info);
    lk_error err;
    lk_error_clear(&err);
    const char *proc = p == LAB04_FLOWS ? "flows" : p == LAB04_WIDTH ? "width" : "step";
    int rc = lab04_describe_kernel(v, p, tx, ty, &info, &err);
    if (rc == LAB04_NOT_ATTEMPTED && (v == LAB04_FUSED || v == LAB04_FAST))
        cr_skip_test("the %s variant (stretch task) is not attempted", lab04_variant_name(v));
    cr_assert_eq(rc, 0, "lab04_describe_kernel(%s, %s, tile %dx%d) returned %d: %s",
                 lab04_variant_name(v), proc, tx, ty, rc, err.msg);
    cr_assert_not_null(info.kernel, "lab04_describe_kernel(%s, %s): no kernel given: set "
                       "out->kernel = (const void *)your_kernel", lab04_variant_name(v), proc);
    struct cudaFuncAttributes a;
    cudaError_t c = cudaFuncGetAttributes(&a, info.kernel);
    if (c != cudaSuccess)
        cr_assert_fail("cudaFuncGetAttributes on the %s %s kernel failed: %s: is out->kernel "
                       "the __global__ function itself?", lab04_variant_name(v), proc,
                       cudaGetErrorString(c));
    int bx, by;
    lab04_block_of_tile(v, tx, ty, &bx, &by);
    cr_assert(info.block_x == bx && info.block_y == by,
              "%s %s kernel, tile %dx%d: block %dx%d, but the %s variant's block is %dx%d (%s)",
              lab04_variant_name(v), proc, tx, ty, info.block_x, info.block_y,
              lab04_variant_name(v), bx, by,
              v == LAB04_NOHALO || v == LAB04_FAST ? "the tile" : "the tile plus a one-cell ring");
    const size_t shared = a.sharedSizeBytes + info.dynamic_shared_bytes;
    const size_t threads = (size_t)bx * by;
    /* The fused kernel keeps four outflows of every cell of its block in shared memory; the
       fast one may hold them in registers (its warps pass them by shuffles), so it is exempt. */
    if (v == LAB04_FAST) {
        if (kernel)
            *kernel = info.kernel;
        return;
    }
    const int fused = v == LAB04_FUSED;
    const size_t need = (fused ? SCIDDICAT_NFLOWS : 1) * threads * sizeof(double);
    cr_assert_geq(shared, need,
                  "%s %s kernel, tile %dx%d: %zu bytes of shared memory per block (static %zu + "
                  "dynamic %zu), less than %zu (%s per thread of its %dx%d block): stage the "
                  "tile in shared memory", lab04_variant_name(v), proc, tx, ty, shared,
                  (size_t)a.sharedSizeBytes, info.dynamic_shared_bytes, need,
                  fused ? "four doubles" : "one double", bx, by);
    if (kernel)
        *kernel = info.kernel;
}

static void check_variant_kernels(lab04_variant v)
{
    LK_REQUIRE_GPU();
    static const int tiles[][2] = {{30, 6}, {16, 16}, {7, 5}, {1, 1}};
    if (v == LAB04_FAST)
        require_fast();
    for (int t = 0; t < 4; t++) {
        if (!lab04_tile_applies(v, tiles[t][0], tiles[t][1]))
            continue;
        if (v == LAB04_FUSED || v == LAB04_FAST) {
            check_kernel(v, LAB04_STEP, tiles[t][0], tiles[t][1], NULL);
            continue;
        }
        const void *flows = NULL, *width = NULL;
        check_kernel(v, LAB04_FLOWS, tiles[t][0], tiles[t][1], &flows);
        check_kernel(v, LAB04_WIDTH, tiles[t][0], tiles[t][1], &width);
        cr_assert_neq(flows, width, "%s: the flows and width kernels are the same function",
                      lab04_variant_name(v));
    }
}

Test(shared, halo_kernels_use_shared_memory_and_tile_plus_ring_blocks) { check_variant_kernels(LAB04_HALO); }
Test(shared, nohalo_kernels_use_shared_memory_and_tile_blocks) { check_variant_kernels(LAB04_NOHALO); }
Test(shared, fused_kernel_keeps_outflows_in_shared_memory) { check_variant_kernels(LAB04_FUSED); }
Test(shared, fast_kernel_exists_with_tile_blocks) { check_variant_kernels(LAB04_FAST); }

Test(shared, halo_and_nohalo_are_different_kernels)
{
    LK_REQUIRE_GPU();
    const void *hf, *hw, *nf, *nw;
    check_kernel(LAB04_HALO, LAB04_FLOWS, 30, 6, &hf);
    check_kernel(LAB04_HALO, LAB04_WIDTH, 30, 6, &hw);
    check_kernel(LAB04_NOHALO, LAB04_FLOWS, 30, 6, &nf);
    check_kernel(LAB04_NOHALO, LAB04_WIDTH, 30, 6, &nw);
    cr_assert(hf != nf && hw != nw, "the halo and nohalo variants launch the same kernels: "
              "write one kernel per variant");
}

/* ---- Errors ------------------------------------------------------------------------------ */

/* A block of more than 1024 threads cannot launch: the launcher must say so, not return 0. */
Test(errors, oversized_blocks_are_reported_as_launch_errors)
{
    LK_REQUIRE_GPU();
    const int rows = 12, cols = 10;
    const size_t n = (size_t)rows * cols;
    double *d_z, *d_h, *d_Sf;
    CUDA_CHECK(cudaMalloc((void **)&d_z, n * sizeof(double)));
    CUDA_CHECK(cudaMalloc((void **)&d_h, n * sizeof(double)));
    CUDA_CHECK(cudaMalloc((void **)&d_Sf, SCIDDICAT_NFLOWS * n * sizeof(double)));
    CUDA_CHECK(cudaMemset(d_z, 0, n * sizeof(double)));
    CUDA_CHECK(cudaMemset(d_h, 0, n * sizeof(double)));
    CUDA_CHECK(cudaMemset(d_Sf, 0, SCIDDICAT_NFLOWS * n * sizeof(double)));
    struct { const char *what; int rc; } calls[4];
    lk_error err[4];
    for (int k = 0; k < 4; k++)
        lk_error_clear(&err[k]);
    calls[0].what = "lab04_flows(halo, tile 32x32: a 34x34 block)";
    calls[0].rc = lab04_flows(LAB04_HALO, 32, 32, rows, cols, d_z, d_h, d_Sf, &err[0]);
    calls[1].what = "lab04_width(halo, tile 32x32: a 34x34 block)";
    calls[1].rc = lab04_width(LAB04_HALO, 32, 32, rows, cols, d_h, d_Sf, &err[1]);
    calls[2].what = "lab04_flows(nohalo, tile 64x32: a 64x32 block)";
    calls[2].rc = lab04_flows(LAB04_NOHALO, 64, 32, rows, cols, d_z, d_h, d_Sf, &err[2]);
    calls[3].what = "lab04_width(nohalo, tile 64x32: a 64x32 block)";
    calls[3].rc = lab04_width(LAB04_NOHALO, 64, 32, rows, cols, d_h, d_Sf, &err[3]);
    cudaFree(d_z);
    cudaFree(d_h);
    cudaFree(d_Sf);
    for (int k = 0; k < 4; k++) {
        cr_assert_eq(calls[k].rc, -1, "%s cannot launch, but returned %d (%s): check every "
                     "launch with LK_LAUNCH_TRY(err)", calls[k].what, calls[k].rc, err[k].msg);
        cr_assert(strstr(err[k].msg, "launch") || strstr(err[k].msg, "configuration"),
                  "%s: the error message should say the launch failed, got: %s",
                  calls[k].what, err[k].msg);
    }
}
