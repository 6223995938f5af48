/* labkit-gen: make the kit's datasets and their expected hashes. See datasets/README.md. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bruss/bruss.h"
#include "labkit/grid_io.h"
#include "labkit/manifest.h"
#include "reduce/reduce.h"
#include "sciddicat/sciddicat.h"
#include "swe/swe.h"
#include "vstring/vstring.h"

static const char *usage =
    "usage: labkit-gen [--manifest FILE] COMMAND ...\n"
    "  files SPEC PREFIX   write PREFIX_header.txt, PREFIX_dem.txt, PREFIX_source.txt for a\n"
    "                      generator spec KIND:ROWSxCOLS:SEED (KIND: valley, plane, dome or flood)\n"
    "  dataset NAME DIR    write the input files of manifest dataset NAME into DIR\n"
    "                      (SciddicaT; shallow-water and string datasets have none: they\n"
    "                      are generated)\n"
    "  expect NAME         run the serial reference on NAME, print the md5 of its output\n"
    "                      (shallow water: of the interior of Z, Qx, Qy as raw doubles;\n"
    "                      string: of the final state, 2N raw doubles; Brusselator: 2M^2)\n"
    "  list                list the manifest's datasets\n";

static int write_files(const sciddicat_spec *spec, const char *prefix, lk_error *err)
{
    size_t n = (size_t)spec->rows * spec->cols;
    double *dem = malloc(n * sizeof *dem), *source = malloc(n * sizeof *source);
    char path[4200];
    lk_grid_header hdr;
    int rc = -1;
    if (!dem || !source)
        lk_fail(err, "out of memory for %d x %d grids", spec->rows, spec->cols);
    else if (sciddicat_generate(spec, &hdr, dem, source, err) == 0) {
        snprintf(path, sizeof path, "%s_header.txt", prefix);
        if (lk_write_header(path, &hdr, err) == 0) {
            snprintf(path, sizeof path, "%s_dem.txt", prefix);
            if (lk_write_body(path, dem, spec->rows, spec->cols, err) == 0) {
                snprintf(path, sizeof path, "%s_source.txt", prefix);
                rc = lk_write_body(path, source, spec->rows, spec->cols, err);
            }
        }
    }
    free(dem);
    free(source);
    return rc;
}

static int find(const char *manifest_path, const char *name, lk_manifest *m,
                const lk_manifest_entry **e, lk_error *err)
{
    if (lk_manifest_read(manifest_path, m, err) != 0)
        return -1;
    *e = lk_manifest_find(m, name);
    if (!*e) {
        lk_manifest_free(m);
        return lk_fail(err, "%s: no dataset named '%s': run `labkit-gen list`", manifest_path,
                       name);
    }
    return 0;
}

/* Model of manifest dataset @p name, or "" when it is not listed (the callers report it). */
static void model_of(const char *manifest_path, const char *name, char *model, size_t size)
{
    lk_manifest m;
    lk_error err;
    model[0] = '\0';
    if (lk_manifest_read(manifest_path, &m, &err) != 0)
        return;
    const lk_manifest_entry *e = lk_manifest_find(&m, name);
    if (e)
        snprintf(model, size, "%s", e->model);
    lk_manifest_free(&m);
}

/* The shallow-water hash: serial reference on the generated dataset, md5 of its output. */
static int expect_swe(const char *manifest_path, const char *name, lk_error *err)
{
    swe sim;
    swe_fields out;
    int steps;
    char hex[33];
    if (swe_load_dataset(manifest_path, name, &sim, &steps, NULL, err) != 0)
        return -1;
    int rc = -1;
    if (swe_fields_alloc(&out, sim.rows, sim.cols, err) == 0) {
        if (swe_serial(&sim, steps, &out, err) == 0 && swe_md5(&sim, &out, hex, err) == 0) {
            printf("%s\n", hex);
            rc = 0;
        }
        swe_fields_free(&out);
    }
    swe_free(&sim);
    return rc;
}

/* The string hash: serial reference on the generated dataset, md5 of its final state. */
static int expect_vstring(const char *manifest_path, const char *name, lk_error *err)
{
    vstring sim;
    int steps, rc = -1;
    char hex[33];
    if (vstring_load_dataset(manifest_path, name, &sim, &steps, NULL, err) != 0)
        return -1;
    double *y = malloc(vstring_components(&sim) * sizeof *y);
    if (!y)
        lk_fail(err, "out of memory");
    else if (vstring_serial(&sim, steps, y, err) == 0 &&
             vstring_md5(y, sim.n, hex, err) == 0) {
        printf("%s\n", hex);
        rc = 0;
    }
    free(y);
    vstring_free(&sim);
    return rc;
}

/* The Brusselator hash (lab 05's stretch): serial reference, md5 of the final state. */
static int expect_bruss(const char *manifest_path, const char *name, lk_error *err)
{
    bruss sim;
    int steps, rc = -1;
    char hex[33];
    if (bruss_load_dataset(manifest_path, name, &sim, &steps, NULL, err) != 0)
        return -1;
    double *y = malloc(bruss_components(sim.m) * sizeof *y);
    if (!y)
        lk_fail(err, "out of memory");
    else if (bruss_serial(&sim, steps, y, err) == 0 && bruss_md5(y, sim.m, hex, err) == 0) {
        printf("%s\n", hex);
        rc = 0;
    }
    free(y);
    bruss_free(&sim);
    return rc;
}

/* Lab 06's hash: the serial reference's raw results (a field's sum, max, count and box; a
   Lagrange problem's naive values) as little-endian doubles. */
static int expect_reduce(const char *manifest_path, const char *name, lk_error *err)
{
    reduce_input in;
    char hex[33];
    if (reduce_load_dataset(manifest_path, name, &in, NULL, NULL, err) != 0)
        return -1;
    if (in.lagrange)
        reduce_lagrange_naive(in.x, in.y, in.n1, in.xs, in.gold, in.S);
    else
        reduce_serial(in.field, in.rows, in.cols, in.threshold, in.gold, NULL);
    int rc = lk_binary_md5(in.gold, in.nout, hex, err);
    if (rc == 0)
        printf("%s\n", hex);
    reduce_input_free(&in);
    return rc ? -1 : 0;
}

int main(int argc, char **argv)
{
    const char *manifest_path = LK_TOP_DIR "/datasets/MANIFEST";
    static const struct option options[] = {{"manifest", required_argument, 0, 'm'},
                                            {"help", no_argument, 0, 'h'},
                                            {0, 0, 0, 0}};
    int opt;
    while ((opt = getopt_long(argc, argv, "+m:h", options, NULL)) != -1) {
        if (opt == 'm')
            manifest_path = optarg;
        else {
            fputs(usage, opt == 'h' ? stdout : stderr);
            return opt == 'h' ? 0 : 2;
        }
    }
    argc -= optind;
    argv += optind;
    lk_error err;
    lk_error_clear(&err);
    if (argc == 3 && strcmp(argv[0], "files") == 0) {
        sciddicat_spec spec;
        if (sciddicat_spec_parse(argv[1], &spec, &err) != 0 ||
            write_files(&spec, argv[2], &err) != 0)
            lk_die("labkit-gen", &err);
        return 0;
    }
    char model[32] = "";
    if (argc >= 2 && (strcmp(argv[0], "dataset") == 0 || strcmp(argv[0], "expect") == 0))
        model_of(manifest_path, argv[1], model, sizeof model);
    if (argc == 3 && strcmp(argv[0], "dataset") == 0 && strcmp(model, "swe") == 0) {
        lk_fail(&err, "%s: dataset '%s' is a shallow-water dataset: it has no input files; "
                      "the drivers generate it from its spec (--dataset %s)", manifest_path,
                argv[1], argv[1]);
        lk_die("labkit-gen", &err);
    }
    if (argc == 3 && strcmp(argv[0], "dataset") == 0 && strcmp(model, "vstring") == 0) {
        lk_fail(&err, "%s: dataset '%s' is a string dataset: it has no input files; the "
                      "driver generates it from its spec (--dataset %s)", manifest_path,
                argv[1], argv[1]);
        lk_die("labkit-gen", &err);
    }
    if (argc == 2 && strcmp(argv[0], "expect") == 0 && strcmp(model, "vstring") == 0) {
        if (expect_vstring(manifest_path, argv[1], &err) != 0)
            lk_die("labkit-gen", &err);
        return 0;
    }
    if (argc == 3 && strcmp(argv[0], "dataset") == 0 && strcmp(model, "bruss") == 0) {
        lk_fail(&err, "%s: dataset '%s' is a Brusselator dataset: it has no input files; the "
                      "driver generates it from its spec (--dataset %s)", manifest_path,
                argv[1], argv[1]);
        lk_die("labkit-gen", &err);
    }
    if (argc == 2 && strcmp(argv[0], "expect") == 0 && strcmp(model, "bruss") == 0) {
        if (expect_bruss(manifest_path, argv[1], &err) != 0)
            lk_die("labkit-gen", &err);
        return 0;
    }
    if (argc == 2 && strcmp(argv[0], "expect") == 0 && strcmp(model, "swe") == 0) {
        if (expect_swe(manifest_path, argv[1], &err) != 0)
            lk_die("labkit-gen", &err);
        return 0;
    }
    if (argc == 3 && strcmp(argv[0], "dataset") == 0 && strcmp(model, "reduce") == 0) {
        lk_fail(&err, "%s: dataset '%s' is a lab 06 dataset: it has no input files; the "
                      "driver generates it from its spec (--dataset %s)", manifest_path,
                argv[1], argv[1]);
        lk_die("labkit-gen", &err);
    }
    if (argc == 2 && strcmp(argv[0], "expect") == 0 && strcmp(model, "reduce") == 0) {
        if (expect_reduce(manifest_path, argv[1], &err) != 0)
            lk_die("labkit-gen", &err);
        return 0;
    }
    if (argc == 3 && strcmp(argv[0], "dataset") == 0) {
        lk_manifest m;
        const lk_manifest_entry *e;
        sciddicat_spec spec;
        char prefix[4200];
        if (find(manifest_path, argv[1], &m, &e, &err) != 0)
            lk_die("labkit-gen", &err);
        snprintf(prefix, sizeof prefix, "%s/%s", argv[2], e->name);
        if (sciddicat_spec_parse(e->spec, &spec, &err) != 0 ||
            write_files(&spec, prefix, &err) != 0)
            lk_die("labkit-gen", &err);
        printf("%s_header.txt %s_dem.txt %s_source.txt\n", prefix, prefix, prefix);
        lk_manifest_free(&m);
        return 0;
    }
    if (argc == 2 && strcmp(argv[0], "expect") == 0) {
        sciddicat sim;
        int steps;
        char hex[33];
        if (sciddicat_load_dataset(manifest_path, argv[1], &sim, &steps, NULL, &err) != 0)
            lk_die("labkit-gen", &err);
        double *h = malloc((size_t)sim.rows * sim.cols * sizeof *h);
        if (!h) {
            lk_fail(&err, "out of memory");
            lk_die("labkit-gen", &err);
        }
        if (sciddicat_serial(&sim, steps, h, NULL, &err) != 0 ||
            lk_course_text_md5(h, sim.rows, sim.cols, hex, &err) != 0)
            lk_die("labkit-gen", &err);
        printf("%s\n", hex);
        free(h);
        sciddicat_free(&sim);
        return 0;
    }
    if (argc == 1 && strcmp(argv[0], "list") == 0) {
        lk_manifest m;
        if (lk_manifest_read(manifest_path, &m, &err) != 0)
            lk_die("labkit-gen", &err);
        for (int i = 0; i < m.n; i++)
            printf("%-24s %-10s %-22s %8d %-3s %s\n", m.e[i].name, m.e[i].model, m.e[i].spec,
                   m.e[i].steps, m.e[i].stored ? "yes" : "no", m.e[i].md5);
        lk_manifest_free(&m);
        return 0;
    }
    fputs(usage, stderr);
    return 2;
}
