#define _GNU_SOURCE /* pipe2, setgroups */
#include "env.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "labkit/cuda_check.h"
#include "labkit/md5.h"
#include "sandbox.h"
#include "util.h"

#ifndef GR_NVCC
#define GR_NVCC "nvcc"
#endif

/* Copy @p src into @p dst, cut to fit. */
static void set_text(char *dst, size_t size, const char *src)
{
    size_t n = strlen(src);
    if (n >= size)
        n = size - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

/* First line of a trusted command's output, or "" (popen: these are the kit's own tools). */
static void first_line_of(const char *command, char *out, size_t size, const char *pick)
{
    out[0] = '\0';
    FILE *p = popen(command, "r");
    if (!p)
        return;
    char line[512];
    while (fgets(line, sizeof line, p)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (!pick || strstr(line, pick)) {
            set_text(out, size, line);
            if (pick)
                break;
            if (out[0])
                break;
        }
    }
    pclose(p);
}

static char *shell_quote(const char *s)
{
    gr_buf b = {0};
    gr_buf_puts(&b, "'");
    for (const char *p = s; *p; p++) {
        if (*p == '\'')
            gr_buf_puts(&b, "'\\''");
        else {
            char one[2] = {*p, 0};
            gr_buf_puts(&b, one);
        }
    }
    gr_buf_puts(&b, "'");
    return gr_buf_take(&b);
}

/* Probe the GPU in a child, so that CUDA is never initialised in the grader (children it
   forks later would inherit a broken context). A probe that found a GPU stays, idle, with
   its context until gr_env_release: while one context lives, each new CUDA process starts
   in about half the time (0.31 s against 0.17 s on an H100 in persistence mode), and the
   session starts hundreds of them. */
void gr_env_probe_gpu(int drop, gr_env *env)
{
    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC) != 0) {
        snprintf(env->gpu_reason, sizeof env->gpu_reason, "cannot probe: %s", strerror(errno));
        return;
    }
    fflush(NULL);
    const pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(env->gpu_reason, sizeof env->gpu_reason, "cannot probe: %s", strerror(errno));
        close(pfd[0]);
        close(pfd[1]);
        return;
    }
    if (pid == 0) {
        /* Only the answer's pipe: the grader's other files (the OUT folder's lock) must not
           stay open in a child that lives as long as the session. */
        for (int fd = 3; fd < 1024; fd++)
            if (fd != pfd[1])
                close(fd);
        if (drop && geteuid() == 0 &&
            (setgroups(0, NULL) != 0 || setgid(GR_UNPRIVILEGED_ID) != 0 ||
             setuid(GR_UNPRIVILEGED_ID) != 0))
            _exit(2);
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* after the switch of user, which clears it */
        if (getppid() != parent)
            _exit(0);
        char reason[512], desc[512];
        lk_error err;
        char msg[1100];
        if (!lk_gpu_available(reason, sizeof reason))
            snprintf(msg, sizeof msg, "0%s", reason);
        else if (lk_gpu_describe(desc, sizeof desc, &err) != 0)
            snprintf(msg, sizeof msg, "0%s", err.msg);
        else
            snprintf(msg, sizeof msg, "1%s", desc);
        ssize_t w = write(pfd[1], msg, strlen(msg));
        (void)w;
        close(pfd[1]);
        if (msg[0] == '1')
            for (;;)
                pause(); /* until gr_env_release, or the grader's end */
        _exit(0);
    }
    close(pfd[1]);
    char msg[1100];
    size_t len = 0;
    struct pollfd pf = {pfd[0], POLLIN, 0};
    /* A wedged driver can hang in initialisation: give up after a minute. */
    while (len + 1 < sizeof msg && poll(&pf, 1, 60000) > 0) {
        ssize_t n = read(pfd[0], msg + len, sizeof msg - 1 - len);
        if (n <= 0)
            break;
        len += (size_t)n;
    }
    msg[len] = '\0';
    close(pfd[0]);
    if (!(len > 0 && msg[0] == '1')) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
    }
    if (len > 0 && msg[0] == '1') {
        env->gpu_keeper = pid;
        env->gpu_ok = 1;
        set_text(env->gpu, sizeof env->gpu, msg + 1);
    } else if (len > 0) {
        /* The kit's own reason, e.g. "no GPU on this machine", as it is. */
        set_text(env->gpu_reason, sizeof env->gpu_reason, msg + 1);
    } else {
        snprintf(env->gpu_reason, sizeof env->gpu_reason,
                 "the GPU probe gave no answer (as uid %d): is the NVIDIA driver wedged?",
                 drop && geteuid() == 0 ? GR_UNPRIVILEGED_ID : (int)getuid());
    }
}

void gr_env_release(gr_env *env)
{
    if (env->gpu_keeper > 0) {
        kill(env->gpu_keeper, SIGKILL);
        waitpid(env->gpu_keeper, NULL, 0);
    }
    env->gpu_keeper = 0;
}

void gr_env_probe(const char *kit, int want_gpu, int drop, gr_env *env)
{
    memset(env, 0, sizeof *env);
    struct utsname u;
    if (uname(&u) == 0) {
        char *host = gr_strf("%s (%s %s %s)", u.nodename, u.sysname, u.release, u.machine);
        set_text(env->host, sizeof env->host, host);
        free(host);
    }
    gr_utc_now(env->date, sizeof env->date);
    struct passwd *pw = getpwuid(geteuid());
    char *user = gr_strf("%s (uid %d)%s", pw ? pw->pw_name : "?", (int)geteuid(),
                         drop && geteuid() == 0 ? "; student code runs as nobody (uid 65534)" : "");
    set_text(env->user, sizeof env->user, user);
    free(user);
    first_line_of(GR_NVCC " --version 2>/dev/null", env->cuda, sizeof env->cuda, "release");
    if (!env->cuda[0])
        snprintf(env->cuda, sizeof env->cuda, "unknown (%s --version failed)", GR_NVCC);
    char *q = shell_quote(kit);
    char *cmd = gr_strf("git -C %s describe --always --dirty --tags 2>/dev/null", q);
    first_line_of(cmd, env->kit_version, sizeof env->kit_version, NULL);
    free(cmd);
    free(q);
    if (!env->kit_version[0]) {
        /* A student distribution is no git checkout: make-handout.sh writes KIT_VERSION. */
        char *path = gr_strf("%s/KIT_VERSION", kit);
        lk_error ignored;
        char *text = gr_read_file(path, 4096, NULL, &ignored);
        if (text) {
            text[strcspn(text, "\r\n")] = '\0';
            set_text(env->kit_version, sizeof env->kit_version, text);
        }
        free(text);
        free(path);
    }
    if (!env->kit_version[0])
        snprintf(env->kit_version, sizeof env->kit_version,
                 "unknown (not a git checkout, no KIT_VERSION)");
    if (want_gpu)
        gr_env_probe_gpu(drop, env);
    else
        snprintf(env->gpu_reason, sizeof env->gpu_reason, "GPU stages disabled (--no-gpu)");
}

char *gr_rubric_lab_text(const gr_lab_rubric *lab)
{
    static const char *const policies[] = {"hash course-text", "hash binary", "tolerance"};
    gr_buf b = {0};
    gr_buf_printf(&b, "lab %s\ndriver %s\n", lab->name, lab->driver);
    for (int i = 0; i < lab->nfiles; i++)
        gr_buf_printf(&b, "student-file %s %s\n", lab->files[i].name, lab->files[i].var);
    for (int i = 0; i < lab->nentries; i++)
        gr_buf_printf(&b, "entry %s\n", lab->entries[i]);
    gr_buf_printf(&b, "policy %s", policies[lab->policy]);
    if (lab->policy == GR_POLICY_TOLERANCE)
        gr_buf_printf(&b, " %.17g", lab->tolerance);
    gr_buf_puts(&b, "\n");
    for (int i = 0; i < lab->ndatasets; i++)
        gr_buf_printf(&b, "%s %s %d\n", lab->datasets[i].hidden ? "hidden" : "public",
                      lab->datasets[i].name, lab->datasets[i].steps);
    gr_buf_printf(&b, "performance %s %d serial-steps %d\n", lab->perf.name, lab->perf.steps,
                  lab->serial_steps);
    gr_buf_printf(&b, "points correctness %.17g performance %.17g\ncredit %s\n",
                  lab->points_correct, lab->points_perf, lab->credit_all ? "all" : "proportional");
    gr_buf_printf(&b, "curve full %.17g zero %.17g\nmin-speedup %.17g\n", lab->curve_full,
                  lab->curve_zero, lab->min_speedup);
    if (lab->baseline[0])
        gr_buf_printf(&b, "baseline %s steps %d\n", lab->baseline, lab->baseline_steps);
    gr_buf_printf(&b, "rounds %d extra %d\nrepeat %d\n", lab->rounds, lab->extra_rounds,
                  lab->repeat);
    gr_buf_printf(&b, "time-limit build %.17g run %.17g performance %.17g\n", lab->limit_build,
                  lab->limit_run, lab->limit_perf);
    for (int i = 0; i < lab->nforbid; i++)
        gr_buf_printf(&b, "forbid-symbol %s\n", lab->forbid[i]);
    for (int i = 0; i < lab->nforbid_source; i++)
        gr_buf_printf(&b, "forbid-source %s\n", lab->forbid_source[i]);
    if (lab->plausible_bytes > 0)
        gr_buf_printf(&b, "plausible bytes-per-cell-step %.17g margin %.17g factor %.17g\n",
                      lab->plausible_bytes, lab->plausible_margin, lab->plausible_factor);
    if (lab->launcher == GR_LAUNCHER_MPIRUN)
        gr_buf_puts(&b, "launcher mpirun\n");
    if (lab->nranks > 0) {
        gr_buf_puts(&b, "ranks");
        for (int i = 0; i < lab->nranks; i++)
            gr_buf_printf(&b, " %d", lab->ranks[i]);
        gr_buf_puts(&b, "\n");
    }
    /* Reported, not scored, but a changed stretch line must not reuse an old report. */
    for (int i = 0; i < lab->nstretch; i++)
        gr_buf_printf(&b, "stretch %s %d\n", lab->stretch[i].name, lab->stretch[i].steps);
    return gr_buf_take(&b);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Regular files directly in @p dir (sorted), minus the names in @p skip (a lab's folder). */
static int list_files(const char *dir, const gr_lab_rubric *skip, char ***out, int *n)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0; /* a missing folder (e.g. no solutions/ in a handout) hashes as empty */
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        /* A lab folder's rubric counts as its graded lines (gr_rubric_lab_text): a changed
           deadline or comment re-grades nobody. */
        int skipped = skip && strcmp(e->d_name, "rubric") == 0;
        for (int i = 0; skip && i < skip->nfiles; i++)
            skipped |= strcmp(e->d_name, skip->files[i].name) == 0;
        char *path = gr_strf("%s/%s", dir, e->d_name);
        struct stat st;
        if (skipped || stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
            free(path);
            continue;
        }
        *out = gr_xrealloc(*out, (*n + 1) * sizeof **out);
        (*out)[(*n)++] = path;
    }
    closedir(d);
    return 0;
}

/* Regular files of every folder directly in @p dir. */
static void list_subdir_files(const char *dir, char ***out, int *n)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.') {
            char *sub = gr_strf("%s/%s", dir, e->d_name);
            if (gr_is_dir(sub))
                list_files(sub, NULL, out, n);
            free(sub);
        }
    closedir(d);
}

int gr_kit_hash(const char *kit, const gr_lab_rubric *lab, char out[33], lk_error *err)
{
    char **files = NULL;
    int n = 0;
    char *dirs[] = {gr_strf("%s/common/include/labkit", kit), gr_strf("%s/common/src", kit),
                    gr_strf("%s/common", kit), gr_strf("%s/labs", kit),
                    gr_strf("%s/datasets", kit)};
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
        list_files(dirs[i], NULL, &files, &n);
    char *lab_dir = gr_strf("%s/labs/%s", kit, lab->name);
    char *sol_dir = gr_strf("%s/solutions/%s", kit, lab->name);
    list_files(lab_dir, lab, &files, &n);
    list_files(sol_dir, NULL, &files, &n);
    /* Stored dataset files and the models live one level down (datasets/<model>/,
       common/models/<model>/). */
    char *models = gr_strf("%s/common/models", kit);
    list_subdir_files(dirs[4], &files, &n);
    list_subdir_files(models, &files, &n);
    free(models);
    qsort(files, n, sizeof *files, cmp_str);
    int rc = -1;
    lk_md5 *md5 = lk_md5_begin(err);
    char *rubric = gr_rubric_lab_text(lab);
    if (!md5)
        goto done;
    if (lk_md5_update(md5, GR_GRADER_VERSION, strlen(GR_GRADER_VERSION), err) != 0 ||
        lk_md5_update(md5, rubric, strlen(rubric), err) != 0)
        goto fail;
    for (int i = 0; i < n; i++) {
        size_t len;
        char *data = gr_read_file(files[i], 256u << 20, &len, err);
        const char *rel = files[i] + strlen(kit);
        if (!data || lk_md5_update(md5, rel, strlen(rel) + 1, err) != 0 ||
            lk_md5_update(md5, data, len, err) != 0) {
            free(data);
            goto fail;
        }
        free(data);
    }
    rc = lk_md5_end(md5, out, err);
    md5 = NULL;
fail:
    lk_md5_abort(md5);
done:
    free(rubric);
    for (int i = 0; i < n; i++)
        free(files[i]);
    free(files);
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
        free(dirs[i]);
    free(lab_dir);
    free(sol_dir);
    return rc;
}

/* ---- the grader's own secret ------------------------------------------------------------- */

/* A new secret in @p path: written under a temporary name, then linked to the final one
   (link() never replaces a file that is already there, nor follows a planted link). */
static int make_secret(const char *path, lk_error *err)
{
    unsigned char bytes[GR_SECRET_BYTES];
    int in = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    ssize_t got = in >= 0 ? read(in, bytes, sizeof bytes) : -1;
    if (in >= 0)
        close(in);
    if (got != (ssize_t)sizeof bytes)
        return lk_fail(err, "/dev/urandom: cannot read %d bytes for %s", GR_SECRET_BYTES, path);
    char *tmp = gr_strf("%s.new.%d", path, (int)getpid());
    unlink(tmp);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    int ok = fd >= 0 && write(fd, bytes, sizeof bytes) == (ssize_t)sizeof bytes &&
             fsync(fd) == 0;
    if (fd >= 0)
        close(fd);
    ok = ok && link(tmp, path) == 0;
    int saved = errno;
    unlink(tmp);
    free(tmp);
    memset(bytes, 0, sizeof bytes);
    if (!ok && saved != EEXIST)
        return lk_fail(err, "%s: cannot create the grader's secret: %s", path, strerror(saved));
    return 0;
}

int gr_grader_secret(const char *out, unsigned char secret[GR_SECRET_BYTES], lk_error *err)
{
    char *path = gr_strf("%s/.grader-secret", out);
    int rc = -1;
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) {
        if (make_secret(path, err) != 0) {
            free(path);
            return -1;
        }
        fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    }
    struct stat st;
    if (fd < 0) {
        lk_fail(err, "%s: cannot open the grader's secret: %s: delete it (saved results "
                     "are then graded again)", path, strerror(errno));
    } else if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size != GR_SECRET_BYTES ||
               st.st_uid != geteuid() || (st.st_mode & 077) != 0) {
        lk_fail(err, "%s: not the grader's secret (a regular file of %d bytes, owned by uid %d, "
                     "mode 0600): delete it; a new one is made and saved results are graded "
                     "again", path, GR_SECRET_BYTES, (int)geteuid());
    } else if (read(fd, secret, GR_SECRET_BYTES) != GR_SECRET_BYTES) {
        lk_fail(err, "%s: cannot read the grader's secret: %s", path, strerror(errno));
    } else {
        rc = 0;
    }
    if (fd >= 0)
        close(fd);
    free(path);
    return rc;
}
