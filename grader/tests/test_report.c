/* The report writers: CSV quoting, JSON escaping of odd messages, XML and Markdown escaping,
   and lab results that survive a write/read round trip; the JSON reader they rely on. */
#include <stdio.h>
#include <string.h>

#include "grader_testing.h"
#include "jsonr.h"
#include "labkit/testing.h"
#include "report.h"
#include "result.h"

static char *render(void (*fn)(FILE *, const char *), const char *s)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    fn(f, s);
    fclose(f);
    return buf;
}

Test(report, csv_fields_are_quoted_when_needed)
{
    struct { const char *in, *out; } cases[] = {
        {"alice", "alice"},
        {"Smith, Jane", "\"Smith, Jane\""},
        {"say \"hi\"", "\"say \"\"hi\"\"\""},
        {"two\nlines", "\"two\nlines\""},
        {" padded ", "\" padded \""},
        {"=HYPERLINK(\"x\")", "\"'=HYPERLINK(\"\"x\"\")\""},
        {"-5", "\"'-5\""},
        {"", ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *got = render(gr_csv_field, cases[i].in);
        cr_assert_str_eq(got, cases[i].out, "field '%s'", cases[i].in);
        free(got);
    }
}

Test(report, xml_escapes_markup_and_drops_invalid_characters)
{
    char *got = render(gr_xml_escape, "a<b>&\"c'\x01\xff end\n");
    cr_assert_str_eq(got, "a&lt;b&gt;&amp;&quot;c&apos;?? end\n");
    free(got);
}

/* A lab result full of awkward text: quotes, backslashes, control characters, invalid UTF-8,
   Markdown pipes and backtick fences. */
static void odd_lab(gr_lab_result *r)
{
    gr_lab_init(r, "01-straightforward", 100);
    gr_lab_outcome(r, GR_OUT_INCORRECT, "incorrect: \"quoted\" | piped \\ back");
    gr_lab_add(r, "files", "student files", GR_PASS, "found kernels.cu", NULL);
    gr_lab_add(r, "build", "compile and link", GR_FAIL, "tab\there, bell \x07, bad \xff byte",
               "```\nkernels.cu(3): error: <oops> & \"more\"\n```\n");
    gr_check *c = gr_lab_add(r, "correctness", "hidden plane:53x37:1 (200 steps)", GR_FAIL,
                             "md5 x instead of y", "(1, 2): 1 -> 2\n");
    c->seconds = 1.25;
    r->decided = 1;
    r->score = 12.5;
    r->correctness = 12.5;
    r->perf.measured = 1;
    r->perf.dataset = gr_xstrdup("--dataset sciddicat-large");
    r->perf.steps = 200;
    r->perf.rounds = 2;
    r->perf.have_solution = 1;
    r->perf.student_ms = gr_xcalloc(2, sizeof(double));
    r->perf.solution_ms = gr_xcalloc(2, sizeof(double));
    r->perf.student_ms[0] = 10.5;
    r->perf.student_ms[1] = 11.0;
    r->perf.solution_ms[0] = 9.0;
    r->perf.solution_ms[1] = 9.5;
    r->perf.serial_ms = 120000;
    r->perf.score.ratio.median = 0.86;
    r->perf.baseline = gr_xstrdup("uncoalesced");
    r->perf.baseline_ms = 263000.5;
    r->perf.baseline_steps = 5;
    r->perf.baseline_extrapolated = 1;
    r->perf.score.vs_baseline = (gr_spread){.median = 23.5, .lo = 22.0, .hi = 24.0, .n = 2};
    r->perf.score.points = 30;
    snprintf(r->perf.score.reason, sizeof r->perf.score.reason, "reason with \"quotes\"");
}

Test(report, lab_results_round_trip_through_json_with_odd_messages)
{
    gr_lab_result r, back;
    odd_lab(&r);
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    gr_lab_write_json(f, &r);
    fclose(f);
    lk_error err;
    gr_json *j = gr_json_parse(buf, "lab result", &err);
    cr_assert_not_null(j, "the writer produced invalid JSON: %s\n%s", err.msg, buf);
    LK_ASSERT_OK(gr_lab_from_json(j, &back, &err), &err);
    cr_assert_str_eq(back.summary, r.summary);
    cr_assert_eq(back.nchecks, 3);
    cr_assert_str_eq(back.checks[1].reason, "tab\there, bell \x07, bad \xef\xbf\xbd byte",
                     "invalid UTF-8 becomes U+FFFD, the rest survives");
    cr_assert_str_eq(back.checks[1].detail, r.checks[1].detail);
    cr_assert_null(back.checks[0].detail);
    cr_assert_eq(back.checks[2].seconds, 1.25);
    cr_assert_eq(back.score, 12.5);
    cr_assert(back.decided);
    cr_assert(back.perf.measured);
    cr_assert_eq(back.perf.rounds, 2);
    cr_assert_eq(back.perf.student_ms[1], 11.0);
    cr_assert_eq(back.perf.solution_ms[0], 9.0);
    cr_assert_str_eq(back.perf.score.reason, "reason with \"quotes\"");
    cr_assert_str_eq(back.perf.baseline, "uncoalesced");
    cr_assert_eq(back.perf.baseline_ms, 263000.5);
    cr_assert_eq(back.perf.baseline_steps, 5);
    cr_assert(back.perf.baseline_extrapolated);
    cr_assert_eq(back.perf.score.vs_baseline.median, 23.5);
    cr_assert_eq(back.perf.score.vs_baseline.lo, 22.0);
    cr_assert_eq(back.perf.score.vs_baseline.hi, 24.0);
    cr_assert_eq(back.perf.score.vs_baseline.n, 2);
    gr_json_free(j);
    free(buf);
    gr_lab_free(&back);

    /* Without a baseline: "baseline": null, read back as none. */
    free(r.perf.baseline);
    r.perf.baseline = NULL;
    buf = NULL;
    f = open_memstream(&buf, &size);
    gr_lab_write_json(f, &r);
    fclose(f);
    cr_assert(strstr(buf, "\"baseline\":null"), "%s", buf);
    cr_assert_null(strstr(buf, "speedup_vs_baseline"), "%s", buf);
    j = gr_json_parse(buf, "lab result", &err);
    LK_ASSERT_OK(gr_lab_from_json(j, &back, &err), &err);
    cr_assert_null(back.perf.baseline);
    gr_json_free(j);
    free(buf);
    gr_lab_free(&r);
    gr_lab_free(&back);
}

static gr_env test_env(void)
{
    gr_env e;
    memset(&e, 0, sizeof e);
    snprintf(e.host, sizeof e.host, "host");
    snprintf(e.date, sizeof e.date, "2025-01-01T00:00:00Z");
    snprintf(e.gpu_reason, sizeof e.gpu_reason, "no GPU on this machine | here");
    snprintf(e.cuda, sizeof e.cuda, "release 12.4");
    snprintf(e.kit_version, sizeof e.kit_version, "v1");
    return e;
}

static char *write_with(int (*fn)(FILE *, const gr_report_ctx *, const gr_student *, int),
                        const gr_report_ctx *c, const gr_student *st, int n)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    cr_assert_eq(fn(f, c, st, n), 0);
    fclose(f);
    return buf;
}

static int md_one(FILE *f, const gr_report_ctx *c, const gr_student *st, int n)
{
    (void)n;
    return gr_write_student_md(f, c, st);
}

static int json_one(FILE *f, const gr_report_ctx *c, const gr_student *st, int n)
{
    (void)n;
    return gr_write_student_json(f, c, st);
}

static int gs_one(FILE *f, const gr_report_ctx *c, const gr_student *st, int n)
{
    (void)n;
    return gr_write_gradescope(f, c, st);
}

Test(report, every_report_of_an_odd_student_is_well_formed)
{
    gr_rubric rub;
    lk_error err;
    LK_ASSERT_OK(gr_rubric_read_kit(LK_TOP_DIR, &rub, &err),
                 &err);
    const gr_lab_rubric *labs[] = {&rub.labs[0]};
    gr_env env = test_env();
    gr_report_ctx c = {&env, "subs, \"odd\"", "rubric.txt", labs, 1, NULL};
    gr_lab_result lab;
    odd_lab(&lab);
    gr_student st[2] = {{.name = "O'Brien, \"Bob\" | =1+1", .dir = "x", .labs = &lab,
                         .nlabs = 1, .done = 1},
                        {.name = "pending one", .dir = "y", .done = 0}};

    char *csv = write_with(gr_write_gradebook, &c, st, 2);
    cr_assert_str_eq(csv, "student,01-straightforward,total,max,status\n"
                          "\"O'Brien, \"\"Bob\"\" | =1+1\",12.50,12.50,100.00,complete\n"
                          "pending one,,,100.00,pending: not graded yet\n");

    char *json = write_with(json_one, &c, &st[0], 1);
    gr_json *j = gr_json_parse(json, "report.json", &err);
    cr_assert_not_null(j, "report.json is not JSON: %s", err.msg);
    cr_assert_str_eq(gr_json_str(j, "student"), st[0].name);
    cr_assert_eq(gr_json_num(j, "total", -1), 12.5);
    cr_assert_str_eq(gr_json_str(gr_json_get(j, "environment"), "submissions"), "subs, \"odd\"");
    cr_assert_eq(gr_json_count(gr_json_get(j, "labs")), 1);
    gr_json_free(j);

    char *gs = write_with(gs_one, &c, &st[0], 1);
    j = gr_json_parse(gs, "results.json", &err);
    cr_assert_not_null(j, "results.json is not JSON: %s", err.msg);
    cr_assert_eq(gr_json_num(j, "score", -1), 12.5);
    cr_assert_eq(gr_json_count(gr_json_get(j, "tests")), 3, "build and public datasets, "
                 "correctness, performance");
    gr_json_free(j);

    char *md = write_with(md_one, &c, &st[0], 1);
    cr_assert(strstr(md, "# Grade report: O'Brien, \"Bob\" \\| =1+1"), "%s", md);
    cr_assert(strstr(md, "&lt;oops&gt;") == NULL, "code blocks are verbatim");
    cr_assert(strstr(md, "````text\n```\nkernels.cu(3): error: <oops>"),
              "a longer fence protects a detail holding ```:\n%s", md);
    cr_assert(strstr(md, "incorrect: \"quoted\" \\| piped"), "pipes escaped in tables");
    cr_assert(strstr(md, "| speedup vs serial | 0.0x |"), "%s", md);
    cr_assert(strstr(md, "| speedup vs the given version (`--variant uncoalesced`) | 23.5x | "
                         "22.0x - 24.0x |\n"), "%s", md);
    cr_assert(strstr(md, "Given version (`--variant uncoalesced`): 263000.5 ms (extrapolated "
                         "from a 5-step run); the minimum speedup is judged against it"),
              "%s", md);

    char *junit = write_with(gr_write_junit, &c, st, 1);
    cr_assert(strstr(junit, "<testsuites name=\"labkit-grade\" tests=\"3\" failures=\"2\""),
              "%s", junit);
    cr_assert(strstr(junit, "error: &lt;oops&gt; &amp; &quot;more&quot;"), "%s", junit);
    cr_assert_null(strstr(junit, "\xff"));

    char *summary = write_with(gr_write_summary, &c, st, 2);
    cr_assert(strstr(summary, "| 01-straightforward | 1 of 2 | 12.50 |"), "%s", summary);
    cr_assert(strstr(summary, "incorrect 1, pending 1"), "%s", summary);

    free(csv);
    free(json);
    free(gs);
    free(md);
    free(junit);
    free(summary);
    gr_lab_free(&lab);
    gr_rubric_free(&rub);
}

/* Generator specs that carry the session's seed (seed + k, k < GR_SEED_SPAN) lose it; other
   numbers stay. */
Test(report, a_seeded_spec_is_shown_without_its_seed)
{
    const unsigned long long big = 9876543210123456789ULL;
    static const struct { unsigned long long seed; const char *in, *out; } cases[] = {
        {big, "hidden valley:13x11:9876543210123456791 (30 steps)",
         "hidden valley:13x11 (hidden seed) (30 steps)"},
        {big, "(valley:160x160:9876543210123457789 to valley:160x160:9876543210123457792)",
         "(valley:160x160 (hidden seed) to valley:160x160 (hidden seed))"},
        {big, "round 1, plane:4096x4096:9876543210123458789: 3 cells differ",
         "round 1, plane:4096x4096 (hidden seed): 3 cells differ"},
        {big, "driver said: seed 9876543210123456789 is odd", "driver said: seed (hidden seed) "
         "is odd"},
        /* Not this session's: a public spec of the rubric, a spec past the span, hashes. */
        {big, "public valley:97x131:7 md5 0123456789abcdef", "public valley:97x131:7 md5 "
         "0123456789abcdef"},
        {big, "valley:9x9:9876543210123460885", "valley:9x9:9876543210123460885"},
        /* A short seed: only its specs go; short numbers alone are everyday numbers. */
        {777, "hidden valley:13x11:779 (30 steps), 777 ms, 12:779", "hidden valley:13x11 "
         "(hidden seed) (30 steps), 777 ms, 12:779"},
        /* The derived seeds wrap around at 2^64 as the grader's arithmetic does. */
        {18446744073709551615ULL, "valley:5x5:1 and valley:5x5:18446744073709551615",
         "valley:5x5 (hidden seed) and valley:5x5 (hidden seed)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *got = gr_redact_seed(cases[i].in, cases[i].seed);
        cr_expect_str_eq(got, cases[i].out, "case %zu", i);
        free(got);
    }
}

/* A lab result graded with seed 9876543210123456789, redacted as the grader redacts every
   result before it is saved: no report shows the seed, a seeded spec, or the session seed. */
Test(report, no_report_shows_the_session_seed)
{
    const unsigned long long seed = 9876543210123456789ULL;
    gr_lab_result lab;
    odd_lab(&lab);
    gr_lab_add(&lab, "correctness", "hidden valley:13x11:9876543210123456791 (30 steps)",
               GR_FAIL, "crashed on --gen valley:13x11:9876543210123456791",
               "lab01: --gen valley:13x11:9876543210123456791: seed 9876543210123456791\n");
    gr_lab_outcome(&lab, GR_OUT_INCORRECT, "incorrect: hidden valley:13x11:9876543210123456791 "
                   "(30 steps): crashed");
    lab.perf.timed = gr_xstrdup("a fresh instance each round (valley:160x160:9876543210123457789 "
                                "to valley:160x160:9876543210123457792)");
    free(lab.seed);
    lab.seed = gr_strf("%llu", seed);
    gr_lab_redact(&lab, seed);

    gr_rubric rub;
    lk_error err;
    LK_ASSERT_OK(gr_rubric_read_kit(LK_TOP_DIR, &rub, &err),
                 &err);
    const gr_lab_rubric *labs[] = {&rub.labs[0]};
    gr_env env = test_env();
    gr_report_ctx c = {&env, "subs", "rubric.txt", labs, 1, NULL};
    gr_student st = {.name = "s", .dir = "s", .labs = &lab, .nlabs = 1, .done = 1};
    char *texts[] = {write_with(md_one, &c, &st, 1), write_with(json_one, &c, &st, 1),
                     write_with(gs_one, &c, &st, 1), write_with(gr_write_junit, &c, &st, 1),
                     write_with(gr_write_gradebook, &c, &st, 1),
                     write_with(gr_write_summary, &c, &st, 1)};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        cr_expect_null(strstr(texts[i], "9876543210123"), "report %zu shows the seed:\n%s", i,
                       texts[i]);
        cr_expect_null(strstr(texts[i], "\"seed\""), "report %zu has a seed field:\n%s", i,
                       texts[i]);
    }
    cr_expect(strstr(texts[0], "| hidden valley:13x11 (hidden seed) (30 steps) | **fail** |"),
              "%s", texts[0]);
    cr_expect(strstr(texts[0], "(valley:160x160 (hidden seed) to valley:160x160 (hidden "
                               "seed))"), "%s", texts[0]);
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
        free(texts[i]);
    gr_lab_free(&lab);
    gr_rubric_free(&rub);
}

Test(report, json_reader_handles_escapes_and_reports_errors_with_positions)
{
    lk_error err;
    gr_json *j = gr_json_parse(" {\"a\": \"\\u00e9\\ud83d\\ude00\\n\\\"\", \"b\": [1, -2.5e1, true, "
                               "null], \"a\": 3}", "t", &err);
    cr_assert_not_null(j, "%s", err.msg);
    cr_assert_eq(gr_json_num(j, "a", 0), 3, "the last duplicate wins");
    const gr_json *b = gr_json_get(j, "b");
    cr_assert_eq(gr_json_count(b), 4);
    cr_assert_eq(b->child->next->valuedouble, -25.0);
    gr_json_free(j);
    j = gr_json_parse("[\"\\u00e9\\ud83d\\ude00\"]", "t", &err);
    cr_assert_str_eq(j->child->valuestring, "\xc3\xa9\xf0\x9f\x98\x80");
    gr_json_free(j);

    struct { const char *text, *msg; } bad[] = {
        {"{\"a\" 1}", "t: line 1 column 6: found '1}': not valid JSON"},
        {"{\"a\":1,}", "t: line 1 column "},
        {"[1 2]", "t: line 1 column 4"},
        {"{\n\"a\": tru}", "t: line 2 column 6"},
        {"\"open", "t: line 1 column 2"},
        {"", "found end of text"},
        {"\"\\x\"", "not valid JSON"},
        {"{} x", "t: line 1 column 4: found 'x'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_assert_null(gr_json_parse(bad[i].text, "t", &err), "accepted %s", bad[i].text);
        cr_assert(strstr(err.msg, bad[i].msg), "for %s: '%s' lacks '%s'", bad[i].text, err.msg,
                  bad[i].msg);
    }
}

/* The summary's figures are over the labs handed in: a class where the only decided lab is
   missing shows none, not a mean of 0.00. */
Test(report, the_summary_leaves_missing_labs_out_of_its_figures)
{
    gr_rubric rub;
    lk_error err;
    LK_ASSERT_OK(gr_rubric_read_kit(LK_TOP_DIR, &rub, &err),
                 &err);
    const gr_lab_rubric *labs[] = {&rub.labs[0]};
    gr_env env = test_env();
    gr_report_ctx c = {&env, "subs", "rubric.txt", labs, 1, NULL};
    gr_lab_result lab;
    gr_lab_init(&lab, rub.labs[0].name, 100);
    gr_lab_outcome(&lab, GR_OUT_MISSING, "not submitted: kernels.cu");
    lab.decided = 1;
    gr_student st = {.name = "absent", .dir = "absent", .labs = &lab, .nlabs = 1, .done = 1};
    char *summary = write_with(gr_write_summary, &c, &st, 1);
    cr_assert(strstr(summary, "| 01-straightforward | 0 of 1 | - | - | - | - | missing 1 |"),
              "%s", summary);
    free(summary);
    gr_lab_free(&lab);
    gr_rubric_free(&rub);
}
