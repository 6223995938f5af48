/* The steps of a lab driver (labkit/harness.h): options, the serial clock, the plan of GPU
   calls with their poisoning, timing and checks, the bench report and the JSON line. */
#include "labkit/harness.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "labkit/cli.h"
#include "labkit/compare.h"
#include "labkit/json.h"
#include "labkit/png.h"
#include "labkit/grid_io.h"

enum { EXIT_USAGE = 2, EXIT_MISMATCH = 3 };

/* What a planned GPU call is for. */
typedef enum call_kind {
    CALL_CHECKED, /* poisoned, untimed: the result that counts (bench: checked vs serial) */
    CALL_ONCE,    /* --once: checked and timed at once */
    CALL_TIMED,   /* timed, compared with the checked result */
    CALL_STEPS,   /* bench: N steps, timed; all must agree */
    CALL_ZERO,    /* bench: 0 steps, timed (allocation and transfers) */
    CALL_GIVEN_STEPS, CALL_GIVEN_ZERO /* bench: the given version, N and 0 steps */
} call_kind;

enum { SERIES_STEPS, SERIES_ZERO, SERIES_GIVEN_STEPS, SERIES_GIVEN_ZERO, NSERIES };

typedef struct planned {
    call_kind kind;
    int launch; /* index into state->launches */
    int steps;
} planned;

typedef struct launch {
    int variant; /* index into lab->variants, -1: the lab's only code */
    int given;   /* index of the given variant --bench compares with, -1: none */
    int tile_x, tile_y;
    char label[96];
    int failed;
} launch;

struct lk_run_state {
    planned *plan;
    int nplan, next; /* next: index of the call handed out last + 1 */
    launch launches[8];
    int nlaunches;
    double *scratch, *steps_ref; /* timed outputs; the first bench N-step output */
    int have_steps_ref;
    double *samples[NSERIES];
    int nsamples[NSERIES];
    const void *inputs[4];
    void *input_copies[4];
    size_t input_bytes[4];
    int ninputs;
    double serial_t0, call_t0;
    double serial_ms_step;
    lk_gpu_call call;
    int gpu_needed;
    int cpu_only; /* the chosen variant runs on the CPU: no GPU probe, no device syncs */
    int bench_failed;
    void *pinned[8]; /* host buffers page-locked for the GPU calls (pin_buffers) */
    int npinned;
    char unpinned_reason[160]; /* why a buffer stayed pageable, "" if none did */
};

/* ---- options ------------------------------------------------------------------------- */

static const lk_variant *variant_at(const lk_lab *lab, int i)
{
    return i >= 0 ? &lab->variants[i] : NULL;
}

static int nvariants(const lk_lab *lab)
{
    int n = 0;
    while (lab->variants && lab->variants[n].name)
        n++;
    return n;
}

/* The variant that runs without --variant: the first that is not given, -1 if none. */
static int default_variant(const lk_lab *lab)
{
    for (int i = 0; i < nvariants(lab); i++)
        if (!lab->variants[i].given)
            return i;
    return -1;
}

static int find_variant(const lk_lab *lab, const char *name)
{
    for (int i = 0; i < nvariants(lab); i++)
        if (strcmp(lab->variants[i].name, name) == 0)
            return i;
    return -1;
}

static void usage(FILE *f, const char *prog, const lk_lab *lab)
{
    const unsigned o = lab->options;
    if (o & LK_OPT_FILES)
        for (const char *s = lab->files_usage; *s;) {
            const char *nl = strchr(s, '\n');
            int len = nl ? (int)(nl - s) : (int)strlen(s);
            fprintf(f, "%s %s [options] %.*s\n", s == lab->files_usage ? "usage:" : "      ", prog,
                    len, s);
            s += len + (nl != NULL);
        }
    fprintf(f, "%s %s [options] --dataset NAME | --gen SPEC | --standard\n",
            o & LK_OPT_FILES ? "      " : "usage:", prog);
    fprintf(f,
            "%s, lab %s: runs the serial reference and your GPU code, compares them.\n"
            "  -d, --dataset NAME   a dataset of datasets/MANIFEST (its steps are the default)\n"
            "  -g, --gen SPEC       a generated dataset: %s\n"
            "      --standard       the lab's standard dataset (%s)\n"
            "  -s, --steps N        steps to run (default: the dataset's)\n",
            lab->title, lab->name, lab->gen_help, lab->standard_dataset);
    if (o & LK_OPT_TIME)
        fprintf(f, "  -t, --time SECONDS   run the steps that reach this simulated time\n");
    fprintf(f, "      --serial         run only the serial reference\n"
               "      --gpu            run only your GPU code (default: both, compared)\n");
    if (o & LK_OPT_BLOCK)
        fprintf(f, "  -b, --block WxH      thread block, x along columns (default %dx%d)\n",
                lab->block_x, lab->block_y);
    if (o & LK_OPT_TILE)
        fprintf(f, "      --tile WxH       tile, x along columns (default: the variant's)\n");
    for (int i = 0; i < nvariants(lab); i++)
        fprintf(f, "      %-20s %s%s\n", i == 0 ? "--variant NAME" : "",
                lab->variants[i].name, lab->variants[i].help ? lab->variants[i].help : "");
    fprintf(f,
            "  -o, --out FILE       write the result as text (the model's course format)\n"
            "      --bin FILE       write the result as raw little-endian doubles\n"
            "      --png FILE       a picture of the result\n"
            "      --diff-png FILE  where the GPU result differs from serial, as a picture\n"
            "  -r, --repeat N       time N GPU runs (after the checked run), report the median\n"
            "      --once           call the GPU code once: that call is checked and timed\n"
            "      --no-md5         skip the md5s (for a caller that hashes --bin or times)\n"
            "      --judge FILE     with --gpu: take the GPU output from FILE (raw doubles a\n"
            "                       graded driver wrote) instead of running the GPU code\n"
            "      --json           print one machine-readable result line\n"
            "      --result-fd N    also write that line to file descriptor N\n"
            "      --bench          performance report on %s (GPU)\n"
            "      --serial-steps N serial steps timed by --bench (default %d)\n"
            "      --csv FILE       append the --bench result to FILE as CSV\n"
            "  -h, --help           this text\n"
            "Exit status: 0 ok, 1 error, 2 bad usage, 3 GPU result differs from serial.\n",
            lab->bench_dataset, lab->bench_serial_steps);
}

/* Options the lab does not use are refused, not ignored: a student who passes --tile to a
   lab without tiles would otherwise think it changed something. */
static int check_lab_options(const lk_lab *lab, const lk_options *o, int block_given,
                             int tile_given, lk_error *err)
{
    if (block_given && !(lab->options & LK_OPT_BLOCK))
        return lk_fail(err, "--block: lab %s does not take a thread block%s: leave --block out",
                       lab->name, lab->options & LK_OPT_TILE ? " (it follows from --tile)" : "");
    if (tile_given && !(lab->options & LK_OPT_TILE))
        return lk_fail(err, "--tile: lab %s has no tiles%s: leave --tile out", lab->name,
                       lab->options & LK_OPT_BLOCK ? " (it takes --block WxH)" : "");
    if (o->variant[0] && nvariants(lab) == 0)
        return lk_fail(err, "--variant %s: lab %s has no variants: leave --variant out",
                       o->variant, lab->name);
    if (o->variant[0] && find_variant(lab, o->variant) < 0) {
        char names[256] = "";
        for (int i = 0; i < nvariants(lab); i++)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
                     i ? ", " : "", lab->variants[i].name);
        return lk_fail(err, "--variant %s: unknown variant: use one of %s", o->variant, names);
    }
    if (o->once && (o->bench || !o->gpu || o->serial || o->repeat > 1))
        return lk_fail(err, "--once times one checked call: it goes with --gpu, not with "
                            "--bench, --serial or --repeat");
    if (o->judge && (o->once || o->bench || !o->gpu || o->serial || o->repeat > 1))
        return lk_fail(err, "--judge FILE stands in for the GPU run: it goes with --gpu, not "
                            "with --once, --bench, --serial or --repeat");
    return 0;
}

static int parse_options(int argc, char **argv, const lk_lab *lab, lk_options *o,
                         lk_error *err)
{
    enum { O_SERIAL = 256, O_GPU, O_TILE, O_VARIANT, O_BIN, O_PNG, O_DIFF_PNG, O_JSON, O_FD, O_BENCH,
           O_CSV, O_STANDARD, O_SERIAL_STEPS, O_ONCE, O_NO_MD5, O_JUDGE };
    /* --time and -t exist only for models with a simulated time (the first entry). */
    static const struct option all_options[] = {
        {"time", required_argument, 0, 't'},
        {"dataset", required_argument, 0, 'd'}, {"gen", required_argument, 0, 'g'},
        {"standard", no_argument, 0, O_STANDARD}, {"steps", required_argument, 0, 's'},
        {"serial", no_argument, 0, O_SERIAL},   {"gpu", no_argument, 0, O_GPU},
        {"block", required_argument, 0, 'b'},   {"tile", required_argument, 0, O_TILE},
        {"variant", required_argument, 0, O_VARIANT}, {"out", required_argument, 0, 'o'},
        {"bin", required_argument, 0, O_BIN},   {"png", required_argument, 0, O_PNG},
        {"diff-png", required_argument, 0, O_DIFF_PNG},
        {"repeat", required_argument, 0, 'r'},  {"json", no_argument, 0, O_JSON},
        {"result-fd", required_argument, 0, O_FD}, {"bench", no_argument, 0, O_BENCH},
        {"serial-steps", required_argument, 0, O_SERIAL_STEPS},
        {"csv", required_argument, 0, O_CSV},   {"once", no_argument, 0, O_ONCE},
        {"no-md5", no_argument, 0, O_NO_MD5},  {"judge", required_argument, 0, O_JUDGE},
        {"help", no_argument, 0, 'h'},          {0, 0, 0, 0}};
    memset(o, 0, sizeof *o);
    o->steps = -1;
    o->time = -1.0;
    o->repeat = 1;
    o->result_fd = -1;
    o->block_x = lab->block_x;
    o->block_y = lab->block_y;
    o->serial_steps = lab->bench_serial_steps;
    const int has_time = (lab->options & LK_OPT_TIME) != 0;
    const struct option *long_options = has_time ? all_options : all_options + 1;
    const char *shorts = has_time ? ":d:g:s:t:b:o:r:h" : ":d:g:s:b:o:r:h";
    int opt, rc = 0, standard = 0, block_given = 0, tile_given = 0, serial = 0, gpu = 0;
    opterr = 0;
    while (rc == 0 && (opt = getopt_long(argc, argv, shorts, long_options, NULL)) != -1) {
        switch (opt) {
        case 'd': o->dataset = optarg; break;
        case 'g': o->gen = optarg; break;
        case O_STANDARD: standard = 1; break;
        case 's': rc = lk_parse_int("--steps", optarg, 0, 100000000, &o->steps, err); break;
        case 't': rc = lk_parse_double("--time", optarg, 0.0, 1e9, &o->time, err); break;
        case O_SERIAL: serial = 1; break;
        case O_GPU: gpu = 1; break;
        case 'b':
            block_given = 1;
            rc = lk_parse_dims("--block", optarg, 1024, &o->block_x, &o->block_y, err);
            break;
        case O_TILE:
            tile_given = 1;
            rc = lk_parse_dims("--tile", optarg, 1024, &o->tile_x, &o->tile_y, err);
            break;
        case O_VARIANT:
            if (strlen(optarg) >= sizeof o->variant)
                rc = lk_fail(err, "--variant: '%s' is too long", optarg);
            else
                strcpy(o->variant, optarg);
            break;
        case 'o': o->out = optarg; break;
        case O_BIN: o->bin = optarg; break;
        case O_PNG: o->png = optarg; break;
        case O_DIFF_PNG: o->diff_png = optarg; break;
        case 'r': rc = lk_parse_int("--repeat", optarg, 1, 1000, &o->repeat, err); break;
        case O_JSON: o->json = 1; break;
        case O_FD: rc = lk_parse_int("--result-fd", optarg, 0, 1 << 20, &o->result_fd, err); break;
        case O_BENCH: o->bench = 1; break;
        case O_SERIAL_STEPS:
            rc = lk_parse_int("--serial-steps", optarg, 1, 100000000, &o->serial_steps, err);
            break;
        case O_CSV: o->csv = optarg; break;
        case O_ONCE: o->once = 1; break;
        case O_NO_MD5: o->no_md5 = 1; break;
        case O_JUDGE: o->judge = optarg; break;
        case 'h': usage(stdout, argv[0], lab); return 1;
        case ':': rc = lk_fail(err, "option %s needs a value: see -h", argv[optind - 1]); break;
        default: rc = lk_fail(err, "unknown option '%s': see -h", argv[optind - 1]); break;
        }
    }
    if (rc != 0)
        return -1;
    if (serial && gpu)
        return lk_fail(err, "--serial and --gpu together: leave both out to run both");
    o->serial = !gpu;
    o->gpu = !serial;
    if (o->steps >= 0 && o->time >= 0.0)
        return lk_fail(err, "both --steps and --time given: give one of them (see -h)");
    o->nfiles = argc - optind;
    if (o->nfiles > 0 && !(lab->options & LK_OPT_FILES))
        return lk_fail(err, "%d input files given: lab %s takes no input files: use "
                            "--dataset, --gen or --standard (see -h)", o->nfiles, lab->name);
    if (o->nfiles > 3)
        return lk_fail(err, "%d input files given: see -h for the forms", o->nfiles);
    for (int i = 0; i < o->nfiles; i++)
        o->files[i] = argv[optind + i];
    int sources = (o->dataset != NULL) + (o->gen != NULL) + standard + (o->nfiles > 0);
    if (o->bench && sources == 0)
        o->dataset = lab->bench_dataset, sources = 1;
    if (sources != 1)
        return lk_fail(err, "%s: give exactly one input: %s (see -h)",
                       sources ? "several inputs" : "no input",
                       lab->options & LK_OPT_FILES ? "files, --dataset, --gen or --standard"
                                                   : "--dataset, --gen or --standard");
    if (standard)
        o->dataset = lab->standard_dataset;
    if (o->bench && o->steps < 0 && o->time < 0.0)
        o->steps = lab->bench_steps;
    return check_lab_options(lab, o, block_given, tile_given, err);
}

int lk_run_start(lk_run *run, const lk_lab *lab, int argc, char **argv)
{
    memset(run, 0, sizeof *run);
    run->lab = lab;
    run->prog = argv[0];
    run->serial_steps = -1;
    lk_error_clear(&run->err);
    int rc = parse_options(argc, argv, lab, &run->opt, &run->err);
    if (rc > 0) /* -h */
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

int lk_run_fail(lk_run *run)
{
    if (run->status == 0)
        run->status = 1;
    return -1;
}

/* ---- the plan of GPU calls ------------------------------------------------------------- */

static void launch_label(const lk_lab *lab, const lk_options *o, launch *l)
{
    const lk_variant *v = variant_at(lab, l->variant);
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
    const lk_variant *v = variant_at(lab, variant);
    l->tile_x = run->opt.tile_x;
    l->tile_y = run->opt.tile_y;
    if (v && l->tile_x == 0 && l->tile_y == 0) {
        l->tile_x = v->tile_x;
        l->tile_y = v->tile_y;
    }
    if (run->opt.bench && (!v || !v->given))
        for (int i = 0; i < nvariants(lab); i++)
            if (lab->variants[i].given)
                l->given = i;
    if (run->opt.bench && v && !v->given && v->compare_with)
        l->given = find_variant(lab, v->compare_with);
    launch_label(lab, &run->opt, l);
}

static int plan_calls(lk_run *run)
{
    struct lk_run_state *st = run->state;
    const lk_options *o = &run->opt;
    const lk_lab *lab = run->lab;
    int chosen = o->variant[0] ? find_variant(lab, o->variant) : default_variant(lab);
    if (o->bench && !o->variant[0] && nvariants(lab) > 0) {
        /* Every variant of the lab's own code at its default tile. */
        for (int i = 0; i < nvariants(lab) && st->nlaunches < 8; i++)
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
    const int chosen = o->variant[0] ? find_variant(run->lab, o->variant)
                                     : default_variant(run->lab);
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

size_t lk_output_diff(const lk_output_shape *shape, const double *a, const double *b,
                      char *buf, size_t size)
{
    const size_t w = (size_t)shape->cols + 2 * shape->ghost;
    const size_t grid = w * ((size_t)shape->rows + 2 * shape->ghost);
    size_t ndiff = 0;
    int said = 0;
    for (int f = 0; f < shape->fields; f++)
        for (int i = 0; i < shape->rows; i++) {
            const size_t at = f * grid + (i + shape->ghost) * w + shape->ghost;
            if (memcmp(a + at, b + at, shape->cols * sizeof *a) == 0)
                continue;
            for (int j = 0; j < shape->cols; j++) {
                if (memcmp(&a[at + j], &b[at + j], sizeof *a) == 0)
                    continue;
                if (!said++ && buf)
                    snprintf(buf, size, "%s(row %d, col %d) is %.17g, then %.17g",
                             shape->fields > 1 ? "a field's " : "", i + shape->ghost,
                             j + shape->ghost, a[at + j], b[at + j]);
                ndiff++;
            }
        }
    return ndiff;
}

int lk_run_hashes(const lk_run *run)
{
    return !run->opt.no_md5;
}

int lk_run_binary_verdict(lk_run *run, const char *where_hint)
{
    lk_run_result *r = &run->r;
    const size_t n = (size_t)run->shape.fields * run->shape.rows * run->shape.cols;
    if (r->ran_serial && lk_run_hashes(run) &&
        lk_binary_md5(run->expected, n, r->serial_md5, &run->err) != 0)
        return -1;
    if (r->ran_gpu && lk_run_hashes(run)) {
        if (lk_binary_md5(run->gpu, n, r->gpu_md5, &run->err) != 0)
            return -1;
        snprintf(r->gpu_md5_bin, sizeof r->gpu_md5_bin, "%s", r->gpu_md5);
    }
    if (r->ran_serial && r->ran_gpu) {
        char where[256] = "";
        r->compared = 1;
        size_t nd = lk_output_diff(&run->shape, run->expected, run->gpu, where, sizeof where);
        r->match = nd == 0;
        if (!r->match)
            snprintf(r->mismatch, sizeof r->mismatch,
                     "  %zu of %zu components differ, first %s (%s)\n", nd, n, where,
                     where_hint);
    }
    return 0;
}

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
    const lk_variant *v = variant_at(run->lab, run->state->launches[p->launch].variant);
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

/* The points a step works on: the unit of the bench's cell updates and bytes per cell. */
static size_t step_points(const lk_output_shape *sh)
{
    return sh->points ? sh->points : (size_t)sh->rows * sh->cols;
}

static void bench_header(lk_run *run)
{
    const lk_output_shape *sh = &run->shape;
    printf("bench %s on %s\n", run->lab->name, run->r.device);
    if (sh->points)
        printf("  dataset            %s (%zu points a step, %d x %d outputs), %d steps\n",
               run->label, sh->points, sh->rows, sh->cols, run->steps);
    else
        printf("  dataset            %s (%d x %d = %zu cells), %d steps\n", run->label, sh->rows,
               sh->cols, (size_t)sh->rows * sh->cols, run->steps);
    printf("  copy bandwidth     %.1f GB/s (read + write; the faster of cudaMemcpy %.1f and a "
           "copy kernel %.1f)\n", run->r.copy.best_bps * 1e-9, run->r.copy.memcpy_bps * 1e-9,
           run->r.copy.kernel_bps * 1e-9);
    printf("  serial             %.3f ms per step (%d steps timed)\n",
           run->state->serial_ms_step, run->serial_steps);
    if (run->state->unpinned_reason[0])
        printf("  host buffers       pageable (%s): the transfers' time varies more\n",
               run->state->unpinned_reason);
}

static int min_int(int a, int b)
{
    return a < b ? a : b;
}

/* The report of one bench launch, from its samples; resets them for the next launch. */
static int bench_report(lk_run *run, const launch *l, lk_error *err)
{
    struct lk_run_state *st = run->state;
    const lk_output_shape *sh = &run->shape;
    const size_t n = step_points(sh);
    const int bsteps = run->lab->baseline_steps > 0 ? run->lab->baseline_steps : run->steps;
    /* Before lk_stats_of sorts the samples: the pairs are in the order they were taken. */
    const double ms = lk_per_step_of_pairs(st->samples[SERIES_STEPS], st->samples[SERIES_ZERO],
                                           min_int(st->nsamples[SERIES_STEPS],
                                                   st->nsamples[SERIES_ZERO]),
                                           run->steps);
    const double zero_spread = lk_zero_step_spread(st->samples[SERIES_ZERO],
                                                   min_int(st->nsamples[SERIES_STEPS],
                                                           st->nsamples[SERIES_ZERO]));
    const int resolved = lk_steps_resolved(st->samples[SERIES_STEPS], st->samples[SERIES_ZERO],
                                           min_int(st->nsamples[SERIES_STEPS],
                                                   st->nsamples[SERIES_ZERO]));
    const double bms = lk_per_step_of_pairs(st->samples[SERIES_GIVEN_STEPS],
                                            st->samples[SERIES_GIVEN_ZERO],
                                            min_int(st->nsamples[SERIES_GIVEN_STEPS],
                                                    st->nsamples[SERIES_GIVEN_ZERO]),
                                            bsteps);
    lk_stats s[NSERIES];
    for (int k = 0; k < NSERIES; k++) {
        if (st->nsamples[k])
            lk_stats_of(st->samples[k], st->nsamples[k], &s[k]);
        else
            memset(&s[k], 0, sizeof s[k]);
    }
    double updates = ms > 0 ? n / (ms * 1e-3) : 0.0;
    double bw = ms > 0 ? sh->bytes_per_cell_step * n / (ms * 1e-3) : 0.0;
    double speedup = ms > 0 ? st->serial_ms_step / ms : 0.0;
    printf("  launch             %s\n", l->label);
    printf("  whole run          %.3f ms median of %d (min %.3f, max %.3f); overhead (0 steps) %.3f ms\n",
           s[SERIES_STEPS].median, s[SERIES_STEPS].n, s[SERIES_STEPS].min, s[SERIES_STEPS].max,
           s[SERIES_ZERO].median);
    printf("  time per step      %.4f ms (median of the %d runs less the 0-step run after each)\n",
           ms, min_int(s[SERIES_STEPS].n, s[SERIES_ZERO].n));
    if (!resolved)
        printf("  NOISE              the %d steps add less than twice the spread of the 0-step "
               "runs (%.1f ms, twice their median deviation): the figure above is noise; time "
               "more steps (--steps) or read the kernel time of make bench-profile\n",
               run->steps, zero_spread);
    printf("  cell updates/s     %.3e\n", updates);
    printf("  effective bandwidth %.1f GB/s (%.0f B per cell per step)\n", bw * 1e-9,
           sh->bytes_per_cell_step);
    printf("  %% of copy          %.1f %%\n", 100.0 * bw / run->r.copy.best_bps);
    /* The formula counts every cell; a kernel that skips still cells moves less: the bytes
       it really moves come from the counters (make bench-profile). */
    const double bound_ms = sh->min_bytes_per_cell_step > 0.0
                                ? sh->min_bytes_per_cell_step * n / run->r.copy.best_bps * 1e3
                                : 0.0;
    if (bound_ms > 0.0)
        printf("  one-step bound     %.4f ms per step (%.0f B per cell at the copy bandwidth); "
               "measured bytes: make bench-profile\n", bound_ms, sh->min_bytes_per_cell_step);
    printf("  speedup vs serial  %.1fx\n", speedup);
    if (l->given >= 0) {
        const char *name = run->lab->variants[l->given].name;
        printf("  %-18s %.4f ms per step (%d steps timed, whole run %.3f ms)\n", name, bms,
               bsteps, s[SERIES_GIVEN_STEPS].median);
        printf("  speedup vs %-7s %.1fx\n", name, ms > 0 ? bms / ms : 0.0);
    }
    memset(st->nsamples, 0, sizeof st->nsamples);
    st->have_steps_ref = 0;
    if (!run->opt.csv)
        return 0;
    FILE *f = fopen(run->opt.csv, "a");
    if (!f)
        return lk_fail(err, "%s: cannot open for appending: check the folder exists",
                       run->opt.csv);
    if (ftell(f) == 0)
        fputs("lab,gpu,dataset,rows,cols,steps,launch,ms_per_step,cell_updates_per_s,"
              "effective_GBps,copy_GBps,memcpy_GBps,copy_kernel_GBps,pct_of_copy,"
              "serial_ms_per_step,speedup,formula_bytes_per_cell,bound_bytes_per_cell,"
              "bound_ms_per_step,resolved\n", f);
    const lk_copy_bandwidth *c = &run->r.copy;
    fprintf(f, "%s,\"%s\",%s,%d,%d,%d,\"%s\",%.6f,%.6e,%.2f,%.2f,%.2f,%.2f,%.2f,%.4f,%.2f,"
               "%.0f,%.0f,%.6f,%d\n",
            run->lab->name, run->r.device, run->label, sh->rows, sh->cols, run->steps,
            l->label, ms, updates, bw * 1e-9, c->best_bps * 1e-9, c->memcpy_bps * 1e-9,
            c->kernel_bps * 1e-9, 100.0 * bw / c->best_bps, st->serial_ms_step, speedup,
            sh->bytes_per_cell_step, sh->min_bytes_per_cell_step, bound_ms, resolved);
    if (fclose(f) != 0)
        return lk_fail(err, "%s: write failed: check the disk", run->opt.csv);
    return 0;
}

/* Under --bench a launch that fails is reported and the others still run. */
static void bench_launch_failed(lk_run *run, launch *l)
{
    struct lk_run_state *st = run->state;
    printf("  launch             %s FAILED: %s\n", l->label, run->err.msg);
    l->failed = 1;
    st->bench_failed = 1;
    memset(st->nsamples, 0, sizeof st->nsamples);
    st->have_steps_ref = 0;
    /* Skip the rest of this launch's calls. */
    const int li = (int)(l - st->launches);
    while (st->next < st->nplan && st->plan[st->next].launch == li)
        st->next++;
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
        bench_header(run);
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
            bench_launch_failed(run, l);
        else if (run->opt.bench &&
                 (st->next == st->nplan || st->plan[st->next].launch != p->launch) &&
                 bench_report(run, l, &run->err) != 0) {
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
    const lk_variant *v = variant_at(run->lab, given ? l->given : l->variant);
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

const double *lk_run_output(const lk_run *run)
{
    if (run->status != 0)
        return NULL;
    return run->r.ran_gpu && !run->opt.bench ? run->gpu : run->r.ran_serial ? run->expected : NULL;
}

/* ---- reports -------------------------------------------------------------------------- */

static void write_json(FILE *f, const lk_run *run)
{
    const lk_options *o = &run->opt;
    const lk_run_result *r = &run->r;
    fputs("{\"lab\":", f);
    lk_json_string(f, run->lab->name);
    fputs(",\"dataset\":", f);
    lk_json_string(f, run->label);
    fprintf(f, ",\"rows\":%d,\"cols\":%d", run->shape.rows, run->shape.cols);
    if (run->shape.points)
        fprintf(f, ",\"points\":%zu", run->shape.points);
    if (run->shape.fields > 1)
        fprintf(f, ",\"fields\":%d", run->shape.fields);
    fprintf(f, ",\"steps\":%d,\"block\":\"%dx%d\"", run->steps, o->block_x, o->block_y);
    if (o->tile_x)
        fprintf(f, ",\"tile\":\"%dx%d\"", o->tile_x, o->tile_y);
    if (o->variant[0]) {
        fputs(",\"variant\":", f);
        lk_json_string(f, o->variant);
    }
    fputs(",\"status\":", f);
    lk_json_string(f, run->status == 0 ? "ok" : run->status == EXIT_MISMATCH ? "mismatch" : "error");
    fputs(",\"error\":", f);
    lk_json_string(f, run->status != 0 && run->status != EXIT_MISMATCH ? run->err.msg : NULL);
    if (r->ran_serial) {
        fputs(",\"serial\":{\"seconds\":", f);
        lk_json_number(f, r->serial_s);
        fputs(",\"md5\":", f);
        lk_json_string(f, r->serial_md5[0] ? r->serial_md5 : NULL);
        fputc('}', f);
    }
    if (r->ran_gpu && !o->bench) {
        fputs(",\"gpu\":{\"device\":", f);
        lk_json_string(f, r->device);
        fputs(",\"ms_median\":", f);
        lk_json_number(f, r->gpu_ms.median);
        fputs(",\"ms_min\":", f);
        lk_json_number(f, r->gpu_ms.min);
        fputs(",\"ms_max\":", f);
        lk_json_number(f, r->gpu_ms.max);
        if (r->copy.best_bps > 0) {
            fputs(",\"copy_GBps\":", f);
            lk_json_number(f, r->copy.best_bps * 1e-9);
        }
        fprintf(f, ",\"runs\":%d,\"md5\":", r->gpu_ms.n);
        lk_json_string(f, r->gpu_md5[0] ? r->gpu_md5 : NULL);
        fputs(",\"md5_bin\":", f);
        lk_json_string(f, r->gpu_md5_bin[0] ? r->gpu_md5_bin : NULL);
        fputc('}', f);
    }
    if (r->compared)
        fprintf(f, ",\"match\":%s", r->match ? "true" : "false");
    fputs("}\n", f);
}

static void print_summary(const lk_run *run)
{
    const lk_run_result *r = &run->r;
    const lk_output_shape *sh = &run->shape;
    /* A variant that runs on the CPU (lab 07's cpu) is named as such, without a block. */
    const int cpu = run->state && run->state->cpu_only;
    const char *code = cpu ? "the CPU variant's result" : "GPU result";
    printf("dataset  %s: %d x %d cells, %d steps%s\n", run->label, sh->rows, sh->cols,
           run->steps, run->details);
    if (r->ran_serial)
        printf("serial   %.3f s   md5 %s\n", r->serial_s,
               r->serial_md5[0] ? r->serial_md5 : "not computed (--no-md5)");
    if (r->ran_gpu) {
        const launch *l = &run->state->launches[0];
        printf("%s      %.3f ms   md5 %s   %s%son %s\n", cpu ? "cpu" : "gpu", r->gpu_ms.median,
               r->gpu_md5[0] ? r->gpu_md5 : "not computed (--no-md5)", cpu ? "" : l->label,
               cpu ? "" : " ", r->device);
        if (r->gpu_ms.n > 1)
            printf("         median of %d runs (min %.3f, max %.3f ms)\n", r->gpu_ms.n,
                   r->gpu_ms.min, r->gpu_ms.max);
    }
    if (r->compared) {
        printf("speedup  %.1fx (%s)\n", r->serial_s * 1e3 / r->gpu_ms.median,
               cpu ? "whole run of the CPU variant" : "whole GPU run, transfers included");
        if (r->match && sh->judge)
            printf("check    %s within the tolerance of the reference (%zu values)\n", code,
                   (size_t)sh->rows * sh->cols);
        else if (r->match)
            printf("check    %s identical to serial (%zu cells)\n", code,
                   (size_t)sh->rows * sh->cols);
        else
            printf("check    %s DIFFERS FROM SERIAL\n%s", cpu ? "THE CPU VARIANT'S RESULT"
                                                           : "GPU RESULT", r->mismatch);
    }
}

/* Only for labs compared bit for bit: a tolerance lab's values all differ in their last bits. */
int lk_run_write_diff_png(const lk_run *run)
{
    const lk_output_shape *sh = &run->shape;
    const char *path = run->opt.diff_png;
    if (!path)
        return 0;
    if (!run->r.compared) {
        printf("diff     %s not written: it needs both the serial and the GPU run\n", path);
        return 0;
    }
    if (run->r.match) {
        printf("diff     %s not written: the results are identical\n", path);
        return 0;
    }
    if (sh->judge) {
        printf("diff     %s not written: this lab's results are judged within a tolerance, "
               "not bit for bit\n", path);
        return 0;
    }
    const int rows = sh->rows + 2 * sh->ghost, cols = sh->cols + 2 * sh->ghost;
    const size_t grid = (size_t)rows * cols;
    for (int f = 0; f < sh->fields; f++) {
        const double *expected = run->expected + f * grid, *got = run->gpu + f * grid;
        if (memcmp(expected, got, grid * sizeof *got) == 0)
            continue;
        lk_error err;
        lk_error_clear(&err);
        if (lk_png_diff(path, expected, got, rows, cols, &err) != 0) {
            printf("diff     %s not written: %s\n", path, err.msg);
            return -1;
        }
        if (sh->fields > 1)
            printf("diff     %s: output field %d of %d, red where it differs\n", path, f + 1,
                   sh->fields);
        else
            printf("diff     %s: red where it differs\n", path);
        return 0;
    }
    return 0;
}

int lk_run_finish(lk_run *run)
{
    struct lk_run_state *st = run->state;
    if (run->status == 0 && run->r.compared && !run->r.match)
        run->status = EXIT_MISMATCH;
    if (run->status == 0 && !run->opt.bench) {
        print_summary(run);
        lk_run_write_diff_png(run);
    } else if (run->status == EXIT_MISMATCH) {
        print_summary(run);
        lk_run_write_diff_png(run);
    }
    else if (run->status != 0)
        fprintf(stderr, "%s: %s\n", run->prog, run->err.msg);
    if (run->opt.json)
        write_json(stdout, run);
    if (run->opt.result_fd >= 0) {
        int fd = dup(run->opt.result_fd);
        FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
        if (!f) {
            fprintf(stderr, "%s: --result-fd %d: not an open file descriptor\n", run->prog,
                    run->opt.result_fd);
            if (run->status == 0)
                run->status = 1;
        } else {
            write_json(f, run);
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
