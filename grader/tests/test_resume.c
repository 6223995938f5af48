/* Atomic writes and resumption: unchanged results are reused, changed ones re-graded, and a
   grader killed mid-run leaves an uncorrupted gradebook that a re-run completes; a saved
   result that the grader did not seal is graded again; build jobs fit the host's memory. */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "env.h"
#include "grader_testing.h"
#include "labkit/testing.h"
#include "result.h"
#include "session.h"

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
                /* A build the killed grader started may share this test's own process group:
                   killing that group would kill the test. */
                pid_t group = getpgid(pid);
                if (group > 0 && group != getpgrp())
                    kill(-group, SIGKILL);
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

/* ---- saved results cannot be forged ------------------------------------------------------ */

static gr_lab_result small_result(void)
{
    gr_lab_result r;
    gr_lab_init(&r, "01-straightforward", 100);
    gr_lab_outcome(&r, GR_OUT_BUILD_FAILED, "does not compile");
    gr_lab_add(&r, "build", "compile and link", GR_FAIL, "error: x", NULL);
    free(r.key);
    r.key = gr_xstrdup("0123456789abcdef0123456789abcdef");
    r.decided = 1;
    return r;
}

Test(resume, a_sealed_result_reads_back_only_unchanged_and_with_the_same_secret)
{
    unsigned char secret[GR_SECRET_BYTES], other[GR_SECRET_BYTES];
    memset(secret, 7, sizeof secret);
    memset(other, 8, sizeof other);
    char *path = gr_strf("%s/lab.json", dir);
    gr_lab_result r = small_result(), back;
    lk_error err;
    LK_ASSERT_OK(gr_lab_save_sealed(path, &r, secret, &err), &err);
    LK_ASSERT_OK(gr_lab_load_sealed(path, &back, secret, &err), &err);
    cr_assert_str_eq(back.key, r.key);
    cr_assert_str_eq(back.outcome, GR_OUT_BUILD_FAILED);
    gr_lab_free(&back);
    cr_assert_eq(gr_lab_load_sealed(path, &back, other, &err), -1, "another secret's seal held");
    cr_assert(strstr(err.msg, "not sealed by this grader"), "%s", err.msg);

    /* One byte of content changed, the seal kept: refused. */
    char *text = gr_read_file(path, 1 << 20, NULL, &err);
    char *forged = gr_replace_all(text, "\"score\":0,", "\"score\":100,");
    cr_assert_str_neq(forged, text);
    LK_ASSERT_OK(gr_write_atomic_text(path, forged, &err), &err);
    cr_assert_eq(gr_lab_load_sealed(path, &back, secret, &err), -1, "a changed result was taken");
    /* No seal at all (what gr_lab_save writes): refused. */
    LK_ASSERT_OK(gr_lab_save(path, &r, &err), &err);
    cr_assert_eq(gr_lab_load_sealed(path, &back, secret, &err), -1, "an unsealed result was taken");
    /* A link in its place is never followed. */
    char *real = gr_strf("%s/real.json", dir);
    LK_ASSERT_OK(gr_lab_save_sealed(real, &r, secret, &err), &err);
    unlink(path);
    cr_assert_eq(symlink(real, path), 0);
    cr_assert_eq(gr_lab_load_sealed(path, &back, secret, &err), -1, "a link was followed");
    free(real);
    free(text);
    free(forged);
    free(path);
    gr_lab_free(&r);
}

/* A saved result changed to a better grade under its right key, with a seal made without the
   grader's secret (or none), is graded again, not reused. */
Test(resume, a_forged_saved_result_is_regraded_not_reused)
{
    char *subs = make_class(2);
    char *out = gr_strf("%s/out", dir);
    const char *args[] = {"--submissions", subs, "--out", out, "--no-gpu", NULL};
    int status;
    char *log = run_log(args, &status);
    cr_assert_eq(status, 0, "%s", log);
    free(log);

    char *secret_path = gr_strf("%s/.grader-secret", out);
    struct stat st;
    cr_assert_eq(lstat(secret_path, &st), 0, "no grader secret in OUT");
    cr_assert(S_ISREG(st.st_mode) && st.st_size == GR_SECRET_BYTES && (st.st_mode & 077) == 0,
              "the secret is not a private file of %d bytes (mode %o)", GR_SECRET_BYTES,
              (unsigned)st.st_mode);
    unsigned char guess[GR_SECRET_BYTES];
    memset(guess, 0, sizeof guess);
    lk_error err;
    for (int i = 1; i <= 2; i++) {
        char *path = gr_strf("%s/students/s%d/labs/01-straightforward.json", out, i);
        gr_lab_result r;
        unsigned char secret[GR_SECRET_BYTES];
        LK_ASSERT_OK(gr_grader_secret(out, secret, &err), &err);
        LK_ASSERT_OK(gr_lab_load_sealed(path, &r, secret, &err), &err);
        free(r.outcome);
        r.outcome = gr_xstrdup(GR_OUT_CORRECT);
        r.score = r.max;
        if (i == 1)
            LK_ASSERT_OK(gr_lab_save_sealed(path, &r, guess, &err), &err);
        else
            LK_ASSERT_OK(gr_lab_save(path, &r, &err), &err);
        gr_lab_free(&r);
        free(path);
    }
    log = run_log(args, &status);
    cr_assert_eq(status, 0, "%s", log);
    cr_assert_eq(occurrences(log, "[unchanged: reused]"), 0, "a forged result was reused:\n%s",
                 log);
    char *gradebook = gr_strf("%s/gradebook.csv", out);
    char *csv = gr_read_file(gradebook, 1 << 20, NULL, &err);
    cr_assert(strstr(csv, "s1,not gradable,0.00,") && strstr(csv, "s2,not gradable,0.00,"),
              "the forged grades survived:\n%s", csv);
    char *session = gr_strf("%s/session.log", out);
    char *said = gr_read_file(session, 1 << 20, NULL, &err);
    cr_assert_not_null(said, "%s", err.msg);
    cr_assert_eq(occurrences(said, "saved result refused, graded again"), 2, "%s", said);
    /* The reports say nothing of the seal, nor of the secret. */
    char *report = gr_strf("%s/students/s1/report.json", out);
    char *json = gr_read_file(report, 1 << 20, NULL, &err);
    cr_assert_null(strstr(json, "\"seal\""), "%s", json);

    /* Sealed again by the grader: reused on the next run. */
    log = run_log(args, &status);
    cr_assert_eq(occurrences(log, "[unchanged: reused]"), 2, "%s", log);
    free(log);
    free(json);
    free(report);
    free(said);
    free(session);
    free(csv);
    free(gradebook);
    free(secret_path);
    free(out);
    free(subs);
}

/* The grader's secret is never taken through a link, nor from a file others can read. */
Test(resume, a_planted_grader_secret_stops_the_grader)
{
    char *subs = make_class(1);
    char *out = gr_strf("%s/out", dir);
    lk_error err;
    LK_ASSERT_OK(gr_mkdir_p(out, 0755, &err), &err);
    char *secret = gr_strf("%s/.grader-secret", out);
    char *planted = gr_strf("%s/known", dir);
    LK_ASSERT_OK(gr_write_atomic_text(planted, "0123456789abcdef0123456789abcdef", &err), &err);
    cr_assert_eq(symlink(planted, secret), 0);
    const char *args[] = {"--submissions", subs, "--out", out, "--no-gpu", NULL};
    int status;
    char *log = run_log(args, &status);
    cr_assert_eq(status, 1, "graded with a planted secret:\n%s", log);
    cr_assert(strstr(log, ".grader-secret"), "%s", log);
    free(log);
    unlink(secret);
    LK_ASSERT_OK(gr_write_atomic_text(secret, "0123456789abcdef0123456789abcdef", &err), &err);
    chmod(secret, 0644);
    log = run_log(args, &status);
    cr_assert_eq(status, 1, "graded with a secret others can read:\n%s", log);
    free(log);
    free(planted);
    free(secret);
    free(out);
    free(subs);
}

/* A session without --seed draws a new seed (a regrade's hidden inputs are new); --seed N
   repeats one. Either way the seed is in the instructor's log. */
Test(resume, each_session_draws_a_new_seed_unless_given_one)
{
    char *subs = make_class(1);
    char *out = gr_strf("%s/out", dir);
    const char *args[] = {"--submissions", subs, "--out", out, "--no-gpu", "--force", NULL};
    const char *given[] = {"--submissions", subs, "--out", out, "--no-gpu", "--seed", "42", NULL};
    int status;
    for (int i = 0; i < 3; i++) {
        char *log = run_log(i < 2 ? args : given, &status);
        cr_assert_eq(status, 0, "%s", log);
        free(log);
    }
    char *path = gr_strf("%s/session.log", out);
    lk_error err;
    char *text = gr_read_file(path, 1 << 20, NULL, &err);
    cr_assert_not_null(text, "%s", err.msg);
    unsigned long long seeds[2];
    const char *at = text;
    for (int i = 0; i < 2; i++) {
        at = strstr(at, "hidden-dataset seed ");
        cr_assert(at && sscanf(at, "hidden-dataset seed %llu (random)", &seeds[i]) == 1, "%s",
                  text);
        at++;
    }
    cr_assert_neq(seeds[0], seeds[1], "two sessions drew the same seed:\n%s", text);
    cr_assert(strstr(text, "hidden-dataset seed 42 (given with --seed)"), "%s", text);
    cr_assert_eq(occurrences(text, "graded s1; 01-straightforward build-failed 0.00"), 3, "%s",
                 text);
    free(text);
    free(path);
    free(out);
    free(subs);
}

/* ---- build jobs ahead fit the host's memory ---------------------------------------------- */

Test(resume, build_jobs_ahead_are_capped_to_what_the_memory_fits)
{
    char *meminfo = gr_strf("%s/meminfo", dir);
    lk_error err;
    LK_ASSERT_OK(gr_write_atomic_text(meminfo, "MemTotal:       65536000 kB\n"
                                               "MemFree:         1000000 kB\n"
                                               "MemAvailable:   50331648 kB\n", &err), &err);
    const long long gib = 1LL << 30;
    cr_assert_eq(gr_mem_available(meminfo), 48 * gib);
    char note[256];
    cr_assert_eq(gr_jobs_that_fit(8, 16 * gib, gr_mem_available(meminfo), note, sizeof note), 3);
    cr_assert_str_eq(note, "3 build jobs ahead instead of 8: each build may reserve 16 GiB (its "
                           "address-space limit) and the host has 48.0 GiB available "
                           "(MemAvailable)");
    cr_assert_eq(gr_jobs_that_fit(3, 16 * gib, 48 * gib, note, sizeof note), 3);
    cr_assert_str_eq(note, "", "no note when --jobs fits");
    cr_assert_eq(gr_jobs_that_fit(2, 16 * gib, 8 * gib, note, sizeof note), 0,
                 "a host without room for one build builds each lab when its turn comes");
    cr_assert(strstr(note, "0 build jobs ahead instead of 2"), "%s", note);
    LK_ASSERT_OK(gr_write_atomic_text(meminfo, "MemTotal: 1 kB\n", &err), &err);
    cr_assert_eq(gr_mem_available(meminfo), -1);
    cr_assert_eq(gr_jobs_that_fit(8, 16 * gib, -1, note, sizeof note), 8, "unknown: no cap");
    free(meminfo);
}
