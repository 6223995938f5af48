#define _GNU_SOURCE /* strcasestr, realpath */
#include "build.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

/* ---- kit information ----------------------------------------------------------------- */

static void add_dir(gr_kit *kit, const char *dir)
{
    char real[PATH_MAX];
    if (!realpath(dir, real))
        return;
    for (int i = 0; i < kit->ninclude_dirs; i++)
        if (strcmp(kit->include_dirs[i], real) == 0)
            return;
    kit->include_dirs = gr_xrealloc(kit->include_dirs,
                                    (kit->ninclude_dirs + 1) * sizeof *kit->include_dirs);
    kit->include_dirs[kit->ninclude_dirs++] = gr_xstrdup(real);
}

/* The compiler's own search folders, from `cc -E -v` (trusted tools, so popen is fine). */
static void add_compiler_dirs(gr_kit *kit, const char *command)
{
    FILE *p = popen(command, "r");
    if (!p)
        return;
    char line[PATH_MAX + 16];
    int in_list = 0;
    while (fgets(line, sizeof line, p)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (strstr(line, "search starts here"))
            in_list = 1;
        else if (strstr(line, "End of search list"))
            in_list = 0;
        else if (in_list && line[0] == ' ') {
            char *dir = line + strspn(line, " ");
            char *note = strstr(dir, " (framework directory)");
            if (note)
                *note = '\0';
            add_dir(kit, dir);
        }
    }
    pclose(p);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int gr_kit_init(gr_kit *kit, const char *top, const char *lib, const char *cuda_home,
                const char *cuda_arch, int drop, lk_error *err)
{
    memset(kit, 0, sizeof *kit);
    kit->top = gr_xstrdup(top);
    kit->deps_mk = gr_strf("%s/grader/deps.mk", top);
    kit->lib = gr_xstrdup(lib);
    kit->cuda_arch = cuda_arch ? gr_xstrdup(cuda_arch) : NULL;
    kit->drop = drop;
    if (!gr_exists(kit->deps_mk))
        return lk_fail(err, "%s: missing: the grader needs it to list #include dependencies",
                       kit->deps_mk);
    add_compiler_dirs(kit, "gcc -E -v -x c /dev/null 2>&1 >/dev/null");
    add_compiler_dirs(kit, "g++ -E -v -x c++ /dev/null 2>&1 >/dev/null");
    add_dir(kit, "/usr/include");
    if (cuda_home)
        add_dir(kit, cuda_home);
    char *labkit = gr_strf("%s/common/include/labkit", top);
    add_dir(kit, labkit);
    free(labkit);

    FILE *p = NULL;
    {
        char *cmd = gr_strf("nm -P -g --defined-only '%s' 2>/dev/null", lib);
        if (!strchr(lib, '\''))
            p = popen(cmd, "r");
        free(cmd);
    }
    if (!p)
        return lk_fail(err, "%s: cannot list its symbols with nm: is binutils installed?", lib);
    char line[1024];
    while (fgets(line, sizeof line, p)) {
        char name[512], type[8];
        /* Weak symbols are the C++ compiler's (e.g. DW.ref.__gxx_personality_v0 of every CUDA
           object): the kit's own functions are strong, and two weak copies link fine. */
        if (sscanf(line, "%511s %7s", name, type) != 2 || name[strlen(name) - 1] == ':' ||
            strchr(name, '[') || strchr("VvWw", type[0]))
            continue;
        kit->lib_symbols = gr_xrealloc(kit->lib_symbols,
                                       (kit->nlib_symbols + 1) * sizeof *kit->lib_symbols);
        kit->lib_symbols[kit->nlib_symbols++] = gr_xstrdup(name);
    }
    int status = pclose(p);
    if (status != 0 || kit->nlib_symbols == 0)
        return lk_fail(err, "%s: nm found no symbols in the kit library: build it first "
                            "(make lib)", lib);
    qsort(kit->lib_symbols, kit->nlib_symbols, sizeof *kit->lib_symbols, cmp_str);
    return 0;
}

void gr_kit_free(gr_kit *kit)
{
    for (int i = 0; i < kit->ninclude_dirs; i++)
        free(kit->include_dirs[i]);
    for (int i = 0; i < kit->nlib_symbols; i++)
        free(kit->lib_symbols[i]);
    free(kit->include_dirs);
    free(kit->lib_symbols);
    free(kit->top);
    free(kit->deps_mk);
    free(kit->cuda_arch);
    free(kit->log_dir);
    free(kit->lib);
    memset(kit, 0, sizeof *kit);
}

void gr_build_limits(const gr_kit *kit, const gr_lab_rubric *lab, gr_limits *lim)
{
    memset(lim, 0, sizeof *lim);
    lim->wall_s = lab->limit_build;
    lim->cpu_s = (long)(2 * lab->limit_build);
    lim->file_bytes = 1LL << 30;
    lim->output_bytes = 8LL << 20;
    lim->as_bytes = 16LL << 30;
    lim->nproc = 512;
    lim->drop = kit->drop;
    lim->jail = kit->jail;
}

/* ---- files ----------------------------------------------------------------------------- */

static int name_in_other_lab(const gr_lab_rubric *const *labs, int nlabs, const gr_lab_rubric *lab,
                             const char *file)
{
    for (int i = 0; i < nlabs; i++)
        if (labs[i] != lab)
            for (int k = 0; k < labs[i]->nfiles; k++)
                if (strcmp(labs[i]->files[k].name, file) == 0)
                    return 1;
    return 0;
}

int gr_fetch_files(const char *root, int self, const gr_lab_rubric *const *labs, int nlabs,
                   const gr_lab_rubric *lab, const char *src_dir, gr_lab_result *r,
                   lk_error *err)
{
    char real_root[PATH_MAX];
    if (!realpath(root, real_root))
        return lk_fail(err, "%s: cannot resolve the submission folder: %s", root, strerror(errno));
    gr_buf found = {0}, missing = {0}, notes = {0}, problems = {0};
    for (int f = 0; f < lab->nfiles; f++) {
        const char *file = lab->files[f].name;
        char *cand[3];
        int ncand = 0;
        cand[ncand++] = gr_strf("labs/%s/%s", lab->name, file);
        if (!self) {
            cand[ncand++] = gr_strf("%s/%s", lab->name, file);
            if (!name_in_other_lab(labs, nlabs, lab, file))
                cand[ncand++] = gr_strf("%s", file);
        }
        int chosen = -1;
        for (int c = 0; c < ncand; c++) {
            char *path = gr_strf("%s/%s", real_root, cand[c]);
            if (gr_exists(path)) {
                if (chosen < 0)
                    chosen = c;
                else
                    gr_buf_printf(&notes, "%s%s also exists and was ignored (%s was used)",
                                  notes.len ? "; " : "", cand[c], cand[chosen]);
            }
            free(path);
        }
        if (chosen < 0) {
            gr_buf_printf(&missing, "%s%s (looked for ", missing.len ? "; " : "", file);
            for (int c = 0; c < ncand; c++)
                gr_buf_printf(&missing, "%s%s", c ? ", " : "", cand[c]);
            gr_buf_puts(&missing, ")");
        } else {
            char *path = gr_strf("%s/%s", real_root, cand[chosen]);
            char real[PATH_MAX];
            char *dst = gr_strf("%s/%s", src_dir, file);
            lk_error cerr;
            struct stat st;
            /* A folder on the way may be a link out of the submission: refuse escapes. */
            if (!realpath(path, real) || !gr_path_within(real, real_root))
                gr_buf_printf(&problems, "%s%s: leads outside the submission folder (a "
                                         "symbolic link?): submit the file itself",
                              problems.len ? "; " : "", cand[chosen]);
            else if (gr_copy_untrusted(path, dst, GR_MAX_STUDENT_FILE, &cerr) != 0) {
                char *root_slash = gr_strf("%s/", real_root);
                char *shown = gr_replace_all(cerr.msg, root_slash, "");
                gr_buf_printf(&problems, "%s%s", problems.len ? "; " : "", shown);
                free(shown);
                free(root_slash);
            }
            else if (stat(dst, &st) == 0)
                gr_buf_printf(&found, "%s%s (%.1f KiB)", found.len ? ", " : "", cand[chosen],
                              st.st_size / 1024.0);
            free(dst);
            free(path);
        }
        for (int c = 0; c < ncand; c++)
            free(cand[c]);
    }
    int rc;
    if (missing.len) {
        gr_lab_add(r, "files", "student files", GR_FAIL,
                   gr_buf_str(&missing), notes.len ? gr_buf_str(&notes) : NULL);
        gr_lab_outcome(r, GR_OUT_MISSING, "not submitted: %s", gr_buf_str(&missing));
        rc = 0;
    } else if (problems.len) {
        gr_lab_add(r, "files", "student files", GR_FAIL, gr_buf_str(&problems),
                   notes.len ? gr_buf_str(&notes) : NULL);
        gr_lab_outcome(r, GR_OUT_REJECTED, "student file refused: %s", gr_buf_str(&problems));
        rc = 0;
    } else {
        char *reason = gr_strf("found %s", gr_buf_str(&found));
        gr_lab_add(r, "files", "student files", GR_PASS, reason,
                   notes.len ? gr_buf_str(&notes) : NULL);
        free(reason);
        rc = 1;
    }
    gr_buf_free(&found);
    gr_buf_free(&missing);
    gr_buf_free(&notes);
    gr_buf_free(&problems);
    return rc;
}

/* ---- running the kit's tools ------------------------------------------------------------ */

/* A line that reports a problem (paths may contain "error", e.g. a student folder name). */
static int error_line(const char *line)
{
    static const char *const marks[] = {"error:", "Error:", ": error", "undefined reference",
                                        "multiple definition", "No rule to make target",
                                        "cannot find", "Permission denied"};
    for (size_t i = 0; i < sizeof marks / sizeof marks[0]; i++)
        if (strstr(line, marks[i]))
            return 1;
    return 0;
}

/* A command that make echoes before running it. */
static int echo_line(const char *line)
{
    return strncmp(line, "gcc ", 4) == 0 || strncmp(line, "g++ ", 4) == 0 ||
           strncmp(line, "cc ", 3) == 0 || strncmp(line, "ar ", 3) == 0 ||
           (line[0] == '/' && strstr(line, "nvcc ") && strstr(line, " -c "));
}

char *gr_first_errors(const char *log, const char *src_dir, int max)
{
    char *prefix = gr_strf("%s/", src_dir);
    char *step = gr_replace_all(log, prefix, "");
    free(prefix);
    /* Paths in the work folder mean nothing to a student: show them relative to it. */
    char *work = gr_xstrdup(src_dir);
    char *slash = strrchr(work, '/');
    if (slash)
        slash[1] = '\0';
    char *text = slash ? gr_replace_all(step, work, "") : gr_xstrdup(step);
    free(step);
    free(work);
    gr_buf out = {0};
    int n = 0, started = 0;
    for (char *line = text; line && *line && n < max;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        /* From the first error on, keep its context (nvcc prints the line and a caret). */
        started |= error_line(line) && !echo_line(line);
        if (started && !echo_line(line)) {
            gr_buf_printf(&out, "%s\n", line);
            n++;
        }
        line = nl ? nl + 1 : NULL;
    }
    free(text);
    if (n == 0) {
        /* No line says "error": show the end of the log, where the failure is. */
        const char *p = log + strlen(log);
        int lines = 0;
        while (p > log && lines <= max)
            if (*--p == '\n')
                lines++;
        gr_head(p + (*p == '\n'), max, 4096, &out);
    }
    return gr_buf_take(&out);
}

static char *read_log(const char *path)
{
    lk_error e;
    char *s = gr_read_file(path, 64u << 20, NULL, &e);
    return s ? s : gr_xstrdup("");
}

/* Run make (or another tool) for the build stage; the log gets stdout and stderr. */
static int run_tool(const gr_kit *kit, const gr_lab_rubric *lab, const char *const *argv,
                    const char *work, const char *log, gr_outcome *o, lk_error *err)
{
    gr_limits lim;
    gr_build_limits(kit, lab, &lim);
    char *tmp = gr_strf("TMPDIR=%s/tmp", work);
    const char *env[] = {tmp, NULL};
    const char *writable[] = {work, NULL};
    gr_cmd cmd = {argv, work, log, NULL, NULL, 0, env, writable, NULL};
    int rc = gr_sandbox_run(&cmd, &lim, o, err);
    free(tmp);
    return rc;
}

static int dir_allowed(const gr_kit *kit, const char *real, const char *lab_dir,
                       const char *src_dir)
{
    if (gr_path_within(real, lab_dir) || gr_path_within(real, src_dir))
        return 1;
    for (int i = 0; i < kit->ninclude_dirs; i++)
        if (gr_path_within(real, kit->include_dirs[i]))
            return 1;
    return 0;
}

int gr_check_includes(const gr_kit *kit, const gr_lab_rubric *lab, const char *work,
                      gr_lab_result *r, lk_error *err)
{
    char real_lab[PATH_MAX], real_src[PATH_MAX];
    char *lab_dir = gr_strf("%s/labs/%s", kit->top, lab->name);
    char *src_dir = gr_strf("%s/src", work);
    int ok = realpath(lab_dir, real_lab) && realpath(src_dir, real_src);
    free(lab_dir);
    if (!ok) {
        free(src_dir);
        return lk_fail(err, "labs/%s or %s: cannot resolve: %s", lab->name, work, strerror(errno));
    }
    gr_buf outside = {0};
    int rc = 1;
    double t0 = 0;
    for (int f = 0; f < lab->nfiles && rc == 1; f++) {
        char *src = gr_strf("%s/%s", src_dir, lab->files[f].name);
        char *deps = gr_strf("%s/logs/deps-%s.txt", work, lab->files[f].name);
        char *log = gr_strf("%s/logs/deps-%s.log", work, lab->files[f].name);
        char *a_dir = gr_strf("%s/labs/%s", kit->top, lab->name);
        char *a_src = gr_strf("GRADER_SRC=%s", src);
        char *a_deps = gr_strf("GRADER_DEPS=%s", deps);
        char *a_arch = kit->cuda_arch ? gr_strf("CUDA_ARCH=%s", kit->cuda_arch) : NULL;
        const char *argv[] = {"make", "-s", "--no-print-directory", "-C", a_dir, "-f", "Makefile",
                              "-f", kit->deps_mk, "grader-deps", a_src, a_deps, a_arch, NULL};
        gr_outcome o;
        if (run_tool(kit, lab, argv, work, log, &o, err) != 0) {
            rc = -1;
        } else if (!gr_outcome_ok(&o)) {
            /* The preprocessor failed: a missing header or an #error is a compile error. */
            char *text = read_log(log);
            char *first = gr_first_errors(text, src_dir, 12);
            gr_check *c = gr_lab_add(r, "build", "compile", GR_FAIL,
                                     o.end == GR_END_EXITED ? "the preprocessor failed" : o.reason,
                                     first);
            c->seconds = o.wall_s;
            gr_lab_outcome(r, GR_OUT_BUILD_FAILED, "does not compile: %s",
                           first[0] ? strtok(first, "\n") : o.reason);
            free(first);
            free(text);
            rc = 0;
        } else {
            t0 += o.wall_s;
            char *text = read_log(deps);
            /* make syntax: "target: dep dep \<newline> dep ..." with "\ " for spaces. */
            char *p = strchr(text, ':');
            p = p ? p + 1 : text + strlen(text);
            while (*p) {
                while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' ||
                       (*p == '\\' && (p[1] == '\n' || p[1] == '\r')))
                    p++;
                if (!*p)
                    break;
                gr_buf name = {0};
                while (*p && *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r') {
                    if (*p == '\\' && p[1] == ' ')
                        p++;
                    else if (*p == '\\' && (p[1] == '\n' || p[1] == '\r'))
                        break;
                    char one[2] = {*p++, 0};
                    gr_buf_puts(&name, one);
                }
                char real[PATH_MAX];
                const char *dep = gr_buf_str(&name);
                if (dep[0] && (!realpath(dep, real) || !dir_allowed(kit, real, real_lab, real_src)))
                    gr_buf_printf(&outside, "%s%s", outside.len ? "\n" : "", dep);
                gr_buf_free(&name);
            }
            free(text);
        }
        free(src);
        free(deps);
        free(log);
        free(a_dir);
        free(a_src);
        free(a_deps);
        free(a_arch);
    }
    if (rc == 1 && outside.len) {
        char *first = gr_xstrdup(gr_buf_str(&outside));
        first[strcspn(first, "\n")] = '\0';
        char *reason = gr_strf("includes files outside the CUDA toolkit, the system headers, "
                               "common/include/labkit and the lab's folder, e.g. %s", first);
        gr_check *c = gr_lab_add(r, "includes", "#include dependencies", GR_FAIL, reason,
                                 gr_buf_str(&outside));
        c->seconds = t0;
        gr_lab_outcome(r, GR_OUT_REJECTED, "rejected: %s", reason);
        free(reason);
        free(first);
        rc = 0;
    } else if (rc == 1) {
        gr_check *c = gr_lab_add(r, "includes", "#include dependencies", GR_PASS,
                                 "only the toolkit's, the system's and the kit's headers", NULL);
        c->seconds = t0;
    }
    gr_buf_free(&outside);
    free(src_dir);
    return rc;
}

int gr_refresh_lib(const gr_kit *kit, lk_error *err)
{
    /* Student builds run unprivileged and cannot write build/: make sure the library they
       link is up to date first, as the grader's own user. */
    const char *argv[] = {"make", "-s", "--no-print-directory", "-C", kit->top, "lib", NULL};
    gr_limits lim = {.wall_s = 1800, .output_bytes = 8LL << 20};
    char *log = gr_strf("%s/lib-refresh.log", kit->log_dir ? kit->log_dir : "/tmp");
    gr_cmd cmd = {argv, kit->top, log, NULL, NULL, 0, NULL, NULL, NULL};
    gr_outcome o;
    int rc = gr_sandbox_run(&cmd, &lim, &o, err);
    if (rc == 0 && !gr_outcome_ok(&o)) {
        char *text = read_log(log);
        char *first = gr_first_errors(text, kit->top, 6);
        rc = lk_fail(err, "the kit library does not build (make lib: %s): fix the kit first:\n%s",
                     o.reason, first);
        free(first);
        free(text);
    }
    free(log);
    return rc;
}

int gr_build(const gr_kit *kit, const gr_lab_rubric *lab, const char *work, const char *src_dir,
             gr_lab_result *r, lk_error *err)
{
    char *a_dir = gr_strf("%s/labs/%s", kit->top, lab->name);
    char *a_b = gr_strf("B=%s/build", work);
    char *goal = gr_strf("%s/build/%s", work, lab->driver);
    char *log = gr_strf("%s/logs/build.log", work);
    char *a_arch = kit->cuda_arch ? gr_strf("CUDA_ARCH=%s", kit->cuda_arch) : NULL;
    char *vars[GR_MAX_FILES];
    const char *argv[16 + GR_MAX_FILES];
    int n = 0;
    argv[n++] = "make";
    argv[n++] = "--no-print-directory";
    /* The library was brought up to date by gr_refresh_lib(); the unprivileged build must
       not try to remake it (it cannot write build/). */
    argv[n++] = "-o";
    argv[n++] = kit->lib;
    argv[n++] = "-C";
    argv[n++] = a_dir;
    argv[n++] = "VARIANT=student";
    for (int f = 0; f < lab->nfiles; f++) {
        vars[f] = gr_strf("%s=%s/%s", lab->files[f].var, src_dir, lab->files[f].name);
        argv[n++] = vars[f];
    }
    argv[n++] = a_b;
    if (a_arch)
        argv[n++] = a_arch;
    argv[n++] = goal;
    argv[n] = NULL;
    gr_outcome o;
    int rc = run_tool(kit, lab, argv, work, log, &o, err) != 0 ? -1 : 1;
    if (rc == 1 && (!gr_outcome_ok(&o) || access(goal, X_OK) != 0)) {
        char *text = read_log(log);
        char *first = gr_first_errors(text, src_dir, 12);
        const char *why = o.end == GR_END_EXITED ? "compile or link errors" : o.reason;
        gr_check *c = gr_lab_add(r, "build", "compile and link", GR_FAIL, why, first);
        c->seconds = o.wall_s;
        char *line = gr_xstrdup(first);
        line[strcspn(line, "\n")] = '\0';
        gr_lab_outcome(r, GR_OUT_BUILD_FAILED, "does not build: %s", line[0] ? line : why);
        free(line);
        free(first);
        free(text);
        rc = 0;
    } else if (rc == 1) {
        gr_check *c = gr_lab_add(r, "build", "compile and link", GR_PASS,
                                 "built against the pristine kit", NULL);
        c->seconds = o.wall_s;
    }
    for (int f = 0; f < lab->nfiles; f++)
        free(vars[f]);
    free(a_dir);
    free(a_b);
    free(goal);
    free(log);
    free(a_arch);
    return rc;
}

/* ---- the source ------------------------------------------------------------------------ */

int gr_check_source(const gr_lab_rubric *lab, const char *src_dir, gr_lab_result *r,
                    lk_error *err)
{
    if (lab->nforbid_source == 0)
        return 1;
    for (int f = 0; f < lab->nfiles; f++) {
        char *path = gr_strf("%s/%s", src_dir, lab->files[f].name);
        char *text = gr_read_file(path, 2 * GR_MAX_STUDENT_FILE, NULL, err);
        free(path);
        if (!text)
            return -1;
        char name[GR_NAME_MAX];
        int line = 0, hit = gr_forbidden_identifier(lab, text, name, sizeof name, &line);
        free(text);
        if (hit) {
            char *why = gr_strf("%s:%d: uses %s: this lab asks you to write that computation "
                                "yourself (porting it is the lesson), not to call the kit's "
                                "version: replace the call by your own code",
                                lab->files[f].name, line, name);
            gr_lab_add(r, "source", "lab-specific rules", GR_FAIL, why, NULL);
            gr_lab_outcome(r, GR_OUT_REJECTED, "rejected: %s", why);
            free(why);
            return 0;
        }
    }
    gr_lab_add(r, "source", "lab-specific rules", GR_PASS,
               "none of the kit functions this lab asks you to write yourself", NULL);
    return 1;
}

/* ---- symbols ------------------------------------------------------------------------------ */

static int is_entry(const gr_lab_rubric *lab, const char *name)
{
    for (int i = 0; i < lab->nentries; i++)
        if (strcmp(lab->entries[i], name) == 0)
            return 1;
    return 0;
}

static int in_lib(const gr_kit *kit, const char *name)
{
    const char *key = name;
    return bsearch(&key, kit->lib_symbols, kit->nlib_symbols, sizeof *kit->lib_symbols,
                   cmp_str) != NULL;
}

/* Why a global definition is not allowed, or NULL. */
static const char *bad_definition(const gr_kit *kit, const gr_lab_rubric *lab, const char *name)
{
    if (is_entry(lab, name))
        return NULL;
    if (in_lib(kit, name))
        return "redefines a function of the kit library (timing, checks, I/O are the kit's)";
    if (strncmp(name, "lk_", 3) == 0)
        return "the lk_ prefix is reserved for the kit";
    if (strncmp(name, "cuda", 4) == 0 || strncmp(name, "__cuda", 6) == 0 ||
        (name[0] == 'c' && name[1] == 'u' && isupper((unsigned char)name[2])))
        return "redefines a CUDA runtime/driver function";
    return NULL;
}

static int scan_objdump(const char *text, gr_buf *bad)
{
    int found = 0;
    for (const char *line = text; line && *line;) {
        const char *nl = strchr(line, '\n');
        const char *tab = strstr(line, ":\t");
        if (tab && (!nl || tab < nl)) {
            const char *m = tab + 2;
            while (*m == ' ' || *m == '\t')
                m++;
            size_t len = strcspn(m, " \t\n");
            if ((len == 7 && strncmp(m, "syscall", 7) == 0) ||
                (len == 8 && strncmp(m, "sysenter", 8) == 0) ||
                (len == 3 && strncmp(m, "int", 3) == 0 && strstr(m, "$0x80") &&
                 (!nl || strstr(m, "$0x80") < nl))) {
                if (found < 5)
                    gr_buf_printf(bad, "%.*s\n", (int)(nl ? nl - line : (long)strlen(line)), line);
                found++;
            }
        }
        line = nl ? nl + 1 : NULL;
    }
    return found;
}

int gr_check_symbols(const gr_kit *kit, const gr_lab_rubric *lab, const char *work,
                     gr_lab_result *r, lk_error *err)
{
    gr_buf bad = {0};
    gr_buf first = {0};
    int nbad = 0, rc = 1;
    double seconds = 0;
    for (int f = 0; f < lab->nfiles && rc == 1; f++) {
        char stem[GR_NAME_MAX];
        snprintf(stem, sizeof stem, "%s", lab->files[f].name);
        char *dot = strrchr(stem, '.');
        if (dot)
            *dot = '\0';
        char *obj = gr_strf("%s/build/%s.o", work, stem);
        char *nm_out = gr_strf("%s/logs/nm-%s.txt", work, stem);
        char *od_out = gr_strf("%s/logs/objdump-%s.txt", work, stem);
        const char *nm_argv[] = {"nm", "-P", obj, NULL};
        const char *od_argv[] = {"objdump", "-d", "--no-show-raw-insn", obj, NULL};
        gr_limits lim;
        gr_build_limits(kit, lab, &lim);
        lim.output_bytes = 256LL << 20;
        const char *readable[] = {work, NULL};
        gr_cmd nm_cmd = {nm_argv, work, nm_out, NULL, NULL, 0, NULL, NULL, readable};
        gr_cmd od_cmd = {od_argv, work, od_out, NULL, NULL, 0, NULL, NULL, readable};
        gr_outcome o1, o2;
        if (!gr_exists(obj)) {
            rc = lk_fail(err, "%s: the build made no such object: does labs/lab.mk still name "
                              "objects after the student files?", obj);
        } else if (gr_sandbox_run(&nm_cmd, &lim, &o1, err) != 0 ||
                   gr_sandbox_run(&od_cmd, &lim, &o2, err) != 0) {
            rc = -1;
        } else if (!gr_outcome_ok(&o1) || !gr_outcome_ok(&o2)) {
            char *why = gr_strf("cannot analyse the compiled %s: nm %s, objdump %s",
                                lab->files[f].name, o1.reason, o2.reason);
            gr_lab_add(r, "symbols", "forbidden symbols", GR_FAIL, why, NULL);
            gr_lab_outcome(r, GR_OUT_REJECTED, "rejected: %s", why);
            free(why);
            rc = 0;
        } else {
            seconds += o1.wall_s + o2.wall_s;
            char *text = read_log(nm_out);
            for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
                char name[1024], type[8];
                if (sscanf(line, "%1023s %7s", name, type) != 2)
                    continue;
                const char *why = gr_forbidden_symbol(lab, name);
                int defined_global = type[0] != 'U' && type[0] != 'w' &&
                                     isupper((unsigned char)type[0]);
                if (!why && defined_global)
                    why = bad_definition(kit, lab, name);
                if (why) {
                    char base[1024];
                    gr_symbol_base(name, base, sizeof base);
                    gr_buf_printf(&bad, "%s %s in %s: %s\n", base,
                                  type[0] == 'U' ? "used" : "defined", lab->files[f].name, why);
                    if (nbad < 4)
                        gr_buf_printf(&first, "%s%s", nbad ? ", " : "", base);
                    nbad++;
                }
            }
            free(text);
            text = read_log(od_out);
            gr_buf sys = {0};
            int nsys = scan_objdump(text, &sys);
            if (nsys) {
                gr_buf_printf(&bad, "%d raw system-call instruction%s in %s (inline assembly "
                                    "bypassing the C library):\n%s", nsys, nsys == 1 ? "" : "s",
                              lab->files[f].name, gr_buf_str(&sys));
                gr_buf_printf(&first, "%sa raw syscall instruction", nbad ? ", " : "");
                nbad++;
            }
            gr_buf_free(&sys);
            free(text);
        }
        free(obj);
        free(nm_out);
        free(od_out);
    }
    if (rc == 1 && nbad) {
        char *reason = gr_strf("forbidden symbol%s: %s%s", nbad == 1 ? "" : "s",
                               gr_buf_str(&first), nbad > 4 ? ", ..." : "");
        gr_check *c = gr_lab_add(r, "symbols", "forbidden symbols", GR_FAIL, reason,
                                 gr_buf_str(&bad));
        c->seconds = seconds;
        char *line = gr_xstrdup(gr_buf_str(&bad));
        line[strcspn(line, "\n")] = '\0';
        gr_lab_outcome(r, GR_OUT_REJECTED, "rejected: %s", line);
        free(line);
        free(reason);
        rc = 0;
    } else if (rc == 1) {
        gr_check *c = gr_lab_add(r, "symbols", "forbidden symbols", GR_PASS,
                                 "no process, file, network or dynamic-loading calls; no "
                                 "redefined kit or CUDA functions", NULL);
        c->seconds = seconds;
    }
    gr_buf_free(&bad);
    gr_buf_free(&first);
    return rc;
}
