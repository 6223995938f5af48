/* labkit-grade --static: the grader's own static stage (integrity.c) on a lab folder's files
   and the objects its make check built, so that a lab's make check applies the rules that
   make grade applies, with the grader's words, and nothing is re-implemented elsewhere. */
#include "static_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build.h"
#include "integrity.h"
#include "jail.h"
#include "result.h"
#include "rubric.h"
#include "util.h"

#ifndef GR_CUDA_HOME
#define GR_CUDA_HOME "/usr/local/cuda"
#endif

enum { STATIC_PASSED = 0, STATIC_ERROR = 1, STATIC_USAGE = 2, STATIC_REJECTED = 3 };

/* The path given for student file @p f as MAKEVAR=PATH, or NULL. */
static const char *given_path(const gr_static_request *q, const gr_student_file *f)
{
    size_t len = strlen(f->var);
    for (int i = 0; i < q->nfiles; i++)
        if (strncmp(q->files[i], f->var, len) == 0 && q->files[i][len] == '=')
            return q->files[i] + len + 1;
    return NULL;
}

/* WORK/src holds copies of the student files and WORK/build their objects, as the grader's
   own work folder does after its build. 0, or -1 with @p err. */
static int stage_files(const gr_static_request *q, const gr_lab_rubric *lab, const char *work,
                       lk_error *err)
{
    static const char *const subdirs[] = {"src", "build", "logs", "tmp"};
    if (gr_rm_rf(work, err) != 0)
        return -1;
    for (size_t i = 0; i < sizeof subdirs / sizeof subdirs[0]; i++) {
        char *d = gr_strf("%s/%s", work, subdirs[i]);
        int rc = gr_mkdir_p(d, 0755, err);
        free(d);
        if (rc != 0)
            return -1;
    }
    for (int f = 0; f < lab->nfiles; f++) {
        const char *name = lab->files[f].name;
        const char *path = given_path(q, &lab->files[f]);
        if (!path)
            return lk_fail(err, "lab %s's student file %s needs %s=PATH on the command line "
                                "(labs/lab.mk passes it)", lab->name, name, lab->files[f].var);
        char stem[GR_NAME_MAX];
        snprintf(stem, sizeof stem, "%s", name);
        char *dot = strrchr(stem, '.');
        if (dot)
            *dot = '\0';
        char *src = gr_strf("%s/src/%s", work, name);
        char *obj = gr_strf("%s/%s.o", q->objects, stem);
        char *obj_copy = gr_strf("%s/build/%s.o", work, stem);
        int rc = gr_copy_untrusted(path, src, GR_MAX_STUDENT_FILE, err);
        if (rc == 0 && !gr_exists(obj))
            rc = lk_fail(err, "%s: missing: build the lab first (make), then check", obj);
        /* An object with CUDA's fat binary can pass the student-file limit: allow 64 times. */
        if (rc == 0)
            rc = gr_copy_untrusted(obj, obj_copy, 64 * (size_t)GR_MAX_STUDENT_FILE, err);
        free(src);
        free(obj);
        free(obj_copy);
        if (rc != 0)
            return -1;
    }
    return 0;
}

/* The failed check's detail, indented, when it adds to the lab's reason. */
static void print_detail(const gr_lab_result *r)
{
    for (int i = 0; i < r->nchecks; i++) {
        const gr_check *c = &r->checks[i];
        if (strcmp(c->status, GR_PASS) == 0)
            continue;
        if (!c->detail || !c->detail[0] || strcmp(c->detail, c->reason) == 0)
            return;
        const char *p = c->detail;
        while (*p) {
            size_t n = strcspn(p, "\n");
            fprintf(stderr, "    %.*s\n", (int)n, p);
            p += n + (p[n] == '\n');
        }
        return;
    }
}

int gr_static_check(const gr_static_request *q)
{
    lk_error err;
    lk_error_clear(&err);
    char *lib = q->lib ? gr_xstrdup(q->lib) : gr_strf("%s/build/common/liblabkit.a", q->kit);
    char *work = gr_strf("%s/grader-static", q->objects);
    gr_rubric rubric = {0};
    gr_kit kit;
    memset(&kit, 0, sizeof kit);
    gr_jail jail;
    gr_jail_none(&jail);
    gr_lab_result r;
    memset(&r, 0, sizeof r);
    int status = STATIC_ERROR;
    const gr_lab_rubric *lab = NULL;
    /* The lab's own block (labs/LAB/rubric), or its block in the --rubric file. */
    if ((q->rubric ? gr_rubric_read(q->rubric, &rubric, &err)
                   : gr_rubric_read_lab(q->kit, q->lab, &rubric, &err)) != 0)
        goto done;
    lab = gr_rubric_find(&rubric, q->lab);
    if (!lab) {
        /* Only with --rubric: that file may leave the lab out, and then has no rules for it. */
        printf("labkit-grade: %s has no block in %s: the grader does not grade it\n", q->lab,
               q->rubric);
        status = STATIC_PASSED;
        goto done;
    }
    if (gr_kit_init(&kit, q->kit, lib, GR_CUDA_HOME, q->cuda_arch, 0, &err) != 0 ||
        stage_files(q, lab, work, &err) != 0)
        goto done;
    kit.jail = &jail;
    kit.log_dir = gr_strf("%s/logs", work);

    gr_lab_init(&r, lab->name, lab->points_correct + lab->points_perf);
    char *src = gr_strf("%s/src", work);
    int step = gr_check_source(lab, src, &r, &err);
    free(src);
    if (step == 1)
        step = gr_check_includes(&kit, lab, work, &r, &err);
    if (step == 1)
        step = gr_check_symbols(&kit, lab, work, &r, &err);
    if (step < 0)
        goto done;
    if (step == 1) {
        printf("labkit-grade: %s passes the grader's static checks (source rules, includes, "
               "symbols)\n", lab->name);
        status = STATIC_PASSED;
    } else {
        fprintf(stderr, "labkit-grade: %s: %s (make grade gives this lab 0)\n", lab->name,
                r.summary ? r.summary : r.outcome);
        print_detail(&r);
        status = STATIC_REJECTED;
    }
done:
    if (status == STATIC_ERROR)
        fprintf(stderr, "labkit-grade: --static %s: %s\n", q->lab, err.msg);
    gr_lab_free(&r);
    gr_kit_free(&kit);
    gr_jail_free(&jail);
    gr_rubric_free(&rubric);
    free(lib);
    free(work);
    return status;
}
