/* A run's outputs (labkit/harness.h): comparing and hashing the results, the summary, the
   --json line and the --diff-png picture. */
#include "harness_state.h"

#include <stdio.h>
#include <string.h>

#include "labkit/grid_io.h"
#include "labkit/json.h"
#include "labkit/png.h"

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

const double *lk_run_output(const lk_run *run)
{
    if (run->status != 0)
        return NULL;
    return run->r.ran_gpu && !run->opt.bench ? run->gpu : run->r.ran_serial ? run->expected : NULL;
}

void lk_run_write_json(FILE *f, const lk_run *run)
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

void lk_run_print_summary(const lk_run *run)
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
