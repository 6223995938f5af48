/* Grading a class: the students in turn, each lab saved as soon as it is graded, the
   student's reports right after the student, the gradebook and summary after every student;
   progress and an estimate of the time left on the way. */
#include "class.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "report.h"
#include "sandbox.h"
#include "util.h"

enum { EXIT_GRADED = 0, EXIT_ERROR = 1, EXIT_NO_GPU = 4 };

typedef struct writer_ctx {
    const gr_report_ctx *rc;
    const gr_student *st;
    int n;
} writer_ctx;

static int w_gradebook(FILE *f, void *p, lk_error *e)
{
    (void)e;
    writer_ctx *w = p;
    return gr_write_gradebook(f, w->rc, w->st, w->n);
}
static int w_summary(FILE *f, void *p, lk_error *e)
{
    (void)e;
    writer_ctx *w = p;
    return gr_write_summary(f, w->rc, w->st, w->n);
}
static int w_junit(FILE *f, void *p, lk_error *e)
{
    (void)e;
    writer_ctx *w = p;
    return gr_write_junit(f, w->rc, w->st, w->n);
}
static int w_md(FILE *f, void *p, lk_error *e)
{
    (void)e;
    writer_ctx *w = p;
    return gr_write_student_md(f, w->rc, w->st);
}
static int w_json(FILE *f, void *p, lk_error *e)
{
    (void)e;
    writer_ctx *w = p;
    return gr_write_student_json(f, w->rc, w->st);
}
static int w_gs(FILE *f, void *p, lk_error *e)
{
    (void)e;
    writer_ctx *w = p;
    return gr_write_gradescope(f, w->rc, w->st);
}

static int write_student(const char *out, const gr_report_ctx *rc, const gr_student *st,
                         int gradescope, lk_error *err)
{
    char *dir = gr_strf("%s/students/%s", out, st->dir);
    char *md = gr_strf("%s/report.md", dir), *js = gr_strf("%s/report.json", dir);
    char *gs = gr_strf("%s/results.json", dir);
    writer_ctx w = {rc, st, 1};
    int r = gr_mkdir_p(dir, 0755, err) == 0 && gr_write_atomic(md, w_md, &w, err) == 0 &&
                    gr_write_atomic(js, w_json, &w, err) == 0 &&
                    (!gradescope || gr_write_atomic(gs, w_gs, &w, err) == 0)
                ? 0
                : -1;
    free(dir);
    free(md);
    free(js);
    free(gs);
    return r;
}

static int write_class(const char *out, const gr_report_ctx *rc, const gr_student *st, int n,
                       int junit, lk_error *err)
{
    char *gb = gr_strf("%s/gradebook.csv", out), *sm = gr_strf("%s/summary.md", out);
    char *ju = gr_strf("%s/junit.xml", out);
    writer_ctx w = {rc, st, n};
    int r = gr_write_atomic(gb, w_gradebook, &w, err) == 0 &&
                    gr_write_atomic(sm, w_summary, &w, err) == 0 &&
                    (!junit || gr_write_atomic(ju, w_junit, &w, err) == 0)
                ? 0
                : -1;
    free(gb);
    free(sm);
    free(ju);
    return r;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* @p seconds: the lab's wall time on the grader's path (waiting for its build included). */
static void print_lab(const gr_lab_result *r, int width, double seconds)
{
    char score[64], took[32] = "";
    if (r->decided)
        snprintf(score, sizeof score, "%.2f/%g", r->score, r->max);
    else
        snprintf(score, sizeof score, "-/%g", r->max);
    if (!r->reused && seconds >= 0.05)
        snprintf(took, sizeof took, " [%.1f s]", seconds);
    printf("    %-*s %-13s %-11s %s%s%s\n", width, r->lab, r->outcome, score, r->summary,
           r->reused ? " [unchanged: reused]" : "", took);
}

static int name_width(const gr_session *s)
{
    int width = 10;
    for (int i = 0; i < s->nlabs; i++)
        if ((int)strlen(s->graded[i]->name) > width)
            width = (int)strlen(s->graded[i]->name);
    return width;
}


static void format_duration(double s, char *buf, size_t size)
{
    long t = (long)(s + 0.5);
    if (t >= 3600)
        snprintf(buf, size, "%ldh%02ldm", t / 3600, t / 60 % 60);
    else if (t >= 60)
        snprintf(buf, size, "%ldm%02lds", t / 60, t % 60);
    else
        snprintf(buf, size, "%lds", t);
}

/* "[3/30] name (2m10s so far, about 14m left)": the estimate is the mean time of the labs
   graded so far (reused results excluded: they take no time) times the labs left. */
static void print_progress(int i, int n, const char *name, double elapsed, int graded_labs,
                           int labs_left)
{
    printf("[%d/%d] %s", i + 1, n, name);
    if (graded_labs > 0) {
        char so_far[32], left[32];
        format_duration(elapsed, so_far, sizeof so_far);
        format_duration(elapsed / graded_labs * labs_left, left, sizeof left);
        printf(" (%s so far, about %s left)", so_far, left);
    }
    printf("\n");
}

/* Build jobs: while the grader runs lab k on the GPU, the CPU stages of labs k+1..k+jobs (in
   class order) run in child processes. */
typedef struct job_queue {
    pid_t *pid;   /* per (student, lab) pair, -1 when it has no job */
    int started;  /* pairs whose job was started (or skipped) so far */
    int total;    /* pairs in the class */
    int ahead;    /* jobs in flight at most */
} job_queue;

static int default_jobs(void)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int jobs = cpus > 1 ? (int)(cpus / 2) : 0;
    return jobs > 8 ? 8 : jobs;
}

static void start_jobs(gr_session *s, gr_student *st, job_queue *q, int current)
{
    for (; q->started < q->total && q->started <= current + q->ahead; q->started++) {
        int k = q->started;
        if (k > current && !gr_stop_requested)
            q->pid[k] = gr_prepare_in_background(s, &st[k / s->nlabs], k % s->nlabs);
    }
}

static void stop_jobs(job_queue *q, int from)
{
    for (int k = from; k < q->started; k++)
        if (q->pid[k] > 0) {
            kill(q->pid[k], SIGTERM);
            while (waitpid(q->pid[k], NULL, 0) < 0 && errno == EINTR)
                ;
        }
}

/* The instructor's log: who was graded in this session (whose seed the log's session line
   gives), with the outcome of each lab. */
static void log_student(const gr_session *s, const gr_student *st)
{
    gr_buf b = {0};
    for (int l = 0; l < st->nlabs; l++) {
        const gr_lab_result *r = &st->labs[l];
        if (!r->lab)
            continue;
        gr_buf_printf(&b, "; %s %s", r->lab, r->outcome);
        if (r->decided)
            gr_buf_printf(&b, " %.2f", r->score);
        if (r->reused)
            gr_buf_puts(&b, " (reused)");
    }
    gr_session_log(s->out, "graded %s%s%s", st->name, gr_buf_str(&b),
                   st->done ? "" : "; interrupted");
    gr_buf_free(&b);
}

/* Build jobs ahead: --jobs (or the default), fewer when their builds' address-space limits
   would not fit in the host's available memory (@p note then says so). */
static int jobs_ahead(const gr_session *s, const gr_options *o, char *note, size_t size)
{
    int jobs = o->jobs >= 0 ? o->jobs : default_jobs();
    long long per_build = 0;
    for (int l = 0; l < s->nlabs; l++) {
        gr_limits lim;
        gr_build_limits(&s->kitinfo, s->graded[l], &lim);
        if (lim.as_bytes > per_build)
            per_build = lim.as_bytes;
    }
    return gr_jobs_that_fit(jobs, per_build, gr_mem_available("/proc/meminfo"), note, size);
}

static void grade_student(gr_session *s, gr_student *students, int i, int quiet, int width,
                          job_queue *q, gr_class_tally *t, int *graded_labs)
{
    gr_student *st = &students[i];
    lk_error err;
    st->labs = gr_xcalloc(s->nlabs, sizeof *st->labs);
    st->nlabs = s->nlabs;
    for (int l = 0; l < s->nlabs && !gr_stop_requested; l++) {
        gr_lab_result *r = &st->labs[l];
        const gr_lab_rubric *lab = s->graded[l];
        const int k = i * s->nlabs + l;
        start_jobs(s, students, q, k);
        lk_error_clear(&err);
        const double began = now_s();
        if (gr_grade_prepared(s, st, l, q->pid[k], r, &err) != 0) {
            t->grader_errors++;
            fprintf(stderr, "labkit-grade: %s: %s: %s\n", st->name, lab->name, err.msg);
            gr_lab_free(r);
            gr_lab_init(r, lab->name, lab->points_correct + lab->points_perf);
            gr_lab_add(r, "grader", "grader", GR_FAIL, err.msg, NULL);
            gr_lab_outcome(r, GR_OUT_ERROR, "not graded: grader error: %s", err.msg);
            gr_lab_redact(r, s->seed);
        }
        q->pid[k] = -1;
        *graded_labs += !r->reused;
        if (strcmp(r->outcome, GR_OUT_GPU_NOT_RUN) == 0)
            t->gpu_not_run++;
        if (strcmp(r->outcome, GR_OUT_ERROR) == 0 && !gr_stop_requested)
            t->grader_errors += r->nchecks > 0 && strcmp(r->checks[0].stage, "grader") != 0;
        if (!quiet)
            print_lab(r, width, now_s() - began);
    }
    st->done = !gr_stop_requested;
    log_student(s, st);
}

void gr_grade_class(gr_session *s, const gr_options *o, gr_student *st, int n,
                    gr_class_tally *t)
{
    memset(t, 0, sizeof *t);
    gr_report_ctx rctx = {&s->env, s->self ? "self (this kit's student files)" : s->subs,
                          s->rubric_path, s->graded, s->nlabs,
                          s->gpu ? NULL : s->env.gpu_reason};
    const int width = name_width(s);
    char jobs_note[256];
    job_queue q = {NULL, 0, n * s->nlabs, jobs_ahead(s, o, jobs_note, sizeof jobs_note)};
    /* The seed is the instructor's: in their log, never in a report or on this console
       (an autograder may show it to the student). */
    gr_session_log(s->out, "session: hidden-dataset seed %llu (%s), %d submission%s from %s, "
                   "grader %s, kit %s", s->seed, o->seed_given ? "given with --seed" : "random",
                   n, n == 1 ? "" : "s", rctx.submissions, GR_GRADER_VERSION,
                   s->env.kit_version);
    q.pid = gr_xcalloc(q.total ? q.total : 1, sizeof *q.pid);
    for (int k = 0; k < q.total; k++)
        q.pid[k] = -1;
    if (!o->quiet) {
        printf("labkit-grade: %d submission%s from %s, lab%s", n, n == 1 ? "" : "s",
               s->self ? "this kit (self-grading)" : s->subs, s->nlabs == 1 ? "" : "s");
        for (int i = 0; i < s->nlabs; i++)
            printf(" %s", s->graded[i]->name);
        printf("\n  GPU: %s\n  reports: %s\n  hidden-dataset seed: %s, in %s/session.log\n"
               "  build jobs ahead: %d\n", s->gpu ? s->env.gpu : s->env.gpu_reason, s->out,
               o->seed_given ? "given (--seed)" : "random (--seed N to repeat it)", s->out,
               q.ahead);
        if (jobs_note[0])
            printf("  note: %s\n", jobs_note);
    }
    lk_error err;
    const double t0 = now_s();
    int graded_labs = 0, i;
    for (i = 0; i < n && !gr_stop_requested; i++) {
        if (!o->quiet)
            print_progress(i, n, st[i].name, now_s() - t0, graded_labs, (n - i) * s->nlabs);
        grade_student(s, st, i, o->quiet, width, &q, t, &graded_labs);
        if (write_student(s->out, &rctx, &st[i], o->gradescope, &err) != 0 ||
            write_class(s->out, &rctx, st, n, o->junit, &err) != 0) {
            fprintf(stderr, "labkit-grade: %s\n", err.msg);
            t->grader_errors++;
        }
    }
    stop_jobs(&q, 0);
    free(q.pid);
    if (write_class(s->out, &rctx, st, n, o->junit, &err) != 0) {
        fprintf(stderr, "labkit-grade: %s\n", err.msg);
        t->grader_errors++;
    }
    if (!o->quiet && !gr_stop_requested) {
        char took[32];
        format_duration(now_s() - t0, took, sizeof took);
        printf("labkit-grade: %d student%s graded in %s\n", n, n == 1 ? "" : "s", took);
    }
}

static void print_table(const gr_session *s, const gr_student *students, int n)
{
    const int width = name_width(s);
    printf("\n%-24s", "student");
    for (int l = 0; l < s->nlabs; l++)
        printf(" %-*s", width + 14, s->graded[l]->name);
    printf(" total\n");
    double full = 0;
    for (int l = 0; l < s->nlabs; l++)
        full += s->graded[l]->points_correct + s->graded[l]->points_perf;
    for (int i = 0; i < n; i++) {
        const gr_student *st = &students[i];
        printf("%-24s", st->name);
        for (int l = 0; l < s->nlabs; l++) {
            char cell[96];
            if (!st->done || l >= st->nlabs || !st->labs[l].lab)
                snprintf(cell, sizeof cell, "pending");
            else if (st->labs[l].decided)
                snprintf(cell, sizeof cell, "%.2f %s", st->labs[l].score, st->labs[l].outcome);
            else
                snprintf(cell, sizeof cell, "- %s", st->labs[l].outcome);
            printf(" %-*s", width + 14, cell);
        }
        double total, max;
        int decided;
        gr_student_total(st, &total, &max, &decided);
        if (decided)
            printf(" %.2f/%g\n", total, full);
        else
            printf(" -/%g\n", full);
    }
}

int gr_finish_class(const gr_session *s, const gr_options *o, const gr_student *st, int n,
                    const gr_class_tally *t)
{
    print_table(s, st, n);
    printf("\ngradebook: %s/gradebook.csv\nreports:   %s/students/NAME/report.md (and "
           "report.json)\nsummary:   %s/summary.md\n", s->out, s->out, s->out);
    if (o->junit)
        printf("junit:     %s/junit.xml\n", s->out);
    if (gr_stop_requested) {
        printf("labkit-grade: interrupted: finished results are saved; run again to resume\n");
        return EXIT_ERROR;
    }
    if (t->grader_errors) {
        printf("labkit-grade: %d grader error%s (see above): those labs are not graded\n",
               t->grader_errors, t->grader_errors == 1 ? "" : "s");
        return EXIT_ERROR;
    }
    if (t->gpu_not_run) {
        printf("labkit-grade: GPU STAGES NOT RUN for %d lab%s (%s): their scores are not final; "
               "grade on a machine with a GPU (exit status %d)\n", t->gpu_not_run,
               t->gpu_not_run == 1 ? "" : "s", s->env.gpu_reason, EXIT_NO_GPU);
        return EXIT_NO_GPU;
    }
    return EXIT_GRADED;
}
