/* The integrity policy of student files: what a kernel file may not call, which global names
   it may define besides the lab's contract (checked on the compiled object by integrity.c),
   and which identifiers a lab forbids in the source. */
#include "policy.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* ---- the forbidden-symbol table ---------------------------------------------------- */

typedef struct forbidden {
    const char *pattern; /* "name", "prefix*" or "~substring" */
    const char *why;
} forbidden;

#define PROC "process control: a kernel file may not start, signal or reconfigure processes"
#define FILES "file access: a kernel file may not open, create or remove files"
#define FDS "low-level descriptor I/O: a kernel file may not touch file descriptors"
#define NET "network access: a kernel file may not use sockets"
#define DL "dynamic loading: a kernel file may not load code at run time"
#define KITIO "the kit's file functions: a kernel file may not read or write files"

static const forbidden table[] = {
    {"fork", PROC}, {"vfork", PROC}, {"clone", PROC}, {"clone3", PROC}, {"__clone", PROC},
    {"execl", PROC}, {"execlp", PROC}, {"execle", PROC}, {"execv", PROC},
    {"execvp", PROC}, {"execvpe", PROC}, {"execve", PROC}, {"execveat", PROC}, {"fexecve", PROC}, {"system", PROC}, {"popen", PROC}, {"pclose", PROC},
    {"posix_spawn*", PROC}, {"kill", PROC}, {"killpg", PROC}, {"tkill", PROC}, {"tgkill", PROC},
    {"sigqueue", PROC}, {"ptrace", PROC}, {"syscall", PROC}, {"setrlimit*", PROC},
    {"prlimit*", PROC}, {"setsid", PROC}, {"setpgid", PROC}, {"setpgrp", PROC},
    {"daemon", PROC}, {"setuid", PROC}, {"setgid", PROC}, {"seteuid", PROC}, {"setegid", PROC},
    {"setreuid", PROC}, {"setregid", PROC}, {"setresuid", PROC}, {"setresgid", PROC},
    {"setgroups", PROC}, {"chroot", PROC}, {"unshare", PROC}, {"setns", PROC},
    {"prctl", PROC}, {"fopen", FILES}, {"fopen64", FILES}, {"freopen", FILES},
    {"freopen64", FILES}, {"fdopen", FILES}, {"open", FILES}, {"open64", FILES},
    {"openat", FILES}, {"openat64", FILES}, {"__open_2", FILES}, {"__open64_2", FILES},
    {"__openat_2", FILES}, {"__openat64_2", FILES}, {"creat", FILES}, {"creat64", FILES},
    {"unlink", FILES}, {"unlinkat", FILES}, {"remove", FILES}, {"rename", FILES},
    {"renameat", FILES}, {"renameat2", FILES}, {"opendir", FILES}, {"fdopendir", FILES},
    {"mkdir", FILES}, {"mkdirat", FILES}, {"rmdir", FILES}, {"link", FILES}, {"linkat", FILES},
    {"symlink", FILES}, {"symlinkat", FILES}, {"truncate", FILES}, {"truncate64", FILES},
    {"ftruncate", FILES}, {"ftruncate64", FILES}, {"chmod", FILES}, {"fchmod", FILES},
    {"fchmodat", FILES}, {"chown", FILES}, {"fchown", FILES}, {"lchown", FILES},
    {"fchownat", FILES}, {"mmap", FILES}, {"mmap64", FILES}, {"tmpfile", FILES},
    {"tmpfile64", FILES}, {"mkstemp*", FILES}, {"mkostemp*", FILES}, {"mkdtemp", FILES},
    {"tmpnam", FILES}, {"tempnam", FILES}, {"~basic_ofstream", FILES},
    {"~basic_ifstream", FILES}, {"~basic_fstream", FILES}, {"~basic_filebuf", FILES},
    {"~10filesystem", FILES}, {"dup", FDS}, {"dup2", FDS}, {"dup3", FDS}, {"fcntl", FDS},
    {"fcntl64", FDS}, {"ioctl", FDS}, {"read", FDS}, {"write", FDS}, {"pread", FDS},
    {"pread64", FDS}, {"pwrite", FDS}, {"pwrite64", FDS}, {"readv", FDS}, {"writev", FDS},
    {"sendfile", FDS}, {"sendfile64", FDS}, {"splice", FDS}, {"dprintf", FDS},
    {"vdprintf", FDS}, {"__dprintf_chk", FDS}, {"__vdprintf_chk", FDS}, {"socket", NET},
    {"socketpair", NET}, {"connect", NET}, {"bind", NET}, {"listen", NET}, {"accept", NET},
    {"accept4", NET}, {"send", NET}, {"sendto", NET}, {"sendmsg", NET}, {"recv", NET},
    {"recvfrom", NET}, {"recvmsg", NET}, {"getaddrinfo", NET}, {"gethostbyname", NET},
    {"gethostbyname_r", NET}, {"setsockopt", NET}, {"getsockopt", NET}, {"dlopen", DL},
    {"dlmopen", DL}, {"dlsym", DL}, {"dlvsym", DL}, {"dlclose", DL}, {"dladdr", DL},
    {"main", "main: the driver owns main; a kernel file defines the lab's entry points only"},
    {"lk_read_*", KITIO}, {"lk_write_*", KITIO}, {"lk_png_*", KITIO}, {"lk_md5_file", KITIO},
    {"lk_manifest_*", KITIO},
};

static int pattern_matches(const char *pattern, const char *symbol)
{
    if (pattern[0] == '~')
        return strstr(symbol, pattern + 1) != NULL;
    return gr_symbol_matches(pattern, symbol);
}

void gr_symbol_base(const char *symbol, char *out, size_t size)
{
    snprintf(out, size, "%s", symbol);
    out[strcspn(out, "@")] = '\0';
}

const char *gr_forbidden_symbol(const gr_lab_rubric *lab, const char *symbol)
{
    char name[512];
    gr_symbol_base(symbol, name, sizeof name);
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (pattern_matches(table[i].pattern, name))
            return table[i].why;
    for (int i = 0; lab && i < lab->nforbid; i++)
        if (gr_symbol_matches(lab->forbid[i], name))
            return "reserved for the kit (serial reference, data loading, solutions): the "
                   "rubric forbids it in student code";
    return NULL;
}

/* ---- global definitions besides the lab's contract ------------------------------------ */

/* What the compilers emit for any file: the C++ personality reference of every CUDA object,
   and with relocatable device code (-rdc) the fat binary's wrapper and nvcc's host
   references. None of them is a name a library or the kit defines. */
static const char *const compiler_names[] = {
    "DW.ref.*", "__fatbinwrap_*", "hostRefConstantArrayExternalLinkage",
    "hostRefConstantArrayInternalLinkage", "hostRefDeviceArrayExternalLinkage",
    "hostRefDeviceArrayInternalLinkage", "hostRefKernelArrayExternalLinkage",
    "hostRefKernelArrayInternalLinkage",
};

int gr_compiler_symbol(const char *symbol)
{
    for (size_t i = 0; i < sizeof compiler_names / sizeof compiler_names[0]; i++)
        if (gr_symbol_matches(compiler_names[i], symbol))
            return 1;
    return 0;
}

/* @p s after the special-name prefixes of an Itanium mangled name (vtable, typeinfo, guard
   variable, thunk, TLS wrapper, local entity, internal linkage): where the entity's own
   name starts. */
static const char *mangled_entity(const char *s)
{
    for (;;) {
        if (s[0] == 'T' && s[1] && strchr("VTISHW", s[1])) {
            s += 2;
        } else if (s[0] == 'G' && (s[1] == 'V' || s[1] == 'R')) {
            s += 2;
        } else if (s[0] == 'T' && (s[1] == 'h' || s[1] == 'v')) {
            /* Thunk: h<offset>_ or v<offset>_<offset>_, each offset [n]digits. */
            int offsets = s[1] == 'h' ? 1 : 2;
            s += 2;
            for (int k = 0; k < offsets; k++) {
                s += *s == 'n';
                while (isdigit((unsigned char)*s))
                    s++;
                s += *s == '_';
            }
        } else if (*s == 'Z' || *s == 'L') {
            s++;
        } else {
            return s;
        }
    }
}

/* Does the entity at @p s (after _Z and the special prefixes) live in namespace std or in
   the C++ runtime's own (__gnu_cxx, __cxxabiv1)? @p after gets where its names go on. */
static int in_library_namespace(const char *s, const char **after)
{
    if (*s == 'N')
        for (s++; *s && strchr("rVKRO", *s); s++)
            ;
    static const char *const spaces[] = {"St", "Sa", "Sb", "Ss", "Si", "So", "Sd",
                                         "9__gnu_cxx", "10__cxxabiv1"};
    for (size_t i = 0; i < sizeof spaces / sizeof spaces[0]; i++)
        if (strncmp(s, spaces[i], strlen(spaces[i])) == 0) {
            *after = s + strlen(spaces[i]);
            return 1;
        }
    return 0;
}

/* Is some name on the nested-name path at @p s a template-id (<source-name> I ...)? */
static int names_a_template(const char *s)
{
    if (*s == 'I')
        return 1;
    while (isdigit((unsigned char)*s)) {
        char *end;
        long len = strtol(s, &end, 10);
        if (len <= 0 || (size_t)len > strlen(end))
            return 0;
        s = end + len;
        if (*s == 'I')
            return 1;
    }
    return 0;
}

const char *gr_library_definition(const char *symbol, int weak)
{
    if (strncmp(symbol, "_Z", 2) != 0)
        return NULL;
    const char *s = mangled_entity(symbol + 2);
    if (strncmp(s, "nw", 2) == 0 || strncmp(s, "na", 2) == 0 || strncmp(s, "dl", 2) == 0 ||
        strncmp(s, "da", 2) == 0)
        return "replaces the global operator new or delete, which the kit and the CUDA "
               "runtime allocate with: remove it (a class of your own may have its own)";
    const char *after;
    /* A weak template instantiation (std::vector<double>'s members, std::min<int>) is the
       library's own code from its headers; anything else in std replaces the library's. */
    if (in_library_namespace(s, &after) && !(weak && names_a_template(after)))
        return "is in the C++ standard library's namespace (std, or its runtime's), so it "
               "would replace the library's own code that the kit runs: remove it";
    return NULL;
}

/* ---- identifiers the lab asks students to write themselves -------------------------- */

static int ident_char(char c)
{
    return isalnum((unsigned char)c) || c == '_';
}

/* Blank the raw string literal whose R" is at @p p (R"delim( ... )delim"), newlines kept;
   returns where it ends. */
static char *blank_raw_string(char *p)
{
    char *open = p + 2, delim[20];
    size_t n = strcspn(open, "(\n \")");
    if (open[n] != '(' || n >= sizeof delim)
        return p + 1; /* not a raw string after all: the compiler will say so */
    memcpy(delim, open, n);
    delim[n] = '\0';
    char *q = open + n + 1;
    for (; *q; q++)
        if (q[0] == ')' && strncmp(q + 1, delim, n) == 0 && q[1 + n] == '"')
            break;
    char *end = *q ? q + n + 2 : q;
    for (; p < end; p++)
        if (*p != '\n')
            *p = ' ';
    return end;
}

/* Skip the pp-number at @p p (digits, letters, '.', exponent signs and C++14 digit
   separators: 1'000'000 is one number, not a character literal). */
static char *skip_number(char *p)
{
    for (;;) {
        if ((*p == 'e' || *p == 'E' || *p == 'p' || *p == 'P') && (p[1] == '+' || p[1] == '-'))
            p += 2;
        else if (ident_char(*p) || *p == '.')
            p++;
        else if (*p == '\'' && ident_char(p[1]))
            p += 2;
        else
            return p;
    }
}

/* @p src with comments, string and character literals blanked (newlines kept), so that a
   name in a comment or a message is not taken for a use. */
static char *code_only(const char *src)
{
    char *out = gr_xstrdup(src);
    for (char *p = out; *p;) {
        if (p[0] == '/' && p[1] == '/') {
            while (*p && *p != '\n')
                *p++ = ' ';
        } else if (p[0] == '/' && p[1] == '*') {
            *p++ = ' ';
            *p++ = ' ';
            while (*p && !(p[0] == '*' && p[1] == '/')) {
                if (*p != '\n')
                    *p = ' ';
                p++;
            }
            for (int k = 0; k < 2 && *p; k++)
                *p++ = ' ';
        } else if (isdigit((unsigned char)*p) || (*p == '.' && isdigit((unsigned char)p[1]))) {
            p = skip_number(p);
        } else if (p[0] == 'R' && p[1] == '"') {
            p = blank_raw_string(p);
        } else if (ident_char(*p)) {
            /* A whole identifier: its R or digits never start a literal or a number. */
            while (ident_char(*p) && !(p[0] == 'R' && p[1] == '"'))
                p++;
        } else if (*p == '"' || *p == '\'') {
            char quote = *p++;
            while (*p && *p != quote && *p != '\n') {
                if (*p == '\\' && p[1])
                    *p++ = ' ';
                *p++ = ' ';
            }
            if (*p == quote)
                p++;
        } else {
            p++;
        }
    }
    return out;
}

/* @p src with its backslash-newline splices joined (as the compiler's phase 2 does), and in
   @p lines the source line each line of the result starts on (malloc'd). */
static char *spliced(const char *src, int **lines)
{
    size_t n = strlen(src);
    char *out = gr_xmalloc(n + 1);
    int *at = gr_xmalloc((n + 2) * sizeof *at);
    size_t k = 0, nl = 0;
    int line = 1;
    at[nl++] = line;
    for (const char *p = src; *p; p++) {
        size_t skip = p[0] == '\\' && p[1] == '\n' ? 2 : p[0] == '\\' && p[1] == '\r' &&
                      p[2] == '\n' ? 3 : 0;
        if (skip) {
            p += skip - 1;
            line++;
            continue;
        }
        out[k++] = *p;
        if (*p == '\n')
            at[nl++] = ++line;
    }
    out[k] = '\0';
    *lines = at;
    return out;
}

int gr_line_directive(const char *src, int *line)
{
    int *lines;
    char *joined = spliced(src, &lines);
    char *code = code_only(joined);
    int found = 0, k = 0;
    for (const char *p = code; *p && !found; k++) {
        const char *q = p + strspn(p, " \t\f\v\r");
        if (*q == '#' || (q[0] == '%' && q[1] == ':') || strncmp(q, "?\?=", 3) == 0) {
            q += *q == '#' ? 1 : *q == '%' ? 2 : 3;
            q += strspn(q, " \t\f\v");
            if (isdigit((unsigned char)*q) ||
                (strncmp(q, "line", 4) == 0 && !ident_char(q[4]))) {
                *line = lines[k];
                found = 1;
            }
        }
        const char *nl = strchr(p, '\n');
        p = nl ? nl + 1 : p + strlen(p);
    }
    free(code);
    free(joined);
    free(lines);
    return found;
}

int gr_forbidden_identifier(const gr_lab_rubric *lab, const char *src, char *found,
                            size_t size, int *line)
{
    char *code = code_only(src);
    int hit = 0, at = 1;
    for (const char *p = code; *p && !hit;) {
        if (*p == '\n')
            at++;
        if (!(isalpha((unsigned char)*p) || *p == '_')) {
            p++;
            continue;
        }
        const char *start = p;
        while (isalnum((unsigned char)*p) || *p == '_')
            p++;
        size_t len = (size_t)(p - start);
        for (int i = 0; i < lab->nforbid_source && !hit; i++)
            if (strlen(lab->forbid_source[i]) == len &&
                strncmp(start, lab->forbid_source[i], len) == 0) {
                snprintf(found, size, "%s", lab->forbid_source[i]);
                *line = at;
                hit = 1;
            }
    }
    free(code);
    return hit;
}
