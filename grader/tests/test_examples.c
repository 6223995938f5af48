/* The example submissions (grader/examples) graded end to end: each must get exactly the
   outcome and score that grader/examples/README.md documents, the GPU columns on a machine
   with a GPU, the others without. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "grader_testing.h"
#include "jsonr.h"
#include "labkit/testing.h"
#include "result.h"

typedef struct row {
    char name[64], gpu_outcome[32], gpu_score[32], mentions[96], cpu_outcome[32], cpu_score[32];
} row;

static void trim(char *s)
{
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\n'))
        s[--n] = '\0';
    size_t k = strspn(s, " ");
    memmove(s, s + k, strlen(s + k) + 1);
}

/* The table rows of the README: | example | what | outcome | score | mentions | outcome | score | */
static int read_table(row *rows, int max)
{
    char path[512];
    lk_error err;
    char *text = gr_read_file(lk_test_path(path, sizeof path, "grader/examples/README.md"),
                              1 << 20, NULL, &err);
    cr_assert_not_null(text, "%s", err.msg);
    int n = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        if (line[0] != '|' || strstr(line, "---") || strstr(line, "| example |"))
            continue;
        char *cells[8];
        int k = 0;
        for (char *p = line + 1; k < 8;) {
            char *bar = strchr(p, '|');
            if (!bar)
                break;
            *bar = '\0';
            cells[k++] = p;
            p = bar + 1;
        }
        cr_assert_eq(k, 7, "README table row with %d cells instead of 7", k);
        for (int i = 0; i < 7; i++)
            trim(cells[i]);
        cr_assert(n < max);
        row *r = &rows[n++];
        snprintf(r->name, sizeof r->name, "%s", cells[0]);
        snprintf(r->gpu_outcome, sizeof r->gpu_outcome, "%s", cells[2]);
        snprintf(r->gpu_score, sizeof r->gpu_score, "%s", cells[3]);
        snprintf(r->mentions, sizeof r->mentions, "%s", cells[4]);
        snprintf(r->cpu_outcome, sizeof r->cpu_outcome, "%s", cells[5]);
        snprintf(r->cpu_score, sizeof r->cpu_score, "%s", cells[6]);
    }
    free(text);
    return n;
}

static void check_score(const char *name, const char *want, const gr_json *lab)
{
    const gr_json *decided = gr_json_get(lab, "decided");
    int is_decided = decided && decided->kind == GR_JSON_BOOL && decided->number != 0;
    double score = gr_json_num(lab, "score", -1);
    if (strcmp(want, "-") == 0) {
        cr_expect(!is_decided, "%s: documented without a final score, got %.2f", name, score);
        return;
    }
    cr_expect(is_decided, "%s: no final score (documented %s)", name, want);
    /* "a..b" or "a"; not sscanf("%lf..%lf"): strtod reads "95." as a number. */
    const char *dots = strstr(want, "..");
    double lo = atof(want), hi = dots ? atof(dots + 2) : lo;
    cr_expect(score >= lo - 0.005 && score <= hi + 0.005, "%s: score %.2f, documented %s", name,
              score, want);
}

Test(examples, every_example_gets_its_documented_outcome, .timeout = 3600)
{
    row rows[64];
    int n = read_table(rows, 64);
    char *dir = gr_test_dir();
    char *out = gr_strf("%s/report", dir), *log = gr_strf("%s/grade.log", dir);
    char examples[512];
    lk_test_path(examples, sizeof examples, "grader/examples");
    const char *args[] = {"--submissions", examples, "--out", out, "--seed", "12345",
                          "--junit", "--gradescope", NULL};
    int status = gr_test_run_grader(args, log);
    lk_error err;
    char *console = gr_read_file(log, 1 << 22, NULL, &err);
    cr_assert_not_null(console);

    /* Every example folder is documented, every documented example exists. */
    DIR *d = opendir(examples);
    cr_assert_not_null(d);
    int folders = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char *p = gr_strf("%s/%s", examples, e->d_name);
        if (e->d_name[0] != '.' && gr_is_dir(p)) {
            folders++;
            int found = 0;
            for (int i = 0; i < n; i++)
                found |= strcmp(rows[i].name, e->d_name) == 0;
            cr_expect(found, "example %s is not in the README's table", e->d_name);
        }
        free(p);
    }
    closedir(d);
    cr_assert_eq(folders, n, "%d example folders, %d README rows", folders, n);

    int gpu = -1;
    for (int i = 0; i < n; i++) {
        const row *r = &rows[i];
        char *path = gr_strf("%s/students/%s/report.json", out, r->name);
        char *text = gr_read_file(path, 1 << 24, NULL, &err);
        cr_assert_not_null(text, "%s: no report: %s\ngrader output:\n%s", r->name, err.msg,
                           console);
        gr_json *j = gr_json_parse(text, path, &err);
        cr_assert_not_null(j, "%s", err.msg);
        if (gpu < 0)
            gpu = gr_json_str(gr_json_get(j, "environment"), "gpu") != NULL;
        const gr_json *lab = gr_json_get(j, "labs")->child;
        while (lab && strcmp(gr_json_str(lab, "lab"), "01-straightforward") != 0)
            lab = lab->next;
        cr_assert_not_null(lab, "%s: no result for lab 01", r->name);
        const char *outcome = gr_json_str(lab, "outcome");
        const char *summary = gr_json_str(lab, "summary");
        const char *want = gpu ? r->gpu_outcome : r->cpu_outcome;
        cr_expect_str_eq(outcome, want, "%s: outcome %s (%s), documented %s", r->name, outcome,
                         summary, want);
        check_score(r->name, gpu ? r->gpu_score : r->cpu_score, lab);
        if (strcmp(outcome, GR_OUT_GPU_NOT_RUN) != 0) {
            cr_expect(strstr(summary, r->mentions), "%s: summary '%s' does not mention '%s'",
                      r->name, summary, r->mentions);
        } else {
            /* Everything a CPU can decide was decided; the GPU stages say they did not run. */
            for (const gr_json *c = gr_json_get(lab, "checks")->child; c; c = c->next) {
                const char *stage = gr_json_str(c, "stage");
                int gpu_stage = strcmp(stage, "correctness") == 0 ||
                                strcmp(stage, "performance") == 0;
                cr_expect_str_eq(gr_json_str(c, "status"), gpu_stage ? GR_NOT_RUN : GR_PASS,
                                 "%s: check %s", r->name, gr_json_str(c, "name"));
            }
        }
        gr_json_free(j);
        free(text);
        free(path);
        char *gs = gr_strf("%s/students/%s/results.json", out, r->name);
        cr_expect(gr_exists(gs), "no Gradescope results for %s", r->name);
        free(gs);
    }
    cr_expect_eq(status, gpu ? 0 : 4, "exit status %d\n%s", status, console);
    if (!gpu)
        cr_expect(strstr(console, "GPU STAGES NOT RUN"), "no loud line about the GPU stages");

    char *gb_path = gr_strf("%s/gradebook.csv", out);
    char *gb = gr_read_file(gb_path, 1 << 20, NULL, &err);
    cr_assert_not_null(gb);
    int lines = 0;
    for (char *p = gb; *p; p++)
        lines += *p == '\n';
    cr_expect_eq(lines, n + 1, "gradebook: %d lines for %d students\n%s", lines, n, gb);
    char *junit = gr_strf("%s/junit.xml", out);
    cr_expect(gr_exists(junit));
    free(junit);
    free(gb);
    free(gb_path);
    free(console);
    free(out);
    free(log);
    gr_test_cleanup(dir);
}
