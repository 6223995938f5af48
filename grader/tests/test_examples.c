/* The example submissions (grader/examples) graded end to end: each (example, lab) pair that
   grader/examples/README.md documents must get exactly the outcome and score it gives, the
   GPU columns on a machine with a GPU, the others without; every lab an example does not
   document must be `missing`. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grader_testing.h"
#include "jsonr.h"
#include "labkit/testing.h"
#include "result.h"

/* One row of the README's table: an example's result in one lab. */
typedef struct row {
    char name[64], lab[16], gpu_outcome[32], gpu_score[32], mentions[96], cpu_outcome[32],
        cpu_score[32];
    int seen; /* its lab was found in the example's report */
} row;

#define NCOLS 8

static void trim(char *s)
{
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\n'))
        s[--n] = '\0';
    size_t k = strspn(s, " ");
    memmove(s, s + k, strlen(s + k) + 1);
}

/* The table rows of the README:
   | example | lab | what | outcome | score | mentions | outcome | score |
   with the lab as its two-digit number (`01` for 01-straightforward). */
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
        char *cells[NCOLS + 1];
        int k = 0;
        for (char *p = line + 1; k < NCOLS + 1;) {
            char *bar = strchr(p, '|');
            if (!bar)
                break;
            *bar = '\0';
            cells[k++] = p;
            p = bar + 1;
        }
        cr_assert_eq(k, NCOLS, "README table row with %d cells instead of %d: %s", k, NCOLS,
                     line);
        for (int i = 0; i < NCOLS; i++)
            trim(cells[i]);
        cr_assert(n < max);
        row *r = &rows[n++];
        memset(r, 0, sizeof *r);
        snprintf(r->name, sizeof r->name, "%s", cells[0]);
        snprintf(r->lab, sizeof r->lab, "%s", cells[1]);
        cr_assert(strlen(r->lab) == 2 && r->lab[0] >= '0' && r->lab[0] <= '9' &&
                      r->lab[1] >= '0' && r->lab[1] <= '9',
                  "README row of %s: lab '%s' is not a two-digit lab number", r->name, r->lab);
        for (int i = 0; i < n - 1; i++)
            cr_assert(strcmp(rows[i].name, r->name) != 0 || strcmp(rows[i].lab, r->lab) != 0,
                      "README: two rows for %s, lab %s", r->name, r->lab);
        snprintf(r->gpu_outcome, sizeof r->gpu_outcome, "%s", cells[3]);
        snprintf(r->gpu_score, sizeof r->gpu_score, "%s", cells[4]);
        snprintf(r->mentions, sizeof r->mentions, "%s", cells[5]);
        snprintf(r->cpu_outcome, sizeof r->cpu_outcome, "%s", cells[6]);
        snprintf(r->cpu_score, sizeof r->cpu_score, "%s", cells[7]);
    }
    free(text);
    return n;
}

/* The row documenting @p name's lab @p lab (a folder name, "01-straightforward"), or NULL. */
static row *find_row(row *rows, int n, const char *name, const char *lab)
{
    for (int i = 0; i < n; i++)
        if (strcmp(rows[i].name, name) == 0 && strlen(lab) > 2 && lab[2] == '-' &&
            strncmp(rows[i].lab, lab, 2) == 0)
            return &rows[i];
    return NULL;
}

static void check_score(const char *name, const char *want, const gr_json *lab)
{
    const gr_json *decided = gr_json_get(lab, "decided");
    int is_decided = cJSON_IsTrue(decided);
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

/* A documented (example, lab) pair: the outcome, score and reason of its row. */
static void check_documented(const row *r, const gr_json *lab, int gpu)
{
    char label[128];
    snprintf(label, sizeof label, "%s, lab %s", r->name, r->lab);
    const char *outcome = gr_json_str(lab, "outcome");
    const char *summary = gr_json_str(lab, "summary");
    const char *want = gpu ? r->gpu_outcome : r->cpu_outcome;
    cr_expect_str_eq(outcome, want, "%s: outcome %s (%s), documented %s", label, outcome,
                     summary, want);
    check_score(label, gpu ? r->gpu_score : r->cpu_score, lab);
    if (strcmp(outcome, GR_OUT_GPU_NOT_RUN) != 0) {
        cr_expect(strstr(summary, r->mentions), "%s: summary '%s' does not mention '%s'", label,
                  summary, r->mentions);
    } else {
        /* Everything a CPU can decide was decided; the GPU stages say they did not run. */
        for (const gr_json *c = gr_json_get(lab, "checks")->child; c; c = c->next) {
            const char *stage = gr_json_str(c, "stage");
            int gpu_stage = strcmp(stage, "correctness") == 0 ||
                            strcmp(stage, "performance") == 0;
            cr_expect_str_eq(gr_json_str(c, "status"), gpu_stage ? GR_NOT_RUN : GR_PASS,
                             "%s: check %s", label, gr_json_str(c, "name"));
        }
    }
}

/* A lab the example does not hand in (no row in the table): missing, 0 points. */
static void check_undocumented(const char *name, const char *labname, const gr_json *lab)
{
    char label[160];
    snprintf(label, sizeof label, "%s, lab %s (not in the README's table)", name, labname);
    const char *outcome = gr_json_str(lab, "outcome");
    cr_expect_str_eq(outcome, GR_OUT_MISSING, "%s: outcome %s (%s), expected %s: document the "
                     "lab in the table or remove its file", label, outcome,
                     gr_json_str(lab, "summary"), GR_OUT_MISSING);
    check_score(label, "0", lab);
}

/* The first file called @p name under @p dir, outside run folders (malloc'd), or NULL. */
static char *find_named(const char *dir, const char *name)
{
    DIR *d = opendir(dir);
    if (!d)
        return NULL;
    char *found = NULL;
    struct dirent *e;
    while (!found && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char *p = gr_strf("%s/%s", dir, e->d_name);
        if (strcmp(e->d_name, name) == 0)
            found = gr_xstrdup(p);
        else if (gr_is_dir(p) && strcmp(e->d_name, "run") != 0)
            found = find_named(p, name);
        free(p);
    }
    closedir(d);
    return found;
}

Test(examples, every_example_gets_its_documented_outcome, .timeout = 3600)
{
    static row rows[256];
    int n = read_table(rows, 256);
    char *dir = gr_test_dir();
    char *out = gr_strf("%s/report", dir), *log = gr_strf("%s/grade.log", dir);
    char examples[512];
    lk_test_path(examples, sizeof examples, "grader/examples");
    /* LK_TEST_GPUS=all (or N, LIST): the class spread over a machine's GPUs (--gpus), which
       must give every row's outcome as one GPU does. */
    const char *gpus = getenv("LK_TEST_GPUS");
    const char *args[] = {"--submissions", examples, "--out", out, "--seed", "12345",
                          "--junit", "--gradescope", gpus && *gpus ? "--gpus" : NULL, gpus, NULL};
    int status = gr_test_run_grader(args, log);
    lk_error err;
    char *console = gr_read_file(log, 1 << 22, NULL, &err);
    cr_assert_not_null(console);

    /* Every example folder has at least one row, every row's example exists. */
    static char names[64][256];
    int folders = 0;
    DIR *d = opendir(examples);
    cr_assert_not_null(d);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char *p = gr_strf("%s/%s", examples, e->d_name);
        if (e->d_name[0] != '.' && gr_is_dir(p)) {
            cr_assert(folders < 64, "more than 64 example folders");
            snprintf(names[folders++], sizeof names[0], "%s", e->d_name);
            int found = 0;
            for (int i = 0; i < n; i++)
                found |= strcmp(rows[i].name, e->d_name) == 0;
            cr_expect(found, "example %s has no row in the README's table", e->d_name);
        }
        free(p);
    }
    closedir(d);
    for (int i = 0; i < n; i++) {
        int found = 0;
        for (int k = 0; k < folders; k++)
            found |= strcmp(rows[i].name, names[k]) == 0;
        cr_expect(found, "the README's table documents %s (lab %s), but there is no folder "
                  "grader/examples/%s", rows[i].name, rows[i].lab, rows[i].name);
    }

    /* Every lab of every example's report: its row, or `missing` when it has none. */
    int gpu = -1, nlabs = -1;
    for (int k = 0; k < folders; k++) {
        const char *name = names[k];
        char *path = gr_strf("%s/students/%s/report.json", out, name);
        char *text = gr_read_file(path, 1 << 24, NULL, &err);
        cr_assert_not_null(text, "%s: no report: %s\ngrader output:\n%s", name, err.msg,
                           console);
        gr_json *j = gr_json_parse(text, path, &err);
        cr_assert_not_null(j, "%s", err.msg);
        if (gpu < 0)
            gpu = gr_json_str(gr_json_get(j, "environment"), "gpu") != NULL;
        const gr_json *labs = gr_json_get(j, "labs");
        const int count = gr_json_count(labs);
        cr_assert(count > 0, "%s: the report has no lab results", name);
        if (nlabs < 0)
            nlabs = count;
        cr_expect_eq(count, nlabs, "%s: %d lab results, %s has %d: every example is graded "
                     "on every lab of the kit", name, count, names[0], nlabs);
        for (const gr_json *lab = labs->child; lab; lab = lab->next) {
            const char *labname = gr_json_str(lab, "lab");
            cr_assert_not_null(labname, "%s: a lab result without a name", name);
            row *r = find_row(rows, n, name, labname);
            if (r) {
                r->seen = 1;
                check_documented(r, lab, gpu);
            } else {
                check_undocumented(name, labname, lab);
            }
        }
        gr_json_free(j);
        free(text);
        free(path);
        char *gs = gr_strf("%s/students/%s/results.json", out, name);
        cr_expect(gr_exists(gs), "no Gradescope results for %s", name);
        free(gs);
    }
    for (int i = 0; i < n; i++)
        cr_expect(rows[i].seen, "the README's table documents %s, lab %s, but the grader "
                  "graded no lab %s-...", rows[i].name, rows[i].lab, rows[i].lab);
    cr_expect_eq(status, gpu ? 0 : 4, "exit status %d\n%s", status, console);
    if (!gpu) {
        cr_expect(strstr(console, "GPU STAGES NOT RUN"), "no loud line about the GPU stages");
        /* The kit's reason, once: "GPU: no GPU on this machine", not "no CUDA device: no...". */
        cr_expect(strstr(console, "GPU: no GPU on this machine") ||
                      strstr(console, "GPU: GPU stages disabled (--no-gpu)"),
                  "the reason is not the kit's: %s", console);
        cr_expect(!strstr(console, "no CUDA device"), "%s", console);
    }

    /* symbol-lookup plants this file wherever it can: nothing may remain outside its run
       folders (which the grader deletes or keeps under OUT/work/.../run). */
    static const char planted[] = "labkit-escape-symbol-lookup.txt";
    char *in_kit = gr_strf("%s/%s", LK_TOP_DIR, planted), *in_tmp = gr_strf("/tmp/%s", planted);
    cr_expect(!gr_exists(in_kit), "a student run wrote into the kit: %s", in_kit);
    cr_expect(!gr_exists(in_tmp), "a student run wrote into the machine's /tmp: %s", in_tmp);
    char *found = find_named(out, planted);
    cr_expect_null(found, "a student run wrote outside its run folder: %s", found);
    free(found);
    free(in_kit);
    free(in_tmp);

    /* One gradebook line per student (example), plus the header. */
    char *gb_path = gr_strf("%s/gradebook.csv", out);
    char *gb = gr_read_file(gb_path, 1 << 20, NULL, &err);
    cr_assert_not_null(gb);
    int lines = 0;
    for (char *p = gb; *p; p++)
        lines += *p == '\n';
    cr_expect_eq(lines, folders + 1, "gradebook: %d lines for %d students\n%s", lines, folders,
                 gb);
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
