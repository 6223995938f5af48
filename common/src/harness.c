/* The steps of a lab driver (labkit/harness.h) in the order main.c takes them: start, load,
   the serial clock, the plan of GPU calls with their poisoning, timing and checks, finish.
   The options, the bench report and the outputs are files of their own (harness_*.c). */
#include "harness_state.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "labkit/compare.h"
#include "labkit/grid_io.h"

int lk_run_start(lk_run *run, const lk_lab *lab, int argc, char **argv)
{
    memset(run, 0, sizeof *run);
    run->lab = lab;
    run->prog = argv[0];
    run->serial_steps = -1;
    lk_error_clear(&run->err);
    int rc = lk_options_parse(argc, argv, lab, &run->opt, &run->err);
    if (rc > 0) /* -h or --list-datasets: printed */
        return -1;
    if (rc < 0) {
        lk_run_usage_error(run);
        return -1;
    }
    /* --once times the first call: load every kernel with the context, not at first use. */
    if (run->opt.once)
        setenv("CUDA_MODULE_LOADING", "EAGER", 1);
    run->state = calloc(1, sizeof *run->state);
    if (!run->state) {
        lk_fail(&run->err, "out of memory");
        fprintf(stderr, "%s: %s\n", run->prog, run->err.msg);
        run->status = 1;
        return -1;
    }
    return 0;
}

int lk_run_usage_error(lk_run *run)
{
    fprintf(stderr, "%s: %s\n", run->prog, run->err.msg);
    free(run->state);
    run->state = NULL;
    run->status = EXIT_USAGE;
    return run->status;
}

int lk_run_choose_steps(const lk_run *run, int dataset_steps, int default_steps)
{
    if (run->opt.steps >= 0)
        return run->opt.steps;
    return dataset_steps >= 0 ? dataset_steps : default_steps;
}

int lk_run_open_dataset(lk_run *run, const lk_dataset_kind *kind, void *problem,
                        int *dataset_steps)
{
    const lk_options *o = &run->opt;
    snprintf(run->label, sizeof run->label, "%s", o->dataset ? o->dataset : o->gen);
    const int rc = o->dataset ? lk_dataset_load(kind, LK_TOP_DIR "/datasets/MANIFEST", o->dataset,
                                                problem, dataset_steps, NULL, &run->err)
                              : kind->generate(o->gen, problem, &run->err);
    return rc != 0 ? lk_run_fail(run) : 0;
}

int lk_run_fail(lk_run *run)
{
    if (run->status == 0)
        run->status = 1;
    return -1;
}

/* ---- the plan of GPU calls ------------------------------------------------------------- */

static void launch_label(const lk_lab *lab, const lk_options *o, launch *l)
{
    const lk_variant *v = lk_lab_variant_at(lab, l->variant);
    char *p = l->label;
    size_t size = sizeof l->label;
    int n = v ? snprintf(p, size, "variant %s, ", v->name) : 0;
    if (lab->options & LK_OPT_TILE)
        snprintf(p + n, size - n, "tile %dx%d", l->tile_x, l->tile_y);
    else if (o->block_x > 0)
        snprintf(p + n, size - n, "block %dx%d", o->block_x, o->block_y);
    else if (n >= 2) /* the lab's code chooses its blocks (lab 06): the variant alone */
        p[n - 2] = '\0';
}

static void add_launch(lk_run *run, int variant)
{
    struct lk_run_state *st = run->state;
    const lk_lab *lab = run->lab;
    launch *l = &st->launches[st->nlaunches++];
    memset(l, 0, sizeof *l);
    l->variant = variant;
    l->given = -1;
    const lk_variant *v = lk_lab_variant_at(lab, variant);
    l->tile_x = run->opt.tile_x;
    l->tile_y = run->opt.tile_y;
    if (v && l->tile_x == 0 && l->tile_y == 0) {
        l->tile_x = v->tile_x;
        l->tile_y = v->tile_y;
    }
    if (run->opt.bench && (!v || !v->given))
        for (int i = 0; i < lk_lab_nvariants(lab); i++)
            if (lab->variants[i].given)
                l->given = i;
    if (run->opt.bench && v && !v->given && v->compare_with)
        l->given = lk_lab_find_variant(lab, v->compare_with);
    launch_label(lab, &run->opt, l);
}

static int plan_calls(lk_run *run)
{
    struct lk_run_state *st = run->state;
    const lk_options *o = &run->opt;
    const lk_lab *lab = run->lab;
    int chosen = o->variant[0] ? lk_lab_find_variant(lab, o->variant) : lk_lab_default_variant(lab);
    if (o->bench && !o->variant[0] && lk_lab_nvariants(lab) > 0) {
        /* Every variant of the lab's own code at its default tile. */
        for (int i = 0; i < lk_lab_nvariants(lab) && st->nlaunches < 8; i++)
            if (!lab->variants[i].given && !lab->variants[i].cpu &&
                !lab->variants[i].named_only)
                add_launch(run, i);
    }
    if (st->nlaunches == 0)
        add_launch(run, chosen);
    const int repeat = o->bench && o->repeat == 1 ? 5 : o->repeat;
    const int per_launch = o->bench ? 1 + 4 * repeat : 1 + repeat;
    st->plan = calloc((size_t)st->nlaunches * per_launch, sizeof *st->plan);
    for (int k = 0; k < NSERIES; k++)
        st->samples[k] = calloc(repeat, sizeof(double));
    if (!st->plan || !st->samples[NSERIES - 1] || !st->samples[0])
        return lk_fail(&run->err, "out of memory");
    planned *p = st->plan;
    for (int l = 0; l < st->nlaunches; l++) {
        if (o->once) {
            *p++ = (planned){CALL_ONCE, l, run->steps};
            continue;
        }
        if (!o->bench) {
            *p++ = (planned){CALL_CHECKED, l, run->steps};
            for (int i = 0; i < repeat; i++)
                *p++ = (planned){CALL_TIMED, l, run->steps};
            continue;
        }
        /* N-step and 0-step runs alternate, so that each pair sees the same state of the
           host and the GPU (bench_report subtracts pair by pair). */
        *p++ = (planned){CALL_CHECKED, l, run->serial_steps};
        for (int i = 0; i < repeat; i++) {
            *p++ = (planned){CALL_STEPS, l, run->steps};
            *p++ = (planned){CALL_ZERO, l, 0};
        }
        if (st->launches[l].given >= 0) {
            int bsteps = lab->baseline_steps > 0 ? lab->baseline_steps : run->steps;
            for (int i = 0; i < repeat; i++) {
                *p++ = (planned){CALL_GIVEN_STEPS, l, bsteps};
                *p++ = (planned){CALL_GIVEN_ZERO, l, 0};
            }
        }
    }
    st->nplan = (int)(p - st->plan);
    return 0;
}

/* ---- loading and the serial reference ------------------------------------------------- */

int lk_run_loaded(lk_run *run, const lk_output_shape *shape, int ninputs,
                  const void *const *inputs, const size_t *input_bytes)
{
    if (run->status != 0)
        return -1;
    struct lk_run_state *st = run->state;
    const lk_options *o = &run->opt;
    run->shape = *shape;
    const size_t w = (size_t)shape->cols + 2 * shape->ghost, h = (size_t)shape->rows + 2 * shape->ghost;
    run->len = (size_t)shape->fields * w * h;
    run->serial_steps = o->bench ? o->serial_steps : o->serial ? run->steps : -1;
    st->gpu_needed = o->bench || o->gpu;
    const int serial = run->serial_steps >= 0;
    run->expected = serial ? malloc(run->len * sizeof(double)) : NULL;
    run->gpu = st->gpu_needed ? malloc(run->len * sizeof(double)) : NULL;
    if ((serial && !run->expected) || (st->gpu_needed && !run->gpu)) {
        lk_fail(&run->err, "out of memory for %d x %d grids", shape->rows, shape->cols);
        return lk_run_fail(run);
    }
    if (!st->gpu_needed)
        return 0;
    /* The student's code gets the inputs as const pointers; a copy proves they stay so. */
    st->ninputs = ninputs < 4 ? ninputs : 4;
    for (int i = 0; i < st->ninputs; i++) {
        st->inputs[i] = inputs[i];
        st->input_bytes[i] = input_bytes[i];
        st->input_copies[i] = malloc(input_bytes[i] ? input_bytes[i] : 1);
        if (!st->input_copies[i]) {
            lk_fail(&run->err, "out of memory for a copy of the inputs");
            return lk_run_fail(run);
        }
        memcpy(st->input_copies[i], inputs[i], input_bytes[i]);
    }
    const int chosen = o->variant[0] ? lk_lab_find_variant(run->lab, o->variant)
                                     : lk_lab_default_variant(run->lab);
    if (!o->bench && chosen >= 0 && run->lab->variants[chosen].cpu) {
        st->cpu_only = 1;
        snprintf(run->r.device, sizeof run->r.device, "the CPU (variant %s, no GPU used)",
                 o->variant);
        return 0;
    }
    char reason[256];
    if (!lk_gpu_available(reason, sizeof reason)) {
        lk_fail(&run->err, "%s: run on a machine with a GPU, or use --serial "
                           "(see `make doctor`)", reason);
        return lk_run_fail(run);
    }
    if (lk_gpu_describe(run->r.device, sizeof run->r.device, &run->err) != 0)
        return lk_run_fail(run);
    return 0;
}

int lk_run_serial_begin(lk_run *run)
{
    if (run->status != 0 || run->serial_steps < 0)
        return 0;
    run->state->serial_t0 = lk_wall_seconds();
    return 1;
}

void lk_run_serial_end(lk_run *run, int rc)
{
    double s = lk_wall_seconds() - run->state->serial_t0;
    if (rc != 0) {
        lk_run_fail(run);
        return;
    }
    run->r.ran_serial = 1;
    run->r.serial_s = s;
    run->state->serial_ms_step = run->serial_steps > 0 ? s * 1e3 / run->serial_steps : 0.0;
}

/* ---- GPU calls ------------------------------------------------------------------------ */

static int inputs_unchanged(lk_run *run)
{
    struct lk_run_state *st = run->state;
    for (int i = 0; i < st->ninputs; i++)
        if (memcmp(st->inputs[i], st->input_copies[i], st->input_bytes[i]) != 0)
            return lk_fail(&run->err, "your GPU code modified its input (input %d of the call, "
                                      "host memory): inputs are read-only; copy them first",
                           i + 1);
    return 0;
}

static int series_of(call_kind k)
{
    switch (k) {
    case CALL_ZERO: return SERIES_ZERO;
    case CALL_GIVEN_STEPS: return SERIES_GIVEN_STEPS;
    case CALL_GIVEN_ZERO: return SERIES_GIVEN_ZERO;
    default: return SERIES_STEPS;
    }
}

/* The output a planned call writes into. */
static double *output_of(lk_run *run, const planned *p)
{
    struct lk_run_state *st = run->state;
    if (p->kind == CALL_CHECKED || p->kind == CALL_ONCE)
        return run->gpu;
    if (p->kind == CALL_STEPS && !st->have_steps_ref)
        return st->steps_ref;
    return st->scratch;
}

/* Check the call just made; -1 fails the run (or, under --bench, its launch). */
static int after_call(lk_run *run, const planned *p, double ms)
{
    struct lk_run_state *st = run->state;
    lk_gpu_call *c = &st->call;
    if (p->kind == CALL_CHECKED || p->kind == CALL_ONCE)
        lk_poison_device_allocations(0);
    if (c->rc != 0) {
        if (c->err.msg[0])
            run->err = c->err;
        else
            lk_fail(&run->err, "your GPU code returned %d without a message: fill err "
                               "(LK_CUDA_TRY, LK_LAUNCH_TRY, lk_fail)", c->rc);
        return -1;
    }
    cudaError_t e = st->cpu_only ? cudaSuccess : cudaGetLastError();
    if (e != cudaSuccess)
        return lk_cuda_fail(&run->err, e, "after your GPU code returned", __FILE__, __LINE__);
    if (!c->given && inputs_unchanged(run) != 0)
        return -1;
    char where[256];
    const double *against = NULL;
    const char *what = NULL;
    if (p->kind == CALL_CHECKED && run->opt.bench) {
        against = run->expected, what = "differs from the serial reference";
    } else if (p->kind == CALL_TIMED) {
        against = run->gpu, what = "differs from its first run on the same input (a race "
                                   "condition, or a buffer read before it is written?)";
    } else if (p->kind == CALL_STEPS && st->have_steps_ref) {
        against = st->steps_ref, what = "differs between two timed runs on the same input";
    } else if (p->kind == CALL_STEPS) {
        st->have_steps_ref = 1;
    }
    /* A tolerance lab's outputs are judged against its reference, not compared bit for bit
       with the serial one (bench) or, for a variant whose order changes, with the first. */
    const lk_variant *v = lk_lab_variant_at(run->lab, run->state->launches[p->launch].variant);
    if (against && run->shape.judge &&
        (against == run->expected || (v && v->reorders && !c->given))) {
        size_t nd = run->shape.judge(run->shape.judge_ctx, c->out, where, sizeof where);
        if (nd)
            return lk_fail(&run->err, "your GPU result after %d steps is out of the tolerance "
                                      "of the reference: %zu values, first %s", p->steps, nd,
                           where);
    } else if (against) {
        size_t nd = lk_output_diff(&run->shape, against, c->out, where, sizeof where);
        if (nd)
            return lk_fail(&run->err, "your GPU result after %d steps %s: %zu values differ, "
                                      "first %s", p->steps, what, nd, where);
    }
    if (p->kind != CALL_CHECKED) {
        int s = series_of(p->kind);
        st->samples[s][st->nsamples[s]++] = ms;
    }
    return 0;
}

/* The host buffers the GPU calls copy from and to, page-locked: a whole run's transfers then
   take the same time on every call (pageable ones varied by 10-15 ms on an H100, more than
   200 steps of a fast kernel). Buffers under 1 MiB may share a page with another one and
   gain nothing: they stay pageable. A failed registration leaves the buffer pageable and its
   error cleared, so that it is not taken for the student's. */
enum { PIN_MIN_BYTES = 1 << 20 };

static void pin_buffer(struct lk_run_state *st, const void *p, size_t bytes)
{
    if (!p || bytes < PIN_MIN_BYTES || st->npinned == (int)(sizeof st->pinned / sizeof *st->pinned))
        return;
    cudaError_t e = cudaHostRegister((void *)p, bytes, cudaHostRegisterDefault);
    if (e == cudaSuccess) {
        st->pinned[st->npinned++] = (void *)p;
        return;
    }
    (void)cudaGetLastError();
    if (!st->unpinned_reason[0])
        snprintf(st->unpinned_reason, sizeof st->unpinned_reason, "cudaHostRegister: %s",
                 cudaGetErrorString(e));
}

static void pin_buffers(lk_run *run)
{
    struct lk_run_state *st = run->state;
    const size_t out_bytes = run->len * sizeof(double);
    for (int i = 0; i < st->ninputs; i++)
        pin_buffer(st, st->inputs[i], st->input_bytes[i]);
    pin_buffer(st, run->gpu, out_bytes);
    pin_buffer(st, st->scratch, out_bytes);
    pin_buffer(st, st->steps_ref, out_bytes);
}

/* Before the lab frees its inputs: the last GPU call has returned, or failed. */
static void unpin_buffers(struct lk_run_state *st)
{
    for (int i = 0; i < st->npinned; i++)
        cudaHostUnregister(st->pinned[i]);
    if (st->npinned)
        (void)cudaGetLastError();
    st->npinned = 0;
}

/* Set up the harness's side before the first call: plan, buffers, warm-up. */
static int first_call(lk_run *run)
{
    struct lk_run_state *st = run->state;
    if (plan_calls(run) != 0)
        return -1;
    st->scratch = malloc(run->len * sizeof(double));
    st->steps_ref = run->opt.bench ? malloc(run->len * sizeof(double)) : NULL;
    if (!st->scratch || (run->opt.bench && !st->steps_ref))
        return lk_fail(&run->err, "out of memory for %d x %d grids", run->shape.rows,
                       run->shape.cols);
    if (!st->cpu_only)
        pin_buffers(run);
    if (run->opt.once || run->opt.bench) {
        /* The yardstick of --bench; for --once also the warm-up before the timed call. */
        lk_copy_bandwidth bw;
        if (lk_gpu_copy_bandwidth(run->shape.copy_bytes, run->opt.bench ? 5 : 3, &bw,
                                  &run->err) != 0)
            return -1;
        run->r.copy = bw;
    }
    if (run->opt.bench)
        lk_bench_header(run);
    return 0;
}

/* --judge FILE: the GPU output is FILE's doubles, written by a graded driver; nothing runs. */
static void judge_output(lk_run *run)
{
    if (lk_read_binary(run->opt.judge, run->gpu, run->len, &run->err) != 0) {
        lk_run_fail(run);
        return;
    }
    run->r.ran_gpu = 1;
}

static lk_gpu_call *next_gpu_call(lk_run *run)
{
    struct lk_run_state *st = run->state;
    if (run->status != 0 || !st || !st->gpu_needed)
        return NULL;
    if (run->opt.judge) {
        if (!run->r.ran_gpu)
            judge_output(run);
        return NULL;
    }
    if (st->plan == NULL) {
        if (first_call(run) != 0) {
            lk_run_fail(run);
            return NULL;
        }
    } else {
        /* The call handed out last has returned: stop its clock, check it. */
        cudaError_t sync = st->cpu_only ? cudaSuccess : cudaDeviceSynchronize();
        double ms = (lk_wall_seconds() - st->call_t0) * 1e3;
        const planned *p = &st->plan[st->next - 1];
        launch *l = &st->launches[p->launch];
        int rc = sync != cudaSuccess && st->call.rc == 0
                     ? lk_cuda_fail(&run->err, sync, "cudaDeviceSynchronize() after your GPU code",
                                    __FILE__, __LINE__)
                     : after_call(run, p, ms);
        if (rc != 0 && (!run->opt.bench || sync != cudaSuccess)) {
            lk_poison_device_allocations(0);
            lk_run_fail(run);
            return NULL;
        }
        if (rc != 0)
            lk_bench_launch_failed(run, l);
        else if (run->opt.bench &&
                 (st->next == st->nplan || st->plan[st->next].launch != p->launch) &&
                 lk_bench_report(run, l, &run->err) != 0) {
            lk_run_fail(run);
            return NULL;
        }
    }
    if (st->next == st->nplan) {
        if (st->bench_failed) {
            lk_fail(&run->err, "bench: a launch failed (see above)");
            lk_run_fail(run);
        }
        run->r.ran_gpu = run->status == 0;
        if (run->status == 0 && !run->opt.bench) {
            int s = SERIES_STEPS;
            lk_stats_of(st->samples[s], st->nsamples[s], &run->r.gpu_ms);
        }
        return NULL;
    }
    const planned *p = &st->plan[st->next++];
    const launch *l = &st->launches[p->launch];
    const int given = p->kind == CALL_GIVEN_STEPS || p->kind == CALL_GIVEN_ZERO;
    const lk_variant *v = lk_lab_variant_at(run->lab, given ? l->given : l->variant);
    lk_gpu_call *c = &st->call;
    memset(c, 0, sizeof *c);
    lk_error_clear(&c->err);
    c->out = output_of(run, p);
    c->steps = p->steps;
    c->block_x = run->opt.block_x;
    c->block_y = run->opt.block_y;
    c->tile_x = l->tile_x;
    c->tile_y = l->tile_y;
    c->variant = v ? v->name : "";
    c->given = v ? v->given : 0;
    lk_poison(c->out, run->len);
    if (p->kind == CALL_CHECKED || p->kind == CALL_ONCE)
        lk_poison_device_allocations(1);
    /* Work left on any stream by the previous call must not land in this call's time. */
    if (!st->cpu_only)
        cudaDeviceSynchronize();
    st->call_t0 = lk_wall_seconds();
    return c;
}

lk_gpu_call *lk_run_next_gpu_call(lk_run *run)
{
    lk_gpu_call *c = next_gpu_call(run);
    if (!c && run->state)
        unpin_buffers(run->state);
    return c;
}

int lk_run_finish(lk_run *run)
{
    struct lk_run_state *st = run->state;
    if (run->status == 0 && run->r.compared && !run->r.match)
        run->status = EXIT_MISMATCH;
    if (run->status == 0 && !run->opt.bench) {
        lk_run_print_summary(run);
        lk_run_write_diff_png(run);
    } else if (run->status == EXIT_MISMATCH) {
        lk_run_print_summary(run);
        lk_run_write_diff_png(run);
    }
    else if (run->status != 0)
        fprintf(stderr, "%s: %s\n", run->prog, run->err.msg);
    if (run->opt.json)
        lk_run_write_json(stdout, run);
    if (run->opt.result_fd >= 0) {
        int fd = dup(run->opt.result_fd);
        FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
        if (!f) {
            fprintf(stderr, "%s: --result-fd %d: not an open file descriptor\n", run->prog,
                    run->opt.result_fd);
            if (run->status == 0)
                run->status = 1;
        } else {
            lk_run_write_json(f, run);
            fclose(f);
        }
    }
    if (st) {
        unpin_buffers(st);
        for (int i = 0; i < st->ninputs; i++)
            free(st->input_copies[i]);
        for (int k = 0; k < NSERIES; k++)
            free(st->samples[k]);
        free(st->plan);
        free(st->scratch);
        free(st->steps_ref);
        free(st);
        run->state = NULL;
    }
    free(run->expected);
    free(run->gpu);
    run->expected = run->gpu = NULL;
    return run->status;
}
