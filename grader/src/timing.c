/* Timing: the trusted driver's per-session timings (the serial reference, the given version,
   the 0-step call), and the A/B rounds. A timed call cannot be replayed: each is the only call
   of a fresh process (--once: outputs poisoned, nothing cached from an earlier call) in a
   fresh run folder, on a fresh instance of the performance dataset (the session seed + 1000 +
   round, where the generator takes a seed), and every timed output is checked against the
   solution's output on the same instance. */
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
                       char **problem, lk_error *err)
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
    int rc = gr_prepare_dir(s, dir, err);
    if (rc == 0)
        rc = gr_run_driver(s, refdrv, dir, args,
                           serial ? gr_reference_ranks(lc->rub) : gr_performance_ranks(lc->rub),
                           lc->rub->limit_perf, 0, tag, &dr, err);
    free(dir);
    if (rc != 0)
        return -1;
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
        int rc = trusted_run(s, lc, refdrv, mode, what, counts[k], &t[k], problem, err);
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
    if (rc >= 0 && lc->zero_state == 0) {
        /* What a round subtracts: the trusted driver's one call of 0 steps (upload, download,
           no step), the median of 3. A student's own 0-step call is theirs to slow down. */
        static const char *const once[] = {"--gpu", "--once", NULL};
        double t[3];
        for (int k = 0; k < 3 && rc == 1; k++)
            rc = trusted_run(s, lc, refdrv, once, "the trusted driver's 0-step call", 0, &t[k],
                             &lc->zero_error, err);
        if (rc == 1) {
            qsort(t, 3, sizeof t[0], cmp_double);
            lc->zero_ms = t[1];
        }
        lc->zero_state = rc == 1 ? 1 : rc == 0 ? -1 : 0;
    }
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

/* One timed call: @p driver --gpu --once on @p spec in @p dir; the call's time in *ms.
   1 ok, 0 failed (@p reason, @p detail; *timed_out when killed at the time limit), -1 error. */
static int timed_call(gr_session *s, const gr_lab_ctx *lc, const char *driver, const char *dir,
                      const char *tag, const char *spec, const char *bin, const char *src_prefix,
                      double *ms, double *copy_GBps, int *timed_out, char *reason, size_t size,
                      gr_buf *detail, lk_error *err)
{
    char steps_s[16];
    snprintf(steps_s, sizeof steps_s, "%d", lc->rub->perf.steps);
    /* The grader hashes --bin itself; the driver's md5s would cost seconds of the round. */
    const char *args[] = {"--gpu", "--once", "--no-md5", "--gen", spec, "--steps", steps_s,
                          bin ? "--bin" : NULL, bin, NULL};
    gr_driver_run dr;
    if (gr_run_driver(s, driver, dir, args, gr_performance_ranks(lc->rub), lc->rub->limit_perf,
                      (long long)lc->perf_rows * lc->perf_cols * 8, tag, &dr, err) != 0)
        return -1;
    int rc = 1;
    *timed_out = 0;
    if (gr_run_failed(&dr, src_prefix, reason, size, detail)) {
        *timed_out = dr.o.end == GR_END_TIMEOUT;
        rc = 0;
    } else {
        *ms = gr_json_num(gr_json_get(dr.res, "gpu"), "ms_median", -1);
        *copy_GBps = gr_json_num(gr_json_get(dr.res, "gpu"), "copy_GBps", 0);
        if (!(*ms > 0)) {
            snprintf(reason, size, "the result line has no positive gpu.ms_median");
            rc = 0;
        }
    }
    gr_driver_run_free(&dr);
    return rc;
}

/* The rubric's `plausible` rules: a time below the bytes the steps must move at the copy
   bandwidth the trusted driver measured in this session (divided by the margin), or a speed
   more than `factor` times the solution's, is not scored until an instructor accepts it
   (--accept-implausible): work left running when the clock stops looks exactly like this. */
static void judge_plausibility(const gr_session *s, const gr_lab_ctx *lc, gr_perf *p)
{
    const gr_lab_rubric *lab = lc->rub;
    gr_buf why = {0};
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
                      "same input; times are that call minus the trusted driver's 0-step call "
                      "(%.3f ms: upload, download, no step), as make bench subtracts its "
                      "0-step run", lc->rub->perf.steps, inst, lc->zero_ms);
    if (reused) {
        char *more = gr_strf("%s; the solution's time in %d of the rounds is the median of its "
                             "timed calls on the same input this session (it is timed alongside "
                             "the first %d students and every %dth after them)", t, reused,
                             GR_SOLUTION_TIMED_STUDENTS, GR_SOLUTION_RETIME);
        free(t);
        t = more;
    }
    free(inst);
    return t;
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
    const int fresh = perf_instance(s, lc, 0, spec);
    char *name = gr_strf("performance %s (%d steps)", lab->perf.name, lab->perf.steps);
    char *out_name = gr_strf("performance dataset %s (%d steps): output", lab->perf.name,
                             lab->perf.steps);
    char *src_prefix = gr_strf("%s/src/", work);
    char *soldir = gr_strf("%s/perf", lc->kit_work);
    int rc = 0, max_rounds = lab->rounds + lab->extra_rounds;
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
    int target = lab->rounds, failed = 0, reused = 0;
    /* Timing the solution in every round of every student would double the rounds' cost. */
    const int nth = ++lc->perf_students;
    const int time_solution = nth <= GR_SOLUTION_TIMED_STUDENTS || nth % GR_SOLUTION_RETIME == 0;
    char reason[1024];
    gr_buf detail = {0};
    for (int i = 0; i < target && !failed; i++) {
        perf_instance(s, lc, i, spec);
        char tag[32];
        /* A fresh, empty folder: nothing a call leaves behind reaches the next one. */
        char *dir = gr_strf("%s/run/perf-%d", work, i);
        char *stu_bin = gr_strf("%s/out.bin", dir);
        snprintf(tag, sizeof tag, "perf-student-%d", i);
        int timed_out = 0, ok;
        double raw = 0, gbps = 0;
        if (gr_rm_rf(dir, err) != 0 || gr_prepare_dir(s, dir, err) != 0)
            ok = -1;
        else
            ok = timed_call(s, lc, driver, dir, tag, spec, stu_bin, src_prefix, &raw, &gbps,
                            &timed_out, reason, sizeof reason, &detail, err);
        if (ok == 0 && timed_out) {
            /* Slow is not wrong: a run killed at the time limit costs the performance points
               only; the outputs of the rounds before it were checked. */
            char *why = i == 0 ? gr_strf("too slow to finish within the %g s performance time "
                                         "limit: output not checked", lab->limit_perf)
                               : gr_strf("identical to the solution's output in the %d "
                                         "round%s before a run too slow to finish", i,
                                         i == 1 ? "" : "s");
            gr_lab_add(r, "correctness", out_name, i == 0 ? GR_NOT_RUN : GR_PASS, why, NULL);
            free(why);
            *output_ok = i == 0 ? -1 : 1;
            char slow[256];
            gr_too_slow_reason(lab, slow, sizeof slow);
            char *more = gr_strf("%s\n%s", reason, gr_buf_str(&detail));
            gr_check *c = gr_lab_add(r, "performance", name, GR_FAIL, slow, more);
            c->seconds = lab->limit_perf;
            free(more);
            *too_slow = 1;
            failed = 1;
        } else if (ok == 0) {
            /* A crash or hang here is a wrong result on this dataset, like any other. */
            char *why = gr_strf("round %d, %s: %s", i + 1, spec, reason);
            gr_lab_add(r, "correctness", out_name, GR_FAIL, why, gr_buf_str(&detail));
            gr_lab_add(r, "performance", name, GR_FAIL, "not scored: the run failed", NULL);
            free(why);
            *output_ok = 0;
            failed = 1;
        }
        if (ok < 0)
            rc = -1;
        if (ok <= 0) {
            free(dir);
            free(stu_bin);
            break;
        }
        p->student_ms[i] = raw;
        const int inst = fresh ? i : 0;
        char **ref = p->have_solution ? perf_ref(lc, inst) : NULL;
        if (ref && *ref && !time_solution && lc->nsol_ms[inst] > 0) {
            /* The solution's speed on this input is known: the median of its timed calls. */
            p->solution_ms[i] = median_of(lc->sol_ms[inst], lc->nsol_ms[inst]);
            reused++;
            int same = gr_compare_outputs(lab, *ref, stu_bin, lc->perf_rows, lc->perf_cols, NULL,
                                          reason, sizeof reason, &detail, err);
            if (same == 0) {
                char *why = gr_strf("round %d, %s: %s", i + 1, spec, reason);
                gr_lab_add(r, "correctness", out_name, GR_FAIL, why, gr_buf_str(&detail));
                gr_lab_add(r, "performance", name, GR_FAIL,
                           "not scored: wrong result on the performance dataset", NULL);
                free(why);
                *output_ok = 0;
            }
            if (same <= 0) {
                rc = same < 0 ? -1 : 0;
                failed = 1;
            }
        } else if (p->have_solution) {
            char *sol_bin = *ref ? NULL : gr_strf("%s/instance-%d.bin", soldir, inst);
            char sreason[1024];
            gr_buf sdetail = {0};
            int sol_timed_out;
            snprintf(tag, sizeof tag, "perf-solution-%d", i);
            ok = timed_call(s, lc, lc->ref_driver, soldir, tag, spec, sol_bin, NULL,
                            &p->solution_ms[i], &gbps, &sol_timed_out, sreason, sizeof sreason,
                            &sdetail, err);
            if (gbps > lc->copy_GBps)
                lc->copy_GBps = gbps;
            if (ok == 1 && sol_bin)
                *ref = gr_xstrdup(sol_bin);
            if (ok == 1 && lc->nsol_ms[inst] < GR_SOLUTION_TIMES)
                lc->sol_ms[inst][lc->nsol_ms[inst]++] = p->solution_ms[i];
            free(sol_bin);
            if (ok == 0)
                *problem = gr_strf("the solution failed on the performance dataset %s: %s\n%s",
                                   spec, sreason, gr_buf_str(&sdetail));
            gr_buf_free(&sdetail);
            int same = ok == 1 ? gr_compare_outputs(lab, *ref, stu_bin, lc->perf_rows,
                                                    lc->perf_cols, NULL, reason, sizeof reason,
                                                    &detail, err)
                               : ok;
            if (same == 0 && ok == 1) {
                char *why = gr_strf("round %d, %s: %s", i + 1, spec, reason);
                gr_lab_add(r, "correctness", out_name, GR_FAIL, why, gr_buf_str(&detail));
                gr_lab_add(r, "performance", name, GR_FAIL,
                           "not scored: wrong result on the performance dataset", NULL);
                free(why);
                *output_ok = 0;
            }
            if (same <= 0) {
                rc = same < 0 ? -1 : 0;
                failed = 1;
            }
        }
        gr_rm_rf(dir, err);
        free(dir);
        free(stu_bin);
        if (failed)
            break;
        /* The call minus the trusted 0-step call: the steps, what the lab is about. A call
           faster than that overhead is kept tiny, for the plausibility rules to judge. */
        p->student_ms[i] = fmax(p->student_ms[i] - lc->zero_ms, 1e-3);
        if (p->have_solution)
            p->solution_ms[i] = fmax(p->solution_ms[i] - lc->zero_ms, 1e-3);
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
    if (rc == 0 && !failed && !*problem) {
        if (p->have_solution) {
            char *why = gr_strf("identical to the solution's output in each of the %d rounds%s",
                                p->rounds, fresh ? " (a fresh instance each)" : "");
            gr_lab_add(r, "correctness", out_name, GR_PASS, why, NULL);
            free(why);
            *output_ok = 1;
        } else {
            gr_lab_add(r, "correctness", out_name, GR_NOT_RUN,
                       "no solution in this kit to compare with", NULL);
        }
        p->measured = 1;
        p->timed = timed_text(s, lc, fresh, p->rounds, reused);
        judge_plausibility(s, lc, p);
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
        gr_check *c = gr_lab_add(r, "performance", name,
                                 p->implausible ? GR_IMPLAUSIBLE
                                 : p->score.inconclusive ? GR_INCONCLUSIVE : GR_PASS,
                                 gr_buf_str(&line), p->score.reason);
        c->seconds = total / 1e3;
        gr_buf_free(&line);
    }
    gr_buf_free(&detail);
    free(name);
    free(out_name);
    free(src_prefix);
    free(soldir);
    return rc;
}
