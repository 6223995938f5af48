/* Timing: the trusted driver's per-session timings (the serial reference, the given version,
   the 0-step call), and the A/B rounds. A timed call cannot be replayed: each is the only call
   of a fresh process (--once: outputs poisoned, nothing cached from an earlier call) in a
   fresh run folder, on a fresh instance of the performance dataset (the session seed + 1000 +
   round, where the generator takes a seed), and every timed output is checked against the
   solution's output on the same instance. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "driver.h"
#include "labkit/manifest.h"
#include "stages.h"

/* Performance instances use seeds the hidden datasets (seed + i, i < 64) never reach. */
#define GR_PERF_SEED_OFFSET 1000ULL

/* The generator spec of the performance dataset's instance @p round (spec: 192 bytes).
   Returns 1 when the instance is fresh (a seeded kind), 0 when the kind has no seed and every
   round runs the one instance (each call still the first of a fresh process). */
static int perf_instance(const gr_session *s, const gr_lab_ctx *lc, int round, char *spec)
{
    const gr_dataset *d = &lc->rub->perf;
    const lk_manifest_entry *e = d->generated ? NULL : lk_manifest_find(&s->manifest, d->name);
    snprintf(spec, 192, "%s", e ? e->spec : d->name);
    char *first = strchr(spec, ':'), *last = strrchr(spec, ':');
    if (!first || first == last)
        return 0;
    snprintf(last + 1, 192 - (size_t)(last + 1 - spec), "%llu",
             s->seed + GR_PERF_SEED_OFFSET + (unsigned long long)round);
    return 1;
}

/* ---- the trusted driver, timed once per session ---------------------------------------- */

/* One run of the trusted driver on instance 0 for @p steps steps, in @p mode (arguments
   before the dataset); its time in *ms: serial.seconds for --serial, else gpu.ms_median.
   1 ok, 0 failed (*problem: "WHAT on SPEC (N steps) failed: why"), -1 grader error. */
static int trusted_run(gr_session *s, gr_lab_ctx *lc, const char *refdrv,
                       const char *const *mode, const char *what, int steps, double *ms,
                       double *wall_ms, char **problem, lk_error *err)
{
    char spec[192], steps_s[16], tag[64];
    perf_instance(s, lc, 0, spec);
    snprintf(steps_s, sizeof steps_s, "%d", steps);
    const char *args[16];
    int n = 0;
    for (int i = 0; mode[i] && n < 10; i++)
        args[n++] = mode[i];
    args[n++] = "--no-md5"; /* only the time counts */
    args[n++] = "--gen";
    args[n++] = spec;
    args[n++] = "--steps";
    args[n++] = steps_s;
    args[n] = NULL;
    snprintf(tag, sizeof tag, "trusted-%s%s%s-%d", mode[0] + 2, mode[1] ? "-" : "",
             mode[1] ? mode[1] + 2 : "", steps); /* e.g. trusted-gpu-once-0 */
    char *dir = gr_strf("%s/perf", lc->kit_work);
    gr_driver_run dr;
    const int serial = strcmp(mode[0], "--serial") == 0;
    int rc = gr_run_driver(s, refdrv, dir, args,
                           serial ? gr_reference_ranks(lc->rub) : gr_performance_ranks(lc->rub),
                           lc->rub->limit_perf, 0, tag, &dr, err);
    free(dir);
    if (rc != 0) {
        gr_driver_run_free(&dr);
        return -1;
    }
    if (wall_ms)
        *wall_ms = dr.o.wall_s * 1e3;
    char reason[1024];
    gr_buf detail = {0};
    int failed = gr_run_failed(&dr, NULL, reason, sizeof reason, &detail);
    if (!failed) {
        const gr_json *part = gr_json_get(dr.res, serial ? "serial" : "gpu");
        *ms = serial ? gr_json_num(part, "seconds", -1) * 1e3 : gr_json_num(part, "ms_median", -1);
        double gbps = gr_json_num(part, "copy_GBps", 0);
        if (!serial && gbps > lc->copy_GBps)
            lc->copy_GBps = gbps; /* the trusted driver's measure of the device */
        lc->perf_rows = (int)gr_json_num(dr.res, "rows", 0) * (int)gr_json_num(dr.res, "fields", 1);
        lc->perf_cols = (int)gr_json_num(dr.res, "cols", 0);
        /* The points a step works on: "points" where the output is not the grid (a sum). */
        lc->perf_cells = (long long)gr_json_num(dr.res, "points",
                                                gr_json_num(dr.res, "rows", 0) * lc->perf_cols);
        if (!(steps > 0 ? *ms > 0 : *ms >= 0)) {
            snprintf(reason, sizeof reason, "the result line has no %s %s",
                     steps > 0 ? "positive" : "valid", serial ? "serial.seconds" : "gpu.ms_median");
            failed = 1;
        }
    }
    if (failed)
        *problem = gr_strf("timing %s on %s (%d steps) failed: %s%s%s", what, spec, steps, reason,
                           detail.len ? "\n" : "", gr_buf_str(&detail));
    gr_buf_free(&detail);
    if (!failed)
        gr_rm_rf(dr.top, NULL);
    gr_driver_run_free(&dr);
    return failed ? 0 : 1;
}

/* Per-step time (t(N) - t(0)) / N of the trusted driver in @p mode, so that loading,
   transfers and hashing around the steps do not count (what `make bench` does). */
static int per_step_ms(gr_session *s, gr_lab_ctx *lc, const char *refdrv, const char *const *mode,
                       const char *what, int N, double *per_step, char **problem, lk_error *err)
{
    double t[2] = {0, 0};
    const int counts[2] = {0, N};
    for (int k = 0; k < 2; k++) {
        int rc = trusted_run(s, lc, refdrv, mode, what, counts[k], &t[k], NULL, problem, err);
        if (rc != 1)
            return rc;
    }
    *per_step = (t[1] - t[0]) / N;
    if (!(*per_step > 0))
        *per_step = t[1] / N;
    return 1;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* What a round subtracts: the trusted driver's call of 0 steps (start, upload, download, no
   step, exit), timed from outside like the rounds, GR_ZERO_CALLS times: the median, the
   noise of one such measurement, and the calls' own figure for the cross-check. A
   student's own 0-step call is theirs to slow down. */
static int time_zero_calls(gr_session *s, gr_lab_ctx *lc, const char *refdrv, lk_error *err)
{
    static const char *const once[] = {"--gpu", "--once", NULL};
    double wall[GR_ZERO_CALLS], own[GR_ZERO_CALLS], mean = 0, var = 0;
    int rc = 1;
    for (int k = 0; k < GR_ZERO_CALLS && rc == 1; k++)
        rc = trusted_run(s, lc, refdrv, once, "the trusted driver's 0-step call", 0, &own[k],
                         &wall[k], &lc->zero_error, err);
    if (rc == 1) {
        for (int k = 0; k < GR_ZERO_CALLS; k++)
            mean += wall[k] / GR_ZERO_CALLS;
        for (int k = 0; k < GR_ZERO_CALLS; k++)
            var += (wall[k] - mean) * (wall[k] - mean) / (GR_ZERO_CALLS - 1);
        qsort(wall, GR_ZERO_CALLS, sizeof wall[0], cmp_double);
        qsort(own, GR_ZERO_CALLS, sizeof own[0], cmp_double);
        lc->zero_ms = wall[GR_ZERO_CALLS / 2];
        lc->zero_internal_ms = own[GR_ZERO_CALLS / 2];
        lc->zero_sd_ms = sqrt(var);
    }
    lc->zero_state = rc == 1 ? 1 : rc == 0 ? -1 : 0;
    return rc;
}

int gr_time_references(gr_session *s, gr_lab_ctx *lc, const char *refdrv, char **problem,
                       lk_error *err)
{
    const gr_lab_rubric *lab = lc->rub;
    const int steps = lab->perf.steps;
    int rc = 1;
    if (lc->serial_state == 0) {
        static const char *const serial[] = {"--serial", NULL};
        int S = lab->serial_steps < steps ? lab->serial_steps : steps;
        double per = 0;
        rc = per_step_ms(s, lc, refdrv, serial, "the serial reference", S, &per,
                         &lc->serial_error, err);
        if (rc == 1) {
            lc->serial_ms = per * steps;
            lc->serial_steps = S;
            lc->serial_extrapolated = S < steps;
        }
        lc->serial_state = rc == 1 ? 1 : rc == 0 ? -1 : 0;
    }
    if (rc >= 0 && lab->baseline[0] && lc->baseline_state == 0) {
        char repeat_s[16], *what = gr_strf("the given version (--variant %s)", lab->baseline);
        snprintf(repeat_s, sizeof repeat_s, "%d", lab->repeat);
        const char *const given[] = {"--gpu", "--variant", lab->baseline, "--repeat", repeat_s,
                                     NULL};
        int N = lab->baseline_steps < steps ? lab->baseline_steps : steps;
        double per = 0;
        rc = per_step_ms(s, lc, refdrv, given, what, N, &per, &lc->baseline_error, err);
        free(what);
        if (rc == 1) {
            lc->baseline_ms = per * steps;
            lc->baseline_steps = N;
            lc->baseline_extrapolated = N < steps;
        }
        lc->baseline_state = rc == 1 ? 1 : rc == 0 ? -1 : 0;
    }
    if (rc >= 0 && lc->zero_state == 0)
        rc = time_zero_calls(s, lc, refdrv, err);
    if (rc < 0)
        return -1;
    const char *why = lc->serial_state < 0 ? lc->serial_error
                      : lab->baseline[0] && lc->baseline_state < 0 ? lc->baseline_error
                      : lc->zero_state < 0 ? lc->zero_error : NULL;
    if (why)
        *problem = gr_xstrdup(why);
    return 0;
}

/* ---- the rounds ------------------------------------------------------------------------ */

void gr_too_slow_reason(const gr_lab_rubric *lab, char *buf, size_t size)
{
    snprintf(buf, size, "slower than the %g s time limit for one call of %d steps: no "
             "performance points", lab->limit_perf, lab->perf.steps);
}

/* One timed call: @p driver --gpu --once on @p spec in a fresh box BASE/TAG, its output
   "out.bin" when @p with_bin. The time is the whole process's wall time, measured by the
   grader from outside (*wall_ms): nothing the process does can shrink it. The driver's own
   figure (*own_ms) is only a cross-check. The call is killed after @p limit_s. 1 ok (@p dr holds the box), 0 failed (@p reason,
   @p detail; *timed_out when killed at the time limit), -1 error. Free @p dr either way. */
static int timed_call(gr_session *s, const gr_lab_ctx *lc, const char *driver, const char *base,
                      const char *tag, const char *spec, int with_bin, const char *src_prefix,
                      double limit_s, gr_driver_run *dr, double *wall_ms, double *own_ms, double *copy_GBps,
                      int *timed_out, char *reason, size_t size, gr_buf *detail, lk_error *err)
{
    char steps_s[16];
    snprintf(steps_s, sizeof steps_s, "%d", lc->rub->perf.steps);
    /* The grader hashes --bin itself; the driver's md5s would cost seconds of the round. */
    const char *args[] = {"--gpu", "--once", "--no-md5", "--gen", spec, "--steps", steps_s,
                          with_bin ? "--bin" : NULL, "out.bin", NULL};
    if (gr_run_driver(s, driver, base, args, gr_performance_ranks(lc->rub), limit_s,
                      (long long)lc->perf_rows * lc->perf_cols * 8, tag, dr, err) != 0)
        return -1;
    *timed_out = 0;
    if (gr_run_failed(dr, src_prefix, reason, size, detail)) {
        *timed_out = dr->o.end == GR_END_TIMEOUT;
        return 0;
    }
    *wall_ms = dr->o.wall_s * 1e3;
    *own_ms = gr_json_num(gr_json_get(dr->res, "gpu"), "ms_median", -1);
    *copy_GBps = gr_json_num(gr_json_get(dr->res, "gpu"), "copy_GBps", 0);
    if (!(*own_ms > 0)) {
        snprintf(reason, size, "the result line has no positive gpu.ms_median");
        return 0;
    }
    return 1;
}

/* The grader's clock against the driver's own: in an honest run the steps take the same
   time by both. A driver whose figure is far below the grader's was tampered with; one far
   above it skipped work the trusted 0-step call does. Either is `implausible: review`. The
   margin: a fifth of the steps' time plus three times the noise of one whole-process
   measurement (the trusted 0-step calls' standard deviation). */
static void cross_check(const gr_lab_ctx *lc, const double *wall_steps, const double *own_steps,
                        int rounds, gr_buf *why)
{
    double w[64], o[64];
    int n = rounds < 64 ? rounds : 64;
    memcpy(w, wall_steps, (size_t)n * sizeof *w);
    memcpy(o, own_steps, (size_t)n * sizeof *o);
    qsort(w, (size_t)n, sizeof *w, cmp_double);
    qsort(o, (size_t)n, sizeof *o, cmp_double);
    const double wall = w[n / 2], own = o[n / 2];
    const double margin = 0.2 * fmax(wall, own) + 3 * lc->zero_sd_ms;
    if (fabs(wall - own) > margin)
        gr_buf_printf(why, "%sthe grader measured %.1f ms for the steps but the driver reported "
                      "%.1f ms (medians; the margin is %.1f ms)", why->len ? "; " : "", wall,
                      own, margin);
}

/* The rubric's `plausible` rules: a time below the bytes the steps must move at the copy
   bandwidth the trusted driver measured in this session (divided by the margin), or a speed
   more than `factor` times the solution's, is not scored until an instructor accepts it
   (--accept-implausible): work left running when the clock stops looks exactly like this. */
static void judge_plausibility(const gr_session *s, const gr_lab_ctx *lc, gr_perf *p,
                               const double *own_steps)
{
    const gr_lab_rubric *lab = lc->rub;
    gr_buf why = {0};
    cross_check(lc, p->student_ms, own_steps, p->rounds, &why);
    p->copy_GBps = lc->copy_GBps;
    if (lab->plausible_bytes > 0 && lc->copy_GBps > 0 && lc->perf_cells > 0) {
        double bytes = (double)lc->perf_cells * lab->plausible_bytes * p->steps;
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

/* The solution's output on instance @p k, made by the solution's timed call of the first
   round that needs it and kept for the session (NULL until then); its timings there. */
static char **perf_ref(gr_lab_ctx *lc, int k)
{
    if (k >= lc->nperf_refs) {
        lc->perf_refs = gr_xrealloc(lc->perf_refs, (size_t)(k + 1) * sizeof *lc->perf_refs);
        lc->sol_ms = gr_xrealloc(lc->sol_ms, (size_t)(k + 1) * sizeof *lc->sol_ms);
        lc->nsol_ms = gr_xrealloc(lc->nsol_ms, (size_t)(k + 1) * sizeof *lc->nsol_ms);
        for (int i = lc->nperf_refs; i <= k; i++) {
            lc->perf_refs[i] = NULL;
            lc->nsol_ms[i] = 0;
        }
        lc->nperf_refs = k + 1;
    }
    return &lc->perf_refs[k];
}

static double median_of(const double *v, int n)
{
    double s[GR_SOLUTION_TIMES];
    memcpy(s, v, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/* What a round times, for the report; @p reused: rounds whose solution time is the median
   of its earlier timings on the same instance. */
static char *timed_text(const gr_session *s, const gr_lab_ctx *lc, int fresh, int rounds,
                        int reused)
{
    char first[192], last[192];
    perf_instance(s, lc, 0, first);
    perf_instance(s, lc, rounds - 1, last);
    char *inst = fresh ? gr_strf("a fresh instance of the performance dataset each round (%s "
                                 "to %s)", first, last)
                       : gr_strf("the performance dataset %s (its generator has no seed, so "
                                 "every round runs the same input)", first);
    char *t = gr_strf("one call of %d steps of the GPU code, the only call of a fresh process "
                      "(--once), on %s, every output checked against the solution's on the "
                      "same input; a time is the whole process's wall time, measured by the "
                      "grader from outside it, minus that of the trusted driver's 0-step call "
                      "(%.1f ms, median of %d: start, upload, download, exit; standard "
                      "deviation %.1f ms), and the driver's own figure must agree with it",
                      lc->rub->perf.steps, inst, lc->zero_ms, GR_ZERO_CALLS, lc->zero_sd_ms);
    if (reused) {
        char *more = gr_strf("%s; the solution's time in %d of the rounds is the median of its "
                             "timed calls on the same input%s%s this session (it is timed "
                             "alongside the first %d students and every %dth after them)", t,
                             reused, s->gpu_label ? " on " : "",
                             s->gpu_label ? s->gpu_label : "", GR_SOLUTION_TIMED_STUDENTS,
                             GR_SOLUTION_RETIME);
        free(t);
        t = more;
    }
    free(inst);
    return t;
}

/* One lab's rounds in progress. */
typedef struct rounds_ctx {
    gr_session *s;
    gr_lab_ctx *lc;
    const char *work, *driver;
    gr_lab_result *r;
    gr_perf *p;
    char *name, *out_name, *src_prefix, *soldir;
    double *own_steps;   /* the student's own figure for the steps, per round */
    int fresh, time_solution, reused;
    double limit_s; /* the student's call of this round: the rubric's, or the relative one */
    int *output_ok, *too_slow;
    char **problem;
} rounds_ctx;

/* A round whose student call failed: too slow (the performance points only) or wrong. */
static void round_failed(rounds_ctx *c, int i, const char *spec, int timed_out,
                         const char *reason, gr_buf *detail)
{
    const gr_lab_rubric *lab = c->lc->rub;
    if (timed_out && c->limit_s < lab->limit_perf) {
        /* A GPU kernel, even a slow one, finishes well within the relative limit; a CPU
           fallback does not, and must not earn the large dataset's correctness. */
        char *why = gr_strf("round %d, %s: stopped after %.1f s, %g times the solution's call "
                            "on the same input (%.2f s): a GPU kernel finishes far sooner; a "
                            "CPU fallback or a nearly idle GPU does not",
                            i + 1, spec, c->limit_s, lab->limit_relative,
                            c->p->solution_ms[i] / 1e3);
        gr_lab_add(c->r, "correctness", c->out_name, GR_FAIL, why, gr_buf_str(detail));
        gr_lab_add(c->r, "performance", c->name, GR_FAIL,
                   "not scored: the run was stopped at the relative time limit", NULL);
        free(why);
        *c->output_ok = 0;
        return;
    }
    if (timed_out) {
        /* Slow is not wrong: a run killed at the time limit costs the performance points
           only; the outputs of the rounds before it were checked. */
        char *why = i == 0 ? gr_strf("too slow to finish within the %g s performance time "
                                     "limit: output not checked", lab->limit_perf)
                           : gr_strf("identical to the solution's output in the %d round%s "
                                     "before a run too slow to finish", i, i == 1 ? "" : "s");
        gr_lab_add(c->r, "correctness", c->out_name, i == 0 ? GR_NOT_RUN : GR_PASS, why, NULL);
        free(why);
        *c->output_ok = i == 0 ? -1 : 1;
        char slow[256];
        gr_too_slow_reason(lab, slow, sizeof slow);
        char *more = gr_strf("%s\n%s", reason, gr_buf_str(detail));
        gr_check *k = gr_lab_add(c->r, "performance", c->name, GR_FAIL, slow, more);
        k->seconds = lab->limit_perf;
        free(more);
        *c->too_slow = 1;
        return;
    }
    /* A crash, a hang or an unreadable output here is a wrong result, like any other. */
    char *why = gr_strf("round %d, %s: %s", i + 1, spec, reason);
    gr_lab_add(c->r, "correctness", c->out_name, GR_FAIL, why, gr_buf_str(detail));
    gr_lab_add(c->r, "performance", c->name, GR_FAIL, "not scored: the run failed", NULL);
    free(why);
    *c->output_ok = 0;
}

/* The student's output of round @p i (descriptor @p got) against the solution's output
   @p ref on the same instance. 1 same, 0 different (checks added), -1 error. */
static int round_output(rounds_ctx *c, int i, const char *spec, const char *ref, int got,
                        lk_error *err)
{
    char reason[1024];
    gr_buf detail = {0};
    char *path = gr_fd_path(got);
    int same = gr_compare_outputs(c->lc->rub, ref, path, c->lc->perf_rows, c->lc->perf_cols,
                                  NULL, reason, sizeof reason, &detail, err);
    free(path);
    if (same == 0) {
        char *why = gr_strf("round %d, %s: %s", i + 1, spec, reason);
        gr_lab_add(c->r, "correctness", c->out_name, GR_FAIL, why, gr_buf_str(&detail));
        gr_lab_add(c->r, "performance", c->name, GR_FAIL,
                   "not scored: wrong result on the performance dataset", NULL);
        free(why);
        *c->output_ok = 0;
    }
    gr_buf_free(&detail);
    return same;
}

/* The solution's side of round @p i on instance @p inst: its timed call (which writes the
   instance's output the first time, kept for the session), or the median of its earlier
   calls on the instance. Its raw wall time in *ms. 1 ok, 0 the solution failed, -1 error. */
static int solution_round(rounds_ctx *c, int i, int inst, const char *spec, double *ms,
                          lk_error *err)
{
    gr_lab_ctx *lc = c->lc;
    char **ref = perf_ref(lc, inst);
    if (*ref && !c->time_solution && lc->nsol_ms[inst] > 0) {
        *ms = median_of(lc->sol_ms[inst], lc->nsol_ms[inst]);
        c->reused++;
        return 1;
    }
    char tag[32], reason[1024];
    snprintf(tag, sizeof tag, "perf-solution-%d", i);
    gr_buf detail = {0};
    gr_driver_run dr;
    double own = 0, gbps = 0;
    int timed_out;
    int ok = timed_call(c->s, lc, lc->ref_driver, c->soldir, tag, spec, !*ref, NULL,
                        lc->rub->limit_perf, &dr, ms,
                        &own, &gbps, &timed_out, reason, sizeof reason, &detail, err);
    if (gbps > lc->copy_GBps)
        lc->copy_GBps = gbps;
    if (ok == 1 && !*ref) {
        char *keep = gr_strf("%s/instance-%d.bin", c->soldir, inst);
        if (renameat(dr.box_fd, "out.bin", AT_FDCWD, keep) != 0)
            ok = lk_fail(err, "%s: cannot keep the solution's output: %s", keep, strerror(errno));
        else
            *ref = keep, keep = NULL;
        free(keep);
    }
    if (ok == 1 && lc->nsol_ms[inst] < GR_SOLUTION_TIMES)
        lc->sol_ms[inst][lc->nsol_ms[inst]++] = *ms;
    if (ok == 0)
        *c->problem = gr_strf("the solution failed on the performance dataset %s: %s\n%s", spec,
                              reason, gr_buf_str(&detail));
    if (ok == 1)
        gr_rm_rf(dr.top, NULL);
    gr_buf_free(&detail);
    gr_driver_run_free(&dr);
    return ok;
}

/* Round @p i: the solution's call on its instance (its time bounds the student's), the
   student's timed call, the output check. 1 the round counts, 0 the rounds end (checks
   added), -1 error. */
static int one_round(rounds_ctx *c, int i, lk_error *err)
{
    gr_lab_ctx *lc = c->lc;
    gr_perf *p = c->p;
    char spec[192], tag[32], reason[1024];
    perf_instance(c->s, lc, i, spec);
    const int inst = c->fresh ? i : 0;
    c->limit_s = lc->rub->limit_perf;
    if (p->have_solution) {
        int sol = solution_round(c, i, inst, spec, &p->solution_ms[i], err);
        if (sol != 1)
            return sol;
        c->limit_s = fmin(c->limit_s, lc->rub->limit_relative * p->solution_ms[i] / 1e3);
    }
    snprintf(tag, sizeof tag, "perf-student-%d", i);
    char *base = gr_strf("%s/run", c->work);
    gr_buf detail = {0};
    gr_driver_run dr;
    double wall = 0, own = 0, gbps = 0;
    int timed_out = 0, got = -1;
    int ok = timed_call(c->s, lc, c->driver, base, tag, spec, 1, c->src_prefix, c->limit_s, &dr,
                        &wall, &own, &gbps, &timed_out, reason, sizeof reason, &detail, err);
    free(base);
    const long long bytes = (long long)lc->perf_rows * lc->perf_cols * 8;
    if (ok == 1 && p->have_solution &&
        (got = gr_run_output(&dr, "out.bin", bytes, reason, sizeof reason)) < 0)
        ok = 0;
    if (ok == 1 && p->have_solution && lc->rub->judge_trusted) {
        /* The graded driver wrote raw values: the kit's trusted build judges them. */
        char judge_tag[40];
        snprintf(judge_tag, sizeof judge_tag, "perf-judge-%d", i);
        ok = gr_judge_output(c->s, lc, c->work, judge_tag, "--gen", spec, lc->rub->perf.steps,
                             bytes, &got, reason, sizeof reason, err);
    }
    if (ok == 0)
        round_failed(c, i, spec, timed_out, reason, &detail);
    gr_buf_free(&detail);
    if (ok == 1 && p->have_solution)
        ok = round_output(c, i, spec, *perf_ref(lc, inst), got, err);
    if (got >= 0)
        close(got);
    if (ok == 1)
        gr_rm_rf(dr.top, NULL); /* a failed round's box stays for a look */
    gr_driver_run_free(&dr);
    if (ok != 1)
        return ok;
    /* The call minus the trusted 0-step call: the steps, what the lab is about. A call
       faster than that overhead is kept tiny, for the plausibility rules to judge. */
    p->student_ms[i] = fmax(wall - lc->zero_ms, 1e-3);
    c->own_steps[i] = own - lc->zero_internal_ms;
    if (p->have_solution)
        p->solution_ms[i] = fmax(p->solution_ms[i] - lc->zero_ms, 1e-3);
    return 1;
}

/* The rounds went through: the output check, what was timed, plausibility, the points. */
static void rounds_done(rounds_ctx *c)
{
    gr_perf *p = c->p;
    const gr_lab_rubric *lab = c->lc->rub;
    if (p->have_solution) {
        char *why = gr_strf("identical to the solution's output in each of the %d rounds%s",
                            p->rounds, c->fresh ? " (a fresh instance each)" : "");
        gr_lab_add(c->r, "correctness", c->out_name, GR_PASS, why, NULL);
        free(why);
        *c->output_ok = 1;
    } else {
        gr_lab_add(c->r, "correctness", c->out_name, GR_NOT_RUN,
                   "no solution in this kit to compare with", NULL);
    }
    p->measured = 1;
    p->timed = timed_text(c->s, c->lc, c->fresh, p->rounds, c->reused);
    judge_plausibility(c->s, c->lc, p, c->own_steps);
    double total = 0;
    for (int i = 0; i < p->rounds; i++)
        total += p->student_ms[i];
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
    gr_check *k = gr_lab_add(c->r, "performance", c->name,
                             p->implausible ? GR_IMPLAUSIBLE
                             : p->score.inconclusive ? GR_INCONCLUSIVE : GR_PASS,
                             gr_buf_str(&line), p->score.reason);
    k->seconds = total / 1e3;
    gr_buf_free(&line);
}

/* The perf record's fixed part: the dataset, the reference times, room for the rounds. */
static void perf_init(const gr_lab_ctx *lc, gr_perf *p, int max_rounds)
{
    const gr_lab_rubric *lab = lc->rub;
    p->dataset = gr_xstrdup(lab->perf.name);
    p->steps = lab->perf.steps;
    p->have_solution = lc->ref_state == 1;
    p->student_ms = gr_xcalloc(max_rounds, sizeof(double));
    p->solution_ms = p->have_solution ? gr_xcalloc(max_rounds, sizeof(double)) : NULL;
    p->serial_ms = lc->serial_ms;
    p->serial_steps = lc->serial_steps;
    p->extrapolated = lc->serial_extrapolated;
    p->overhead_ms = lc->zero_ms;
    if (lab->baseline[0]) {
        p->baseline = gr_xstrdup(lab->baseline);
        p->baseline_ms = lc->baseline_ms;
        p->baseline_steps = lc->baseline_steps;
        p->baseline_extrapolated = lc->baseline_extrapolated;
    }
}

int gr_performance(gr_session *s, gr_lab_ctx *lc, const char *work, const char *driver,
                   gr_lab_result *r, int *output_ok, int *too_slow, char **problem,
                   lk_error *err)
{
    const gr_lab_rubric *lab = lc->rub;
    gr_perf *p = &r->perf;
    *output_ok = -1;
    *too_slow = 0;
    char spec[192];
    const int max_rounds = lab->rounds + lab->extra_rounds;
    /* Timing the solution in every round of every student would double the rounds' cost. */
    const int nth = lc->timing_alone ? lc->perf_students : ++lc->perf_students;
    rounds_ctx c = {s, lc, work, driver, r, p,
                    gr_strf("performance %s (%d steps)", lab->perf.name, lab->perf.steps),
                    gr_strf("performance dataset %s (%d steps): output", lab->perf.name,
                            lab->perf.steps),
                    gr_strf("%s/src/", work), gr_strf("%s/perf", lc->kit_work),
                    gr_xcalloc(max_rounds, sizeof(double)), perf_instance(s, lc, 0, spec),
                    lc->timing_alone || nth <= GR_SOLUTION_TIMED_STUDENTS ||
                        nth % GR_SOLUTION_RETIME == 0,
                    0, 0,
                    output_ok, too_slow, problem};
    perf_init(lc, p, max_rounds);
    int rc = 1;
    for (int i = 0, target = lab->rounds; i < target && rc == 1; i++) {
        rc = one_round(&c, i, err);
        if (rc != 1)
            break;
        p->rounds = i + 1;
        if (i + 1 == target) {
            gr_perf_score_rounds(p->student_ms, p->solution_ms, p->rounds, p->serial_ms,
                                 p->baseline, p->baseline_ms, lab->min_speedup,
                                 lab->curve_full, lab->curve_zero, lab->points_perf, &p->score);
            /* A verdict that depends on noise gets one more round at a time, until it no
               longer does (from 4 rounds one outlier falls out of the spread) or the rubric's
               extra rounds run out. */
            if (p->score.unsettled && target < max_rounds)
                target++;
        }
    }
    if (rc == 1 && !*problem)
        rounds_done(&c);
    free(c.name);
    free(c.out_name);
    free(c.src_prefix);
    free(c.soldir);
    free(c.own_steps);
    return rc < 0 ? -1 : 0;
}
