#include "grade.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "labkit/md5.h"
#include "sandbox.h"
#include "session.h"
#include "util.h"

char *gr_result_path(const gr_session *s, const gr_student *st, const char *lab)
{
    return gr_strf("%s/students/%s/labs/%s.json", s->out, st->dir, lab);
}

void gr_result_key(const gr_session *s, const gr_lab_ctx *lc, const char *files_md5,
                   char key[33])
{
    /* An instructor's acceptance of implausible timings changes the score: part of the key. */
    char *text = gr_strf("files %s\nkit %s\ngpu %s\ngrader %s\n%s", files_md5, lc->kit_hash,
                         s->gpu ? s->env.gpu : "none", GR_GRADER_VERSION,
                         s->accept_implausible ? "accept-implausible\n" : "");
    lk_error err;
    if (lk_md5_buffer(text, strlen(text), key, &err) != 0)
        snprintf(key, 33, "%s", "no-key");
    free(text);
}

/* md5 over the names and contents of the copied student files. */
static int files_md5(const gr_lab_rubric *lab, const char *src_dir, char out[33], lk_error *err)
{
    lk_md5 *md5 = lk_md5_begin(err);
    if (!md5)
        return -1;
    for (int f = 0; f < lab->nfiles; f++) {
        char *path = gr_strf("%s/%s", src_dir, lab->files[f].name);
        size_t len;
        char *data = gr_read_file(path, 2 * GR_MAX_STUDENT_FILE, &len, err);
        free(path);
        if (!data || lk_md5_update(md5, lab->files[f].name, strlen(lab->files[f].name) + 1, err) != 0 ||
            lk_md5_update(md5, data, len, err) != 0) {
            free(data);
            lk_md5_abort(md5);
            return -1;
        }
        free(data);
    }
    return lk_md5_end(md5, out, err);
}

/* Are the student files the kit's skeleton, unchanged (same names and bytes as the kit's
   labs/LAB/ files)? Nothing of the student's would be graded. */
static int is_skeleton(const gr_session *s, const gr_lab_rubric *lab, const char *md5)
{
    char *kit_lab = gr_strf("%s/labs/%s", s->kit, lab->name), skeleton[33];
    lk_error ignored;
    int same = files_md5(lab, kit_lab, skeleton, &ignored) == 0 && strcmp(skeleton, md5) == 0;
    free(kit_lab);
    return same;
}

static int fresh_work(const char *work, lk_error *err)
{
    if (gr_rm_rf(work, err) != 0)
        return -1;
    static const char *const subdirs[] = {"src", "build", "logs", "run", "tmp"};
    for (size_t i = 0; i < sizeof subdirs / sizeof subdirs[0]; i++) {
        char *d = gr_strf("%s/%s", work, subdirs[i]);
        int rc = gr_mkdir_p(d, 0755, err);
        free(d);
        if (rc != 0)
            return -1;
    }
    return 0;
}

/* Give the work folder back to the grader and drop what is large and no longer needed. */
static void tidy_work(const char *work)
{
    gr_chown_tree(work, getuid(), getgid(), NULL);
    char *run = gr_strf("%s/run", work);
    DIR *d = opendir(run);
    if (d) {
        /* A failed timed round's box keeps its stdout and stderr (meta/), not its output. */
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (strncmp(e->d_name, "perf", 4) == 0) {
                char *p = gr_strf("%s/%s/run", run, e->d_name);
                gr_rm_rf(p, NULL);
                free(p);
            }
        }
        closedir(d);
    }
    free(run);
    char *tmp = gr_strf("%s/tmp", work);
    gr_rm_rf(tmp, NULL);
    free(tmp);
}

/* A final result: the seed out of every text a report shows, then saved, sealed. */
static int finish(const gr_session *s, const gr_student *st, gr_lab_result *r, lk_error *err)
{
    gr_lab_redact(r, s->seed);
    char *path = gr_result_path(s, st, r->lab);
    char *dir = gr_strf("%s/students/%s/labs", s->out, st->dir);
    int rc = gr_mkdir_p(dir, 0755, err) == 0 ? gr_lab_save_sealed(path, r, s->env.secret, err)
                                             : -1;
    free(dir);
    free(path);
    return rc;
}

/* Take the saved result of @p lab into @p r when it holds @p key and its seal holds; a
   saved result whose seal does not is graded again, and the instructor's log says so. */
static int reuse_saved(const gr_session *s, const gr_student *st, const gr_lab_rubric *lab,
                       const char *key, gr_lab_result *r)
{
    char *path = gr_result_path(s, st, lab->name);
    gr_lab_result old;
    lk_error why;
    int reused = 0;
    if (!gr_exists(path)) {
        free(path);
        return 0;
    }
    if (gr_lab_load_sealed(path, &old, s->env.secret, &why) != 0) {
        gr_session_log(s->out, "%s: %s: saved result refused, graded again: %s", st->name,
                       lab->name, why.msg);
    } else if (strcmp(old.key, key) == 0 && strcmp(old.outcome, GR_OUT_ERROR) != 0 &&
               strcmp(old.lab, lab->name) == 0) {
        gr_lab_free(r);
        *r = old;
        r->reused = 1;
        reused = 1;
    } else {
        gr_lab_free(&old);
    }
    free(path);
    return reused;
}

/* What the CPU stages left to do. */
enum { STAGE_DONE, STAGE_REUSED, STAGE_GPU };

/* The CPU stages of a lab: files, reuse of a saved result, integrity checks, build. On
   return 0, *stage says whether the result is final (saved), reused, or waits for the GPU
   stages. */
static int prepare_lab(gr_session *s, const gr_student *st, int li, gr_lab_result *r,
                       int *stage, lk_error *err)
{
    gr_lab_ctx *lc = &s->labs[li];
    const gr_lab_rubric *lab = lc->rub;
    gr_lab_init(r, lab->name, lab->points_correct + lab->points_perf);
    *stage = STAGE_DONE;
    char *work = gr_strf("%s/work/students/%s/%s", s->out, st->dir, lab->name);
    char *src = gr_strf("%s/src", work);
    int rc = fresh_work(work, err);
    int step = rc == 0 ? gr_fetch_files(st->root, s->self, s->graded, s->nlabs, lab, src, r, err)
                       : -1;
    if (step < 0) {
        rc = -1;
        goto done;
    }
    if (step == 0) {
        r->decided = 1;
        rc = finish(s, st, r, err);
        goto done;
    }
    char md5[33], key[33];
    if (files_md5(lab, src, md5, err) != 0) {
        rc = -1;
        goto done;
    }
    gr_result_key(s, lc, md5, key);
    free(r->files_md5);
    r->files_md5 = gr_xstrdup(md5);
    free(r->key);
    r->key = gr_xstrdup(key);

    /* Self-grading grades the kit's own files: there they are the student's work. */
    if (!s->self && is_skeleton(s, lab, md5)) {
        gr_lab_add(r, "files", "changed from the skeleton", GR_FAIL, "every student file is "
                   "the kit's skeleton, unchanged: hand in your own version", NULL);
        gr_lab_outcome(r, GR_OUT_SKELETON, "not gradable: the kit's skeleton, unchanged");
        r->decided = 1;
        rc = finish(s, st, r, err);
        goto done;
    }

    if (!s->force && reuse_saved(s, st, lab, key, r)) {
        *stage = STAGE_REUSED;
        gr_rm_rf(work, NULL);
        goto done;
    }

    gr_limits lim = {.drop = s->drop};
    uid_t uid;
    gid_t gid;
    gr_sandbox_ids(&lim, &uid, &gid);
    if (gr_chown_tree(work, uid, gid, err) != 0) {
        rc = -1;
        goto done;
    }
    step = gr_check_source(lab, src, r, err);
    if (step == 1)
        step = gr_check_includes(&s->kitinfo, lab, work, r, err);
    if (step == 1)
        step = gr_build(&s->kitinfo, lab, work, src, lc->have_solution, r, err);
    if (step == 1)
        step = gr_check_symbols(&s->kitinfo, lab, work, r, err);
    if (step < 0) {
        rc = -1;
    } else if (step == 0 || !s->gpu) {
        if (step == 0) {
            r->decided = 1;
        } else {
            gr_lab_add(r, "correctness", "correctness", GR_NOT_RUN, s->env.gpu_reason, NULL);
            gr_lab_add(r, "performance", "performance", GR_NOT_RUN, s->env.gpu_reason, NULL);
            gr_lab_outcome(r, GR_OUT_GPU_NOT_RUN, "built and passed the static checks; GPU "
                           "stages not run");
            r->decided = 0;
        }
        tidy_work(work);
        if (gr_stop_requested)
            rc = lk_fail(err, "interrupted: this lab's result is not saved and will be graded "
                              "again");
        else
            rc = finish(s, st, r, err);
    } else {
        *stage = STAGE_GPU;
    }
done:
    free(work);
    free(src);
    return rc;
}

/* The GPU stages of a prepared lab, then its result saved. */
static int gpu_lab(gr_session *s, const gr_student *st, int li, gr_lab_result *r, lk_error *err)
{
    gr_lab_ctx *lc = &s->labs[li];
    char *work = gr_strf("%s/work/students/%s/%s", s->out, st->dir, lc->rub->name);
    char *driver = gr_strf("%s/build/%s", work, lc->rub->driver);
    /* When root, the student's runs get a user of their own: the process limit is theirs. */
    s->run_id = GR_RUN_ID_BASE + gr_hash_name(st->dir) % GR_RUN_IDS;
    int rc = gr_gpu_stages(s, lc, work, driver, r, err);
    s->run_id = 0;
    free(driver);
    tidy_work(work);
    free(work);
    if (rc == 0 && gr_stop_requested)
        rc = lk_fail(err, "interrupted: this lab's result is not saved and will be graded again");
    if (rc == 0)
        rc = finish(s, st, r, err);
    return rc;
}

int gr_grade_lab(gr_session *s, const gr_student *st, int li, gr_lab_result *r, lk_error *err)
{
    int stage;
    if (prepare_lab(s, st, li, r, &stage, err) != 0)
        return -1;
    return stage == STAGE_GPU ? gpu_lab(s, st, li, r, err) : 0;
}

/* ---- build jobs: the CPU stages of later labs while the GPU grades this one ------------ */

/* Beside the lab's work folder: what its build job prepared, and how it ended. */
static char *job_path(const gr_session *s, const gr_student *st, int li, const char *what)
{
    return gr_strf("%s/work/students/%s/%s.job.%s", s->out, st->dir, s->labs[li].rub->name,
                   what);
}

static int write_text_file(FILE *f, void *text, lk_error *err)
{
    (void)err;
    return fputs(text, f) < 0 ? -1 : 0;
}

pid_t gr_prepare_in_background(gr_session *s, const gr_student *st, int li)
{
    char *state = job_path(s, st, li, "state"), *result = job_path(s, st, li, "json");
    unlink(state);
    unlink(result);
    char *dir = gr_strf("%s/work/students/%s", s->out, st->dir);
    lk_error err;
    int ok = gr_mkdir_p(dir, 0755, &err) == 0;
    free(dir);
    fflush(NULL);
    pid_t pid = ok ? fork() : -1;
    if (pid == 0) {
        /* The commands' orphans are this process's to reap, not the grader's; it stops with
           the grader, which stops it too (its own process group: a signal to the grader's
           group is the grader's to handle). */
        setpgid(0, 0);
        /* Builds ahead yield the CPU to the lab on the GPU: at equal priority, eight compilers
           beside it made lab 03's checks and rounds take 13.8 s instead of 8.8 s (16 cores). */
        setpriority(PRIO_PROCESS, 0, 10);
        prctl(PR_SET_CHILD_SUBREAPER, 1);
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() == 1)
            _exit(1);
        gr_lab_result r;
        int stage;
        lk_error_clear(&err);
        char *text;
        if (prepare_lab(s, st, li, &r, &stage, &err) != 0)
            text = gr_strf("error\n%s", err.msg);
        else if (stage == STAGE_GPU && gr_lab_save_sealed(result, &r, s->env.secret, &err) != 0)
            text = gr_strf("error\n%s", err.msg);
        else
            text = gr_xstrdup(stage == STAGE_GPU ? "gpu\n" : stage == STAGE_REUSED ? "reused\n"
                                                                              : "done\n");
        int rc = gr_write_atomic(state, write_text_file, text, &err);
        fflush(NULL);
        _exit(rc == 0 ? 0 : 1);
    }
    free(state);
    free(result);
    return pid;
}

static int load_saved(const gr_session *s, const gr_student *st, int li, gr_lab_result *r,
                      lk_error *err)
{
    char *saved = gr_result_path(s, st, s->labs[li].rub->name);
    int rc = gr_lab_load_sealed(saved, r, s->env.secret, err);
    free(saved);
    return rc;
}

int gr_grade_prepared(gr_session *s, const gr_student *st, int li, pid_t job,
                      gr_lab_result *r, lk_error *err)
{
    if (job <= 0)
        return gr_grade_lab(s, st, li, r, err);
    int status;
    /* The sandbox's reaping may have collected it already: its state file tells. */
    while (waitpid(job, &status, 0) < 0 && errno == EINTR)
        ;
    char *state_path = job_path(s, st, li, "state"), *result = job_path(s, st, li, "json");
    lk_error ignored;
    char *state = gr_exists(state_path) ? gr_read_file(state_path, 1 << 16, NULL, &ignored)
                                        : NULL;
    int rc;
    if (state && strncmp(state, "error\n", 6) == 0) {
        gr_lab_init(r, s->labs[li].rub->name, 0);
        rc = lk_fail(err, "%s", state + 6);
    } else if (state && strcmp(state, "gpu\n") == 0 &&
               gr_lab_load_sealed(result, r, s->env.secret, err) == 0) {
        rc = gpu_lab(s, st, li, r, err);
    } else if (state && strcmp(state, "gpu\n") != 0 &&
               load_saved(s, st, li, r, err) == 0) {
        rc = 0;
        r->reused = strcmp(state, "reused\n") == 0;
    } else {
        /* The job died (killed, out of memory), or what it left is not sealed by this
           grader: do its work here. */
        rc = gr_stop_requested ? lk_fail(err, "interrupted before this lab was built")
                               : gr_grade_lab(s, st, li, r, err);
    }
    unlink(state_path);
    unlink(result);
    free(state);
    free(state_path);
    free(result);
    return rc;
}
