#define _GNU_SOURCE /* MAP_ANONYMOUS, sched_setaffinity */
/* Grading a class: the students in turn, each lab saved as soon as it is graded, the
   student's reports right after the student, the gradebook and summary after every student;
   progress and an estimate of the time left on the way. */
#include "class.h"

#include <errno.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "course.h"
#include "export.h"
#include "state.h"
#include "report.h"
#include "sandbox.h"
#include "util.h"

enum { EXIT_GRADED = 0, EXIT_ERROR = 1, EXIT_USAGE = 2, EXIT_NO_GPU = 4 };

typedef struct writer_ctx {
    const gr_report_ctx *rc;
    const gr_student *st;
    int n;
    const gr_roster *roster;
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
static int w_canvas(FILE *f, void *p, lk_error *e)
{
    (void)e;
    writer_ctx *w = p;
    return gr_write_canvas(f, w->rc, w->roster, w->st, w->n);
}
static int w_moodle(FILE *f, void *p, lk_error *e)
{
    (void)e;
    writer_ctx *w = p;
    return gr_write_moodle(f, w->rc, w->roster, w->st, w->n);
}
static int w_roster_check(FILE *f, void *p, lk_error *e)
{
    (void)e;
    writer_ctx *w = p;
    return gr_write_roster_check(f, w->roster, w->st, w->n);
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
    writer_ctx w = {rc, st, 1, NULL};
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

int gr_write_class_files(const char *out, const gr_options *o, const gr_report_ctx *rc,
                         const gr_student *st, int n, lk_error *err)
{
    char *gb = gr_strf("%s/gradebook.csv", out), *sm = gr_strf("%s/summary.md", out);
    char *ju = gr_strf("%s/junit.xml", out), *cv = gr_strf("%s/canvas.csv", out);
    char *mo = gr_strf("%s/moodle.csv", out), *rk = gr_strf("%s/roster-check.txt", out);
    writer_ctx w = {rc, st, n, o->roster};
    int r = gr_write_atomic(gb, w_gradebook, &w, err) == 0 &&
                    gr_write_atomic(sm, w_summary, &w, err) == 0 &&
                    (!o->junit || gr_write_atomic(ju, w_junit, &w, err) == 0) &&
                    (!o->export_canvas || gr_write_atomic(cv, w_canvas, &w, err) == 0) &&
                    (!o->export_moodle || gr_write_atomic(mo, w_moodle, &w, err) == 0) &&
                    (!o->roster || gr_write_atomic(rk, w_roster_check, &w, err) == 0)
                ? 0
                : -1;
    free(gb);
    free(sm);
    free(ju);
    free(cv);
    free(mo);
    free(rk);
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
    printf("%s    %-*s %-13s %-11s %s%s%s\n", gr_console_prefix, width, r->lab, r->outcome, score,
           r->summary, r->reused ? " [unchanged: reused]" : "", took);
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
    printf("%s[%d/%d] %s", gr_console_prefix, i + 1, n, name);
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
    int end;      /* no job for this pair or later: a GPU worker's student ends there */
    /* A GPU worker's next student, claimed ahead: its pairs next_from..next_end-1 come after
       this one's (next_end 0: none); next_started of them started so far. */
    int next_from, next_end, next_started;
} job_queue;

static int default_jobs(void)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int jobs = cpus > 1 ? (int)(cpus / 2) : 0;
    return jobs > 8 ? 8 : jobs;
}

static void start_jobs(gr_session *s, gr_student *st, job_queue *q, int current)
{
    for (; q->started < q->end && q->started <= current + q->ahead; q->started++) {
        int k = q->started;
        /* A student's attempts are graded one by one when their turn comes. */
        if (k > current && !gr_stop_requested && !st[k / s->nlabs].nattempts)
            q->pid[k] = gr_prepare_in_background(s, &st[k / s->nlabs], k % s->nlabs);
    }
    /* Then the worker's next student, as many labs ahead of this one's as the rest allow. */
    for (int k = q->next_from + q->next_started;
         q->started >= q->end && k < q->next_end &&
         (q->end - 1 - current) + (q->next_started + 1) <= q->ahead;
         k++, q->next_started++)
        if (!gr_stop_requested && !st[k / s->nlabs].nattempts)
            q->pid[k] = gr_prepare_in_background(s, &st[k / s->nlabs], k % s->nlabs);
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
    gr_session_log(s->out, "graded %s%s%s%s%s", st->name, gr_buf_str(&b),
                   st->done ? "" : "; interrupted", s->gpu_label ? "; on " : "",
                   s->gpu_label ? s->gpu_label : "");
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

void gr_apply_course_deadline(const gr_session *s, const gr_options *o, const gr_student *st,
                              int l, gr_lab_result *r)
{
    const gr_rubric *rub = &s->rubric;
    int *covered = gr_xcalloc(rub->nlabs ? rub->nlabs : 1, sizeof *covered), token_days = 0;
    gr_plan_late_tokens(rub, o->times, st->name, st->root, covered);
    for (int i = 0; i < rub->nlabs; i++)
        if (&rub->labs[i] == s->graded[l])
            token_days = covered[i];
    gr_apply_deadline(s->graded[l], o->times, st->name, st->root, token_days, r);
    free(covered);
}

/* ---- the audit trail: a saved grade never changes in silence -------------------------- */

/* A lab's saved result before this session graded it (read before any build job runs:
   a job saves what it decides). */
typedef struct prior_grade {
    int have;           /* a sealed saved result was there */
    int decided;
    double score;
    char outcome[32];
    char files_md5[33];
} prior_grade;

static void read_prior(const gr_session *s, const gr_student *st, int l, prior_grade *p)
{
    memset(p, 0, sizeof *p);
    char *path = gr_result_path(s, st, s->graded[l]->name);
    gr_lab_result r;
    lk_error ignored;
    if (gr_exists(path) && gr_lab_load_sealed(path, &r, s->env.secret, &ignored) == 0) {
        p->have = 1;
        p->decided = r.decided;
        p->score = r.score;
        snprintf(p->outcome, sizeof p->outcome, "%s", r.outcome);
        snprintf(p->files_md5, sizeof p->files_md5, "%s", r.files_md5);
        gr_lab_free(&r);
    }
    free(path);
}

/* After lab @p l of @p st was graded: an audit line when this is a regrade, or when a final
   grade changed; old and new both from the sealed saved results. */
static void audit_change(const gr_session *s, const gr_options *o, const gr_student *st, int l,
                         const prior_grade *before, const gr_lab_result *graded)
{
    /* A lab not graded again (grader error, interrupted) keeps its old grade: nothing to say. */
    if (!before->have || (!o->regrade && !before->decided) ||
        strcmp(graded->outcome, GR_OUT_ERROR) == 0 || gr_stop_requested)
        return;
    char *path = gr_result_path(s, st, s->graded[l]->name);
    gr_lab_result now;
    lk_error err;
    int saved = gr_lab_load_sealed(path, &now, s->env.secret, &err) == 0;
    free(path);
    if (!saved)
        return;
    /* The outcome is part of the grade: `not gradable` and a graded 0 differ. */
    const int changed = !now.decided || fabs(now.score - before->score) >= 0.005 ||
                        strcmp(now.outcome, before->outcome) != 0;
    if (o->regrade || changed) {
        char when[32];
        gr_utc_now(when, sizeof when);
        char *reason = o->regrade
                           ? gr_strf("regrade: %s", o->regrade_reason)
                           : gr_strf("graded again: %s",
                                     strcmp(now.files_md5, before->files_md5) != 0
                                         ? "the student files changed"
                                     : o->force ? "--force"
                                                : "the kit, the GPU or the grader changed");
        gr_audit a = {when, (char *)s->env.user, (char *)s->graded[l]->name, reason,
                      (char *)before->outcome, now.outcome, before->score, now.score,
                      before->decided, now.decided};
        char *trail = gr_strf("%s/students/%s/audit.jsonl", s->out, st->dir);
        if (gr_audit_append(trail, &a, &err) != 0)
            fprintf(stderr, "labkit-grade: %s\n", err.msg);
        char old_score[32] = "-", new_score[32] = "-";
        if (before->decided)
            snprintf(old_score, sizeof old_score, "%.2f", before->score);
        if (now.decided)
            snprintf(new_score, sizeof new_score, "%.2f", now.score);
        gr_session_log(s->out, "%s: %s: %s %s -> %s %s: %s", st->name, s->graded[l]->name,
                       before->outcome, old_score, now.outcome, new_score, reason);
        free(trail);
        free(reason);
    }
    gr_lab_free(&now);
}

/* The student's audit trail, for the reports. */
static void load_audit(const gr_session *s, gr_student *st)
{
    char *trail = gr_strf("%s/students/%s/audit.jsonl", s->out, st->dir);
    lk_error err;
    gr_audit_free(st->audit, st->naudit);
    if (gr_audit_load(trail, &st->audit, &st->naudit, &err) != 0)
        fprintf(stderr, "labkit-grade: %s\n", err.msg);
    free(trail);
}

/* A student a regrade does not touch: their saved results, for the gradebook (a lab with none
   leaves the student pending). */
static void load_saved_student(const gr_session *s, const gr_options *o, gr_student *st)
{
    st->labs = gr_xcalloc(s->nlabs, sizeof *st->labs);
    st->nlabs = s->nlabs;
    st->done = 1;
    for (int l = 0; l < s->nlabs; l++) {
        char *path = gr_result_path(s, st, s->graded[l]->name);
        lk_error ignored;
        if (!gr_exists(path) ||
            gr_lab_load_sealed(path, &st->labs[l], s->env.secret, &ignored) != 0) {
            gr_lab_init(&st->labs[l], s->graded[l]->name,
                        s->graded[l]->points_correct + s->graded[l]->points_perf);
            st->done = 0;
        } else if (!st->nattempts) { /* an attempt's result was saved with its penalty */
            gr_apply_course_deadline(s, o, st, l, &st->labs[l]);
        }
        st->labs[l].reused = 1;
        free(path);
    }
}

/* A regrade changes grades that exist: its student and every graded lab of theirs need a
   saved result. Returns the student's index, or -1 (said on stderr). */
static int regrade_target(const gr_session *s, const gr_options *o, const gr_student *st, int n,
                          prior_grade *prior)
{
    int target = -1;
    for (int i = 0; i < n; i++)
        if (strcmp(st[i].name, o->regrade) == 0)
            target = i;
    if (target < 0) {
        fprintf(stderr, "labkit-grade: --regrade %s: %s has no student folder of that name: "
                        "give one of its folders\n", o->regrade, s->subs ? s->subs : "self");
        return -1;
    }
    for (int l = 0; l < s->nlabs; l++)
        if (!prior[target * s->nlabs + l].have) {
            fprintf(stderr, "labkit-grade: --regrade %s: %s has no saved result: grade the "
                            "class first (a regrade changes a grade that exists)%s\n",
                    o->regrade, s->graded[l]->name, s->nlabs > 1 ? ", or give --lab" : "");
            return -1;
        }
    return target;
}

/* The rubric's speed contests rank the whole class, so they come after it, and the reports
   of its students are written again with their ranks. */
static void award_contests(const gr_session *s, const gr_options *o, const gr_report_ctx *rc,
                           gr_student *st, int n, gr_class_tally *t)
{
    int contests = 0, ranked = 0;
    for (int l = 0; l < s->nlabs; l++)
        contests += s->graded[l]->contest_points > 0;
    if (!contests || gr_stop_requested)
        return;
    if (o->only) {
        printf("labkit-grade: speed contests not ranked: --only grades part of the class "
               "(grade the class, or --regrade, to rank them)\n");
        return;
    }
    for (int l = 0; l < s->nlabs; l++)
        ranked += gr_award_contest(s->graded[l], l, st, n);
    lk_error err;
    for (int i = 0; ranked && i < n; i++)
        if (st[i].done && write_student(s->out, rc, &st[i], o->gradescope, &err) != 0) {
            fprintf(stderr, "labkit-grade: %s\n", err.msg);
            t->grader_errors++;
        }
}

/* Lab @p l of a student with resubmissions: each attempt graded as a submission of its own
   (results in students/DIR/attempts/NAME/), its deadline applied with its own time (no late
   tokens), then the rubric's `resubmissions` rule picks the one that counts, saved as the
   student's result (what the gradebook, regrades and the audit trail read). */
static int grade_attempts(gr_session *s, const gr_options *o, const gr_student *st, int l,
                          gr_lab_result *r, lk_error *err)
{
    const gr_lab_rubric *lab = s->graded[l];
    const int n = st->nattempts;
    gr_lab_result *tries = gr_xcalloc(n, sizeof *tries);
    int rc = 0, graded = 0, reused = 1;
    for (int a = 0; a < n && rc == 0 && !gr_stop_requested; a++, graded++) {
        char safe[200];
        gr_safe_name(st->attempts[a], safe, sizeof safe);
        gr_student one = {.name = gr_strf("%s/attempts/%s", st->name, st->attempts[a]),
                          .dir = gr_strf("%s/attempts/%s", st->dir, safe),
                          .root = gr_strf("%s/attempts/%s", st->root, st->attempts[a])};
        rc = gr_grade_lab(s, &one, l, &tries[a], err);
        if (rc == 0)
            gr_apply_deadline(lab, o->times, one.name, one.root, 0, &tries[a]);
        reused &= tries[a].reused;
        free(one.name);
        free(one.dir);
        free(one.root);
    }
    if (rc == 0 && gr_stop_requested)
        rc = lk_fail(err, "interrupted: this lab's attempts will be graded again");
    if (rc == 0) {
        const int pick = gr_pick_attempt(tries, n, lab->resubmit_best);
        gr_buf why = {0};
        gr_buf_printf(&why, "%s of %d attempts: %s counts", lab->resubmit_best ? "best" : "last",
                      n, st->attempts[pick]);
        for (int a = 0; a < n; a++)
            if (tries[a].decided)
                gr_buf_printf(&why, "%s%s %.2f", a ? "; " : " (", st->attempts[a],
                              tries[a].score);
            else
                gr_buf_printf(&why, "%s%s not final", a ? "; " : " (", st->attempts[a]);
        gr_buf_puts(&why, ")");
        gr_lab_free(r);
        *r = tries[pick];
        memset(&tries[pick], 0, sizeof tries[pick]);
        gr_lab_add(r, "policy", "resubmissions", GR_PASS, gr_buf_str(&why), NULL);
        gr_buf_free(&why);
        r->reused = reused;
        char *dir = gr_strf("%s/students/%s/labs", s->out, st->dir);
        char *path = gr_result_path(s, st, lab->name);
        rc = gr_mkdir_p(dir, 0755, err) == 0 ? gr_lab_save_sealed(path, r, s->env.secret, err)
                                             : -1;
        free(dir);
        free(path);
    }
    for (int a = 0; a < graded; a++)
        gr_lab_free(&tries[a]);
    free(tries);
    return rc;
}

static void grade_student(gr_session *s, gr_student *students, int i, const gr_options *o,
                          int width, job_queue *q, gr_class_tally *t, int *graded_labs,
                          const prior_grade *prior)
{
    const int quiet = o->quiet;
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
        const int rc = st->nattempts ? grade_attempts(s, o, st, l, r, &err)
                                     : gr_grade_prepared(s, st, l, q->pid[k], r, &err);
        if (rc != 0) {
            t->grader_errors++;
            fprintf(stderr, "labkit-grade: %s: %s: %s\n", st->name, lab->name, err.msg);
            gr_lab_free(r);
            gr_lab_init(r, lab->name, lab->points_correct + lab->points_perf);
            gr_lab_add(r, "grader", "grader", GR_FAIL, err.msg, NULL);
            gr_lab_outcome(r, GR_OUT_ERROR, "not graded: grader error: %s", err.msg);
            gr_lab_redact(r, s->seed);
        }
        if (!st->nattempts)
            gr_apply_course_deadline(s, o, st, l, r);
        q->pid[k] = -1;
        *graded_labs += !r->reused;
        if (strcmp(r->outcome, GR_OUT_GPU_NOT_RUN) == 0)
            t->gpu_not_run++;
        if (strcmp(r->outcome, GR_OUT_ERROR) == 0 && !gr_stop_requested)
            t->grader_errors += r->nchecks > 0 && strcmp(r->checks[0].stage, "grader") != 0;
        if (!quiet)
            print_lab(r, width, now_s() - began);
        audit_change(s, o, st, l, &prior[k], r);
    }
    st->done = !gr_stop_requested;
    log_student(s, st);
}

/* ---- grading on several GPUs (--gpus) ------------------------------------------------- */

/* At most this many GPU workers (the board keeps a count of students per GPU). */
#define GR_MAX_GPUS 64

/* What the GPU workers and the grader share (an anonymous shared mapping): the queue of
   students, the progress, and what became of each lab. */
typedef struct gpu_board {
    int next;        /* the next place of the queue to hand out */
    int graded_labs; /* labs graded (not reused) by every worker: the estimate of time left */
    int gpu_not_run, grader_errors;
    int students_on[GR_MAX_GPUS]; /* students graded on each GPU */
    double busy_s[GR_MAX_GPUS];   /* wall time of each worker */
    struct {
        int handed;  /* the worker sealed its result in OUT/work/gpus/DIR/LAB.json */
        int reused;  /* it was an earlier run's */
    } lab[];         /* per (student, lab) */
} gpu_board;

/* Where a worker hands lab @p lab of @p st to the grader: its in-memory result, course
   deadline applied, sealed like a saved result. */
static char *handoff_path(const gr_session *s, const gr_student *st, const char *lab)
{
    return gr_strf("%s/work/gpus/%s/%s.json", s->out, st->dir, lab);
}

/* "0-7,16-23": the CPUs of @p set, for the console. */
static void cpu_list(const cpu_set_t *set, char *out, size_t size)
{
    gr_buf b = {0};
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (!CPU_ISSET(c, set))
            continue;
        int last = c;
        while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, set))
            last++;
        gr_buf_printf(&b, last > c ? "%s%d-%d" : "%s%d", b.len ? "," : "", c, last);
        c = last;
    }
    snprintf(out, size, "%s", gr_buf_str(&b));
    gr_buf_free(&b);
}

/* Worker @p w of @p nw keeps its share of the grader's CPUs, a contiguous slice, for all it
   starts (builds, correctness runs, the generators' OpenMP threads): one GPU's builds then
   never slow another GPU's timed rounds. The defaults of --runs and --jobs shrink with it. */
static void take_cpu_share(gr_session *s, const gr_options *o, int w, int nw, int *ahead)
{
    cpu_set_t all, mine;
    if (nw < 2 || sched_getaffinity(0, sizeof all, &all) != 0)
        return;
    const int n = CPU_COUNT(&all);
    CPU_ZERO(&mine);
    for (int c = 0, k = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &all) && k++ * nw / n == w)
            CPU_SET(c, &mine);
    const int share = CPU_COUNT(&mine);
    if (share == 0 || sched_setaffinity(0, sizeof mine, &mine) != 0)
        return; /* fewer CPUs than GPUs: the workers share them all */
    if (o->runs <= 0) {
        int runs = share * 3 / 4;
        s->runs = runs < 1 ? 1 : runs > 12 ? 12 : runs;
    }
    if (o->jobs < 0 && *ahead > 0)
        *ahead = *ahead / nw > 0 ? *ahead / nw : 1;
    if (!o->quiet) {
        char cpus[256];
        cpu_list(&mine, cpus, sizeof cpus);
        printf("%sCPUs %s: correctness runs side by side %d, build jobs ahead %d\n",
               gr_console_prefix, cpus, s->runs, *ahead);
    }
}

/* Worker @p w: pinned to its GPU and holding its lock, it grades the next student of the
   queue until the queue is empty. Its copy of the session keeps the solution's timings of
   its own GPU only, and builds the solution in a folder of its own. */
static void gpu_worker(gr_session *s, const gr_options *o, gr_student *st, int w, int nw,
                       gpu_board *b, const int *queue, int nqueue, const prior_grade *prior,
                       int ahead, double t0)
{
    const gr_gpu *g = &s->gpus[w];
    /* Every process the worker starts (builds, runs, probe) sees this GPU alone. */
    setenv("CUDA_VISIBLE_DEVICES", g->uuid, 1);
    s->host_lock = gr_strf("%s.host", s->gpu_lock);
    char *lock = gr_gpu_lock_path(s->gpu_lock, g);
    free(s->gpu_lock);
    s->gpu_lock = lock;
    s->gpu_label = gr_strf("%s (%s)", g->name, g->uuid);
    snprintf(gr_console_prefix, sizeof gr_console_prefix, "gpu%d ", g->index);
    take_cpu_share(s, o, w, nw, &ahead);
    for (int l = 0; l < s->nlabs; l++) {
        free(s->labs[l].kit_work);
        s->labs[l].kit_work = gr_strf("%s/work/kit/gpu%d/%s", s->out, g->index,
                                      s->graded[l]->name);
    }
    /* The grader's probe is its own; the worker's keeps a context on the worker's GPU. */
    s->env.gpu_keeper = 0;
    if (!o->assume_gpu) {
        s->env.gpu_ok = 0;
        gr_env_probe_gpu(s->drop, &s->env);
        if (!s->env.gpu_ok) {
            fprintf(stderr, "labkit-grade: GPU %d (%s): %s: no student graded on it\n",
                    g->index, g->uuid, s->env.gpu_reason);
            return;
        }
    }
    if (s->state_dir) {
        lk_error err;
        if (gr_state_open(s, g->uuid, &err) != 0) {
            fprintf(stderr, "labkit-grade: GPU %d (%s): %s: no student graded on it\n",
                    g->index, g->uuid, err.msg);
            return;
        }
    }
    const int width = name_width(s);
    gr_report_ctx rctx = {&s->env, s->self ? "self (this kit's student files)" : s->subs,
                          s->rubric_path, s->graded, s->nlabs, NULL};
    const int pairs = queue[nqueue - 1] * s->nlabs + s->nlabs;
    job_queue q = {gr_xcalloc(pairs, sizeof *q.pid), 0, pairs, ahead, 0, 0, 0, 0};
    for (int k = 0; k < pairs; k++)
        q.pid[k] = -1;
    const double began = now_s();
    int place = __atomic_fetch_add(&b->next, 1, __ATOMIC_SEQ_CST);
    while (place < nqueue && !gr_stop_requested) {
        const int i = queue[place];
        /* The worker claims its next student now, so that its labs build while this one is
           on the GPU (the other workers take the ones after it). */
        const int next = ahead > 0 ? __atomic_fetch_add(&b->next, 1, __ATOMIC_SEQ_CST) : -1;
        if (!o->quiet) {
            const int done = __atomic_load_n(&b->graded_labs, __ATOMIC_SEQ_CST);
            print_progress(place, nqueue, st[i].name, now_s() - t0, done,
                           (nqueue - place) * s->nlabs);
        }
        /* This student's labs, those started while it was the next one excepted. */
        const int prepared = q.next_end == (i + 1) * s->nlabs ? q.next_started : 0;
        q.started = i * s->nlabs + prepared;
        q.end = (i + 1) * s->nlabs;
        q.next_from = next >= 0 && next < nqueue ? queue[next] * s->nlabs : 0;
        q.next_end = next >= 0 && next < nqueue ? q.next_from + s->nlabs : 0;
        q.next_started = 0;
        gr_class_tally t = {0};
        int graded_labs = 0;
        grade_student(s, st, i, o, width, &q, &t, &graded_labs, prior);
        load_audit(s, &st[i]);
        lk_error err;
        if (write_student(s->out, &rctx, &st[i], o->gradescope, &err) != 0) {
            fprintf(stderr, "labkit-grade: %s\n", err.msg);
            t.grader_errors++;
        }
        for (int l = 0; st[i].done && l < s->nlabs; l++) {
            char *path = handoff_path(s, &st[i], s->graded[l]->name);
            char *dir = gr_strf("%s/work/gpus/%s", s->out, st[i].dir);
            if (gr_mkdir_p(dir, 0700, &err) != 0 ||
                gr_lab_save_sealed(path, &st[i].labs[l], s->env.secret, &err) != 0) {
                fprintf(stderr, "labkit-grade: %s\n", err.msg);
                t.grader_errors++;
            } else {
                b->lab[i * s->nlabs + l].reused = st[i].labs[l].reused;
                __atomic_store_n(&b->lab[i * s->nlabs + l].handed, 1, __ATOMIC_SEQ_CST);
            }
            free(dir);
            free(path);
        }
        __atomic_add_fetch(&b->graded_labs, graded_labs, __ATOMIC_SEQ_CST);
        __atomic_add_fetch(&b->gpu_not_run, t.gpu_not_run, __ATOMIC_SEQ_CST);
        __atomic_add_fetch(&b->grader_errors, t.grader_errors, __ATOMIC_SEQ_CST);
        b->students_on[w]++;
        place = next >= 0 ? next : __atomic_fetch_add(&b->next, 1, __ATOMIC_SEQ_CST);
    }
    for (int k = 0; k < pairs; k++)
        if (q.pid[k] > 0) {
            kill(q.pid[k], SIGTERM);
            while (waitpid(q.pid[k], NULL, 0) < 0 && errno == EINTR)
                ;
        }
    free(q.pid);
    b->busy_s[w] = now_s() - began;
}

/* The class on the session's GPUs: a worker process per GPU takes the next student of the
   queue (a slow student holds up one GPU, never the others); the grader then reads back what
   the workers handed over, for the gradebook, the contests and the exit status. */
static void grade_on_gpus(gr_session *s, const gr_options *o, gr_student *st, int n,
                          int target, const prior_grade *prior, int ahead, gr_class_tally *t)
{
    const int nw = s->ngpus < GR_MAX_GPUS ? s->ngpus : GR_MAX_GPUS;
    int *queue = gr_xcalloc(n ? n : 1, sizeof *queue), nqueue = 0;
    for (int i = 0; i < n; i++)
        if (target < 0 || i == target)
            queue[nqueue++] = i;
    const size_t size = sizeof(gpu_board) + (size_t)(n ? n : 1) * s->nlabs *
                                                sizeof(((gpu_board *)0)->lab[0]);
    gpu_board *b = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    char *handoffs = gr_strf("%s/work/gpus", s->out);
    lk_error err;
    if (b == MAP_FAILED || gr_rm_rf(handoffs, &err) != 0) {
        fprintf(stderr, "labkit-grade: cannot set up the GPU workers: %s\n",
                b == MAP_FAILED ? strerror(errno) : err.msg);
        t->grader_errors++;
        free(handoffs);
        free(queue);
        return;
    }
    free(handoffs);
    memset(b, 0, size);
    const double t0 = now_s();
    pid_t pid[GR_MAX_GPUS];
    gr_env_release(&s->env); /* each worker keeps a context on its own GPU instead */
    fflush(NULL);
    for (int w = 0; w < nw; w++) {
        pid[w] = nqueue ? fork() : -1;
        if (pid[w] == 0) {
            gpu_worker(s, o, st, w, nw, b, queue, nqueue, prior, ahead, t0);
            fflush(NULL);
            gr_session_close(s);
            _exit(0);
        }
    }
    /* An interrupted grader passes it on to its workers, once. */
    int stopping = 0;
    for (int w = 0; w < nw; w++)
        while (pid[w] > 0 && waitpid(pid[w], NULL, 0) < 0 && errno == EINTR)
            if (gr_stop_requested && !stopping) {
                stopping = 1;
                for (int k = 0; k < nw; k++)
                    if (pid[k] > 0)
                        kill(pid[k], SIGTERM);
            }
    for (int i = 0; i < n; i++) {
        if (target >= 0 && i != target) {
            load_saved_student(s, o, &st[i]);
            load_audit(s, &st[i]);
            continue;
        }
        st[i].labs = gr_xcalloc(s->nlabs, sizeof *st[i].labs);
        st[i].nlabs = s->nlabs;
        st[i].done = 1;
        for (int l = 0; l < s->nlabs; l++) {
            gr_lab_result *r = &st[i].labs[l];
            char *path = handoff_path(s, &st[i], s->graded[l]->name);
            if (!b->lab[i * s->nlabs + l].handed ||
                gr_lab_load_sealed(path, r, s->env.secret, &err) != 0) {
                gr_lab_init(r, s->graded[l]->name,
                            s->graded[l]->points_correct + s->graded[l]->points_perf);
                st[i].done = 0;
            }
            r->reused = b->lab[i * s->nlabs + l].reused;
            free(path);
        }
        load_audit(s, &st[i]);
        if (!st[i].done && !gr_stop_requested) {
            fprintf(stderr, "labkit-grade: %s: not graded: no GPU worker finished it (see "
                            "above)\n", st[i].name);
            t->grader_errors++;
        }
    }
    t->gpu_not_run += b->gpu_not_run;
    t->grader_errors += b->grader_errors;
    /* The class summary's GPU line: every GPU graded on (the students' reports name theirs). */
    gr_buf all = {0};
    gr_buf_printf(&all, "%d GPU%s:", nw, nw == 1 ? "" : "s");
    for (int w = 0; w < nw; w++)
        gr_buf_printf(&all, "%s %s (%s)", w ? "," : "", s->gpus[w].name, s->gpus[w].uuid);
    snprintf(s->env.gpu, sizeof s->env.gpu, "%s", gr_buf_str(&all));
    gr_buf_free(&all);
    if (!o->quiet && !gr_stop_requested)
        for (int w = 0; w < nw; w++)
            printf("  GPU %d, %s (%s): %d student%s in %.1f s\n", s->gpus[w].index,
                   s->gpus[w].name, s->gpus[w].uuid, b->students_on[w],
                   b->students_on[w] == 1 ? "" : "s", b->busy_s[w]);
    munmap(b, size);
    free(queue);
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
    job_queue q = {NULL, 0, n * s->nlabs, jobs_ahead(s, o, jobs_note, sizeof jobs_note),
                   n * s->nlabs, 0, 0, 0};
    /* The seed is the instructor's: in their log, never in a report or on this console
       (an autograder may show it to the student). */
    gr_session_log(s->out, "session: hidden-dataset seed %llu (%s), %d submission%s from %s, "
                   "grader %s, kit %s", s->seed, o->seed_given ? "given with --seed" : "random",
                   n, n == 1 ? "" : "s", rctx.submissions, GR_GRADER_VERSION,
                   s->env.kit_version);
    /* Every saved grade as it was, before a build job can replace one. */
    prior_grade *prior = gr_xcalloc(q.total ? q.total : 1, sizeof *prior);
    for (int k = 0; k < q.total; k++)
        read_prior(s, &st[k / s->nlabs], k % s->nlabs, &prior[k]);
    const int target = o->regrade ? regrade_target(s, o, st, n, prior) : -1;
    if (o->regrade && target < 0) {
        t->refused = 1;
        free(prior);
        return;
    }
    if (o->regrade) {
        q.ahead = 0; /* no build job for a student the regrade does not touch */
        gr_session_log(s->out, "regrade of %s by %s: %s", o->regrade, s->env.user,
                       o->regrade_reason);
    }
    q.pid = gr_xcalloc(q.total ? q.total : 1, sizeof *q.pid);
    for (int k = 0; k < q.total; k++)
        q.pid[k] = -1;
    if (!o->quiet) {
        printf("labkit-grade: %d submission%s from %s, lab%s", n, n == 1 ? "" : "s",
               s->self ? "this kit (self-grading)" : s->subs, s->nlabs == 1 ? "" : "s");
        for (int i = 0; i < s->nlabs; i++)
            printf(" %s", s->graded[i]->name);
        if (s->ngpus) {
            printf("\n  GPUs (a worker each, taking the next student):");
            for (int g = 0; g < s->ngpus; g++)
                printf("%s %d %s (%s)", g ? "," : "", s->gpus[g].index, s->gpus[g].name,
                       s->gpus[g].uuid);
        } else {
            printf("\n  GPU: %s", s->gpu ? s->env.gpu : s->env.gpu_reason);
        }
        printf("\n  reports: %s\n  hidden-dataset seed: %s, in %s/session.log\n"
               "  build jobs ahead: %d%s\n", s->out,
               o->seed_given ? "given (--seed)" : "random (--seed N to repeat it)", s->out,
               q.ahead, s->ngpus ? " per GPU (its student's labs, then its next one's)" : "");
        if (jobs_note[0])
            printf("  note: %s\n", jobs_note);
    }
    lk_error err;
    const double t0 = now_s();
    int graded_labs = 0, i;
    if (s->ngpus)
        grade_on_gpus(s, o, st, n, target, prior, q.ahead, t);
    for (i = s->ngpus ? n : 0; i < n && !gr_stop_requested; i++) {
        if (o->regrade && i != target) {
            load_saved_student(s, o, &st[i]);
            load_audit(s, &st[i]);
            continue;
        }
        if (!o->quiet)
            print_progress(i, n, st[i].name, now_s() - t0, graded_labs, (n - i) * s->nlabs);
        grade_student(s, st, i, o, width, &q, t, &graded_labs, prior);
        load_audit(s, &st[i]);
        if (write_student(s->out, &rctx, &st[i], o->gradescope, &err) != 0 ||
            gr_write_class_files(s->out, o, &rctx, st, n, &err) != 0) {
            fprintf(stderr, "labkit-grade: %s\n", err.msg);
            t->grader_errors++;
        }
    }
    stop_jobs(&q, 0);
    free(q.pid);
    free(prior);
    award_contests(s, o, &rctx, st, n, t);
    if (gr_write_class_files(s->out, o, &rctx, st, n, &err) != 0) {
        fprintf(stderr, "labkit-grade: %s\n", err.msg);
        t->grader_errors++;
    }
    if (!o->quiet && !gr_stop_requested) {
        char took[32];
        format_duration(now_s() - t0, took, sizeof took);
        if (o->regrade)
            printf("labkit-grade: %s regraded in %s\n", o->regrade, took);
        else
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
    if (t->refused)
        return EXIT_USAGE;
    print_table(s, st, n);
    printf("\ngradebook: %s/gradebook.csv\nreports:   %s/students/NAME/report.md (and "
           "report.json)\nsummary:   %s/summary.md\n", s->out, s->out, s->out);
    if (o->junit)
        printf("junit:     %s/junit.xml\n", s->out);
    if (o->export_canvas)
        printf("canvas:    %s/canvas.csv\n", s->out);
    if (o->export_moodle)
        printf("moodle:    %s/moodle.csv\n", s->out);
    if (o->gradescope)
        printf("gradescope: %s/students/NAME/results.json\n", s->out);
    if (o->roster) {
        int none, unknown;
        gr_roster_unmatched(o->roster, st, n, &none, &unknown);
        /* Nobody is dropped in silence: a student on one side only is named in the check. */
        if (none || unknown)
            printf("labkit-grade: roster: %d on the roster without a submission, %d "
                   "submission%s not on the roster: see %s/roster-check.txt\n", none, unknown,
                   unknown == 1 ? "" : "s", s->out);
    }
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
