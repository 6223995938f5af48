/* The GPU stages: correctness against the serial reference, performance against the
   solution. Every driver runs in the sandbox; results come back over a private descriptor
   and outputs are judged from the binary files the drivers write, never from what a
   driver says about them. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "grade.h"
#include "labkit/compare.h"
#include "labkit/grid_io.h"
#include "labkit/md5.h"
#include "sandbox.h"
#include "util.h"

/* A descriptor number the student code cannot guess in advance. */
static int pick_fd(gr_session *s)
{
    s->fd_state = s->fd_state * 1103515245u + 12345u;
    return 10 + (int)((s->fd_state >> 16) % 190);
}

static void run_limits(const gr_session *s, double wall, long long bin_bytes, int drop,
                       gr_limits *lim)
{
    memset(lim, 0, sizeof *lim);
    lim->wall_s = wall;
    lim->cpu_s = (long)wall + 10; /* CUDA waits by spinning: CPU time follows wall time */
    lim->file_bytes = bin_bytes * 2 + (1LL << 20) > (64LL << 20) ? bin_bytes * 2 + (1LL << 20)
                                                               : (64LL << 20);
    lim->output_bytes = 1LL << 20;
    lim->nproc = 64;
    lim->drop = drop;
    lim->jail = &s->jail;
}

typedef struct driver_run {
    gr_outcome o;
    gr_json *res;  /* the result line, or NULL */
    char why[512]; /* why there is no result line */
    char *out_path, *err_path;
} driver_run;

static void driver_run_free(driver_run *dr)
{
    gr_json_free(dr->res);
    free(dr->out_path);
    free(dr->err_path);
    memset(dr, 0, sizeof *dr);
}

/* The result descriptor must carry exactly one line: the driver's. Anything else means
   someone else wrote to it. */
static gr_json *read_result(const char *path, char *why, size_t size)
{
    lk_error e;
    size_t len;
    char *text = gr_read_file(path, 1 << 20, &len, &e);
    if (!text) {
        snprintf(why, size, "no result line: %.400s", e.msg);
        return NULL;
    }
    int lines = 0;
    for (size_t i = 0; i < len; i++)
        lines += text[i] == '\n';
    if (len == 0 || lines != 1 || text[len - 1] != '\n' || strlen(text) != len) {
        snprintf(why, size, len == 0 ? "the driver wrote no result line (it stopped early)"
                                     : "the result descriptor holds %d lines instead of the "
                                       "driver's one: result channel tampered with",
                 lines);
        free(text);
        return NULL;
    }
    gr_json *j = gr_json_parse(text, "result line", &e);
    if (!cJSON_IsObject(j))
        snprintf(why, size, "unreadable result line: %.400s", j ? "not an object" : e.msg);
    if (j && !cJSON_IsObject(j)) {
        gr_json_free(j);
        j = NULL;
    }
    free(text);
    return j;
}

static int run_driver(gr_session *s, const char *driver, const char *cwd, const char *const *args,
                      double wall, long long bin_bytes, int drop, const char *tag,
                      driver_run *dr, lk_error *err)
{
    memset(dr, 0, sizeof *dr);
    const char *argv[32];
    int n = 0;
    argv[n++] = driver;
    for (int i = 0; args[i] && n < 28; i++)
        argv[n++] = args[i];
    int fd = pick_fd(s);
    char fdnum[16];
    snprintf(fdnum, sizeof fdnum, "%d", fd);
    argv[n++] = "--result-fd";
    argv[n++] = fdnum;
    argv[n] = NULL;
    dr->out_path = gr_strf("%s/%s.out", cwd, tag);
    dr->err_path = gr_strf("%s/%s.err", cwd, tag);
    char *res_path = gr_strf("%s/%s.result", cwd, tag);
    gr_limits lim;
    run_limits(s, wall, bin_bytes, drop, &lim);
    /* The driver sees its own build folder (WORK/build/labNN: WORK read-only) and writes in
       its run folder only. */
    char *home = gr_xstrdup(driver);
    for (int up = 0; up < 2 && strrchr(home, '/'); up++)
        *strrchr(home, '/') = '\0';
    const char *readable[] = {home, NULL}, *writable[] = {cwd, NULL};
    gr_cmd cmd = {argv, cwd, dr->out_path, dr->err_path, res_path, fd, NULL, writable, readable};
    int rc = gr_sandbox_run(&cmd, &lim, &dr->o, err);
    free(home);
    if (rc == 0)
        dr->res = read_result(res_path, dr->why, sizeof dr->why);
    free(res_path);
    return rc;
}

static void output_head(const driver_run *dr, const char *src_prefix, gr_buf *detail)
{
    static const char *const names[] = {"stderr", "stdout"};
    const char *paths[] = {dr->err_path, dr->out_path};
    for (int i = 0; i < 2; i++) {
        lk_error e;
        char *text = gr_read_file(paths[i], 4u << 20, NULL, &e);
        if (!text || !text[0]) {
            free(text);
            continue;
        }
        char *shown = src_prefix ? gr_replace_all(text, src_prefix, "") : gr_xstrdup(text);
        gr_buf_printf(detail, "first lines of %s:\n", names[i]);
        gr_head(shown, 15, 2048, detail);
        free(shown);
        free(text);
    }
}

/* Did the run fail? If so, one line in @p reason and its output's head in @p detail. */
static int run_failed(const driver_run *dr, const char *src_prefix, char *reason, size_t size,
                      gr_buf *detail)
{
    const char *status = dr->res ? gr_json_str(dr->res, "status") : NULL;
    if (gr_outcome_ok(&dr->o) && dr->res && status && strcmp(status, "ok") == 0)
        return 0;
    if (dr->o.end != GR_END_EXITED) {
        snprintf(reason, size, "%s", dr->o.reason);
    } else if (dr->res && gr_json_str(dr->res, "error")) {
        char *msg = src_prefix ? gr_replace_all(gr_json_str(dr->res, "error"), src_prefix, "")
                               : gr_xstrdup(gr_json_str(dr->res, "error"));
        snprintf(reason, size, "%s%s", strstr(msg, "cuda") || strstr(msg, "CUDA") ?
                 "CUDA error: " : "error: ", msg);
        free(msg);
    } else if (dr->o.status != 0) {
        snprintf(reason, size, "exit status %d without a result (%s)", dr->o.status, dr->why);
    } else if (!dr->res) {
        snprintf(reason, size, "%s", dr->why);
    } else {
        snprintf(reason, size, "the driver reported status '%s'", status ? status : "?");
    }
    output_head(dr, src_prefix, detail);
    return 1;
}

static int output_hash(gr_policy policy, const double *v, int rows, int cols, char hex[33],
                       lk_error *err)
{
    if (policy == GR_POLICY_HASH_COURSE_TEXT)
        return lk_course_text_md5(v, rows, cols, hex, err);
    return lk_binary_md5(v, (size_t)rows * cols, hex, err);
}

/* Compare an output file with the reference. 1 same, 0 differs (reason, detail), -1 grader
   error (the reference cannot be read). @p ref_hash NULL compares bit for bit. */
static int compare_outputs(const gr_lab_rubric *lab, const char *ref_bin, const char *got_bin,
                           int rows, int cols, const char *ref_hash, char *reason, size_t size,
                           gr_buf *detail, lk_error *err)
{
    size_t n = (size_t)rows * cols;
    struct stat st;
    if (stat(got_bin, &st) != 0) {
        snprintf(reason, size, "the driver wrote no output file");
        return 0;
    }
    if ((size_t)st.st_size != n * sizeof(double)) {
        snprintf(reason, size, "the output has %lld bytes instead of %zu (%d x %d doubles)",
                 (long long)st.st_size, n * sizeof(double), rows, cols);
        return 0;
    }
    double *want = malloc(n * sizeof *want), *got = malloc(n * sizeof *got);
    lk_error e;
    int rc = -1;
    if (!want || !got) {
        lk_fail(err, "out of memory comparing %d x %d grids", rows, cols);
        goto done;
    }
    if (lk_read_binary(ref_bin, want, n, err) != 0)
        goto done;
    if (lk_read_binary(got_bin, got, n, &e) != 0) {
        snprintf(reason, size, "unreadable output: %.900s", e.msg);
        rc = 0;
        goto done;
    }
    char hex[33] = "";
    if (lab->policy != GR_POLICY_TOLERANCE && ref_hash) {
        if (output_hash(lab->policy, got, rows, cols, hex, err) != 0)
            goto done;
        if (strcmp(hex, ref_hash) == 0) {
            rc = 1;
            goto done;
        }
    }
    lk_compare c;
    size_t ndiff = lk_compare_grids(want, got, rows, cols, 8, &c);
    if (ndiff == 0) {
        rc = 1;
        goto done;
    }
    char explain[4096];
    lk_compare_format(explain, sizeof explain, &c, rows, cols, "output");
    gr_buf_puts(detail, explain);
    if (lab->policy == GR_POLICY_TOLERANCE) {
        int ok = c.nnan == 0 && c.npoison == 0 && c.max_rel <= lab->tolerance;
        snprintf(reason, size, "%zu of %zu cells differ, max relative difference %.3g %s the "
                 "bound %g%s", ndiff, n, c.max_rel, ok ? "within" : "beyond", lab->tolerance,
                 c.npoison ? " (some cells never written)" : c.nnan ? " (NaN values)" : "");
        rc = ok;
    } else if (hex[0]) {
        snprintf(reason, size, "md5 %s instead of %s: %zu of %zu cells differ, first at "
                 "(row %d, col %d)%s", hex, ref_hash, ndiff, n, c.first[0].row, c.first[0].col,
                 c.npoison ? ", some never written" : "");
        rc = 0;
    } else {
        snprintf(reason, size, "%zu of %zu cells differ from the solution's output, first at "
                 "(row %d, col %d)%s", ndiff, n, c.first[0].row, c.first[0].col,
                 c.npoison ? ", some never written" : "");
        rc = 0;
    }
done:
    free(want);
    free(got);
    return rc;
}

static int prepare_dir(const gr_session *s, const char *dir, lk_error *err)
{
    gr_limits lim = {.drop = s->drop};
    uid_t uid;
    gid_t gid;
    gr_sandbox_ids(&lim, &uid, &gid);
    if (gr_mkdir_p(dir, 0755, err) != 0)
        return -1;
    return gr_chown_tree(dir, uid, gid, err);
}

/* Build the solution's driver once per session: the trusted reference for serial outputs
   and the B side of the performance rounds. */
static int ensure_solution(gr_session *s, gr_lab_ctx *lc, lk_error *err)
{
    if (lc->ref_state != 0)
        return 0;
    const gr_lab_rubric *lab = lc->rub;
    char *src = gr_strf("%s/src", lc->kit_work);
    int rc = gr_rm_rf(lc->kit_work, err);
    static const char *const subdirs[] = {"src", "build", "logs", "tmp", "ref", "perf"};
    for (size_t i = 0; rc == 0 && i < sizeof subdirs / sizeof subdirs[0]; i++) {
        char *d = gr_strf("%s/%s", lc->kit_work, subdirs[i]);
        rc = gr_mkdir_p(d, 0755, err);
        free(d);
    }
    for (int f = 0; rc == 0 && f < lab->nfiles; f++) {
        char *from = gr_strf("%s/solutions/%s/%s", s->kit, lab->name, lab->files[f].name);
        char *to = gr_strf("%s/%s", src, lab->files[f].name);
        rc = gr_copy_untrusted(from, to, 16u << 20, err);
        free(from);
        free(to);
    }
    if (rc == 0)
        rc = prepare_dir(s, lc->kit_work, err);
    if (rc != 0) {
        free(src);
        return -1;
    }
    gr_lab_result scratch;
    gr_lab_init(&scratch, lab->name, 0);
    int built = gr_build(&s->kitinfo, lab, lc->kit_work, src, &scratch, err);
    free(src);
    if (built < 0) {
        gr_lab_free(&scratch);
        return -1;
    }
    if (built == 1) {
        lc->ref_state = 1;
        lc->ref_driver = gr_strf("%s/build/%s", lc->kit_work, lab->driver);
    } else {
        const gr_check *c = &scratch.checks[scratch.nchecks - 1];
        lc->ref_state = -1;
        lc->ref_error = gr_strf("the solution solutions/%s does not build: %s\n%s", lab->name,
                                c->reason, c->detail ? c->detail : "");
    }
    gr_lab_free(&scratch);
    return 0;
}

typedef struct ref_output {
    char *bin;
    char hash[33];
    int rows, cols;
} ref_output;

/* The serial reference's output for a dataset, cached in OUT/cache by dataset, steps and
   kit version. 1 ready, 0 the reference failed (@p problem), -1 grader error. */
static int reference_output(gr_session *s, gr_lab_ctx *lc, const char *refdrv, const char *flag,
                            const char *spec, int steps, ref_output *ref, char *problem,
                            size_t psize, lk_error *err)
{
    memset(ref, 0, sizeof *ref);
    const gr_lab_rubric *lab = lc->rub;
    char *keytext = gr_strf("%s\n%s %s\n%d\n%s\n%d", lab->name, flag, spec, steps, lc->kit_hash,
                            (int)lab->policy);
    char key[33];
    int rc = lk_md5_buffer(keytext, strlen(keytext), key, err);
    free(keytext);
    if (rc != 0)
        return -1;
    char *dir = gr_strf("%s/cache/reference/%s", s->out, lab->name);
    char *json_path = gr_strf("%s/%s.json", dir, key);
    ref->bin = gr_strf("%s/%s.bin", dir, key);
    rc = -1;
    if (gr_mkdir_p(dir, 0755, err) != 0)
        goto done;
    lk_error ignored;
    char *cached = gr_exists(json_path) ? gr_read_file(json_path, 1 << 20, NULL, &ignored) : NULL;
    gr_json *j = cached ? gr_json_parse(cached, json_path, &ignored) : NULL;
    free(cached);
    if (j) {
        struct stat st;
        const char *hash = gr_json_str(j, "hash");
        ref->rows = (int)gr_json_num(j, "rows", 0);
        ref->cols = (int)gr_json_num(j, "cols", 0);
        if (hash && strlen(hash) == 32 && ref->rows > 0 && ref->cols > 0 &&
            stat(ref->bin, &st) == 0 &&
            (size_t)st.st_size == (size_t)ref->rows * ref->cols * sizeof(double)) {
            snprintf(ref->hash, sizeof ref->hash, "%s", hash);
            gr_json_free(j);
            rc = 1;
            goto done;
        }
        gr_json_free(j);
    }
    {
        char *refdir = gr_strf("%s/ref", lc->kit_work);
        char *tmp_bin = gr_strf("%s/%s.bin", refdir, key);
        char steps_s[16];
        snprintf(steps_s, sizeof steps_s, "%d", steps);
        const char *args[] = {"--serial", flag, spec, "--steps", steps_s, "--bin", tmp_bin, NULL};
        driver_run dr;
        char reason[1024];
        gr_buf detail = {0};
        if (prepare_dir(s, refdir, err) != 0 ||
            run_driver(s, refdrv, refdir, args, fmax(lab->limit_run, lab->limit_perf), 1LL << 32,
                       s->drop, key, &dr, err) != 0) {
            free(refdir);
            free(tmp_bin);
            goto done;
        }
        if (run_failed(&dr, NULL, reason, sizeof reason, &detail)) {
            snprintf(problem, psize, "the serial reference failed on %s %s (%d steps): %s",
                     flag, spec, steps, reason);
            rc = 0;
        } else {
            /* Models with several output fields (e.g. h, hu, hv) write them one after the
               other: the grader compares them as one grid of fields x rows rows. */
            ref->rows = (int)gr_json_num(dr.res, "rows", 0) *
                        (int)gr_json_num(dr.res, "fields", 1);
            ref->cols = (int)gr_json_num(dr.res, "cols", 0);
            const gr_json *serial = gr_json_get(dr.res, "serial");
            const char *driver_md5 = gr_json_str(serial, "md5");
            size_t n = (size_t)ref->rows * ref->cols;
            double *v = n ? malloc(n * sizeof *v) : NULL;
            if (!v) {
                snprintf(problem, psize, "the serial reference gave no grid size for %s", spec);
                rc = 0;
            } else if (lk_read_binary(tmp_bin, v, n, err) != 0 ||
                       output_hash(lab->policy, v, ref->rows, ref->cols, ref->hash, err) != 0) {
                rc = -1;
            } else if (lab->policy == GR_POLICY_HASH_COURSE_TEXT && driver_md5 &&
                       strcmp(driver_md5, ref->hash) != 0) {
                snprintf(problem, psize, "the serial reference printed md5 %s for %s but its "
                         "output file hashes to %s: the kit's hashing is inconsistent",
                         driver_md5, spec, ref->hash);
                rc = 0;
            } else if (rename(tmp_bin, ref->bin) != 0) {
                rc = lk_fail(err, "%s: cannot move into the cache: %s", ref->bin, strerror(errno));
            } else {
                if (lchown(ref->bin, getuid(), getgid()) != 0) { /* best effort */ }
                char *js = gr_strf("{\"lab\":\"%s\",\"dataset\":\"%s %s\",\"steps\":%d,"
                                   "\"rows\":%d,\"cols\":%d,\"hash\":\"%s\"}\n", lab->name, flag,
                                   spec, steps, ref->rows, ref->cols, ref->hash);
                rc = gr_write_atomic_text(json_path, js, err) == 0 ? 1 : -1;
                free(js);
            }
            free(v);
        }
        gr_buf_free(&detail);
        driver_run_free(&dr);
        free(refdir);
        free(tmp_bin);
    }
done:
    free(dir);
    free(json_path);
    if (rc != 1) {
        free(ref->bin);
        ref->bin = NULL;
    }
    return rc;
}

void gr_dataset_args(const gr_session *s, const gr_lab_ctx *lc, int i, const char **flag,
                     char *spec, int *steps)
{
    const gr_dataset *d = &lc->rub->datasets[i];
    if (d->hidden) {
        *flag = "--gen";
        snprintf(spec, 192, "%s:%llu", d->name, s->seed + (unsigned long long)i);
    } else {
        *flag = d->generated ? "--gen" : "--dataset";
        snprintf(spec, 192, "%s", d->name);
    }
    *steps = lc->steps[i];
}

/* Run the student's driver on one dataset and judge its output. 1 pass, 0 fail, -1 error. */
static int check_dataset(gr_session *s, gr_lab_ctx *lc, const char *work, const char *driver,
                         const char *name, const char *flag, const char *spec, int steps,
                         const ref_output *ref, int idx, gr_lab_result *r, int *hung,
                         lk_error *err)
{
    char *rundir = gr_strf("%s/run", work);
    char *bin = gr_strf("%s/d%d.bin", rundir, idx);
    char *tag = gr_strf("d%d", idx);
    char *src_prefix = gr_strf("%s/src/", work);
    char steps_s[16];
    snprintf(steps_s, sizeof steps_s, "%d", steps);
    const char *args[] = {"--gpu", flag, spec, "--steps", steps_s, "--bin", bin, NULL};
    driver_run dr;
    int rc = run_driver(s, driver, rundir, args, lc->rub->limit_run,
                        (long long)ref->rows * ref->cols * 8, s->drop, tag, &dr, err);
    if (rc == 0) {
        char reason[1024];
        gr_buf detail = {0};
        if (run_failed(&dr, src_prefix, reason, sizeof reason, &detail)) {
            *hung = dr.o.end == GR_END_TIMEOUT;
            gr_check *c = gr_lab_add(r, "correctness", name, GR_FAIL, reason, gr_buf_str(&detail));
            c->seconds = dr.o.wall_s;
            rc = 0;
        } else {
            int same = compare_outputs(lc->rub, ref->bin, bin, ref->rows, ref->cols, ref->hash,
                                       reason, sizeof reason, &detail, err);
            if (same >= 0) {
                char *ok = gr_strf("%s %s", lc->rub->policy == GR_POLICY_TOLERANCE
                                                ? "within the tolerance of the reference,"
                                                : "md5 matches the serial reference:", ref->hash);
                gr_check *c = gr_lab_add(r, "correctness", name, same ? GR_PASS : GR_FAIL,
                                         same ? ok : reason, same ? NULL : gr_buf_str(&detail));
                c->seconds = dr.o.wall_s;
                free(ok);
                if (same)
                    unlink(bin);
            }
            rc = same;
        }
        gr_buf_free(&detail);
    }
    driver_run_free(&dr);
    free(rundir);
    free(bin);
    free(tag);
    free(src_prefix);
    return rc;
}

static void perf_args(const gr_lab_ctx *lc, const char **flag, char *spec)
{
    *flag = lc->rub->perf.generated ? "--gen" : "--dataset";
    snprintf(spec, 192, "%s", lc->rub->perf.name);
}

/* Serial time of the performance run, once per session: (t(S) - t(0)) / S per step, so that
   loading and hashing, which the driver's serial clock includes, do not count. */
static int time_serial(gr_session *s, gr_lab_ctx *lc, const char *refdrv, lk_error *err)
{
    const gr_lab_rubric *lab = lc->rub;
    const char *flag;
    char spec[192];
    perf_args(lc, &flag, spec);
    int S = lab->serial_steps < lab->perf.steps ? lab->serial_steps : lab->perf.steps;
    char *dir = gr_strf("%s/perf", lc->kit_work);
    double secs[2] = {0, 0};
    int counts[2] = {0, S};
    int rc = prepare_dir(s, dir, err);
    for (int k = 0; k < 2 && rc == 0 && lc->serial_state == 0; k++) {
        char steps_s[16], tag[32];
        snprintf(steps_s, sizeof steps_s, "%d", counts[k]);
        snprintf(tag, sizeof tag, "serial%d", counts[k]);
        const char *args[] = {"--serial", flag, spec, "--steps", steps_s, NULL};
        driver_run dr;
        if (run_driver(s, refdrv, dir, args, lab->limit_perf, 0, s->drop, tag, &dr, err) != 0) {
            rc = -1;
            break;
        }
        char reason[1024];
        gr_buf detail = {0};
        if (run_failed(&dr, NULL, reason, sizeof reason, &detail)) {
            lc->serial_state = -1;
            lc->serial_error = gr_strf("timing the serial reference on %s (%d steps) failed: %s",
                                       spec, counts[k], reason);
        } else {
            secs[k] = gr_json_num(gr_json_get(dr.res, "serial"), "seconds", 0);
            lc->perf_rows = (int)gr_json_num(dr.res, "rows", 0) *
                            (int)gr_json_num(dr.res, "fields", 1);
            lc->perf_cols = (int)gr_json_num(dr.res, "cols", 0);
        }
        gr_buf_free(&detail);
        driver_run_free(&dr);
    }
    if (rc == 0 && lc->serial_state == 0) {
        double per_step = (secs[1] - secs[0]) / S;
        if (!(per_step > 0))
            per_step = secs[1] / S;
        lc->serial_ms = per_step * lab->perf.steps * 1e3;
        lc->serial_steps = S;
        lc->serial_extrapolated = S < lab->perf.steps;
        lc->serial_state = 1;
    }
    free(dir);
    return rc;
}

/* The lab's given version (the rubric's baseline), once per session like the serial
   reference: (t(N) - t(0)) / N per step from the trusted driver's gpu.ms_median, so that
   loading and transfers around the steps do not count. */
static int time_baseline(gr_session *s, gr_lab_ctx *lc, const char *refdrv, lk_error *err)
{
    const gr_lab_rubric *lab = lc->rub;
    const char *flag;
    char spec[192], repeat_s[16];
    perf_args(lc, &flag, spec);
    snprintf(repeat_s, sizeof repeat_s, "%d", lab->repeat);
    int N = lab->baseline_steps < lab->perf.steps ? lab->baseline_steps : lab->perf.steps;
    char *dir = gr_strf("%s/perf", lc->kit_work);
    double ms[2] = {0, 0};
    int counts[2] = {0, N};
    int rc = prepare_dir(s, dir, err);
    for (int k = 0; k < 2 && rc == 0 && lc->baseline_state == 0; k++) {
        char steps_s[16], tag[32];
        snprintf(steps_s, sizeof steps_s, "%d", counts[k]);
        snprintf(tag, sizeof tag, "baseline%d", counts[k]);
        const char *args[] = {"--gpu", "--variant", lab->baseline, flag, spec, "--steps", steps_s,
                              "--repeat", repeat_s, NULL};
        driver_run dr;
        if (run_driver(s, refdrv, dir, args, lab->limit_perf, 0, s->drop, tag, &dr, err) != 0) {
            rc = -1;
            break;
        }
        char reason[1024];
        gr_buf detail = {0};
        int failed = run_failed(&dr, NULL, reason, sizeof reason, &detail);
        if (!failed) {
            ms[k] = gr_json_num(gr_json_get(dr.res, "gpu"), "ms_median", -1);
            if (!(counts[k] > 0 ? ms[k] > 0 : ms[k] >= 0)) {
                snprintf(reason, sizeof reason, "the result line has no %s gpu.ms_median",
                         counts[k] > 0 ? "positive" : "valid");
                failed = 1;
            }
        }
        if (failed) {
            lc->baseline_state = -1;
            lc->baseline_error = gr_strf("timing the given version (--variant %s) on %s (%d "
                                         "steps) failed: %s%s%s", lab->baseline, spec,
                                         counts[k], reason, detail.len ? "\n" : "",
                                         gr_buf_str(&detail));
        }
        gr_buf_free(&detail);
        driver_run_free(&dr);
    }
    if (rc == 0 && lc->baseline_state == 0) {
        double per_step = (ms[1] - ms[0]) / N;
        if (!(per_step > 0))
            per_step = ms[1] / N;
        lc->baseline_ms = per_step * lab->perf.steps;
        lc->baseline_steps = N;
        lc->baseline_extrapolated = N < lab->perf.steps;
        lc->baseline_state = 1;
    }
    free(dir);
    return rc;
}

/* One timed run of a driver on the performance dataset; its median in @p ms. 1 ok, 0 failed
   (@p reason, @p detail; *timed_out when it was killed at the time limit), -1 grader error. */
static int timed_run(gr_session *s, const gr_lab_ctx *lc, const char *driver, const char *dir,
                     const char *tag, const char *bin, const char *src_prefix, double *ms,
                     double *copy_GBps, int *timed_out, char *reason, size_t size,
                     gr_buf *detail, lk_error *err)
{
    const gr_lab_rubric *lab = lc->rub;
    const char *flag;
    char spec[192], steps_s[16], repeat_s[16];
    perf_args(lc, &flag, spec);
    snprintf(steps_s, sizeof steps_s, "%d", lab->perf.steps);
    snprintf(repeat_s, sizeof repeat_s, "%d", lab->repeat);
    const char *args[] = {"--gpu", flag, spec, "--steps", steps_s, "--repeat", repeat_s,
                          bin ? "--bin" : NULL, bin, NULL};
    driver_run dr;
    if (run_driver(s, driver, dir, args, lab->limit_perf,
                   (long long)lc->perf_rows * lc->perf_cols * 8, s->drop, tag, &dr, err) != 0)
        return -1;
    int rc = 1;
    *timed_out = 0;
    if (run_failed(&dr, src_prefix, reason, size, detail)) {
        *timed_out = dr.o.end == GR_END_TIMEOUT;
        rc = 0;
    } else {
        *ms = gr_json_num(gr_json_get(dr.res, "gpu"), "ms_median", -1);
        if (copy_GBps)
            *copy_GBps = gr_json_num(gr_json_get(dr.res, "gpu"), "copy_GBps", 0);
        if (!(*ms > 0)) {
            snprintf(reason, size, "the result line has no positive gpu.ms_median");
            rc = 0;
        }
    }
    driver_run_free(&dr);
    return rc;
}

/* The rubric's `plausible` rules: a per-step time below the bytes a step must move at the
   copy bandwidth the trusted driver measured in this session (divided by the margin), or a
   speed more than `factor` times the solution's, is not scored until an instructor accepts
   it (--accept-implausible): replayed or unfinished work looks exactly like this. */
static void judge_plausibility(const gr_session *s, const gr_lab_ctx *lc, gr_perf *p)
{
    const gr_lab_rubric *lab = lc->rub;
    gr_buf why = {0};
    p->copy_GBps = lc->copy_GBps;
    if (lab->plausible_bytes > 0 && lc->copy_GBps > 0 && lc->perf_rows > 0) {
        double bytes = (double)lc->perf_rows * lc->perf_cols * lab->plausible_bytes * p->steps;
        p->bound_ms = bytes / (lc->copy_GBps * 1e9) * 1e3;
        double student = 0; /* the fastest round: one impossible run is enough */
        for (int i = 0; i < p->rounds; i++)
            student = i == 0 || p->student_ms[i] < student ? p->student_ms[i] : student;
        if (student < p->bound_ms / lab->plausible_margin)
            gr_buf_printf(&why, "%.3f ms for %d steps is below the physical bound %.3f ms (%g "
                          "bytes per cell and step at the measured %.3g GB/s) divided by the "
                          "margin %g", student, p->steps, p->bound_ms, lab->plausible_bytes,
                          lc->copy_GBps, lab->plausible_margin);
    }
    if (lab->plausible_factor > 0 && p->have_solution &&
        p->score.ratio.median > lab->plausible_factor)
        gr_buf_printf(&why, "%s%.2fx the solution's speed is more than the rubric's factor %g",
                      why.len ? "; " : "", p->score.ratio.median, lab->plausible_factor);
    if (why.len) {
        p->implausible = 1;
        char *reason;
        if (s->accept_implausible) {
            reason = gr_strf("implausible, accepted (--accept-implausible): %s; %s",
                             gr_buf_str(&why), p->score.reason);
        } else {
            reason = gr_strf("implausible: review: %s: no performance points until an "
                             "instructor accepts it (--accept-implausible)", gr_buf_str(&why));
            p->score.points = 0;
        }
        snprintf(p->score.reason, sizeof p->score.reason, "%.*s",
                 (int)sizeof p->score.reason - 1, reason);
        free(reason);
    }
    gr_buf_free(&why);
}

/* Why a student run killed at the performance time limit gets no performance points. */
static void too_slow_reason(const gr_lab_rubric *lab, char *buf, size_t size)
{
    snprintf(buf, size, "slower than the %g s time limit for %d steps x %d repeats: no "
             "performance points", lab->limit_perf, lab->perf.steps, lab->repeat);
}

/* Performance: rounds of student then solution, the student's output on the performance
   dataset checked against the solution's. Returns -1 on grader errors, else 0 with
   *output_ok telling whether that output was right (-1: not checked) and *too_slow set when
   a student run was killed at the performance time limit. *problem is set (malloc'd) when
   the kit, not the student, failed. */
static int performance(gr_session *s, gr_lab_ctx *lc, const char *work, const char *driver,
                       gr_lab_result *r, int *output_ok, int *too_slow, char **problem,
                       lk_error *err)
{
    const gr_lab_rubric *lab = lc->rub;
    gr_perf *p = &r->perf;
    *output_ok = -1;
    *too_slow = 0;
    const char *flag;
    char spec[192];
    perf_args(lc, &flag, spec);
    char *name = gr_strf("performance %s (%d steps)", spec, lab->perf.steps);
    char *out_name = gr_strf("performance dataset %s (%d steps): output", spec, lab->perf.steps);
    char *dir = gr_strf("%s/run", work);
    char *stu_bin = gr_strf("%s/perf.bin", dir);
    char *src_prefix = gr_strf("%s/src/", work);
    char *soldir = gr_strf("%s/perf", lc->kit_work);
    int rc = 0, max_rounds = lab->rounds + lab->extra_rounds;
    p->dataset = gr_strf("%s %s", flag, spec);
    p->steps = lab->perf.steps;
    p->have_solution = lc->ref_state == 1;
    p->student_ms = gr_xcalloc(max_rounds, sizeof(double));
    p->solution_ms = p->have_solution ? gr_xcalloc(max_rounds, sizeof(double)) : NULL;
    p->serial_ms = lc->serial_ms;
    p->serial_steps = lc->serial_steps;
    p->extrapolated = lc->serial_extrapolated;
    if (lab->baseline[0]) {
        p->baseline = gr_xstrdup(lab->baseline);
        p->baseline_ms = lc->baseline_ms;
        p->baseline_steps = lc->baseline_steps;
        p->baseline_extrapolated = lc->baseline_extrapolated;
    }
    int target = lab->rounds, failed = 0;
    char reason[1024];
    gr_buf detail = {0};
    double t0 = 0;
    for (int i = 0; i < target && !failed; i++) {
        char tag[32];
        snprintf(tag, sizeof tag, "perf-student-%d", i);
        int timed_out = 0;
        int ok = timed_run(s, lc, driver, dir, tag, i == 0 ? stu_bin : NULL, src_prefix,
                           &p->student_ms[i], NULL, &timed_out, reason, sizeof reason, &detail,
                           err);
        if (ok < 0) {
            rc = -1;
            break;
        }
        if (!ok && timed_out) {
            /* Slow is not wrong: a run killed at the time limit costs the performance points
               only. Its output, when round 0 did not get to write it, is not checked. */
            if (i == 0) {
                char *why = gr_strf("too slow to finish within the %g s performance time "
                                    "limit: output not checked", lab->limit_perf);
                gr_lab_add(r, "correctness", out_name, GR_NOT_RUN, why, NULL);
                free(why);
            }
            char slow[256];
            too_slow_reason(lab, slow, sizeof slow);
            char *more = gr_strf("%s\n%s", reason, gr_buf_str(&detail));
            gr_check *c = gr_lab_add(r, "performance", name, GR_FAIL, slow, more);
            c->seconds = lab->limit_perf;
            free(more);
            *too_slow = 1;
            failed = 1;
            break;
        }
        if (!ok) {
            /* A crash or hang here is a wrong result on this dataset, like any other. */
            gr_lab_add(r, "correctness", out_name, GR_FAIL, reason, gr_buf_str(&detail));
            gr_lab_add(r, "performance", name, GR_FAIL, "not scored: the run failed", NULL);
            *output_ok = 0;
            failed = 1;
            break;
        }
        if (p->have_solution) {
            snprintf(tag, sizeof tag, "perf-solution-%d", i);
            char sreason[1024];
            gr_buf sdetail = {0};
            const char *sol_bin = lc->sol_bin ? NULL : "solution.bin";
            char *sol_path = sol_bin ? gr_strf("%s/%s", soldir, sol_bin) : NULL;
            int sol_timed_out;
            double gbps = 0;
            ok = timed_run(s, lc, lc->ref_driver, soldir, tag, sol_path, NULL,
                           &p->solution_ms[i], &gbps, &sol_timed_out, sreason, sizeof sreason,
                           &sdetail, err);
            /* The trusted driver's measure of the device, the yardstick of the bound. */
            if (gbps > lc->copy_GBps)
                lc->copy_GBps = gbps;
            if (ok == 1 && sol_path)
                lc->sol_bin = gr_xstrdup(sol_path);
            free(sol_path);
            if (ok <= 0) {
                if (ok == 0)
                    *problem = gr_strf("the solution failed on the performance dataset %s: %s\n%s",
                                       spec, sreason, gr_buf_str(&sdetail));
                gr_buf_free(&sdetail);
                rc = ok < 0 ? -1 : 0;
                failed = 1;
                break;
            }
            gr_buf_free(&sdetail);
        }
        p->rounds = i + 1;
        if (i == 0) {
            if (p->have_solution) {
                gr_buf_free(&detail);
                int same = compare_outputs(lab, lc->sol_bin, stu_bin, lc->perf_rows, lc->perf_cols,
                                           NULL, reason, sizeof reason, &detail, err);
                if (same < 0) {
                    rc = -1;
                    break;
                }
                gr_lab_add(r, "correctness", out_name, same ? GR_PASS : GR_FAIL,
                           same ? "identical to the solution's output" : reason,
                           same ? NULL : gr_buf_str(&detail));
                *output_ok = same;
                if (!same) {
                    gr_lab_add(r, "performance", name, GR_FAIL,
                               "not scored: wrong result on the performance dataset", NULL);
                    failed = 1;
                    break;
                }
            } else {
                gr_lab_add(r, "correctness", out_name, GR_NOT_RUN,
                           "no solution in this kit to compare with", NULL);
            }
            unlink(stu_bin);
        }
        if (i + 1 == target) {
            gr_perf_score_rounds(p->student_ms, p->solution_ms, p->rounds, p->serial_ms,
                                 p->baseline, p->baseline_ms, lab->min_speedup,
                                 lab->curve_full, lab->curve_zero, lab->points_perf, &p->score);
            /* A verdict that depends on noise is measured again before it is decided. */
            if (p->score.inconclusive && target < max_rounds)
                target = max_rounds;
        }
    }
    if (rc == 0 && !failed && !*problem) {
        p->measured = 1;
        judge_plausibility(s, lc, p);
        t0 = 0;
        for (int i = 0; i < p->rounds; i++)
            t0 += p->student_ms[i];
        gr_buf line = {0};
        gr_buf_printf(&line, "%.2fx the solution's speed (spread %.2f-%.2f), %.1fx serial "
                             "(spread %.1f-%.1f)",
                      p->score.ratio.median, p->score.ratio.lo, p->score.ratio.hi,
                      p->score.speedup.median, p->score.speedup.lo, p->score.speedup.hi);
        if (p->baseline)
            gr_buf_printf(&line, ", %.1fx the given version --variant %s (spread %.1f-%.1f)",
                          p->score.vs_baseline.median, p->baseline, p->score.vs_baseline.lo,
                          p->score.vs_baseline.hi);
        gr_buf_printf(&line, ", %d rounds: %.1f of %g points", p->rounds, p->score.points,
                      lab->points_perf);
        if (!p->have_solution)
            gr_buf_printf(&line, " (no solution to compare with)");
        gr_check *c = gr_lab_add(r, "performance", name,
                                 p->implausible ? GR_IMPLAUSIBLE
                                 : p->score.inconclusive ? GR_INCONCLUSIVE : GR_PASS,
                                 gr_buf_str(&line), p->score.reason);
        c->seconds = t0 / 1e3;
        gr_buf_free(&line);
    }
    gr_buf_free(&detail);
    unlink(stu_bin);
    free(name);
    free(out_name);
    free(dir);
    free(stu_bin);
    free(src_prefix);
    free(soldir);
    return rc;
}

/* A lab the grader could not grade because of the kit (not the student): undecided. */
static void kit_problem(gr_lab_result *r, const char *problem)
{
    char *line = gr_xstrdup(problem);
    line[strcspn(line, "\n")] = '\0';
    gr_lab_add(r, "correctness", "reference", GR_FAIL, line, problem);
    gr_lab_outcome(r, GR_OUT_ERROR, "not graded, the kit failed: %s", line);
    r->decided = 0;
    r->score = 0;
    free(line);
}

int gr_gpu_stages(gr_session *s, gr_lab_ctx *lc, const char *work, const char *driver,
                  gr_lab_result *r, lk_error *err)
{
    const gr_lab_rubric *lab = lc->rub;
    int lock = gr_gpu_lock(s->gpu_lock, err);
    if (lock < 0)
        return -1;
    int rc = 0;
    char *problem = NULL;
    const char *refdrv = NULL;
    if (lc->have_solution) {
        if (ensure_solution(s, lc, err) != 0) {
            gr_gpu_unlock(lock);
            return -1;
        }
        if (lc->ref_state < 0)
            problem = gr_xstrdup(lc->ref_error);
        refdrv = lc->ref_driver;
    } else {
        /* A handout has no solutions/: the student's own build runs the serial reference
           (it is the kit's library code), and only the minimum speedup can be judged. */
        refdrv = driver;
    }
    free(r->seed);
    r->seed = gr_strf("%llu", s->seed);
    int passed = 0, failed_first = -1, hung = 0;
    char first_fail[1200] = "";
    for (int i = 0; i < lab->ndatasets && !problem && rc == 0; i++) {
        const char *flag;
        char spec[192];
        int steps;
        gr_dataset_args(s, lc, i, &flag, spec, &steps);
        char *name = gr_strf("%s %s (%d steps)", lab->datasets[i].hidden ? "hidden" : "public",
                             spec, steps);
        if (hung) {
            gr_lab_add(r, "correctness", name, GR_FAIL,
                       "not run: an earlier run hung, later ones would too", NULL);
            free(name);
            continue;
        }
        ref_output ref;
        char why[1400] = "";
        int got = reference_output(s, lc, refdrv, flag, spec, steps, &ref, why, sizeof why, err);
        if (got < 0)
            rc = -1;
        else if (got == 0)
            problem = gr_xstrdup(why);
        else {
            int ok = check_dataset(s, lc, work, driver, name, flag, spec, steps, &ref, i, r,
                                   &hung, err);
            if (ok < 0)
                rc = -1;
            passed += ok == 1;
            if (ok == 0 && failed_first < 0) {
                failed_first = i;
                snprintf(first_fail, sizeof first_fail, "%s: %s", name,
                         r->checks[r->nchecks - 1].reason);
            }
        }
        free(ref.bin);
        free(name);
    }
    int total = lab->ndatasets + (lc->have_solution ? 1 : 0), too_slow = 0, unchecked = 0;
    if (rc == 0 && !problem) {
        if (passed == lab->ndatasets) {
            if (lc->serial_state == 0)
                rc = time_serial(s, lc, refdrv, err);
            if (rc == 0 && lc->serial_state < 0)
                problem = gr_xstrdup(lc->serial_error);
            if (rc == 0 && !problem && lab->baseline[0] && lc->baseline_state == 0)
                rc = time_baseline(s, lc, refdrv, err);
            if (rc == 0 && !problem && lab->baseline[0] && lc->baseline_state < 0)
                problem = gr_xstrdup(lc->baseline_error);
            int output_ok = -1;
            if (rc == 0 && !problem)
                rc = performance(s, lc, work, driver, r, &output_ok, &too_slow, &problem, err);
            if (output_ok == 1)
                passed++;
            else if (output_ok == 0 && failed_first < 0)
                snprintf(first_fail, sizeof first_fail, "performance dataset: %s",
                         r->checks[r->nchecks - 2].reason);
            /* An output that a run too slow to finish never wrote counts neither way. */
            unchecked = too_slow && output_ok < 0 && lc->have_solution;
            total -= unchecked;
        } else {
            gr_lab_add(r, "correctness", "performance dataset: output", GR_NOT_RUN,
                       "not run: the lab is not correct on every dataset", NULL);
            gr_lab_add(r, "performance", "performance", GR_NOT_RUN,
                       "not measured: performance counts only for a lab correct on every dataset",
                       NULL);
        }
    }
    gr_gpu_unlock(lock);
    if (rc != 0) {
        free(problem);
        return -1;
    }
    if (problem) {
        kit_problem(r, problem);
        free(problem);
        return 0;
    }
    r->correctness = gr_correctness_points(passed, total, lab->points_correct, lab->credit_all);
    r->performance = r->perf.measured ? r->perf.score.points : 0.0;
    r->score = r->correctness + r->performance;
    r->decided = 1;
    if (passed == total && r->perf.measured) {
        gr_lab_outcome(r, GR_OUT_CORRECT, "correct on all %d datasets; %s", total,
                       r->perf.score.reason);
    } else if (passed == total && too_slow) {
        char slow[256];
        too_slow_reason(lab, slow, sizeof slow);
        gr_lab_outcome(r, GR_OUT_CORRECT, "correct on all %d %sdatasets%s; %s", total,
                       unchecked ? "checked " : "",
                       unchecked ? " (the performance dataset's output was not checked: too "
                                   "slow)" : "", slow);
    } else {
        gr_lab_outcome(r, GR_OUT_INCORRECT, "incorrect: %d of %d datasets failed; first: %s",
                       total - passed, total, first_fail[0] ? first_fail : "see the checks");
    }
    return 0;
}
