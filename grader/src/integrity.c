/* The integrity checks of a student's files: includes (before the build), forbidden
   identifiers in the source, symbols and raw system-call instructions in the objects. What
   is forbidden is policy.c's; how it is found out is here. */
#define _GNU_SOURCE /* realpath */
#include "integrity.h"

#include <ctype.h>
#include <errno.h>
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
        if (gr_run_tool(kit, lab, argv, work, log, &o, err) != 0) {
            rc = -1;
        } else if (!gr_outcome_ok(&o)) {
            /* The preprocessor failed: a missing header or an #error is a compile error. */
            char *text = gr_read_log(log);
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
            char *text = gr_read_log(deps);
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

/* Why a global definition is not allowed, or NULL. */
static const char *bad_definition(const gr_kit *kit, const gr_lab_rubric *lab, const char *name)
{
    if (is_entry(lab, name))
        return NULL;
    if (gr_kit_defines(kit, name))
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
            char *text = gr_read_log(nm_out);
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
            text = gr_read_log(od_out);
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
