#define _GNU_SOURCE /* close_range, pipe2, setgroups, prctl */
#include "sandbox.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "labkit/timing.h"
#include "util.h"

volatile sig_atomic_t gr_stop_requested = 0;

/* Environment variables passed through to commands; everything else is dropped, so that
   the outer make's jobserver flags or a user's odd settings cannot change a build. */
static const char *const pass_env[] = {"PATH", "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER",
                                       "NVIDIA_VISIBLE_DEVICES", "LD_LIBRARY_PATH", "CUDA_HOME",
                                       NULL};

int gr_sandbox_drops(const gr_limits *lim)
{
    return lim->drop && geteuid() == 0;
}

void gr_sandbox_ids(const gr_limits *lim, uid_t *uid, gid_t *gid)
{
    if (gr_sandbox_drops(lim)) {
        *uid = lim->run_id ? (uid_t)lim->run_id : GR_UNPRIVILEGED_ID;
        *gid = lim->run_id ? (gid_t)lim->run_id : GR_UNPRIVILEGED_ID;
    } else {
        *uid = getuid();
        *gid = getgid();
    }
}

long gr_count_tasks(uid_t uid)
{
    DIR *d = opendir("/proc");
    if (!d)
        return 0;
    long total = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        char path[300], line[256];
        snprintf(path, sizeof path, "/proc/%s/status", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        long threads = 1;
        int mine = 0;
        while (fgets(line, sizeof line, f)) {
            unsigned long real;
            if (sscanf(line, "Uid: %lu", &real) == 1)
                mine = (uid_t)real == uid;
            else
                sscanf(line, "Threads: %ld", &threads);
        }
        fclose(f);
        if (mine)
            total += threads;
    }
    closedir(d);
    return total;
}

/* The program's path: argv[0] itself when it has a '/', else the first match in PATH. */
static char *resolve_program(const char *name)
{
    if (strchr(name, '/'))
        return access(name, X_OK) == 0 ? gr_xstrdup(name) : NULL;
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/local/bin:/usr/bin:/bin";
    char *copy = gr_xstrdup(path), *save = NULL;
    for (char *dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
        char *cand = gr_strf("%s/%s", *dir ? dir : ".", name);
        struct stat st;
        if (stat(cand, &st) == 0 && S_ISREG(st.st_mode) && access(cand, X_OK) == 0) {
            free(copy);
            return cand;
        }
        free(cand);
    }
    free(copy);
    return NULL;
}

static int jailed(const gr_limits *lim)
{
    return lim->jail && lim->jail->bwrap;
}

static char **build_env(const gr_cmd *cmd, const gr_limits *lim)
{
    int n = 0, cap = 16;
    char **env = gr_xmalloc(cap * sizeof *env);
    for (const char *const *name = pass_env; *name; name++) {
        const char *v = getenv(*name);
        if (v)
            env[n++] = gr_strf("%s=%s", *name, v);
    }
    env[n++] = gr_strf("HOME=%s", cmd->box ? (jailed(lim) ? GR_BOX_PATH : cmd->box)
                                  : cmd->cwd ? cmd->cwd : "/tmp");
    env[n++] = gr_xstrdup("LC_ALL=C");
    for (const char *const *e = cmd->env; e && *e; e++) {
        const char *eq = strchr(*e, '=');
        size_t klen = eq ? (size_t)(eq - *e) + 1 : strlen(*e);
        for (int i = 0; i < n; i++)
            if (strncmp(env[i], *e, klen) == 0) {
                free(env[i]);
                env[i] = env[--n];
                break;
            }
        if (n + 2 > cap)
            env = gr_xrealloc(env, (cap *= 2) * sizeof *env);
        env[n++] = gr_xstrdup(*e);
    }
    env[n] = NULL;
    return env;
}

static void free_env(char **env)
{
    for (char **e = env; *e; e++)
        free(*e);
    free(env);
}

/* What the child reports through the exec pipe when it cannot start the program. */
typedef struct start_failure {
    int stage; /* 0 chdir, 1 exec, 2 setuid, 3 descriptors */
    int err;
} start_failure;

static void child_fail(int pipe_fd, int stage)
{
    start_failure f = {stage, errno};
    ssize_t w = write(pipe_fd, &f, sizeof f);
    (void)w;
    _exit(127);
}

static void mark_cloexec_from(int first)
{
#ifdef CLOSE_RANGE_CLOEXEC
    if (close_range((unsigned)first, ~0U, CLOSE_RANGE_CLOEXEC) == 0)
        return;
#endif
    long max = sysconf(_SC_OPEN_MAX);
    if (max < 0 || max > 65536)
        max = 65536;
    for (int fd = first; fd < max; fd++)
        fcntl(fd, F_SETFD, FD_CLOEXEC);
}

static void set_limit(int resource, rlim_t soft, rlim_t hard)
{
    struct rlimit old, rl = {soft, hard};
    if (getrlimit(resource, &old) == 0 && geteuid() != 0) {
        /* Without privileges a limit can only go down. */
        if (old.rlim_max != RLIM_INFINITY && (hard == RLIM_INFINITY || hard > old.rlim_max))
            rl.rlim_max = old.rlim_max;
        if (rl.rlim_cur > rl.rlim_max)
            rl.rlim_cur = rl.rlim_max;
    }
    setrlimit(resource, &rl);
}

static void run_child(const gr_cmd *cmd, const gr_limits *lim, const char *prog, char **env,
                      int in, int out, int errfd, int res, int pipe_fd, pid_t parent, long nproc,
                      int info_fd)
{
    setpgid(0, 0);
    /* bwrap reads the seccomp filter from a descriptor: a description of its own (offset
       0), opened before the result descriptor takes its number. */
    int filter = -1;
    const int filter_fd = jailed(lim) ? lim->inet ? lim->jail->seccomp_inet_fd
                                                  : lim->jail->seccomp_fd
                                      : -1;
    if (filter_fd >= 0) {
        char self[64];
        snprintf(self, sizeof self, "/proc/self/fd/%d", filter_fd);
        if ((filter = open(self, O_RDONLY | O_CLOEXEC)) < 0)
            child_fail(pipe_fd, 3);
    }
    /* The result descriptor's number is chosen at random: move what sits there out of its way. */
    int *mine[] = {&pipe_fd, &info_fd, &filter};
    for (size_t i = 0; res >= 0 && i < sizeof mine / sizeof mine[0]; i++)
        if (*mine[i] >= 0 && *mine[i] == cmd->result_fd)
            *mine[i] = fcntl(*mine[i], F_DUPFD_CLOEXEC, cmd->result_fd + 1);
    if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(errfd, 2) < 0)
        child_fail(pipe_fd, 3);
    if (res >= 0) {
        if (res == cmd->result_fd) {
            if (fcntl(res, F_SETFD, 0) != 0)
                child_fail(pipe_fd, 3);
        } else if (dup2(res, cmd->result_fd) < 0) {
            child_fail(pipe_fd, 3);
        }
    }
    mark_cloexec_from(3);
    if (res >= 0)
        fcntl(cmd->result_fd, F_SETFD, 0);

    set_limit(RLIMIT_CORE, 0, 0);
    if (lim->cpu_s > 0)
        set_limit(RLIMIT_CPU, (rlim_t)lim->cpu_s, (rlim_t)lim->cpu_s + 5);
    if (lim->file_bytes > 0)
        set_limit(RLIMIT_FSIZE, (rlim_t)lim->file_bytes, (rlim_t)lim->file_bytes);
    if (lim->as_bytes > 0)
        set_limit(RLIMIT_AS, (rlim_t)lim->as_bytes, (rlim_t)lim->as_bytes);
    if (lim->nproc > 0)
        set_limit(RLIMIT_NPROC, (rlim_t)nproc, (rlim_t)nproc);

    if (gr_sandbox_drops(lim)) {
        uid_t uid;
        gid_t gid;
        gr_sandbox_ids(lim, &uid, &gid);
        if (setgroups(0, NULL) != 0 || setgid(gid) != 0 || setuid(uid) != 0)
            child_fail(pipe_fd, 2);
    }
    /* Set after the switch of user, which clears it; the check closes the race with a grader
       that died before the call. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(127);

    static const int reset[] = {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGXFSZ, SIGXCPU,
                                SIGCHLD};
    for (size_t i = 0; i < sizeof reset / sizeof reset[0]; i++)
        signal(reset[i], SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);

    const char *cwd = cmd->box ? cmd->box : cmd->cwd;
    if (cwd && chdir(cwd) != 0)
        child_fail(pipe_fd, 0);
    if (!jailed(lim)) {
        execve(prog, (char *const *)cmd->argv, env);
        child_fail(pipe_fd, 1);
    }
    if ((info_fd >= 0 && fcntl(info_fd, F_SETFD, 0) != 0) ||
        (filter >= 0 && fcntl(filter, F_SETFD, 0) != 0))
        child_fail(pipe_fd, 3);
    char **argv = gr_jail_argv(lim->jail, prog, cmd->argv + 1, cmd->box ? GR_BOX_PATH : cmd->cwd,
                               cmd->writable, cmd->readable, cmd->box, filter, info_fd);
    execve(lim->jail->bwrap, argv, env);
    child_fail(pipe_fd, 1);
}

static long long output_size(int out, int errfd)
{
    struct stat st;
    long long total = 0;
    if (fstat(out, &st) == 0 && S_ISREG(st.st_mode))
        total += st.st_size;
    if (errfd != out && fstat(errfd, &st) == 0 && S_ISREG(st.st_mode))
        total += st.st_size;
    return total;
}

static void kill_group(pid_t pgid)
{
    kill(-pgid, SIGKILL);
}

/* Kill what is left of the group and reap it: as a subreaper the grader inherits the
   group's orphans, so waiting on the group id collects every one of them. */
/* A jailed command's init runs in a session and pid namespace of its own: killing it
   ends the namespace and everything in it; as a subreaper the grader then reaps it. */
static void reap_jail(int info_fd)
{
    char info[512];
    ssize_t got = info_fd >= 0 ? read(info_fd, info, sizeof info - 1) : -1;
    info[got > 0 ? got : 0] = '\0';
    int init = gr_jail_child_pid(info);
    for (int round = 0; init > 0 && round < 500; round++) {
        if (kill(init, SIGKILL) != 0 && errno == ESRCH)
            break;
        if (waitpid(init, NULL, __WALL | WNOHANG) == init)
            break;
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    while (waitpid(-1, NULL, __WALL | WNOHANG) > 0)
        ;
}

static void reap_group(pid_t pgid)
{
    /* Never block: a process that escaped the kill must not hang the grader (5 s at most). */
    for (int round = 0; round < 500; round++) {
        kill_group(pgid);
        while (waitpid(-pgid, NULL, __WALL | WNOHANG) > 0)
            ;
        if (kill(-pgid, 0) != 0 && errno == ESRCH)
            return;
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

static const char *human_bytes(long long n, char *buf, size_t size)
{
    if (n >= (1LL << 30) && n % (1LL << 30) == 0)
        snprintf(buf, size, "%lld GiB", n >> 30);
    else if (n >= (1LL << 20) && n % (1LL << 20) == 0)
        snprintf(buf, size, "%lld MiB", n >> 20);
    else if (n >= 1024 && n % 1024 == 0)
        snprintf(buf, size, "%lld KiB", n >> 10);
    else
        snprintf(buf, size, "%lld bytes", n);
    return buf;
}

static void describe(const gr_limits *lim, gr_outcome *o, const char *prog)
{
    char b[64];
    switch (o->end) {
    case GR_END_EXITED:
        if (o->status == 0)
            snprintf(o->reason, sizeof o->reason, "exited normally");
        else
            snprintf(o->reason, sizeof o->reason, "exit status %d", o->status);
        break;
    case GR_END_SIGNALED:
        if (o->status == SIGXCPU)
            snprintf(o->reason, sizeof o->reason, "CPU time limit of %ld s exceeded (SIGXCPU)",
                     lim->cpu_s);
        else if (o->status == SIGXFSZ)
            snprintf(o->reason, sizeof o->reason,
                     "file size limit of %s exceeded (SIGXFSZ): it wrote a file too large",
                     human_bytes(lim->file_bytes, b, sizeof b));
        else if (o->status == SIGKILL)
            snprintf(o->reason, sizeof o->reason,
                     "killed by SIGKILL (the CPU time limit, or the system ran out of memory)");
        else
            snprintf(o->reason, sizeof o->reason, "crashed: %s (%s)", gr_signal_name(o->status),
                     strsignal(o->status));
        break;
    case GR_END_TIMEOUT:
        snprintf(o->reason, sizeof o->reason,
                 "still running after the %g s time limit (a hang or an endless loop?): "
                 "its process group was killed", lim->wall_s);
        break;
    case GR_END_OUTPUT_CAP:
        snprintf(o->reason, sizeof o->reason,
                 "wrote more than %s to stdout/stderr: its process group was killed, the "
                 "output was cut", human_bytes(lim->output_bytes, b, sizeof b));
        break;
    case GR_END_QUOTA:
        snprintf(o->reason, sizeof o->reason,
                 "its run folder held more than %ld files or %s: its process group was killed",
                 lim->quota_files, human_bytes(lim->quota_bytes, b, sizeof b));
        break;
    case GR_END_NOT_STARTED: break; /* filled by the caller */
    case GR_END_INTERRUPTED:
        snprintf(o->reason, sizeof o->reason, "the grader was interrupted: %s was killed", prog);
        break;
    }
}

int gr_outcome_ok(const gr_outcome *o)
{
    return o->end == GR_END_EXITED && o->status == 0;
}

/* ---- the box's quota: a bounded walk that never follows a link -------------------------- */

static long quota_entries;
static long long quota_used;
static const gr_limits *quota_lim;

static int count_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)path, (void)flag, (void)ftw;
    quota_entries++;
    quota_used += (long long)st->st_blocks * 512;
    return (quota_lim->quota_files > 0 && quota_entries > quota_lim->quota_files) ||
           (quota_lim->quota_bytes > 0 && quota_used > quota_lim->quota_bytes);
}

/* Does @p box hold more entries or bytes than @p lim allows? The walk stops at the first
   entry past the limit, so a box of a million files costs no more than the limit. */
static int over_quota(const char *box, const gr_limits *lim)
{
    if (lim->quota_files <= 0 && lim->quota_bytes <= 0)
        return 0;
    quota_entries = -1; /* the box itself */
    quota_used = 0;
    quota_lim = lim;
    return nftw(box, count_entry, 8, FTW_PHYS | FTW_MOUNT) > 0;
}

int gr_open_for_writing(const char *path, lk_error *err)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
    struct stat st;
    if (fd < 0)
        return lk_fail(err, "%s: cannot open an output file of the command: %s", path,
                       errno == ELOOP ? "it is a symbolic link" : strerror(errno));
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return lk_fail(err, "%s: an output file of the command is not a regular file", path);
    }
    return fd;
}

int gr_command_log = -1;
char gr_console_prefix[16] = "";
double gr_command_log_t0;

/* One line per command in the session's log: where grading time goes. A single write on an
   O_APPEND descriptor, so the lines of build jobs running beside the grader do not mix. */
static void log_command(const gr_cmd *cmd, const gr_outcome *out)
{
    if (gr_command_log < 0)
        return;
    char line[1024];
    int n = snprintf(line, sizeof line, "%9.3f\t%9.3f\t%s\t%s\t",
                     lk_wall_seconds() - gr_command_log_t0, out->wall_s,
                     out->end == GR_END_EXITED && out->status == 0 ? "ok" : out->reason,
                     cmd->box ? cmd->box : cmd->cwd ? cmd->cwd : ".");
    for (int i = 0; cmd->argv[i] && n < (int)sizeof line - 2; i++)
        n += snprintf(line + n, sizeof line - (size_t)n, "%s%s", i ? " " : "", cmd->argv[i]);
    if (n > (int)sizeof line - 2)
        n = (int)sizeof line - 2;
    line[n++] = '\n';
    if (write(gr_command_log, line, (size_t)n) < 0) { /* best effort: a log, not a result */ }
}

/* The grader's side of one command: its descriptors and its process. */
typedef struct box_run {
    const gr_cmd *cmd;
    const gr_limits *lim;
    gr_outcome *out;
    char *prog;
    int in, fo, fe, fr;   /* stdin, stdout, stderr, result descriptor */
    int pfd[2], info[2];  /* the exec pipe (start failures), bwrap's info pipe */
    int pidfd;
    pid_t pid;
    int status;
    double t0;
} box_run;

/* Open what the command gets: /dev/null, its output files (never through a link or into a
   FIFO), the pipes. 0, or -1 with @p err. */
static int open_streams(box_run *b, lk_error *err)
{
    const gr_cmd *cmd = b->cmd;
    b->in = open("/dev/null", O_RDONLY | O_CLOEXEC);
    b->fo = cmd->out_path ? gr_open_for_writing(cmd->out_path, err)
                          : open("/dev/null", O_WRONLY | O_CLOEXEC);
    b->fe = cmd->err_path && b->fo >= 0 ? gr_open_for_writing(cmd->err_path, err) : b->fo;
    b->fr = cmd->result_path && b->fe >= 0 ? gr_open_for_writing(cmd->result_path, err) : -1;
    if (b->fo < 0 || b->fe < 0 || (cmd->result_path && b->fr < 0))
        return -1; /* err says which file and why */
    if (b->in < 0)
        return lk_fail(err, "cannot open /dev/null: %s", strerror(errno));
    if (cmd->result_path && cmd->result_fd < 3)
        return lk_fail(err, "result descriptor %d: use 3 or above (0-2 are the standard "
                       "streams)", cmd->result_fd);
    if (pipe2(b->pfd, O_CLOEXEC) != 0 ||
        (jailed(b->lim) && pipe2(b->info, O_CLOEXEC | O_NONBLOCK) != 0))
        return lk_fail(err, "cannot create a pipe: %s", strerror(errno));
    return 0;
}

/* Fork the command; 1 when it runs, 0 when it could not start (out->reason), -1 with @p err. */
static int start(box_run *b, lk_error *err)
{
    const gr_limits *lim = b->lim;
    uid_t uid;
    gid_t gid;
    gr_sandbox_ids(lim, &uid, &gid);
    long nproc = lim->nproc > 0 ? gr_count_tasks(uid) + lim->nproc : 0;
    char **env = build_env(b->cmd, lim);
    pid_t parent = getpid();
    b->t0 = lk_wall_seconds();
    fflush(NULL);
    b->pid = fork();
    if (b->pid < 0) {
        free_env(env);
        return lk_fail(err, "cannot start a process: %s: too many processes on this machine?",
                       strerror(errno));
    }
    if (b->pid == 0)
        run_child(b->cmd, lim, b->prog, env, b->in, b->fo, b->fe, b->fr, b->pfd[1], parent,
                  nproc, b->info[1]);
    setpgid(b->pid, b->pid); /* also done by the child: whichever runs first wins the race */
    b->out->pgid = (int)b->pid;
    free_env(env);
    close(b->pfd[1]);
    b->pfd[1] = -1;
    if (b->info[1] >= 0)
        close(b->info[1]);
    b->info[1] = -1;
    start_failure sf;
    ssize_t got;
    while ((got = read(b->pfd[0], &sf, sizeof sf)) < 0 && errno == EINTR)
        ;
    if (got != (ssize_t)sizeof sf)
        return 1;
    waitpid(b->pid, &b->status, 0);
    reap_group(b->pid);
    reap_jail(b->info[0]);
    b->out->end = GR_END_NOT_STARTED;
    static const char *const stages[] = {"enter the working folder", "execute",
                                         "switch to the unprivileged user",
                                         "set up its descriptors"};
    snprintf(b->out->reason, sizeof b->out->reason, "could not %s %s as uid %d: %s",
             stages[sf.stage], sf.stage == 0 ? (b->cmd->box ? b->cmd->box : b->cmd->cwd)
                               : sf.stage == 1 && jailed(lim) ? lim->jail->bwrap : b->prog,
             (int)uid, strerror(sf.err));
    b->out->wall_s = lk_wall_seconds() - b->t0;
    return 0;
}

/* Why the running command must be stopped now, or GR_END_EXITED while it may go on. */
static gr_end must_stop(const box_run *b, double now, double *next_quota_check)
{
    const gr_limits *lim = b->lim;
    if (gr_stop_requested)
        return GR_END_INTERRUPTED;
    if (lim->wall_s > 0 && now - b->t0 >= lim->wall_s)
        return GR_END_TIMEOUT;
    if (lim->output_bytes > 0 && output_size(b->fo, b->fe) > lim->output_bytes)
        return GR_END_OUTPUT_CAP;
    if (b->cmd->box && now >= *next_quota_check) {
        *next_quota_check = now + 0.25;
        if (over_quota(b->cmd->box, lim))
            return GR_END_QUOTA;
    }
    return GR_END_EXITED;
}

/* Wait for the command under its limits; its wall time is measured here. The wall time is
   the trusted measure of a timed run: a pidfd wakes the grader the moment it exits. */
static void watch(box_run *b)
{
    b->pidfd = (int)syscall(SYS_pidfd_open, b->pid, 0);
    long sleep_us = 500;
    double next_quota_check = b->t0;
    for (;;) {
        pid_t w = waitpid(b->pid, &b->status, WNOHANG);
        if (w == b->pid)
            break;
        if (w < 0 && errno != EINTR) {
            b->out->end = GR_END_INTERRUPTED;
            break;
        }
        gr_end why = must_stop(b, lk_wall_seconds(), &next_quota_check);
        if (why != GR_END_EXITED) {
            kill_group(b->pid);
            while (waitpid(b->pid, &b->status, 0) < 0 && errno == EINTR)
                ;
            b->out->end = why;
            break;
        }
        if (b->pidfd >= 0) {
            struct pollfd p = {b->pidfd, POLLIN, 0};
            poll(&p, 1, (int)(sleep_us / 1000) + 1);
        } else {
            struct timespec ts = {0, sleep_us * 1000};
            nanosleep(&ts, NULL);
        }
        if (sleep_us < 20000)
            sleep_us *= 2;
    }
    b->out->wall_s = lk_wall_seconds() - b->t0;
    if (b->out->end == GR_END_EXITED && b->cmd->box && over_quota(b->cmd->box, b->lim))
        b->out->end = GR_END_QUOTA; /* it filled the box between two looks */
    reap_group(b->pid);
    reap_jail(b->info[0]);
}

/* How it ended, from its status and what it wrote; a flood is cut to the cap. */
static void classify(box_run *b)
{
    const gr_limits *lim = b->lim;
    gr_outcome *out = b->out;
    const int status = b->status;
    out->output_bytes = output_size(b->fo, b->fe);
    if (out->end == GR_END_EXITED) {
        if (lim->output_bytes > 0 && out->output_bytes > lim->output_bytes)
            out->end = GR_END_OUTPUT_CAP; /* it wrote faster than the grader looked */
        else if (WIFSIGNALED(status))
            out->end = GR_END_SIGNALED, out->status = WTERMSIG(status);
        else if (jailed(lim) && WEXITSTATUS(status) > 128 && WEXITSTATUS(status) < 128 + NSIG)
            /* bwrap passes a signal death on as the shell does: exit status 128 + signal. */
            out->end = GR_END_SIGNALED, out->status = WEXITSTATUS(status) - 128;
        else
            out->status = WEXITSTATUS(status);
    }
    if (lim->output_bytes > 0 && out->output_bytes > lim->output_bytes) {
        /* Keep the head only: reports read the first lines, the disk keeps no flood. */
        const int fds[2] = {b->fo, b->fe != b->fo ? b->fe : -1};
        for (int i = 0; i < 2; i++) {
            struct stat st;
            if (fds[i] >= 0 && fstat(fds[i], &st) == 0 && S_ISREG(st.st_mode) &&
                st.st_size > lim->output_bytes)
                if (ftruncate(fds[i], lim->output_bytes) != 0) { /* best effort */ }
        }
    }
    describe(lim, out, b->cmd->argv[0]);
    log_command(b->cmd, out);
}

static void close_all(box_run *b)
{
    int *fds[] = {&b->in, &b->fr, &b->pidfd, &b->pfd[0], &b->pfd[1], &b->info[0], &b->info[1]};
    for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++)
        if (*fds[i] >= 0)
            close(*fds[i]);
    if (b->fe >= 0 && b->fe != b->fo)
        close(b->fe);
    if (b->fo >= 0)
        close(b->fo);
    free(b->prog);
}

int gr_sandbox_run(const gr_cmd *cmd, const gr_limits *lim, gr_outcome *out, lk_error *err)
{
    /* Per process: a fork (a GPU worker) does not inherit the setting, and without it the
       jail's orphans went to the parent grader, and each reap waited out its 5 s. */
    static pid_t subreaper;
    if (subreaper != getpid()) {
        prctl(PR_SET_CHILD_SUBREAPER, 1);
        subreaper = getpid();
    }
    memset(out, 0, sizeof *out);
    box_run b = {cmd, lim, out, resolve_program(cmd->argv[0]), -1, -1, -1, -1,
                 {-1, -1}, {-1, -1}, -1, 0, 0, 0};
    if (!b.prog) {
        out->end = GR_END_NOT_STARTED;
        snprintf(out->reason, sizeof out->reason, "could not start '%s': not found or not "
                 "executable (is it installed and on PATH?)", cmd->argv[0]);
        return 0;
    }
    int rc = open_streams(&b, err);
    int started = rc == 0 ? start(&b, err) : -1;
    if (started == 1) {
        watch(&b);
        classify(&b);
    }
    rc = started < 0 ? -1 : 0;
    close_all(&b);
    return rc;
}

static int open_lock(const char *path, lk_error *err)
{
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0)
        return lk_fail(err, "%s: cannot open the GPU lock file: %s: give another path with "
                            "--gpu-lock", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) == 0 && st.st_uid == geteuid())
        fchmod(fd, 0666); /* other users' graders must be able to take it too */
    return fd;
}

int gr_gpu_trylock(const char *path, lk_error *err)
{
    int fd = open_lock(path, err);
    if (fd < 0)
        return -1;
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        close(fd);
        return lk_fail(err, "%s: %s", path,
                       e == EWOULDBLOCK ? "held by another grader run or make bench" : strerror(e));
    }
    return fd;
}

int gr_take_lock(const char *path, int op, const char *what, double timeout_s,
                 const char *waiting, lk_error *err)
{
    int fd = open_lock(path, err);
    if (fd < 0)
        return -1;
    if (flock(fd, op | LOCK_NB) == 0)
        return fd;
    printf("%s%s (%s)\n", gr_console_prefix, waiting, path);
    fflush(stdout);
    /* Every wait has a deadline: poll rather than block, so that neither a holder that never
       lets go nor a signal can keep the grader here. */
    const double t0 = lk_wall_seconds();
    while (flock(fd, op | LOCK_NB) != 0) {
        const int e = errno;
        const int late = timeout_s > 0 && lk_wall_seconds() - t0 >= timeout_s;
        if ((e != EWOULDBLOCK && e != EINTR) || gr_stop_requested || late) {
            close(fd);
            return lk_fail(err, "%s: cannot take the %s lock: %s", path, what,
                           gr_stop_requested ? "interrupted"
                           : late ? "another process held it past the deadline (--lock-timeout)"
                                  : strerror(e));
        }
        struct timespec nap = {0, 200 * 1000 * 1000};
        nanosleep(&nap, NULL);
    }
    return fd;
}

int gr_gpu_lock(const char *path, double timeout_s, lk_error *err)
{
    return gr_take_lock(path, LOCK_EX, "GPU", timeout_s,
                     "waiting for the GPU lock: another grader run or make bench is using the "
                     "GPU", err);
}

int gr_host_lock(const char *path, int alone, double timeout_s, lk_error *err)
{
    const char *why = alone ? "timing again with the machine to itself: waiting for the other "
                              "GPUs' graders to end their GPU stage"
                            : "waiting while another GPU's grader times with the machine to "
                              "itself";
    /* The gate, PATH.gate, first: a grader waiting to time alone holds it, so the others
       take no new shared hold and it waits for their current GPU stage only (shared holds
       taken back to back would keep it waiting for ever). */
    char *gate_path = gr_strf("%s.gate", path);
    const int op = alone ? LOCK_EX : LOCK_SH;
    int gate = gr_take_lock(gate_path, op, "host", timeout_s, why, err);
    free(gate_path);
    if (gate < 0)
        return -1;
    int fd = gr_take_lock(path, op, "host", timeout_s, why, err);
    gr_gpu_unlock(gate);
    return fd;
}

void gr_gpu_unlock(int fd)
{
    if (fd >= 0) {
        flock(fd, LOCK_UN);
        close(fd);
    }
}
