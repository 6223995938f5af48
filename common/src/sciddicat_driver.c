#include "labkit/sciddicat_driver.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "labkit/cli.h"
#include "labkit/compare.h"
#include "labkit/cuda_check.h"
#include "labkit/grid_io.h"
#include "labkit/json.h"
#include "labkit/png.h"
#include "labkit/sciddicat.h"
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
    int steps; /* -1: the dataset's, else 4000 */
    int mode, repeat, json, result_fd, bench, standard, serial_steps;
    lk_launch launch;
} options;

typedef struct gpu_call {
    const lk_sciddicat_lab *lab;
    const lk_sciddicat *sim;
    double *h_out;
    int steps;
    const lk_launch *launch;
} gpu_call;

static int call_gpu(void *ctx, lk_error *err)
{
    gpu_call *c = ctx;
    return c->lab->run(c->sim->rows, c->sim->cols, c->sim->z, c->sim->h0, c->h_out, c->steps,
                       c->launch, err);
}

static void usage(FILE *f, const char *prog, const lk_sciddicat_lab *lab)
{
    fprintf(f,
            "usage: %s [options] HEADER DEM SOURCE     (course layout: header + body files)\n"
            "       %s [options] DEM.asc SOURCE.asc    (single-file ESRI grids)\n"
            "       %s [options] --dataset NAME | --gen KIND:ROWSxCOLS:SEED | --standard\n"
            "SciddicaT, lab %s: runs the serial reference and your GPU code, compares them.\n"
            "  -d, --dataset NAME   a dataset of datasets/MANIFEST (its steps are the default)\n"
            "  -g, --gen SPEC       a generated dataset, e.g. valley:610x496:1 or plane:97x131:7\n"
            "      --standard       the lab's standard dataset (%s)\n"
            "  -s, --steps N        steps to run (default: the dataset's, else 4000)\n"
            "      --serial         run only the serial reference\n"
            "      --gpu            run only your GPU code (default: both, compared)\n"
            "  -b, --block WxH      thread block, x along columns (default %dx%d)\n"
            "      --tile WxH       tile size (tiled labs)\n"
            "      --variant NAME   kernel variant (labs with several)\n"
            "  -o, --out FILE       write h in the course text format (its md5 is the hash)\n"
            "      --bin FILE       write h as raw little-endian doubles\n"
            "      --png FILE       picture of the terrain and the debris\n"
            "  -r, --repeat N       time N GPU runs (after the checked run), report the median\n"
            "      --json           print one machine-readable result line\n"
            "      --result-fd N    also write that line to file descriptor N\n"
            "      --bench          performance report on %s (GPU)\n"
            "      --serial-steps N serial steps timed by --bench (default %d)\n"
            "      --csv FILE       append the --bench result to FILE as CSV\n"
            "  -h, --help           this text\n"
            "Exit status: 0 ok, 1 error, 2 bad usage, 3 GPU result differs from serial.\n",
            prog, prog, prog, lab->name, lab->standard_dataset, lab->launch.block_x,
            lab->launch.block_y, lab->bench_dataset, lab->bench_serial_steps);
}

static int parse_options(int argc, char **argv, const lk_sciddicat_lab *lab, options *o,
                         lk_error *err)
{
    enum { O_SERIAL = 256, O_GPU, O_TILE, O_VARIANT, O_BIN, O_PNG, O_JSON, O_FD, O_BENCH,
           O_CSV, O_STANDARD, O_SERIAL_STEPS };
    static const struct option long_options[] = {
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
    o->repeat = 1;
    o->result_fd = -1;
    o->launch = lab->launch;
    o->serial_steps = lab->bench_serial_steps;
    opterr = 0;
    int opt, rc = 0;
    while (rc == 0 && (opt = getopt_long(argc, argv, ":d:g:s:b:o:r:h", long_options, NULL)) != -1) {
        switch (opt) {
        case 'd': o->dataset = optarg; break;
        case 'g': o->gen = optarg; break;
        case O_STANDARD: o->standard = 1; break;
        case 's': rc = lk_parse_int("--steps", optarg, 0, 100000000, &o->steps, err); break;
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
        case 'h': usage(stdout, argv[0], lab); exit(0);
        case ':': rc = lk_fail(err, "option %s needs a value: see -h", argv[optind - 1]); break;
        default: rc = lk_fail(err, "unknown option '%s': see -h", argv[optind - 1]); break;
        }
    }
    if (rc != 0)
        return -1;
    o->nfiles = argc - optind;
    int sources = (o->dataset != NULL) + (o->gen != NULL) + o->standard + (o->nfiles > 0);
    if (o->nfiles != 0 && o->nfiles != 2 && o->nfiles != 3)
        return lk_fail(err, "%d input files given: give HEADER DEM SOURCE, or DEM.asc "
                            "SOURCE.asc, or use --dataset/--gen: see -h", o->nfiles);
    for (int i = 0; i < o->nfiles; i++)
        o->files[i] = argv[optind + i];
    if (o->bench && sources == 0)
        o->dataset = lab->bench_dataset, sources = 1;
    if (sources != 1)
        return lk_fail(err, "%s: give exactly one input: files, --dataset, --gen or "
                            "--standard (see -h)", sources ? "several inputs" : "no input");
    if (o->standard)
        o->dataset = lab->standard_dataset;
    if (o->bench && o->steps < 0)
        o->steps = lab->bench_steps;
    return 0;
}

static int load_problem(const options *o, lk_sciddicat *sim, int *steps, char *label,
                        size_t label_size, lk_error *err)
{
    int dataset_steps = -1;
    int rc;
    if (o->dataset) {
        rc = lk_sciddicat_load_dataset(LK_TOP_DIR "/datasets/MANIFEST", o->dataset, sim,
                                       &dataset_steps, NULL, err);
        snprintf(label, label_size, "%s", o->dataset);
    } else if (o->gen) {
        lk_sciddicat_spec spec;
        rc = lk_sciddicat_spec_parse(o->gen, &spec, err) ||
             lk_sciddicat_load_generated(&spec, sim, err);
        snprintf(label, label_size, "%s", o->gen);
    } else if (o->nfiles == 3) {
        rc = lk_sciddicat_load(o->files[0], o->files[1], o->files[2], sim, err);
        snprintf(label, label_size, "%s", o->files[1]);
    } else {
        rc = lk_sciddicat_load_asc(o->files[0], o->files[1], sim, err);
        snprintf(label, label_size, "%s", o->files[0]);
    }
    *steps = o->steps >= 0 ? o->steps : dataset_steps >= 0 ? dataset_steps : 4000;
    return rc ? -1 : 0;
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

static void write_json(FILE *f, const options *o, const lk_sciddicat_lab *lab,
                       const char *label, const lk_sciddicat *sim, int steps, const result *r)
{
    fputs("{\"lab\":", f);
    lk_json_string(f, lab->name);
    fputs(",\"dataset\":", f);
    lk_json_string(f, label);
    fprintf(f, ",\"rows\":%d,\"cols\":%d,\"steps\":%d,\"block\":\"%dx%d\"", sim->rows,
            sim->cols, steps, o->launch.block_x, o->launch.block_y);
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

static int write_outputs(const options *o, const lk_sciddicat *sim, const double *h,
                         const char *label, lk_error *err)
{
    if (o->out && lk_write_course_text(o->out, h, sim->rows, sim->cols, err) != 0)
        return -1;
    if (o->bin && lk_write_binary(o->bin, h, (size_t)sim->rows * sim->cols, err) != 0)
        return -1;
    if (o->png) {
        char title[320];
        snprintf(title, sizeof title, "SciddicaT %s: debris thickness", label);
        if (lk_png_terrain(o->png, sim->z, h, sim->rows, sim->cols, sim->hdr.cellsize,
                           LK_SCIDDICAT_P_EPSILON, title, err) != 0)
            return -1;
    }
    return 0;
}

/* The run whose result counts: output and every device allocation poisoned, untimed. */
static int run_gpu_checked(const lk_sciddicat_lab *lab, const lk_sciddicat *sim, double *h,
                           int steps, const lk_launch *launch, lk_error *err)
{
    gpu_call call = {lab, sim, h, steps, launch};
    lk_poison(h, (size_t)sim->rows * sim->cols);
    lk_poison_device_allocations(1);
    int rc = call_gpu(&call, err);
    lk_poison_device_allocations(0);
    return rc;
}

/* Timed runs follow a checked run, which served as their warm-up. */
static int run_gpu_timed(const lk_sciddicat_lab *lab, const lk_sciddicat *sim, double *h,
                         int steps, const lk_launch *launch, int repeat, lk_stats *ms,
                         lk_error *err)
{
    gpu_call call = {lab, sim, h, steps, launch};
    return lk_time_cuda(call_gpu, &call, 0, repeat, ms, err);
}

/* Two runs of the same code on the same input must agree bit for bit. */
static int check_repeatable(const double *first, const double *again, int rows, int cols,
                            lk_error *err)
{
    lk_compare cmp;
    if (lk_compare_grids(first, again, rows, cols, 4, &cmp) == 0)
        return 0;
    char buf[1536];
    lk_compare_format(buf, sizeof buf, &cmp, rows, cols, "second run vs first run");
    return lk_fail(err, "your GPU code gave a different result when run again on the same "
                        "input (a race condition, or a buffer read before it is written?): %s",
                   buf);
}

static int bench(const options *o, const lk_sciddicat_lab *lab, const lk_sciddicat *sim,
                 const char *label, int steps, lk_error *err)
{
    const size_t n = (size_t)sim->rows * sim->cols;
    const int repeat = o->repeat > 1 ? o->repeat : 5;
    char device[256];
    if (lk_gpu_describe(device, sizeof device, err) != 0)
        return -1;
    double *h_gpu = malloc(n * sizeof *h_gpu), *h_ref = malloc(n * sizeof *h_ref);
    if (!h_gpu || !h_ref) {
        free(h_gpu);
        free(h_ref);
        return lk_fail(err, "out of memory for %d x %d grids", sim->rows, sim->cols);
    }
    int rc = -1;
    lk_stats t_steps, t_zero;
    double copy_bps;
    /* Correctness first: the timed code must give the serial result on this dataset. */
    int check_steps = o->serial_steps;
    double t0 = lk_wall_seconds();
    if (lk_sciddicat_serial(sim, check_steps, h_ref, NULL, err) != 0)
        goto done;
    double serial_s = lk_wall_seconds() - t0;
    if (run_gpu_checked(lab, sim, h_gpu, check_steps, &o->launch, err) != 0)
        goto done;
    lk_compare cmp;
    if (lk_compare_grids(h_ref, h_gpu, sim->rows, sim->cols, 8, &cmp) != 0) {
        char buf[2048];
        lk_compare_format(buf, sizeof buf, &cmp, sim->rows, sim->cols, "thickness h");
        lk_fail(err, "bench: GPU result after %d steps differs from serial: %s", check_steps, buf);
        goto done;
    }
    /* The entry point includes allocation and transfers: time N steps and 0 steps and take
       the difference, so the per-step time is the kernels' alone. */
    if (run_gpu_timed(lab, sim, h_gpu, steps, &o->launch, repeat, &t_steps, err) != 0 ||
        run_gpu_timed(lab, sim, h_gpu, 0, &o->launch, repeat, &t_zero, err) != 0 ||
        lk_gpu_copy_bandwidth(n * sizeof(double) * 4, repeat, &copy_bps, err) != 0)
        goto done;
    double ms_step = steps > 0 ? (t_steps.median - t_zero.median) / steps : 0.0;
    double updates = ms_step > 0 ? n / (ms_step * 1e-3) : 0.0;
    double bw = ms_step > 0 ? LK_SCIDDICAT_BYTES_PER_CELL_STEP * n / (ms_step * 1e-3) : 0.0;
    double serial_ms_step = serial_s * 1e3 / check_steps;
    printf("bench %s on %s\n", lab->name, device);
    printf("  dataset            %s (%d x %d = %zu cells), %d steps, block %dx%d\n", label,
           sim->rows, sim->cols, n, steps, o->launch.block_x, o->launch.block_y);
    printf("  whole run          %.3f ms median of %d (min %.3f, max %.3f); overhead (0 steps) %.3f ms\n",
           t_steps.median, t_steps.n, t_steps.min, t_steps.max, t_zero.median);
    printf("  time per step      %.4f ms\n", ms_step);
    printf("  cell updates/s     %.3e\n", updates);
    printf("  effective bandwidth %.1f GB/s (%.0f B per cell per step)\n", bw * 1e-9,
           LK_SCIDDICAT_BYTES_PER_CELL_STEP);
    printf("  copy bandwidth     %.1f GB/s (device-to-device cudaMemcpy, read + write)\n",
           copy_bps * 1e-9);
    printf("  %% of copy          %.1f %%\n", 100.0 * bw / copy_bps);
    printf("  serial             %.3f ms per step (%d steps timed)\n", serial_ms_step, check_steps);
    printf("  speedup vs serial  %.1fx\n", ms_step > 0 ? serial_ms_step / ms_step : 0.0);
    if (o->csv) {
        FILE *f = fopen(o->csv, "a");
        if (!f) {
            lk_fail(err, "%s: cannot open for appending: check the folder exists", o->csv);
            goto done;
        }
        if (ftell(f) == 0)
            fputs("lab,gpu,dataset,rows,cols,steps,block,ms_per_step,cell_updates_per_s,"
                  "effective_GBps,copy_GBps,pct_of_copy,serial_ms_per_step,speedup\n", f);
        fprintf(f, "%s,\"%s\",%s,%d,%d,%d,%dx%d,%.6f,%.6e,%.2f,%.2f,%.2f,%.4f,%.2f\n",
                lab->name, device, label, sim->rows, sim->cols, steps, o->launch.block_x,
                o->launch.block_y, ms_step, updates, bw * 1e-9, copy_bps * 1e-9,
                100.0 * bw / copy_bps, serial_ms_step, ms_step > 0 ? serial_ms_step / ms_step : 0.0);
        fclose(f);
    }
    rc = 0;
done:
    free(h_gpu);
    free(h_ref);
    return rc;
}

int lk_sciddicat_driver(int argc, char **argv, const lk_sciddicat_lab *lab)
{
    const char *prog = argv[0];
    options o;
    lk_error err;
    lk_error_clear(&err);
    if (parse_options(argc, argv, lab, &o, &err) != 0) {
        fprintf(stderr, "%s: %s\n", prog, err.msg);
        return EXIT_USAGE;
    }
    lk_sciddicat sim;
    int steps;
    char label[256];
    if (load_problem(&o, &sim, &steps, label, sizeof label, &err) != 0)
        lk_die(prog, &err);
    if (o.bench || o.mode != MODE_SERIAL) {
        char reason[256];
        if (!lk_gpu_available(reason, sizeof reason)) {
            fprintf(stderr, "%s: no CUDA device: %s: run on a machine with a GPU, or use "
                            "--serial (see `make doctor`)\n", prog, reason);
            lk_sciddicat_free(&sim);
            return 1;
        }
    }
    if (o.bench) {
        int rc = bench(&o, lab, &sim, label, steps, &err);
        lk_sciddicat_free(&sim);
        if (rc != 0)
            lk_die(prog, &err);
        return 0;
    }

    const size_t n = (size_t)sim.rows * sim.cols;
    result r;
    memset(&r, 0, sizeof r);
    r.status = "ok";
    double *h_serial = NULL, *h_gpu = NULL, *h_again = NULL;
    int status = 0;
    if (o.mode != MODE_GPU) {
        h_serial = malloc(n * sizeof *h_serial);
        double t0 = lk_wall_seconds();
        if (!h_serial || lk_sciddicat_serial(&sim, steps, h_serial, NULL, &err) != 0 ||
            lk_course_text_md5(h_serial, sim.rows, sim.cols, r.serial_md5, &err) != 0)
            goto failed;
        r.serial_s = lk_wall_seconds() - t0;
        r.ran_serial = 1;
    }
    if (o.mode != MODE_SERIAL) {
        h_gpu = malloc(n * sizeof *h_gpu);
        h_again = malloc(n * sizeof *h_again);
        if (!h_gpu || !h_again) {
            lk_fail(&err, "out of memory for a %d x %d grid", sim.rows, sim.cols);
            goto failed;
        }
        if (lk_gpu_describe(r.device, sizeof r.device, &err) != 0 ||
            run_gpu_checked(lab, &sim, h_gpu, steps, &o.launch, &err) != 0 ||
            run_gpu_timed(lab, &sim, h_again, steps, &o.launch, o.repeat, &r.gpu_ms, &err) != 0 ||
            check_repeatable(h_gpu, h_again, sim.rows, sim.cols, &err) != 0 ||
            lk_course_text_md5(h_gpu, sim.rows, sim.cols, r.gpu_md5, &err) != 0 ||
            lk_binary_md5(h_gpu, n, r.gpu_md5_bin, &err) != 0)
            goto failed;
        r.ran_gpu = 1;
    }
    if (write_outputs(&o, &sim, h_gpu ? h_gpu : h_serial, label, &err) != 0)
        goto failed;

    printf("dataset  %s: %d x %d cells, %d steps\n", label, sim.rows, sim.cols, steps);
    if (r.ran_serial)
        printf("serial   %.3f s   md5 %s\n", r.serial_s, r.serial_md5);
    if (r.ran_gpu) {
        printf("gpu      %.3f ms   md5 %s   block %dx%d on %s\n", r.gpu_ms.median, r.gpu_md5,
               o.launch.block_x, o.launch.block_y, r.device);
        if (r.gpu_ms.n > 1)
            printf("         median of %d runs (min %.3f, max %.3f ms)\n", r.gpu_ms.n,
                   r.gpu_ms.min, r.gpu_ms.max);
    }
    if (r.ran_serial && r.ran_gpu) {
        lk_compare cmp;
        r.compared = 1;
        r.match = lk_compare_grids(h_serial, h_gpu, sim.rows, sim.cols, 8, &cmp) == 0;
        printf("speedup  %.1fx (whole GPU run, transfers included)\n",
               r.serial_s * 1e3 / r.gpu_ms.median);
        if (r.match)
            printf("check    GPU result identical to serial (%zu cells)\n", n);
        else {
            r.status = "mismatch";
            status = EXIT_MISMATCH;
            printf("check    GPU RESULT DIFFERS FROM SERIAL\n");
            lk_compare_print(stdout, &cmp, sim.rows, sim.cols, "thickness h");
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
        write_json(stdout, &o, lab, label, &sim, steps, &r);
    if (o.result_fd >= 0) {
        int fd = dup(o.result_fd);
        FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
        if (!f) {
            fprintf(stderr, "%s: --result-fd %d: not an open file descriptor\n", prog, o.result_fd);
            status = 1;
        } else {
            write_json(f, &o, lab, label, &sim, steps, &r);
            fclose(f);
        }
    }
    free(h_serial);
    free(h_gpu);
    free(h_again);
    lk_sciddicat_free(&sim);
    return status;
}
