/* The build stage's own logic: where student files are found (layouts), which files are
   refused, which symbols are forbidden, which log lines are the compiler's first errors. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "build.h"
#include "integrity.h"
#include "policy.h"
#include "grader_testing.h"
#include "labkit/testing.h"

static char *dir;
static gr_rubric one, two;

static const char *lab_text(const char *name, const char *file)
{
    static char buf[2][1024];
    static int k;
    k ^= 1;
    snprintf(buf[k], sizeof buf[k],
             "lab %s\n driver lab%.2s\n student-file %s KERNELS\n entry f\n policy hash binary\n"
             " public a\n performance a 1 serial-steps 1\n points correctness 1 performance 1\n"
             " curve full 1 zero 0.5\n min-speedup 1\nend\n", name, name, file);
    return buf[k];
}

static void setup(void)
{
    dir = gr_test_dir();
    lk_error err;
    char *text = gr_strf("%s", lab_text("01-straightforward", "kernels.cu"));
    LK_ASSERT_OK(gr_rubric_parse("one", text, &one, &err), &err);
    char *both = gr_strf("%s%s", text, lab_text("02-coalescing", "kernels.cu"));
    LK_ASSERT_OK(gr_rubric_parse("two", both, &two, &err), &err);
    free(text);
    free(both);
}

static void teardown(void)
{
    gr_rubric_free(&one);
    gr_rubric_free(&two);
    gr_test_cleanup(dir);
}

TestSuite(build, .init = setup, .fini = teardown);

static void put(const char *rel, const char *content)
{
    char *path = gr_strf("%s/%s", dir, rel);
    char *slash = strrchr(path, '/');
    *slash = '\0';
    lk_error err;
    LK_ASSERT_OK(gr_mkdir_p(path, 0755, &err), &err);
    *slash = '/';
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(content, f);
    fclose(f);
    free(path);
}

/* Fetch lab 0 of @p r from submission @p student; returns the check and fills @p got. */
static int fetch(const gr_rubric *r, const char *student, gr_lab_result *res, char **got)
{
    const gr_lab_rubric *labs[2] = {&r->labs[0], r->nlabs > 1 ? &r->labs[1] : NULL};
    char *root = gr_strf("%s/%s", dir, student);
    char *src = gr_strf("%s/src-%s", dir, student);
    lk_error err;
    LK_ASSERT_OK(gr_mkdir_p(src, 0755, &err), &err);
    gr_lab_init(res, r->labs[0].name, 2);
    int rc = gr_fetch_files(root, 0, labs, r->nlabs, &r->labs[0], src, res, &err);
    cr_assert(rc >= 0, "%s", err.msg);
    char *copy = gr_strf("%s/kernels.cu", src);
    *got = rc == 1 ? gr_read_file(copy, 1 << 20, NULL, &err) : NULL;
    free(copy);
    free(root);
    free(src);
    return rc;
}

Test(build, the_lab_folder_layout_and_the_short_layouts_are_accepted)
{
    gr_lab_result r;
    char *got;
    put("a/labs/01-straightforward/kernels.cu", "A");
    cr_assert_eq(fetch(&one, "a", &r, &got), 1);
    cr_assert_str_eq(got, "A");
    cr_assert(strstr(r.checks[0].reason, "labs/01-straightforward/kernels.cu"));
    free(got);
    gr_lab_free(&r);

    put("b/01-straightforward/kernels.cu", "B");
    cr_assert_eq(fetch(&two, "b", &r, &got), 1);
    cr_assert_str_eq(got, "B");
    free(got);
    gr_lab_free(&r);

    put("c/kernels.cu", "C");
    cr_assert_eq(fetch(&one, "c", &r, &got), 1, "flat layout with a single lab");
    cr_assert_str_eq(got, "C");
    free(got);
    gr_lab_free(&r);
}

Test(build, a_flat_file_is_refused_when_several_labs_have_that_name)
{
    gr_lab_result r;
    char *got;
    put("c/kernels.cu", "C");
    cr_assert_eq(fetch(&two, "c", &r, &got), 0);
    cr_assert_str_eq(r.outcome, GR_OUT_MISSING);
    cr_assert(strstr(r.checks[0].reason, "labs/01-straightforward/kernels.cu, "
                                         "01-straightforward/kernels.cu)"),
              "%s", r.checks[0].reason);
    gr_lab_free(&r);
}

Test(build, the_lab_folder_layout_wins_and_the_others_are_noted)
{
    gr_lab_result r;
    char *got;
    put("d/labs/01-straightforward/kernels.cu", "first");
    put("d/kernels.cu", "second");
    cr_assert_eq(fetch(&one, "d", &r, &got), 1);
    cr_assert_str_eq(got, "first");
    cr_assert_not_null(r.checks[0].detail);
    cr_assert(strstr(r.checks[0].detail, "kernels.cu also exists and was ignored"),
              "%s", r.checks[0].detail);
    free(got);
    gr_lab_free(&r);
}

Test(build, missing_links_fifos_and_huge_files_are_refused)
{
    gr_lab_result r;
    char *got;
    cr_assert_eq(gr_mkdir_p(gr_strf("%s/empty", dir), 0755, NULL), 0);
    cr_assert_eq(fetch(&one, "empty", &r, &got), 0);
    cr_assert_str_eq(r.outcome, GR_OUT_MISSING);
    gr_lab_free(&r);

    put("secret.txt", "top secret");
    put("e/placeholder", "");
    char *link = gr_strf("%s/e/kernels.cu", dir), *target = gr_strf("%s/secret.txt", dir);
    cr_assert_eq(symlink(target, link), 0);
    cr_assert_eq(fetch(&one, "e", &r, &got), 0);
    cr_assert_str_eq(r.outcome, GR_OUT_REJECTED);
    cr_assert(strstr(r.checks[0].reason, "outside the submission"), "%s", r.checks[0].reason);
    gr_lab_free(&r);

    /* A link that stays inside the submission is still refused: only real files count. */
    put("f/real.cu", "x");
    char *inside = gr_strf("%s/f/kernels.cu", dir), *real = gr_strf("%s/f/real.cu", dir);
    cr_assert_eq(symlink(real, inside), 0);
    cr_assert_eq(fetch(&one, "f", &r, &got), 0);
    cr_assert(strstr(r.checks[0].reason, "symbolic link"), "%s", r.checks[0].reason);
    gr_lab_free(&r);

    put("g/placeholder", "");
    char *fifo = gr_strf("%s/g/kernels.cu", dir);
    cr_assert_eq(mkfifo(fifo, 0644), 0);
    cr_assert_eq(fetch(&one, "g", &r, &got), 0, "a FIFO must not block or be read");
    cr_assert(strstr(r.checks[0].reason, "not a regular file"), "%s", r.checks[0].reason);
    gr_lab_free(&r);

    put("h/placeholder", "");
    char *big = gr_strf("%s/h/kernels.cu", dir);
    FILE *f = fopen(big, "w");
    for (unsigned i = 0; i <= GR_MAX_STUDENT_FILE; i += 16)
        fputs("// padding line\n", f);
    fclose(f);
    cr_assert_eq(fetch(&one, "h", &r, &got), 0);
    cr_assert(strstr(r.checks[0].reason, "more than"), "%s", r.checks[0].reason);
    gr_lab_free(&r);
    free(link);
    free(target);
    free(inside);
    free(real);
    free(fifo);
    free(big);
}

Test(build, forbidden_symbols)
{
    const gr_lab_rubric *lab = &one.labs[0];
    static const char *const bad[] = {"fork", "execve", "system", "popen", "fopen",
                                      "fopen@GLIBC_2.2.5", "open64", "unlink", "mmap", "socket",
                                      "connect", "dlopen", "dlsym", "main", "syscall", "kill",
                                      "setrlimit", "write", "dup2", "lk_read_body",
                                      "lk_write_binary",
                                      "_ZNSt14basic_ofstreamIcSt11char_traitsIcEEC1EPKcSt13_Ios_Openmode",
                                      "_ZNSt10filesystem7__cxx114pathD1Ev"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        cr_assert_not_null(gr_forbidden_symbol(lab, bad[i]), "%s should be forbidden", bad[i]);
    static const char *const fine[] = {"cudaMalloc", "lab01_gpu_run", "lk_cuda_fail", "printf",
                                       "fprintf", "malloc", "memcpy", "_Z11reset_flowsiiPd",
                                       "__cudaRegisterFatBinary", "atexit", "execution_mode"};
    for (size_t i = 0; i < sizeof fine / sizeof fine[0]; i++)
        cr_assert_null(gr_forbidden_symbol(lab, fine[i]), "%s should be allowed", fine[i]);

    gr_rubric r;
    lk_error err;
    char *text = gr_strf("%s", lab_text("01-straightforward", "kernels.cu"));
    char *with = gr_replace_all(text, "end\n", "forbid-symbol sciddicat_load* sciddicat_serial\nend\n");
    LK_ASSERT_OK(gr_rubric_parse("r", with, &r, &err), &err);
    cr_assert_not_null(gr_forbidden_symbol(&r.labs[0], "sciddicat_load_dataset"));
    cr_assert_not_null(gr_forbidden_symbol(&r.labs[0], "sciddicat_serial"));
    cr_assert_null(gr_forbidden_symbol(&r.labs[0], "sciddicat_serial_x"));
    gr_rubric_free(&r);
    free(text);
    free(with);
}

Test(build, first_errors_come_from_the_compiler_not_from_paths)
{
    const char *log =
        "gcc -c /w/compile-error/lab/main.c -o /w/compile-error/lab/build/main.o\n"
        "/usr/local/cuda/bin/nvcc -I/x -c /w/compile-error/lab/src/kernels.cu -o /w/compile-error/lab/build/kernels.o\n"
        "/w/compile-error/lab/src/kernels.cu(55): error: identifier \"total\" is undefined\n"
        "      total += average\n"
        "      ^\n"
        "\n"
        "1 error detected in the compilation of \"/w/compile-error/lab/src/kernels.cu\".\n"
        "make: *** [../lab.mk:45: /w/compile-error/lab/build/kernels.o] Error 2\n";
    char *first = gr_first_errors(log, "/w/compile-error/lab/src", 12);
    cr_assert_str_eq(first,
                     "kernels.cu(55): error: identifier \"total\" is undefined\n"
                     "      total += average\n"
                     "      ^\n"
                     "\n"
                     "1 error detected in the compilation of \"kernels.cu\".\n"
                     "make: *** [../lab.mk:45: build/kernels.o] Error 2\n");
    free(first);
    char *tail = gr_first_errors("line one\nline two\nSegmentation fault\n", "/w/src", 2);
    cr_assert(strstr(tail, "Segmentation fault"), "without error lines, the end of the log: %s",
              tail);
    free(tail);
}

Test(build, forbid_source_finds_a_call_but_not_a_comment_or_a_string)
{
    gr_rubric r;
    lk_error err;
    char *text = gr_strf("%s", lab_text("01-straightforward", "kernels.cu"));
    char *with = gr_replace_all(text, "end\n", "forbid-source sciddicat_flows_cell "
                                               "sciddicat_width_cell\nend\n");
    LK_ASSERT_OK(gr_rubric_parse("r", with, &r, &err), &err);
    const gr_lab_rubric *lab = &r.labs[0];
    char found[GR_NAME_MAX];
    int line = 0;
    const char *mentions = "// sciddicat_flows_cell ported below\n"
                           "/* sciddicat_width_cell\n too */\n"
                           "const char *s = \"sciddicat_flows_cell\";\n"
                           "int sciddicat_flows_cell_mine(void);\n";
    cr_assert_eq(gr_forbidden_identifier(lab, mentions, found, sizeof found, &line), 0,
                 "a comment, a string or a longer name is no use: found %s", found);
    const char *uses = "#include <x.h>\n\n__global__ void k(void) {\n"
                       "    sciddicat_width_cell(1, 2, 3, 4, h, f);\n}\n";
    cr_assert_eq(gr_forbidden_identifier(lab, uses, found, sizeof found, &line), 1);
    cr_assert_str_eq(found, "sciddicat_width_cell");
    cr_assert_eq(line, 4);

    /* As the grader sees it: a rejected check that says why, with file and line. */
    char *src = gr_test_dir();
    char *file = gr_strf("%s/kernels.cu", src);
    LK_ASSERT_OK(gr_write_atomic_text(file, uses, &err), &err);
    gr_lab_result res;
    gr_lab_init(&res, lab->name, 100);
    cr_assert_eq(gr_check_source(lab, src, &res, &err), 0);
    cr_assert_str_eq(res.outcome, GR_OUT_REJECTED);
    cr_assert(strstr(res.summary, "kernels.cu:4: uses sciddicat_width_cell: this lab asks "
                                  "you to write that computation yourself"), "%s", res.summary);
    gr_lab_free(&res);
    gr_test_cleanup(src);
    free(file);
    gr_rubric_free(&r);
    free(text);
    free(with);
}

/* ---- the allow-list of global definitions and the preprocessed source rules ----------- */

/* The kit as the grader sees it, with one target architecture (sm_80: fast to compile, and
   the preprocessed source gets one device pass besides the host's). */
static void kit_for_tests(gr_kit *kit)
{
    lk_error err;
    LK_ASSERT_OK(gr_kit_init(kit, LK_TOP_DIR, GR_LK_LIB, GR_CUDA_HOME, "sm_80", 0, &err), &err);
}

/* A work folder for lab @p lab holding its student file @p source as src/kernels.cu, with
   the folders the checks write to (logs, tmp, build). */
static char *work_with(const char *source)
{
    char *work = gr_strf("%s/work", dir);
    lk_error err;
    static const char *const sub[] = {"src", "logs", "tmp", "build"};
    for (size_t i = 0; i < sizeof sub / sizeof sub[0]; i++) {
        char *d = gr_strf("%s/%s", work, sub[i]);
        LK_ASSERT_OK(gr_mkdir_p(d, 0755, &err), &err);
        free(d);
    }
    char *file = gr_strf("%s/src/kernels.cu", work);
    LK_ASSERT_OK(gr_write_atomic_text(file, source, &err), &err);
    free(file);
    return work;
}

/* A lab block of the real lab @p name with the rubric lines @p extra. */
static void parse_lab(gr_rubric *r, const char *name, const char *extra)
{
    lk_error err;
    char *text = gr_strf("%s", lab_text(name, "kernels.cu"));
    char *with = gr_replace_all(text, "end\n", extra);
    char *with_end = gr_strf("%send\n", with);
    LK_ASSERT_OK(gr_rubric_parse("r", with_end, r, &err), &err);
    free(text);
    free(with);
    free(with_end);
}

static const char stub_source[] =
    "#include <time.h>\n"
    "__global__ void reset_flows(int rows, int cols, double *f) { f[0] = rows + cols; }\n"
    "extern \"C\" int lab01_gpu_run(int rows, int cols, double *d_f)\n"
    "{\n"
    "    reset_flows<<<1, 1>>>(rows, cols, d_f);\n"
    "    return cudaDeviceSynchronize() == cudaSuccess ? 0 : -1;\n"
    "}\n"
    "#ifdef EVIL\n"
    "extern \"C\" int clock_gettime(clockid_t c, struct timespec *t) noexcept\n"
    "{\n"
    "    t->tv_sec = 0;\n"
    "    t->tv_nsec = c;\n"
    "    return 0;\n"
    "}\n"
    "#endif\n";

/* Compile stub_source (with -DEVIL: plus a libc clock) into WORK/build/kernels.o and check
   its symbols: returns the check's verdict and fills @p res. */
static int check_stub(const gr_kit *kit, const gr_lab_rubric *lab, int evil,
                      gr_lab_result *res)
{
    char *work = work_with(stub_source);
    char *cmd = gr_strf("'%s' -arch=sm_80 %s -c '%s/src/kernels.cu' -o '%s/build/kernels.o'",
                        GR_NVCC, evil ? "-DEVIL" : "", work, work);
    cr_assert_eq(system(cmd), 0, "%s failed", cmd);
    lk_error err;
    gr_lab_init(res, lab->name, 100);
    int rc = gr_check_symbols(kit, lab, work, res, &err);
    cr_assert(rc >= 0, "%s", err.msg);
    free(cmd);
    free(work);
    return rc;
}

Test(build, an_object_may_define_only_the_contract_and_cxx_names, .timeout = 300)
{
    gr_kit kit;
    kit_for_tests(&kit);
    gr_rubric r;
    parse_lab(&r, "01-straightforward", "entry lab01_gpu_run\n");
    const gr_lab_rubric *lab = &r.labs[0];

    gr_lab_result res;
    cr_assert_eq(check_stub(&kit, lab, 0, &res), 1, "%s", res.summary);
    cr_assert_str_eq(res.checks[res.nchecks - 1].status, GR_PASS);
    gr_lab_free(&res);

    cr_assert_eq(check_stub(&kit, lab, 1, &res), 0, "a libc clock passed");
    cr_assert_str_eq(res.outcome, GR_OUT_REJECTED);
    cr_assert(strstr(res.summary, "kernels.cu defines clock_gettime, which is not part of lab "
                                  "01's contract (lab.h): make it static"), "%s", res.summary);
    cr_assert(strstr(res.checks[res.nchecks - 1].reason, "clock_gettime"), "%s",
              res.checks[res.nchecks - 1].reason);
    gr_lab_free(&res);
    gr_rubric_free(&r);
    gr_kit_free(&kit);
}

Test(build, what_the_allow_list_lets_through)
{
    /* nvcc's and g++'s own names; a kernel stub and the student's C++ helpers. */
    cr_assert(gr_compiler_symbol("DW.ref.__gxx_personality_v0"));
    cr_assert(gr_compiler_symbol("__fatbinwrap_38_cuda_device_runtime_compute_90_cpp1_ii"));
    cr_assert(!gr_compiler_symbol("clock_gettime"));
    static const char *const fine[] = {
        "_Z33__device_stub__Z11reset_flowsiiPdiiPd", "_Z11reset_flowsiiPd",
        "_ZN3labplERK4VecS2_",
        "_ZNSt6vectorIdSaIdEE17_M_realloc_insertIJdEEEvN9__gnu_cxx17__normal_iteratorIPdS1_EEDpOT_",
        "_ZSt3minIiERKT_S2_S2_"};
    for (size_t i = 0; i < sizeof fine / sizeof fine[0]; i++)
        cr_assert_null(gr_library_definition(fine[i], 1), "%s should be allowed", fine[i]);
    /* Replacing the C++ library: operator new/delete, std, strong or not a template. */
    static const char *const bad[] = {
        "_Znwm", "_ZnwmRKSt9nothrow_t", "_ZdlPv", "_ZdlPvm", "_Znam", "_ZdaPv",
        "_ZNSt6chrono3_V212steady_clock3nowEv", "_ZSt9terminatev", "_ZNKSt9type_info4nameEv",
        "_ZNSt6vectorIdSaIdEE9push_backERKd", "_ZTVSt9exception",
        "_ZN9__gnu_cxx27__verbose_terminate_handlerEv"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        cr_assert_not_null(gr_library_definition(bad[i], !strstr(bad[i], "push_back")),
                           "%s should be refused", bad[i]);
}

/* gr_check_source then gr_check_includes, as grade.c runs them, on @p source in lab @p name
   with rubric lines @p extra: the verdict, @p res filled. */
static int check_preprocessed(const char *name, const char *extra, const char *source,
                              gr_lab_result *res)
{
    gr_kit kit;
    kit_for_tests(&kit);
    gr_rubric r;
    parse_lab(&r, name, extra);
    char *work = work_with(source);
    char *src = gr_strf("%s/src", work);
    lk_error err;
    gr_lab_init(res, name, 100);
    int rc = gr_check_source(&r.labs[0], src, res, &err);
    if (rc == 1)
        rc = gr_check_includes(&kit, &r.labs[0], work, res, &err);
    cr_assert(rc >= 0, "%s", err.msg);
    free(src);
    free(work);
    gr_rubric_free(&r);
    gr_kit_free(&kit);
    return rc;
}

static const char lab01_forbid[] =
    "forbid-source sciddicat_reset_cell sciddicat_flows_cell sciddicat_width_cell\n";

Test(build, forbid_source_applies_to_the_preprocessed_file, .timeout = 300)
{
    gr_lab_result res;
    const char *pasted = "#define CALL(a, b) a##b\n"
                         "__device__ void flows(double *f)\n"
                         "{\n"
                         "    CALL(sciddicat_, flows_cell)(f);\n"
                         "}\n";
    cr_assert_eq(check_preprocessed("01-straightforward", lab01_forbid, pasted, &res), 0,
                 "token pasting hid the call: %s", res.summary);
    cr_assert_str_eq(res.outcome, GR_OUT_REJECTED);
    cr_assert(strstr(res.summary, "kernels.cu:4: uses sciddicat_flows_cell (once its "
                                  "macros are expanded)"), "%s", res.summary);
    gr_lab_free(&res);

    /* Only the device pass sees it: each pass of the build is checked. */
    const char *device = "#ifdef __CUDA_ARCH__\n"
                         "#define CALL(a, b) a##b\n"
                         "#else\n"
                         "#define CALL(a, b) b\n"
                         "#endif\n"
                         "__device__ void w(double *f) { CALL(sciddicat_, width_cell)(f); }\n";
    cr_assert_eq(check_preprocessed("01-straightforward", lab01_forbid, device, &res), 0);
    cr_assert(strstr(res.summary, "kernels.cu:6: uses sciddicat_width_cell"), "%s",
              res.summary);
    gr_lab_free(&res);

    /* A line directive would hand the next lines to another file: refused as written. */
    const char *moved = "#define CALL(a, b) a##b\n"
                        "/* elsewhere */ # 1 \"/usr/include/stdio.h\"\n"
                        "__device__ void f(double *h) { CALL(sciddicat_, reset_cell)(h); }\n";
    cr_assert_eq(check_preprocessed("01-straightforward", lab01_forbid, moved, &res), 0);
    cr_assert(strstr(res.summary, "kernels.cu:2: a line directive"), "%s", res.summary);
    gr_lab_free(&res);

    /* A clean file: one passed source check, after the includes; a name in a comment, a
       string, a raw string or after a digit separator is no use. */
    const char *clean = "#define CALL(a, b) a##b\n"
                        "// sciddicat_flows_cell, ported below\n"
                        "static const char *s = R\"x(\"sciddicat_flows_cell)x\";\n"
                        "__device__ double flows(double h) { return CALL(h, ) * 1'000; }\n";
    cr_assert_eq(check_preprocessed("01-straightforward", lab01_forbid, clean, &res), 1, "%s",
                 res.summary);
    cr_assert_eq(res.nchecks, 2);
    cr_assert_str_eq(res.checks[0].stage, "includes");
    cr_assert_str_eq(res.checks[1].stage, "source");
    cr_assert_str_eq(res.checks[1].status, GR_PASS);
    gr_lab_free(&res);
}

Test(build, literals_hide_no_forbidden_name_from_the_raw_scan)
{
    gr_rubric r;
    parse_lab(&r, "01-straightforward", lab01_forbid);
    char found[GR_NAME_MAX];
    int line = 0;
    /* A digit separator is not a character literal, nor is a raw string's quote the end of
       an ordinary string: the call after each is seen. */
    const char *sep = "int n = 1'0; sciddicat_flows_cell(); int m = 2'0;\n";
    cr_assert_eq(gr_forbidden_identifier(&r.labs[0], sep, found, sizeof found, &line), 1);
    const char *raw = "auto s = R\"x(\")x\"; sciddicat_width_cell();\n";
    cr_assert_eq(gr_forbidden_identifier(&r.labs[0], raw, found, sizeof found, &line), 1);
    cr_assert_str_eq(found, "sciddicat_width_cell");
    int at = 0;
    cr_assert_eq(gr_line_directive("int a;\n#\\\nline 7 \"x.h\"\n", &at), 1);
    cr_assert_eq(at, 2);
    cr_assert_eq(gr_line_directive("#include <stdio.h>\n#define L(x) #x\n", &at), 0);
    gr_rubric_free(&r);
}

Test(build, a_cub_use_spelled_through_a_macro_or_an_alias_is_refused, .timeout = 300)
{
    gr_lab_result res;
    const char *forbid = "forbid-source cub thrust DeviceReduce BlockReduce WarpReduce\n";
    const char *pasted = "#define NS(a, b) a##b\n"
                         "#define SUM(x) NS(Device, Reduce)::Sum(x)\n"
                         "void f(void) { NS(c, ub)::SUM(0); }\n";
    cr_assert_eq(check_preprocessed("06-reductions", forbid, pasted, &res), 0);
    cr_assert(strstr(res.summary, "kernels.cu:3: uses cub"), "%s", res.summary);
    gr_lab_free(&res);
    const char *alias = "#define C(a, b) a##b\n"
                        "namespace fast = C(c, ub);\n";
    cr_assert_eq(check_preprocessed("06-reductions", forbid, alias, &res), 0);
    cr_assert(strstr(res.summary, "kernels.cu:2: uses cub"), "%s", res.summary);
    gr_lab_free(&res);
}

/* A student distribution has no grader/examples: the default class is missing, and the
   grader says what to grade instead. */
Test(build, a_kit_without_examples_says_what_to_grade_instead)
{
    char *kit = gr_strf("%s/kit", dir), *out = gr_strf("%s/out", dir);
    char *log = gr_strf("%s/grade.log", dir);
    lk_error err;
    LK_ASSERT_OK(gr_mkdir_p(kit, 0755, &err), &err);
    const char *args[] = {"--kit", kit, "--out", out, NULL};
    int status = gr_test_run_grader(args, log);
    char *console = gr_read_file(log, 1 << 20, NULL, &err);
    cr_assert_not_null(console, "%s", err.msg);
    cr_expect_eq(status, 2, "exit status %d: %s", status, console);
    cr_expect(strstr(console, "/grader/examples: no example submissions in this kit") &&
                  strstr(console, "--submissions DIR") && strstr(console, "--submissions self"),
              "%s", console);
    free(console);
    free(kit);
    free(out);
    free(log);
}

/* `make -n` of @p goal in @p folder of the kit, with @p env before make (VAR=value ...) and
   the variables under test removed from the environment otherwise: the commands make would
   run, and its errors. A make that fails fails the test unless @p may_fail (a file that only
   the instructor's kit has, named in the error instead of a command). */
static char *make_dry_run(const char *env, const char *folder, const char *goal, int may_fail)
{
    char *log = gr_strf("%s/make-n.log", dir);
    char *cmd = gr_strf("cd '%s/%s' && env -u OUT -u B -u VARIANT -u KERNELS -u REPORTS %s make -n "
                        "--no-print-directory %s > '%s' 2>&1",
                        LK_TOP_DIR, folder, env, goal, log);
    const int status = system(cmd);
    cr_assert(status == 0 || (may_fail && status != -1), "%s failed: see %s", cmd, log);
    lk_error err;
    char *text = gr_read_file(log, 1 << 20, NULL, &err);
    cr_assert_not_null(text, "%s", err.msg);
    free(cmd);
    free(log);
    return text;
}

/* Reports and builds go where the command line says, or to their defaults: an OUT or B left
   in the environment (a CI runner's, a shell's) moves neither. */
Test(build, make_takes_out_and_b_from_the_command_line_not_the_environment)
{
    char *plain = make_dry_run("", ".", "grade", 0);
    char *env_out = make_dry_run("OUT=/tmp/labkit-env-out", ".", "grade", 0);
    char *cmd_out = make_dry_run("", ".", "grade OUT=/tmp/labkit-cmd-out", 0);
    cr_expect(strstr(plain, "/build/grade"), "no default report folder in:\n%s", plain);
    cr_expect_str_eq(env_out, plain, "the environment's OUT changed make grade");
    cr_expect(strstr(cmd_out, "--out /tmp/labkit-cmd-out"), "OUT=... was ignored:\n%s", cmd_out);
    char *lab_plain = make_dry_run("", "labs/01-straightforward", "build", 0);
    char *lab_env = make_dry_run("B=/tmp/labkit-env-b", "labs/01-straightforward", "build", 0);
    char *lab_cmd = make_dry_run("", "labs/01-straightforward", "build B=/tmp/labkit-cmd-b", 0);
    cr_expect_str_eq(lab_env, lab_plain, "the environment's B changed a lab's build");
    cr_expect(strstr(lab_cmd, "/tmp/labkit-cmd-b/"), "B=... was ignored:\n%s", lab_cmd);
    free(plain);
    free(env_out);
    free(cmd_out);
    free(lab_plain);
    free(lab_env);
    free(lab_cmd);
}

/* The code a lab builds and tests, and where its suites report, are chosen on the command
   line: a VARIANT, KERNELS or REPORTS left in a shell changes nothing (-B: print every
   command, up to date or not). On the command line they name their file, in a command or, for
   a file missing here (no solutions/ in the student distribution), in make's error. */
Test(build, make_takes_the_variant_kernels_and_reports_from_the_command_line_only)
{
    static const struct {
        const char *assignment, *seen;
        const char *goal;
    } vars[] = {
        {"VARIANT=solution", "solutions/01-straightforward/kernels.cu", "-B build"},
        {"KERNELS=/tmp/labkit-kernels.cu", "/tmp/labkit-kernels.cu", "-B build"},
        {"REPORTS=/tmp/labkit-reports", "/tmp/labkit-reports", "check-suites"},
    };
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        char *cmd_goal = gr_strf("%s %s", vars[i].goal, vars[i].assignment);
        char *plain = make_dry_run("", "labs/01-straightforward", vars[i].goal, 0);
        char *from_env =
            make_dry_run(vars[i].assignment, "labs/01-straightforward", vars[i].goal, 0);
        char *from_cmd = make_dry_run("", "labs/01-straightforward", cmd_goal, 1);
        cr_expect_str_eq(from_env, plain, "the environment's %s changed the lab's make",
                         vars[i].assignment);
        cr_expect(strstr(from_cmd, vars[i].seen), "%s on the command line was ignored:\n%s",
                  vars[i].assignment, from_cmd);
        free(cmd_goal);
        free(plain);
        free(from_env);
        free(from_cmd);
    }
}


/* make grade in a lab folder self-grades that lab only, into the lab's build folder. */
Test(build, a_lab_folders_make_grade_self_grades_that_lab)
{
    char *plan = make_dry_run("", "labs/04-halo-tiling", "grade", 0);
    cr_expect(strstr(plan, "--submissions self") && strstr(plan, "--lab 04-halo-tiling"),
              "not a self-grade of lab 04:\n%s", plan);
    cr_expect(strstr(plan, "labs/04-halo-tiling/build/student/grade"),
              "reports not in the lab's build folder:\n%s", plan);
    free(plan);
}

/* --lab: an unknown lab is a usage error that lists the kit's labs. */
Test(build, grading_an_unknown_lab_is_a_usage_error_that_lists_the_labs)
{
    char *out = gr_strf("%s/out", dir), *log = gr_strf("%s/grade.log", dir);
    const char *args[] = {"--submissions", "self", "--lab", "09-missing", "--out", out, NULL};
    const int status = gr_test_run_grader(args, log);
    lk_error err;
    char *console = gr_read_file(log, 1 << 20, NULL, &err);
    cr_assert_not_null(console, "%s", err.msg);
    cr_expect_eq(status, 2, "exit status %d: %s", status, console);
    cr_expect(strstr(console, "--lab 09-missing: no such graded lab") &&
                  strstr(console, "01-straightforward, 02-coalescing"),
              "%s", console);
    free(console);
    free(out);
    free(log);
}

/* --lab twice is refused, not the first one dropped: --lab is one lab, or every lab without. */
Test(build, a_second_lab_option_is_a_usage_error_not_a_dropped_lab)
{
    char *out = gr_strf("%s/out", dir), *log = gr_strf("%s/grade.log", dir);
    const char *args[] = {"--submissions", "self", "--lab", "01-straightforward", "--lab",
                          "07-mpi-split", "--out", out, NULL};
    const int status = gr_test_run_grader(args, log);
    lk_error err;
    char *console = gr_read_file(log, 1 << 20, NULL, &err);
    cr_assert_not_null(console, "%s", err.msg);
    cr_expect_eq(status, 2, "exit status %d: %s", status, console);
    cr_expect(strstr(console, "--lab 01-straightforward and --lab 07-mpi-split: --lab grades "
                              "one lab; leave it out to grade every lab"),
              "%s", console);
    cr_expect(!gr_exists(out), "a refused command line graded into %s", out);
    free(console);
    free(out);
    free(log);
}

/* --lab grades that lab alone: the gradebook has its column and no other. */
Test(build, lab_grades_that_lab_alone, .timeout = 300)
{
    char *out = gr_strf("%s/out", dir), *log = gr_strf("%s/grade.log", dir);
    const char *args[] = {"--submissions", "self", "--lab", "03-shared-memory", "--no-gpu",
                          "--out", out, "-q", NULL};
    const int status = gr_test_run_grader(args, log);
    lk_error err;
    char *console = gr_read_file(log, 1 << 20, NULL, &err);
    cr_assert_not_null(console, "%s", err.msg);
    cr_expect_eq(status, 4, "exit status %d (4: graded, GPU stages not run): %s", status, console);
    char *book_path = gr_strf("%s/gradebook.csv", out);
    char *book = gr_read_file(book_path, 1 << 20, NULL, &err);
    cr_assert_not_null(book, "%s", err.msg);
    cr_expect(strncmp(book, "student,03-shared-memory,total,", 31) == 0, "gradebook:\n%s", book);
    cr_expect(!strstr(book, "01-straightforward") && !strstr(book, "04-halo-tiling"),
              "other labs graded:\n%s", book);
    free(book);
    free(book_path);
    free(console);
    free(out);
    free(log);
}

/* A student file handed in where the grader does not look is named in the lab's reason. */
Test(build, a_misplaced_student_file_is_named_in_the_reason)
{
    put("m/src/kernels.cu", "x");
    gr_lab_result r;
    char *got;
    cr_assert_eq(fetch(&one, "m", &r, &got), 0);
    cr_assert_str_eq(r.outcome, GR_OUT_MISSING);
    cr_assert(strstr(r.summary, "but found src/kernels.cu, where the grader does not look: move "
                                "it to labs/"), "%s", r.summary);
    gr_lab_free(&r);
}

/* Every entry of the submissions folder is graded or named in a warning that says what to
   do; an unknown --only names itself and the folders there are. */
Test(build, nothing_in_the_submissions_folder_is_dropped_without_a_word)
{
    char *subs = gr_strf("%s/class", dir), *dave = gr_strf("%s/class/dave", dir);
    char *zip = gr_strf("%s/class/carol.zip", dir), *erin = gr_strf("%s/class/erin", dir);
    cr_assert_eq(gr_mkdir_p(dave, 0755, NULL), 0);
    FILE *f = fopen(zip, "w");
    cr_assert_not_null(f);
    fclose(f);
    cr_assert_eq(symlink(dave, erin), 0);
    char *out = gr_strf("%s/out", dir), *log = gr_strf("%s/grade.log", dir);
    const char *args[] = {"--submissions", subs, "--lab", "01-straightforward", "--no-gpu",
                          "--out", out, NULL};
    gr_test_run_grader(args, log);
    lk_error err;
    char *console = gr_read_file(log, 1 << 20, NULL, &err);
    cr_assert_not_null(console, "%s", err.msg);
    cr_expect(strstr(console, "carol.zip: not a folder: not graded: unpack it as "
                              "carol/labs/NN-name/kernels.cu"), "%s", console);
    cr_expect(strstr(console, "erin: a symbolic link, not a folder: not graded"), "%s", console);
    cr_expect(strstr(console, "[1/1] dave"), "%s", console);
    free(console);
    const char *only[] = {"--submissions", subs, "--only", "zed", "--no-gpu", "--out", out,
                          NULL};
    const int status = gr_test_run_grader(only, log);
    console = gr_read_file(log, 1 << 20, NULL, &err);
    cr_expect_neq(status, 0);
    cr_expect(strstr(console, "--only zed: ") && strstr(console, "no student folder of that "
                                                           "name: give one of its folders (dave)"),
              "%s", console);
    free(console);
    free(log);
    free(out);
    free(erin);
    free(zip);
    free(dave);
    free(subs);
}

/* --lab of a lab the rubric does not grade: the choices are the labs it grades, not that one. */
Test(build, the_labs_offered_for_lab_are_the_graded_ones)
{
    char kit_rubric[512];
    lk_test_path(kit_rubric, sizeof kit_rubric, "labs/01-straightforward/rubric");
    lk_error err;
    char *text = gr_read_file(kit_rubric, 1 << 20, NULL, &err); /* lab 01's block alone */
    cr_assert_not_null(text, "%s", err.msg);
    char *rubric = gr_strf("%s/rubric.txt", dir);
    FILE *f = fopen(rubric, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
    char *out = gr_strf("%s/out", dir), *log = gr_strf("%s/grade.log", dir);
    const char *args[] = {"--submissions", "self", "--rubric", rubric, "--lab", "02-coalescing",
                          "--out", out, NULL};
    const int status = gr_test_run_grader(args, log);
    char *console = gr_read_file(log, 1 << 20, NULL, &err);
    cr_assert_not_null(console, "%s", err.msg);
    cr_expect_eq(status, 2, "exit status %d: %s", status, console);
    cr_expect(strstr(console, "--lab 02-coalescing: no such graded lab") &&
                  strstr(console, "give one of 01-straightforward\n"),
              "%s", console);
    free(console);
    free(log);
    free(out);
    free(rubric);
    free(text);
}
