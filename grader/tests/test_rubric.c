/* The rubric parser: the kit's own rubric, every setting, and malformed rubrics rejected
   with file:line and what to write. */
#include <stdio.h>
#include <string.h>

#include "env.h"
#include "grader_testing.h"
#include "labkit/testing.h"
#include "rubric.h"

/* A complete, valid lab block with one line replaced by @p line (or appended when
   @p replace is NULL). */
static const char *const valid_lines[] = {
    "lab 01-straightforward",
    "  driver lab01",
    "  student-file kernels.cu KERNELS",
    "  entry lab01_gpu_run",
    "  policy hash course-text",
    "  public sciddicat-tiny",
    "  hidden plane:53x37 200",
    "  performance sciddicat-large 200 serial-steps 5",
    "  points correctness 70 performance 30",
    "  curve full 0.8 zero 0.3",
    "  min-speedup 5",
    "end",
    NULL};

static char *rubric_with(const char *replace, const char *line)
{
    gr_buf b = {0};
    for (int i = 0; valid_lines[i]; i++) {
        if (replace && strncmp(valid_lines[i] + strspn(valid_lines[i], " "), replace,
                               strlen(replace)) == 0) {
            if (line)
                gr_buf_printf(&b, "%s\n", line);
            continue;
        }
        if (!replace && line && strcmp(valid_lines[i], "end") == 0)
            gr_buf_printf(&b, "%s\n", line);
        gr_buf_printf(&b, "%s\n", valid_lines[i]);
    }
    return gr_buf_take(&b);
}

static void expect_error(const char *text, const char *where, const char *what)
{
    gr_rubric r;
    lk_error err;
    lk_error_clear(&err);
    int rc = gr_rubric_parse("rubric.txt", text, &r, &err);
    cr_assert_eq(rc, -1, "accepted a bad rubric:\n%s", text);
    cr_assert(strncmp(err.msg, where, strlen(where)) == 0, "message '%s' does not start with '%s'",
              err.msg, where);
    cr_assert(strstr(err.msg, what), "message '%s' does not mention '%s'", err.msg, what);
    cr_assert_eq(r.nlabs, 0);
}

Test(rubric, the_kits_rubric_has_lab_01_with_the_documented_defaults)
{
    gr_rubric r;
    lk_error err;
    LK_ASSERT_OK(gr_rubric_read_kit(LK_TOP_DIR, &r, &err),
                 &err);
    const gr_lab_rubric *lab = gr_rubric_find(&r, "01-straightforward");
    cr_assert_not_null(lab);
    cr_assert_str_eq(lab->driver, "lab01");
    cr_assert_eq(lab->nfiles, 1);
    cr_assert_str_eq(lab->files[0].name, "kernels.cu");
    cr_assert_str_eq(lab->files[0].var, "KERNELS");
    cr_assert_str_eq(lab->entries[0], "lab01_gpu_run");
    cr_assert_eq(lab->policy, GR_POLICY_HASH_COURSE_TEXT);
    cr_assert_eq(lab->points_correct, 70);
    cr_assert_eq(lab->points_perf, 30);
    cr_assert_eq(lab->curve_full, 0.5);
    cr_assert_eq(lab->curve_zero, 0.15);
    cr_assert_eq(lab->min_speedup, 5);
    cr_assert(lab->ndatasets >= 2);
    int hidden = 0;
    for (int i = 0; i < lab->ndatasets; i++) {
        hidden += lab->datasets[i].hidden;
        if (i > 0)
            cr_assert(lab->datasets[i].hidden >= lab->datasets[i - 1].hidden,
                      "public datasets must come first");
    }
    cr_assert(hidden >= 1, "lab 01 needs hidden datasets");
    cr_assert(lab->perf.steps > 0 && lab->serial_steps > 0);
    cr_assert_str_eq(lab->baseline, "", "lab 01's minimum speedup is over serial");
    /* Lab 02's issue: the minimum speedup is over the given uncoalesced version. */
    lab = gr_rubric_find(&r, "02-coalescing");
    cr_assert_not_null(lab);
    cr_assert_str_eq(lab->baseline, "uncoalesced");
    cr_assert_eq(lab->baseline_steps, 5);
    cr_assert_eq(lab->min_speedup, 20);
    cr_assert(!lab->judge_trusted, "lab 02's outputs are bits: nothing to judge");
    /* Lab 06's driver judges against a reference a graded build lacks: the kit judges. */
    lab = gr_rubric_find(&r, "06-reductions");
    cr_assert_not_null(lab);
    cr_assert(lab->judge_trusted, "lab 06's raw outputs must be judged by the trusted driver");
    gr_rubric_free(&r);
}

/* Each lab's handout states the rule its performance points follow, with the rubric's numbers:
   a student reads the target in "What done means", and a rubric change that leaves the handout
   behind fails here. Line breaks and indentation in the handout count as one space. */
Test(rubric, every_handout_states_its_labs_performance_rule)
{
    char path[512];
    gr_rubric r;
    lk_error err;
    LK_ASSERT_OK(gr_rubric_read_kit(LK_TOP_DIR, &r, &err),
                 &err);
    cr_assert(r.nlabs >= 7);
    for (int i = 0; i < r.nlabs; i++) {
        const gr_lab_rubric *lab = &r.labs[i];
        char *rel = gr_strf("labs/%s/README.md", lab->name);
        char *text = gr_read_file(lk_test_path(path, sizeof path, rel), 1 << 22, NULL, &err);
        cr_assert_not_null(text, "%s", err.msg);
        size_t n = 0;
        for (const char *c = text; *c; c++) {
            const int space = *c == ' ' || *c == '\n';
            if (!space || (n > 0 && text[n - 1] != ' '))
                text[n++] = space ? ' ' : *c;
        }
        text[n] = '\0';
        char *of = lab->baseline[0] ? gr_strf("the given version (`--variant %s`)", lab->baseline)
                                    : gr_strf("the serial reference");
        char *rule = gr_strf("Performance points (this lab's `rubric`): full at %gx the "
                             "solution's speed or faster, none below %gx, and none below %gx "
                             "the speed of %s",
                             lab->curve_full, lab->curve_zero, lab->min_speedup, of);
        cr_expect(strstr(text, rule), "%s does not say \"%s\"", rel, rule);
        free(rule);
        free(of);
        free(text);
        free(rel);
    }
    gr_rubric_free(&r);
}

Test(rubric, every_setting_is_read)
{
    const char *text =
        "# comment line\n"
        "lab 07-mpi-split   # trailing comment\n"
        "  driver lab07\n"
        "  student-file kernels.cu KERNELS\n"
        "  student-file exchange.c EXCHANGE\n"
        "  entry lab07_step lab07_exchange\n"
        "  policy tolerance 1e-12\n"
        "  public sciddicat-odd 100\n"
        "  public valley:9x9:3 7\n"
        "  hidden valley:101x67 300\n"
        "  performance plane:512x512:4 50 serial-steps 2\n"
        "  points correctness 60 performance 40\n"
        "  credit proportional\n"
        "  curve full 0.9 zero 0.5\n"
        "  min-speedup 2.5\n"
        "  rounds 5 extra 2\n"
        "  repeat 9\n"
        "  time-limit run 12 build 90 relative 20\n"
        "  forbid-symbol lk_secret swe_*\n"
        "end\n";
    gr_rubric r;
    lk_error err;
    LK_ASSERT_OK(gr_rubric_parse("r.txt", text, &r, &err), &err);
    const gr_lab_rubric *lab = &r.labs[0];
    cr_assert_eq(lab->nfiles, 2);
    cr_assert_str_eq(lab->files[1].var, "EXCHANGE");
    cr_assert_eq(lab->nentries, 2);
    cr_assert_eq(lab->policy, GR_POLICY_TOLERANCE);
    cr_assert_eq(lab->tolerance, 1e-12);
    cr_assert_eq(lab->ndatasets, 3);
    cr_assert_str_eq(lab->datasets[0].name, "sciddicat-odd");
    cr_assert_eq(lab->datasets[0].steps, 100);
    cr_assert(lab->datasets[1].generated && !lab->datasets[1].hidden);
    cr_assert(lab->datasets[2].hidden);
    cr_assert_eq(lab->datasets[2].line, 10);
    cr_assert_str_eq(lab->perf.name, "plane:512x512:4");
    cr_assert_eq(lab->perf.steps, 50);
    cr_assert_eq(lab->serial_steps, 2);
    cr_assert_eq(lab->credit_all, 0);
    cr_assert_eq(lab->rounds, 5);
    cr_assert_eq(lab->extra_rounds, 2);
    cr_assert_eq(lab->repeat, 9);
    cr_assert_eq(lab->limit_run, 12);
    cr_assert_eq(lab->limit_build, 90);
    cr_assert_eq(lab->limit_perf, 300, "an unset time limit keeps its default");
    cr_assert_eq(lab->limit_relative, 20);
    cr_assert_eq(lab->nforbid, 2);
    cr_assert(gr_symbol_matches(lab->forbid[1], "swe_serial"));
    cr_assert(!gr_symbol_matches(lab->forbid[0], "lk_secret2"));
    gr_rubric_free(&r);
}

Test(rubric, optional_settings_have_defaults)
{
    char *text = rubric_with(NULL, NULL);
    gr_rubric r;
    lk_error err;
    LK_ASSERT_OK(gr_rubric_parse("r.txt", text, &r, &err), &err);
    cr_assert_eq(r.labs[0].credit_all, 1);
    cr_assert_eq(r.labs[0].rounds, 2);
    cr_assert_eq(r.labs[0].extra_rounds, 5);
    cr_assert_eq(r.labs[0].repeat, 5);
    cr_assert_eq(r.labs[0].limit_relative, 50, "a performance call stops at 50x the solution's");
    cr_assert_eq(r.labs[0].datasets[0].steps, -1, "public steps default to the manifest's");
    cr_assert_str_eq(r.labs[0].baseline, "", "no baseline: the minimum is over serial");
    gr_rubric_free(&r);
    free(text);
}

Test(rubric, a_baseline_names_the_given_version_and_its_steps)
{
    char *text = rubric_with(NULL, "  baseline uncoalesced_v-2 steps 7");
    gr_rubric r;
    lk_error err;
    LK_ASSERT_OK(gr_rubric_parse("r.txt", text, &r, &err), &err);
    cr_assert_str_eq(r.labs[0].baseline, "uncoalesced_v-2");
    cr_assert_eq(r.labs[0].baseline_steps, 7);
    /* The rubric entry is part of every result's reuse key: a new baseline re-grades. */
    char *with = gr_rubric_lab_text(&r.labs[0]);
    cr_assert(strstr(with, "baseline uncoalesced_v-2 steps 7\n"), "%s", with);
    r.labs[0].baseline_steps = 8;
    char *other = gr_rubric_lab_text(&r.labs[0]);
    cr_assert_str_neq(with, other);
    free(with);
    free(other);
    gr_rubric_free(&r);
    free(text);
}

Test(rubric, malformed_rubrics_are_rejected_with_file_and_line)
{
    struct {
        const char *replace, *line, *where, *what;
    } cases[] = {
        {"curve", "  curve full 0.3 zero 0.8", "rubric.txt:10:", "not above zero"},
        {"curve", "  curve full 0.8", "rubric.txt:10:", "give both"},
        {"curve", "  curve full fast zero 0.3", "rubric.txt:10:", "not a number"},
        {"points", "  points correctness 70 style 30", "rubric.txt:9:", "unknown word 'style'"},
        {"points", "  points correctness 0 performance 0", "rubric.txt:9:", "worth 0 points"},
        {"min-speedup", "  min-speedup -1", "rubric.txt:11:", "out of range"},
        {"hidden", "  hidden plane:53x37:9 200", "rubric.txt:7:", "get theirs at grading time"},
        {"hidden", "  hidden plane:53x37", "rubric.txt:7:", "missing value"},
        {"hidden", "  hidden plane:53by37 200", "rubric.txt:7:", "not a generator spec"},
        {"hidden", "  hidden plane:0x37 200", "rubric.txt:7:", "at least one row"},
        {"hidden", "  hidden plane:65536x65537 200", "rubric.txt:7:", "at most 2^31 points"},
        {"public", "  public valley:9x9:1", "rubric.txt:6:", "no default steps"},
        {"public", "  public valley:9x9 4", "rubric.txt:6:", "has no seed"},
        {"public", "  public tiny set", "rubric.txt:6:", "not a whole number"},
        {"policy", "  policy md5", "rubric.txt:5:", "policy hash course-text"},
        {"policy", "  policy tolerance 0", "rubric.txt:5:", "above 0"},
        {"student-file", "  student-file ../kernels.cu KERNELS", "rubric.txt:3:",
         "not a plain file name"},
        {"student-file", "  student-file kernels.cu kernels", "rubric.txt:3:",
         "not a make variable"},
        {"driver", "  driver", "rubric.txt:2:", "missing value"},
        {"min-speedup", "  min-speedup 5\n  forbid-source sciddicat_flows_cell 3x",
         "rubric.txt:12:", "'3x' is not a C identifier"},
        {"min-speedup", "  min-speedup 5\n  plausible bytes-per-cell-step 24 margin 2",
         "rubric.txt:12:", "'factor' is missing"},
        {"min-speedup", "  min-speedup 5\n  plausible bytes-per-cell-step 24 margin 0.5 factor 3",
         "rubric.txt:12:", "at least 1"},
        {"driver", NULL, "rubric.txt:1:", "no 'driver' line"},
        {"performance", NULL, "rubric.txt:1:", "no 'performance' line"},
        {"performance", "  performance sciddicat-large 200", "rubric.txt:8:", "serial-steps"},
        {"end", NULL, "rubric.txt:1:", "no 'end' before the end of the file"},
        {"lab", "lab straightforward", "rubric.txt:1:", "not a lab folder name"},
        {NULL, "  colour blue", "rubric.txt:12:", "unknown key 'colour'"},
        {NULL, "  min-speedup 3", "rubric.txt:12:", "given twice"},
        {NULL, "  student-file kernels.cu KERNELS", "rubric.txt:12:", "listed twice"},
        {NULL, "  public sciddicat-tiny", "rubric.txt:12:", "already listed (line 6)"},
        {NULL, "lab 02-coalescing", "rubric.txt:12:", "starts before lab 01-straightforward"},
        {NULL, "  rounds 0", "rubric.txt:12:", "out of range"},
        {NULL, "  credit some", "rubric.txt:12:", "not a credit rule"},
        {NULL, "  forbid-symbol lk_*x", "rubric.txt:12:", "not a symbol name"},
        {NULL, "  time-limit run forever", "rubric.txt:12:", "not a number"},
        {NULL, "  time-limit relative 2", "rubric.txt:12:",
         "time-limit relative: 2 is outside 5..1000 (times the solution's call)"},
        {NULL, "  colour blue", "rubric.txt:12:", "min-speedup, baseline, rounds"},
        {NULL, "  baseline", "rubric.txt:12:",
         "baseline: missing value: write baseline VARIANT steps N"},
        {NULL, "  baseline uncoalesced", "rubric.txt:12:",
         "baseline: missing 'steps N': write baseline VARIANT steps N"},
        {NULL, "  baseline uncoalesced 5", "rubric.txt:12:", "baseline: missing 'steps N'"},
        {NULL, "  baseline uncoalesced step 5", "rubric.txt:12:",
         "baseline: unknown word 'step' where 'steps' belongs: write baseline VARIANT steps N"},
        {NULL, "  baseline uncoalesced steps 5 more", "rubric.txt:12:",
         "baseline: too many values"},
        {NULL, "  baseline uncoalesced steps 0", "rubric.txt:12:",
         "baseline steps: 0 is out of range: give a whole number from 1"},
        {NULL, "  baseline uncoalesced steps -2", "rubric.txt:12:",
         "baseline steps: '-2' is not a whole number"},
        {NULL, "  baseline uncoalesced steps many", "rubric.txt:12:",
         "baseline steps: 'many' is not a whole number"},
        {NULL, "  baseline un/coalesced steps 5", "rubric.txt:12:",
         "baseline: 'un/coalesced' is not a variant name"},
        {NULL, "  baseline --gpu steps 5", "rubric.txt:12:", "'--gpu' is not a variant name"},
        {NULL, "  baseline uncoalesced;rm steps 5", "rubric.txt:12:", "is not a variant name"},
        {NULL, "  baseline a23456789012345678901234567890123 steps 5", "rubric.txt:12:",
         "is not a variant name (letters, digits, '-' and '_', starting with a letter or "
         "digit, at most 31)"},
        {NULL, "  baseline a steps 1\n  baseline b steps 2", "rubric.txt:13:",
         "'baseline' given twice in lab 01-straightforward: keep one"},
        {NULL, "  judge myself", "rubric.txt:12:",
         "judge: unknown judge 'myself': write judge trusted"},
        {NULL, "  judge", "rubric.txt:12:", "judge: missing value"},
        {NULL, "  launcher srun", "rubric.txt:12:",
         "launcher: unknown launcher 'srun': write launcher mpirun"},
        {NULL, "  launcher mpirun\n  ranks 1 0", "rubric.txt:13:", "ranks: 0 is out of range"},
        {NULL, "  launcher mpirun\n  ranks 2 2", "rubric.txt:13:", "ranks: 2 is given twice"},
        {NULL, "  launcher mpirun\n  ranks", "rubric.txt:13:", "ranks: missing value"},
        {NULL, "  launcher mpirun\n  ranks 1 2 3 4 5 6 7 8 9", "rubric.txt:13:",
         "ranks: too many values"},
        {NULL, "  ranks 1 2", "rubric.txt:1:", "'ranks' needs a launcher"},
        {NULL, "  launcher mpirun", "rubric.txt:1:", "'launcher mpirun' needs the process counts"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *text = rubric_with(cases[i].replace, cases[i].line);
        expect_error(text, cases[i].where, cases[i].what);
        free(text);
    }
}

Test(rubric, an_mpi_lab_lists_its_process_counts_and_they_are_part_of_the_reuse_key)
{
    char *text = rubric_with(NULL, "  launcher mpirun\n  ranks 1 2 4");
    gr_rubric r;
    lk_error err;
    LK_ASSERT_OK(gr_rubric_parse("r.txt", text, &r, &err), &err);
    cr_assert_eq(r.labs[0].launcher, GR_LAUNCHER_MPIRUN);
    cr_assert_eq(r.labs[0].nranks, 3);
    cr_assert_eq(r.labs[0].ranks[2], 4);
    char *with = gr_rubric_lab_text(&r.labs[0]);
    cr_assert(strstr(with, "launcher mpirun\nranks 1 2 4\n"), "%s", with);
    free(with);
    gr_rubric_free(&r);
    free(text);
}

Test(rubric, structure_errors)
{
    expect_error("", "rubric.txt", "no lab described");
    expect_error("# only comments\n\n", "rubric.txt", "no lab described");
    expect_error("driver lab01\n", "rubric.txt:1:", "outside a lab block");
    expect_error("end\n", "rubric.txt:1:", "without a 'lab' line");
    char *text = rubric_with(NULL, NULL);
    char *twice = gr_strf("%s%s", text, text);
    expect_error(twice, "rubric.txt:13:", "already described at line 1");
    char *tail = gr_strf("%send extra\n", text);
    expect_error(tail, "rubric.txt:13:", "without a 'lab' line");
    char *ctrl = gr_strf("lab 01-x\x01\n");
    expect_error(ctrl, "rubric.txt:1:", "control character");
    free(text);
    free(twice);
    free(tail);
    free(ctrl);
}

Test(rubric, a_missing_file_is_reported)
{
    gr_rubric r;
    lk_error err;
    cr_assert_eq(gr_rubric_read("/nonexistent/rubric.txt", &r, &err), -1);
    cr_assert(strstr(err.msg, "/nonexistent/rubric.txt: cannot open"), "%s", err.msg);
}

/* Write @p text to KIT/@p rel, making its folders. */
static void put(const char *kit, const char *rel, const char *text)
{
    char *path = gr_strf("%s/%s", kit, rel);
    char *dir = gr_xstrdup(path);
    *strrchr(dir, '/') = '\0';
    lk_error err;
    LK_ASSERT_OK(gr_mkdir_p(dir, 0755, &err), &err);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    fputs(text, f);
    fclose(f);
    free(dir);
    free(path);
}

/* A scratch kit of two labs, 01-straightforward and 02-b, each with its lab.h and its block
   (lab 01's the valid one above, lab 02's the same renamed). */
static char *scratch_kit(void)
{
    char *kit = gr_test_dir();
    char *one = rubric_with(NULL, NULL);
    char *two = gr_replace_all(one, "lab 01-straightforward", "lab 02-b");
    put(kit, "labs/01-straightforward/lab.h", "");
    put(kit, "labs/01-straightforward/rubric", one);
    put(kit, "labs/02-b/lab.h", "");
    put(kit, "labs/02-b/rubric", two);
    free(one);
    free(two);
    return kit;
}

static void expect_kit_error(const char *kit, const char *where, const char *what)
{
    gr_rubric r;
    lk_error err;
    lk_error_clear(&err);
    cr_assert_eq(gr_rubric_read_kit(kit, &r, &err), -1, "accepted the kit (%s)", what);
    char *prefix = gr_strf("%s/%s", kit, where);
    cr_assert(strncmp(err.msg, prefix, strlen(prefix)) == 0,
              "message '%s' does not start with '%s'", err.msg, prefix);
    cr_assert(strstr(err.msg, what), "message '%s' does not mention '%s'", err.msg, what);
    cr_assert_eq(r.nlabs, 0);
    free(prefix);
}

/* A lab owns its block: the grader collects labs/NN-name/rubric of every lab folder (one with
   a lab.h), in folder order, and each lab remembers its file for file:line messages; the kit's
   grader/rubric.txt adds the course's lines. */
Test(rubric, the_kit_rubric_is_collected_from_the_lab_folders)
{
    char *kit = scratch_kit();
    put(kit, "labs/03-no-lab-h/rubric", "not a rubric: no lab.h, not a lab\n");
    put(kit, "grader/rubric.txt", "# the language\nlate-tokens 3\n");
    gr_rubric r;
    lk_error err;
    LK_ASSERT_OK(gr_rubric_read_kit(kit, &r, &err), &err);
    cr_assert_eq(r.nlabs, 2);
    cr_assert_str_eq(r.labs[0].name, "01-straightforward");
    cr_assert_str_eq(r.labs[1].name, "02-b");
    char *file = gr_strf("%s/labs/02-b/rubric", kit);
    cr_assert_str_eq(r.labs[1].file, file);
    cr_assert_eq(r.late_tokens, 3);
    gr_rubric_free(&r);
    /* One lab's block alone (make check's static rules). */
    LK_ASSERT_OK(gr_rubric_read_lab(kit, "02-b", &r, &err), &err);
    cr_assert_eq(r.nlabs, 1);
    cr_assert_str_eq(r.labs[0].name, "02-b");
    gr_rubric_free(&r);
    free(file);
    gr_test_cleanup(kit);
}

/* A lab folder without its rubric stops the grader, naming the file to add; a block in the
   wrong file, one of another lab, and the course's lines in a lab's file each name file:line. */
Test(rubric, a_lab_folder_without_its_rubric_or_with_a_wrong_one_is_rejected)
{
    char *kit = scratch_kit();
    put(kit, "labs/08-new/lab.h", "");
    expect_kit_error(kit, "labs/08-new/rubric: missing", "add the file with 'lab 08-new'");
    gr_rubric r;
    lk_error err;
    cr_assert_eq(gr_rubric_read_lab(kit, "08-new", &r, &err), -1);
    cr_assert(strstr(err.msg, "labs/08-new/rubric: missing"), "%s", err.msg);

    put(kit, "labs/08-new/rubric", "# nothing yet\n");
    expect_kit_error(kit, "labs/08-new/rubric: no block for lab 08-new", "write 'lab 08-new'");
    char *one = rubric_with(NULL, NULL);
    put(kit, "labs/08-new/rubric", one);
    expect_kit_error(kit, "labs/08-new/rubric:1: lab 01-straightforward",
                     "describes that lab only: write 'lab 08-new'");
    char *tokens = gr_strf("late-tokens 2\n%s", one);
    put(kit, "labs/08-new/rubric", tokens);
    expect_kit_error(kit, "labs/08-new/rubric:1: late-tokens", "put the line in grader/rubric.txt");
    char *bad = gr_replace_all(one, "lab 01-straightforward", "lab 08-new");
    char *worse = gr_replace_all(bad, "min-speedup 5", "min-speedup -1");
    put(kit, "labs/08-new/rubric", worse);
    expect_kit_error(kit, "labs/08-new/rubric:11: min-speedup", "out of range");
    put(kit, "labs/08-new/rubric", bad);
    put(kit, "grader/rubric.txt", one);
    expect_kit_error(kit, "grader/rubric.txt:1: lab 01-straightforward",
                     "move it to labs/01-straightforward/rubric");
    free(one);
    free(tokens);
    free(bad);
    free(worse);
    gr_test_cleanup(kit);
}

/* The kit hash (a report is reused while it is unchanged) takes a lab's rubric through its
   graded lines, not its file: a course's deadline or a comment re-grades nobody, a changed
   rule does. */
static void lab01_hash(const char *kit, char out[33])
{
    gr_rubric r;
    lk_error err;
    LK_ASSERT_OK(gr_rubric_read_lab(kit, "01-straightforward", &r, &err), &err);
    LK_ASSERT_OK(gr_kit_hash(kit, &r.labs[0], out, &err), &err);
    gr_rubric_free(&r);
}

Test(rubric, a_deadline_in_a_labs_rubric_leaves_its_kit_hash_alone)
{
    char *kit = scratch_kit();
    char before[33], after[33];
    lab01_hash(kit, before);
    char *one = rubric_with(NULL, "  deadline 2026-12-01T23:59:00Z\n# a course's note");
    put(kit, "labs/01-straightforward/rubric", one);
    lab01_hash(kit, after);
    cr_expect_str_eq(after, before, "a deadline changed the kit hash");
    char *stricter = rubric_with("min-speedup", "  min-speedup 6");
    put(kit, "labs/01-straightforward/rubric", stricter);
    lab01_hash(kit, after);
    cr_expect_str_neq(after, before, "a changed min-speedup kept the kit hash");
    free(one);
    free(stricter);
    gr_test_cleanup(kit);
}

/* `stretch` lines: a manifest name, a seeded spec, or a spec seeded at grading time; kept
   apart from the scored datasets. */
Test(rubric, stretch_datasets_are_read_apart_from_the_scored_ones)
{
    char *text = rubric_with(NULL, "  stretch bruss:97x97 61\n  stretch bruss:9x9:4 5\n"
                                   "  stretch bruss-tiny 23");
    gr_rubric r;
    lk_error err;
    LK_ASSERT_OK(gr_rubric_parse("rubric.txt", text, &r, &err), &err);
    const gr_lab_rubric *lab = &r.labs[0];
    cr_assert_eq(lab->ndatasets, 2, "stretch lines must not become scored datasets");
    cr_assert_eq(lab->nstretch, 3);
    cr_expect(lab->stretch[0].hidden && lab->stretch[0].generated && lab->stretch[0].steps == 61);
    cr_expect(!lab->stretch[1].hidden && lab->stretch[1].generated && lab->stretch[1].steps == 5);
    cr_expect(!lab->stretch[2].hidden && !lab->stretch[2].generated &&
              strcmp(lab->stretch[2].name, "bruss-tiny") == 0);
    char *key_text = gr_rubric_lab_text(lab);
    cr_expect(strstr(key_text, "stretch bruss:97x97 61\n"), "not part of the reuse key: %s",
              key_text);
    free(key_text);
    gr_rubric_free(&r);
    free(text);

    text = rubric_with(NULL, "  stretch bruss:97x97");
    expect_error(text, "rubric.txt:12:", "stretch DATASET STEPS");
    free(text);
    text = rubric_with(NULL, "  stretch bruss:97x97 61\n  stretch bruss:97x97 61");
    expect_error(text, "rubric.txt:13:", "already listed (line 12)");
    free(text);
    text = rubric_with(NULL, "  stretch bruss:97x97 0");
    expect_error(text, "rubric.txt:12:", "out of range");
    free(text);
}

/* The kit's rubric gives lab 05 its hidden Brusselator (issue 14), reported and not scored. */
Test(rubric, lab_05_has_a_stretch_dataset)
{
    gr_rubric r;
    lk_error err;
    LK_ASSERT_OK(gr_rubric_read_kit(LK_TOP_DIR, &r, &err),
                 &err);
    const gr_lab_rubric *lab = gr_rubric_find(&r, "05-diamond-tiling");
    cr_assert_not_null(lab);
    cr_assert_geq(lab->nstretch, 1);
    cr_expect(lab->stretch[0].hidden && strncmp(lab->stretch[0].name, "bruss:", 6) == 0,
              "%s", lab->stretch[0].name);
    for (int i = 0; i < lab->ndatasets; i++)
        cr_expect(strncmp(lab->datasets[i].name, "bruss", 5) != 0,
                  "a Brusselator is a scored dataset: %s", lab->datasets[i].name);
    gr_rubric_free(&r);
}

/* The introduction deck states every lab's curve as the rubric has it: the labs grouped by
   their (full, zero) pair, in the order the rubric first names each pair. */
Test(rubric, the_intro_deck_states_every_labs_curve)
{
    char path[512];
    gr_rubric r;
    lk_error err;
    LK_ASSERT_OK(gr_rubric_read_kit(LK_TOP_DIR, &r, &err),
                 &err);
    gr_buf want = {0};
    int done[64] = {0};
    for (int i = 0; i < r.nlabs && i < 64; i++) {
        if (done[i])
            continue;
        gr_buf labs = {0};
        int count = 0;
        for (int k = i; k < r.nlabs && k < 64; k++)
            if (r.labs[k].curve_full == r.labs[i].curve_full &&
                r.labs[k].curve_zero == r.labs[i].curve_zero) {
                gr_buf_printf(&labs, "%s%.2s", count++ ? ", " : "", r.labs[k].name);
                done[k] = 1;
            }
        gr_buf_printf(&want, "%s%s %s: %g and %g", want.len ? "; " : "", count > 1 ? "labs" : "lab",
                      gr_buf_str(&labs), r.labs[i].curve_full, r.labs[i].curve_zero);
        gr_buf_free(&labs);
    }
    char *text = gr_read_file(lk_test_path(path, sizeof path, "slides/00-intro.md"), 1 << 22,
                              NULL, &err);
    cr_assert_not_null(text, "%s", err.msg);
    size_t n = 0;
    for (const char *c = text; *c; c++) {
        const int space = *c == ' ' || *c == '\n';
        if (!space || (n > 0 && text[n - 1] != ' '))
            text[n++] = space ? ' ' : *c;
    }
    text[n] = '\0';
    cr_expect(strstr(text, gr_buf_str(&want)), "slides/00-intro.md does not say \"%s\"",
              gr_buf_str(&want));
    cr_expect(strstr(text, "**70 points correctness**") && r.labs[0].points_correct == 70,
              "the deck's points per lab");
    for (int i = 0; i < r.nlabs; i++)
        cr_expect(r.labs[i].points_correct == 70 && r.labs[i].points_perf == 30,
                  "%s: the deck says every lab is 70/30", r.labs[i].name);
    free(text);
    gr_buf_free(&want);
    gr_rubric_free(&r);
}
