/* Helpers shared by the grader's test suites: scratch folders and running the grader. */
#ifndef GRADER_TESTING_H
#define GRADER_TESTING_H

#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util.h"

/* A fresh folder under /tmp that the unprivileged user can enter (the sandbox may run
   commands as nobody); remove it with gr_test_cleanup(). */
static inline char *gr_test_dir(void)
{
    char tmpl[] = "/tmp/labkit-grader-test-XXXXXX";
    char *d = mkdtemp(tmpl);
    cr_assert_not_null(d, "mkdtemp failed");
    chmod(d, 0777);
    return gr_xstrdup(d);
}

/* LABKIT_KEEP_TEST_DIRS=1 keeps the folders for a look after a failure. */
static inline void gr_test_cleanup(char *dir)
{
    if (!getenv("LABKIT_KEEP_TEST_DIRS"))
        gr_rm_rf(dir, NULL);
    free(dir);
}

/* Start the grader (GR_GRADER) with @p args, stdout and stderr into @p log; returns its pid. */
static inline pid_t gr_test_start_grader(const char *const *args, const char *log)
{
    const char *argv[32] = {GR_GRADER, "--kit", LK_TOP_DIR, "--lib", GR_LK_LIB};
    int n = 5;
    for (int i = 0; args[i] && n < 31; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    fflush(NULL);
    pid_t pid = fork();
    cr_assert(pid >= 0, "fork failed");
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0)
            _exit(127);
        dup2(fd, 1);
        dup2(fd, 2);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    return pid;
}

/* Run the grader to its end; its exit status (or 128 + signal). */
static inline int gr_test_run_grader(const char *const *args, const char *log)
{
    pid_t pid = gr_test_start_grader(args, log);
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

#endif
