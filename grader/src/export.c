/* Gradebooks an LMS imports as they are, written from the same results as gradebook.csv. */
#include "export.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

static const gr_student *find_student(const gr_student *st, int n, const char *folder)
{
    for (int i = 0; i < n; i++)
        if (strcmp(st[i].name, folder) == 0)
            return &st[i];
    return NULL;
}

static const gr_lab_result *find_lab(const gr_student *s, const char *lab)
{
    for (int i = 0; s && s->done && i < s->nlabs; i++)
        if (s->labs[i].lab && strcmp(s->labs[i].lab, lab) == 0)
            return &s->labs[i];
    return NULL;
}

/* A score cell: empty unless decided and gradable, so that the LMS keeps the rest ungraded. */
static void score_cell(FILE *f, const gr_lab_result *r)
{
    fputc(',', f);
    if (r && r->decided && !gr_lab_not_gradable(r))
        fprintf(f, "%.2f", r->score);
}

static double lab_points(const gr_lab_rubric *lab)
{
    return lab->points_correct + lab->points_perf;
}

int gr_write_canvas(FILE *f, const gr_report_ctx *c, const gr_roster *ro, const gr_student *st,
                    int n)
{
    fputs("Student,ID,SIS User ID,SIS Login ID,Section", f);
    for (int l = 0; l < c->nlabs; l++) {
        fputc(',', f);
        gr_csv_field(f, c->labs[l]->name);
    }
    /* Canvas reads the points of each column from this row, written as its own export
       writes it (four leading spaces, the identity cells empty). */
    fputs("\n    Points Possible,,,,", f);
    for (int l = 0; l < c->nlabs; l++)
        fprintf(f, ",%.2f", lab_points(c->labs[l]));
    fputc('\n', f);
    for (int i = 0; i < ro->n; i++) {
        const gr_roster_entry *e = &ro->rows[i];
        const char *name = e->col[GR_ROSTER_NAME][0] ? e->col[GR_ROSTER_NAME]
                                                     : e->col[GR_ROSTER_FOLDER];
        static const gr_roster_col ids[] = {GR_ROSTER_CANVAS_ID, GR_ROSTER_SIS_USER_ID,
                                            GR_ROSTER_SIS_LOGIN_ID, GR_ROSTER_SECTION};
        gr_csv_field(f, name);
        for (size_t k = 0; k < sizeof ids / sizeof ids[0]; k++) {
            fputc(',', f);
            gr_csv_field(f, e->col[ids[k]]);
        }
        const gr_student *s = find_student(st, n, e->col[GR_ROSTER_FOLDER]);
        for (int l = 0; l < c->nlabs; l++)
            score_cell(f, find_lab(s, c->labs[l]->name));
        fputc('\n', f);
    }
    return 0;
}

int gr_write_moodle(FILE *f, const gr_report_ctx *c, const gr_roster *ro, const gr_student *st,
                    int n)
{
    static const struct { gr_roster_col col; const char *header; } ids[] = {
        {GR_ROSTER_EMAIL, "Email address"},
        {GR_ROSTER_IDNUMBER, "ID number"},
        {GR_ROSTER_USERNAME, "Username"},
    };
    int any = 0;
    for (size_t k = 0; k < sizeof ids / sizeof ids[0]; k++)
        if (ro->has[ids[k].col])
            fprintf(f, "%s%s", any++ ? "," : "", ids[k].header);
    for (int l = 0; l < c->nlabs; l++) {
        fputs(any++ ? "," : "", f);
        gr_csv_field(f, c->labs[l]->name);
        char *feedback = gr_strf("%s feedback", c->labs[l]->name);
        fputc(',', f);
        gr_csv_field(f, feedback);
        free(feedback);
    }
    fputc('\n', f);
    for (int i = 0; i < ro->n; i++) {
        const gr_roster_entry *e = &ro->rows[i];
        int cells = 0;
        for (size_t k = 0; k < sizeof ids / sizeof ids[0]; k++)
            if (ro->has[ids[k].col]) {
                fputs(cells++ ? "," : "", f);
                gr_csv_field(f, e->col[ids[k].col]);
            }
        const gr_student *s = find_student(st, n, e->col[GR_ROSTER_FOLDER]);
        for (int l = 0; l < c->nlabs; l++) {
            const gr_lab_result *r = find_lab(s, c->labs[l]->name);
            fputs(cells++ ? "," : "", f);
            if (r && r->decided && !gr_lab_not_gradable(r))
                fprintf(f, "%.2f", r->score);
            fputc(',', f);
            char *feedback = !s ? gr_xstrdup("no submission")
                             : !r ? gr_xstrdup("not graded yet")
                             : gr_strf("%s%s: %s", gr_lab_not_gradable(r) ? "not gradable, " : "",
                                       r->outcome, r->summary);
            gr_csv_field(f, feedback);
            free(feedback);
        }
        fputc('\n', f);
    }
    return 0;
}

void gr_roster_unmatched(const gr_roster *ro, const gr_student *st, int n, int *no_submission,
                         int *not_in_roster)
{
    *no_submission = *not_in_roster = 0;
    for (int i = 0; i < ro->n; i++)
        *no_submission += !find_student(st, n, ro->rows[i].col[GR_ROSTER_FOLDER]);
    for (int i = 0; i < n; i++)
        *not_in_roster += !gr_roster_find(ro, st[i].name);
}

int gr_write_roster_check(FILE *f, const gr_roster *ro, const gr_student *st, int n)
{
    int none, unknown;
    gr_roster_unmatched(ro, st, n, &none, &unknown);
    fprintf(f, "# Roster check: %s against the submissions graded\n\n"
               "On the roster, no submission folder (%d; their export cells are empty):\n",
            ro->path, none);
    for (int i = 0; i < ro->n; i++)
        if (!find_student(st, n, ro->rows[i].col[GR_ROSTER_FOLDER])) {
            fputs("  ", f);
            gr_csv_field(f, ro->rows[i].col[GR_ROSTER_FOLDER]);
            fprintf(f, " (%s:%d)\n", ro->path, ro->rows[i].line);
        }
    fprintf(f, "\nSubmission folders not on the roster (%d; not in the exports: add them to "
               "the roster):\n", unknown);
    for (int i = 0; i < n; i++)
        if (!gr_roster_find(ro, st[i].name)) {
            fputs("  ", f);
            gr_csv_field(f, st[i].name);
            fputc('\n', f);
        }
    return 0;
}
