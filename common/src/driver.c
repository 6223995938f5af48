#include "labkit/driver.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "labkit/cli.h"
#include "labkit/compare.h"
#include "labkit/cuda_check.h"
#include "labkit/json.h"
#include "labkit/timing.h"

#ifndef LK_TOP_DIR
#error "compile with -DLK_TOP_DIR='\"path to the kit\"'"
#endif

enum { EXIT_USAGE = 2, EXIT_MISMATCH = 3 };
enum { MODE_BOTH, MODE_SERIAL, MODE_GPU };

typedef struct options {
    const char *dataset, *gen, *out, *bin, *png, *csv;
    const char *files[3];
    int nfiles;
    int steps; /* -1: the dataset's, else the model's default */
    double time; /* < 0: not given */
    int mode, repeat, json, result_fd, bench, standard, serial_steps;
    lk_launch launch;
} options;

typedef struct gpu_call {
    const lk_driver_lab *lab;
    lk_driver_gpu_fn fn;
    const void *problem;
    double *out;
    int steps;
    const lk_launch *launch;
} gpu_call;

static int call_gpu(void *ctx, lk_error *err)
{
    gpu_call *c = ctx;
    return c->fn(c->lab->ctx, c->problem, c->out, c->steps, c->launch, err);
}

static void usage(FILE *f, const char *prog, const lk_model *model, const lk_driver_lab *lab)
{
    for (int i = 0; model->usage_forms[i]; i++)
        fprintf(f, "%s %s %s\n", i == 0 ? "usage:" : "      ", prog, model->usage_forms[i]);
    fprintf(f,
            "%s, lab %s: runs the serial reference and your GPU code, compares them.\n"
            "  -d, --dataset NAME   a dataset of datasets/MANIFEST (its steps are the default)\n"
            "  -g, --gen SPEC       %s\n"
            "      --standard       the lab's standard dataset (%s)\n"
            "  -s, --steps N        %s\n",
            model->title, lab->name, model->gen_help, lab->standard_dataset, model->steps_help);
    if (model->time_help)
        fprintf(f, "  -t, --time SECONDS   %s\n", model->time_help);
    fprintf(f,
            "      --serial         run only the serial reference\n"
            "      --gpu            run only your GPU code (default: both, compared)\n"
            "  -b, --block WxH      thread block, x along columns (default %dx%d)\n"
            "      --tile WxH       tile size (tiled labs)\n"
            "      --variant NAME   %s\n"
            "  -o, --out FILE       %s\n"
            "      --bin FILE       %s\n"
            "      --png FILE       %s\n"
            "  -r, --repeat N       time N GPU runs (after the checked run), report the median\n"
            "      --json           print one machine-readable result line\n"
            "      --result-fd N    also write that line to file descriptor N\n"
            "      --bench          performance report on %s (GPU)\n"
            "      --serial-steps N serial steps timed by --bench (default %d)\n"
            "      --csv FILE       append the --bench result to FILE as CSV\n"
            "  -h, --help           this text\n"
            "Exit status: 0 ok, 1 error, 2 bad usage, 3 GPU result differs from serial.\n",
            lab->launch.block_x, lab->launch.block_y,
            lab->variant_help ? lab->variant_help : "kernel variant (labs with several)",
            model->out_help, model->bin_help, model->png_help, lab->bench_dataset,
            lab->bench_serial_steps);
}

static int parse_options(int argc, char **argv, const lk_model *model, const lk_driver_lab *lab,
                         options *o, lk_error *err)
{
    enum { O_SERIAL = 256, O_GPU, O_TILE, O_VARIANT, O_BIN, O_PNG, O_JSON, O_FD, O_BENCH,
           O_CSV, O_STANDARD, O_SERIAL_STEPS };
    /* --time and -t exist only for models with a simulated time (the first entry). */
    static const struct option all_options[] = {
        {"time", required_argument, 0, 't'},
        {"dataset", required_argument, 0, 'd'}, {"gen", required_argument, 0, 'g'},
        {"standard", no_argument, 0, O_STANDARD}, {"steps", required_argument, 0, 's'},
        {"serial", no_argument, 0, O_SERIAL},   {"gpu", no_argument, 0, O_GPU},
        {"block", required_argument, 0, 'b'},   {"tile", required_argument, 0, O_TILE},
        {"variant", required_argument, 0, O_VARIANT}, {"out", required_argument, 0, 'o'},
        {"bin", required_argument, 0, O_BIN},   {"png", required_argument, 0, O_PNG},
        {"repeat", required_argument, 0, 'r'},  {"json", no_argument, 0, O_JSON},
        {"result-fd", required_argument, 0, O_FD}, {"bench", no_argument, 0, O_BENCH},
        {"serial-steps", required_argument, 0, O_SERIAL_STEPS},
        {"csv", required_argument, 0, O_CSV},   {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    memset(o, 0, sizeof *o);
    o->steps = -1;
    o->time = -1.0;
    o->repeat = 1;
    o->result_fd = -1;
    o->launch = lab->launch;
    o->serial_steps = lab->bench_serial_steps;
    const struct option *long_options = model->time_help ? all_options : all_options + 1;
    const char *shorts = model->time_help ? ":d:g:s:t:b:o:r:h" : ":d:g:s:b:o:r:h";
    opterr = 0;
    int opt, rc = 0;
    while (rc == 0 && (opt = getopt_long(argc, argv, shorts, long_options, NULL)) != -1) {
        switch (opt) {
        case 'd': o->dataset = optarg; break;
        case 'g': o->gen = optarg; break;
        case O_STANDARD: o->standard = 1; break;
        case 's': rc = lk_parse_int("--steps", optarg, 0, 100000000, &o->steps, err); break;
        case 't': rc = lk_parse_double("--time", optarg, 0.0, 1e9, &o->time, err); break;
        case O_SERIAL: o->mode = MODE_SERIAL; break;
        case O_GPU: o->mode = MODE_GPU; break;
        case 'b': rc = lk_parse_dims("--block", optarg, 1024, &o->launch.block_x, &o->launch.block_y, err); break;
        case O_TILE: rc = lk_parse_dims("--tile", optarg, 1024, &o->launch.tile_x, &o->launch.tile_y, err); break;
        case O_VARIANT:
            if (strlen(optarg) >= sizeof o->launch.variant)
                rc = lk_fail(err, "--variant: '%s' is too long", optarg);
            else
                strcpy(o->launch.variant, optarg);
            break;
        case 'o': o->out = optarg; break;
        case O_BIN: o->bin = optarg; break;
        case O_PNG: o->png = optarg; break;
        case 'r': rc = lk_parse_int("--repeat", optarg, 1, 1000, &o->repeat, err); break;
        case O_JSON: o->json = 1; break;
        case O_FD: rc = lk_parse_int("--result-fd", optarg, 0, 1 << 20, &o->result_fd, err); break;
        case O_BENCH: o->bench = 1; break;
        case O_SERIAL_STEPS: rc = lk_parse_int("--serial-steps", optarg, 1, 100000000, &o->serial_steps, err); break;
        case O_CSV: o->csv = optarg; break;
        case 'h': usage(stdout, argv[0], model, lab); exit(0);
        case ':': rc = lk_fail(err, "option %s needs a value: see -h", argv[optind - 1]); break;
        default: rc = lk_fail(err, "unknown option '%s': see -h", argv[optind - 1]); break;
        }
    }
    if (rc != 0)
        return -1;
    if (o->steps >= 0 && o->time >= 0.0)
        return lk_fail(err, "both --steps and --time given: give one of them (see -h)");
    o->nfiles = argc - optind;
    int sources = (o->dataset != NULL) + (o->gen != NULL) + o->standard + (o->nfiles > 0);
    if (o->nfiles != 0 && (o->nfiles > 3 || !(model->files_ok & (1u << o->nfiles))))
        return lk_fail(err, "%d input files given: %s: see -h", o->nfiles, model->files_hint);
    for (int i = 0; i < o->nfiles; i++)
        o->files[i] = argv[optind + i];
    if (o->bench && sources == 0)
        o->dataset = lab->bench_dataset, sources = 1;
    if (sources != 1)
        return lk_fail(err, "%s: give exactly one input: %s (see -h)",
                       sources ? "several inputs" : "no input",
                       model->files_ok > 1 ? "files, --dataset, --gen or --standard"
                                           : "--dataset, --gen or --standard");
    if (o->standard)
        o->dataset = lab->standard_dataset;
    if (o->bench && o->steps < 0 && o->time < 0.0)
        o->steps = lab->bench_steps;
    return 0;
}

static int load_problem(const lk_model *model, const options *o, void *problem, int *steps,
                        char *label, size_t label_size, lk_error *err)
{
    int dataset_steps = -1;
    int rc;
    if (o->dataset) {
        rc = model->load_dataset(LK_TOP_DIR "/datasets/MANIFEST", o->dataset, problem,
                                 &dataset_steps, err);
        snprintf(label, label_size, "%s", o->dataset);
    } else if (o->gen) {
        rc = model->load_spec(o->gen, problem, err);
        snprintf(label, label_size, "%s", o->gen);
    } else {
        rc = model->load_files(o->nfiles, o->files, problem, label, label_size, err);
    }
    if (rc != 0)
        return -1;
    if (o->time >= 0.0) {
        if (model->steps_for_time(problem, o->time, steps, err) != 0) {
            model->free_problem(problem);
            return -1;
        }
    } else
        *steps = o->steps >= 0 ? o->steps : dataset_steps >= 0 ? dataset_steps
                                                               : model->default_steps(problem);
    return 0;
}

typedef struct result {
    const char *status; /* ok, mismatch, error */
    char error[LK_ERROR_MAX];
    int ran_serial, ran_gpu, compared, match;
    double serial_s;
    lk_stats gpu_ms;
    char serial_md5[33], gpu_md5[33], gpu_md5_bin[33];
    char device[256];
} result;

static void write_json(FILE *f, const options *o, const lk_model *model,
                       const lk_driver_lab *lab, const char *label, const void *problem,
                       int steps, const result *r)
{
    int rows, cols;
    model->dims(problem, &rows, &cols);
    fputs("{\"lab\":", f);
    lk_json_string(f, lab->name);
    fputs(",\"dataset\":", f);
    lk_json_string(f, label);
    fprintf(f, ",\"rows\":%d,\"cols\":%d", rows, cols);
    if (model->output_fields > 1)
        fprintf(f, ",\"fields\":%d", model->output_fields);
    fprintf(f, ",\"steps\":%d,\"block\":\"%dx%d\"", steps, o->launch.block_x,
            o->launch.block_y);
    if (o->launch.tile_x)
        fprintf(f, ",\"tile\":\"%dx%d\"", o->launch.tile_x, o->launch.tile_y);
    if (o->launch.variant[0]) {
        fputs(",\"variant\":", f);
        lk_json_string(f, o->launch.variant);
    }
    fputs(",\"status\":", f);
    lk_json_string(f, r->status);
    fputs(",\"error\":", f);
    lk_json_string(f, r->error[0] ? r->error : NULL);
    if (r->ran_serial) {
        fputs(",\"serial\":{\"seconds\":", f);
        lk_json_number(f, r->serial_s);
        fprintf(f, ",\"md5\":\"%s\"}", r->serial_md5);
    }
    if (r->ran_gpu) {
        fputs(",\"gpu\":{\"device\":", f);
        lk_json_string(f, r->device);
        fputs(",\"ms_median\":", f);
        lk_json_number(f, r->gpu_ms.median);
        fputs(",\"ms_min\":", f);
        lk_json_number(f, r->gpu_ms.min);
        fputs(",\"ms_max\":", f);
        lk_json_number(f, r->gpu_ms.max);
        fprintf(f, ",\"runs\":%d,\"md5\":\"%s\",\"md5_bin\":\"%s\"}", r->gpu_ms.n, r->gpu_md5,
                r->gpu_md5_bin);
    }
    if (r->compared)
        fprintf(f, ",\"match\":%s", r->match ? "true" : "false");
    fputs("}\n", f);
}

static int write_outputs(const lk_model *model, const options *o, const void *problem,
                         const double *out, const char *label, int steps, lk_error *err)
{
    if (o->out && model->write_text(o->out, problem, out, err) != 0)
        return -1;
    if (o->bin && model->write_bin(o->bin, problem, out, err) != 0)
        return -1;
    if (o->png && model->write_png(o->png, problem, out, label, steps, err) != 0)
        return -1;
    return 0;
}

/* The run whose result counts: output and every device allocation poisoned, untimed. */
static int run_gpu_checked(const lk_model *model, const lk_driver_lab *lab,
                           const void *problem, double *out, int steps,
                           const lk_launch *launch, lk_error *err)
{
    gpu_call call = {lab, lab->run, problem, out, steps, launch};
    lk_poison(out, model->output_len(problem));
    lk_poison_device_allocations(1);
    int rc = call_gpu(&call, err);
    lk_poison_device_allocations(0);
    return rc;
}

/* Timed runs follow a checked run, which served as their warm-up. */
static int run_gpu_timed(const lk_driver_lab *lab, lk_driver_gpu_fn fn, const void *problem,
                         double *out, int steps, const lk_launch *launch, int repeat,
                         lk_stats *ms, lk_error *err)
{
    gpu_call call = {lab, fn, problem, out, steps, launch};
    return lk_time_cuda(call_gpu, &call, 0, repeat, ms, err);
}

/* Two runs of the same code on the same input must agree bit for bit. */
static int check_repeatable(const lk_model *model, const void *problem, const double *first,
                            const double *again, lk_error *err)
{
    char buf[1536];
    if (model->compare(problem, first, again, 4, "second run vs first run", NULL, buf,
                       sizeof buf) == 0)
        return 0;
    return lk_fail(err, "your GPU code gave a different result when run again on the same "
                        "input (a race condition, or a buffer read before it is written?): %s",
                   buf);
}

/* Per-step time of @p fn: N steps minus 0 steps, so allocation and transfers cancel out. */
static int time_per_step(const lk_driver_lab *lab, lk_driver_gpu_fn fn, const void *problem,
                         double *out, int steps, const lk_launch *launch, int repeat,
                         lk_stats *t_steps, lk_stats *t_zero, lk_error *err)
{
    if (run_gpu_timed(lab, fn, problem, out, steps, launch, repeat, t_steps, err) != 0 ||
        run_gpu_timed(lab, fn, problem, out, 0, launch, repeat, t_zero, err) != 0)
        return -1;
    return 0;
}

/* The lab's own description of a launch, or its block. */
static void launch_label(const lk_driver_lab *lab, const lk_launch *launch, char *buf,
                         size_t size)
{
    if (!lab->launch_label || lab->launch_label(launch, buf, size) != 0)
        snprintf(buf, size, "block %dx%d", launch->block_x, launch->block_y);
}

/* What --bench measured once for every launch of a run. */
typedef struct bench_ctx {
    const lk_model *model;
    const options *o;
    const lk_driver_lab *lab;
    const void *problem;
    const char *label;
    int steps, repeat;
    char device[256];
    const double *h_ref; /* serial result after o->serial_steps */
    double *h_gpu;
    double serial_ms_step;
    lk_copy_bandwidth copy;
} bench_ctx;

/* Check, time and report one launch: its lines on stdout and its CSV row. */
static int bench_launch(const bench_ctx *b, const lk_launch *launch, lk_error *err)
{
    const lk_model *model = b->model;
    const options *o = b->o;
    const lk_driver_lab *lab = b->lab;
    int rows, cols;
    model->dims(b->problem, &rows, &cols);
    const size_t n = (size_t)rows * cols;
    char how[160];
    launch_label(lab, launch, how, sizeof how);
    /* Correctness first: the timed code must give the serial result on this dataset. */
    if (run_gpu_checked(model, lab, b->problem, b->h_gpu, o->serial_steps, launch, err) != 0)
        return -1;
    char buf[2048];
    if (model->compare(b->problem, b->h_ref, b->h_gpu, 8, NULL, NULL, buf, sizeof buf) != 0)
        return lk_fail(err, "bench, %s: GPU result after %d steps differs from serial: %s", how,
                       o->serial_steps, buf);
    /* The entry point includes allocation and transfers: time N steps and 0 steps and take
       the difference, so the per-step time is the kernels' alone. */
    lk_stats t_steps, t_zero;
    if (time_per_step(lab, lab->run, b->problem, b->h_gpu, b->steps, launch, b->repeat,
                      &t_steps, &t_zero, err) != 0)
        return -1;
    double ms_step = b->steps > 0 ? (t_steps.median - t_zero.median) / b->steps : 0.0;
    double updates = ms_step > 0 ? n / (ms_step * 1e-3) : 0.0;
    double bw = ms_step > 0 ? model->bytes_per_cell_step * n / (ms_step * 1e-3) : 0.0;
    double speedup = ms_step > 0 ? b->serial_ms_step / ms_step : 0.0;
    printf("  launch             %s\n", how);
    printf("  whole run          %.3f ms median of %d (min %.3f, max %.3f); overhead (0 steps) %.3f ms\n",
           t_steps.median, t_steps.n, t_steps.min, t_steps.max, t_zero.median);
    printf("  time per step      %.4f ms\n", ms_step);
    printf("  cell updates/s     %.3e\n", updates);
    printf("  effective bandwidth %.1f GB/s (%.0f B per cell per step)\n", bw * 1e-9,
           model->bytes_per_cell_step);
    printf("  %% of copy          %.1f %%\n", 100.0 * bw / b->copy.best_bps);
    printf("  speedup vs serial  %.1fx\n", speedup);
    if (lab->baseline) {
        /* The given version runs on the same data with the same launch, right after. */
        lk_stats b_steps, b_zero;
        int bsteps = lab->baseline_steps > 0 ? lab->baseline_steps : b->steps;
        if (time_per_step(lab, lab->baseline, b->problem, b->h_gpu, bsteps, launch, b->repeat,
                          &b_steps, &b_zero, err) != 0)
            return -1;
        double b_ms_step = bsteps > 0 ? (b_steps.median - b_zero.median) / bsteps : 0.0;
        printf("  %-18s %.4f ms per step (%d steps timed, whole run %.3f ms)\n",
               lab->baseline_name, b_ms_step, bsteps, b_steps.median);
        printf("  speedup vs %-7s %.1fx\n", lab->baseline_name,
               ms_step > 0 ? b_ms_step / ms_step : 0.0);
    }
    if (!o->csv)
        return 0;
    FILE *f = fopen(o->csv, "a");
    if (!f)
        return lk_fail(err, "%s: cannot open for appending: check the folder exists", o->csv);
    if (ftell(f) == 0)
        fputs("lab,gpu,dataset,rows,cols,steps,launch,ms_per_step,cell_updates_per_s,"
              "effective_GBps,copy_GBps,memcpy_GBps,copy_kernel_GBps,pct_of_copy,"
              "serial_ms_per_step,speedup\n", f);
    fprintf(f, "%s,\"%s\",%s,%d,%d,%d,\"%s\",%.6f,%.6e,%.2f,%.2f,%.2f,%.2f,%.2f,%.4f,%.2f\n",
            lab->name, b->device, b->label, rows, cols, b->steps, how, ms_step, updates,
            bw * 1e-9, b->copy.best_bps * 1e-9, b->copy.memcpy_bps * 1e-9,
            b->copy.kernel_bps * 1e-9, 100.0 * bw / b->copy.best_bps, b->serial_ms_step,
            speedup);
    if (fclose(f) != 0)
        return lk_fail(err, "%s: write failed: check the disk", o->csv);
    return 0;
}

/* --bench: the serial reference and the copy bandwidth once, then every launch to time: the
   one on the command line, or each of the lab's bench variants when none is named. */
static int bench(const lk_model *model, const options *o, const lk_driver_lab *lab,
                 const void *problem, const char *label, int steps, lk_error *err)
{
    int rows, cols;
    model->dims(problem, &rows, &cols);
    const size_t n = (size_t)rows * cols, len = model->output_len(problem);
    bench_ctx b = {.model = model, .o = o, .lab = lab, .problem = problem, .label = label,
                   .steps = steps, .repeat = o->repeat > 1 ? o->repeat : 5};
    if (lk_gpu_describe(b.device, sizeof b.device, err) != 0)
        return -1;
    double *h_ref = malloc(len * sizeof *h_ref);
    b.h_gpu = malloc(len * sizeof *b.h_gpu);
    b.h_ref = h_ref;
    int rc = -1;
    if (!b.h_gpu || !h_ref) {
        lk_fail(err, "out of memory for %d x %d grids", rows, cols);
        goto done;
    }
    double t0 = lk_wall_seconds();
    if (model->serial(problem, o->serial_steps, h_ref, err) != 0)
        goto done;
    b.serial_ms_step = (lk_wall_seconds() - t0) * 1e3 / o->serial_steps;
    if (lk_gpu_copy_bandwidth(model->copy_bytes(problem), b.repeat, &b.copy, err) != 0)
        goto done;
    printf("bench %s on %s\n", lab->name, b.device);
    printf("  dataset            %s (%d x %d = %zu cells), %d steps\n", label, rows, cols, n,
           steps);
    printf("  copy bandwidth     %.1f GB/s (read + write; the faster of cudaMemcpy %.1f and a "
           "copy kernel %.1f)\n",
           b.copy.best_bps * 1e-9, b.copy.memcpy_bps * 1e-9, b.copy.kernel_bps * 1e-9);
    printf("  serial             %.3f ms per step (%d steps timed)\n", b.serial_ms_step,
           o->serial_steps);
    rc = 0;
    if (!lab->bench_variants || o->launch.variant[0]) {
        rc = bench_launch(&b, &o->launch, err);
    } else {
        /* Every variant at its default tile; one that fails is reported and the rest run. */
        int failed = 0;
        for (int i = 0; lab->bench_variants[i]; i++) {
            lk_launch launch = o->launch;
            snprintf(launch.variant, sizeof launch.variant, "%s", lab->bench_variants[i]);
            lk_error verr;
            lk_error_clear(&verr);
            if (bench_launch(&b, &launch, &verr) != 0) {
                printf("  variant %-10s FAILED: %s\n", lab->bench_variants[i], verr.msg);
                if (failed++ == 0)
                    *err = verr;
            }
        }
        if (failed)
            rc = -1;
    }
done:
    free(b.h_gpu);
    free(h_ref);
    return rc;
}

int lk_driver_main(int argc, char **argv, const lk_model *model, const lk_driver_lab *lab)
{
    const char *prog = argv[0];
    options o;
    lk_error err;
    lk_error_clear(&err);
    if (parse_options(argc, argv, model, lab, &o, &err) != 0) {
        fprintf(stderr, "%s: %s\n", prog, err.msg);
        return EXIT_USAGE;
    }
    void *problem = calloc(1, model->problem_size);
    if (!problem) {
        lk_fail(&err, "out of memory");
        lk_die(prog, &err);
    }
    int steps;
    char label[256];
    if (load_problem(model, &o, problem, &steps, label, sizeof label, &err) != 0) {
        free(problem);
        lk_die(prog, &err);
    }
    if (o.bench || o.mode != MODE_SERIAL) {
        char reason[256];
        if (!lk_gpu_available(reason, sizeof reason)) {
            fprintf(stderr, "%s: no CUDA device: %s: run on a machine with a GPU, or use "
                            "--serial (see `make doctor`)\n", prog, reason);
            model->free_problem(problem);
            free(problem);
            return 1;
        }
    }
    if (o.bench) {
        int rc = bench(model, &o, lab, problem, label, steps, &err);
        model->free_problem(problem);
        free(problem);
        if (rc != 0)
            lk_die(prog, &err);
        return 0;
    }

    int rows, cols;
    model->dims(problem, &rows, &cols);
    const size_t n = (size_t)rows * cols, len = model->output_len(problem);
    result r;
    memset(&r, 0, sizeof r);
    r.status = "ok";
    double *h_serial = NULL, *h_gpu = NULL, *h_again = NULL;
    int status = 0;
    if (o.mode != MODE_GPU) {
        h_serial = malloc(len * sizeof *h_serial);
        double t0 = lk_wall_seconds();
        if (!h_serial) {
            lk_fail(&err, "out of memory for a %d x %d grid", rows, cols);
            goto failed;
        }
        if (model->serial(problem, steps, h_serial, &err) != 0 ||
            model->md5(problem, h_serial, r.serial_md5, &err) != 0)
            goto failed;
        r.serial_s = lk_wall_seconds() - t0;
        r.ran_serial = 1;
    }
    if (o.mode != MODE_SERIAL) {
        h_gpu = malloc(len * sizeof *h_gpu);
        h_again = malloc(len * sizeof *h_again);
        if (!h_gpu || !h_again) {
            lk_fail(&err, "out of memory for a %d x %d grid", rows, cols);
            goto failed;
        }
        if (lk_gpu_describe(r.device, sizeof r.device, &err) != 0 ||
            run_gpu_checked(model, lab, problem, h_gpu, steps, &o.launch, &err) != 0 ||
            run_gpu_timed(lab, lab->run, problem, h_again, steps, &o.launch, o.repeat,
                          &r.gpu_ms, &err) != 0 ||
            check_repeatable(model, problem, h_gpu, h_again, &err) != 0 ||
            model->md5(problem, h_gpu, r.gpu_md5, &err) != 0 ||
            model->md5_bin(problem, h_gpu, r.gpu_md5_bin, &err) != 0)
            goto failed;
        r.ran_gpu = 1;
    }
    if (write_outputs(model, &o, problem, h_gpu ? h_gpu : h_serial, label, steps, &err) != 0)
        goto failed;

    char details[256] = "";
    if (model->describe)
        model->describe(problem, steps, details, sizeof details);
    printf("dataset  %s: %d x %d cells, %d steps%s\n", label, rows, cols, steps, details);
    if (r.ran_serial)
        printf("serial   %.3f s   md5 %s\n", r.serial_s, r.serial_md5);
    if (r.ran_gpu) {
        char how[160];
        launch_label(lab, &o.launch, how, sizeof how);
        printf("gpu      %.3f ms   md5 %s   %s on %s\n", r.gpu_ms.median, r.gpu_md5, how,
               r.device);
        if (r.gpu_ms.n > 1)
            printf("         median of %d runs (min %.3f, max %.3f ms)\n", r.gpu_ms.n,
                   r.gpu_ms.min, r.gpu_ms.max);
    }
    if (r.ran_serial && r.ran_gpu) {
        r.compared = 1;
        printf("speedup  %.1fx (whole GPU run, transfers included)\n",
               r.serial_s * 1e3 / r.gpu_ms.median);
        r.match = model->compare(problem, h_serial, h_gpu, 8, NULL, NULL, NULL, 0) == 0;
        if (r.match)
            printf("check    GPU result identical to serial (%zu cells)\n", n);
        else {
            r.status = "mismatch";
            status = EXIT_MISMATCH;
            printf("check    GPU RESULT DIFFERS FROM SERIAL\n");
            model->compare(problem, h_serial, h_gpu, 8, NULL, stdout, NULL, 0);
        }
    }
    goto report;

failed:
    r.status = "error";
    snprintf(r.error, sizeof r.error, "%s", err.msg);
    fprintf(stderr, "%s: %s\n", prog, err.msg);
    status = 1;
report:
    if (o.json)
        write_json(stdout, &o, model, lab, label, problem, steps, &r);
    if (o.result_fd >= 0) {
        int fd = dup(o.result_fd);
        FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
        if (!f) {
            fprintf(stderr, "%s: --result-fd %d: not an open file descriptor\n", prog, o.result_fd);
            status = 1;
        } else {
            write_json(f, &o, model, lab, label, problem, steps, &r);
            fclose(f);
        }
    }
    free(h_serial);
    free(h_gpu);
    free(h_again);
    model->free_problem(problem);
    free(problem);
    return status;
}
