/* The instructor's course after grading (issue 42): not gradable kept apart from 0, the
   roster, the Canvas and Moodle gradebooks and Gradescope's results.json in the formats their
   documentation gives (fixtures in grader/tests/fixtures/lms/, README there cites the pages). */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "course.h"
#include "env.h"
#include "export.h"
#include "grader_testing.h"
#include "jsonr.h"
#include "labkit/testing.h"
#include "report.h"
#include "result.h"
#include "roster.h"
#include "rubric.h"

static char *fixture(const char *name)
{
    char rel[256], path[512];
    snprintf(rel, sizeof rel, "grader/tests/fixtures/lms/%s", name);
    lk_error err;
    char *text = gr_read_file(lk_test_path(path, sizeof path, rel), 1 << 20, NULL, &err);
    cr_assert_not_null(text, "%s", err.msg);
    return text;
}

/* ---- the roster ------------------------------------------------------------------------ */

Test(course, a_roster_reads_quoted_fields_a_bom_and_crlf_lines)
{
    gr_roster r;
    lk_error err;
    LK_ASSERT_OK(gr_roster_parse("r.csv", "\xef\xbb\xbf" "email,folder,name\r\n"
                                 "a@x.org,\"Smith, \"\"J\"\"\",\"two\nlines\"\r\n"
                                 "\r\n"
                                 "b@x.org,b,\r\n", &r, &err), &err);
    cr_assert_eq(r.n, 2);
    cr_assert_str_eq(r.rows[0].col[GR_ROSTER_FOLDER], "Smith, \"J\"");
    cr_assert_str_eq(r.rows[0].col[GR_ROSTER_NAME], "two\nlines");
    cr_assert_str_eq(r.rows[0].col[GR_ROSTER_EMAIL], "a@x.org");
    cr_assert_str_eq(r.rows[0].col[GR_ROSTER_CANVAS_ID], "", "an absent column is empty");
    cr_assert_eq(r.rows[1].line, 5, "the line a row starts on, after a quoted line break");
    cr_assert(r.has[GR_ROSTER_EMAIL] && !r.has[GR_ROSTER_USERNAME]);
    cr_assert_not_null(gr_roster_find(&r, "b"));
    cr_assert_null(gr_roster_find(&r, "c"));
    gr_roster_free(&r);
}

Test(course, a_bad_roster_names_its_line_and_what_to_write)
{
    static const struct { const char *text, *msg; } bad[] = {
        {"folder,mail\nx,y\n", "r.csv:1: unknown column 'mail': name the columns folder, name, "
                               "canvas_id,"},
        {"name,email\n", "r.csv:1: no 'folder' column"},
        {"folder,folder\n", "r.csv:1: column 'folder' named twice: keep one"},
        {"folder,email\na,a@x\nb\n", "r.csv:3: 1 field, the header has 2: quote a field that "
                                     "holds a comma"},
        {"folder,email\na,a@x\na,b@x\n", "r.csv:3: folder 'a' is already on line 2: one row per "
                                         "student"},
        {"folder,email\n,a@x\n", "r.csv:2: empty folder"},
        {"folder,email\n\"a,a@x\n", "r.csv:2: a quoted field is not closed"},
        {"", "r.csv:1: empty roster"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        gr_roster r;
        lk_error err;
        cr_assert_eq(gr_roster_parse("r.csv", bad[i].text, &r, &err), -1, "accepted %s",
                     bad[i].text);
        cr_expect(strstr(err.msg, bad[i].msg), "for %s: '%s' lacks '%s'", bad[i].text, err.msg,
                  bad[i].msg);
    }
    gr_roster r;
    lk_error err;
    LK_ASSERT_OK(gr_roster_parse("r.csv", "folder,email,canvas_id\na,a@x,1\nb,,2\n", &r, &err),
                 &err);
    LK_ASSERT_OK(gr_roster_check(&r, 1, 0, &err), &err);
    cr_assert_eq(gr_roster_check(&r, 0, 1, &err), -1);
    cr_assert_str_eq(err.msg, "r.csv:3: no Moodle user for 'b': fill email, idnumber or "
                              "username (--export moodle)");
    gr_roster_free(&r);
}

/* ---- the exports --------------------------------------------------------------------- */

static gr_env test_env(void)
{
    gr_env e;
    memset(&e, 0, sizeof e);
    snprintf(e.host, sizeof e.host, "host");
    snprintf(e.date, sizeof e.date, "2026-01-01T00:00:00Z");
    snprintf(e.gpu, sizeof e.gpu, "GPU");
    e.gpu_ok = 1;
    return e;
}

/* The class of the fixtures: alice correct (85.50, timed at 0.8 of the solution's speed),
   "bob, "the" builder" whose files do not build, a folder with a line break that is not on
   the roster (its lab missing); dave is on the roster and handed nothing in. */
typedef struct course {
    gr_rubric rub;
    const gr_lab_rubric *labs[1];
    gr_env env;
    gr_report_ctx ctx;
    gr_lab_result lab[3];
    gr_student st[3];
    gr_roster roster;
} course;

static void course_open(course *c)
{
    lk_error err;
    LK_ASSERT_OK(gr_rubric_read_kit(LK_TOP_DIR, &c->rub,
                                &err), &err);
    c->labs[0] = &c->rub.labs[0];
    c->env = test_env();
    c->ctx = (gr_report_ctx){&c->env, "subs", "rubric.txt", c->labs, 1, NULL};
    const char *lab = c->rub.labs[0].name;
    gr_lab_result *r = c->lab;
    gr_lab_init(&r[0], lab, 100);
    gr_lab_add(&r[0], "build", "compile and link", GR_PASS, "built", NULL)->seconds = 2.25;
    gr_lab_add(&r[0], "correctness", "public sciddicat-tiny", GR_PASS, "md5 matches", NULL);
    gr_lab_add(&r[0], "correctness", "hidden plane:53x37 (hidden seed) (200 steps)", GR_PASS,
               "md5 matches the hidden one", NULL)->seconds = 1.5;
    gr_lab_add(&r[0], "performance", "performance", GR_PASS, "0.80x the solution", NULL);
    gr_lab_outcome(&r[0], GR_OUT_CORRECT, "correct on all datasets");
    r[0].decided = 1;
    r[0].score = 85.5;
    r[0].correctness = 70;
    r[0].performance = 15.5;
    r[0].perf.measured = 1;
    r[0].perf.have_solution = 1;
    r[0].perf.score.ratio.median = 0.8;
    gr_lab_init(&r[1], lab, 100);
    gr_lab_add(&r[1], "build", "compile and link", GR_FAIL, "kernels.cu(3): error", NULL);
    gr_lab_outcome(&r[1], GR_OUT_BUILD_FAILED, "does not build: kernels.cu(3): error, "
                   "expected ';'");
    r[1].decided = 1;
    gr_lab_init(&r[2], lab, 100);
    gr_lab_outcome(&r[2], GR_OUT_MISSING, "not submitted: kernels.cu");
    r[2].decided = 1;
    static const char *const names[] = {"alice", "bob, \"the\" builder", "carol\nnew line"};
    for (int i = 0; i < 3; i++)
        c->st[i] = (gr_student){.name = (char *)names[i], .dir = (char *)"d", .labs = &r[i],
                                .nlabs = 1, .done = 1};
    char *text = fixture("roster.csv");
    LK_ASSERT_OK(gr_roster_parse("roster.csv", text, &c->roster, &err), &err);
    LK_ASSERT_OK(gr_roster_check(&c->roster, 1, 1, &err), &err);
    free(text);
}

static void course_close(course *c)
{
    for (int i = 0; i < 3; i++)
        gr_lab_free(&c->lab[i]);
    gr_roster_free(&c->roster);
    gr_rubric_free(&c->rub);
}

typedef int (*class_writer)(FILE *, const gr_report_ctx *, const gr_roster *, const gr_student *,
                            int);

static char *write_export(class_writer fn, const course *c)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    cr_assert_eq(fn(f, &c->ctx, &c->roster, c->st, 3), 0);
    fclose(f);
    return buf;
}

static int roster_check(FILE *f, const gr_report_ctx *ctx, const gr_roster *ro,
                        const gr_student *st, int n)
{
    (void)ctx;
    return gr_write_roster_check(f, ro, st, n);
}

/* The first line of @p text, split at commas (no quoted fields in the headers compared). */
static int header_fields(const char *text, char fields[][64], int max)
{
    int n = 0;
    const char *p = text;
    while (n < max) {
        size_t len = strcspn(p, ",\n");
        snprintf(fields[n++], 64, "%.*s", (int)len, p);
        if (p[len] != ',')
            break;
        p += len + 1;
    }
    return n;
}

Test(course, the_canvas_export_has_canvas_s_columns_and_points_row)
{
    course c;
    course_open(&c);
    char *got = write_export(gr_write_canvas, &c), *want = fixture("expected-canvas.csv");
    cr_assert_str_eq(got, want);
    /* Canvas's documented layout: the same identity columns, then the Points Possible row. */
    char *doc = fixture("canvas-documented.csv");
    char ours[16][64], theirs[16][64];
    int n = header_fields(got, ours, 16), m = header_fields(doc, theirs, 16);
    cr_assert(n >= 6 && m >= 6);
    for (int i = 0; i < 5; i++)
        cr_assert_str_eq(ours[i], theirs[i], "identity column %d", i);
    const char *points_doc = strchr(doc, '\n') + 1, *points_ours = strchr(got, '\n') + 1;
    cr_assert(strncmp(points_ours, points_doc, strlen("    Points Possible,,,,,")) == 0,
              "%s", points_ours);
    /* Not gradable (bob) and no submission (dave) are empty cells, never 0. */
    cr_assert(strstr(got, "\nBob Builder,1002,s0002,bbuilder,Section 1,\n"), "%s", got);
    free(doc);
    free(want);
    free(got);
    course_close(&c);
}

Test(course, the_moodle_export_identifies_users_as_moodle_s_import_maps_them)
{
    course c;
    course_open(&c);
    char *got = write_export(gr_write_moodle, &c), *want = fixture("expected-moodle.csv");
    cr_assert_str_eq(got, want);
    /* Each identity column of ours is one of Moodle's own export's, which its import maps
       to the user (e-mail address, ID number, username). */
    char *doc = fixture("moodle-documented.csv");
    char ours[16][64], theirs[16][64];
    int n = header_fields(got, ours, 16), m = header_fields(doc, theirs, 16);
    for (int i = 0; i < 3 && i < n; i++) {
        int found = 0;
        for (int k = 0; k < m; k++)
            found |= strcmp(ours[i], theirs[k]) == 0;
        cr_assert(found, "identity column '%s' is not Moodle's", ours[i]);
    }
    free(doc);
    free(want);
    free(got);
    course_close(&c);
}

Test(course, nobody_is_dropped_between_the_roster_and_the_submissions)
{
    course c;
    course_open(&c);
    char *got = write_export(roster_check, &c), *want = fixture("expected-roster-check.txt");
    cr_assert_str_eq(got, want);
    int none, unknown;
    gr_roster_unmatched(&c.roster, c.st, 3, &none, &unknown);
    cr_assert(none == 1 && unknown == 1, "%d %d", none, unknown);
    free(want);
    free(got);
    course_close(&c);
}

/* Is every member of @p ours one that the documented example @p doc has? */
static void members_are_documented(const gr_json *ours, const gr_json *doc, const char *where)
{
    for (const gr_json *k = ours->child; k; k = k->next)
        cr_expect_not_null(gr_json_get(doc, k->string), "%s: '%s' is not in Gradescope's "
                                                       "specification", where, k->string);
}

static int gs_one(FILE *f, const gr_report_ctx *ctx, const gr_roster *ro, const gr_student *st,
                  int n)
{
    (void)ro;
    (void)n;
    return gr_write_gradescope(f, ctx, st);
}

Test(course, gradescope_results_follow_the_specification_with_visibility_and_leaderboard)
{
    course c;
    course_open(&c);
    /* A summary that names a hidden dataset stays out of the visible test. */
    free(c.lab[0].summary);
    c.lab[0].summary = gr_xstrdup("correct on all datasets, hidden plane:53x37 the slowest");
    char *text = write_export(gs_one, &c), *spec = fixture("gradescope-documented.json");
    lk_error err;
    gr_json *j = gr_json_parse(text, "results.json", &err);
    gr_json *doc = gr_json_parse(spec, "spec", &err);
    cr_assert_not_null(j, "%s\n%s", err.msg, text);
    cr_assert_not_null(doc, "%s", err.msg);
    members_are_documented(j, doc, "results.json");
    const gr_json *doc_test = gr_json_get(doc, "tests")->child;
    const gr_json *doc_entry = gr_json_get(doc, "leaderboard")->child->next;
    cr_assert_eq(gr_json_num(j, "execution_time", -1), 4, "the checks' 3.75 s, rounded");
    const gr_json *tests = gr_json_get(j, "tests");
    cr_assert_eq(gr_json_count(tests), 3, "%s", text);
    static const char *const visibility[] = {"hidden", "after_due_date", "after_published",
                                             "visible"};
    for (const gr_json *t = tests->child; t; t = t->next) {
        members_are_documented(t, doc_test, "a test");
        const char *v = gr_json_str(t, "visibility");
        int known = 0;
        for (int i = 0; i < 4; i++)
            known |= v && strcmp(v, visibility[i]) == 0;
        cr_assert(known, "visibility %s", v ? v : "(none)");
    }
    /* The public checks are visible at once and name no hidden dataset; the points, which
       the hidden datasets decide, are shown when the grades are published. */
    const gr_json *open = tests->child, *correct = open->next, *perf = correct->next;
    cr_assert_str_eq(gr_json_str(open, "visibility"), "visible");
    cr_assert_null(strstr(gr_json_str(open, "output"), "hidden"), "%s",
                   gr_json_str(open, "output"));
    cr_assert_str_eq(gr_json_str(correct, "visibility"), "after_published");
    cr_assert_str_eq(gr_json_str(perf, "visibility"), "after_published");
    cr_assert_eq(gr_json_num(correct, "score", -1), 70);
    const gr_json *board = gr_json_get(j, "leaderboard");
    cr_assert_eq(gr_json_count(board), 1);
    members_are_documented(board->child, doc_entry, "a leaderboard entry");
    cr_assert_eq(gr_json_num(board->child, "value", -1), 0.8);
    cr_assert_str_eq(gr_json_str(board->child, "order"), "desc");
    gr_json_free(j);
    free(text);

    /* Not gradable: said in each test's output and listed, no leaderboard entry. */
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    gr_write_gradescope(f, &c.ctx, &c.st[1]);
    fclose(f);
    j = gr_json_parse(buf, "results.json", &err);
    cr_assert_not_null(j, "%s", err.msg);
    const gr_json *first = gr_json_get(j, "tests")->child;
    cr_assert(strncmp(gr_json_str(first, "output"), "not gradable, [", 15) == 0, "%s", buf);
    cr_assert(strncmp(gr_json_str(first->next, "output"), "not gradable, build-failed: ",
                      28) == 0, "%s", buf);
    cr_assert_eq(gr_json_count(gr_json_get(j, "leaderboard")), 0);
    const gr_json *listed = gr_json_get(gr_json_get(j, "extra_data"), "not_gradable");
    cr_assert_eq(gr_json_count(listed), 1, "%s", buf);
    gr_json_free(j);
    gr_json_free(doc);
    free(buf);
    free(spec);
    course_close(&c);
}

/* ---- whole runs of the grader --------------------------------------------------------- */

static char *read_out(const char *out, const char *rel)
{
    char *path = gr_strf("%s/%s", out, rel);
    lk_error err;
    char *text = gr_read_file(path, 1 << 20, NULL, &err);
    cr_assert_not_null(text, "%s", err.msg);
    free(path);
    return text;
}

static int count_of(const char *text, const char *what)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, what)) != NULL; p += strlen(what))
        n++;
    return n;
}

/* A lab 01 file that does not compile (the submissions here are the tests' own: the example
   submissions are not in a student distribution). */
#define DOES_NOT_COMPILE "int lab01_gpu_run( { this is not CUDA\n"

static void put_student_text(const char *subs, const char *who, const char *text)
{
    lk_error err;
    char *lab = gr_strf("%s/%s/labs/01-straightforward", subs, who);
    LK_ASSERT_OK(gr_mkdir_p(lab, 0755, &err), &err);
    char *dst = gr_strf("%s/kernels.cu", lab);
    LK_ASSERT_OK(gr_write_atomic_text(dst, text, &err), &err);
    free(dst);
    free(lab);
}

static void put_student_file(const char *subs, const char *who, const char *from)
{
    char src[512];
    lk_error err;
    char *lab = gr_strf("%s/%s/labs/01-straightforward", subs, who);
    LK_ASSERT_OK(gr_mkdir_p(lab, 0755, &err), &err);
    char *dst = gr_strf("%s/kernels.cu", lab);
    unlink(dst);
    LK_ASSERT_OK(gr_copy_untrusted(lk_test_path(src, sizeof src, from), dst, 1 << 20, &err),
                 &err);
    free(dst);
    free(lab);
}

/* ---- not gradable ------------------------------------------------------------------- */

Test(course, not_gradable_is_its_own_cell_in_the_gradebook_and_out_of_the_figures)
{
    course c;
    course_open(&c);
    cr_assert(gr_lab_not_gradable(&c.lab[1]));
    cr_assert(!gr_lab_not_gradable(&c.lab[0]) && !gr_lab_not_gradable(&c.lab[2]));
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    gr_write_gradebook(f, &c.ctx, c.st, 3);
    fclose(f);
    cr_assert(strstr(buf, "\n\"bob, \"\"the\"\" builder\",not gradable,0.00,100.00,complete\n"),
              "%s", buf);
    free(buf);
    f = open_memstream(&buf, &size);
    gr_write_summary(f, &c.ctx, c.st, 3);
    fclose(f);
    cr_assert(strstr(buf, "| 1 of 3 | 85.50 |"), "only alice's score is a figure:\n%s", buf);
    cr_assert(strstr(buf, "correct 1, build-failed 1, missing 1"), "%s", buf);
    free(buf);
    course_close(&c);
}

/* The whole course from the command line: a student who handed in the kit's skeleton
   unchanged and one whose file does not compile are not gradable; the exports and the roster
   check are written; a bad roster stops the grader before it grades. */
Test(course, a_class_graded_with_a_roster_gives_imports_and_names_the_not_gradable,
     .timeout = 600)
{
    char *dir = gr_test_dir();
    char *subs = gr_strf("%s/class", dir), *out = gr_strf("%s/out", dir);
    char *log = gr_strf("%s/grade.log", dir);
    lk_error err;
    put_student_file(subs, "untouched", "labs/01-straightforward/kernels.cu");
    put_student_text(subs, "broken", DOES_NOT_COMPILE);
    char *roster = gr_strf("%s/roster.csv", dir);
    LK_ASSERT_OK(gr_write_atomic_text(roster, "folder,name,canvas_id,email\n"
                                      "untouched,Una Touched,11,una@x.org\n"
                                      "broken,Bro Ken,12,bro@x.org\n"
                                      "absent,Ab Sent,13,ab@x.org\n", &err), &err);
    const char *args[] = {"--submissions", subs, "--out", out, "--no-gpu", "--lab",
                          "01-straightforward", "--roster", roster, "--export",
                          "canvas,moodle,gradescope", NULL};
    int status = gr_test_run_grader(args, log);
    char *console = gr_read_file(log, 1 << 20, NULL, &err);
    cr_assert_not_null(console, "%s", err.msg);
    cr_assert_eq(status, 0, "both labs are decided without a GPU:\n%s", console);
    cr_expect(strstr(console, "skeleton") && strstr(console, "not gradable: the kit's "
                                                             "skeleton, unchanged"), "%s",
              console);
    cr_expect(strstr(console, "1 on the roster without a submission, 0 submissions not on the "
                              "roster"), "%s", console);
    char *path = gr_strf("%s/gradebook.csv", out);
    char *book = gr_read_file(path, 1 << 20, NULL, &err);
    cr_assert_not_null(book, "%s", err.msg);
    cr_expect(strstr(book, "\nbroken,not gradable,0.00,") &&
                  strstr(book, "\nuntouched,not gradable,0.00,"), "%s", book);
    free(book);
    free(path);
    path = gr_strf("%s/canvas.csv", out);
    char *canvas = gr_read_file(path, 1 << 20, NULL, &err);
    cr_assert_not_null(canvas, "%s", err.msg);
    cr_expect_str_eq(canvas, "Student,ID,SIS User ID,SIS Login ID,Section,01-straightforward\n"
                             "    Points Possible,,,,,100.00\n"
                             "Una Touched,11,,,,\nBro Ken,12,,,,\nAb Sent,13,,,,\n");
    free(canvas);
    free(path);
    path = gr_strf("%s/moodle.csv", out);
    char *moodle = gr_read_file(path, 1 << 20, NULL, &err);
    cr_assert_not_null(moodle, "%s", err.msg);
    cr_expect(strstr(moodle, "\nuna@x.org,,\"not gradable, skeleton: not gradable: the kit's "
                             "skeleton, unchanged\"\n"), "%s", moodle);
    free(moodle);
    free(path);
    path = gr_strf("%s/students/untouched/results.json", out);
    cr_expect(gr_exists(path), "--export gradescope writes results.json");
    free(path);
    path = gr_strf("%s/roster-check.txt", out);
    char *check = gr_read_file(path, 1 << 20, NULL, &err);
    cr_assert_not_null(check, "%s", err.msg);
    cr_expect(strstr(check, "  absent ("), "%s", check);
    free(check);
    free(path);
    free(console);

    /* A bad roster: usage error before any grading. */
    LK_ASSERT_OK(gr_write_atomic_text(roster, "folder,canvas_id\nx,1\nx,2\n", &err), &err);
    status = gr_test_run_grader(args, log);
    console = gr_read_file(log, 1 << 20, NULL, &err);
    cr_expect_eq(status, 2, "%s", console);
    cr_expect(strstr(console, "roster.csv:3: folder 'x' is already on line 2"), "%s", console);
    free(console);
    const char *no_roster[] = {"--submissions", subs, "--out", out, "--export", "canvas", NULL};
    status = gr_test_run_grader(no_roster, log);
    console = gr_read_file(log, 1 << 20, NULL, &err);
    cr_expect_eq(status, 2, "%s", console);
    cr_expect(strstr(console, "--export canvas needs --roster FILE"), "%s", console);
    free(console);
    free(roster);
    free(log);
    free(out);
    free(subs);
    gr_test_cleanup(dir);
}

/* ---- regrades ------------------------------------------------------------------------- */

/* A regrade grades one student again on a new seed and leaves a line in their report's audit
   trail (who, when, why, before and after, from the sealed saved results); the others' grades
   stay in the gradebook; a grade that changes on a plain run is on the trail too. */
Test(course, a_regrade_leaves_an_audit_line_and_no_grade_changes_in_silence, .timeout = 900)
{
    char *dir = gr_test_dir();
    char *subs = gr_strf("%s/class", dir), *out = gr_strf("%s/out", dir);
    char *log = gr_strf("%s/grade.log", dir);
    put_student_text(subs, "s1", DOES_NOT_COMPILE);
    put_student_text(subs, "s2", DOES_NOT_COMPILE);
    const char *grade[] = {"--submissions", subs, "--out", out, "--no-gpu", "--lab",
                           "01-straightforward", "-q", NULL};
    cr_assert_eq(gr_test_run_grader(grade, log), 0);

    const char *regrade[] = {"--submissions", subs, "--out", out, "--no-gpu", "--lab",
                             "01-straightforward", "--regrade", "s1", "--reason",
                             "asked by the student | by mail", NULL};
    int status = gr_test_run_grader(regrade, log);
    char *console = read_out(dir, "grade.log");
    cr_assert_eq(status, 0, "%s", console);
    free(console);
    char *md = read_out(out, "students/s1/report.md");
    cr_expect(strstr(md, "## Grade changes\n") &&
                  strstr(md, " | 01-straightforward | 0.00 (build-failed) | 0.00 (build-failed) "
                             "| regrade: asked by the student \\| by mail |"), "%s", md);
    char *json = read_out(out, "students/s1/report.json");
    lk_error err;
    gr_json *j = gr_json_parse(json, "report.json", &err);
    cr_assert_not_null(j, "%s", err.msg);
    const gr_json *audit = gr_json_get(j, "audit");
    cr_assert_eq(gr_json_count(audit), 1, "%s", json);
    cr_expect_eq(gr_json_num(audit->child, "old_score", -1), 0);
    cr_expect_str_eq(gr_json_str(audit->child, "reason"),
                     "regrade: asked by the student | by mail");
    cr_expect(strstr(gr_json_str(audit->child, "who"), "uid"), "who ran it");
    gr_json_free(j);
    /* Two sessions, two seeds, both in the instructor's log; none in the report. */
    char *session = read_out(out, "session.log");
    cr_expect_eq(count_of(session, "hidden-dataset seed"), 2, "%s", session);
    cr_expect(strstr(session, "regrade of s1 by "), "%s", session);
    for (const char *p = session; (p = strstr(p, "hidden-dataset seed ")) != NULL; p++) {
        char seed[32];
        snprintf(seed, sizeof seed, "%llu", strtoull(p + 20, NULL, 10));
        cr_expect_null(strstr(md, seed), "seed %s in the report:\n%s", seed, md);
    }
    char *book = read_out(out, "gradebook.csv");
    cr_expect(strstr(book, "\ns1,not gradable,") && strstr(book, "\ns2,not gradable,"),
              "the other students stay in the gradebook:\n%s", book);
    char *other = read_out(out, "students/s2/report.md");
    cr_expect_null(strstr(other, "Grade changes"), "%s", other);
    free(other);
    free(book);
    free(session);
    free(json);
    free(md);

    /* A plain run after s2's file changed: the grade moves, and the trail says so. */
    put_student_file(subs, "s2", "labs/01-straightforward/kernels.cu");
    status = gr_test_run_grader(grade, log);
    cr_assert_eq(status, 0);
    md = read_out(out, "students/s2/report.md");
    cr_expect(strstr(md, "| 0.00 (build-failed) | 0.00 (skeleton) | graded again: the student "
                         "files changed |"), "%s", md);
    free(md);
    /* Unchanged, reused: nothing more on the trail. */
    cr_assert_eq(gr_test_run_grader(grade, log), 0);
    md = read_out(out, "students/s2/report.md");
    cr_expect_eq(count_of(md, "graded again"), 1, "%s", md);
    free(md);

    /* What a regrade refuses, before it grades. */
    put_student_text(subs, "s3", DOES_NOT_COMPILE);
    static const struct { const char *const args[4]; const char *msg; } bad[] = {
        {{"--regrade", "nobody", "--reason", "x"}, "--regrade nobody: "},
        {{"--regrade", "s3", "--reason", "x"}, "--regrade s3: 01-straightforward has no saved "
                                               "result: grade the class first"},
        {{"--regrade", "s1", "--seed", "7"}, "--regrade needs --reason TEXT"},
        {{"--reason", "x", "--force", NULL}, "--reason goes with --regrade NAME"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *args[16] = {"--submissions", subs, "--out", out, "--no-gpu", "--lab",
                                "01-straightforward"};
        int n = 7;
        for (int k = 0; k < 4 && bad[i].args[k]; k++)
            args[n++] = bad[i].args[k];
        args[n] = NULL;
        status = gr_test_run_grader(args, log);
        console = read_out(dir, "grade.log");
        cr_expect_eq(status, 2, "case %zu: %s", i, console);
        cr_expect(strstr(console, bad[i].msg), "case %zu: '%s' lacks '%s'", i, console,
                  bad[i].msg);
        free(console);
    }
    free(log);
    free(out);
    free(subs);
    gr_test_cleanup(dir);
}

/* ---- deadlines and late penalties ------------------------------------------------------ */

Test(course, dates_are_read_in_utc_or_with_their_offset)
{
    static const struct { const char *text; long long when; } good[] = {
        {"2026-12-01T23:59:00Z", 1796169540},
        {"2026-12-01 23:59:00 UTC", 1796169540},
        {"2026-12-02T00:59:00+01:00", 1796169540},
        {"2026-12-01T18:59-05:00", 1796169540},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        long long t = 0;
        cr_assert_eq(gr_parse_utc(good[i].text, &t), 0, "%s", good[i].text);
        cr_expect_eq(t, good[i].when, "%s: %lld", good[i].text, t);
    }
    static const char *const bad[] = {"2026-12-01", "2026-12-01T23:59:00", "2026-04-31T10:00Z",
                                      "2026-13-01T10:00Z", "tomorrow", "2026-12-01T23:59:00+1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        long long t;
        cr_expect_eq(gr_parse_utc(bad[i], &t), -1, "accepted %s", bad[i]);
    }
}

/* Canvas's rule: a percentage of the points off per day or part of one, never below the
   floor's share of the points; a score already below the floor keeps it. */
Test(course, the_late_penalty_takes_a_share_a_day_down_to_the_floor)
{
    cr_expect_eq(gr_late_penalty(90, 100, 0, 10, 50), 0, "on time");
    cr_expect_eq(gr_late_penalty(90, 100, 1, 10, 50), 10, "a second late is a day");
    cr_expect_eq(gr_late_penalty(90, 100, 86400 + 1, 10, 50), 20, "two days");
    cr_expect_eq(gr_late_penalty(90, 100, 30 * 86400, 10, 50), 40, "down to the floor, 50");
    cr_expect_eq(gr_late_penalty(30, 100, 3 * 86400, 10, 50), 0, "below the floor: kept");
    cr_expect_eq(gr_late_penalty(90, 100, 86400, 0, 0), 0, "no penalty in the rubric");
}

static char *fake_rubric_with(const char *lines)
{
    char path[512];
    lk_error err;
    char *text = gr_read_file(lk_test_path(path, sizeof path, "grader/tests/fakekit/rubric"),
                              1 << 20, NULL, &err);
    cr_assert_not_null(text, "%s", err.msg);
    char *end = strstr(text, "\nend");
    cr_assert_not_null(end);
    *end = '\0';
    char *out = gr_strf("%s\n%s\nend\n", text, lines);
    free(text);
    return out;
}

Test(course, the_rubric_reads_a_deadline_and_a_late_rule_with_clear_errors)
{
    gr_rubric rub;
    lk_error err;
    char *text = fake_rubric_with("    deadline 2026-12-01T23:59:00Z\n"
                                  "    late per-day 10 floor 50");
    LK_ASSERT_OK(gr_rubric_parse("rubric.txt", text, &rub, &err), &err);
    cr_assert(rub.labs[0].deadline_set);
    cr_assert_eq(rub.labs[0].deadline, 1796169540);
    cr_assert_eq(rub.labs[0].late_per_day, 10);
    cr_assert_eq(rub.labs[0].late_floor, 50);
    gr_rubric_free(&rub);
    free(text);
    static const struct { const char *lines, *msg; } bad[] = {
        {"    deadline friday", "deadline: 'friday' is not a date: write deadline DATE (UTC"},
        {"    deadline 2026-12-01T23:59:00Z\n    late per-day 10",
         "late: give both: write late per-day P floor F"},
        {"    deadline 2026-12-01T23:59:00Z\n    late per-day 120 floor 0", "late per-day"},
        {"    late per-day 10 floor 50", "'late' needs a deadline to be late for: add e.g. "
                                         "deadline DATE"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        text = fake_rubric_with(bad[i].lines);
        cr_expect_eq(gr_rubric_parse("rubric.txt", text, &rub, &err), -1, "accepted %s",
                     bad[i].lines);
        cr_expect(strncmp(err.msg, "rubric.txt:", 11) == 0 && strstr(err.msg, bad[i].msg),
                  "'%s' lacks '%s'", err.msg, bad[i].msg);
        free(text);
    }
}

/* A late submission loses what the rubric says, the time taken from the instructor's file
   when it has the student, else from the files' times, and the report says which. */
Test(course, a_late_submission_loses_what_the_rubric_says)
{
    gr_rubric rub;
    lk_error err;
    char *text = fake_rubric_with("    deadline 2026-12-01T23:59:00Z\n"
                                  "    late per-day 10 floor 50");
    LK_ASSERT_OK(gr_rubric_parse("rubric.txt", text, &rub, &err), &err);
    free(text);
    char *dir = gr_test_dir();
    char *times_path = gr_strf("%s/times.csv", dir);
    LK_ASSERT_OK(gr_write_atomic_text(times_path, "folder,lab,submitted\n"
                                      "late,01-fake,2026-12-03T10:00:00Z\n"
                                      "early,,2026-12-01T12:00:00+01:00\n", &err), &err);
    gr_submission_times times;
    LK_ASSERT_OK(gr_submission_times_read(times_path, &times, &err), &err);
    gr_lab_result r;
    gr_lab_init(&r, "01-fake", 100);
    gr_lab_outcome(&r, GR_OUT_CORRECT, "correct");
    r.decided = 1;
    r.score = 85.5;
    gr_apply_deadline(&rub.labs[0], &times, "late", NULL, 0, &r);
    cr_expect_eq(r.score, 65.5, "two days started: 20 points off, %g", r.score);
    cr_assert_eq(r.nchecks, 1);
    cr_expect_str_eq(r.checks[0].status, GR_FAIL);
    cr_expect(strstr(r.checks[0].reason, "submitted 2026-12-03T10:00:00Z, 2 days after the "
                                         "deadline 2026-12-01T23:59:00Z: 20.00 points off "
                                         "(10% of the points a day, never below 50%); time "
                                         "from the instructor's submission times"),
              "%s", r.checks[0].reason);
    cr_expect(strstr(r.summary, "; late 2 days: 20.00 points off"), "%s", r.summary);
    gr_lab_free(&r);

    gr_lab_init(&r, "01-fake", 100);
    gr_lab_outcome(&r, GR_OUT_CORRECT, "correct");
    r.decided = 1;
    r.score = 85.5;
    gr_apply_deadline(&rub.labs[0], &times, "early", NULL, 0, &r);
    cr_expect_eq(r.score, 85.5);
    cr_expect_str_eq(r.checks[0].status, GR_PASS);
    gr_lab_free(&r);

    /* Not in the file: the files' modification times, said to be the student's clock. */
    char *file = gr_strf("%s/sub/labs/01-fake/kernels.c", dir);
    char *lab_dir = gr_strf("%s/sub/labs/01-fake", dir), *root = gr_strf("%s/sub", dir);
    LK_ASSERT_OK(gr_mkdir_p(lab_dir, 0755, &err), &err);
    LK_ASSERT_OK(gr_write_atomic_text(file, "int x;\n", &err), &err);
    struct timespec when[2] = {{1796169540 + 3600, 0}, {1796169540 + 3600, 0}};
    cr_assert_eq(utimensat(AT_FDCWD, file, when, 0), 0);
    gr_lab_init(&r, "01-fake", 100);
    gr_lab_outcome(&r, GR_OUT_CORRECT, "correct");
    r.decided = 1;
    r.score = 100;
    gr_apply_deadline(&rub.labs[0], &times, "other", root, 0, &r);
    cr_expect_eq(r.score, 90);
    cr_expect(strstr(r.checks[0].reason, "time from the files' modification times, the "
                                         "student's own clock: not in the submission times "
                                         "file"), "%s", r.checks[0].reason);
    gr_lab_free(&r);

    /* One of the two late days covered by a token: one day's penalty. */
    gr_lab_init(&r, "01-fake", 100);
    gr_lab_outcome(&r, GR_OUT_CORRECT, "correct");
    r.decided = 1;
    r.score = 85.5;
    gr_apply_deadline(&rub.labs[0], &times, "late", NULL, 1, &r);
    cr_expect_eq(r.score, 75.5, "%g", r.score);
    cr_expect(strstr(r.checks[0].reason, "; 1 day covered by late tokens: 10.00 points off"),
              "%s", r.checks[0].reason);
    gr_lab_free(&r);

    /* A missing lab is not late: nothing to apply. */
    gr_lab_init(&r, "01-fake", 100);
    gr_lab_outcome(&r, GR_OUT_MISSING, "not submitted");
    r.decided = 1;
    gr_apply_deadline(&rub.labs[0], &times, "late", NULL, 0, &r);
    cr_expect_eq(r.nchecks, 0);
    gr_lab_free(&r);

    static const struct { const char *text, *msg; } bad[] = {
        {"folder,when\n", "t.csv:1: unknown column 'when'"},
        {"folder,lab\n", "t.csv:1: the header needs the columns folder and submitted"},
        {"folder,submitted\na,yesterday\n", "t.csv:2: 'yesterday' is not a date: write it as "
                                            "2026-12-01T23:59:00Z"},
        {"folder,submitted\na\n", "t.csv:2: 1 fields, the header has 2"},
    };
    char *bad_path = gr_strf("%s/t.csv", dir);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        LK_ASSERT_OK(gr_write_atomic_text(bad_path, bad[i].text, &err), &err);
        gr_submission_times t;
        cr_expect_eq(gr_submission_times_read(bad_path, &t, &err), -1, "accepted %s",
                     bad[i].text);
        cr_expect(strstr(err.msg, bad[i].msg), "'%s' lacks '%s'", err.msg, bad[i].msg);
    }
    free(bad_path);
    free(file);
    free(lab_dir);
    free(root);
    free(times_path);
    gr_submission_times_free(&times);
    gr_rubric_free(&rub);
    gr_test_cleanup(dir);
}

/* The course's tokens are spent in rubric order on the days each lab is late, whichever labs
   a run grades; the rubric reads them outside the lab blocks, once. */
Test(course, late_tokens_cover_the_first_late_days_of_the_course)
{
    char *one = fake_rubric_with("    deadline 2026-12-01T23:59:00Z\n    late per-day 10 floor 0");
    char *two = gr_replace_all(one, "lab 01-fake", "lab 02-fake");
    char *text = gr_strf("late-tokens 3\n%s%s", one, two);
    gr_rubric rub;
    lk_error err;
    LK_ASSERT_OK(gr_rubric_parse("rubric.txt", text, &rub, &err), &err);
    cr_assert_eq(rub.late_tokens, 3);
    char *dir = gr_test_dir();
    char *path = gr_strf("%s/times.csv", dir);
    LK_ASSERT_OK(gr_write_atomic_text(path, "folder,lab,submitted\n"
                                      "a,01-fake,2026-12-03T10:00:00Z\n"
                                      "a,02-fake,2026-12-04T10:00:00Z\n"
                                      "b,,2026-12-01T10:00:00Z\n", &err), &err);
    gr_submission_times times;
    LK_ASSERT_OK(gr_submission_times_read(path, &times, &err), &err);
    int days[2];
    gr_plan_late_tokens(&rub, &times, "a", NULL, days);
    cr_expect(days[0] == 2 && days[1] == 1, "2 days late then 3: tokens cover %d and %d",
              days[0], days[1]);
    gr_plan_late_tokens(&rub, &times, "b", NULL, days);
    cr_expect(days[0] == 0 && days[1] == 0, "on time: no token spent");
    gr_rubric_free(&rub);
    free(text);

    static const struct { const char *text, *msg; } bad[] = {
        {"late-tokens\n", "rubric.txt:1: late-tokens: write late-tokens N"},
        {"late-tokens 2\nlate-tokens 3\n", "rubric.txt:2: late-tokens given twice (line 1)"},
        {"late-tokens many\n", "rubric.txt:1: late-tokens: 'many' is not a whole number"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        text = gr_strf("%s%s", bad[i].text, one);
        cr_expect_eq(gr_rubric_parse("rubric.txt", text, &rub, &err), -1, "accepted %s",
                     bad[i].text);
        cr_expect(strstr(err.msg, bad[i].msg), "'%s' lacks '%s'", err.msg, bad[i].msg);
        free(text);
    }
    gr_submission_times_free(&times);
    free(path);
    free(one);
    free(two);
    gr_test_cleanup(dir);
}

/* The fastest correct submissions of the class get the contest's points, rank 1 the most,
   equal speeds the same rank; an incorrect or implausible one is not ranked. */
Test(course, the_speed_contest_rewards_the_fastest_correct_submissions)
{
    char *text = fake_rubric_with("    contest points 6 top 3");
    gr_rubric rub;
    lk_error err;
    LK_ASSERT_OK(gr_rubric_parse("rubric.txt", text, &rub, &err), &err);
    free(text);
    cr_assert(rub.labs[0].contest_points == 6 && rub.labs[0].contest_top == 3);
    static const struct { double ratio; const char *outcome; int implausible; double bonus; }
        runs[] = {{0.9, GR_OUT_CORRECT, 0, 2}, {1.2, GR_OUT_CORRECT, 0, 6},
                  {1.2, GR_OUT_CORRECT, 0, 6}, {0.5, GR_OUT_CORRECT, 0, 0},
                  {3.0, GR_OUT_INCORRECT, 0, 0}, {5.0, GR_OUT_CORRECT, 1, 0}};
    enum { N = sizeof runs / sizeof runs[0] };
    gr_lab_result r[N];
    gr_student st[N];
    for (int i = 0; i < N; i++) {
        gr_lab_init(&r[i], "01-fake", 100);
        gr_lab_outcome(&r[i], runs[i].outcome, "graded");
        r[i].decided = 1;
        r[i].score = 50;
        r[i].perf.measured = 1;
        r[i].perf.have_solution = 1;
        r[i].perf.implausible = runs[i].implausible;
        r[i].perf.score.ratio.median = runs[i].ratio;
        st[i] = (gr_student){.name = (char *)"s", .dir = (char *)"s", .labs = &r[i],
                             .nlabs = 1, .done = 1};
    }
    cr_assert_eq(gr_award_contest(&rub.labs[0], 0, st, N), 4);
    for (int i = 0; i < N; i++)
        cr_expect_eq(r[i].score, 50 + runs[i].bonus, "submission %d: %g", i, r[i].score);
    cr_expect(strstr(r[0].checks[0].reason, "rank 3 of 4 correct submissions at 0.900x the "
                                            "solution's speed: 2.00 contest points (top 3"),
              "%s", r[0].checks[0].reason);
    cr_expect(strstr(r[1].summary, "; contest rank 1: +6.00"), "%s", r[1].summary);
    cr_expect_eq(r[4].nchecks, 0, "an incorrect lab is not ranked");
    for (int i = 0; i < N; i++)
        gr_lab_free(&r[i]);
    gr_rubric_free(&rub);

    static const char *const bad[] = {"    contest points 5", "    contest points 5 top 0",
                                      "    contest points 5 top 2.5"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        text = fake_rubric_with(bad[i]);
        cr_expect_eq(gr_rubric_parse("rubric.txt", text, &rub, &err), -1, "accepted %s",
                     bad[i]);
        cr_expect(strncmp(err.msg, "rubric.txt:", 11) == 0 && strstr(err.msg, "contest"),
                  "%s", err.msg);
        free(text);
    }
}

/* ---- resubmissions ---------------------------------------------------------------------- */

static gr_lab_result attempt(int decided, double score)
{
    gr_lab_result r;
    gr_lab_init(&r, "01-fake", 100);
    gr_lab_outcome(&r, decided ? GR_OUT_CORRECT : GR_OUT_GPU_NOT_RUN, "attempt");
    r.decided = decided;
    r.score = score;
    return r;
}

/* The last attempt, or the best score (the later of equal ones); a best-of with an attempt
   not decided is not final either. */
Test(course, the_attempt_that_counts_is_the_last_or_the_best)
{
    gr_lab_result t[4] = {attempt(1, 40), attempt(1, 90), attempt(1, 90), attempt(1, 60)};
    cr_expect_eq(gr_pick_attempt(t, 4, 0), 3);
    cr_expect_eq(gr_pick_attempt(t, 4, 1), 2);
    t[1].decided = 0;
    cr_expect_eq(gr_pick_attempt(t, 4, 1), 1);
    for (int i = 0; i < 4; i++)
        gr_lab_free(&t[i]);
    char *text = fake_rubric_with("    resubmissions best");
    gr_rubric rub;
    lk_error err;
    LK_ASSERT_OK(gr_rubric_parse("rubric.txt", text, &rub, &err), &err);
    cr_assert(rub.labs[0].resubmit_best);
    gr_rubric_free(&rub);
    free(text);
    text = fake_rubric_with("    resubmissions first");
    cr_assert_eq(gr_rubric_parse("rubric.txt", text, &rub, &err), -1);
    cr_expect(strstr(err.msg, "resubmissions: 'first' is not a rule: write resubmissions best |"
                              " resubmissions last"), "%s", err.msg);
    free(text);
}

/* A student folder with attempts/: each attempt graded on its own (2 before 10), the last one
   counts by default, and the report says which and what the others scored. */
Test(course, a_student_s_attempts_are_each_graded_and_one_counts, .timeout = 600)
{
    char *dir = gr_test_dir();
    char *subs = gr_strf("%s/class", dir), *out = gr_strf("%s/out", dir);
    char *log = gr_strf("%s/grade.log", dir);
    put_student_text(subs, "multi/attempts/1", DOES_NOT_COMPILE);
    put_student_file(subs, "multi/attempts/2", "labs/01-straightforward/kernels.cu");
    put_student_text(subs, "multi/attempts/10", DOES_NOT_COMPILE);
    const char *args[] = {"--submissions", subs, "--out", out, "--no-gpu", "--lab",
                          "01-straightforward", NULL};
    int status = gr_test_run_grader(args, log);
    char *console = read_out(dir, "grade.log");
    cr_assert_eq(status, 0, "%s", console);
    free(console);
    char *md = read_out(out, "students/multi/report.md");
    cr_expect(strstr(md, "| policy | resubmissions | pass | last of 3 attempts: 10 counts (1 "
                         "0.00; 2 0.00; 10 0.00) |"), "%s", md);
    cr_expect(strstr(md, "| 01-straightforward | build-failed |"), "the last attempt:\n%s", md);
    char *saved = gr_strf("%s/students/multi/attempts/2/labs/01-straightforward.json", out);
    lk_error err;
    char *json = gr_read_file(saved, 1 << 20, NULL, &err);
    cr_assert_not_null(json, "%s", err.msg);
    cr_expect(strstr(json, "\"outcome\":\"skeleton\""), "%s", json);
    free(json);
    free(saved);
    char *book = read_out(out, "gradebook.csv");
    cr_expect(strstr(book, "\nmulti,not gradable,"), "%s", book);
    free(book);
    free(md);
    free(log);
    free(out);
    free(subs);
    gr_test_cleanup(dir);
}
