#include "grade.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "labkit/md5.h"
#include "sandbox.h"
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
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            size_t n = strlen(e->d_name);
            if (n > 4 && strcmp(e->d_name + n - 4, ".bin") == 0 &&
                strncmp(e->d_name, "perf", 4) == 0) {
                char *p = gr_strf("%s/%s", run, e->d_name);
                unlink(p);
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

static int finish(const gr_session *s, const gr_student *st, gr_lab_result *r, lk_error *err)
{
    char *path = gr_result_path(s, st, r->lab);
    char *dir = gr_strf("%s/students/%s/labs", s->out, st->dir);
    int rc = gr_mkdir_p(dir, 0755, err) == 0 ? gr_lab_save(path, r, err) : -1;
    free(dir);
    free(path);
    return rc;
}

int gr_grade_lab(gr_session *s, const gr_student *st, int li, gr_lab_result *r, lk_error *err)
{
    gr_lab_ctx *lc = &s->labs[li];
    const gr_lab_rubric *lab = lc->rub;
    gr_lab_init(r, lab->name, lab->points_correct + lab->points_perf);
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

    if (!s->force) {
        char *path = gr_result_path(s, st, lab->name);
        gr_lab_result old;
        lk_error ignored;
        if (gr_exists(path) && gr_lab_load(path, &old, &ignored) == 0) {
            if (strcmp(old.key, key) == 0 && strcmp(old.outcome, GR_OUT_ERROR) != 0 &&
                strcmp(old.lab, lab->name) == 0) {
                gr_lab_free(r);
                *r = old;
                r->reused = 1;
                free(path);
                gr_rm_rf(work, NULL);
                goto done;
            }
            gr_lab_free(&old);
        }
        free(path);
    }

    gr_limits lim = {.drop = s->drop};
    uid_t uid;
    gid_t gid;
    gr_sandbox_ids(&lim, &uid, &gid);
    if (gr_chown_tree(work, uid, gid, err) != 0) {
        rc = -1;
        goto done;
    }
    if (gr_refresh_lib(&s->kitinfo, err) != 0) {
        rc = -1;
        goto done;
    }
    step = gr_check_source(lab, src, r, err);
    if (step == 1)
        step = gr_check_includes(&s->kitinfo, lab, work, r, err);
    if (step == 1)
        step = gr_build(&s->kitinfo, lab, work, src, r, err);
    if (step == 1)
        step = gr_check_symbols(&s->kitinfo, lab, work, r, err);
    if (step < 0) {
        rc = -1;
    } else if (step == 0) {
        r->decided = 1;
    } else if (!s->gpu) {
        gr_lab_add(r, "correctness", "correctness", GR_NOT_RUN, s->env.gpu_reason, NULL);
        gr_lab_add(r, "performance", "performance", GR_NOT_RUN, s->env.gpu_reason, NULL);
        gr_lab_outcome(r, GR_OUT_GPU_NOT_RUN, "built and passed the static checks; GPU stages "
                       "not run");
        r->decided = 0;
    } else {
        char *driver = gr_strf("%s/build/%s", work, lab->driver);
        rc = gr_gpu_stages(s, lc, work, driver, r, err);
        free(driver);
    }
    tidy_work(work);
    if (rc == 0 && gr_stop_requested)
        rc = lk_fail(err, "interrupted: this lab's result is not saved and will be graded again");
    if (rc == 0)
        rc = finish(s, st, r, err);
done:
    free(work);
    free(src);
    return rc;
}
