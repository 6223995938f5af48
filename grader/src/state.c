/* The session's per-lab work kept across sessions (--session-state DIR): the solution's build,
   the trusted timings (serial reference, given version, 0-step calls), the solution's outputs
   and timed calls on the performance instances, and how many students it was timed with. A
   one-student session (a Slurm array task) then starts where the last one on the same GPU
   stopped, as a class run's next student does, instead of paying that work again. Kept per
   GPU, and taken up only for the same kit, seed, host and CUDA architecture: the timings are
   that GPU's and that host's, the instances that seed's. Written by the grader alone, next to
   OUT's own work folders and as reachable as they are. */
#include "state.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "driver.h"
#include "jsonr.h"
#include "labkit/json.h"
#include "sandbox.h"
#include "util.h"

/* Bumped when the file's meaning changes: an older file is then not taken up. */
#define STATE_FORMAT 1

/* The state file's numbers, each read by load() and written by gr_state_save() from this one
   list. A timing state is kept only when done (1): a failed one (-1) reads back as 0, not
   yet, and is tried again. */
typedef enum { FIELD_STATE, FIELD_INT, FIELD_FLAG, FIELD_DOUBLE, FIELD_LLONG } field_kind;
typedef struct {
    const char *name;
    field_kind kind;
    size_t offset;
} state_field;
static const state_field state_fields[] = {
    {"serial_state", FIELD_STATE, offsetof(gr_lab_ctx, serial_state)},
    {"serial_ms", FIELD_DOUBLE, offsetof(gr_lab_ctx, serial_ms)},
    {"serial_steps", FIELD_INT, offsetof(gr_lab_ctx, serial_steps)},
    {"serial_extrapolated", FIELD_FLAG, offsetof(gr_lab_ctx, serial_extrapolated)},
    {"baseline_state", FIELD_STATE, offsetof(gr_lab_ctx, baseline_state)},
    {"baseline_ms", FIELD_DOUBLE, offsetof(gr_lab_ctx, baseline_ms)},
    {"baseline_steps", FIELD_INT, offsetof(gr_lab_ctx, baseline_steps)},
    {"baseline_extrapolated", FIELD_FLAG, offsetof(gr_lab_ctx, baseline_extrapolated)},
    {"zero_state", FIELD_STATE, offsetof(gr_lab_ctx, zero_state)},
    {"zero_ms", FIELD_DOUBLE, offsetof(gr_lab_ctx, zero_ms)},
    {"zero_internal_ms", FIELD_DOUBLE, offsetof(gr_lab_ctx, zero_internal_ms)},
    {"zero_sd_ms", FIELD_DOUBLE, offsetof(gr_lab_ctx, zero_sd_ms)},
    {"copy_GBps", FIELD_DOUBLE, offsetof(gr_lab_ctx, copy_GBps)},
    {"perf_rows", FIELD_INT, offsetof(gr_lab_ctx, perf_rows)},
    {"perf_cols", FIELD_INT, offsetof(gr_lab_ctx, perf_cols)},
    {"perf_cells", FIELD_LLONG, offsetof(gr_lab_ctx, perf_cells)},
    {"perf_students", FIELD_INT, offsetof(gr_lab_ctx, perf_students)},
};

/* What must be equal for the work to count: kit (its grading parts), seed, host, arch. */
static char *state_key(const gr_session *s, const gr_lab_ctx *lc)
{
    char host[256] = "?";
    gethostname(host, sizeof host - 1);
    return gr_strf("format %d; kit %s; seed %llu; host %s; arch %s", STATE_FORMAT, lc->kit_hash,
                   s->seed, host, s->kitinfo.cuda_arch ? s->kitinfo.cuda_arch : "lab.mk's");
}

static char *state_path(const gr_lab_ctx *lc)
{
    return gr_strf("%s/state.json", lc->kit_work);
}

/* Take up @p lc's state file when it fits this session and its solution build is there. */
static void load(const gr_session *s, gr_lab_ctx *lc)
{
    char *path = state_path(lc), *key = state_key(s, lc);
    lk_error err;
    char *text = gr_exists(path) ? gr_read_file(path, 1 << 20, NULL, &err) : NULL;
    gr_json *j = text ? gr_json_parse(text, path, &err) : NULL;
    const char *driver = gr_json_str(j, "driver");
    char *driver_path = driver ? gr_strf("%s/build/%s", lc->kit_work, driver) : NULL;
    if (j && strcmp(gr_json_str(j, "key") ? gr_json_str(j, "key") : "", key) == 0 &&
        driver && strcmp(driver, lc->rub->driver) == 0 && access(driver_path, X_OK) == 0) {
        lc->ref_state = 1;
        lc->ref_driver = driver_path, driver_path = NULL;
        for (size_t i = 0; i < sizeof state_fields / sizeof state_fields[0]; i++) {
            const state_field *f = &state_fields[i];
            void *v = (char *)lc + f->offset;
            switch (f->kind) {
            case FIELD_STATE: *(int *)v = gr_json_num(j, f->name, 0) == 1; break;
            case FIELD_INT: *(int *)v = (int)gr_json_num(j, f->name, 0); break;
            case FIELD_FLAG: *(int *)v = gr_json_true(j, f->name); break;
            case FIELD_DOUBLE: *(double *)v = gr_json_num(j, f->name, 0); break;
            case FIELD_LLONG: *(long long *)v = (long long)gr_json_num(j, f->name, 0); break;
            }
        }
        const gr_json *inst = gr_json_get(j, "instances");
        const int n = gr_json_count(inst);
        if (n > 0 && n <= 64) {
            lc->nperf_refs = n;
            lc->perf_refs = gr_xcalloc((size_t)n, sizeof *lc->perf_refs);
            lc->sol_ms = gr_xcalloc((size_t)n, sizeof *lc->sol_ms);
            lc->nsol_ms = gr_xcalloc((size_t)n, sizeof *lc->nsol_ms);
            int k = 0;
            for (const gr_json *e = inst->child; e; e = e->next, k++) {
                char *bin = gr_strf("%s/perf/instance-%d.bin", lc->kit_work, k);
                if (gr_json_true(e, "output") && gr_exists(bin))
                    lc->perf_refs[k] = bin, bin = NULL;
                free(bin);
                const gr_json *ms = gr_json_get(e, "ms");
                /* Timings without the output they were taken with are not taken up. */
                if (!lc->perf_refs[k] || !cJSON_IsArray(ms))
                    continue;
                for (const gr_json *m = ms->child; m && lc->nsol_ms[k] < GR_SOLUTION_TIMES;
                     m = m->next)
                    if (cJSON_IsNumber(m) && m->valuedouble > 0)
                        lc->sol_ms[k][lc->nsol_ms[k]++] = m->valuedouble;
            }
        }
    }
    gr_json_free(j);
    free(text);
    free(driver_path);
    free(key);
    free(path);
}

int gr_state_open(gr_session *s, const char *key, lk_error *err)
{
    char *dir = gr_strf("%s/%s", s->state_dir, key);
    int rc = gr_mkdir_p(dir, 0755, err);
    /* One session at a time works in a GPU's state: a second waits, as for the GPU. */
    char *lock = gr_strf("%s/lock", dir);
    if (rc == 0 && (s->state_lock = gr_take_lock(lock, LOCK_EX, "session state",
                                                  s->lock_timeout_s,
                                                  "waiting for another grader session using "
                                                  "this GPU's session state", err)) < 0)
        rc = -1;
    free(lock);
    for (int l = 0; rc == 0 && l < s->nlabs; l++) {
        gr_lab_ctx *lc = &s->labs[l];
        free(lc->kit_work);
        lc->kit_work = gr_strf("%s/%s", dir, lc->rub->name);
        if (lc->have_solution && lc->ref_state == 0)
            load(s, lc);
    }
    free(dir);
    return rc;
}

void gr_state_save(const gr_session *s, const gr_lab_ctx *lc)
{
    if (!s->state_dir || lc->ref_state != 1)
        return;
    char *key = state_key(s, lc), *path = state_path(lc);
    const char *driver = strrchr(lc->ref_driver, '/') ? strrchr(lc->ref_driver, '/') + 1
                                                       : lc->ref_driver;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) {
        free(path);
        free(key);
        return;
    }
    fprintf(f, "{\"key\":");
    lk_json_string(f, key);
    fprintf(f, ",\"driver\":");
    lk_json_string(f, driver);
    for (size_t i = 0; i < sizeof state_fields / sizeof state_fields[0]; i++) {
        const state_field *field = &state_fields[i];
        const void *v = (const char *)lc + field->offset;
        fprintf(f, ",\"%s\":", field->name);
        switch (field->kind) {
        case FIELD_STATE: fprintf(f, "%d", *(const int *)v == 1); break;
        case FIELD_INT: fprintf(f, "%d", *(const int *)v); break;
        case FIELD_FLAG: fprintf(f, "%s", *(const int *)v ? "true" : "false"); break;
        case FIELD_DOUBLE: fprintf(f, "%.17g", *(const double *)v); break;
        case FIELD_LLONG: fprintf(f, "%lld", *(const long long *)v); break;
        }
    }
    fprintf(f, ",\"instances\":[");
    for (int k = 0; k < lc->nperf_refs; k++) {
        fprintf(f, "%s{\"output\":%s,\"ms\":[", k ? "," : "",
                lc->perf_refs[k] ? "true" : "false");
        for (int i = 0; i < lc->nsol_ms[k]; i++)
            fprintf(f, "%s%.17g", i ? "," : "", lc->sol_ms[k][i]);
        fprintf(f, "]}");
    }
    fprintf(f, "]}\n");
    fclose(f);
    lk_error err;
    if (gr_write_atomic_text(path, text, &err) != 0)
        fprintf(stderr, "labkit-grade: %s: the next session on this GPU does this lab's session "
                        "work again: %s\n", path, err.msg);
    free(text);
    free(path);
    free(key);
}
