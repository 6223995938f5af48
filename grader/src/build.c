#define _GNU_SOURCE /* strcasestr, realpath */
#include "build.h"

#include <ctype.h>
#include <errno.h>
#include <ftw.h>
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

/* The MPI headers' folders, from the trusted `mpicc --showme:incdirs` (lab 07's files
   include <mpi.h>); nothing where Open MPI is not installed. */
static void add_mpi_dirs(gr_kit *kit)
{
    FILE *p = popen("mpicc --showme:incdirs 2>/dev/null", "r");
    if (!p)
        return;
    char line[4096];
    while (fgets(line, sizeof line, p))
        for (char *dir = strtok(line, " \t\r\n"); dir; dir = strtok(NULL, " \t\r\n"))
            add_dir(kit, dir);
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
    add_mpi_dirs(kit);
    if (cuda_home)
        add_dir(kit, cuda_home);
    char *labkit = gr_strf("%s/common/include/labkit", top);
    char *models = gr_strf("%s/common/models", top);
    add_dir(kit, labkit);
    add_dir(kit, models);
    free(labkit);
    free(models);

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

int gr_kit_defines(const gr_kit *kit, const char *name)
{
    const char *key = name;
    return bsearch(&key, kit->lib_symbols, kit->nlib_symbols, sizeof *kit->lib_symbols,
                   cmp_str) != NULL;
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

/* ---- a student file handed in at a place the grader does not look ---------------------- */

static const char *stray_name;
static char stray_found[PATH_MAX];
static long stray_seen;

static int find_stray(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    if (++stray_seen > 5000)
        return 1; /* a bounded look: a huge submission is not searched to the end */
    if (flag == FTW_D && ftw->level >= 4)
        return FTW_SKIP_SUBTREE;
    if (flag == FTW_F && S_ISREG(st->st_mode) && strcmp(path + ftw->base, stray_name) == 0) {
        snprintf(stray_found, sizeof stray_found, "%s", path);
        return 1;
    }
    return 0;
}

/* The first regular file called @p file in the submission @p root (four levels down at most,
   no link followed), as a path relative to @p root; NULL when there is none. The grader
   looked elsewhere, so the reason can name it. */
static char *stray_student_file(const char *root, const char *file)
{
    stray_name = file;
    stray_found[0] = '\0';
    stray_seen = 0;
    nftw(root, find_stray, 16, FTW_PHYS | FTW_ACTIONRETVAL);
    size_t n = strlen(root);
    return stray_found[0] && strncmp(stray_found, root, n) == 0 ? gr_xstrdup(stray_found + n + 1)
                                                                 : NULL;
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
            char *stray = stray_student_file(real_root, file);
            if (stray)
                gr_buf_printf(&missing, ", but found %s, where the grader does not look: move "
                              "it to %s", stray, cand[0]);
            free(stray);
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

char *gr_read_log(const char *path)
{
    lk_error e;
    char *s = gr_read_file(path, 64u << 20, NULL, &e);
    return s ? s : gr_xstrdup("");
}

int gr_run_tool(const gr_kit *kit, const gr_lab_rubric *lab, const char *const *argv,
                    const char *work, const char *log, gr_outcome *o, lk_error *err)
{
    gr_limits lim;
    gr_build_limits(kit, lab, &lim);
    char *tmp = gr_strf("TMPDIR=%s/tmp", work);
    const char *env[] = {tmp, NULL};
    const char *writable[] = {work, NULL};
    gr_cmd cmd = {argv, work, log, NULL, NULL, 0, env, writable, NULL, NULL};
    int rc = gr_sandbox_run(&cmd, &lim, o, err);
    free(tmp);
    return rc;
}

/* The make variable that points the kit's makefiles at kit->lib: LK_BUILD=DIR where the
   library is DIR/common/liblabkit.a (common.mk's layout, so that a kit built with
   `make LK_BUILD=DIR` grades against that build), else LK_LIB=PATH. */
static char *lib_make_var(const gr_kit *kit)
{
    static const char tail[] = "/common/liblabkit.a";
    size_t len = strlen(kit->lib), tail_len = sizeof tail - 1;
    if (len > tail_len && strcmp(kit->lib + len - tail_len, tail) == 0)
        return gr_strf("LK_BUILD=%.*s", (int)(len - tail_len), kit->lib);
    return gr_strf("LK_LIB=%s", kit->lib);
}

int gr_refresh_lib(const gr_kit *kit, lk_error *err)
{
    /* Student builds run unprivileged and cannot write build/: make sure the library they
       link is up to date first, as the grader's own user. */
    char *a_lib = lib_make_var(kit);
    const char *argv[] = {"make", "-s", "--no-print-directory", "-C", kit->top, a_lib, "lib", NULL};
    gr_limits lim = {.wall_s = 1800, .output_bytes = 8LL << 20};
    char *log = gr_strf("%s/lib-refresh.log", kit->log_dir ? kit->log_dir : "/tmp");
    gr_cmd cmd = {argv, kit->top, log, NULL, NULL, 0, NULL, NULL, NULL, NULL};
    gr_outcome o;
    int rc = gr_sandbox_run(&cmd, &lim, &o, err);
    if (rc == 0 && !gr_outcome_ok(&o)) {
        char *text = gr_read_log(log);
        char *first = gr_first_errors(text, kit->top, 6);
        rc = lk_fail(err, "the kit library does not build (make lib: %s): fix the kit first:\n%s",
                     o.reason, first);
        free(first);
        free(text);
    }
    free(log);
    free(a_lib);
    return rc;
}

int gr_build(const gr_kit *kit, const gr_lab_rubric *lab, const char *work, const char *src_dir,
             int graded, gr_lab_result *r, lk_error *err)
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
    char *a_lib = lib_make_var(kit);
    argv[n++] = a_lib;
    argv[n++] = "VARIANT=student";
    if (graded)
        argv[n++] = "GRADED=1"; /* a driver that runs student code holds no reference */
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
    int rc = gr_run_tool(kit, lab, argv, work, log, &o, err) != 0 ? -1 : 1;
    if (rc == 1 && (!gr_outcome_ok(&o) || access(goal, X_OK) != 0)) {
        char *text = gr_read_log(log);
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
    free(a_lib);
    free(goal);
    free(log);
    free(a_arch);
    return rc;
}
