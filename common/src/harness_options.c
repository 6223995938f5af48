/* A lab driver's command line (labkit/harness.h): the lab's variants, -h, and the options
   checked against what the lab takes. */
#include "harness_state.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "labkit/cli.h"

const lk_variant *lk_lab_variant_at(const lk_lab *lab, int i)
{
    return i >= 0 ? &lab->variants[i] : NULL;
}

int lk_lab_nvariants(const lk_lab *lab)
{
    int n = 0;
    while (lab->variants && lab->variants[n].name)
        n++;
    return n;
}

/* The variant that runs without --variant: the first that is not given, -1 if none. */
int lk_lab_default_variant(const lk_lab *lab)
{
    for (int i = 0; i < lk_lab_nvariants(lab); i++)
        if (!lab->variants[i].given)
            return i;
    return -1;
}

int lk_lab_find_variant(const lk_lab *lab, const char *name)
{
    for (int i = 0; i < lk_lab_nvariants(lab); i++)
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
    for (int i = 0; i < lk_lab_nvariants(lab); i++)
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
            "      --list-datasets bench|standard\n"
            "                       print that dataset's manifest name and stop (for make)\n"
            "  -h, --help           this text\n"
            "Exit status: 0 ok, 1 error, 2 bad usage, 3 GPU result differs from serial.\n",
            lab->bench_dataset, lab->bench_serial_steps);
}

/* --list-datasets WHICH: the manifest names of the lab's --bench or --standard dataset, one a
   line, for make (lab.mk's bench-profile) instead of a parse of -h. 1 when printed. */
static int list_datasets(const lk_lab *lab, const char *which, lk_error *err)
{
    const char *name;
    if (strcmp(which, "bench") == 0)
        name = lab->bench_dataset;
    else if (strcmp(which, "standard") == 0)
        name = lab->standard_dataset;
    else
        return lk_fail(err, "--list-datasets %s: no such list: use bench or standard", which);
    if (name)
        printf("%s\n", name);
    return 1;
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
    if (o->variant[0] && lk_lab_nvariants(lab) == 0)
        return lk_fail(err, "--variant %s: lab %s has no variants: leave --variant out",
                       o->variant, lab->name);
    if (o->variant[0] && lk_lab_find_variant(lab, o->variant) < 0) {
        char names[256] = "";
        for (int i = 0; i < lk_lab_nvariants(lab); i++)
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

int lk_options_parse(int argc, char **argv, const lk_lab *lab, lk_options *o,
                         lk_error *err)
{
    enum { O_SERIAL = 256, O_GPU, O_TILE, O_VARIANT, O_BIN, O_PNG, O_DIFF_PNG, O_JSON, O_FD, O_BENCH,
           O_CSV, O_STANDARD, O_SERIAL_STEPS, O_ONCE, O_NO_MD5, O_JUDGE, O_LIST_DATASETS };
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
        {"list-datasets", required_argument, 0, O_LIST_DATASETS},
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
        case O_LIST_DATASETS: return list_datasets(lab, optarg, err);
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
