/* The GPU stages (correctness runs, reference cache, hidden seeds, A/B performance rounds,
   failures of every kind) exercised without a GPU: a stand-in kit (grader/tests/fakekit) has
   a lab whose driver takes the real drivers' options and runs the student's code on the CPU,
   and the grader is told to run the GPU stages anyway (--assume-gpu). */
#define _GNU_SOURCE /* sched_getaffinity */
#include <math.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "grader_testing.h"
#include "jsonr.h"
#include "labkit/testing.h"
#include "labkit/timing.h"
#include "grade.h"
#include "result.h"

static char *dir;

static void setup(void)
{
    dir = gr_test_dir();
}

static void teardown(void)
{
    gr_test_cleanup(dir);
}

TestSuite(gpu_stages, .init = setup, .fini = teardown, .timeout = 900);

static void write_text(const char *path, const char *text)
{
    lk_error err;
    char *copy = gr_xstrdup(path);
    *strrchr(copy, '/') = '\0';
    LK_ASSERT_OK(gr_mkdir_p(copy, 0755, &err), &err);
    LK_ASSERT_OK(gr_write_atomic_text(path, text, &err), &err);
    free(copy);
}

static char *kit_file(const char *rel)
{
    char path[512];
    lk_error err;
    char *text = gr_read_file(lk_test_path(path, sizeof path, rel), 1 << 20, NULL, &err);
    cr_assert_not_null(text, "%s", err.msg);
    return text;
}

static void copy_in(const char *rel, const char *dst)
{
    char *text = kit_file(rel);
    write_text(dst, text);
    free(text);
}

static const struct {
    const char *name, *code;
} students[] = {
    {"good", ""},
    {"good-2", ""},
    {"good-3", ""},
    {"good-4", ""},
    {"good-5", ""},
    {"good-6", ""},
    /* Right only where the grader pinned its GPU by UUID (--gpus): wrong anywhere else. */
    {"pinned", "{ const char *gpu = getenv(\"CUDA_VISIBLE_DEVICES\"); if (!gpu || "
               "strncmp(gpu, \"GPU-\", 4) != 0) h_out[0] += 1.0; }"},
    {"wrong", "if (rows > 2 && cols > 2) h_out[sciddicat_at(rows / 2, cols / 2, cols)] += 1.0;"},
    {"crash", "{ char *label = getenv(\"LABKIT_NO_SUCH_VARIABLE\"); label[0] = 'x'; }"},
    {"hang", "for (;;) { }"},
    {"slow", "if ((size_t)rows * cols > 10000) { struct timespec ts = {1, 0}; "
             "nanosleep(&ts, NULL); }"},
    /* Right, and a second on every small grid: correctness runs long enough to overlap. */
    {"nap", "if ((size_t)rows * cols <= 10000) { struct timespec ts = {1, 0}; "
            "nanosleep(&ts, NULL); }"},
    {"flood", "for (;;) printf(\"debug: step %d of %d\\n\", steps, rows);"},
    /* Right, but 8 s per call on the performance grid: past a 6 s limit. */
    {"too-slow", "if ((size_t)rows * cols > 10000) { struct timespec ts = {8, 0}; "
                 "nanosleep(&ts, NULL); }"},
    /* Under mpirun: the process of rank 1 crashes, or hangs; rank 0 is right. */
    {"rank-crash", "{ const char *rank = getenv(\"OMPI_COMM_WORLD_RANK\"); if (rank && "
                   "strcmp(rank, \"1\") == 0) { volatile char *p = NULL; *p = 1; } }"},
    {"rank-hang", "{ const char *rank = getenv(\"OMPI_COMM_WORLD_RANK\"); if (rank && "
                  "strcmp(rank, \"1\") == 0) for (;;) { } }"},
    /* On the performance grid, the output of the published instance (valley:160x160:3),
       whatever the input: an answer recorded in advance and replayed. */
    /* Right on every scored dataset; on the stretch dataset's 17 x 15 grid wrong, or not
       attempted (the error says NOT_ATTEMPTED, as lab 05's stretch returns). */
    {"stretch-wrong", "if (rows == 17 && cols == 15) h_out[sciddicat_at(8, 7, cols)] += 1.0;"},
    {"stretch-skip", "if (rows == 17 && cols == 15) return lk_fail(err, \"fake_run returned "
                     "LAB01_NOT_ATTEMPTED: the stretch is not attempted\");"},
    {"replay", "if ((size_t)rows * cols > 10000) { sciddicat_spec sp; sciddicat sim; "
               "if (sciddicat_spec_parse(\"valley:160x160:3\", &sp, err) != 0 || "
               "sciddicat_load_generated(&sp, &sim, err) != 0) return -1; "
               "int rc = sciddicat_serial(&sim, steps, h_out, NULL, err); "
               "sciddicat_free(&sim); return rc; }"},
};

/* The class of the first test: every kind of failure. */
static const char *const failures[] = {"good", "wrong", "crash", "hang", "slow", "flood",
                                       "replay", NULL};

/* Copies the headers of the real kit's folder @p rel into the stand-in @p kit. */
static void copy_headers_in(const char *kit, const char *rel)
{
    char *real = gr_strf("%s/%s", LK_TOP_DIR, rel);
    DIR *hd = opendir(real);
    cr_assert_not_null(hd, "%s", real);
    struct dirent *e;
    while ((e = readdir(hd)) != NULL) {
        size_t len = strlen(e->d_name);
        if (e->d_name[0] == '.' || len < 3 || strcmp(e->d_name + len - 2, ".h") != 0)
            continue;
        char *file = gr_strf("%s/%s", rel, e->d_name), *p;
        copy_in(file, p = gr_strf("%s/%s", kit, file));
        free(p);
        free(file);
    }
    closedir(hd);
    free(real);
}

/* The stand-in kit and a class of the stand-in students named in @p names (the solution is
   "good"); returns the kit folder. */
static char *make_kit(char **subs, const char *const *names)
{
    char *kit = gr_strf("%s/kit", dir);
    char *lab = gr_strf("%s/labs/01-fake", kit);
    char *p;
    char *mk = kit_file("grader/tests/fakekit/Makefile.in");
    char *mk2 = gr_replace_all(mk, "@LIB@", GR_LK_LIB);
    write_text(p = gr_strf("%s/Makefile", lab), mk2);
    free(p);
    free(mk);
    free(mk2);
    write_text(p = gr_strf("%s/lab.h", lab), "/* stand-in lab: see fake.h */\n");
    free(p);
    copy_in("grader/tests/fakekit/driver.c", p = gr_strf("%s/driver.c", lab));
    free(p);
    copy_in("labs/01-straightforward/serial.c", p = gr_strf("%s/serial.c", lab));
    free(p);
    copy_in("grader/tests/fakekit/fake.h", p = gr_strf("%s/fake.h", lab));
    free(p);
    copy_in("grader/tests/fakekit/rubric", p = gr_strf("%s/rubric", lab));
    free(p);
    copy_in("grader/deps.mk", p = gr_strf("%s/grader/deps.mk", kit));
    free(p);
    copy_in("common/common.mk", p = gr_strf("%s/common/common.mk", kit));
    free(p);
    copy_in("datasets/MANIFEST", p = gr_strf("%s/datasets/MANIFEST", kit));
    free(p);
    static const char *const parts[] = {"header", "dem", "source"};
    for (int i = 0; i < 3; i++) {
        char *rel = gr_strf("datasets/sciddicat/sciddicat-tiny_%s.txt", parts[i]);
        copy_in(rel, p = gr_strf("%s/%s", kit, rel));
        free(p);
        free(rel);
    }
    write_text(p = gr_strf("%s/Makefile", kit), "# stand-in kit: the real library is used\nlib:\n");
    free(p);
    /* A snapshot of the kit's and the model's headers: the stand-in kit's hash must not
       follow edits of the real tree while the test runs. */
    copy_headers_in(kit, "common/include/labkit");
    copy_headers_in(kit, "common/models/sciddicat");

    char *tmpl = kit_file("grader/tests/fakekit/student.c.in");
    *subs = gr_strf("%s/class", dir);
    for (size_t i = 0; i < sizeof students / sizeof students[0]; i++) {
        int wanted = strcmp(students[i].name, "good") == 0 ? 2 : 0;
        for (int k = 0; names[k]; k++)
            wanted |= strcmp(names[k], students[i].name) == 0;
        if (!wanted)
            continue;
        char *code = gr_replace_all(tmpl, "@MISBEHAVE@", students[i].code);
        if (wanted & 1) {
            write_text(p = gr_strf("%s/%s/labs/01-fake/kernels.c", *subs, students[i].name), code);
            free(p);
        }
        if (wanted & 2) {
            write_text(p = gr_strf("%s/solutions/01-fake/kernels.c", kit), code);
            free(p);
        }
        free(code);
    }
    free(tmpl);
    free(lab);
    return kit;
}

static gr_json *lab_of(const char *out, const char *student, char **text)
{
    char *path = gr_strf("%s/students/%s/report.json", out, student);
    lk_error err;
    *text = gr_read_file(path, 1 << 24, NULL, &err);
    cr_assert_not_null(*text, "%s", err.msg);
    gr_json *j = gr_json_parse(*text, path, &err);
    cr_assert_not_null(j, "%s", err.msg);
    free(path);
    return j;
}

static const gr_json *first_lab(const gr_json *j)
{
    return gr_json_get(j, "labs")->child;
}

/* The first check whose status is @p status, or NULL. */
static const gr_json *check_with(const gr_json *lab, const char *status)
{
    for (const gr_json *c = gr_json_get(lab, "checks")->child; c; c = c->next)
        if (strcmp(gr_json_str(c, "status"), status) == 0)
            return c;
    return NULL;
}

static int count_files(const char *path, const char *suffix)
{
    DIR *d = opendir(path);
    if (!d)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        n += len > strlen(suffix) && strcmp(e->d_name + len - strlen(suffix), suffix) == 0;
    }
    closedir(d);
    return n;
}

/* The correctness runs started in @p run: each has a box of its own there, named after its
   dataset (d0, d1, ...), with its stdout in meta/. */
static int count_started_runs(const char *run)
{
    int n = 0;
    for (int i = 0; i < 64; i++) {
        char *stdout_path = gr_strf("%s/d%d/meta/stdout", run, i);
        n += gr_exists(stdout_path);
        free(stdout_path);
    }
    return n;
}

Test(gpu_stages, every_failure_becomes_a_verdict_and_good_work_is_timed_against_the_solution)
{
    char *subs;
    char *kit = make_kit(&subs, failures);
    char *out = gr_strf("%s/out", dir), *log = gr_strf("%s/grade.log", dir);
    char *lock = gr_strf("%s/gpu.lock", dir);
    /* Four correctness runs side by side: every verdict below must hold as for one at a time. */
    const char *args[] = {"--kit", kit, "--submissions", subs, "--out", out, "--seed", "777",
                          "--assume-gpu", "stand-in CPU driver", "--gpu-lock", lock, "--runs",
                          "4", NULL};
    int status = gr_test_run_grader(args, log);
    lk_error err;
    char *console = gr_read_file(log, 1 << 22, NULL, &err);
    cr_assert_eq(status, 0, "exit status %d:\n%s", status, console);

    char *text;
    gr_json *j = lab_of(out, "good", &text);
    const gr_json *lab = first_lab(j);
    cr_assert_str_eq(gr_json_str(lab, "outcome"), GR_OUT_CORRECT, "%s", gr_json_str(lab, "summary"));
    cr_assert_eq(gr_json_num(lab, "correctness", -1), 70);
    cr_assert_null(gr_json_get(lab, "seed"), "the seed is in the instructor's log only");
    const gr_json *perf = gr_json_get(lab, "performance_measurement");
    cr_assert(gr_json_true(perf, "measured"));
    cr_assert(gr_json_num(perf, "rounds", 0) >= 3);
    cr_assert_eq(gr_json_count(gr_json_get(perf, "solution_ms")), (int)gr_json_num(perf, "rounds", 0));
    double ratio = gr_json_num(gr_json_get(perf, "ratio_to_solution"), "median", 0);
    cr_assert(ratio > 0.5 && ratio < 2.0, "the same code as the solution runs at %.2f of its speed",
              ratio);
    cr_assert(gr_json_true(perf, "serial_extrapolated"), "40 steps timed from 5");
    cr_assert_null(check_with(lab, GR_FAIL), "a check of a correct lab failed");
    cr_assert(strstr(text, "hidden valley:13x11 (hidden seed) (30 steps)"), "%s", text);
    char *commands_log = gr_strf("%s/commands.log", out);
    char *commands = gr_read_file(commands_log, 1 << 24, NULL, &err);
    free(commands_log);
    cr_assert(strstr(commands, "--gen valley:13x11:779 "),
              "dataset i (public ones first) gets seed + i: %s", commands);
    char *checked = gr_strf("identical to the solution's output in each of the %d rounds (a "
                            "fresh instance each)", (int)gr_json_num(perf, "rounds", 0));
    cr_assert(strstr(text, checked), "performance output checked: %s", text);
    free(checked);
    cr_assert(strstr(text, "(valley:160x160 (hidden seed) to valley:160x160 (hidden seed))"),
              "%s", text);
    char *seeds = gr_strf("valley:160x160:%d ", 1776 + (int)gr_json_num(perf, "rounds", 0));
    cr_assert(strstr(commands, "valley:160x160:1777 ") && strstr(commands, seeds),
              "round i runs the instance with seed + 1000 + i: %s", commands);
    free(seeds);
    free(commands);
    cr_assert(strstr(text, "the only call of a fresh process (--once)"), "%s", text);
    cr_assert(gr_json_num(perf, "overhead_ms", -1) >= 0, "%s", text);
    gr_json_free(j);
    free(text);
    char *perf_dir = gr_strf("%s/work/students/good/01-fake/run/perf-0", out);
    cr_assert(!gr_exists(perf_dir), "a timed call's folder outlives it: %s", perf_dir);
    free(perf_dir);

    /* Replaying the published instance's output no longer fools the timed rounds. */
    j = lab_of(out, "replay", &text);
    lab = first_lab(j);
    cr_assert_str_eq(gr_json_str(lab, "outcome"), GR_OUT_INCORRECT, "%s", text);
    cr_assert_eq(gr_json_num(lab, "score", -1), 0);
    cr_assert(strstr(gr_json_str(lab, "summary"), "performance dataset: round 1, "
                                                  "valley:160x160 (hidden seed): ") &&
              strstr(gr_json_str(lab, "summary"), "cells differ"), "%s",
              gr_json_str(lab, "summary"));
    gr_json_free(j);
    free(text);

    j = lab_of(out, "wrong", &text);
    lab = first_lab(j);
    cr_assert_str_eq(gr_json_str(lab, "outcome"), GR_OUT_INCORRECT);
    cr_assert_eq(gr_json_num(lab, "score", -1), 0);
    const gr_json *bad = check_with(lab, GR_FAIL);
    cr_assert(strstr(gr_json_str(bad, "reason"), "md5"), "%s", gr_json_str(bad, "reason"));
    cr_assert(strstr(gr_json_str(bad, "detail"), "first differences"), "no explanation: %s",
              gr_json_str(bad, "detail"));
    cr_assert(strstr(text, "\"status\":\"not-run\",\"reason\":\"not measured"),
              "performance is not measured for an incorrect lab");
    gr_json_free(j);
    free(text);

    j = lab_of(out, "crash", &text);
    lab = first_lab(j);
    cr_assert_str_eq(gr_json_str(lab, "outcome"), GR_OUT_INCORRECT);
    cr_assert(strstr(gr_json_str(lab, "summary"), "crashed: SIGSEGV"), "%s",
              gr_json_str(lab, "summary"));
    gr_json_free(j);
    free(text);

    j = lab_of(out, "hang", &text);
    lab = first_lab(j);
    cr_assert_str_eq(gr_json_str(lab, "outcome"), GR_OUT_INCORRECT);
    cr_assert(strstr(gr_json_str(lab, "summary"), "5 s time limit"), "%s",
              gr_json_str(lab, "summary"));
    /* Its 4 datasets ran side by side (--runs 4), so each hit the limit; none started after
       a hang (one at a time, the mpirun test below sees the "not run" ones). */
    int timed_out = 0;
    for (const gr_json *c = gr_json_get(lab, "checks")->child; c; c = c->next)
        if (strcmp(gr_json_str(c, "stage"), "correctness") == 0 &&
            strstr(gr_json_str(c, "reason"), "5 s time limit"))
            timed_out++;
    cr_assert_eq(timed_out, 4, "%s", text);
    cr_assert(strstr(text, "\"name\":\"performance dataset: output\",\"status\":\"not-run\""),
              "%s", text);
    gr_json_free(j);
    free(text);

    j = lab_of(out, "flood", &text);
    lab = first_lab(j);
    cr_assert_str_eq(gr_json_str(lab, "outcome"), GR_OUT_INCORRECT);
    cr_assert(strstr(gr_json_str(lab, "summary"), "more than 1 MiB to stdout/stderr"), "%s",
              gr_json_str(lab, "summary"));
    cr_assert(strstr(gr_json_str(check_with(lab, GR_FAIL), "detail"), "debug: step"),
              "the head of the output is kept");
    gr_json_free(j);
    free(text);

    j = lab_of(out, "slow", &text);
    lab = first_lab(j);
    cr_assert_str_eq(gr_json_str(lab, "outcome"), GR_OUT_CORRECT);
    perf = gr_json_get(lab, "performance_measurement");
    ratio = gr_json_num(gr_json_get(perf, "ratio_to_solution"), "median", 1);
    cr_assert(ratio < 0.3, "a second of sleep per run, yet %.2f of the solution's speed", ratio);
    cr_assert_eq(gr_json_num(lab, "score", -1), 70);
    gr_json_free(j);
    free(text);

    /* Serial references are cached per dataset: a forced re-run with the same seed adds none. */
    char *cache = gr_strf("%s/cache/reference/01-fake", out);
    int refs = count_files(cache, ".json");
    cr_assert_eq(refs, 4, "%d cached references for 4 datasets", refs);
    const char *again[] = {"--kit", kit, "--submissions", subs, "--out", out, "--seed", "777",
                           "--assume-gpu", "stand-in", "--gpu-lock", lock, "--force",
                           "--only", "good", NULL};
    int st = gr_test_run_grader(again, log);
    char *log2 = gr_read_file(log, 1 << 22, NULL, &err);
    cr_assert_eq(st, 0, "re-run: %s", log2);
    cr_assert_eq(count_files(cache, ".json"), 4, "the cached references were not reused: %d\n%s", count_files(cache, ".json"), log2);
    free(log2);

    free(cache);
    free(console);
    free(kit);
    free(subs);
    free(out);
    free(log);
    free(lock);
}

/* Replace @p from (which must be there) by @p to in the stand-in kit's rubric. */
static void edit_rubric(const char *kit, const char *from, const char *to)
{
    char *path = gr_strf("%s/labs/01-fake/rubric", kit);
    lk_error err;
    char *text = gr_read_file(path, 1 << 20, NULL, &err);
    cr_assert_not_null(text, "%s", err.msg);
    cr_assert(strstr(text, from), "the stand-in rubric has no '%s'", from);
    char *edited = gr_replace_all(text, from, to);
    write_text(path, edited);
    free(edited);
    free(text);
    free(path);
}

/* The check called @p name, or NULL. */
static const gr_json *check_named(const gr_json *lab, const char *name)
{
    for (const gr_json *c = gr_json_get(lab, "checks")->child; c; c = c->next)
        if (strcmp(gr_json_str(c, "name"), name) == 0)
            return c;
    return NULL;
}

/* Lines of @p path that hold every one of @p parts (NULL-terminated). */
static int count_lines_with(const char *path, const char *const *parts)
{
    lk_error err;
    char *text = gr_read_file(path, 1 << 22, NULL, &err);
    cr_assert_not_null(text, "%s", err.msg);
    int n = 0;
    for (char *l = strtok(text, "\n"); l; l = strtok(NULL, "\n")) {
        int all = 1;
        for (const char *const *p = parts; *p && all; p++)
            all = strstr(l, *p) != NULL;
        n += all;
    }
    free(text);
    return n;
}

Test(gpu_stages, the_minimum_speedup_is_judged_against_the_given_version_timed_once)
{
    static const char *const names[] = {"good", "slow", NULL};
    char *subs;
    char *kit = make_kit(&subs, names);
    edit_rubric(kit, "min-speedup     0.1", "min-speedup     10\n    baseline given steps 5");
    char *out = gr_strf("%s/out", dir), *log = gr_strf("%s/grade.log", dir);
    char *lock = gr_strf("%s/gpu.lock", dir);
    const char *args[] = {"--kit", kit, "--submissions", subs, "--out", out, "--seed", "5",
                          "--assume-gpu", "stand-in CPU driver", "--gpu-lock", lock, "--runs",
                          "3", NULL};
    int status = gr_test_run_grader(args, log);
    lk_error err;
    char *console = gr_read_file(log, 1 << 22, NULL, &err);
    cr_assert_eq(status, 0, "exit status %d:\n%s", status, console);

    /* Each run has a box of its own: the session's command log lists them all. */
    char *commands = gr_strf("%s/commands.log", out);
    const char *const given0[] = {" --variant given ", " --steps 0 ", NULL};
    const char *const given5[] = {" --variant given ", " --steps 5 ", NULL};
    const char *const given[] = {" --variant given ", NULL};
    cr_assert_eq(count_lines_with(commands, given0), 1, "the given version: once on 0 steps");
    cr_assert_eq(count_lines_with(commands, given5), 1, "the given version: once on 5 steps");
    cr_assert_eq(count_lines_with(commands, given), 2, "the given version: timed once a session");
    free(commands);

    char *text;
    gr_json *j = lab_of(out, "good", &text);
    const gr_json *lab = first_lab(j);
    cr_assert_str_eq(gr_json_str(lab, "outcome"), GR_OUT_CORRECT, "%s", gr_json_str(lab, "summary"));
    const gr_json *perf = gr_json_get(lab, "performance_measurement");
    cr_assert_str_eq(gr_json_str(perf, "baseline"), "given");
    cr_assert_eq(gr_json_num(perf, "baseline_steps", 0), 5);
    cr_assert(gr_json_true(perf, "baseline_extrapolated"), "40 steps timed from 5");
    double base_ms = gr_json_num(perf, "baseline_ms", 0);
    cr_assert(base_ms > 5900 && base_ms < 40000, "40 steps of 150 ms sleep each took %.1f ms",
              base_ms);
    double over = gr_json_num(gr_json_get(perf, "speedup_vs_baseline"), "median", 0);
    cr_assert(over > 10, "the solution's own code is only %.1fx the given version", over);
    cr_assert(gr_json_num(lab, "performance", 0) > 0, "%s", gr_json_str(lab, "summary"));
    cr_assert(strstr(text, "x the given version --variant given (spread "), "%s", text);
    cr_assert_null(strstr(text, "below the minimum"), "%s", text);
    gr_json_free(j);
    free(text);
    char *md_path = gr_strf("%s/students/good/report.md", out);
    char *md = gr_read_file(md_path, 1 << 22, NULL, &err);
    cr_assert_not_null(md, "%s", err.msg);
    cr_assert(strstr(md, "| speedup vs the given version (`--variant given`) |"), "%s", md);
    cr_assert(strstr(md, "Given version (`--variant given`): "), "%s", md);
    cr_assert(strstr(md, "(extrapolated from a 5-step run)"), "%s", md);
    free(md);
    free(md_path);

    /* At least a second a run against about 6 s for the given version: below the minimum 10x. */
    j = lab_of(out, "slow", &text);
    lab = first_lab(j);
    cr_assert_str_eq(gr_json_str(lab, "outcome"), GR_OUT_CORRECT, "%s", gr_json_str(lab, "summary"));
    cr_assert_eq(gr_json_num(lab, "score", -1), 70);
    cr_assert_eq(gr_json_num(lab, "performance", -1), 0);
    perf = gr_json_get(lab, "performance_measurement");
    cr_assert_eq(gr_json_num(perf, "baseline_ms", 0), base_ms,
                 "every student is compared with the same timing of the given version");
    const char *why = gr_json_str(perf, "reason");
    cr_assert(strstr(why, "speedup vs the given version (--variant given) ") &&
              strstr(why, "x is below the minimum 10x: no performance points"), "%s", why);
    cr_assert(strstr(gr_json_str(lab, "summary"), "below the minimum 10x"), "%s",
              gr_json_str(lab, "summary"));
    gr_json_free(j);
    free(text);

    /* A re-run reuses the saved results, baseline and all, and times nothing again. */
    status = gr_test_run_grader(args, log);
    cr_assert_eq(status, 0, "re-run: exit status %d", status);
    /* The command log is the session's: the re-run's ran no given version. */
    char *recommands = gr_strf("%s/commands.log", out);
    cr_assert_eq(count_lines_with(recommands, given), 0, "nothing changed, yet it re-timed");
    free(recommands);
    j = lab_of(out, "slow", &text);
    lab = first_lab(j);
    perf = gr_json_get(lab, "performance_measurement");
    cr_assert_str_eq(gr_json_str(perf, "baseline"), "given");
    cr_assert_eq(gr_json_num(perf, "baseline_ms", 0), base_ms);
    cr_assert_eq(gr_json_num(gr_json_get(perf, "speedup_vs_baseline"), "n", 0),
                 gr_json_num(perf, "rounds", -1));
    cr_assert(strstr(gr_json_str(perf, "reason"), "below the minimum 10x"), "%s", text);
    gr_json_free(j);
    free(text);
    md_path = gr_strf("%s/students/slow/report.md", out);
    md = gr_read_file(md_path, 1 << 22, NULL, &err);
    cr_assert(strstr(md, "(reused: unchanged since)"), "%s", md);
    cr_assert(strstr(md, "Given version (`--variant given`): "), "%s", md);
    free(md);
    free(md_path);

    /* A given version the driver does not have is the kit's problem: the lab is not graded. */
    char *rubric = gr_strf("%s/labs/01-fake/rubric", kit);
    char *bad_rubric = gr_strf("%s/bad-rubric.txt", dir);
    char *good_text = gr_read_file(rubric, 1 << 20, NULL, &err);
    char *bad_text = gr_replace_all(good_text, "baseline given", "baseline nosuch");
    write_text(bad_rubric, bad_text);
    char *out2 = gr_strf("%s/out2", dir);
    const char *again[] = {"--kit", kit, "--submissions", subs, "--out", out2, "--seed", "5",
                           "--rubric", bad_rubric, "--assume-gpu", "stand-in", "--gpu-lock",
                           lock, "--only", "good", NULL};
    status = gr_test_run_grader(again, log);
    char *console2 = gr_read_file(log, 1 << 22, NULL, &err);
    cr_assert_eq(status, 1, "a kit problem must make the grader fail: %d\n%s", status, console2);
    j = lab_of(out2, "good", &text);
    lab = first_lab(j);
    cr_assert_str_eq(gr_json_str(lab, "outcome"), GR_OUT_ERROR, "%s", gr_json_str(lab, "summary"));
    const char *summary = gr_json_str(lab, "summary");
    cr_assert(strstr(summary, "not graded, the kit failed: timing the given version "
                              "(--variant nosuch) on valley:160x160 (hidden seed) (0 steps) "
                              "failed: ") &&
              strstr(summary, "unknown variant"), "%s", summary);
    gr_json_free(j);
    free(text);

    free(console2);
    free(out2);
    free(bad_text);
    free(good_text);
    free(bad_rubric);
    free(rubric);
    free(console);
    free(kit);
    free(subs);
    free(out);
    free(log);
    free(lock);
}

Test(gpu_stages, a_correct_student_too_slow_for_the_time_limit_keeps_its_correctness_points)
{
    static const char *const names[] = {"too-slow", NULL};
    char *subs;
    char *kit = make_kit(&subs, names);
    edit_rubric(kit, "run 5 performance 30", "run 5 performance 6");
    char *out = gr_strf("%s/out", dir), *log = gr_strf("%s/grade.log", dir);
    char *lock = gr_strf("%s/gpu.lock", dir);
    /* Without build jobs: every lab built when its turn comes (the other tests use them). */
    const char *args[] = {"--kit", kit, "--submissions", subs, "--out", out, "--seed", "5",
                          "--assume-gpu", "stand-in CPU driver", "--gpu-lock", lock,
                          "--jobs", "0", NULL};
    int status = gr_test_run_grader(args, log);
    lk_error err;
    char *console = gr_read_file(log, 1 << 22, NULL, &err);
    cr_assert_eq(status, 0, "exit status %d:\n%s", status, console);

    char *text;
    gr_json *j = lab_of(out, "too-slow", &text);
    const gr_json *lab = first_lab(j);
    cr_assert_str_eq(gr_json_str(lab, "outcome"), GR_OUT_CORRECT, "%s", gr_json_str(lab, "summary"));
    cr_assert_eq(gr_json_num(lab, "correctness", -1), 70);
    cr_assert_eq(gr_json_num(lab, "performance", -1), 0);
    cr_assert_eq(gr_json_num(lab, "score", -1), 70);
    cr_assert_eq(gr_json_num(lab, "max", -1), 100);
    cr_assert_str_eq(gr_json_str(lab, "summary"),
                     "correct on all 4 checked datasets (the performance dataset's output was "
                     "not checked: too slow); slower than the 6 s time limit for one call of 40 "
                     "steps: no performance points");
    const gr_json *output = check_named(lab, "performance dataset valley:160x160:3 (40 steps): "
                                             "output");
    cr_assert_not_null(output, "%s", text);
    cr_assert_str_eq(gr_json_str(output, "status"), GR_NOT_RUN);
    cr_assert_str_eq(gr_json_str(output, "reason"), "too slow to finish within the 6 s "
                                                    "performance time limit: output not checked");
    const gr_json *perf = check_named(lab, "performance valley:160x160:3 (40 steps)");
    cr_assert_not_null(perf, "%s", text);
    cr_assert_str_eq(gr_json_str(perf, "status"), GR_FAIL);
    cr_assert_str_eq(gr_json_str(perf, "reason"), "slower than the 6 s time limit for one call "
                                                  "of 40 steps: no performance points");
    cr_assert(strstr(gr_json_str(perf, "detail"), "6 s time limit"), "%s",
              gr_json_str(perf, "detail"));
    int failed = 0;
    for (const gr_json *c = gr_json_get(lab, "checks")->child; c; c = c->next)
        failed += strcmp(gr_json_str(c, "stage"), "correctness") == 0 &&
                  strcmp(gr_json_str(c, "status"), GR_FAIL) == 0;
    cr_assert_eq(failed, 0, "a correctness check failed: %s", text);
    gr_json_free(j);
    free(text);
    free(console);
    free(kit);
    free(subs);
    free(out);
    free(log);
    free(lock);
}

/* A CPU fallback is right but hundreds of times slower than the solution: the relative limit
   stops it well before the rubric's seconds, and the large dataset's correctness fails. */
Test(gpu_stages, a_call_past_the_relative_limit_fails_the_performance_datasets_correctness)
{
    static const char *const names[] = {"too-slow", NULL};
    char *subs;
    char *kit = make_kit(&subs, names);
    edit_rubric(kit, "performance 30 relative 1000", "performance 30 relative 5");
    char *out = gr_strf("%s/out", dir), *log = gr_strf("%s/grade.log", dir);
    char *lock = gr_strf("%s/gpu.lock", dir);
    const char *args[] = {"--kit", kit, "--submissions", subs, "--out", out, "--seed", "5",
                          "--assume-gpu", "stand-in CPU driver", "--gpu-lock", lock, NULL};
    double t0 = lk_wall_seconds();
    int status = gr_test_run_grader(args, log);
    double took = lk_wall_seconds() - t0;
    lk_error err;
    char *console = gr_read_file(log, 1 << 22, NULL, &err);
    cr_assert_eq(status, 0, "exit status %d:\n%s", status, console);
    cr_assert(took < 25, "the grader took %.1f s: the 8 s call was not stopped early", took);

    char *text;
    gr_json *j = lab_of(out, "too-slow", &text);
    const gr_json *lab = first_lab(j);
    cr_assert_eq(gr_json_num(lab, "correctness", -1), 0, "%s", text);
    cr_assert_eq(gr_json_num(lab, "performance", -1), 0);
    const gr_json *output = check_named(lab, "performance dataset valley:160x160:3 (40 steps): "
                                             "output");
    cr_assert_not_null(output, "%s", text);
    cr_assert_str_eq(gr_json_str(output, "status"), GR_FAIL);
    const char *why = gr_json_str(output, "reason");
    cr_assert(strstr(why, "round 1, valley:160x160 (hidden seed): stopped after") && strstr(why, "5 times the solution's "
              "call on the same input") && strstr(why, "a CPU fallback"), "%s", why);
    const gr_json *perf = check_named(lab, "performance valley:160x160:3 (40 steps)");
    cr_assert_str_eq(gr_json_str(perf, "status"), GR_FAIL);
    gr_json_free(j);
    free(text);
    free(console);
    free(kit);
    free(subs);
    free(out);
    free(log);
    free(lock);
}

/* A solution a second slower per run, and a device that copies 1 MB/s (the stand-in
   driver's copy_GBps): in the stand-in @p kit, the honest student breaks both plausible rules. */
static void break_the_plausible_rules(const char *kit)
{
    char *tmpl = kit_file("grader/tests/fakekit/student.c.in");
    char *slow = NULL;
    for (size_t i = 0; i < sizeof students / sizeof students[0]; i++)
        if (strcmp(students[i].name, "slow") == 0)
            slow = gr_replace_all(tmpl, "@MISBEHAVE@", students[i].code);
    char *sol = gr_strf("%s/solutions/01-fake/kernels.c", kit);
    write_text(sol, slow);
    edit_rubric(kit, "    rounds", "    plausible bytes-per-cell-step 24 margin 2 factor 3\n"
                                 "    rounds");
    free(sol);
    free(slow);
    free(tmpl);
}

Test(gpu_stages, a_timing_faster_than_the_plausible_rules_allow_is_not_scored_until_accepted)
{
    static const char *const names[] = {"good", NULL};
    char *subs;
    char *kit = make_kit(&subs, names);
    break_the_plausible_rules(kit);
    char *out = gr_strf("%s/out", dir), *log = gr_strf("%s/grade.log", dir);
    char *lock = gr_strf("%s/gpu.lock", dir);
    const char *args[] = {"--kit", kit, "--submissions", subs, "--out", out, "--seed", "5",
                          "--assume-gpu", "stand-in CPU driver", "--gpu-lock", lock, NULL};
    int status = gr_test_run_grader(args, log);
    lk_error err;
    char *console = gr_read_file(log, 1 << 22, NULL, &err);
    cr_assert_eq(status, 0, "exit status %d:\n%s", status, console);
    char *text;
    gr_json *j = lab_of(out, "good", &text);
    const gr_json *lab = first_lab(j);
    cr_assert_str_eq(gr_json_str(lab, "outcome"), GR_OUT_CORRECT, "%s", gr_json_str(lab, "summary"));
    cr_assert_eq(gr_json_num(lab, "performance", -1), 0, "%s", gr_json_str(lab, "summary"));
    cr_assert_eq(gr_json_num(lab, "score", -1), 70);
    const char *summary = gr_json_str(lab, "summary");
    cr_assert(strstr(summary, "implausible: review: ") &&
              strstr(summary, "below the physical bound") &&
              strstr(summary, "at the measured 0.001 GB/s") &&
              strstr(summary, "more than the rubric's factor 3"), "%s", summary);
    const gr_json *perf = gr_json_get(lab, "performance_measurement");
    cr_assert(gr_json_true(perf, "implausible"));
    /* The stand-in reports 2 fields of 80 rows: 80 x 160 points x 24 B x 40 steps at 1 MB/s
       (counting every field as a point would double it, and mark honest work implausible). */
    const double bound = gr_json_num(perf, "plausible_bound_ms", 0);
    cr_assert(fabs(bound - 12288.0) < 1.0, "bound %g ms, expected 12288", bound);
    cr_assert_not_null(check_with(lab, GR_IMPLAUSIBLE), "%s", text);
    gr_json_free(j);
    free(text);

    const char *accept[] = {"--kit", kit, "--submissions", subs, "--out", out, "--seed", "5",
                            "--assume-gpu", "stand-in CPU driver", "--gpu-lock", lock,
                            "--accept-implausible", NULL};
    status = gr_test_run_grader(accept, log);
    cr_assert_eq(status, 0, "exit status %d", status);
    j = lab_of(out, "good", &text);
    lab = first_lab(j);
    cr_assert_eq(gr_json_num(lab, "performance", -1), 30, "%s", gr_json_str(lab, "summary"));
    cr_assert(strstr(gr_json_str(lab, "summary"), "implausible, accepted (--accept-implausible)"),
              "%s", gr_json_str(lab, "summary"));
    gr_json_free(j);
    free(text);
    free(console);
    free(kit);
    free(subs);
    free(out);
    free(log);
    free(lock);
}

/* The most runs of @p spans (a log of "start end" lines) in flight at one time. */
/* The spans (start, end) of the commands in OUT/commands.log whose line holds @p part, as
   "START END" lines in a file most_at_once() reads: each run has a box of its own, so the
   session's command log is where their times meet. */
static char *spans_from_commands(const char *out, const char *part)
{
    lk_error err;
    char *log = gr_strf("%s/commands.log", out);
    char *text = gr_read_file(log, 1 << 22, NULL, &err);
    cr_assert_not_null(text, "%s", err.msg);
    gr_buf spans = {0};
    for (char *l = strtok(text, "\n"); l; l = strtok(NULL, "\n")) {
        double ended, seconds;
        if (strstr(l, part) && sscanf(l, "%lf %lf", &ended, &seconds) == 2)
            gr_buf_printf(&spans, "%.6f %.6f\n", ended - seconds, ended);
    }
    char *path = gr_strf("%s/spans.log", out);
    cr_assert_eq(gr_write_atomic_text(path, gr_buf_str(&spans), &err), 0, "%s", err.msg);
    gr_buf_free(&spans);
    free(text);
    free(log);
    return path;
}

static int most_at_once(const char *spans)
{
    lk_error err;
    char *text = gr_read_file(spans, 1 << 20, NULL, &err);
    cr_assert_not_null(text, "%s", err.msg);
    double start[64], end[64];
    int n = 0, most = 0;
    for (char *line = text; n < 64 && sscanf(line, "%lf %lf", &start[n], &end[n]) == 2; n++) {
        line = strchr(line, '\n');
        if (!line)
            break;
        line++;
    }
    for (int i = 0; i < n; i++) {
        int at_once = 0;
        for (int k = 0; k < n; k++)
            at_once += start[k] <= start[i] && start[i] < end[k];
        most = at_once > most ? at_once : most;
    }
    free(text);
    return most;
}

/* --runs N runs up to N correctness checks side by side (each a second long here); --runs 1
   one at a time. The verdicts are the same. */
Test(gpu_stages, correctness_runs_go_side_by_side_up_to_the_runs_option)
{
    static const char *const names[] = {"nap", NULL};
    char *subs;
    char *kit = make_kit(&subs, names);
    char *lock = gr_strf("%s/gpu.lock", dir), *log = gr_strf("%s/grade.log", dir);
    static const char *const runs[] = {"1", "4"};
    for (int k = 0; k < 2; k++) {
        char *out = gr_strf("%s/out-%s", dir, runs[k]);
        const char *args[] = {"--kit", kit, "--submissions", subs, "--out", out, "--seed", "3",
                              "--assume-gpu", "stand-in CPU driver", "--gpu-lock", lock,
                              "--runs", runs[k], NULL};
        int status = gr_test_run_grader(args, log);
        lk_error err;
        char *console = gr_read_file(log, 1 << 22, NULL, &err);
        cr_assert_eq(status, 0, "exit status %d:\n%s", status, console);
        char *text;
        gr_json *j = lab_of(out, "nap", &text);
        cr_assert_str_eq(gr_json_str(first_lab(j), "outcome"), GR_OUT_CORRECT, "%s", text);
        char *spans = spans_from_commands(out, "/students/nap/01-fake/run/d");
        int most = most_at_once(spans);
        if (k == 0)
            cr_assert_eq(most, 1, "--runs 1, yet %d runs overlapped", most);
        else
            cr_assert(most >= 3 && most <= 4, "--runs 4: at most %d of the 4 datasets' runs "
                      "overlapped (4 expected, 1-second runs)", most);
        gr_json_free(j);
        free(text);
        free(spans);
        free(console);
        free(out);
    }
    free(lock);
    free(log);
    free(kit);
    free(subs);
}

/* An interrupted grader ends the runs it has going side by side at once, not at their time
   limits: four runs that hang for 30 s, a SIGTERM to the grader alone (as `timeout` sends). */
Test(gpu_stages, an_interrupted_grader_stops_its_runs_side_by_side_at_once)
{
    static const char *const names[] = {"hang", NULL};
    char *subs;
    char *kit = make_kit(&subs, names);
    edit_rubric(kit, " run 5 ", " run 30 ");
    char *out = gr_strf("%s/out", dir), *log = gr_strf("%s/grade.log", dir);
    char *lock = gr_strf("%s/gpu.lock", dir);
    const char *args[] = {"--kit", kit, "--submissions", subs, "--out", out, "--seed", "3",
                          "--assume-gpu", "stand-in CPU driver", "--gpu-lock", lock, "--runs",
                          "4", NULL};
    pid_t pid = gr_test_start_grader(args, log);
    char *run = gr_strf("%s/work/students/hang/01-fake/run", out);
    for (int i = 0; i < 1200 && count_started_runs(run) < 4; i++) {
        struct timespec nap = {0, 50 * 1000 * 1000};
        nanosleep(&nap, NULL);
    }
    cr_assert_eq(count_started_runs(run), 4, "the four runs never started side by side");
    struct timespec settle = {0, 300 * 1000 * 1000};
    nanosleep(&settle, NULL);
    const double t0 = lk_wall_seconds();
    kill(pid, SIGTERM);
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    const double took = lk_wall_seconds() - t0;
    lk_error err;
    char *console = gr_read_file(log, 1 << 22, NULL, &err);
    cr_assert(took < 10, "the grader took %.1f s to stop: it waited for its runs' 30 s limit\n%s",
              took, console);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 1, "exit status %d:\n%s",
              WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), console);
    cr_assert(strstr(console, "interrupted"), "%s", console);
    free(console);
    free(run);
    free(lock);
    free(log);
    free(out);
    free(kit);
    free(subs);
}

Test(gpu_stages, under_mpirun_each_rank_count_is_a_check_and_a_failing_rank_fails_only_it)
{
    static const char *const names[] = {"good", "rank-crash", "rank-hang", NULL};
    char *subs;
    char *kit = make_kit(&subs, names);
    edit_rubric(kit, "    rounds", "    launcher mpirun\n    ranks 1 2\n    rounds");
    char *out = gr_strf("%s/out", dir), *log = gr_strf("%s/grade.log", dir);
    char *lock = gr_strf("%s/gpu.lock", dir);
    /* One run at a time: with runs side by side (the default on a machine with more cores)
       every 2-rank run starts before the first one hangs, and none is left "not run". */
    const char *args[] = {"--kit", kit, "--submissions", subs, "--out", out, "--seed", "5",
                          "--assume-gpu", "stand-in CPU driver", "--gpu-lock", lock,
                          "--runs", "1", NULL};
    int status = gr_test_run_grader(args, log);
    lk_error err;
    char *console = gr_read_file(log, 1 << 22, NULL, &err);
    cr_assert_eq(status, 0, "a failing rank is the student's failure, not the grader's: exit "
                 "status %d:\n%s", status, console);

    char *text;
    gr_json *j = lab_of(out, "good", &text);
    const gr_json *lab = first_lab(j);
    cr_assert_str_eq(gr_json_str(lab, "outcome"), GR_OUT_CORRECT, "%s", text);
    cr_assert_eq(gr_json_num(lab, "correctness", -1), 70, "%s", text);
    cr_assert(strstr(gr_json_str(lab, "summary"), "correct on all 9 datasets"),
              "4 datasets at 1 and 2 ranks, and the performance output: %s",
              gr_json_str(lab, "summary"));
    cr_assert_not_null(check_named(lab, "public sciddicat-tiny (2 steps), 1 rank"), "%s", text);
    cr_assert_not_null(check_named(lab, "hidden plane:21x9 (hidden seed) (40 steps), 2 ranks"),
                       "%s", text);
    gr_json_free(j);
    free(text);

    j = lab_of(out, "rank-crash", &text);
    lab = first_lab(j);
    cr_assert_str_eq(gr_json_str(lab, "outcome"), GR_OUT_INCORRECT, "%s", text);
    const gr_json *one = check_named(lab, "public sciddicat-tiny (2 steps), 1 rank");
    const gr_json *two = check_named(lab, "public sciddicat-tiny (2 steps), 2 ranks");
    cr_assert_str_eq(gr_json_str(one, "status"), GR_PASS, "%s", text);
    cr_assert_str_eq(gr_json_str(two, "status"), GR_FAIL, "%s", text);
    cr_assert(strstr(gr_json_str(two, "reason"), "exit status") ||
                  strstr(gr_json_str(two, "reason"), "SIG"),
              "%s", gr_json_str(two, "reason"));
    gr_json_free(j);
    free(text);

    j = lab_of(out, "rank-hang", &text);
    lab = first_lab(j);
    cr_assert_str_eq(gr_json_str(lab, "outcome"), GR_OUT_INCORRECT, "%s", text);
    two = check_named(lab, "public sciddicat-tiny (2 steps), 2 ranks");
    cr_assert(strstr(gr_json_str(two, "reason"), "5 s time limit"), "%s",
              gr_json_str(two, "reason"));
    cr_assert(strstr(text, "not run: an earlier run hung"), "%s", text);
    gr_json_free(j);
    free(text);
    free(console);
    free(kit);
    free(subs);
    free(out);
    free(log);
    free(lock);
}

/* Count the lines of @p path equal to @p line. */
/* Lines of @p path equal to @p line (@p whole) or containing it. */
static int count_lines(const char *path, const char *line, int whole)
{
    lk_error err;
    char *text = gr_read_file(path, 1 << 20, NULL, &err);
    cr_assert_not_null(text, "%s", err.msg);
    int n = 0;
    for (char *l = strtok(text, "\n"); l; l = strtok(NULL, "\n"))
        n += whole ? strcmp(l, line) == 0 : strstr(l, line) != NULL;
    free(text);
    return n;
}

Test(gpu_stages, the_solution_is_timed_with_the_first_students_and_its_median_serves_the_next)
{
    static const char *const names[] = {"good", "good-2", "good-3", "good-4", NULL};
    char *subs;
    char *kit = make_kit(&subs, names);
    edit_rubric(kit, "rounds          3 extra 2", "rounds          3 extra 0");
    char *out = gr_strf("%s/out", dir), *log = gr_strf("%s/grade.log", dir);
    char *lock = gr_strf("%s/gpu.lock", dir);
    const char *args[] = {"--kit", kit, "--submissions", subs, "--out", out, "--seed", "5",
                          "--assume-gpu", "stand-in CPU driver", "--gpu-lock", lock, NULL};
    int status = gr_test_run_grader(args, log);
    lk_error err;
    char *console = gr_read_file(log, 1 << 22, NULL, &err);
    cr_assert_eq(status, 0, "exit status %d:\n%s", status, console);
    /* The session's command log has every timed call: the solution's, the trusted 0-step
       call's and 3 rounds of each of the 4 students. */
    char *commands = gr_strf("%s/commands.log", out);
    const char *const zero[] = {"/kit/01-fake/perf/", " --once ", " --steps 0 ", NULL};
    const char *const solution[] = {"/kit/01-fake/perf/", " --once ", " --steps 40 ", NULL};
    cr_assert_eq(count_lines_with(commands, zero), GR_ZERO_CALLS,
                 "the trusted 0-step call: %d runs, once", GR_ZERO_CALLS);
    cr_assert_eq(count_lines_with(commands, solution), 3 * GR_SOLUTION_TIMED_STUDENTS,
                 "the solution is timed in the rounds of the first %d students only",
                 GR_SOLUTION_TIMED_STUDENTS);
    cr_assert_eq(count_lines(commands, " --once ", 0),
                 GR_ZERO_CALLS + 3 * GR_SOLUTION_TIMED_STUDENTS + 4 * 3,
                 "commands.log: one line per timed call");
    free(commands);
    const char *const all[] = {"good", "good-2", "good-3", "good-4"};
    for (int k = 0; k < 4; k++) {
        char *text;
        gr_json *j = lab_of(out, all[k], &text);
        const gr_json *lab = first_lab(j);
        cr_assert_str_eq(gr_json_str(lab, "outcome"), GR_OUT_CORRECT, "%s", text);
        const char *timed = gr_json_str(gr_json_get(lab, "performance_measurement"), "timed");
        int reused = strstr(timed, "is the median of its timed calls") != NULL;
        cr_assert_eq(reused, k == 3, "%s: %s", all[k], timed);
        gr_json_free(j);
        free(text);
    }
    free(console);
    free(kit);
    free(subs);
    free(out);
    free(log);
    free(lock);
}

/* The label of the check of stage @p stage, or NULL. */
static const gr_json *check_of_stage(const gr_json *lab, const char *stage)
{
    for (const gr_json *c = gr_json_get(lab, "checks")->child; c; c = c->next)
        if (strcmp(gr_json_str(c, "stage"), stage) == 0)
            return c;
    return NULL;
}

/* A `stretch` dataset is checked after the scored ones and reported as passed, failed or not
   attempted; it never changes the score or the outcome. */
Test(gpu_stages, stretch_is_reported_and_never_scored)
{
    static const char *const names[] = {"good", "stretch-wrong", "stretch-skip", NULL};
    char *subs;
    char *kit = make_kit(&subs, names);
    char *rubric = gr_strf("%s/labs/01-fake/rubric", kit);
    char *text = kit_file("grader/tests/fakekit/rubric");
    char *with = gr_replace_all(text, "\nend", "\n    stretch         valley:17x15 12\nend");
    write_text(rubric, with);
    free(text);
    free(with);
    char *out = gr_strf("%s/out", dir), *log = gr_strf("%s/grade.log", dir);
    char *lock = gr_strf("%s/gpu.lock", dir);
    const char *args[] = {"--kit", kit, "--submissions", subs, "--out", out, "--seed", "777",
                          "--assume-gpu", "stand-in CPU driver", "--gpu-lock", lock, NULL};
    int status = gr_test_run_grader(args, log);
    lk_error err;
    char *console = gr_read_file(log, 1 << 22, NULL, &err);
    cr_assert_eq(status, 0, "exit status %d:\n%s", status, console);

    static const struct { const char *student, *summary, *status; } want[] = {
        {"good", "; stretch: passed", GR_PASS},
        {"stretch-wrong", "; stretch: failed (stretch valley:17x15 (hidden seed) (12 steps): "
         "md5", GR_FAIL},
        {"stretch-skip", "; stretch: not attempted", GR_NOT_RUN}};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        char *json;
        gr_json *j = lab_of(out, want[i].student, &json);
        const gr_json *lab = first_lab(j);
        const char *summary = gr_json_str(lab, "summary");
        cr_expect_str_eq(gr_json_str(lab, "outcome"), GR_OUT_CORRECT, "%s: %s", want[i].student,
                         summary);
        cr_expect_eq(gr_json_num(lab, "correctness", -1), 70, "%s: the stretch changed the "
                     "correctness points: %s", want[i].student, summary);
        cr_expect(gr_json_true(gr_json_get(lab, "performance_measurement"), "measured"),
                  "%s: performance was not measured", want[i].student);
        cr_expect_eq(gr_json_num(lab, "score", -1),
                     gr_json_num(lab, "correctness", -1) + gr_json_num(lab, "performance", -1),
                     "%s: the score is not correctness + performance", want[i].student);
        cr_expect(strstr(summary, want[i].summary), "%s: the summary lacks '%s': %s",
                  want[i].student, want[i].summary, summary);
        const gr_json *c = check_of_stage(lab, "stretch");
        cr_assert_not_null(c, "%s: no stretch check in %s", want[i].student, json);
        cr_expect_str_eq(gr_json_str(c, "status"), want[i].status, "%s: %s", want[i].student,
                         gr_json_str(c, "reason"));
        cr_expect(strstr(gr_json_str(c, "name"), "stretch valley:17x15 (hidden seed) (12 steps)"),
                  "%s",
                  gr_json_str(c, "name"));
        gr_json_free(j);
        free(json);
    }
    char *md = gr_strf("%s/students/stretch-skip/report.md", out);
    char *report = gr_read_file(md, 1 << 22, NULL, &err);
    cr_assert_not_null(report, "%s", err.msg);
    cr_expect(strstr(report, "| stretch | stretch valley:17x15 (hidden seed) (12 steps) | "
                             "**not-run** | not attempted ("), "%s", report);
    free(report);
    free(md);
    free(console);
    free(rubric);
    free(kit);
    free(subs);
    free(out);
    free(log);
    free(lock);
}

/* Every file of @p path (a folder: recursively) that holds @p what, appended to @p found. */
static void files_holding(const char *path, const char *what, gr_buf *found)
{
    DIR *d = opendir(path);
    if (!d) {
        lk_error err;
        char *text = gr_read_file(path, 1 << 24, NULL, &err);
        if (text && strstr(text, what))
            gr_buf_printf(found, "%s\n", path);
        free(text);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
            char *p = gr_strf("%s/%s", path, e->d_name);
            files_holding(p, what, found);
            free(p);
        }
    closedir(d);
}

/* The hidden datasets' seed is the instructor's: no student-facing file shows it or a spec
   seeded with it (check names, reasons, summaries, what was timed), the session log has it. */
Test(gpu_stages, no_student_facing_file_shows_the_hidden_seed)
{
    static const char *const names[] = {"good", "wrong", "crash", "replay", NULL};
    char *subs;
    char *kit = make_kit(&subs, names);
    char *out = gr_strf("%s/out", dir), *log = gr_strf("%s/grade.log", dir);
    char *lock = gr_strf("%s/gpu.lock", dir);
    /* 19 digits: the derived seeds (seed + k, k < 4096) all start 9876543210123, which no
       timing or hash in a report holds by chance. */
    const char *args[] = {"--kit", kit, "--submissions", subs, "--out", out, "--seed",
                          "9876543210123456789", "--assume-gpu", "stand-in CPU driver",
                          "--gpu-lock", lock, "--junit", "--gradescope", NULL};
    int status = gr_test_run_grader(args, log);
    lk_error err;
    char *console = gr_read_file(log, 1 << 22, NULL, &err);
    cr_assert_eq(status, 0, "exit status %d:\n%s", status, console);
    cr_assert_null(strstr(console, "9876543210123"), "the console shows the seed:\n%s", console);

    const char *facing[] = {"students", "junit.xml", "gradebook.csv", "summary.md"};
    gr_buf found = {0};
    for (size_t i = 0; i < sizeof facing / sizeof *facing; i++) {
        char *p = gr_strf("%s/%s", out, facing[i]);
        cr_assert(gr_exists(p), "%s was not written", p);
        files_holding(p, "9876543210123", &found);
        free(p);
    }
    cr_assert_eq(found.len, 0, "these show the seed:\n%s", gr_buf_str(&found));
    char *md = gr_strf("%s/students/wrong/report.md", out);
    char *report = gr_read_file(md, 1 << 22, NULL, &err);
    cr_assert(strstr(report, "| hidden valley:13x11 (hidden seed) (30 steps) |"), "%s", report);
    free(report);
    free(md);

    char *session = gr_strf("%s/session.log", out);
    struct stat st;
    cr_assert_eq(lstat(session, &st), 0, "no session log");
    cr_assert_eq(st.st_mode & 077, 0, "the session log is readable by others");
    char *said = gr_read_file(session, 1 << 20, NULL, &err);
    cr_assert(strstr(said, "seed 9876543210123456789 (given with --seed)"), "%s", said);
    for (int k = 0; names[k]; k++) {
        char *line = gr_strf("graded %s; 01-fake ", names[k]);
        cr_assert(strstr(said, line), "the log does not name %s:\n%s", names[k], said);
        free(line);
    }
    free(said);
    free(session);
    gr_buf_free(&found);
    free(console);
    free(kit);
    free(subs);
    free(out);
    free(log);
    free(lock);
}

/* `judge trusted`: every raw output of a student run, on each dataset and in each round, is
   judged by the kit's trusted driver (--judge) before it is compared; the verdicts stay. */
Test(gpu_stages, a_trusted_judge_judges_every_student_output_before_the_comparison)
{
    static const char *const names[] = {"good", "wrong", NULL};
    char *subs;
    char *kit = make_kit(&subs, names);
    edit_rubric(kit, "    rounds", "    judge trusted\n    rounds");
    char *out = gr_strf("%s/out", dir), *log = gr_strf("%s/grade.log", dir);
    char *lock = gr_strf("%s/gpu.lock", dir);
    const char *args[] = {"--kit", kit, "--submissions", subs, "--out", out, "--seed", "5",
                          "--assume-gpu", "stand-in CPU driver", "--gpu-lock", lock, NULL};
    int status = gr_test_run_grader(args, log);
    lk_error err;
    char *console = gr_read_file(log, 1 << 22, NULL, &err);
    cr_assert_eq(status, 0, "exit status %d:\n%s", status, console);
    char *text;
    gr_json *j = lab_of(out, "good", &text);
    const gr_json *lab = first_lab(j);
    cr_assert_str_eq(gr_json_str(lab, "outcome"), GR_OUT_CORRECT, "%s", text);
    const int rounds = (int)gr_json_num(gr_json_get(lab, "performance_measurement"), "rounds", 0);
    int datasets = 0;
    for (const gr_json *c = gr_json_get(lab, "checks")->child; c; c = c->next) {
        datasets += strcmp(gr_json_str(c, "stage"), "correctness") == 0 &&
                    strncmp(gr_json_str(c, "name"), "performance", 11) != 0;
    }
    cr_assert(datasets > 0 && rounds > 0, "%s", text);
    char *commands = gr_strf("%s/commands.log", out);
    const char *const judged[] = {"/students/good/01-fake/judge/", " --judge input.bin ", NULL};
    cr_assert_eq(count_lines_with(commands, judged), datasets + rounds,
                 "one trusted judgement per dataset and round");
    gr_json_free(j);
    free(text);
    j = lab_of(out, "wrong", &text);
    cr_assert_str_eq(gr_json_str(first_lab(j), "outcome"), GR_OUT_INCORRECT, "%s", text);
    gr_json_free(j);
    free(text);
    free(commands);
    free(console);
    free(lock);
    free(log);
    free(out);
    free(kit);
    free(subs);
}

/* A stand-in for nvidia-smi's GPU list (LK_GPU_LIST_CMD): two GPUs of different models. */
static void stand_in_gpus(void)
{
    char *script = gr_strf("%s/list-gpus.sh", dir);
    write_text(script, "#!/bin/sh\nprintf '0, GPU-aaaa-0000, Fake A100\\n1, GPU-bbbb-1111, "
                       "Fake H200\\n'\n");
    chmod(script, 0755);
    setenv("LK_GPU_LIST_CMD", script, 1);
    free(script);
}

Test(gpu_stages, gpus_choices_are_checked_against_the_machines_gpus)
{
    stand_in_gpus();
    lk_error err;
    gr_gpu *all, *pick;
    int n, k;
    LK_ASSERT_OK(gr_list_gpus(&all, &n, &err), &err);
    cr_assert_eq(n, 2);
    cr_assert_str_eq(all[1].uuid, "GPU-bbbb-1111");
    cr_assert_str_eq(all[1].name, "Fake H200");
    LK_ASSERT_OK(gr_pick_gpus("all", all, n, &pick, &k, &err), &err);
    cr_assert_eq(k, 2);
    free(pick);
    LK_ASSERT_OK(gr_pick_gpus("1", all, n, &pick, &k, &err), &err);
    cr_assert(k == 1 && pick[0].index == 0, "a count is the first N GPUs");
    free(pick);
    LK_ASSERT_OK(gr_pick_gpus("1,0", all, n, &pick, &k, &err), &err);
    cr_assert(k == 2 && pick[0].index == 1 && pick[1].index == 0, "a list, in its order");
    free(pick);
    /* One GPU by its UUID, as a Slurm task names the GPU it was given. */
    LK_ASSERT_OK(gr_pick_gpus("GPU-bbbb-1111", all, n, &pick, &k, &err), &err);
    cr_assert(k == 1 && pick[0].index == 1, "a UUID is that GPU, not a count");
    free(pick);
    LK_ASSERT_OK(gr_pick_gpus("GPU-BBBB-1111,0", all, n, &pick, &k, &err), &err);
    cr_assert(k == 2 && pick[0].index == 1 && pick[1].index == 0, "UUIDs and indices mix");
    free(pick);
    cr_assert_neq(gr_pick_gpus("GPU-cccc", all, n, &pick, &k, &err), 0);
    cr_assert(strstr(err.msg, "no GPU GPU-cccc: it has 0 (Fake A100), 1 (Fake H200)"), "%s",
              err.msg);
    cr_assert_neq(gr_pick_gpus("1,GPU-bbbb-1111", all, n, &pick, &k, &err), 0);
    cr_assert(strstr(err.msg, "named twice"), "%s", err.msg);
    cr_assert_neq(gr_pick_gpus("3", all, n, &pick, &k, &err), 0);
    cr_assert(strstr(err.msg, "this machine has 2 GPUs: 0 (Fake A100), 1 (Fake H200)"), "%s",
              err.msg);
    cr_assert_neq(gr_pick_gpus("0,2", all, n, &pick, &k, &err), 0);
    cr_assert(strstr(err.msg, "no GPU 2: it has 0 (Fake A100), 1 (Fake H200)"), "%s", err.msg);
    cr_assert_neq(gr_pick_gpus("1,1", all, n, &pick, &k, &err), 0);
    cr_assert(strstr(err.msg, "named twice"), "%s", err.msg);
    static const char *const bad[] = {"0", "", "two", "1,", ",1", "1,,2", "-1",
                                              "GPU-", "GPU-x1", "GPU-1;rm", "12345"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        cr_assert_neq(gr_gpus_spec_check(bad[i], &err), 0, "--gpus '%s' accepted", bad[i]);
    cr_assert(strstr(err.msg, "--gpus 12345: not a GPU choice"), "%s", err.msg);
    /* Each GPU but the first has a lock of its own; the first's is the lock unpinned
       programs (make check, make bench, a grader without --gpus) take. */
    char *lock0 = gr_gpu_lock_path("/x/gpu.lock", &all[0]);
    char *lock1 = gr_gpu_lock_path("/x/gpu.lock", &all[1]);
    cr_assert_str_eq(lock0, "/x/gpu.lock");
    cr_assert_str_eq(lock1, "/x/gpu.lock.GPU-bbbb-1111");
    free(lock0);
    free(lock1);
    free(all);
    /* On the command line: a usage error that names the GPUs there are, before any grading. */
    static const char *const names[] = {"good", NULL};
    char *subs;
    char *kit = make_kit(&subs, names);
    char *out = gr_strf("%s/out", dir), *log = gr_strf("%s/grade.log", dir);
    char *lock = gr_strf("%s/gpu.lock", dir);
    const char *args[] = {"--kit", kit, "--submissions", subs, "--out", out, "--assume-gpu",
                          "stand-in CPU driver", "--gpu-lock", lock, "--gpus", "3", NULL};
    int status = gr_test_run_grader(args, log);
    char *console = gr_read_file(log, 1 << 22, NULL, &err);
    cr_assert_eq(status, 2, "exit status %d:\n%s", status, console);
    cr_assert(strstr(console, "--gpus 3: this machine has 2 GPUs: 0 (Fake A100), 1 (Fake "
                              "H200): give at most 2, or all"), "%s", console);
    cr_assert(!gr_exists(gr_strf("%s/students", out)), "nothing graded");
    free(console);
    free(kit);
    free(subs);
    free(out);
    free(log);
    free(lock);
}

/* The GPU of each student's report, from report.json: its environment's and each lab's;
   @p median: the solution's time came from the median of its calls on that GPU; @p again:
   the rounds were timed again with the machine to the worker alone. */
static char *report_gpu(const char *out, const char *student, int *median, int *again)
{
    char *text;
    gr_json *j = lab_of(out, student, &text);
    const char *env_gpu = gr_json_str(gr_json_get(j, "environment"), "gpu");
    const gr_json *lab = first_lab(j);
    cr_assert_str_eq(gr_json_str(lab, "outcome"), GR_OUT_CORRECT, "%s", text);
    cr_assert_not_null(env_gpu, "%s", text);
    cr_assert_not_null(gr_json_str(lab, "gpu"), "%s", text);
    cr_assert_str_eq(gr_json_str(lab, "gpu"), env_gpu, "the lab ran where the report says");
    const char *timed = gr_json_str(gr_json_get(lab, "performance_measurement"), "timed");
    *median = strstr(timed, "is the median of its timed calls") != NULL;
    *again = strstr(timed, "timed again with the machine to itself") != NULL;
    if (*median)
        cr_assert(strstr(timed, env_gpu), "%s: the solution's median came from another GPU: %s",
                  student, timed);
    char *gpu = gr_xstrdup(env_gpu);
    gr_json_free(j);
    free(text);
    return gpu;
}

/* In the session's commands.log: the students' builds (make in OUT/work/students/NAME/LAB)
   that ended before any student's first GPU run began. */
static int builds_before_first_gpu_run(const char *commands)
{
    lk_error err;
    char *text = gr_read_file(commands, 1 << 22, NULL, &err);
    cr_assert_not_null(text, "%s", err.msg);
    double first_run = 1e30, build_end[64];
    int builds = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        double end, took;
        char cwd[512], *argv = NULL;
        if (sscanf(line, "%lf\t%lf\t%*s\t%511s", &end, &took, cwd) != 3 ||
            !strstr(cwd, "/students/"))
            continue;
        argv = strchr(strstr(line, cwd), '\t');
        if (strstr(cwd, "/run/d") && end - took < first_run)
            first_run = end - took;
        else if (argv && strncmp(argv + 1, "make --no-print-directory -o", 28) == 0 &&
                 builds < 64)
            build_end[builds++] = end;
    }
    int before = 0;
    for (int k = 0; k < builds; k++)
        before += build_end[k] < first_run;
    free(text);
    return before;
}

Test(gpu_stages, gpus_hand_each_student_to_the_next_free_gpu_and_time_the_solution_there)
{
    stand_in_gpus();
    static const char *const names[] = {"good", "good-2", "good-3", "good-4", "good-5",
                                        "good-6", "pinned", NULL};
    char *subs;
    char *kit = make_kit(&subs, names);
    /* Two rounds: placement and per-GPU medians need no more (seven students, a CI minute). */
    edit_rubric(kit, "rounds          3 extra 2", "rounds          2 extra 0");
    char *out = gr_strf("%s/out", dir), *log = gr_strf("%s/grade.log", dir);
    char *lock = gr_strf("%s/gpu.lock", dir);
    const char *args[] = {"--kit", kit, "--submissions", subs, "--out", out, "--seed", "5",
                          "--assume-gpu", "stand-in CPU driver", "--gpu-lock", lock,
                          "--gpus", "all", NULL};
    int status = gr_test_run_grader(args, log);
    lk_error err;
    char *console = gr_read_file(log, 1 << 22, NULL, &err);
    cr_assert_eq(status, 0, "exit status %d:\n%s", status, console);
    static const char *const gpu_name[] = {"Fake A100 (GPU-aaaa-0000)",
                                           "Fake H200 (GPU-bbbb-1111)"};
    int on[2] = {0, 0}, again_on[2] = {0, 0}, medians = 0;
    char *session_log = gr_strf("%s/session.log", out);
    for (int k = 0; names[k]; k++) {
        int median, again;
        char *gpu = report_gpu(out, names[k], &median, &again);
        medians += median;
        int g = strcmp(gpu, gpu_name[0]) == 0 ? 0 : strcmp(gpu, gpu_name[1]) == 0 ? 1 : -1;
        cr_assert(g >= 0, "%s: graded on %s, not a stand-in GPU", names[k], gpu);
        on[g]++;
        again_on[g] += again;
        char *line = gr_strf("graded %s; 01-fake correct", names[k]);
        const char *const parts[] = {line, gpu, NULL};
        cr_assert_eq(count_lines_with(session_log, parts), 1, "session.log: %s on %s", names[k],
                     gpu);
        free(line);
        free(gpu);
    }
    cr_assert(on[0] > 0 && on[1] > 0, "a queue over two GPUs uses both: %d and %d\n%s", on[0],
              on[1], console);
    /* 7 students, 2 GPUs: one GPU has more than its first 3, which take its median (unless
       a noisy stand-in timing was inconclusive and timed again alone, the solution too). */
    cr_assert(medians + again_on[0] + again_on[1] >= 1,
              "no student was compared with a GPU's median\n%s", console);
    /* Each GPU's worker timed its own solution (with its own first students, and in each
       measurement taken again alone) and its own 0-step call, in a folder of its own: no
       median crossed from one GPU to the other. */
    char *commands = gr_strf("%s/commands.log", out);
    /* Each worker claims its next student as it starts one, and builds it meanwhile: four
       students (two a GPU) are built before the first one's GPU stages begin. */
    const int built_ahead = builds_before_first_gpu_run(commands);
    cr_assert(built_ahead >= 4, "%d students built before the first GPU run: the workers do "
              "not build their next student ahead\n%s", built_ahead, console);
    for (int g = 0; g < 2; g++) {
        char *perf = gr_strf("/kit/gpu%d/01-fake/perf/", g);
        const char *const zero[] = {perf, " --once ", " --steps 0 ", NULL};
        const char *const solution[] = {perf, " --once ", " --steps 40 ", NULL};
        const int first = on[g] < GR_SOLUTION_TIMED_STUDENTS ? on[g] : GR_SOLUTION_TIMED_STUDENTS;
        cr_assert_eq(count_lines_with(commands, zero), GR_ZERO_CALLS * (1 + again_on[g]),
                     "GPU %d", g);
        cr_assert_eq(count_lines_with(commands, solution), 2 * (first + again_on[g]),
                     "GPU %d: the solution timed alongside its own first %d students (and %d "
                     "timed again)", g, first, again_on[g]);
        free(perf);
    }
    char *lock1 = gr_strf("%s.GPU-bbbb-1111", lock);
    cr_assert(gr_exists(lock1), "the second GPU's own lock");
    char placement[64];
    snprintf(placement, sizeof placement, "GPU 1, Fake H200 (GPU-bbbb-1111): %d student", on[1]);
    cr_assert(strstr(console, placement), "the placement in the console:\n%s", console);
    /* The gradebook's last column: each student's GPU. */
    char *book = gr_strf("%s/gradebook.csv", out);
    cr_assert_eq(count_lines(book, "student,01-fake,total,max,status,gpu", 1), 1);
    for (int g = 0; g < 2; g++)
        cr_assert_eq(count_lines(book, gpu_name[g], 0), on[g], "%s in the gradebook", gpu_name[g]);
    free(book);
    char *summary = gr_strf("%s/summary.md", out);
    cr_assert_eq(count_lines(summary, "GPU: 2 GPUs: Fake A100 (GPU-aaaa-0000), Fake H200 "
                                      "(GPU-bbbb-1111).", 0), 1, "the summary's GPUs");
    free(summary);
    /* Each worker has a slice of the CPUs of its own (with at least one CPU per GPU). */
    cpu_set_t cpus;
    if (sched_getaffinity(0, sizeof cpus, &cpus) == 0 && CPU_COUNT(&cpus) >= 2)
        cr_assert(strstr(console, "gpu0 CPUs ") && strstr(console, "gpu1 CPUs "), "%s",
                  console);
    free(lock1);
    free(commands);
    free(session_log);
    free(console);
    free(kit);
    free(subs);
    free(out);
    free(log);
    free(lock);
}

/* Under --gpus another GPU's grader may have disturbed a measurement that the rules flag:
   the grader times it again with the machine to itself (the host lock exclusive), and only
   the second measurement counts. */
Test(gpu_stages, a_flagged_timing_beside_other_gpus_is_taken_again_with_the_machine_alone)
{
    stand_in_gpus();
    static const char *const names[] = {"good", NULL};
    char *subs;
    char *kit = make_kit(&subs, names);
    break_the_plausible_rules(kit);
    edit_rubric(kit, "rounds          3 extra 2", "rounds          2 extra 0");
    char *out = gr_strf("%s/out", dir), *log = gr_strf("%s/grade.log", dir);
    char *lock = gr_strf("%s/gpu.lock", dir), *host = gr_strf("%s.host", lock);
    /* Another grader's GPU stage holds the host lock shared: the second measurement waits
       for it, here past the deadline. */
    int held = open(host, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    cr_assert(held >= 0 && flock(held, LOCK_SH) == 0);
    const char *args[] = {"--kit", kit, "--submissions", subs, "--out", out, "--seed", "5",
                          "--assume-gpu", "stand-in CPU driver", "--gpu-lock", lock,
                          "--gpus", "1", "--lock-timeout", "3", NULL};
    int status = gr_test_run_grader(args, log);
    lk_error err;
    char *console = gr_read_file(log, 1 << 22, NULL, &err);
    cr_assert_neq(status, 0, "graded while another grader held the host lock:\n%s", console);
    cr_assert(strstr(console, "timing again with the machine to itself: waiting") &&
              strstr(console, "cannot take the host lock"), "%s", console);
    free(console);
    close(held);
    status = gr_test_run_grader(args, log);
    console = gr_read_file(log, 1 << 22, NULL, &err);
    cr_assert_eq(status, 0, "exit status %d:\n%s", status, console);
    char *text;
    gr_json *j = lab_of(out, "good", &text);
    const gr_json *lab = first_lab(j);
    const gr_json *perf = gr_json_get(lab, "performance_measurement");
    const char *timed = gr_json_str(perf, "timed");
    cr_assert(strstr(timed, "timed again with the machine to itself") &&
              strstr(timed, "after a first measurement beside them gave") &&
              strstr(timed, "implausible"), "%s", timed);
    cr_assert(gr_json_true(perf, "implausible"), "still implausible alone: %s", text);
    cr_assert_eq(gr_json_num(perf, "rounds", -1), 2, "%s", text);
    /* The second measurement replaced the first: one check each, not two. */
    int perf_checks = 0, output_checks = 0;
    for (const gr_json *c = gr_json_get(lab, "checks")->child; c; c = c->next) {
        const char *name = gr_json_str(c, "name");
        perf_checks += strncmp(name, "performance valley", 18) == 0;
        output_checks += strstr(name, "(40 steps): output") != NULL;
    }
    cr_assert(perf_checks == 1 && output_checks == 1, "%d and %d checks:\n%s", perf_checks,
              output_checks, text);
    /* Both measurements timed the 0-step calls and the solution in each round. */
    char *commands = gr_strf("%s/commands.log", out);
    const char *const zero[] = {"/perf/", " --once ", " --steps 0 ", NULL};
    const char *const solution[] = {"/perf/", " --once ", " --steps 40 ", NULL};
    cr_assert_eq(count_lines_with(commands, zero), 2 * GR_ZERO_CALLS);
    cr_assert_eq(count_lines_with(commands, solution), 2 * 2);
    gr_json_free(j);
    free(text);
    free(commands);
    free(console);
    free(kit);
    free(subs);
    free(out);
    free(log);
    free(lock);
    free(host);
}

/* --session-state: a one-student session (a Slurm array task) takes up the work the session
   before it on the same GPU left (the solution's build, the trusted timings), and only for
   the same seed. */
Test(gpu_stages, session_state_carries_the_session_work_to_the_next_session)
{
    static const char *const names[] = {"good", "good-2", NULL};
    char *subs;
    char *kit = make_kit(&subs, names);
    edit_rubric(kit, "rounds          3 extra 2", "rounds          2 extra 0");
    char *state = gr_strf("%s/state", dir), *lock = gr_strf("%s/gpu.lock", dir);
    const char *const zero[] = {"/state/default/01-fake/perf/", " --once ", " --steps 0 ", NULL};
    const char *const serial[] = {"/state/default/01-fake/perf/", " --serial ", NULL};
    static const struct {
        const char *student, *seed;
        int fresh; /* the session work done here, not taken up */
    } runs[] = {{"good", "5", 1}, {"good-2", "5", 0}, {"good", "6", 1}};
    /* What the session's trusted timings give a report: taken up, they are the first run's. */
    static const char *const carried[] = {"serial_ms", "serial_steps", "plausible_bound_ms",
                                          "copy_GBps", "overhead_ms"};
    double first[sizeof carried / sizeof carried[0]];
    for (int r = 0; r < 3; r++) {
        char *out = gr_strf("%s/out%d", dir, r), *log = gr_strf("%s/grade%d.log", dir, r);
        const char *args[] = {"--kit", kit, "--submissions", subs, "--out", out, "--seed",
                              runs[r].seed, "--only", runs[r].student, "--assume-gpu",
                              "stand-in CPU driver", "--gpu-lock", lock, "--session-state",
                              state, NULL};
        int status = gr_test_run_grader(args, log);
        lk_error err;
        char *console = gr_read_file(log, 1 << 22, NULL, &err);
        cr_assert_eq(status, 0, "run %d: exit status %d:\n%s", r, status, console);
        char *text;
        gr_json *j = lab_of(out, runs[r].student, &text);
        cr_assert_str_eq(gr_json_str(first_lab(j), "outcome"), GR_OUT_CORRECT, "%s", text);
        const gr_json *pm = gr_json_get(first_lab(j), "performance_measurement");
        for (size_t k = 0; k < sizeof carried / sizeof carried[0]; k++) {
            const double v = gr_json_num(pm, carried[k], -1);
            if (r == 0)
                first[k] = v;
            else if (r == 1)
                cr_assert(v == first[k], "run 1: %s %.17g, not run 0's %.17g, taken up",
                          carried[k], v, first[k]);
        }
        cr_assert(first[0] > 0, "run 0 timed the serial reference:\n%s", text);
        char *commands = gr_strf("%s/commands.log", out);
        cr_assert_eq(count_lines_with(commands, zero), runs[r].fresh ? GR_ZERO_CALLS : 0,
                     "run %d (seed %s): the 0-step calls %s", r, runs[r].seed,
                     runs[r].fresh ? "timed" : "taken up");
        cr_assert_eq(count_lines_with(commands, serial) > 0, runs[r].fresh,
                     "run %d: the serial reference %s", r, runs[r].fresh ? "timed" : "taken up");
        char *saved = gr_strf("%s/default/01-fake/state.json", state);
        cr_assert(gr_exists(saved), "run %d left its session work for the next", r);
        free(saved);
        gr_json_free(j);
        free(text);
        free(commands);
        free(console);
        free(out);
        free(log);
    }
    free(state);
    free(lock);
    free(kit);
    free(subs);
}

/* Two sessions at once on two GPUs sharing --session-state (two Slurm tasks starting
   together): each dataset's serial reference output is computed once, by one of them, and the
   other takes it from the cache. */
Test(gpu_stages, sessions_at_once_compute_each_serial_reference_once)
{
    stand_in_gpus();
    static const char *const names[] = {"good", "good-2", NULL};
    static const char *const gpus[] = {"GPU-aaaa-0000", "GPU-bbbb-1111"};
    char *subs;
    char *kit = make_kit(&subs, names);
    char *lock = gr_strf("%s/gpu.lock", dir);
    const char *const reference[] = {" --serial ", " ref.bin", NULL};
    int computed[3] = {0};
    /* Runs 0 and 1 at once into one state folder; run 2 alone into another: one session's
       count. */
    for (int round = 0; round < 2; round++) {
        char *state = gr_strf("%s/state%d", dir, round);
        pid_t pid[2];
        char *out[2];
        const int nrun = round == 0 ? 2 : 1;
        for (int i = 0; i < nrun; i++) {
            const int r = round * 2 + i;
            out[i] = gr_strf("%s/out%d", dir, r);
            char *log = gr_strf("%s/grade%d.log", dir, r);
            const char *args[] = {"--kit", kit, "--submissions", subs, "--out", out[i],
                                  "--seed", "5", "--only", names[i], "--assume-gpu",
                                  "stand-in CPU driver", "--gpu-lock", lock, "--gpus", gpus[i],
                                  "--session-state", state, NULL};
            pid[i] = gr_test_start_grader(args, log);
            free(log);
        }
        for (int i = 0; i < nrun; i++) {
            int status;
            cr_assert_eq(waitpid(pid[i], &status, 0), pid[i]);
            cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "run %d failed",
                      round * 2 + i);
            char *commands = gr_strf("%s/commands.log", out[i]);
            computed[round * 2 + i] = count_lines_with(commands, reference);
            free(commands);
            free(out[i]);
        }
        free(state);
    }
    cr_assert_gt(computed[2], 0, "a session alone computes the serial references");
    cr_assert_eq(computed[0] + computed[1], computed[2],
                 "two sessions at once computed %d and %d serial references, not %d in all",
                 computed[0], computed[1], computed[2]);
    free(lock);
    free(kit);
    free(subs);
}
