/* The isolation machinery: limits hold, misbehaving children are stopped with a clear
   reason, and nothing of their process group survives. */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "grader_testing.h"
#include "labkit/timing.h"
#include "sandbox.h"

static char *dir;

static void setup(void)
{
    dir = gr_test_dir();
}

static void teardown(void)
{
    gr_test_cleanup(dir);
}

/* A broken kill would hang a test: the timeout turns that into a failure. */
TestSuite(sandbox, .init = setup, .fini = teardown, .timeout = 60);

/* Processes whose process group is @p pgid, from /proc. */
static int group_members(int pgid)
{
    DIR *d = opendir("/proc");
    cr_assert_not_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        char path[300], buf[1024];
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        size_t len = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[len] = '\0';
        /* pid (comm) state ppid pgrp ...: comm may hold spaces, so start after the last ')'. */
        char *p = strrchr(buf, ')');
        char state;
        int ppid, pgrp;
        if (p && sscanf(p + 1, " %c %d %d", &state, &ppid, &pgrp) == 3 && pgrp == pgid &&
            state != 'Z')
            n++;
    }
    closedir(d);
    return n;
}

static gr_outcome run_hostile(const char *const *args, const gr_limits *lim, const char *out)
{
    const char *argv[8] = {GR_HOSTILE};
    for (int i = 0; args[i]; i++)
        argv[i + 1] = args[i];
    gr_cmd cmd = {argv, dir, out, NULL, NULL, 0, NULL};
    gr_outcome o;
    lk_error err;
    cr_assert_eq(gr_sandbox_run(&cmd, lim, &o, &err), 0, "%s", err.msg);
    return o;
}

Test(sandbox, a_child_that_sleeps_forever_is_killed_at_the_time_limit)
{
    gr_limits lim = {.wall_s = 1.0, .drop = 1};
    const char *args[] = {"sleep", NULL};
    double t0 = lk_wall_seconds();
    gr_outcome o = run_hostile(args, &lim, NULL);
    double took = lk_wall_seconds() - t0;
    cr_assert_eq(o.end, GR_END_TIMEOUT, "end %d: %s", o.end, o.reason);
    cr_assert(took >= 1.0 && took < 3.0, "took %.2f s for a 1 s limit", took);
    cr_assert(strstr(o.reason, "time limit"), "reason: %s", o.reason);
    cr_assert_eq(group_members(o.pgid), 0, "processes of the group survived");
}

Test(sandbox, a_fork_bomb_is_held_by_the_process_limit_and_killed)
{
    char *out = gr_strf("%s/bomb.out", dir);
    gr_limits lim = {.wall_s = 3.0, .nproc = 32, .drop = 1};
    const char *args[] = {"forkbomb", NULL};
    gr_outcome o = run_hostile(args, &lim, out);
    cr_assert_eq(o.end, GR_END_TIMEOUT, "end %d: %s", o.end, o.reason);
    cr_assert_eq(group_members(o.pgid), 0, "forked processes survived the group kill");
    lk_error err;
    char *text = gr_read_file(out, 4096, NULL, &err);
    cr_assert_not_null(text, "%s", err.msg);
    int ok = -1, failed = -1;
    cr_assert_eq(sscanf(text, "forked %d failed %d", &ok, &failed), 2, "output: %s", text);
    cr_assert(ok <= 32, "%d forks succeeded past a limit of 32 more tasks", ok);
    cr_assert(failed > 0, "no fork failed: the process limit did not hold");
    free(text);
    free(out);
}

Test(sandbox, output_past_the_cap_kills_the_group_and_keeps_only_the_head)
{
    char *out = gr_strf("%s/flood.out", dir);
    gr_limits lim = {.wall_s = 30, .output_bytes = 1 << 20, .file_bytes = 64LL << 20, .drop = 1};
    const char *args[] = {"flood", "1073741824", NULL}; /* 1 GiB */
    double t0 = lk_wall_seconds();
    gr_outcome o = run_hostile(args, &lim, out);
    double took = lk_wall_seconds() - t0;
    /* Cut by the grader's watch (output cap) or, if faster than it, by RLIMIT_FSIZE. */
    cr_assert(o.end == GR_END_OUTPUT_CAP || (o.end == GR_END_SIGNALED && o.status == SIGXFSZ),
              "end %d: %s", o.end, o.reason);
    cr_assert(took < 20, "took %.1f s", took);
    struct stat st;
    cr_assert_eq(stat(out, &st), 0);
    cr_assert(st.st_size <= (1 << 20), "%lld bytes kept for a 1 MiB cap", (long long)st.st_size);
    cr_assert_eq(group_members(o.pgid), 0);
    free(out);
}

Test(sandbox, a_file_past_the_size_limit_stops_the_writer)
{
    char *file = gr_strf("%s/big.bin", dir);
    gr_limits lim = {.wall_s = 30, .file_bytes = 1 << 20, .drop = 1};
    const char *args[] = {"write", file, "1073741824", NULL};
    gr_outcome o = run_hostile(args, &lim, NULL);
    cr_assert_eq(o.end, GR_END_SIGNALED, "end %d: %s", o.end, o.reason);
    cr_assert_eq(o.status, SIGXFSZ);
    cr_assert(strstr(o.reason, "file size limit of 1 MiB"), "reason: %s", o.reason);
    struct stat st;
    cr_assert_eq(stat(file, &st), 0);
    cr_assert(st.st_size <= (1 << 20));
    free(file);
}

Test(sandbox, a_crash_is_reported_with_its_signal_name)
{
    gr_limits lim = {.wall_s = 30, .drop = 1};
    const char *args[] = {"crash", NULL};
    gr_outcome o = run_hostile(args, &lim, NULL);
    cr_assert_eq(o.end, GR_END_SIGNALED, "end %d: %s", o.end, o.reason);
    cr_assert_eq(o.status, SIGSEGV);
    cr_assert(strstr(o.reason, "crashed: SIGSEGV"), "reason: %s", o.reason);
}

Test(sandbox, exit_status_and_result_descriptor)
{
    gr_limits lim = {.wall_s = 30, .drop = 1};
    const char *args[] = {"exit", "3", NULL};
    gr_outcome o = run_hostile(args, &lim, NULL);
    cr_assert_eq(o.end, GR_END_EXITED);
    cr_assert_eq(o.status, 3);
    cr_assert_str_eq(o.reason, "exit status 3");

    char *res = gr_strf("%s/result.txt", dir);
    const char *argv[] = {GR_HOSTILE, "fd", "57", "{\"status\":\"ok\"}", NULL};
    gr_cmd cmd = {argv, dir, NULL, NULL, res, 57, NULL};
    lk_error err;
    cr_assert_eq(gr_sandbox_run(&cmd, &lim, &o, &err), 0, "%s", err.msg);
    cr_assert(gr_outcome_ok(&o), "%s", o.reason);
    char *text = gr_read_file(res, 4096, NULL, &err);
    cr_assert_not_null(text);
    cr_assert_str_eq(text, "{\"status\":\"ok\"}\n");
    free(text);
    free(res);
}

Test(sandbox, only_the_result_descriptor_is_inherited)
{
    /* A descriptor the grader holds open must not reach the child. */
    char *secret = gr_strf("%s/secret", dir);
    FILE *f = fopen(secret, "w");
    cr_assert_not_null(f);
    int fd = fileno(f);
    char *fdname = gr_strf("%d", fd);
    gr_limits lim = {.wall_s = 30, .drop = 1};
    char *out = gr_strf("%s/fd.out", dir);
    const char *argv[] = {GR_HOSTILE, "fd", fdname, "leak", NULL};
    gr_cmd cmd = {argv, dir, out, NULL, NULL, 0, NULL};
    gr_outcome o;
    lk_error err;
    cr_assert_eq(gr_sandbox_run(&cmd, &lim, &o, &err), 0, "%s", err.msg);
    fclose(f);
    struct stat st;
    cr_assert_eq(stat(secret, &st), 0);
    cr_assert_eq(st.st_size, 0, "the child wrote to a descriptor of the grader");
    free(secret);
    free(fdname);
    free(out);
}

Test(sandbox, a_missing_program_is_not_started)
{
    gr_limits lim = {.wall_s = 5};
    const char *argv[] = {"labkit-no-such-program", NULL};
    gr_cmd cmd = {argv, dir, NULL, NULL, NULL, 0, NULL};
    gr_outcome o;
    lk_error err;
    cr_assert_eq(gr_sandbox_run(&cmd, &lim, &o, &err), 0);
    cr_assert_eq(o.end, GR_END_NOT_STARTED);
    cr_assert(strstr(o.reason, "labkit-no-such-program"), "reason: %s", o.reason);
}

Test(sandbox, root_runs_commands_as_nobody_with_a_clean_environment)
{
    setenv("MAKEFLAGS", "-j8 --jobserver-auth=3,4", 1);
    char *out = gr_strf("%s/env.out", dir);
    const char *argv[] = {"sh", "-c", "id -u; env", NULL};
    gr_limits lim = {.wall_s = 30, .drop = 1};
    gr_cmd cmd = {argv, dir, out, NULL, NULL, 0, NULL};
    gr_outcome o;
    lk_error err;
    cr_assert_eq(gr_sandbox_run(&cmd, &lim, &o, &err), 0, "%s", err.msg);
    cr_assert(gr_outcome_ok(&o), "%s", o.reason);
    char *text = gr_read_file(out, 1 << 16, NULL, &err);
    cr_assert_not_null(text);
    int uid = atoi(text);
    if (geteuid() == 0)
        cr_assert_eq(uid, GR_UNPRIVILEGED_ID, "ran as uid %d", uid);
    else
        cr_assert_eq(uid, (int)geteuid());
    cr_assert_null(strstr(text, "MAKEFLAGS"), "the outer make's flags leaked:\n%s", text);
    cr_assert(strstr(text, "LC_ALL=C"));
    free(text);
    free(out);
}

Test(sandbox, the_gpu_lock_excludes_a_second_holder)
{
    char *path = gr_strf("%s/gpu.lock", dir);
    lk_error err;
    int fd = gr_gpu_trylock(path, &err);
    cr_assert(fd >= 0, "%s", err.msg);
    pid_t pid = fork();
    if (pid == 0)
        _exit(gr_gpu_trylock(path, &err) >= 0 ? 1 : 0);
    int status;
    waitpid(pid, &status, 0);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "another process took the lock while it was held");
    gr_gpu_unlock(fd);
    fd = gr_gpu_trylock(path, &err);
    cr_assert(fd >= 0, "cannot take the lock after it was released: %s", err.msg);
    gr_gpu_unlock(fd);
    free(path);
}
