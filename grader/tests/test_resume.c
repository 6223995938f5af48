/* Atomic writes and resumption: unchanged results are reused, changed ones re-graded, and a
   grader killed mid-run leaves an uncorrupted gradebook that a re-run completes. */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "grader_testing.h"
#include "labkit/testing.h"

static char *dir;

static void setup(void)
{
    dir = gr_test_dir();
}

static void teardown(void)
{
    gr_test_cleanup(dir);
}

TestSuite(resume, .init = setup, .fini = teardown, .timeout = 900);

static int fail_writer(FILE *f, void *ctx, lk_error *err)
{
    (void)ctx;
    fputs("half a gradebook", f);
    return lk_fail(err, "disk on fire");
}

static int good_writer(FILE *f, void *ctx, lk_error *err)
{
    (void)err;
    fputs(ctx, f);
    return 0;
}

static int count_entries(const char *path)
{
    DIR *d = opendir(path);
    cr_assert_not_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

Test(resume, an_atomic_write_either_replaces_the_file_or_leaves_it_alone)
{
    char *sub = gr_strf("%s/atomic", dir);
    char *path = gr_strf("%s/gradebook.csv", sub);
    lk_error err;
    LK_ASSERT_OK(gr_mkdir_p(sub, 0755, &err), &err);
    LK_ASSERT_OK(gr_write_atomic(path, good_writer, "old\n", &err), &err);
    cr_assert_eq(gr_write_atomic(path, fail_writer, NULL, &err), -1);
    cr_assert(strstr(err.msg, "disk on fire"), "%s", err.msg);
    char *text = gr_read_file(path, 1024, NULL, &err);
    cr_assert_str_eq(text, "old\n", "a failed write damaged the file");
    cr_assert_eq(count_entries(sub), 1, "a temporary file was left behind");
    free(text);
    LK_ASSERT_OK(gr_write_atomic(path, good_writer, "new\n", &err), &err);
    text = gr_read_file(path, 1024, NULL, &err);
    cr_assert_str_eq(text, "new\n");
    free(text);
    free(path);
    free(sub);
}

/* A class of compile-error students (quick to grade, decided without a GPU). */
static char *make_class(int n)
{
    char *subs = gr_strf("%s/class", dir);
    char src[512];
    lk_test_path(src, sizeof src, "grader/examples/compile-error/labs/01-straightforward/kernels.cu");
    lk_error err;
    for (int i = 0; i < n; i++) {
        char *lab = gr_strf("%s/s%d/labs/01-straightforward", subs, i + 1);
        LK_ASSERT_OK(gr_mkdir_p(lab, 0755, &err), &err);
        char *dst = gr_strf("%s/kernels.cu", lab);
        LK_ASSERT_OK(gr_copy_untrusted(src, dst, 1 << 20, &err), &err);
        free(dst);
        free(lab);
    }
    return subs;
}

static int occurrences(const char *text, const char *what)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, what)) != NULL; p += strlen(what))
        n++;
    return n;
}

static char *run_log(const char *const *args, int *status)
{
    char *log = gr_strf("%s/run.log", dir);
    *status = gr_test_run_grader(args, log);
    lk_error err;
    char *text = gr_read_file(log, 1 << 22, NULL, &err);
    cr_assert_not_null(text);
    free(log);
    return text;
}

Test(resume, unchanged_results_are_reused_changed_ones_regraded)
{
    char *subs = make_class(2);
    char *out = gr_strf("%s/out", dir);
    const char *args[] = {"--submissions", subs, "--out", out, "--no-gpu", NULL};
    int status;
    char *log = run_log(args, &status);
    cr_assert_eq(status, 0, "everything is decided without a GPU here:\n%s", log);
    cr_assert_eq(occurrences(log, "[unchanged: reused]"), 0);
    free(log);

    log = run_log(args, &status);
    cr_assert_eq(status, 0);
    cr_assert_eq(occurrences(log, "[unchanged: reused]"), 2, "second run:\n%s", log);
    free(log);

    /* A changed student file is graded again; the other student's result is reused. */
    char *file = gr_strf("%s/s2/labs/01-straightforward/kernels.cu", subs);
    FILE *f = fopen(file, "a");
    fputs("// one more comment\n", f);
    fclose(f);
    log = run_log(args, &status);
    cr_assert_eq(occurrences(log, "[unchanged: reused]"), 1, "after a change:\n%s", log);
    free(log);

    const char *forced[] = {"--submissions", subs, "--out", out, "--no-gpu", "--force", NULL};
    log = run_log(forced, &status);
    cr_assert_eq(occurrences(log, "[unchanged: reused]"), 0, "--force:\n%s", log);
    free(log);
    free(file);
    free(out);
    free(subs);
}

/* Kill what the killed grader left running (its builds), found by their command lines. */
static void kill_strays(const char *marker)
{
    for (int round = 0; round < 100; round++) {
        int found = 0;
        DIR *d = opendir("/proc");
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (e->d_name[0] < '0' || e->d_name[0] > '9')
                continue;
            char path[300], buf[4096];
            snprintf(path, sizeof path, "/proc/%s/cmdline", e->d_name);
            FILE *f = fopen(path, "r");
            if (!f)
                continue;
            size_t n = fread(buf, 1, sizeof buf - 1, f);
            fclose(f);
            for (size_t i = 0; i < n; i++)
                if (buf[i] == '\0')
                    buf[i] = ' ';
            buf[n] = '\0';
            pid_t pid = (pid_t)atoi(e->d_name);
            if (strstr(buf, marker) && pid != getpid()) {
                found++;
                kill(-getpgid(pid), SIGKILL);
                kill(pid, SIGKILL);
            }
        }
        closedir(d);
        if (!found)
            return;
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

static void check_gradebook(const char *path, int students, int *complete)
{
    lk_error err;
    char *text = gr_read_file(path, 1 << 20, NULL, &err);
    cr_assert_not_null(text, "%s", err.msg);
    cr_assert(strncmp(text, "student,01-straightforward,", 27) == 0 &&
                  strstr(text, ",total,max,status\n"), "damaged header:\n%s", text);
    int rows = 0;
    *complete = 0;
    char *body = strchr(text, '\n') + 1;
    for (char *line = strtok(body, "\n"); line; line = strtok(NULL, "\n")) {
        rows++;
        int ok = strstr(line, ",complete") != NULL;
        cr_assert(ok || strstr(line, ",pending: not graded yet"), "damaged row: %s", line);
        *complete += ok;
    }
    cr_assert_eq(rows, students, "%d rows for %d students:\n%s", rows, students, text);
    free(text);
}

Test(resume, a_grader_killed_mid_run_leaves_a_gradebook_that_a_rerun_completes)
{
    const int n = 4;
    char *subs = make_class(n);
    char *out = gr_strf("%s/out", dir), *log = gr_strf("%s/killed.log", dir);
    const char *args[] = {"--submissions", subs, "--out", out, "--no-gpu", NULL};
    pid_t pid = gr_test_start_grader(args, log);
    char *first = gr_strf("%s/students/s1/labs/01-straightforward.json", out);
    for (int i = 0; i < 6000 && !gr_exists(first); i++) {
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    cr_assert(gr_exists(first), "the grader never finished its first student");
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    kill_strays(out);

    char *gradebook = gr_strf("%s/gradebook.csv", out);
    int complete;
    if (gr_exists(gradebook)) {
        check_gradebook(gradebook, n, &complete);
        cr_assert(complete < n, "the grader was killed before the end");
    }
    int status;
    char *text = run_log(args, &status);
    cr_assert_eq(status, 0, "re-run:\n%s", text);
    cr_assert(occurrences(text, "[unchanged: reused]") >= 1, "nothing reused:\n%s", text);
    check_gradebook(gradebook, n, &complete);
    cr_assert_eq(complete, n, "the re-run left students pending");
    free(text);
    free(gradebook);
    free(first);
    free(log);
    free(out);
    free(subs);
}
