/* A class graded in parts, brought together: the sealed results of each part, checked and
   sealed again under the class's secret, the students' reports as the parts wrote them (with
   the node, GPU and job that graded them), and the class's files built from the results. */
#include "merge.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "class.h"
#include "export.h"
#include "util.h"

enum { EXIT_GRADED = 0, EXIT_ERROR = 1, EXIT_NO_GPU = 4 };

/* The largest report a part may hand over (a report.md with every check's detail). */
#define MAX_PART_FILE (16u << 20)

/* One student's results.json, for gr_write_atomic. */
typedef struct student_file {
    const gr_report_ctx *rc;
    const gr_student *st;
} student_file;

static int w_gradescope(FILE *f, void *p, lk_error *e)
{
    (void)e;
    const student_file *w = p;
    return gr_write_gradescope(f, w->rc, w->st);
}

/* Copy the part's file @p name of the student into the class's folder @p dir; @p extra (or
   NULL) is appended. A file the part does not have is left out (0). */
static int copy_part_file(const char *from_dir, const char *dir, const char *name,
                          const char *extra, lk_error *err)
{
    char *from = gr_strf("%s/%s", from_dir, name), *to = gr_strf("%s/%s", dir, name);
    int rc = 0;
    if (gr_exists(from)) {
        char *text = gr_read_regular(from, MAX_PART_FILE, NULL, err);
        char *joined = text ? gr_strf("%s%s", text, extra ? extra : "") : NULL;
        rc = joined && gr_write_atomic_text(to, joined, err) == 0 ? 0 : -1;
        free(joined);
        free(text);
    }
    free(from);
    free(to);
    return rc;
}

/* The report folder PART/students/FOLDER of the one student a part holds (its name is the
   folder's in the task that graded it: tools/slurm-grade.sh splits a task of several students
   into parts); NULL with @p why when there is not exactly one. */
static char *part_student_dir(const char *part, lk_error *why)
{
    char *students = gr_strf("%s/students", part), *found = NULL;
    int count = 0;
    DIR *d = opendir(students);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char *p = gr_strf("%s/%s", students, e->d_name);
        struct stat st;
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode) && count++ == 0)
            found = p, p = NULL;
        free(p);
    }
    if (d)
        closedir(d);
    if (count != 1) {
        lk_fail(why, "%s: holds %d report folders: a part holds the one of its student", students,
                count);
        free(found);
        found = NULL;
    }
    free(students);
    return found;
}

/* Take the part of @p st: every lab's sealed result, checked under the part's own secret.
   -1 with @p why when the part is missing, incomplete or refused. */
static int load_part(const gr_session *s, const char *part, gr_student *st, lk_error *why)
{
    char *secret_path = gr_strf("%s/.grader-secret", part);
    const int have = gr_is_dir(part) && gr_exists(secret_path);
    free(secret_path);
    if (!have)
        return lk_fail(why, "%s: no part: its task did not finish", part);
    unsigned char secret[GR_SECRET_BYTES];
    if (gr_grader_secret(part, secret, why) != 0)
        return -1;
    char *from = part_student_dir(part, why);
    if (!from)
        return -1;
    int rc = 0;
    for (int l = 0; l < s->nlabs && rc == 0; l++) {
        const gr_lab_rubric *lab = s->graded[l];
        char *path = gr_strf("%s/labs/%s.json", from, lab->name);
        gr_lab_result *r = &st->labs[l];
        gr_lab_free(r);
        if (!gr_exists(path))
            rc = lk_fail(why, "%s: missing: the part's task ended before grading %s", path,
                         lab->name);
        else if (gr_lab_load_sealed(path, r, secret, why) != 0)
            rc = -1;
        else if (strcmp(r->lab, lab->name) != 0)
            rc = lk_fail(why, "%s: holds lab %s, not %s", path, r->lab, lab->name);
        if (rc != 0)
            gr_lab_init(r, lab->name, lab->points_correct + lab->points_perf);
        free(path);
    }
    free(from);
    return rc;
}

/* The part's reports into the class's folder, with where it was graded; its results sealed
   again under the class's secret. */
static int take_part(const gr_session *s, const char *part, const gr_student *st, lk_error *err)
{
    char *from = part_student_dir(part, err);
    if (!from)
        return -1;
    char *dir = gr_strf("%s/students/%s", s->out, st->dir);
    char *labs = gr_strf("%s/labs", dir);
    char *where_path = gr_strf("%s/slurm.md", part);
    char *where = gr_exists(where_path) ? gr_read_regular(where_path, 1 << 16, NULL, err) : NULL;
    int rc = gr_mkdir_p(labs, 0755, err);
    for (int l = 0; l < st->nlabs && rc == 0; l++) {
        char *path = gr_result_path(s, st, st->labs[l].lab);
        rc = gr_lab_save_sealed(path, &st->labs[l], s->env.secret, err);
        free(path);
    }
    if (rc == 0)
        rc = copy_part_file(from, dir, "report.md", where, err) == 0 &&
                     copy_part_file(from, dir, "report.json", NULL, err) == 0 &&
                     copy_part_file(from, dir, "audit.jsonl", NULL, err) == 0
                 ? 0
                 : -1;
    free(where);
    free(where_path);
    free(labs);
    free(dir);
    free(from);
    return rc;
}

int gr_merge_parts(gr_session *s, const gr_options *o, const char *parts, gr_student *st, int n)
{
    int missing = 0, gpu_not_run = 0, errors = 0;
    lk_error err;
    gr_session_log(s->out, "merge: %d submission%s from %s, parts in %s", n, n == 1 ? "" : "s",
                   s->self ? "self" : s->subs, parts);
    /* The class's files say where the GPU work ran: on the parts' nodes, not here. */
    snprintf(s->env.gpu_reason, sizeof s->env.gpu_reason,
             "the nodes that graded the parts (each student's report names its node and GPU)");
    for (int i = 0; i < n; i++) {
        char *part = gr_strf("%s/%s", parts, st[i].name);
        st[i].labs = gr_xcalloc(s->nlabs, sizeof *st[i].labs);
        st[i].nlabs = s->nlabs;
        for (int l = 0; l < s->nlabs; l++)
            gr_lab_init(&st[i].labs[l], s->graded[l]->name,
                        s->graded[l]->points_correct + s->graded[l]->points_perf);
        lk_error_clear(&err);
        if (load_part(s, part, &st[i], &err) != 0) {
            missing++;
            printf("  %-24s pending: %s\n", st[i].name, err.msg);
            gr_session_log(s->out, "merge: %s pending: %s", st[i].name, err.msg);
        } else if (take_part(s, part, &st[i], &err) != 0) {
            errors++;
            fprintf(stderr, "labkit-grade: %s: %s\n", st[i].name, err.msg);
        } else {
            st[i].done = 1;
            for (int l = 0; l < s->nlabs; l++) {
                gr_apply_course_deadline(s, o, &st[i], l, &st[i].labs[l]);
                gpu_not_run += strcmp(st[i].labs[l].outcome, GR_OUT_GPU_NOT_RUN) == 0;
            }
            double total, max;
            int decided;
            gr_student_total(&st[i], &total, &max, &decided);
            char *status = gr_student_status(&st[i]);
            if (decided)
                printf("  %-24s %.2f/%g %s\n", st[i].name, total, max, status);
            else
                printf("  %-24s -/%g %s\n", st[i].name, max, status);
            gr_session_log(s->out, "merge: %s from %s: %s", st[i].name, part, status);
            free(status);
        }
        free(part);
    }
    gr_report_ctx rc = {&s->env, s->self ? "self (this kit's student files)" : s->subs,
                        s->rubric_path, s->graded, s->nlabs,
                        gpu_not_run ? "no GPU where some parts were graded (each student's "
                                      "report says where)"
                                    : NULL};
    if (gr_write_class_files(s->out, o, &rc, st, n, &err) != 0) {
        fprintf(stderr, "labkit-grade: %s\n", err.msg);
        errors++;
    }
    for (int i = 0; i < n && o->gradescope; i++) {
        student_file w = {&rc, &st[i]};
        char *gs = gr_strf("%s/students/%s/results.json", s->out, st[i].dir);
        if (st[i].done && gr_write_atomic(gs, w_gradescope, &w, &err) != 0) {
            fprintf(stderr, "labkit-grade: %s\n", err.msg);
            errors++;
        }
        free(gs);
    }
    printf("\ngradebook: %s/gradebook.csv\nreports:   %s/students/NAME/report.md (and "
           "report.json)\nsummary:   %s/summary.md\n", s->out, s->out, s->out);
    if (missing) {
        printf("labkit-grade: %d student%s pending (no complete part in %s): grade them "
               "again (make grade SLURM=1 submits only those)\n", missing,
               missing == 1 ? "" : "s", parts);
        return EXIT_ERROR;
    }
    if (errors)
        return EXIT_ERROR;
    if (gpu_not_run) {
        printf("labkit-grade: GPU STAGES NOT RUN for %d lab%s: their scores are not final; "
               "grade on nodes with a GPU (exit status %d)\n", gpu_not_run,
               gpu_not_run == 1 ? "" : "s", EXIT_NO_GPU);
        return EXIT_NO_GPU;
    }
    return EXIT_GRADED;
}
