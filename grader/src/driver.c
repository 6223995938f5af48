/* Running a lab driver in the sandbox: arguments, limits, the private result descriptor,
   and what the driver reported. Outputs are judged elsewhere (correctness.c), from the files
   the drivers write, never from what a driver says about them. */
#include "driver.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

/* A descriptor number the student code cannot guess in advance. */
static int pick_fd(gr_session *s)
{
    s->fd_state = s->fd_state * 1103515245u + 12345u;
    return 10 + (int)((s->fd_state >> 16) % 190);
}

static void run_limits(const gr_session *s, double wall, long long bin_bytes, int drop,
                       gr_limits *lim)
{
    memset(lim, 0, sizeof *lim);
    lim->wall_s = wall;
    lim->cpu_s = (long)wall + 10; /* CUDA waits by spinning: CPU time follows wall time */
    lim->file_bytes = bin_bytes * 2 + (1LL << 20) > (64LL << 20) ? bin_bytes * 2 + (1LL << 20)
                                                               : (64LL << 20);
    lim->output_bytes = 1LL << 20;
    lim->nproc = 64 * (s->runs > 1 ? s->runs : 1); /* the runs side by side share one user */
    lim->drop = drop;
    lim->run_id = s->run_id;
    lim->jail = &s->jail;
    /* The box holds the output, the ranks' result files and whatever scratch a run needs. */
    lim->quota_files = 256;
    lim->quota_bytes = lim->file_bytes * 2 + (256LL << 20);
}

/* The result descriptor must carry exactly one line: the driver's. Anything else means
   someone else wrote to it. */
static gr_json *read_result(const char *path, char *why, size_t size)
{
    lk_error e;
    size_t len;
    char *text = gr_read_file(path, 1 << 20, &len, &e);
    if (!text) {
        snprintf(why, size, "no result line: %.400s", e.msg);
        return NULL;
    }
    int lines = 0;
    for (size_t i = 0; i < len; i++)
        lines += text[i] == '\n';
    if (len == 0 || lines != 1 || text[len - 1] != '\n' || strlen(text) != len) {
        snprintf(why, size, len == 0 ? "the driver wrote no result line (it stopped early)"
                                     : "the result descriptor holds %d lines instead of the "
                                       "driver's one: result channel tampered with",
                 lines);
        free(text);
        return NULL;
    }
    gr_json *j = gr_json_parse(text, "result line", &e);
    if (!cJSON_IsObject(j))
        snprintf(why, size, "unreadable result line: %.400s", j ? "not an object" : e.msg);
    if (j && !cJSON_IsObject(j)) {
        gr_json_free(j);
        j = NULL;
    }
    free(text);
    return j;
}

/* Under `launcher mpirun` every rank gets its own result file, opened by a shell in the rank
   (mpirun passes no descriptors but 0-2 to its processes): "$LABKIT_RESULT.RANK". The
   grader reads rank 0's. The descriptor is below 10, as the shell's redirections need. */
static int mpirun_argv(const gr_session *s, const gr_limits *lim, int ranks, int fd,
                       const char **argv, char *np, size_t npsize, char *script,
                       size_t script_size)
{
    uid_t uid;
    gid_t gid;
    gr_sandbox_ids(lim, &uid, &gid);
    (void)s;
    snprintf(np, npsize, "%d", ranks);
    snprintf(script, script_size,
             "exec \"$0\" \"$@\" --result-fd %d %d>>\"$LABKIT_RESULT.$OMPI_COMM_WORLD_RANK\"",
             fd, fd);
    int n = 0;
    argv[n++] = "mpirun";
    argv[n++] = "-np";
    argv[n++] = np;
    argv[n++] = "--oversubscribe";
    if (uid == 0)
        argv[n++] = "--allow-run-as-root";
    /* One node, started by fork: Open MPI's default launcher refuses to start when no ssh
       or rsh is installed, even for local ranks (GPU machines and containers often lack it). */
    argv[n++] = "--mca";
    argv[n++] = "plm";
    argv[n++] = "isolated";
    /* Single-copy between ranks uses process_vm_readv, which the sandbox does not allow. */
    argv[n++] = "--mca";
    argv[n++] = "btl_vader_single_copy_mechanism";
    argv[n++] = "none";
    argv[n++] = "/bin/sh";
    argv[n++] = "-c";
    argv[n++] = script;
    return n;
}

void gr_driver_run_free(gr_driver_run *dr)
{
    gr_json_free(dr->res);
    if (dr->box_fd > 0)
        close(dr->box_fd);
    free(dr->out_path);
    free(dr->err_path);
    free(dr->top);
    free(dr->box);
    free(dr->meta);
    memset(dr, 0, sizeof *dr);
}

int gr_run_output(const gr_driver_run *dr, const char *name, long long max_bytes, char *why,
                  size_t size)
{
    /* The run is over and its processes are gone, but what it left is the student's: no
       link is followed, a FIFO cannot block, only a regular file of its own counts. */
    int fd = openat(dr->box_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0) {
        snprintf(why, size, errno == ENOENT ? "the run wrote no output file %s"
                            : errno == ELOOP ? "its output %s is a symbolic link, not a file"
                                             : "its output %s cannot be read: %s",
                 name, strerror(errno));
        return -1;
    }
    const char *bad = fstat(fd, &st) != 0 ? "cannot be examined"
                      : !S_ISREG(st.st_mode) ? "is not a regular file"
                      : st.st_nlink != 1 ? "is a hard link to another file"
                      : max_bytes > 0 && st.st_size > max_bytes ? "is larger than expected"
                                                                : NULL;
    if (bad) {
        snprintf(why, size, "its output %s %s", name, bad);
        close(fd);
        return -1;
    }
    return fd;
}

char *gr_fd_path(int fd)
{
    return gr_strf("/proc/self/fd/%d", fd);
}

/* A fresh box for one run: BASE/TAG/run, the only folder the run may write (GR_BOX_PATH in
   the jail), and BASE/TAG/meta beside it for its stdout, stderr and result line, which the
   run never sees. Nothing an earlier run left under that name survives. */
static int make_box(const gr_session *s, const char *base, const char *tag, gr_driver_run *dr,
                    lk_error *err)
{
    dr->top = gr_strf("%s/%s", base, tag);
    dr->meta = gr_strf("%s/meta", dr->top);
    dr->box = gr_strf("%s/run", dr->top);
    dr->box_fd = -1;
    if (gr_rm_rf(dr->top, err) != 0 || gr_mkdir_p(base, 0755, err) != 0)
        return -1;
    if (mkdir(dr->top, 0755) != 0 || mkdir(dr->meta, 0700) != 0 || mkdir(dr->box, 0755) != 0)
        return lk_fail(err, "%s: cannot make a fresh run folder: %s", dr->top, strerror(errno));
    /* The box belongs to the user the run gets (a student's own, when the grader is root). */
    gr_limits lim = {.drop = s->drop, .run_id = s->run_id};
    uid_t uid;
    gid_t gid;
    gr_sandbox_ids(&lim, &uid, &gid);
    if (gr_chown_tree(dr->box, uid, gid, err) != 0)
        return -1;
    dr->box_fd = open(dr->box, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dr->box_fd < 0)
        return lk_fail(err, "%s: cannot open the run folder: %s", dr->box, strerror(errno));
    return 0;
}

/* The result line of rank 0 under mpirun, from the box (a file the ranks' shells made). */
static gr_json *read_rank_result(const gr_driver_run *dr, const char *tag, char *why, size_t size)
{
    char *name = gr_strf("%s.result.0", tag);
    int fd = gr_run_output(dr, name, 1 << 20, why, size);
    free(name);
    if (fd < 0)
        return NULL;
    char *path = gr_fd_path(fd);
    gr_json *j = read_result(path, why, size);
    free(path);
    close(fd);
    return j;
}

/* Copy what @p from holds (from its start) into the box as "input.bin", a file the run
   reads; the grader writes it, never through a name the run made. */
static int copy_input(const gr_driver_run *dr, int from, lk_error *err)
{
    int to = openat(dr->box_fd, "input.bin", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                    0644);
    if (to < 0)
        return lk_fail(err, "%s/input.bin: cannot create: %s", dr->box, strerror(errno));
    char buf[1 << 16];
    ssize_t got;
    off_t at = 0;
    int rc = 0;
    while (rc == 0 && (got = pread(from, buf, sizeof buf, at)) > 0) {
        at += got;
        if (write(to, buf, (size_t)got) != got)
            rc = lk_fail(err, "%s/input.bin: cannot write: %s", dr->box, strerror(errno));
    }
    if (rc == 0 && got < 0)
        rc = lk_fail(err, "cannot read a run's output to judge it: %s", strerror(errno));
    close(to);
    return rc;
}

int gr_run_driver(gr_session *s, const char *driver, const char *base, const char *const *args,
                  int ranks, double wall, long long bin_bytes, const char *tag,
                  gr_driver_run *dr, lk_error *err)
{
    return gr_run_driver_on(s, driver, base, args, ranks, wall, bin_bytes, tag, -1, dr, err);
}

int gr_run_driver_on(gr_session *s, const char *driver, const char *base,
                     const char *const *args, int ranks, double wall, long long bin_bytes,
                     const char *tag, int input_fd, gr_driver_run *dr, lk_error *err)
{
    memset(dr, 0, sizeof *dr);
    if (make_box(s, base, tag, dr, err) != 0 ||
        (input_fd >= 0 && copy_input(dr, input_fd, err) != 0))
        return -1;
    gr_limits lim;
    run_limits(s, wall, bin_bytes, s->drop, &lim);
    const char *argv[64];
    char np[16], script[256], fdnum[16];
    int n = 0, fd = pick_fd(s);
    if (ranks > 0) {
        fd = 3 + fd % 7;
        n = mpirun_argv(s, &lim, ranks, fd, argv, np, sizeof np, script, sizeof script);
        lim.nproc += 32L * ranks; /* mpirun's and each rank's helper threads */
        lim.inet = 1;
    }
    argv[n++] = driver;
    for (int i = 0; args[i] && n < 56; i++)
        argv[n++] = args[i];
    snprintf(fdnum, sizeof fdnum, "%d", fd);
    if (ranks == 0) {
        argv[n++] = "--result-fd";
        argv[n++] = fdnum;
    }
    argv[n] = NULL;
    dr->out_path = gr_strf("%s/stdout", dr->meta);
    dr->err_path = gr_strf("%s/stderr", dr->meta);
    char *res_path = gr_strf("%s/result", dr->meta);
    /* Ranks write "TAG.result.RANK" in their working folder, the box. */
    char *res_env = gr_strf("LABKIT_RESULT=%s.result", tag);
    /* The driver sees its own build folder (WORK/build/labNN: WORK read-only) and writes in
       its box only. */
    char *home = gr_xstrdup(driver);
    for (int up = 0; up < 2 && strrchr(home, '/'); up++)
        *strrchr(home, '/') = '\0';
    const char *readable[] = {home, NULL};
    /* Huge pages for the drivers' large host buffers: faulting in 4 KB pages took a quarter
       of a 4096 x 4096 round on the H100 host (2.1 s, 1.6 s with this). */
    const char *env[] = {"GLIBC_TUNABLES=glibc.malloc.hugetlb=1", ranks > 0 ? res_env : NULL,
                         NULL};
    gr_cmd cmd = {argv, NULL, dr->out_path, dr->err_path, ranks > 0 ? NULL : res_path, fd, env,
                  NULL, readable, dr->box};
    int rc = gr_sandbox_run(&cmd, &lim, &dr->o, err);
    free(home);
    if (rc == 0)
        dr->res = ranks > 0 ? read_rank_result(dr, tag, dr->why, sizeof dr->why)
                            : read_result(res_path, dr->why, sizeof dr->why);
    free(res_path);
    free(res_env);
    return rc;
}

static void output_head(const gr_driver_run *dr, const char *src_prefix, gr_buf *detail)
{
    static const char *const names[] = {"stderr", "stdout"};
    const char *paths[] = {dr->err_path, dr->out_path};
    for (int i = 0; i < 2; i++) {
        lk_error e;
        char *text = gr_read_file(paths[i], 4u << 20, NULL, &e);
        if (!text || !text[0]) {
            free(text);
            continue;
        }
        char *shown = src_prefix ? gr_replace_all(text, src_prefix, "") : gr_xstrdup(text);
        gr_buf_printf(detail, "first lines of %s:\n", names[i]);
        gr_head(shown, 15, 2048, detail);
        free(shown);
        free(text);
    }
}

int gr_run_failed(const gr_driver_run *dr, const char *src_prefix, char *reason, size_t size,
                  gr_buf *detail)
{
    const char *status = dr->res ? gr_json_str(dr->res, "status") : NULL;
    if (gr_outcome_ok(&dr->o) && dr->res && status && strcmp(status, "ok") == 0)
        return 0;
    if (dr->o.end != GR_END_EXITED) {
        snprintf(reason, size, "%s", dr->o.reason);
    } else if (dr->res && gr_json_str(dr->res, "error")) {
        char *msg = src_prefix ? gr_replace_all(gr_json_str(dr->res, "error"), src_prefix, "")
                               : gr_xstrdup(gr_json_str(dr->res, "error"));
        snprintf(reason, size, "%s%s", strstr(msg, "cuda") || strstr(msg, "CUDA") ?
                 "CUDA error: " : "error: ", msg);
        free(msg);
    } else if (dr->o.status != 0 && status && strcmp(status, "ok") == 0) {
        snprintf(reason, size, "exit status %d after a result line that says ok: a process of "
                 "the run failed (see its output)", dr->o.status);
    } else if (dr->o.status != 0) {
        snprintf(reason, size, "exit status %d without a result (%s)", dr->o.status, dr->why);
    } else if (!dr->res) {
        snprintf(reason, size, "%s", dr->why);
    } else {
        snprintf(reason, size, "the driver reported status '%s'", status ? status : "?");
    }
    output_head(dr, src_prefix, detail);
    return 1;
}

int gr_prepare_dir(const gr_session *s, const char *dir, lk_error *err)
{
    gr_limits lim = {.drop = s->drop};
    uid_t uid;
    gid_t gid;
    gr_sandbox_ids(&lim, &uid, &gid);
    if (gr_mkdir_p(dir, 0755, err) != 0)
        return -1;
    return gr_chown_tree(dir, uid, gid, err);
}


int gr_reference_ranks(const gr_lab_rubric *lab)
{
    return lab->launcher == GR_LAUNCHER_MPIRUN ? 1 : 0;
}

int gr_performance_ranks(const gr_lab_rubric *lab)
{
    return lab->launcher == GR_LAUNCHER_MPIRUN && lab->nranks > 0 ? lab->ranks[lab->nranks - 1]
                                                                  : 0;
}
