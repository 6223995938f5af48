/* The isolation machinery: limits hold, misbehaving children are stopped with a clear
   reason, and nothing of their process group survives. */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "grader_testing.h"
#include "labkit/timing.h"
#include "jail.h"
#include "driver.h"
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
    gr_cmd cmd = {argv, dir, out, NULL, NULL, 0, NULL, NULL, NULL, NULL};
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
    /* The limit is 32 tasks above the user's count when the run starts; the suite's other
       tests run as the same user in parallel, and the slots of theirs that end meanwhile
       are the bomb's to take (seen as an ordinary user on a 16-core machine). */
    cr_assert(ok <= 32 + 64, "%d forks succeeded past a limit of 32 more tasks", ok);
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
    gr_cmd cmd = {argv, dir, NULL, NULL, res, 57, NULL, NULL, NULL, NULL};
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
    gr_cmd cmd = {argv, dir, out, NULL, NULL, 0, NULL, NULL, NULL, NULL};
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
    gr_cmd cmd = {argv, dir, NULL, NULL, NULL, 0, NULL, NULL, NULL, NULL};
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
    gr_cmd cmd = {argv, dir, out, NULL, NULL, 0, NULL, NULL, NULL, NULL};
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
    /* A student's runs get a user of their own, so that the process limit is theirs. */
    lim.run_id = GR_RUN_ID_BASE + 1234;
    cr_assert_eq(gr_sandbox_run(&cmd, &lim, &o, &err), 0, "%s", err.msg);
    cr_assert(gr_outcome_ok(&o), "%s", o.reason);
    text = gr_read_file(out, 1 << 16, NULL, &err);
    cr_assert_not_null(text);
    cr_assert_eq(atoi(text), geteuid() == 0 ? GR_RUN_ID_BASE + 1234 : (int)geteuid(),
                 "ran as uid %d", atoi(text));
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

/* A holder that never lets go keeps no grader waiting past its deadline. */
Test(sandbox, waiting_for_the_gpu_lock_has_a_deadline)
{
    char *path = gr_strf("%s/gpu.lock", dir);
    lk_error err;
    int held = gr_gpu_trylock(path, &err);
    cr_assert(held >= 0, "%s", err.msg);
    const double t0 = lk_wall_seconds();
    cr_assert_eq(gr_gpu_lock(path, 0.5, &err), -1, "took a lock another holder has");
    const double waited = lk_wall_seconds() - t0;
    cr_assert(waited >= 0.5 && waited < 5, "waited %.2f s for a 0.5 s deadline", waited);
    cr_assert(strstr(err.msg, "past the deadline"), "%s", err.msg);
    gr_gpu_unlock(held);
    int fd = gr_gpu_lock(path, 0.5, &err);
    cr_assert(fd >= 0, "a free lock: %s", err.msg);
    gr_gpu_unlock(fd);
    free(path);
}

/* A grader that must time alone (the host lock exclusive) is not kept waiting for ever by
   the other GPUs' graders taking the lock shared back to back: two of them here, their holds
   overlapping so that one always holds it. */
Test(sandbox, a_grader_timing_alone_gets_the_host_lock_between_others_shared_holds)
{
    char *path = gr_strf("%s/gpu.lock.host", dir);
    pid_t readers[2];
    for (int r = 0; r < 2; r++) {
        readers[r] = fork();
        cr_assert(readers[r] >= 0);
        if (readers[r] == 0) {
            struct timespec offset = {0, r * 75 * 1000 * 1000}, hold = {0, 150 * 1000 * 1000};
            nanosleep(&offset, NULL);
            const double t0 = lk_wall_seconds();
            lk_error e;
            while (lk_wall_seconds() - t0 < 4) {
                int fd = gr_host_lock(path, 0, 10, &e);
                nanosleep(&hold, NULL);
                gr_gpu_unlock(fd);
            }
            _exit(0);
        }
    }
    struct timespec settle = {0, 400 * 1000 * 1000};
    nanosleep(&settle, NULL);
    lk_error err;
    const double t0 = lk_wall_seconds();
    int fd = gr_host_lock(path, 1, 3, &err);
    const double waited = lk_wall_seconds() - t0;
    gr_gpu_unlock(fd);
    for (int r = 0; r < 2; r++)
        waitpid(readers[r], NULL, 0);
    cr_assert(fd >= 0, "the exclusive hold never came between the shared ones: %s", err.msg);
    cr_assert(waited < 1.5, "waited %.2f s for the others' current holds (150 ms each)", waited);
    free(path);
}

/* ---- the jail: what a student's build or run can see ---------------------------------- */

/* A kit with a solution, a class of two students, and a jail showing what a student's run
   is shown: the kit's common/ folder, its own folder (writable), the hostile helper. */
typedef struct jail_fixture {
    gr_jail jail;
    char *kit, *secret, *shown, *alice, *bob, *bob_file, *helper_dir;
} jail_fixture;

static void write_file(const char *path, const char *text)
{
    lk_error err;
    char *copy = gr_xstrdup(path);
    *strrchr(copy, '/') = '\0';
    cr_assert_eq(gr_mkdir_p(copy, 0755, &err), 0, "%s", err.msg);
    cr_assert_eq(gr_write_atomic_text(path, text, &err), 0, "%s", err.msg);
    chmod(path, 0644);
    free(copy);
}

static void jail_setup(jail_fixture *f)
{
    memset(f, 0, sizeof *f);
    f->kit = gr_strf("%s/kit", dir);
    f->secret = gr_strf("%s/solutions/01-straightforward/kernels.cu", f->kit);
    f->shown = gr_strf("%s/common/include/shown.h", f->kit);
    f->alice = gr_strf("%s/work/students/alice", dir);
    f->bob = gr_strf("%s/work/students/bob", dir);
    f->bob_file = gr_strf("%s/kernels.cu", f->bob);
    write_file(f->secret, "// the solution\n");
    write_file(f->shown, "// a kit header\n");
    write_file(f->bob_file, "// bob's work\n");
    lk_error err;
    cr_assert_eq(gr_mkdir_p(f->alice, 0777, &err), 0, "%s", err.msg);
    chmod(f->alice, 0777);
    cr_assert_eq(gr_jail_init(&f->jail, NULL, &err), 0, "%s", err.msg);
    char *common = gr_strf("%s/common", f->kit);
    gr_jail_show(&f->jail, common);
    free(common);
    f->helper_dir = gr_xstrdup(GR_HOSTILE);
    *strrchr(f->helper_dir, '/') = '\0';
}

static void jail_teardown(jail_fixture *f)
{
    gr_jail_free(&f->jail);
    free(f->kit);
    free(f->secret);
    free(f->shown);
    free(f->alice);
    free(f->bob);
    free(f->bob_file);
    free(f->helper_dir);
}

/* Run @p argv in the jail as alice's run (her folder writable); its stdout in *@p text. */
static gr_outcome jailed_run(jail_fixture *f, const char *const *argv, char **text)
{
    char *out = gr_strf("%s/jail.out", dir);
    const char *writable[] = {f->alice, NULL}, *readable[] = {f->helper_dir, NULL};
    gr_cmd cmd = {argv, f->alice, out, NULL, NULL, 0, NULL, writable, readable, NULL};
    gr_limits lim = {.wall_s = 30, .drop = 1, .jail = &f->jail, .nproc = 64};
    gr_outcome o;
    lk_error err;
    cr_assert_eq(gr_sandbox_run(&cmd, &lim, &o, &err), 0, "%s", err.msg);
    *text = gr_read_file(out, 1 << 20, NULL, &err);
    cr_assert_not_null(*text, "%s", err.msg);
    free(out);
    return o;
}

Test(sandbox, a_jailed_run_cannot_read_the_solutions_or_another_students_files)
{
    jail_fixture f;
    jail_setup(&f);
    char *text;
    const char *control[] = {GR_HOSTILE, "read", f.shown, NULL};
    gr_outcome o = jailed_run(&f, control, &text);
    cr_assert(gr_outcome_ok(&o) && strstr(text, "a kit header"),
              "the kit's shown files must be readable (%s): %s", o.reason, text);
    free(text);
    const char *sol[] = {GR_HOSTILE, "read", f.secret, NULL};
    o = jailed_run(&f, sol, &text);
    cr_assert(!gr_outcome_ok(&o) && strstr(text, "cannot read"),
              "a student run read the solution: %s", text);
    free(text);
    const char *other[] = {GR_HOSTILE, "read", f.bob_file, NULL};
    o = jailed_run(&f, other, &text);
    cr_assert(!gr_outcome_ok(&o) && strstr(text, "No such file"),
              "a student run read another student's file: %s", text);
    free(text);
    jail_teardown(&f);
}

Test(sandbox, a_jailed_run_writes_only_in_its_own_folder_and_has_a_private_tmp)
{
    jail_fixture f;
    jail_setup(&f);
    /* A file in the host's /tmp that the jail must not show. */
    char *host_tmp = gr_strf("/tmp/labkit-jail-host-%d", (int)getpid());
    write_file(host_tmp, "host\n");
    char *script = gr_strf(
        "for p in %s/common/new %s/new %s/new %s/new /tmp/labkit-jail-probe; do "
        "  touch $p 2>/dev/null && echo wrote $p; done; "
        "test -e %s && echo sees-host-tmp; touch %s/mine && echo wrote-own; "
        "touch %s/../new 2>/dev/null && echo wrote-root; true", f.kit, dir, f.bob, f.kit, host_tmp,
        f.alice, f.helper_dir);
    const char *argv[] = {"sh", "-c", script, NULL};
    char *text;
    gr_outcome o = jailed_run(&f, argv, &text);
    cr_assert(gr_outcome_ok(&o), "%s", o.reason);
    cr_assert(strstr(text, "wrote-own"), "its own folder must be writable: %s", text);
    cr_assert(strstr(text, "wrote /tmp/labkit-jail-probe"), "a private /tmp: %s", text);
    cr_assert_null(strstr(text, "sees-host-tmp"), "the host's /tmp is visible: %s", text);
    /* The folder above a shown one (outside /tmp) is made by bwrap on its own root: even
       inside the run it takes no file (a tmpfs without a size cap, and a false success).
       A kit checked out under /tmp has its folders inside the run's private, size-capped
       /tmp instead, where writing is allowed. */
    if (strncmp(f.helper_dir, "/tmp/", 5) != 0)
        cr_assert_null(strstr(text, "wrote-root"), "the sandbox's root is writable: %s", text);
    char *paths[] = {gr_strf("%s/common/new", f.kit), gr_strf("%s/new", dir),
                     gr_strf("%s/new", f.bob), gr_strf("%s/new", f.kit)};
    for (int i = 0; i < 4; i++) {
        cr_assert(!gr_exists(paths[i]), "the jailed run created %s (%s)", paths[i], text);
        free(paths[i]);
    }
    cr_assert(!gr_exists("/tmp/labkit-jail-probe"), "the private /tmp reached the host's");
    unlink(host_tmp);
    free(host_tmp);
    free(script);
    free(text);
    jail_teardown(&f);
}

Test(sandbox, a_jailed_run_has_no_network_its_own_pids_and_no_new_namespaces)
{
    jail_fixture f;
    jail_setup(&f);
    char *text;
    const char *net[] = {GR_HOSTILE, "net", NULL};
    gr_outcome o = jailed_run(&f, net, &text);
    cr_assert(!gr_outcome_ok(&o) && strstr(text, "no network"), "%s", text);
    free(text);
    /* Its own pid namespace: bwrap's init and the command, nothing of the host. */
    const char *pids[] = {"sh", "-c", "ls /proc | grep -c '^[0-9]'; id -u", NULL};
    o = jailed_run(&f, pids, &text);
    cr_assert(gr_outcome_ok(&o), "%s", o.reason);
    int n = -1, uid = -1;
    cr_assert_eq(sscanf(text, "%d %d", &n, &uid), 2, "%s", text);
    cr_assert(n <= 4, "%d processes visible: not a pid namespace of its own", n);
    if (geteuid() == 0)
        cr_assert_eq(uid, GR_UNPRIVILEGED_ID, "student code ran as uid %d", uid);
    free(text);
    /* The seccomp filter refuses namespaces (a way out of bwrap's rules). */
    const char *ns[] = {"sh", "-c", "unshare -U true && echo unshared", NULL};
    o = jailed_run(&f, ns, &text);
    cr_assert_null(strstr(text, "unshared"), "a jailed run created a user namespace");
    free(text);
    jail_teardown(&f);
}

Test(sandbox, a_jailed_run_is_killed_with_everything_it_started)
{
    jail_fixture f;
    jail_setup(&f);
    char *token = gr_strf("labkit-jail-token-%d", (int)getpid());
    char *script = gr_strf("%s sleep %s & %s sleep %s", GR_HOSTILE, token, GR_HOSTILE, token);
    const char *argv[] = {"sh", "-c", script, NULL};
    char *out = gr_strf("%s/jail.out", dir);
    const char *writable[] = {f.alice, NULL}, *readable[] = {f.helper_dir, NULL};
    gr_cmd cmd = {argv, f.alice, out, NULL, NULL, 0, NULL, writable, readable, NULL};
    gr_limits lim = {.wall_s = 1, .drop = 1, .jail = &f.jail};
    gr_outcome o;
    lk_error err;
    cr_assert_eq(gr_sandbox_run(&cmd, &lim, &o, &err), 0, "%s", err.msg);
    cr_assert_eq(o.end, GR_END_TIMEOUT, "%s", o.reason);
    /* Nothing carrying the token may survive, in whatever session or namespace it was. */
    DIR *d = opendir("/proc");
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        char path[300], buf[4096];
        snprintf(path, sizeof path, "/proc/%s/cmdline", e->d_name);
        FILE *c = fopen(path, "r");
        if (!c)
            continue;
        size_t len = fread(buf, 1, sizeof buf - 1, c);
        fclose(c);
        for (size_t i = 0; i < len; i++)
            if (!buf[i])
                buf[i] = ' ';
        buf[len] = '\0';
        cr_assert_null(strstr(buf, token), "process %s survived: %s", e->d_name, buf);
    }
    closedir(d);
    free(out);
    free(script);
    free(token);
    jail_teardown(&f);
}

/* ---- the grader refuses to run student code without its sandbox, unless told ---------- */

static char *grade_missing_file(const char *extra, int *status)
{
    if (access(LK_TOP_DIR "/grader/examples/missing-file", R_OK) != 0)
        cr_skip_test("needs the example submissions (grader/examples), which the student "
                     "distribution leaves out");
    char *out = gr_strf("%s/out", dir), *log = gr_strf("%s/grade.log", dir);
    const char *args[] = {"--submissions", LK_TOP_DIR "/grader/examples", "--only",
                          "missing-file", "--no-gpu", "--out", out, extra, NULL};
    *status = gr_test_run_grader(args, log);
    lk_error err;
    char *console = gr_read_file(log, 1 << 20, NULL, &err);
    cr_assert_not_null(console, "%s", err.msg);
    free(out);
    free(log);
    return console;
}

Test(sandbox, without_user_namespaces_the_grader_refuses_and_says_how_to_enable_them)
{
    /* A bwrap that fails as bwrap does where unprivileged user namespaces are off. */
    char *bin = gr_strf("%s/bin", dir), *fake = gr_strf("%s/bin/bwrap", dir);
    write_file(fake, "#!/bin/sh\necho 'bwrap: No permissions to creating new namespace, likely "
                     "because the kernel does not allow non-privileged user namespaces.' >&2\n"
                     "exit 1\n");
    chmod(fake, 0755);
    char *path = gr_strf("%s:%s", bin, getenv("PATH"));
    setenv("PATH", path, 1);
    int status;
    char *console = grade_missing_file(NULL, &status);
    cr_assert_eq(status, 1, "exit status %d:\n%s", status, console);
    cr_assert(strstr(console, "the sandbox cannot start (bwrap: No permissions to creating new "
                              "namespace") &&
              strstr(console, "kernel.unprivileged_userns_clone") &&
              strstr(console, "user.max_user_namespaces") &&
              strstr(console, "kernel.apparmor_restrict_unprivileged_userns") &&
              strstr(console, "--unsandboxed"), "%s", console);
    free(console);
    char *report = gr_strf("%s/out/students/missing-file/report.md", dir);
    cr_assert(!gr_exists(report), "a report was written without a sandbox");
    free(report);

    console = grade_missing_file("--unsandboxed", &status);
    cr_assert_eq(status, 0, "exit status %d:\n%s", status, console);
    cr_assert(strstr(console, "WARNING: --unsandboxed"), "%s", console);
    static const char *const files[] = {"students/missing-file/report.md",
                                        "students/missing-file/report.json", "summary.md"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char *p = gr_strf("%s/out/%s", dir, files[i]);
        lk_error err;
        char *text = gr_read_file(p, 1 << 20, NULL, &err);
        cr_assert_not_null(text, "%s", err.msg);
        cr_assert(strstr(text, "UNSANDBOXED") || strstr(text, "\"unsandboxed\":true"),
                  "%s does not say the grading was unsandboxed:\n%s", files[i], text);
        free(text);
        free(p);
    }
    free(console);
    free(path);
    free(bin);
    free(fake);
}

Test(sandbox, every_report_names_the_isolation_of_student_code)
{
    int status;
    char *console = grade_missing_file(NULL, &status);
    cr_assert_eq(status, 0, "exit status %d:\n%s", status, console);
    char *p = gr_strf("%s/out/students/missing-file/report.md", dir);
    lk_error err;
    char *text = gr_read_file(p, 1 << 20, NULL, &err);
    cr_assert_not_null(text, "%s", err.msg);
    cr_assert(strstr(text, "- isolation of student code: bubblewrap sandbox"), "%s", text);
    cr_assert_null(strstr(text, "UNSANDBOXED"), "%s", text);
    free(text);
    free(p);
    free(console);
}

Test(sandbox, the_result_descriptor_of_a_jailed_run_carries_the_command_line_only)
{
    /* bwrap's own descriptors (its info and filter) must never land on the result number,
       whichever number the grader picks. */
    jail_fixture f;
    jail_setup(&f);
    char *res = gr_strf("%s/result.txt", f.alice);
    for (int fd = 3; fd < 24; fd++) {
        char num[16];
        snprintf(num, sizeof num, "%d", fd);
        const char *argv[] = {GR_HOSTILE, "fd", num, "{\"status\":\"ok\"}", NULL};
        const char *writable[] = {f.alice, NULL}, *readable[] = {f.helper_dir, NULL};
        gr_cmd cmd = {argv, f.alice, NULL, NULL, res, fd, NULL, writable, readable, NULL};
        gr_limits lim = {.wall_s = 30, .drop = 1, .jail = &f.jail};
        gr_outcome o;
        lk_error err;
        cr_assert_eq(gr_sandbox_run(&cmd, &lim, &o, &err), 0, "%s", err.msg);
        cr_assert(gr_outcome_ok(&o), "descriptor %d: %s", fd, o.reason);
        char *text = gr_read_file(res, 4096, NULL, &err);
        cr_assert_not_null(text, "%s", err.msg);
        cr_assert_str_eq(text, "{\"status\":\"ok\"}\n", "descriptor %d", fd);
        free(text);
    }
    free(res);
    jail_teardown(&f);
}

/* A jailed run in a box: it works in GR_BOX_PATH, which is the box, and a link it plants
   there with an absolute target is not followed by the grader. */
Test(sandbox, a_boxed_run_works_in_its_box_under_a_path_that_means_nothing_outside)
{
    jail_fixture f;
    jail_setup(&f);
    char *box = gr_strf("%s/box", dir), *out = gr_strf("%s/box.out", dir);
    cr_assert_eq(mkdir(box, 0777), 0);
    cr_assert_eq(chmod(box, 0777), 0);
    char *script = gr_strf("pwd; echo made > mine; ln -s %s link", f.secret);
    const char *argv[] = {"sh", "-c", script, NULL};
    const char *readable[] = {f.helper_dir, NULL};
    gr_cmd cmd = {argv, NULL, out, NULL, NULL, 0, NULL, NULL, readable, box};
    gr_limits lim = {.wall_s = 30, .drop = 1, .jail = &f.jail, .nproc = 64};
    gr_outcome o;
    lk_error err;
    cr_assert_eq(gr_sandbox_run(&cmd, &lim, &o, &err), 0, "%s", err.msg);
    char *text = gr_read_file(out, 1 << 20, NULL, &err);
    cr_assert(gr_outcome_ok(&o), "%s: %s", o.reason, text);
    cr_assert_str_eq(text, GR_BOX_PATH "\n", "the run's folder inside the jail");
    char *mine = gr_strf("%s/mine", box);
    cr_assert(gr_exists(mine), "what the run wrote in its box");
    gr_driver_run dr = {.box_fd = open(box, O_RDONLY | O_DIRECTORY)};
    char why[512];
    cr_assert_eq(gr_run_output(&dr, "link", 0, why, sizeof why), -1);
    cr_assert(strstr(why, "symbolic link"), "%s", why);
    close(dr.box_fd);
    free(mine);
    free(text);
    free(script);
    free(out);
    free(box);
    jail_teardown(&f);
}

/* A run that fills its box with files is killed, whatever it does after. */
Test(sandbox, a_run_past_its_box_quota_is_killed)
{
    char *box = gr_strf("%s/box", dir), *out = gr_strf("%s/quota.out", dir);
    cr_assert_eq(mkdir(box, 0777), 0);
    cr_assert_eq(chmod(box, 0777), 0);
    const char *argv[] = {"sh", "-c",
                          "i=0; while [ $i -lt 400 ]; do : > f$i; i=$((i+1)); done; sleep 20",
                          NULL};
    gr_cmd cmd = {argv, NULL, out, NULL, NULL, 0, NULL, NULL, NULL, box};
    gr_limits lim = {.wall_s = 30, .drop = 1, .quota_files = 100, .quota_bytes = 1 << 30};
    gr_outcome o;
    lk_error err;
    double t0 = lk_wall_seconds();
    cr_assert_eq(gr_sandbox_run(&cmd, &lim, &o, &err), 0, "%s", err.msg);
    cr_assert_eq(o.end, GR_END_QUOTA, "end %d: %s", o.end, o.reason);
    cr_assert(lk_wall_seconds() - t0 < 10, "killed only at the time limit");
    cr_assert(strstr(o.reason, "more than 100 files"), "%s", o.reason);
    /* Within its quota the same run ends as it would. */
    const char *few[] = {"sh", "-c", "i=0; while [ $i -lt 50 ]; do : > g$i; i=$((i+1)); done",
                         NULL};
    gr_cmd ok_cmd = {few, NULL, out, NULL, NULL, 0, NULL, NULL, NULL, box};
    lim.quota_files = 1000;
    cr_assert_eq(gr_sandbox_run(&ok_cmd, &lim, &o, &err), 0, "%s", err.msg);
    cr_assert(gr_outcome_ok(&o), "%s", o.reason);
    free(out);
    free(box);
}

/* Names a student run could plant where the grader writes or reads: a FIFO blocks no one,
   a link is not followed, a hard link or an oversized file is refused. */
Test(sandbox, planted_names_neither_block_nor_redirect_the_grader, .timeout = 20)
{
    char *target = gr_strf("%s/target", dir), *link_path = gr_strf("%s/link", dir);
    char *fifo = gr_strf("%s/fifo", dir), *hard = gr_strf("%s/hard", dir);
    char *big = gr_strf("%s/big", dir);
    write_file(target, "keep\n");
    write_file(big, "0123456789\n");
    cr_assert_eq(symlink(target, link_path), 0);
    cr_assert_eq(mkfifo(fifo, 0666), 0);
    cr_assert_eq(link(target, hard), 0);
    lk_error err;
    cr_assert_eq(gr_open_for_writing(link_path, &err), -1, "wrote through a planted link");
    cr_assert(strstr(err.msg, "symbolic link"), "%s", err.msg);
    cr_assert_eq(gr_open_for_writing(fifo, &err), -1, "opened a planted FIFO");
    char *kept = gr_read_file(target, 64, NULL, &err);
    cr_assert_str_eq(kept, "keep\n", "the link's target was changed");
    gr_driver_run dr = {.box_fd = open(dir, O_RDONLY | O_DIRECTORY)};
    char why[512];
    cr_assert_eq(gr_run_output(&dr, "link", 0, why, sizeof why), -1);
    cr_assert_eq(gr_run_output(&dr, "fifo", 0, why, sizeof why), -1);
    cr_assert(strstr(why, "not a regular file"), "%s", why);
    cr_assert_eq(gr_run_output(&dr, "hard", 0, why, sizeof why), -1);
    cr_assert(strstr(why, "hard link"), "%s", why);
    cr_assert_eq(gr_run_output(&dr, "big", 4, why, sizeof why), -1);
    cr_assert(strstr(why, "larger"), "%s", why);
    int fd = gr_run_output(&dr, "big", 64, why, sizeof why);
    cr_assert(fd >= 0, "%s", why);
    close(fd);
    close(dr.box_fd);
    free(kept);
    free(big);
    free(hard);
    free(fifo);
    free(link_path);
    free(target);
}

/* labkit-box, the runner on its own: one command in a box, a meta record out. */
Test(sandbox, the_runner_alone_writes_a_meta_record_of_how_the_command_ended)
{
    char *box = gr_strf("%s/box", dir), *meta = gr_strf("%s/meta", dir);
    cr_assert_eq(mkdir(box, 0777), 0);
    cr_assert_eq(chmod(box, 0777), 0);
    static const struct {
        const char *command, *want;
    } cases[] = {
        {"sh -c 'exit 3'", "status:exited\nexitcode:3\n"},
        {GR_HOSTILE " sleep", "status:timeout\n"},
        {GR_HOSTILE " crash", "status:signaled\nexitsig:11\n"},
        {"sh -c 'i=0; while [ $i -lt 50 ]; do : > f$i; i=$((i+1)); done'", "status:quota\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *line = gr_strf("%s --box %s --time 2 --quota-files 20 --meta %s -- %s", GR_BOX, box,
                             meta, cases[i].command);
        int status = system(line);
        cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s: status %d", line, status);
        lk_error err;
        char *text = gr_read_file(meta, 4096, NULL, &err);
        cr_assert_not_null(text, "%s", err.msg);
        cr_assert(strncmp(text, cases[i].want, strlen(cases[i].want)) == 0, "%s:\n%s", line,
                  text);
        cr_assert(strstr(text, "time-wall:") && strstr(text, "message:"), "%s", text);
        free(text);
        free(line);
    }
    int status = system(GR_BOX " -- true 2>/dev/null");
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 2, "a box is required");
    free(meta);
    free(box);
}
