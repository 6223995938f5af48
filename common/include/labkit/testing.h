/**
 * @file testing.h
 * @brief Helpers shared by every Criterion suite of the kit (include only from tests).
 *
 * Tests are compiled with -DLK_TOP_DIR="<kit root>" so they find datasets wherever the
 * kit is unpacked.
 */
#ifndef LABKIT_TESTING_H
#define LABKIT_TESTING_H

#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "labkit/compare.h"
#include "labkit/cuda_check.h"
#include "labkit/error.h"

#ifndef LK_TOP_DIR
#error "compile tests with -DLK_TOP_DIR='\"path to the kit\"'"
#endif

/**
 * Skip the current test when the machine has no GPU (LK_NO_GPU, e.g. CI). A GPU that is
 * there but cannot be used (out of memory under a parallel make check, a broken driver)
 * fails the test with the runtime's error: a skipped test would let the suite pass untested.
 */
#define LK_REQUIRE_GPU()                                                                  \
    do {                                                                                  \
        char lk_reason_[256];                                                             \
        if (!lk_gpu_available(lk_reason_, sizeof lk_reason_)) {                           \
            if (strcmp(lk_reason_, LK_NO_GPU) == 0)                                       \
                cr_skip_test("%s", lk_reason_);                                           \
            cr_assert_fail("GPU not usable: %s (make doctor; fewer jobs: make -j4 check)", \
                           lk_reason_);                                                   \
        }                                                                                 \
    } while (0)

/** Fail the current test with the message of a failed kit call. */
#define LK_ASSERT_OK(call, err)                                                           \
    do {                                                                                  \
        if ((call) != 0)                                                                  \
            cr_assert_fail("%s failed: %s", #call, (err)->msg);                                 \
    } while (0)

/** The current test's temporary folder (made by lk_tmpdir_make). */
static char lk_tmpdir[256];

/** Suite `.init`: make a fresh temporary folder for the test. */
static inline void lk_tmpdir_make(void)
{
    snprintf(lk_tmpdir, sizeof lk_tmpdir, "/tmp/labkit-test-XXXXXX");
    cr_assert_not_null(mkdtemp(lk_tmpdir), "mkdtemp failed");
}

/** Suite `.fini`: remove the temporary folder and the files in it. */
static inline void lk_tmpdir_remove(void)
{
    DIR *d = opendir(lk_tmpdir);
    if (!d)
        return;
    struct dirent *e;
    char p[512];
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            snprintf(p, sizeof p, "%s/%s", lk_tmpdir, e->d_name);
            unlink(p);
        }
    closedir(d);
    rmdir(lk_tmpdir);
}

/** Path of @p name in the temporary folder (the last 8 results stay valid). */
static inline const char *lk_tmp_path(const char *name)
{
    static char ring[8][512];
    static int next;
    char *p = ring[next++ % 8];
    snprintf(p, sizeof ring[0], "%s/%s", lk_tmpdir, name);
    return p;
}

/** Write @p n bytes to @p name in the temporary folder; its path. */
static inline const char *lk_tmp_write(const char *name, const void *data, size_t n)
{
    const char *p = lk_tmp_path(name);
    FILE *f = fopen(p, "wb");
    cr_assert_not_null(f, "cannot create %s", p);
    cr_assert_eq(fwrite(data, 1, n, f), n);
    cr_assert_eq(fclose(f), 0);
    return p;
}

/** The whole file @p path, NUL-terminated (its length in @p n unless NULL); free() it. */
static inline char *lk_read_whole(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot open %s", path);
    size_t cap = 1 << 16, len = 0;
    char *b = malloc(cap + 1);
    size_t got;
    while ((got = fread(b + len, 1, cap - len, f)) > 0) {
        len += got;
        if (len == cap)
            b = realloc(b, (cap *= 2) + 1);
    }
    fclose(f);
    b[len] = '\0';
    if (n)
        *n = len;
    return b;
}

/** Write the text @p text to @p name in the temporary folder; its path. */
static inline const char *lk_tmp_put(const char *name, const char *text)
{
    return lk_tmp_write(name, text, strlen(text));
}

/** Absolute path of a file under the kit root, in a static buffer per call site. */
static inline const char *lk_test_path(char *buf, size_t size, const char *rel)
{
    snprintf(buf, size, "%s/%s", LK_TOP_DIR, rel);
    return buf;
}

/** The lab's main.c, compiled for its tests as lk_lab_main (labs/lab.mk): the tests run
    the real driver with lk_run_captured(). */
int lk_lab_main(int argc, char **argv);

/**
 * Read what the child @p pid writes to @p fd (closed afterwards) into @p out, keeping the
 * first @p size - 1 bytes and draining the rest, then wait for the child. Returns its exit
 * status, or 128 + the signal that killed it.
 */
static inline int lk_test_collect(int fd, pid_t pid, char *out, size_t size)
{
    size_t used = 0;
    ssize_t got;
    char sink[4096];
    while ((got = read(fd, used + 1 < size ? out + used : sink,
                       used + 1 < size ? size - 1 - used : sizeof sink)) > 0)
        if (used + 1 < size)
            used += (size_t)got;
    out[used] = '\0';
    close(fd);
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/**
 * Run @p fn(@p argc, @p argv) in a child process with stdout and stderr captured into
 * @p out (NUL-terminated, truncated to @p size); return the child's exit status, or 128 +
 * signal number if it was killed. For testing programs' error paths, which exit.
 */
static inline int lk_run_captured(int (*fn)(int, char **), int argc, char **argv, char *out,
                                  size_t size)
{
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    fflush(NULL);
    pid_t pid = fork();
    cr_assert_geq(pid, 0, "fork failed");
    if (pid == 0) {
        dup2(fds[1], 1);
        dup2(fds[1], 2);
        close(fds[0]);
        int status = fn(argc, argv);
        fflush(NULL);
        _exit(status);
    }
    close(fds[1]);
    return lk_test_collect(fds[0], pid, out, size);
}

/**
 * Assert that @p got equals @p expected bit for bit; on mismatch fail with the count, the
 * first differing cells (row, col, expected, got) and the max abs/rel difference.
 */
static inline void lk_assert_grid_eq(const double *expected, const double *got, int rows,
                                     int cols, const char *what)
{
    lk_compare c;
    if (lk_compare_grids(expected, got, rows, cols, 8, &c) == 0)
        return;
    char buf[4096];
    lk_compare_format(buf, sizeof buf, &c, rows, cols, what);
    cr_assert_fail("%s", buf);
}

#endif
