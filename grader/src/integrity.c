/* The integrity checks of a student's files: includes and forbidden identifiers (before the
   build, in the file as written and in its preprocessed translation units), the allow-list
   of global definitions, forbidden symbols and raw system-call instructions in the objects.
   What is forbidden is policy.c's; how it is found out is here. */
#define _GNU_SOURCE /* realpath */
#include "integrity.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy.h"
#include "util.h"

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

/* Add to @p outside every dependency of a make-style list (@p text: "target: dep dep
   \<newline> dep ...", "\ " for a space) that is not in an allowed folder. */
static void outside_deps(const gr_kit *kit, const char *text, const char *real_lab,
                         const char *real_src, gr_buf *outside)
{
    const char *p = strchr(text, ':');
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
            gr_buf_printf(outside, "%s%s", outside->len ? "\n" : "", dep);
        gr_buf_free(&name);
    }
}

/* ---- the preprocessed translation units ------------------------------------------------ */

/* The student's own lines of a preprocessed file, in order, and where each comes from. */
typedef struct student_lines {
    gr_buf text;
    int n, cap;
    int *line;      /* per line of text: its line in its file */
    int *file;      /* per line of text: its file, an index in name */
    char *name[GR_MAX_FILES];
    int nnames;
    const char *lab_dir, *real_src;
    char *main_dir; /* the folder of the file preprocessed, as its first marker spells it */
    char *last;     /* the last marker's file, and whether it is the student's */
    int last_own;
} student_lines;

/* Is @p file, named by a line marker, a student file? It is when it sits in the folder of
   the file preprocessed (as the markers spell it, whatever the sandbox shows that folder
   as), or resolves into the work folder's src. */
static int own_file(student_lines *s, const char *file)
{
    if (s->last && strcmp(s->last, file) == 0)
        return s->last_own;
    free(s->last);
    s->last = gr_xstrdup(file);
    const char *slash = strrchr(file, '/');
    size_t dir_len = slash ? (size_t)(slash - file) : 0;
    char *path = file[0] == '/' ? gr_xstrdup(file) : gr_strf("%s/%s", s->lab_dir, file);
    char real[PATH_MAX];
    s->last_own = file[0] != '<' &&
                  ((strlen(s->main_dir) == dir_len && strncmp(file, s->main_dir, dir_len) == 0) ||
                   (realpath(path, real) && gr_path_within(real, s->real_src)));
    free(path);
    return s->last_own;
}

/* A line marker as the preprocessor writes it, `# N "file" flags` from column 0: 1 with
   its line and file (unescaped, malloc'd), else 0. The student cannot plant one: gcc writes
   a macro expansion that starts a line after a space, and gr_line_directive() refused the
   directives that write markers. */
static int line_marker(const char *text, int *line, char **file)
{
    if (text[0] != '#' || text[1] != ' ' || !isdigit((unsigned char)text[2]))
        return 0;
    char *end;
    long n = strtol(text + 2, &end, 10);
    if (end[0] != ' ' || end[1] != '"' || n < 0 || n > INT_MAX)
        return 0;
    gr_buf name = {0};
    const char *p = end + 2;
    for (; *p && *p != '"'; p++) {
        if (*p == '\\' && p[1])
            p++;
        char one[2] = {*p, 0};
        gr_buf_puts(&name, one);
    }
    *line = (int)n;
    *file = gr_buf_take(&name);
    return 1;
}

static void keep_line(student_lines *s, const char *text, size_t len, const char *file,
                      int line)
{
    const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
    int f = 0;
    while (f < s->nnames && strcmp(s->name[f], base) != 0)
        f++;
    if (f == s->nnames && s->nnames < GR_MAX_FILES)
        s->name[s->nnames++] = gr_xstrdup(base);
    if (f == GR_MAX_FILES)
        f = 0;
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 1024;
        s->line = gr_xrealloc(s->line, s->cap * sizeof *s->line);
        s->file = gr_xrealloc(s->file, s->cap * sizeof *s->file);
    }
    s->line[s->n] = line;
    s->file[s->n++] = f;
    gr_buf_printf(&s->text, "%.*s\n", (int)len, text);
}

/* Read the preprocessed units at @p path and keep the lines their markers attribute to a
   student file. 1 done, 0 the student's lines exceed @p cap bytes, -1 error. */
static int read_units(const char *path, student_lines *s, size_t cap, lk_error *err)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        if (fd >= 0)
            close(fd);
        return lk_fail(err, "%s: not the preprocessed file the compiler wrote", path);
    }
    FILE *f = fdopen(fd, "r");
    if (!f) {
        close(fd);
        return lk_fail(err, "%s: cannot read: %s", path, strerror(errno));
    }
    char *buf = NULL, *file = NULL;
    size_t size = 0;
    ssize_t len;
    int own = 0, line = 0, rc = 1;
    while (rc == 1 && (len = getline(&buf, &size, f)) >= 0) {
        char *named;
        int at;
        if (line_marker(buf, &at, &named)) {
            if (!s->main_dir) {
                const char *slash = strrchr(named, '/');
                s->main_dir = gr_strf("%.*s", slash ? (int)(slash - named) : 0, named);
            }
            free(file);
            file = named;
            own = own_file(s, file);
            line = at;
            continue;
        }
        if (!s->main_dir) {
            rc = lk_fail(err, "%s: does not start with the preprocessor's line marker of the "
                              "student file", path);
        } else if (own) {
            for (ssize_t i = 0; i < len; i++)
                if (buf[i] == '\0')
                    buf[i] = ' ';
            keep_line(s, buf, strcspn(buf, "\n"), file, line);
            if (s->text.len > cap)
                rc = 0;
        }
        line++;
    }
    free(buf);
    free(file);
    fclose(f);
    return rc;
}

static void student_lines_free(student_lines *s)
{
    gr_buf_free(&s->text);
    free(s->line);
    free(s->file);
    for (int i = 0; i < s->nnames; i++)
        free(s->name[i]);
    free(s->last);
    free(s->main_dir);
}

/* The rubric's `forbid-source` on the student's lines of the preprocessed units at @p pp:
   NULL (none), or why the lab is rejected (malloc'd). */
static char *forbidden_in_units(const gr_lab_rubric *lab, const char *pp, const char *lab_dir,
                                const char *real_src, int *error, lk_error *err)
{
    student_lines s = {.lab_dir = lab_dir, .real_src = real_src};
    char *why = NULL;
    int rc = read_units(pp, &s, 64u << 20, err);
    *error = rc < 0;
    if (rc == 0) {
        why = gr_strf("the preprocessed student file is over 64 MiB: the source rules cannot "
                      "be checked: expand fewer macros");
    } else if (rc == 1 && s.n > 0) {
        char name[GR_NAME_MAX];
        int k = 0;
        if (gr_forbidden_identifier(lab, gr_buf_str(&s.text), name, sizeof name, &k) &&
            k >= 1 && k <= s.n)
            why = gr_strf("%s:%d: uses %s (once its macros are expanded): this lab asks you "
                          "to write that computation yourself (porting it is the lesson), "
                          "not to call the kit's version: replace the call by your own code",
                          s.name[s.file[k - 1]], s.line[k - 1], name);
    }
    student_lines_free(&s);
    return why;
}

/* The "source" check: @p why (rejected) or NULL (passed). 1 passed, 0 rejected. */
static int source_verdict(const gr_lab_rubric *lab, const char *why, gr_lab_result *r)
{
    if (lab->nforbid_source == 0)
        return 1;
    if (why) {
        gr_lab_add(r, "source", "lab-specific rules", GR_FAIL, why, NULL);
        gr_lab_outcome(r, GR_OUT_REJECTED, "rejected: %s", why);
        return 0;
    }
    gr_lab_add(r, "source", "lab-specific rules", GR_PASS,
               "none of the kit functions this lab asks you to write yourself, however "
               "spelled (checked after the preprocessor)", NULL);
    return 1;
}

/* ---- includes and the preprocessed source --------------------------------------------- */

/* Run deps.mk for student file @p f: its dependencies into WORK/logs/deps-FILE.txt, and with
   @p pp its preprocessed units into @p pp. 1 done, 0 the preprocessor failed (outcome
   set), -1 error. */
static int preprocess(const gr_kit *kit, const gr_lab_rubric *lab, const char *work, int f,
                      const char *pp, gr_lab_result *r, double *seconds, lk_error *err)
{
    const char *name = lab->files[f].name;
    char *a_dir = gr_strf("%s/labs/%s", kit->top, lab->name);
    char *log = gr_strf("%s/logs/deps-%s.log", work, name);
    char *a_src = gr_strf("GRADER_SRC=%s/src/%s", work, name);
    char *a_deps = gr_strf("GRADER_DEPS=%s/logs/deps-%s.txt", work, name);
    char *a_pp = pp ? gr_strf("GRADER_PP=%s", pp) : NULL;
    char *a_arch = kit->cuda_arch ? gr_strf("CUDA_ARCH=%s", kit->cuda_arch) : NULL;
    const char *argv[] = {"make", "-s", "--no-print-directory", "-C", a_dir, "-f", "Makefile",
                          "-f", kit->deps_mk, "grader-deps", a_src, a_deps,
                          a_pp ? a_pp : a_arch, a_pp ? a_arch : NULL, NULL};
    gr_outcome o;
    int rc = 1;
    if (gr_run_tool(kit, lab, argv, work, log, &o, err) != 0) {
        rc = -1;
    } else if (!gr_outcome_ok(&o)) {
        /* A missing header or an #error is a compile error: the build would fail too. */
        char *src_dir = gr_strf("%s/src", work);
        char *text = gr_read_log(log);
        char *first = gr_first_errors(text, src_dir, 12);
        gr_check *c = gr_lab_add(r, "build", "compile", GR_FAIL,
                                 o.end == GR_END_EXITED ? "the preprocessor failed" : o.reason,
                                 first);
        c->seconds = o.wall_s;
        gr_lab_outcome(r, GR_OUT_BUILD_FAILED, "does not build: %s",
                       first[0] ? strtok(first, "\n") : o.reason);
        free(first);
        free(text);
        free(src_dir);
        rc = 0;
    } else {
        *seconds += o.wall_s;
    }
    free(a_dir);
    free(log);
    free(a_src);
    free(a_deps);
    free(a_pp);
    free(a_arch);
    return rc;
}

int gr_check_includes(const gr_kit *kit, const gr_lab_rubric *lab, const char *work,
                      gr_lab_result *r, lk_error *err)
{
    char real_lab[PATH_MAX], real_src[PATH_MAX];
    char *lab_dir = gr_strf("%s/labs/%s", kit->top, lab->name);
    char *src_dir = gr_strf("%s/src", work);
    int ok = realpath(lab_dir, real_lab) && realpath(src_dir, real_src);
    free(src_dir);
    if (!ok) {
        free(lab_dir);
        return lk_fail(err, "labs/%s or %s: cannot resolve: %s", lab->name, work, strerror(errno));
    }
    gr_buf outside = {0};
    char *forbidden = NULL;
    int rc = 1, error = 0;
    double t0 = 0;
    for (int f = 0; f < lab->nfiles && rc == 1; f++) {
        char *pp = lab->nforbid_source
                       ? gr_strf("%s/logs/preprocessed-%s.ii", work, lab->files[f].name)
                       : NULL;
        rc = preprocess(kit, lab, work, f, pp, r, &t0, err);
        if (rc == 1) {
            char *deps = gr_strf("%s/logs/deps-%s.txt", work, lab->files[f].name);
            char *text = gr_read_log(deps);
            outside_deps(kit, text, real_lab, real_src, &outside);
            free(text);
            free(deps);
        }
        if (rc == 1 && pp && !forbidden) {
            forbidden = forbidden_in_units(lab, pp, lab_dir, real_src, &error, err);
            rc = error ? -1 : 1;
        }
        free(pp);
    }
    free(lab_dir);
    if (rc == 1 && outside.len) {
        char *first = gr_xstrdup(gr_buf_str(&outside));
        first[strcspn(first, "\n")] = '\0';
        char *reason = gr_strf("includes files outside the CUDA toolkit, the system headers, "
                               "common/include/labkit, common/models and the lab's folder, e.g. %s", first);
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
        rc = source_verdict(lab, forbidden, r);
    }
    free(forbidden);
    gr_buf_free(&outside);
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
        size_t len = 0;
        char *text = gr_read_file(path, 2 * GR_MAX_STUDENT_FILE, &len, err);
        free(path);
        if (!text)
            return -1;
        /* The compiler ignores a NUL byte; the scans must not stop at one. */
        for (size_t i = 0; i < len; i++)
            if (text[i] == '\0')
                text[i] = ' ';
        char name[GR_NAME_MAX], *why = NULL;
        int line = 0;
        if (gr_forbidden_identifier(lab, text, name, sizeof name, &line))
            why = gr_strf("%s:%d: uses %s: this lab asks you to write that computation "
                          "yourself (porting it is the lesson), not to call the kit's "
                          "version: replace the call by your own code",
                          lab->files[f].name, line, name);
        else if (gr_line_directive(text, &line))
            why = gr_strf("%s:%d: a line directive (#line or # N \"file\"): it would hide "
                          "your code from the lab's source rules: remove it",
                          lab->files[f].name, line);
        free(text);
        if (why) {
            source_verdict(lab, why, r);
            free(why);
            return 0;
        }
    }
    /* The verdict that passes comes with the preprocessed units (gr_check_includes). */
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

/* Why a global definition of @p name (nm's, its version cut; @p weak: nm type W, V or u) may
   not be in a student object of @p lab: the line to report (malloc'd), or NULL. Allowed: the
   lab's contract (the rubric's entry points, lab.h), what the compilers emit, and C++ names
   (kernel stubs, the student's own functions) outside the C++ library's namespaces. */
static char *bad_definition(const gr_kit *kit, const gr_lab_rubric *lab, const char *file,
                            const char *name, int weak)
{
    const char *why = NULL;
    if (is_entry(lab, name) || gr_compiler_symbol(name))
        return NULL;
    if (gr_kit_defines(kit, name))
        why = "redefines a function of the kit library (timing, checks, I/O are the kit's)";
    else if (strncmp(name, "lk_", 3) == 0)
        why = "the lk_ prefix is reserved for the kit";
    else if (strncmp(name, "cuda", 4) == 0 || strncmp(name, "__cuda", 6) == 0 ||
             (name[0] == 'c' && name[1] == 'u' && isupper((unsigned char)name[2])))
        why = "redefines a CUDA runtime/driver function";
    if (why)
        return gr_strf("%s defined in %s: %s", name, file, why);
    if (strncmp(name, "_Z", 2) == 0) {
        why = gr_library_definition(name, weak);
        return why ? gr_strf("%s defines %s, which %s", file, name, why) : NULL;
    }
    return gr_strf("%s defines %s, which is not part of lab %.2s's contract (lab.h): make it "
                   "static, or remove it", file, name, lab->name);
}

/* Judge one line of `nm -P` output of student file @p file: a forbidden use or definition is
   added to @p bad (and its name to @p first while there are few). 1 if it was one. */
static int judge_symbol(const gr_kit *kit, const gr_lab_rubric *lab, const char *file,
                        const char *line, int nbad, gr_buf *bad, gr_buf *first)
{
    char name[1024], type[8], base[1024];
    if (sscanf(line, "%1023s %7s", name, type) != 2)
        return 0;
    gr_symbol_base(name, base, sizeof base);
    const char t = type[0];
    /* Lower case is local, but for GNU unique globals (u) and indirect functions (i, which
       may be global: an ifunc named clock_gettime is one). */
    const int undefined = t == 'U' || t == 'w' || t == 'v';
    const int global_def = !undefined && (isupper((unsigned char)t) || t == 'u' || t == 'i');
    const char *why = gr_forbidden_symbol(lab, name);
    char *reported = why ? gr_strf("%s %s in %s: %s", base, t == 'U' ? "used" : "defined",
                                   file, why)
                         : global_def ? bad_definition(kit, lab, file, base,
                                                       t == 'W' || t == 'V' || t == 'u')
                                      : NULL;
    if (!reported)
        return 0;
    gr_buf_printf(bad, "%s\n", reported);
    if (nbad < 4)
        gr_buf_printf(first, "%s%s", nbad ? ", " : "", base);
    free(reported);
    return 1;
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

/* Raw system-call instructions in the `objdump -d` listing @p text of student file @p file,
   added to @p bad and @p first as judge_symbol() does. 1 if there were any. */
static int judge_objdump(const char *text, const char *file, int nbad, gr_buf *bad,
                         gr_buf *first)
{
    gr_buf sys = {0};
    int nsys = scan_objdump(text, &sys);
    if (nsys) {
        gr_buf_printf(bad, "%d raw system-call instruction%s in %s (inline assembly "
                           "bypassing the C library):\n%s", nsys, nsys == 1 ? "" : "s",
                      file, gr_buf_str(&sys));
        gr_buf_printf(first, "%sa raw syscall instruction", nbad ? ", " : "");
    }
    gr_buf_free(&sys);
    return nsys > 0;
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
        gr_cmd nm_cmd = {.argv = nm_argv, .cwd = work, .out_path = nm_out, .readable = readable};
        gr_cmd od_cmd = {.argv = od_argv, .cwd = work, .out_path = od_out, .readable = readable};
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
            char *text = gr_read_log(nm_out);
            for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
                nbad += judge_symbol(kit, lab, lab->files[f].name, line, nbad, &bad, &first);
            free(text);
            text = gr_read_log(od_out);
            nbad += judge_objdump(text, lab->files[f].name, nbad, &bad, &first);
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
                                 "global definition but the lab's contract (lab.h), C++ "
                                 "names of your own and the compiler's", NULL);
        c->seconds = seconds;
    }
    gr_buf_free(&bad);
    gr_buf_free(&first);
    return rc;
}
