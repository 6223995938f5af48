/* The session's per-lab work kept across sessions (--session-state DIR): the solution's build,
   the trusted timings (serial reference, given version, 0-step calls), the solution's outputs
   and timed calls on the performance instances, and how many students it was timed with. A
   one-student session (a Slurm array task) then starts where the last one on the same GPU
   stopped, as a class run's next student does, instead of paying that work again. Kept per
   GPU, and taken up only for the same kit, seed, host and CUDA architecture: the timings are
   that GPU's and that host's, the instances that seed's. Written by the grader alone, next to
   OUT's own work folders and as reachable as they are. */
#include "state.h"

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
        lc->serial_state = (int)gr_json_num(j, "serial_state", 0);
        lc->serial_ms = gr_json_num(j, "serial_ms", 0);
        lc->serial_steps = (int)gr_json_num(j, "serial_steps", 0);
        lc->serial_extrapolated = gr_json_true(j, "serial_extrapolated");
        lc->baseline_state = (int)gr_json_num(j, "baseline_state", 0);
        lc->baseline_ms = gr_json_num(j, "baseline_ms", 0);
        lc->baseline_steps = (int)gr_json_num(j, "baseline_steps", 0);
        lc->baseline_extrapolated = gr_json_true(j, "baseline_extrapolated");
        lc->zero_state = (int)gr_json_num(j, "zero_state", 0);
        lc->zero_ms = gr_json_num(j, "zero_ms", 0);
        lc->zero_internal_ms = gr_json_num(j, "zero_internal_ms", 0);
        lc->zero_sd_ms = gr_json_num(j, "zero_sd_ms", 0);
        lc->copy_GBps = gr_json_num(j, "copy_GBps", 0);
        lc->perf_rows = (int)gr_json_num(j, "perf_rows", 0);
        lc->perf_cols = (int)gr_json_num(j, "perf_cols", 0);
        lc->perf_cells = (long long)gr_json_num(j, "perf_cells", 0);
        lc->perf_students = (int)gr_json_num(j, "perf_students", 0);
        /* A state that failed is not kept (see gr_state_save): only done or not yet. */
        if (lc->serial_state != 1)
            lc->serial_state = 0;
        if (lc->baseline_state != 1)
            lc->baseline_state = 0;
        if (lc->zero_state != 1)
            lc->zero_state = 0;
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
    fprintf(f, ",\"serial_state\":%d,\"serial_ms\":%.17g,\"serial_steps\":%d,"
               "\"serial_extrapolated\":%s",
            lc->serial_state == 1, lc->serial_ms, lc->serial_steps,
            lc->serial_extrapolated ? "true" : "false");
    fprintf(f, ",\"baseline_state\":%d,\"baseline_ms\":%.17g,\"baseline_steps\":%d,"
               "\"baseline_extrapolated\":%s",
            lc->baseline_state == 1, lc->baseline_ms, lc->baseline_steps,
            lc->baseline_extrapolated ? "true" : "false");
    fprintf(f, ",\"zero_state\":%d,\"zero_ms\":%.17g,\"zero_internal_ms\":%.17g,"
               "\"zero_sd_ms\":%.17g,\"copy_GBps\":%.17g,\"perf_rows\":%d,\"perf_cols\":%d,"
               "\"perf_cells\":%lld,\"perf_students\":%d,\"instances\":[",
            lc->zero_state == 1, lc->zero_ms, lc->zero_internal_ms, lc->zero_sd_ms,
            lc->copy_GBps, lc->perf_rows, lc->perf_cols, lc->perf_cells, lc->perf_students);
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
