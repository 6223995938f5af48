/* Lab 07 test helpers: start the lab's driver under mpirun with P ranks and read what it
   says. The driver compares the gathered grid with the serial reference itself (exit 3 and
   the differing cells when they differ); the tests also check its md5 against the
   manifest's. */
#ifndef LAB07_TESTS_HELPERS_H
#define LAB07_TESTS_HELPERS_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "lab.h"
#include "sciddicat/sciddicat_testing.h"

#ifndef LK_LAB_PROG
#error "compile with -DLK_LAB_PROG='\"path of the lab07 driver\"' (labs/lab.mk does)"
#endif

/** Seconds an mpirun may take before it counts as hung (then it is killed). */
#define LAB07_MPIRUN_LIMIT_S "240"

/** Remove @p path and everything under it (best effort: a test folder in /tmp). */
static inline void lab07_remove_tree(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return;
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        struct dirent *e;
        while (d && (e = readdir(d)))
            if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
                char sub[4096];
                if (snprintf(sub, sizeof sub, "%s/%s", path, e->d_name) < (int)sizeof sub)
                    lab07_remove_tree(sub);
            }
        if (d)
            closedir(d);
        rmdir(path);
    } else {
        unlink(path);
    }
}

/**
 * Run `mpirun -np RANKS [mpirun options] DRIVER ARGS...` with @p env (NAME=VALUE strings, or
 * NULL) added to its environment; capture stdout and stderr into @p out. Returns the exit
 * status (124: killed after LAB07_MPIRUN_LIMIT_S seconds). Ranks may outnumber the cores
 * (--oversubscribe), root may run it (CI and the GPU machines run as root).
 */
/* The mpirun command of a run with @p ranks ranks: argv (64 entries) from "mpirun" on;
   @p np holds the rank count's text. Returns the count of entries. */
static inline int lab07_mpirun_argv(int ranks, const char *const *args, const char **argv,
                                    char np[16])
{
    int n = 0;
    snprintf(np, 16, "%d", ranks);
    argv[n++] = "mpirun";
    argv[n++] = "-np";
    argv[n++] = np;
    argv[n++] = "--oversubscribe";
    if (geteuid() == 0)
        argv[n++] = "--allow-run-as-root";
    /* One node, started by fork: no ssh or rsh needed (containers often have neither). */
    argv[n++] = "--mca";
    argv[n++] = "plm";
    argv[n++] = "isolated";
    /* Containers often forbid the cross-process reads of Open MPI's single-copy path. */
    argv[n++] = "--mca";
    argv[n++] = "btl_vader_single_copy_mechanism";
    argv[n++] = "none";
    argv[n++] = LK_LAB_PROG;
    for (int i = 0; args[i] && n < 63; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    return n;
}

static inline int lab07_mpirun(int ranks, const char *const *env, const char *const *args,
                               char *out, size_t size)
{
    const char *argv[68];
    char np[16];
    int n = 0;
    argv[n++] = "timeout";
    argv[n++] = "-k";
    argv[n++] = "10";
    argv[n++] = LAB07_MPIRUN_LIMIT_S;
    n += lab07_mpirun_argv(ranks, args, argv + n, np);

    /* Open MPI 4 makes its session folder under TMPDIR; two mpiruns starting at once in the
       same folder can collide ("mkdir ... File exists"), so each gets its own. */
    char tmp[] = "/tmp/lab07-mpirun-XXXXXX";
    cr_assert_not_null(mkdtemp(tmp), "mkdtemp failed");
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    fflush(NULL);
    pid_t pid = fork();
    cr_assert_geq(pid, 0, "fork failed");
    if (pid == 0) {
        dup2(fds[1], 1);
        dup2(fds[1], 2);
        close(fds[0]);
        setenv("TMPDIR", tmp, 1);
        for (int i = 0; env && env[i]; i++) {
            char name[256];
            const char *eq = strchr(env[i], '=');
            snprintf(name, sizeof name, "%.*s", eq ? (int)(eq - env[i]) : 0, env[i]);
            if (eq)
                setenv(name, eq + 1, 1);
        }
        execvp(argv[0], (char *const *)argv);
        fprintf(stderr, "cannot start %s: %s (is coreutils' timeout on PATH?)\n", argv[0],
                strerror(errno));
        _exit(127);
    }
    close(fds[1]);
    int status = lk_test_collect(fds[0], pid, out, size);
    lab07_remove_tree(tmp);
    return status;
}

/* Your functions in the order a run calls them (lab.h); the first three are exchange.c's. */
typedef int (*lab07_slab_fn)(lab07_slab *s, lk_error *err);
static inline int lab07_probe_flows(lab07_slab *s, lk_error *err)
{
    return lab07_gpu_flows(s, 0, 0, NULL, err);
}
static inline int lab07_probe_width(lab07_slab *s, lk_error *err)
{
    return lab07_gpu_width(s, 0, 0, NULL, err);
}
static inline int lab07_probe_gather(lab07_slab *s, lk_error *err)
{
    return lab07_gather(s, NULL, err);
}
static const lab07_slab_fn lab07_student_fns[] = {lab07_halo_begin, lab07_halo_end,
                                                  lab07_probe_gather, lab07_probe_flows,
                                                  lab07_probe_width};
enum { LAB07_EXCHANGE_FNS = 3, LAB07_STUDENT_FNS = 5 };

/* Call @p fn once in a child process on an empty slab, MPI not started: an untouched skeleton
   function returns its "not written yet" error at once; a written one fails or crashes on
   such a slab, which stays in the child (its output discarded). 1 with the skeleton's
   message in @p msg, else 0. */
static inline int lab07_fn_not_written(lab07_slab_fn fn, char *msg, size_t size)
{
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    fflush(NULL);
    pid_t pid = fork();
    cr_assert_geq(pid, 0, "fork failed");
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 1);
        dup2(null, 2);
        close(fds[0]);
        alarm(10);
        lab07_slab s;
        memset(&s, 0, sizeof s);
        s.up = s.down = MPI_PROC_NULL;
        lk_error err;
        lk_error_clear(&err);
        if (fn(&s, &err) != 0 && write(fds[1], err.msg, strlen(err.msg)) < 0)
            _exit(1);
        _exit(0);
    }
    close(fds[1]);
    size_t used = 0;
    ssize_t n;
    while (used + 1 < size && (n = read(fds[0], msg + used, size - 1 - used)) > 0)
        used += (size_t)n;
    msg[used] = '\0';
    close(fds[0]);
    waitpid(pid, NULL, 0);
    return strstr(msg, " is not written yet") != NULL;
}

/* The first of the first @p nfns student functions still in its skeleton state, with its
   message ("exchange.c: lab07_halo_begin is not written yet: start with TODO 1 ..."). */
static inline int lab07_first_not_written(int nfns, char *msg, size_t size)
{
    for (int i = 0; i < nfns; i++)
        if (lab07_fn_not_written(lab07_student_fns[i], msg, size))
            return 1;
    return 0;
}

/**
 * CPU tests: while exchange.c is still (partly) the skeleton, skip with its own words, at
 * once, before any mpirun: an untouched distribution's `make check` passes on a machine
 * without a GPU, as the GPU tests skip there.
 */
static inline void lab07_skip_if_exchange_not_written(void)
{
    static int written; /* once per test: Criterion runs each in a process of its own */
    char msg[1024];
    if (!written && lab07_first_not_written(LAB07_EXCHANGE_FNS, msg, sizeof msg))
        cr_skip_test("%s (these tests run once it is)", msg);
    written = 1;
}

/**
 * GPU tests, first thing: skip without a GPU (LK_REQUIRE_GPU); fail at once with the
 * skeleton's TODO message while any of your five functions is not written, instead of in
 * mpirun (a job whose ranks fail ends in MPI_Abort, whose teardown took tens of seconds per
 * test on a GPU machine). The probe runs before this process touches CUDA: a child may use
 * CUDA only when its parent has not.
 */
static inline void lab07_require_gpu_and_written(void)
{
    char msg[1024];
    const int skeleton = lab07_first_not_written(LAB07_STUDENT_FNS, msg, sizeof msg);
    LK_REQUIRE_GPU();
    if (skeleton)
        cr_assert_fail("%s (the GPU tests need kernels.cu and exchange.c written)", msg);
}

/** The mpirun command line a test ran, for its failure message: the one that ran, to
    paste into a shell. */
static inline void lab07_command_line(int ranks, const char *const *env,
                                      const char *const *args, char *buf, size_t size)
{
    const char *argv[64];
    char np[16];
    lab07_mpirun_argv(ranks, args, argv, np);
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; env && env[i] && used < size; i++)
        used += snprintf(buf + used, size - used, "%s ", env[i]);
    for (int i = 0; argv[i] && used < size; i++)
        used += snprintf(buf + used, size - used, "%s%s", i ? " " : "", argv[i]);
}

/**
 * Run the driver under mpirun with @p ranks ranks on manifest dataset @p dataset (its
 * steps) in @p variant, and assert that it exits 0, that the gathered grid equals the
 * serial reference, and that both hashes are the manifest's md5. @p env as lab07_mpirun.
 * @p skeleton_fails: 1 for GPU tests, which checked the files first
 * (lab07_require_gpu_and_written), 0 skips while exchange.c is not written (CPU tests).
 * Returns the driver's output (static buffer) for further checks.
 */
static inline const char *lab07_check_dataset(int ranks, const char *variant,
                                              const char *dataset, const char *const *env,
                                              int skeleton_fails)
{
    static char out[1 << 16];
    char md5[33];
    sciddicat sim;
    lk_test_load_dataset(dataset, &sim, NULL, md5);
    sciddicat_free(&sim);
    const char *args[] = {"--variant", variant, "--dataset", dataset, "--json", NULL};
    char cmd[512];
    lab07_command_line(ranks, env, args, cmd, sizeof cmd);
    if (!skeleton_fails)
        lab07_skip_if_exchange_not_written();
    int status = lab07_mpirun(ranks, env, args, out, sizeof out);
    cr_assert_eq(status, 0, "%s: exit status %d (3: the gathered grid differs from the serial "
                 "reference; 124: it hung and was killed):\n%s", cmd, status, out);
    cr_assert(strstr(out, "\"match\":true"), "%s: no \"match\":true in its output:\n%s", cmd,
              out);
    const char *first = strstr(out, md5);
    cr_assert(first && strstr(first + 32, md5),
              "%s: the serial and the gathered md5 should both be the manifest's %s:\n%s", cmd,
              md5, out);
    return out;
}

#endif
