/* The GPU stages of one lab, in order: correctness on every public and hidden dataset
   against the serial reference (correctness.c), then, for a lab correct on all of them, the
   per-session timings of the trusted driver and the A/B rounds against the solution
   (timing.c). Every driver runs in the sandbox (driver.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"
#include "stages.h"

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
        if (gr_ensure_solution(s, lc, err) != 0) {
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
    /* Under a launcher every dataset is checked at each process count of `ranks`. */
    const int counts = lab->launcher != GR_LAUNCHER_NONE && lab->nranks > 0 ? lab->nranks : 1;
    int passed = 0, failed_first = -1, hung = 0;
    char first_fail[1200] = "";
    for (int i = 0; i < lab->ndatasets && !problem && rc == 0; i++) {
        const char *flag;
        char spec[192];
        int steps;
        gr_dataset_args(s, lc, i, &flag, spec, &steps);
        gr_ref_output ref = {0};
        char why[1400] = "";
        int got = hung ? 1 : gr_reference_output(s, lc, refdrv, flag, spec, steps, &ref, why,
                                                 sizeof why, err);
        if (got < 0)
            rc = -1;
        else if (got == 0)
            problem = gr_xstrdup(why);
        for (int k = 0; k < counts && got == 1 && rc == 0; k++) {
            int ranks = lab->launcher != GR_LAUNCHER_NONE ? lab->ranks[k] : 0;
            char *name = ranks > 0 ? gr_strf("%s %s (%d steps), %d rank%s",
                                             lab->datasets[i].hidden ? "hidden" : "public",
                                             spec, steps, ranks, ranks == 1 ? "" : "s")
                                   : gr_strf("%s %s (%d steps)",
                                             lab->datasets[i].hidden ? "hidden" : "public",
                                             spec, steps);
            int ok = 0;
            if (hung)
                gr_lab_add(r, "correctness", name, GR_FAIL,
                           "not run: an earlier run hung, later ones would too", NULL);
            else
                ok = gr_check_dataset(s, lc, work, driver, name, flag, spec, steps, ranks, &ref,
                                      i, r, &hung, err);
            if (ok < 0)
                rc = -1;
            passed += ok == 1;
            if (ok == 0 && failed_first < 0) {
                failed_first = i;
                snprintf(first_fail, sizeof first_fail, "%s: %s", name,
                         r->checks[r->nchecks - 1].reason);
            }
            free(name);
        }
        free(ref.bin);
    }
    int total = lab->ndatasets * counts + (lc->have_solution ? 1 : 0), too_slow = 0,
        unchecked = 0;
    if (rc == 0 && !problem) {
        if (passed == lab->ndatasets * counts) {
            rc = gr_time_references(s, lc, refdrv, &problem, err);
            int output_ok = -1;
            if (rc == 0 && !problem)
                rc = gr_performance(s, lc, work, driver, r, &output_ok, &too_slow, &problem, err);
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
    return 0;
}
