/* The integrity policy of student files: what a kernel file may not call or define (checked
   on the compiled object by build.c), and which identifiers a lab forbids in the source. */
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

/* ---- identifiers the lab asks students to write themselves -------------------------- */

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
