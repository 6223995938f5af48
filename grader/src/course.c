/* Course policy applied after grading: deadlines, late penalties, submission times. */
#define _GNU_SOURCE /* timegm */
#include "course.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "roster.h"
#include "util.h"

int gr_parse_utc(const char *s, long long *out)
{
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    int used = 0, sec = 0;
    char sep;
    if (sscanf(s, "%4d-%2d-%2d%c%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &sep,
               &tm.tm_hour, &tm.tm_min, &used) != 6 || (sep != 'T' && sep != ' '))
        return -1;
    const char *p = s + used;
    if (*p == ':') {
        int n = 0;
        if (sscanf(p, ":%2d%n", &sec, &n) != 1)
            return -1;
        p += n;
    }
    long offset = 0;
    if (strcmp(p, "Z") == 0 || strcmp(p, " UTC") == 0) {
        offset = 0;
    } else if ((p[0] == '+' || p[0] == '-') && strlen(p) == 6 && p[3] == ':') {
        int hh, mm, n = 0;
        if (sscanf(p + 1, "%2d:%2d%n", &hh, &mm, &n) != 2 || n != 5 || hh > 23 || mm > 59)
            return -1;
        offset = (hh * 60L + mm) * 60L * (p[0] == '+' ? 1 : -1);
    } else {
        return -1;
    }
    if (tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 || tm.tm_mday > 31 ||
        tm.tm_hour > 23 || tm.tm_min > 59 || sec > 60)
        return -1;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    tm.tm_sec = sec;
    const int mday = tm.tm_mday;
    time_t t = timegm(&tm);
    if (t == (time_t)-1 || tm.tm_mday != mday) /* 31 April would roll into May */
        return -1;
    *out = (long long)t - offset;
    return 0;
}

void gr_submission_times_free(gr_submission_times *t)
{
    for (int i = 0; i < t->n; i++) {
        free(t->rows[i].folder);
        free(t->rows[i].lab);
    }
    free(t->rows);
    free(t->path);
    memset(t, 0, sizeof *t);
}

int gr_submission_times_read(const char *path, gr_submission_times *t, lk_error *err)
{
    memset(t, 0, sizeof *t);
    t->path = gr_xstrdup(path);
    char *text = gr_read_file(path, 64 << 20, NULL, err);
    if (!text) {
        gr_submission_times_free(t);
        return -1;
    }
    const char *p = strncmp(text, "\xef\xbb\xbf", 3) == 0 ? text + 3 : text;
    int line = 1, rc = 0, col_folder = -1, col_lab = -1, col_when = -1, width = 0;
    char **f;
    while (rc == 0) {
        const int start = line;
        const int n = gr_csv_record(&p, &line, &f);
        if (n == 0)
            break;
        if (n < 0) {
            rc = lk_fail(err, "%s:%d: a quoted field is not closed: end it with \"", path,
                         start);
            break;
        }
        if (n == 1 && !f[0][0]) {
            gr_csv_record_free(f, n);
            continue;
        }
        if (width == 0) {
            width = n;
            for (int i = 0; i < n; i++) {
                int *col = strcmp(f[i], "folder") == 0 ? &col_folder
                           : strcmp(f[i], "lab") == 0 ? &col_lab
                           : strcmp(f[i], "submitted") == 0 ? &col_when : NULL;
                if (!col)
                    rc = lk_fail(err, "%s:1: unknown column '%s': name the columns folder, "
                                      "submitted and optionally lab", path, f[i]);
                else if (*col >= 0)
                    rc = lk_fail(err, "%s:1: column '%s' named twice: keep one", path, f[i]);
                else
                    *col = i;
                if (rc)
                    break;
            }
            if (rc == 0 && (col_folder < 0 || col_when < 0))
                rc = lk_fail(err, "%s:1: the header needs the columns folder and submitted "
                                  "(e.g. folder,lab,submitted)", path);
        } else if (n != width) {
            rc = lk_fail(err, "%s:%d: %d fields, the header has %d: quote a field that holds "
                              "a comma", path, start, n, width);
        } else {
            long long when;
            if (gr_parse_utc(f[col_when], &when) != 0)
                rc = lk_fail(err, "%s:%d: '%s' is not a date: write it as "
                                  "2026-12-01T23:59:00Z (UTC) or with its offset, "
                                  "2026-12-01T23:59:00+01:00", path, start, f[col_when]);
            else if (!f[col_folder][0])
                rc = lk_fail(err, "%s:%d: empty folder: give the submission folder's name",
                             path, start);
            else {
                t->rows = gr_xrealloc(t->rows, (t->n + 1) * sizeof *t->rows);
                t->rows[t->n++] = (gr_submission_time){
                    gr_xstrdup(f[col_folder]), gr_xstrdup(col_lab >= 0 ? f[col_lab] : ""),
                    when};
            }
        }
        gr_csv_record_free(f, n);
    }
    free(text);
    if (rc == 0 && width == 0)
        rc = lk_fail(err, "%s:1: empty file: write a header (folder,lab,submitted) and a row "
                          "per submission", path);
    if (rc != 0)
        gr_submission_times_free(t);
    return rc;
}

/* Newest modification time of the lab's student files in the submission, found where the
   grader takes them from (build.c's gr_fetch_files: labs/LAB/F, LAB/F, F). */
static int files_mtime(const char *root, const gr_lab_rubric *lab, long long *when)
{
    int found = 0;
    for (int f = 0; f < lab->nfiles; f++) {
        const char *file = lab->files[f].name;
        char *cand[3] = {gr_strf("%s/labs/%s/%s", root, lab->name, file),
                         gr_strf("%s/%s/%s", root, lab->name, file),
                         gr_strf("%s/%s", root, file)};
        for (int c = 0; c < 3; c++) {
            struct stat st;
            if (lstat(cand[c], &st) == 0 && S_ISREG(st.st_mode)) {
                if (!found || (long long)st.st_mtime > *when)
                    *when = (long long)st.st_mtime;
                found = 1;
                break;
            }
        }
        for (int c = 0; c < 3; c++)
            free(cand[c]);
    }
    return found ? 0 : -1;
}

int gr_find_submission_time(const gr_submission_times *times, const char *folder,
                            const char *root, const gr_lab_rubric *lab, long long *when,
                            const char **source)
{
    const gr_submission_time *any = NULL, *exact = NULL;
    for (int i = 0; times && i < times->n; i++)
        if (strcmp(times->rows[i].folder, folder) == 0) {
            if (strcmp(times->rows[i].lab, lab->name) == 0)
                exact = &times->rows[i];
            else if (!times->rows[i].lab[0])
                any = &times->rows[i];
        }
    if (exact || any) {
        *when = (exact ? exact : any)->when;
        *source = "the instructor's submission times";
        return 0;
    }
    *source = times ? "the files' modification times, the student's own clock: not in the "
                      "submission times file"
                    : "the files' modification times, the student's own clock: no submission "
                      "times file given";
    return root ? files_mtime(root, lab, when) : -1;
}

double gr_late_penalty(double score, double max, long long late_s, double per_day, double floor)
{
    if (late_s <= 0 || per_day <= 0)
        return 0;
    const long long days = (late_s + 86399) / 86400;
    const double lowest = fmin(score, max * floor / 100);
    const double after = fmax(score - max * per_day / 100 * (double)days, lowest);
    return score - after;
}

/* Days (or parts of one) lab @p lab of @p folder was late; 0 when on time or unknown. */
static long long days_late(const gr_lab_rubric *lab, const gr_submission_times *times,
                           const char *folder, const char *root)
{
    long long when;
    const char *source;
    if (!lab->deadline_set ||
        gr_find_submission_time(times, folder, root, lab, &when, &source) != 0 ||
        when <= lab->deadline)
        return 0;
    return (when - lab->deadline + 86399) / 86400;
}

void gr_plan_late_tokens(const gr_rubric *rub, const gr_submission_times *times,
                         const char *folder, const char *root, int *days)
{
    long long left = rub->late_tokens;
    for (int i = 0; i < rub->nlabs; i++) {
        const long long late = left > 0 ? days_late(&rub->labs[i], times, folder, root) : 0;
        days[i] = (int)(late < left ? late : left);
        left -= days[i];
    }
}

void gr_apply_deadline(const gr_lab_rubric *lab, const gr_submission_times *times,
                       const char *folder, const char *root, int token_days, gr_lab_result *r)
{
    if (!lab->deadline_set || !r->decided || strcmp(r->outcome, GR_OUT_MISSING) == 0)
        return;
    long long when;
    const char *source;
    char deadline[32], at[32];
    time_t d = (time_t)lab->deadline;
    strftime(deadline, sizeof deadline, "%Y-%m-%dT%H:%M:%SZ", gmtime(&d));
    if (gr_find_submission_time(times, folder, root, lab, &when, &source) != 0) {
        gr_lab_add(r, "policy", "deadline", GR_NOT_RUN, "no submission time known: "
                   "the deadline was not applied", NULL);
        return;
    }
    time_t w = (time_t)when;
    strftime(at, sizeof at, "%Y-%m-%dT%H:%M:%SZ", gmtime(&w));
    const long long late = when - lab->deadline;
    if (late <= 0) {
        char *why = gr_strf("submitted %s, by the deadline %s; time from %s", at, deadline,
                            source);
        gr_lab_add(r, "policy", "deadline", GR_PASS, why, NULL);
        free(why);
        return;
    }
    const long long days = (late + 86399) / 86400;
    const long long charged = days > token_days ? days - token_days : 0;
    const double off = gr_late_penalty(r->score, r->max, charged * 86400, lab->late_per_day,
                                       lab->late_floor);
    char tokens[96] = "";
    if (token_days > 0)
        snprintf(tokens, sizeof tokens, "; %d day%s covered by late tokens", token_days,
                 token_days == 1 ? "" : "s");
    char *why = gr_strf("submitted %s, %lld day%s after the deadline %s%s: %.2f points off "
                        "(%g%% of the points a day, never below %g%%); time from %s", at, days,
                        days == 1 ? "" : "s", deadline, tokens, off, lab->late_per_day,
                        lab->late_floor, source);
    gr_lab_add(r, "policy", "deadline", charged ? GR_FAIL : GR_PASS, why, NULL);
    free(why);
    if (off <= 0)
        return;
    r->score -= off;
    char *summary = gr_strf("%s; late %lld day%s: %.2f points off", r->summary, days,
                            days == 1 ? "" : "s", off);
    free(r->summary);
    r->summary = summary;
}

typedef struct contestant {
    gr_lab_result *r;
    double ratio;
} contestant;

static int faster_first(const void *a, const void *b)
{
    const double x = ((const contestant *)a)->ratio, y = ((const contestant *)b)->ratio;
    return x < y ? 1 : x > y ? -1 : 0;
}

int gr_award_contest(const gr_lab_rubric *lab, int li, gr_student *st, int n)
{
    if (lab->contest_points <= 0 || lab->contest_top < 1)
        return 0;
    contestant *c = gr_xcalloc(n ? n : 1, sizeof *c);
    int m = 0;
    for (int i = 0; i < n; i++) {
        gr_lab_result *r = st[i].done && li < st[i].nlabs ? &st[i].labs[li] : NULL;
        if (r && r->lab && strcmp(r->lab, lab->name) == 0 && r->decided &&
            strcmp(r->outcome, GR_OUT_CORRECT) == 0 && r->perf.measured &&
            r->perf.have_solution && !r->perf.implausible)
            c[m++] = (contestant){r, r->perf.score.ratio.median};
    }
    qsort(c, m, sizeof *c, faster_first);
    const int k = lab->contest_top;
    for (int i = 0, rank = 1; i < m; i++) {
        if (i > 0 && c[i].ratio < c[i - 1].ratio)
            rank = i + 1;
        const double bonus = rank <= k ? lab->contest_points * (k - rank + 1) / k : 0;
        char *why = gr_strf("rank %d of %d correct submissions at %.3fx the solution's speed: "
                            "%.2f contest points (top %d rewarded)", rank, m, c[i].ratio, bonus,
                            k);
        gr_lab_add(c[i].r, "policy", "contest", GR_PASS, why, NULL);
        free(why);
        if (bonus > 0) {
            c[i].r->score += bonus;
            char *summary = gr_strf("%s; contest rank %d: +%.2f", c[i].r->summary, rank, bonus);
            free(c[i].r->summary);
            c[i].r->summary = summary;
        }
    }
    free(c);
    return m;
}

int gr_pick_attempt(const gr_lab_result *tries, int n, int best)
{
    int pick = n - 1;
    if (!best)
        return pick;
    for (int a = n - 1; a >= 0; a--)
        if (!tries[a].decided)
            return a;
    for (int a = n - 2; a >= 0; a--)
        if (tries[a].score > tries[pick].score)
            pick = a;
    return pick;
}
