/* A class graded in parts (--merge): each student graded alone into PARTS/NAME, the merge
   writes the gradebook a class run writes, with the same seed; a part whose seal does not
   hold, or that is missing, leaves its student pending; the seed's file must be the
   instructor's alone. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

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

TestSuite(merge, .init = setup, .fini = teardown, .timeout = 600);

/* Students s1, s2 whose lab 01 does not compile: decided without a GPU, and quick (and no
   grader/examples, which a student distribution does not ship). */
static char *make_class(void)
{
    char *subs = gr_strf("%s/class", dir);
    lk_error err;
    for (int i = 1; i <= 2; i++) {
        char *lab = gr_strf("%s/s%d/labs/01-straightforward", subs, i);
        LK_ASSERT_OK(gr_mkdir_p(lab, 0755, &err), &err);
        char *dst = gr_strf("%s/kernels.cu", lab);
        LK_ASSERT_OK(gr_write_atomic_text(dst, "this is not CUDA\n", &err), &err);
        free(dst);
        free(lab);
    }
    return subs;
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

static char *read_text(const char *path)
{
    lk_error err;
    char *text = gr_read_file(path, 1 << 20, NULL, &err);
    cr_assert_not_null(text, "%s", err.msg);
    return text;
}

/* The seed in a file of mode @p mode. */
static char *seed_file(mode_t mode)
{
    char *path = gr_strf("%s/seed", dir);
    lk_error err;
    LK_ASSERT_OK(gr_write_atomic_text(path, "7\n", &err), &err);
    chmod(path, mode);
    return path;
}

Test(merge, the_parts_merge_into_the_class_gradebook_and_a_forged_part_is_refused)
{
    char *subs = make_class(), *seed = seed_file(0600);
    char *parts = gr_strf("%s/parts", dir), *out = gr_strf("%s/out", dir);
    char *plain = gr_strf("%s/plain", dir);
    int status;
    const char *whole[] = {"--submissions", subs, "--out", plain, "--no-gpu", "--seed", "7",
                           "--lab", "01-straightforward", "-q", NULL};
    char *log = run_log(whole, &status);
    cr_assert_eq(status, 0, "%s", log);
    free(log);
    for (int i = 1; i <= 2; i++) {
        char *name = gr_strf("s%d", i), *part = gr_strf("%s/%s", parts, name);
        const char *one[] = {"--submissions", subs, "--only", name, "--out", part, "--no-gpu",
                             "--seed-file", seed, "--lab", "01-straightforward", "-q", NULL};
        log = run_log(one, &status);
        cr_assert_eq(status, 0, "%s", log);
        free(log);
        free(part);
        free(name);
    }
    const char *merge[] = {"--submissions", subs, "--out", out, "--merge", parts,
                           "--lab", "01-straightforward", NULL};
    log = run_log(merge, &status);
    cr_assert_eq(status, 0, "%s", log);
    free(log);
    char *gb_path = gr_strf("%s/gradebook.csv", out), *plain_gb = gr_strf("%s/gradebook.csv", plain);
    char *merged = read_text(gb_path), *expected = read_text(plain_gb);
    cr_assert_str_eq(merged, expected, "the merged gradebook differs from the class run's");
    free(merged);
    char *report = gr_strf("%s/students/s1/report.md", out);
    cr_assert(gr_exists(report), "the part's report was not brought over");
    free(report);

    /* A part's saved result changed after grading: its seal no longer holds. */
    char *saved = gr_strf("%s/s2/students/s2/labs/01-straightforward.json", parts);
    char *text = read_text(saved);
    char *forged = gr_replace_all(text, "build-failed", "correct");
    lk_error err;
    LK_ASSERT_OK(gr_write_atomic_text(saved, forged, &err), &err);
    /* ... and another student's part is missing. */
    char *s1 = gr_strf("%s/s1", parts);
    LK_ASSERT_OK(gr_rm_rf(s1, &err), &err);
    log = run_log(merge, &status);
    cr_assert_eq(status, 1, "a refused or missing part must fail the merge:\n%s", log);
    cr_assert(strstr(log, "s1") && strstr(log, "no part: its task did not finish"), "%s", log);
    cr_assert(strstr(log, "s2") && strstr(log, "seal"), "the forged part was taken:\n%s", log);
    free(log);
    merged = read_text(gb_path);
    cr_assert(strstr(merged, "\ns1,") && strstr(merged, "\ns2,"), "%s", merged);
    cr_assert_eq(strstr(merged, "correct"), NULL, "the forged outcome reached the gradebook");
    cr_assert(strstr(merged, "pending"), "%s", merged);
    free(merged);
    free(expected);
    free(s1);
    free(forged);
    free(text);
    free(saved);
    free(plain_gb);
    free(gb_path);
    free(plain);
    free(out);
    free(parts);
    free(seed);
    free(subs);
}

Test(merge, a_seed_file_others_can_read_is_refused)
{
    char *seed = seed_file(0644);
    const char *args[] = {"--seed-file", seed, NULL};
    int status;
    char *log = run_log(args, &status);
    cr_assert_eq(status, 2, "%s", log);
    cr_assert(strstr(log, "readable by others") && strstr(log, "chmod 600"), "%s", log);
    free(log);
    free(seed);
}

Test(merge, a_merge_grades_no_single_student)
{
    const char *args[] = {"--merge", dir, "--only", "s1", NULL};
    int status;
    char *log = run_log(args, &status);
    cr_assert_eq(status, 2, "%s", log);
    cr_assert(strstr(log, "--merge builds the whole class") && strstr(log, "--only"), "%s", log);
    free(log);
}

/* A task of several students (make grade SLURM=1 SLURM_STUDENTS_PER_TASK=K) grades them in one
   session: --list-students names each one's report folder there, so that the task can hand
   each its own part; a part holding two report folders is refused, not half-taken. */
Test(merge, a_task_of_two_students_names_their_folders_and_a_part_of_two_is_refused)
{
    char *subs = make_class(), *seed = seed_file(0600);
    lk_error err;
    /* Two names sharing the safe folder name x_y: the second (in sorted order) is x_y-2. */
    char *xy_space = gr_strf("%s/x y", subs), *xy = gr_strf("%s/x_y", subs);
    LK_ASSERT_OK(gr_mkdir_p(xy_space, 0755, &err), &err);
    LK_ASSERT_OK(gr_mkdir_p(xy, 0755, &err), &err);
    int status;
    const char *list[] = {"--submissions", subs, "--only", "x_y", "--only", "x y",
                          "--list-students", NULL};
    char *log = run_log(list, &status);
    cr_assert_eq(status, 0, "%s", log);
    cr_assert_str_eq(log, "x_y\tx y\nx_y-2\tx_y\n");
    free(log);
    const char *unknown[] = {"--submissions", subs, "--only", "s1", "--only", "zed",
                             "--list-students", NULL};
    log = run_log(unknown, &status);
    cr_assert_eq(status, 2, "%s", log);
    cr_assert(strstr(log, "--only zed: ") && strstr(log, "no student folder of that name"),
              "%s", log);
    free(log);

    char *parts = gr_strf("%s/parts", dir), *part = gr_strf("%s/s1", parts);
    const char *both[] = {"--submissions", subs, "--only", "s1", "--only", "s2", "--out", part,
                          "--no-gpu", "--seed-file", seed, "--lab", "01-straightforward", "-q",
                          NULL};
    log = run_log(both, &status);
    cr_assert_eq(status, 0, "%s", log);
    free(log);
    char *gb_path = gr_strf("%s/gradebook.csv", part);
    char *gb = read_text(gb_path);
    cr_assert(strstr(gb, "\ns1,") && strstr(gb, "\ns2,") && !strstr(gb, "x_y"),
              "--only twice grades those two and no one else:\n%s", gb);
    char *out = gr_strf("%s/out", dir);
    const char *merge[] = {"--submissions", subs, "--out", out, "--merge", parts, NULL};
    log = run_log(merge, &status);
    cr_assert_eq(status, 1, "%s", log);
    cr_assert(strstr(log, "holds 2 report folders: a part holds the one of its student"),
              "a part of two students was taken:\n%s", log);
    free(log);
    free(out);
    free(gb);
    free(gb_path);
    free(part);
    free(parts);
    free(xy);
    free(xy_space);
    free(seed);
    free(subs);
}
