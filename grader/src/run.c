/* The GPU stages of one lab, in order: correctness on every public and hidden dataset
   against the serial reference (correctness.c), then, for a lab correct on all of them, the
   per-session timings of the trusted driver and the A/B rounds against the solution
   (timing.c). Every driver runs in the sandbox (driver.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"
#include "fanout.h"
#include "stages.h"
#include "state.h"

/* The rubric's `stretch` datasets, after the scored ones: each is a check of stage
   "stretch" (pass, fail, or not-run: not attempted, as the lab's NOT_ATTEMPTED return value
   says, or not checked), and @p verdict gets the line the summary ends with. They never
   count towards the score. -1 only on grader errors. */
static int stretch_checks(gr_session *s, gr_lab_ctx *lc, const char *refdrv, const char *work,
                          const char *driver, int hung, gr_lab_result *r, char *verdict,
                          size_t size, lk_error *err)
{
    const gr_lab_rubric *lab = lc->rub;
    int passed = 0, skipped = 0;
    char first[1100] = "";
    for (int j = 0; j < lab->nstretch; j++) {
        const gr_dataset *d = &lab->stretch[j];
        const char *flag = d->hidden || d->generated ? "--gen" : "--dataset";
        char spec[192];
        if (d->hidden)
            snprintf(spec, sizeof spec, "%s:%llu", d->name, s->seed + 2000ULL + (unsigned)j);
        else
            snprintf(spec, sizeof spec, "%s", d->name);
        char *name = gr_strf("stretch %s (%d steps)", spec, d->steps);
        gr_ref_output ref = {0};
        char why[1400] = "";
        int got = hung ? 0 : gr_reference_output(s, lc, refdrv, flag, spec, d->steps, &ref, why,
                                                 sizeof why, err);
        if (got < 0) {
            free(name);
            return -1;
        }
        if (got == 0) {
            gr_lab_add(r, "stretch", name, GR_NOT_RUN,
                       hung ? "not checked: an earlier run hung" : "not checked: the kit's "
                       "serial reference failed", hung ? NULL : why);
            skipped++;
        } else {
            const int ranks = lab->launcher != GR_LAUNCHER_NONE ? lab->ranks[lab->nranks - 1] : 0;
            int hung_here = 0;
            int ok = gr_check_dataset(s, lc, work, driver, name, flag, spec, d->steps, ranks,
                                      &ref, lab->ndatasets + j, r, &hung_here, err);
            if (ok < 0) {
                free(ref.bin);
                free(name);
                return -1;
            }
            gr_check *c = &r->checks[r->nchecks - 1];
            free(c->stage);
            c->stage = gr_xstrdup("stretch");
            if (ok == 1) {
                passed++;
            } else if (strstr(c->reason, "NOT_ATTEMPTED")) {
                char *said = gr_strf("not attempted (%s)", c->reason);
                free(c->status);
                c->status = gr_xstrdup(GR_NOT_RUN);
                free(c->reason);
                c->reason = said;
                skipped++;
            } else if (!first[0]) {
                snprintf(first, sizeof first, "%s: %s", name, c->reason);
            }
            hung = hung || hung_here;
        }
        free(ref.bin);
        free(name);
    }
    if (first[0])
        snprintf(verdict, size, "stretch: failed (%s)", first);
    else if (passed == lab->nstretch)
        snprintf(verdict, size, "stretch: passed");
    else if (passed == 0)
        snprintf(verdict, size, "stretch: not attempted");
    else
        snprintf(verdict, size, "stretch: %d of %d passed, the others not attempted", passed,
                 lab->nstretch);
    return 0;
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

/* ---- correctness runs, side by side ----------------------------------------------------- */

typedef struct dataset_runs {
    gr_session *s;
    gr_lab_ctx *lc;
    const char *refdrv, *work, *driver;
    int counts;
    gr_ref_output *refs; /* per dataset */
} dataset_runs;

/* Task i: the serial reference of dataset i into the session's cache (code 1 ready, 0 failed:
   the parent, reading the cache afterwards, runs it again to learn why). */
static int reference_task(void *ctx, int i, gr_lab_result *r, lk_error *err)
{
    (void)r;
    const dataset_runs *d = ctx;
    const char *flag;
    char spec[192], why[1400];
    int steps;
    gr_dataset_args(d->s, d->lc, i, &flag, spec, &steps);
    gr_ref_output ref;
    int got = gr_reference_output(d->s, d->lc, d->refdrv, flag, spec, steps, &ref, why,
                                  sizeof why, err);
    free(ref.bin);
    return got;
}

enum { RUN_FAILED = 0, RUN_PASSED = 1, RUN_HUNG = 2 };

static int run_ranks(const gr_lab_rubric *lab, int k)
{
    return lab->launcher != GR_LAUNCHER_NONE ? lab->ranks[k] : 0;
}

/* Task t is dataset t / counts at process count t % counts: its arguments and check name. */
static char *check_args(const dataset_runs *d, int t, const char **flag, char *spec, int *steps,
                        int *ranks)
{
    const gr_lab_rubric *lab = d->lc->rub;
    const int i = t / d->counts;
    *ranks = run_ranks(lab, t % d->counts);
    gr_dataset_args(d->s, d->lc, i, flag, spec, steps);
    const char *kind = lab->datasets[i].hidden ? "hidden" : "public";
    return *ranks > 0 ? gr_strf("%s %s (%d steps), %d rank%s", kind, spec, *steps, *ranks,
                                *ranks == 1 ? "" : "s")
                      : gr_strf("%s %s (%d steps)", kind, spec, *steps);
}

/* Task t: the student's run, its check added to @p r. */
static int check_task(void *ctx, int t, gr_lab_result *r, lk_error *err)
{
    const dataset_runs *d = ctx;
    const int i = t / d->counts;
    const char *flag;
    char spec[192];
    int steps, ranks, hung = 0;
    char *name = check_args(d, t, &flag, spec, &steps, &ranks);
    int ok = gr_check_dataset(d->s, d->lc, d->work, d->driver, name, flag, spec, steps, ranks,
                              &d->refs[i], i, r, &hung, err);
    free(name);
    return ok < 0 ? -1 : ok == 1 ? RUN_PASSED : hung ? RUN_HUNG : RUN_FAILED;
}

/* How long a task of correctness runs may take: its command's time limit (a reference's:
   the larger of the run and performance limits), plus a minute for the grader's side
   (starting the sandbox, comparing the outputs). */
static double task_deadline(const gr_lab_rubric *lab, int reference)
{
    return (reference ? fmax(lab->limit_run, lab->limit_perf) : lab->limit_run) + 60;
}

/* A run that hangs would hang again on the later datasets: start no more. */
static int stop_after_hang(void *ctx, int code)
{
    (void)ctx;
    return code == RUN_HUNG;
}

/* Every dataset's serial reference (computed side by side the first time, then read from the
   cache), then the student's runs on each dataset and process count, side by side
   (`--runs`), their checks added in dataset order. A dataset whose reference fails is the
   kit's problem (*problem); *hung when a run hung. 0, or -1 on grader errors. */
static int correctness_runs(gr_session *s, gr_lab_ctx *lc, const char *refdrv, const char *work,
                            const char *driver, int counts, gr_lab_result *r, int *passed,
                            int *hung, int *failed_first, char *first_fail, size_t ffsize,
                            char **problem, lk_error *err)
{
    const gr_lab_rubric *lab = lc->rub;
    const int nd = lab->ndatasets, ntasks = nd * counts;
    dataset_runs d = {s, lc, refdrv, work, driver, counts,
                      gr_xcalloc(nd ? nd : 1, sizeof *d.refs)};
    char *dir = gr_strf("%s/tasks", work);
    gr_task_result *res = gr_xcalloc(ntasks > nd ? ntasks : nd ? nd : 1, sizeof *res);
    int rc = 0;
    if (!lc->references_ready) {
        rc = gr_fanout(s, dir, nd, NULL, s->runs, task_deadline(lab, 1), reference_task, &d,
                       NULL, res, err);
        for (int i = 0; rc == 0 && i < nd; i++)
            if (res[i].code < 0)
                rc = lk_fail(err, "%s", res[i].error);
        gr_fanout_free(res, nd);
    }
    for (int i = 0; rc == 0 && i < nd && !*problem; i++) {
        const char *flag;
        char spec[192], why[1400] = "";
        int steps;
        gr_dataset_args(s, lc, i, &flag, spec, &steps);
        int got = gr_reference_output(s, lc, refdrv, flag, spec, steps, &d.refs[i], why,
                                      sizeof why, err);
        if (got < 0)
            rc = -1;
        else if (got == 0)
            *problem = gr_xstrdup(why);
    }
    lc->references_ready = rc == 0 && !*problem;
    /* An MPI run of N ranks counts as N / 2 runs: its processes mostly wait on each other. */
    int *weights = gr_xcalloc(ntasks ? ntasks : 1, sizeof *weights);
    for (int t = 0; t < ntasks; t++) {
        const int half = (run_ranks(lab, t % counts) + 1) / 2;
        weights[t] = half > 1 ? half : 1;
    }
    if (rc == 0 && !*problem) {
        rc = gr_fanout(s, dir, ntasks, weights, s->runs, task_deadline(lab, 0), check_task, &d,
                       stop_after_hang, res, err);
        for (int t = 0; rc == 0 && t < ntasks; t++) {
            const gr_task_result *tr = &res[t];
            if (!tr->started) {
                const char *flag;
                char spec[192];
                int steps, ranks;
                char *name = check_args(&d, t, &flag, spec, &steps, &ranks);
                gr_lab_add(r, "correctness", name, GR_FAIL,
                           "not run: an earlier run hung, later ones would too", NULL);
                free(name);
            } else if (tr->timed_out) {
                const char *flag;
                char spec[192];
                int steps, ranks;
                char *name = check_args(&d, t, &flag, spec, &steps, &ranks);
                gr_lab_add(r, "correctness", name, GR_FAIL, tr->error, NULL);
                free(name);
                *hung = 1;
            } else if (tr->code < 0) {
                rc = lk_fail(err, "%s", tr->error ? tr->error : "a check failed");
                break;
            } else {
                for (int c = 0; c < tr->r.nchecks; c++) {
                    const gr_check *from = &tr->r.checks[c];
                    gr_check *to = gr_lab_add(r, from->stage, from->name, from->status,
                                              from->reason, from->detail);
                    to->seconds = from->seconds;
                }
                *passed += tr->code == RUN_PASSED;
                *hung = *hung || tr->code == RUN_HUNG;
            }
            if (rc == 0 && (!tr->started || tr->code != RUN_PASSED) && *failed_first < 0) {
                *failed_first = t / counts;
                snprintf(first_fail, ffsize, "%s: %s", r->checks[r->nchecks - 1].name,
                         r->checks[r->nchecks - 1].reason);
            }
        }
        gr_fanout_free(res, ntasks);
    }
    for (int i = 0; i < nd; i++)
        free(d.refs[i].bin);
    free(d.refs);
    free(weights);
    free(res);
    free(dir);
    return rc;
}

/* Another GPU's grader ran beside the rounds (--gpus), and the host it shares is not
   isolated by the CPU slices (memory, caches, PCIe): a measurement the rubric's rules flag
   (implausible) or cannot settle (inconclusive) may be its doing, not the student's. The
   0-step calls and the rounds, the solution's call in each, run again with the machine to
   this grader alone (the host lock exclusive, held to the end of the GPU stages); only the
   second measurement counts, and says so. @p first_check: the checks the rounds added. */
static int time_again_alone(gr_session *s, gr_lab_ctx *lc, const char *refdrv, const char *work,
                            const char *driver, gr_lab_result *r, int first_check, int *host,
                            int *output_ok, int *too_slow, char **problem, lk_error *err)
{
    gr_perf *p = &r->perf;
    char *first = gr_strf("%.2fx the solution's speed, %s", p->score.ratio.median,
                          p->implausible ? "implausible" : "inconclusive");
    gr_lab_drop_checks(r, first_check);
    gr_perf_clear(p);
    gr_gpu_unlock(*host);
    *host = gr_host_lock(s->host_lock, 1, s->lock_timeout_s, err);
    int rc = *host < 0 ? -1 : 0;
    if (rc == 0) {
        lc->zero_state = 0;
        rc = gr_time_references(s, lc, refdrv, problem, err);
    }
    if (rc == 0 && !*problem) {
        lc->timing_alone = 1;
        rc = gr_performance(s, lc, work, driver, r, output_ok, too_slow, problem, err);
        lc->timing_alone = 0;
    }
    if (rc == 0 && p->timed) {
        char *t = gr_strf("%s; timed again with the machine to itself (the other GPUs' "
                          "graders waiting), after a first measurement beside them gave %s",
                          p->timed, first);
        free(p->timed);
        p->timed = t;
    }
    free(first);
    return rc;
}

/* The lab's points and outcome from its checks: @p passed of @p total datasets (@p unchecked
   left out), the first failure, a run too slow for the time limit, the stretch's line. */
static void decide(gr_lab_result *r, const gr_lab_rubric *lab, int passed, int total,
                   int too_slow, int unchecked, const char *first_fail, const char *stretch)
{
    r->correctness = gr_correctness_points(passed, total, lab->points_correct, lab->credit_all);
    r->performance = r->perf.measured ? r->perf.score.points : 0.0;
    r->score = r->correctness + r->performance;
    r->decided = 1;
    if (passed == total && r->perf.measured) {
        gr_lab_outcome(r, GR_OUT_CORRECT, "correct on all %d datasets; %s", total,
                       r->perf.score.reason);
    } else if (passed == total && too_slow) {
        char slow[256];
        gr_too_slow_reason(lab, slow, sizeof slow);
        gr_lab_outcome(r, GR_OUT_CORRECT, "correct on all %d %sdatasets%s; %s", total,
                       unchecked ? "checked " : "",
                       unchecked ? " (the performance dataset's output was not checked: too "
                                   "slow)" : "", slow);
    } else {
        gr_lab_outcome(r, GR_OUT_INCORRECT, "incorrect: %d of %d datasets failed; first: %s",
                       total - passed, total, first_fail[0] ? first_fail : "see the checks");
    }
    if (stretch[0]) { /* reported, not scored */
        char *line = gr_strf("%s; %s", r->summary, stretch);
        free(r->summary);
        r->summary = line;
    }
}

int gr_gpu_stages(gr_session *s, gr_lab_ctx *lc, const char *work, const char *driver,
                  gr_lab_result *r, lk_error *err)
{
    const gr_lab_rubric *lab = lc->rub;
    int lock = gr_gpu_lock(s->gpu_lock, s->lock_timeout_s, err);
    if (lock < 0)
        return -1;
    /* With other GPUs' graders on the machine: shared, so that one of them can time alone. */
    int host = -1;
    if (s->host_lock && (host = gr_host_lock(s->host_lock, 0, s->lock_timeout_s, err)) < 0) {
        gr_gpu_unlock(lock);
        return -1;
    }
    int rc = 0;
    char *problem = NULL;
    const char *refdrv = NULL;
    if (lc->have_solution) {
        if (gr_ensure_solution(s, lc, err) != 0) {
            gr_gpu_unlock(host);
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
    free(r->gpu);
    r->gpu = s->gpu_label ? gr_xstrdup(s->gpu_label) : NULL;
    /* Under a launcher every dataset is checked at each process count of `ranks`. */
    const int counts = lab->launcher != GR_LAUNCHER_NONE && lab->nranks > 0 ? lab->nranks : 1;
    int passed = 0, hung = 0, failed_first = -1;
    char first_fail[1200] = "";
    if (!problem)
        rc = correctness_runs(s, lc, refdrv, work, driver, counts, r, &passed, &hung,
                              &failed_first, first_fail, sizeof first_fail, &problem, err);
    int total = lab->ndatasets * counts + (lc->have_solution ? 1 : 0), too_slow = 0,
        unchecked = 0;
    if (rc == 0 && !problem) {
        if (passed == lab->ndatasets * counts) {
            rc = gr_time_references(s, lc, refdrv, &problem, err);
            int output_ok = -1;
            const int first_check = r->nchecks;
            if (rc == 0 && !problem)
                rc = gr_performance(s, lc, work, driver, r, &output_ok, &too_slow, &problem, err);
            if (rc == 0 && !problem && host >= 0 && r->perf.measured &&
                (r->perf.implausible || r->perf.score.inconclusive))
                rc = time_again_alone(s, lc, refdrv, work, driver, r, first_check, &host,
                                      &output_ok, &too_slow, &problem, err);
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
    char stretch[1300] = "";
    if (rc == 0 && !problem && lab->nstretch > 0)
        rc = stretch_checks(s, lc, refdrv, work, driver, hung, r, stretch, sizeof stretch, err);
    gr_state_save(s, lc);
    gr_gpu_unlock(host);
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
    decide(r, lab, passed, total, too_slow, unchecked, first_fail, stretch);
    return 0;
}
