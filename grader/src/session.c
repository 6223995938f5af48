/* A grading session: the kit and its rubric, the labs it grades, the report folder (one
   grader at a time), the environment, the sandbox; and the class it grades. */
#define _GNU_SOURCE /* realpath */
#include "session.h"

#include <dirent.h>
#include <stdarg.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fanout.h"
#include "sandbox.h"
#include "state.h"
#include "labkit/timing.h"
#include "util.h"

#ifndef GR_CUDA_HOME
#define GR_CUDA_HOME "/usr/local/cuda"
#endif

static unsigned long long random_u64(void)
{
    unsigned long long v = 0;
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        if (read(fd, &v, sizeof v) != (ssize_t)sizeof v)
            v = 0;
        close(fd);
    }
    if (v == 0)
        v = (unsigned long long)getpid() * 0x9e3779b97f4a7c15ULL ^ (unsigned long long)time(NULL);
    return v;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int cmp_version(const void *a, const void *b)
{
    return strverscmp(*(char *const *)a, *(char *const *)b);
}

/* The resubmissions of a student: the folders of ROOT/attempts/, in submission order. */
static void find_attempts(gr_student *st)
{
    char *dir = gr_strf("%s/attempts", st->root);
    struct stat sb;
    DIR *d = lstat(dir, &sb) == 0 && S_ISDIR(sb.st_mode) ? opendir(dir) : NULL;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        char *p = gr_strf("%s/%s", dir, e->d_name);
        if (e->d_name[0] != '.' && lstat(p, &sb) == 0 && S_ISDIR(sb.st_mode)) {
            st->attempts = gr_xrealloc(st->attempts, (st->nattempts + 1) * sizeof *st->attempts);
            st->attempts[st->nattempts++] = gr_xstrdup(e->d_name);
        }
        free(p);
    }
    if (d)
        closedir(d);
    if (st->nattempts)
        qsort(st->attempts, st->nattempts, sizeof *st->attempts, cmp_version);
    free(dir);
}

/* Check the rubric against the kit: datasets in the manifest, driver names, solutions. */
static int setup_labs(gr_session *s, const char *rubric_path, const char *only_lab, int quiet,
                      lk_error *err)
{
    char **names;
    int n;
    gr_kit_labs(s->kit, &names, &n);
    if (only_lab) {
        int found = 0;
        for (int i = 0; i < n; i++)
            found |= strcmp(names[i], only_lab) == 0 && gr_rubric_find(&s->rubric, only_lab);
        if (!found) {
            /* The choices are the labs the kit has and the rubric grades. */
            gr_buf list = {0};
            for (int i = 0; i < n; i++)
                if (gr_rubric_find(&s->rubric, names[i]))
                    gr_buf_printf(&list, "%s%s", list.len ? ", " : "", names[i]);
            char *all = gr_buf_take(&list);
            lk_fail(err, "--lab %s: no such graded lab in %s: give one of %s", only_lab,
                    s->kit, all && all[0] ? all : "(none: the rubric grades none of its labs)");
            free(all);
            for (int i = 0; i < n; i++)
                free(names[i]);
            free(names);
            return 2; /* bad usage */
        }
    }
    s->labs = gr_xcalloc(n ? n : 1, sizeof *s->labs);
    s->graded = gr_xcalloc(n ? n : 1, sizeof *s->graded);
    int rc = 0;
    gr_buf without_solution = {0};
    for (int i = 0; i < n && rc == 0; i++) {
        if (only_lab && strcmp(names[i], only_lab) != 0)
            continue;
        const gr_lab_rubric *lab = gr_rubric_find(&s->rubric, names[i]);
        if (!lab) {
            fprintf(stderr, "labkit-grade: warning: labs/%s exists but %s has no entry for it: "
                            "it is not graded (add a 'lab %s' block)\n", names[i], rubric_path,
                    names[i]);
            continue;
        }
        gr_lab_ctx *lc = &s->labs[s->nlabs];
        lc->rub = lab;
        char expected[80];
        snprintf(expected, sizeof expected, "lab%.*s", (int)strcspn(lab->name, "-"), lab->name);
        if (strcmp(lab->driver, expected) != 0) {
            rc = lk_fail(err, "%s:%d: lab %s: driver '%s', but labs/lab.mk builds '%s': write "
                              "driver %s", lab->file, lab->line, lab->name, lab->driver,
                         expected, expected);
            break;
        }
        lc->steps = gr_xcalloc(lab->ndatasets, sizeof *lc->steps);
        const gr_dataset *all[64];
        int nall = 0;
        for (int d = 0; d < lab->ndatasets && nall < 63; d++)
            all[nall++] = &lab->datasets[d];
        all[nall++] = &lab->perf;
        for (int d = 0; d < nall && rc == 0; d++) {
            const gr_dataset *ds = all[d];
            if (ds->hidden || ds->generated) {
                if (d < lab->ndatasets)
                    lc->steps[d] = ds->steps;
                continue;
            }
            const lk_manifest_entry *e = lk_manifest_find(&s->manifest, ds->name);
            if (!e)
                rc = lk_fail(err, "%s:%d: dataset '%s' is not in %s: use one of its names or a "
                                  "generator spec KIND:ROWSxCOLS:SEED", lab->file, ds->line,
                             ds->name, s->manifest_path);
            else if (d < lab->ndatasets)
                lc->steps[d] = ds->steps >= 0 ? ds->steps : e->steps;
        }
        lc->have_solution = 1;
        for (int f = 0; f < lab->nfiles; f++) {
            char *p = gr_strf("%s/solutions/%s/%s", s->kit, lab->name, lab->files[f].name);
            lc->have_solution &= gr_exists(p);
            free(p);
        }
        lc->kit_work = gr_strf("%s/work/kit/%s", s->out, lab->name);
        if (rc == 0 && gr_kit_hash(s->kit, lab, lc->kit_hash, err) != 0)
            rc = -1;
        s->graded[s->nlabs++] = lab;
        if (!lc->have_solution)
            gr_buf_printf(&without_solution, "%s%s", without_solution.len ? ", " : "",
                          lab->name);
    }
    /* One note for every lab without a solution (a student distribution has none). */
    if (!quiet && without_solution.len)
        printf("note: no solution in solutions/ for %s (a handout?): performance is judged on "
               "the minimum speedup only, and the serial reference runs from the student's "
               "build\n", gr_buf_str(&without_solution));
    gr_buf_free(&without_solution);
    for (int i = 0; i < s->rubric.nlabs && rc == 0; i++) {
        int found = 0;
        for (int k = 0; k < n; k++)
            found |= strcmp(names[k], s->rubric.labs[i].name) == 0;
        if (!found && !quiet)
            printf("note: %s describes lab %s, which this kit does not have: skipped\n",
                   rubric_path, s->rubric.labs[i].name);
    }
    for (int i = 0; i < n; i++)
        free(names[i]);
    free(names);
    if (rc == 0 && s->nlabs == 0)
        rc = lk_fail(err, "%s: no lab of this kit (labs/NN-name/lab.h) has a rubric entry: "
                          "nothing to grade", rubric_path);
    return rc;
}

/* An entry of the submissions folder that is not a student's folder: say so, and what to do,
   on the console and in the instructor's log (nothing handed in is dropped without a word). */
static void warn_not_graded(const gr_session *s, const char *path, const char *name,
                            const struct stat *st, int is_dir)
{
    char *why;
    if (is_dir)
        why = gr_strf("a hidden folder (its name starts with a dot), not graded: rename it if "
                      "it is a student's");
    else if (S_ISLNK(st->st_mode))
        why = gr_strf("a symbolic link, not a folder: not graded (the grader follows no link "
                      "out of the submissions): copy the student's folder in instead");
    else if (S_ISREG(st->st_mode))
        why = gr_strf("not a folder: not graded: unpack it as %.*s/labs/NN-name/kernels.cu",
                      (int)strcspn(name, "."), name);
    else
        why = gr_strf("not a folder (a device, FIFO or socket): not graded");
    printf("warning: %s: %s\n", path, why);
    gr_session_log(s->out, "submissions: %s: %s", name, why);
    free(why);
}

/* Whether @p name is one of the @p n names of @p only. */
static int named(const char *const *only, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(only[i], name) == 0)
            return 1;
    return 0;
}

int gr_find_students(gr_session *s, const char *const *only, int nonly, gr_student **out,
                     int *n, lk_error *err)
{
    *out = NULL;
    *n = 0;
    if (s->self) {
        *out = gr_xcalloc(1, sizeof **out);
        (*out)[0].name = gr_xstrdup("self");
        (*out)[0].dir = gr_xstrdup("self");
        (*out)[0].root = gr_xstrdup(s->kit);
        *n = 1;
        return 0;
    }
    const char *subs = s->subs;
    DIR *d = opendir(subs);
    if (!d)
        return lk_fail(err, "%s: cannot open the submissions folder: %s", subs, strerror(errno));
    char **names = NULL;
    int count = 0;
    gr_buf seen = {0};
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char *p = gr_strf("%s/%s", subs, e->d_name);
        struct stat st;
        const int is_dir = lstat(p, &st) == 0 && S_ISDIR(st.st_mode);
        if (is_dir && e->d_name[0] != '.')
            gr_buf_printf(&seen, "%s%s", seen.len ? ", " : "", e->d_name);
        if (is_dir && e->d_name[0] != '.' && (!only || named(only, nonly, e->d_name))) {
            names = gr_xrealloc(names, (count + 1) * sizeof *names);
            names[count++] = gr_xstrdup(e->d_name);
        } else if (!only) {
            warn_not_graded(s, p, e->d_name, &st, is_dir);
        }
        free(p);
    }
    closedir(d);
    /* Each name --only gives must be a student's folder: none is dropped without a word. */
    const char *unknown = NULL;
    for (int i = 0; only && !unknown && i < nonly; i++) {
        int found = 0;
        for (int k = 0; k < count && !found; k++)
            found = strcmp(names[k], only[i]) == 0;
        if (!found)
            unknown = only[i];
    }
    if (unknown)
        lk_fail(err, "--only %s: %s has no student folder of that name: give one of its "
                "folders (%.300s%s)", unknown, subs, seen.len ? gr_buf_str(&seen) : "it has none",
                seen.len > 300 ? "..." : "");
    else if (count == 0)
        lk_fail(err, "%s: no student folders: give a folder with one sub-folder per student",
                subs);
    gr_buf_free(&seen);
    if (count == 0 || unknown) {
        for (int i = 0; i < count; i++)
            free(names[i]);
        free(names);
        return -1;
    }
    qsort(names, count, sizeof *names, cmp_name);
    *out = gr_xcalloc(count, sizeof **out);
    for (int i = 0; i < count; i++) {
        gr_student *st = &(*out)[i];
        st->name = names[i];
        st->root = gr_strf("%s/%s", subs, names[i]);
        char safe[200];
        gr_safe_name(names[i], safe, sizeof safe);
        /* Two names may map to one safe name ("a b", "a_b"): keep folders distinct. */
        char candidate[220];
        snprintf(candidate, sizeof candidate, "%s", safe);
        for (int k = 2;; k++) {
            int clash = 0;
            for (int j = 0; j < i; j++)
                clash |= strcmp((*out)[j].dir, candidate) == 0;
            if (!clash)
                break;
            snprintf(candidate, sizeof candidate, "%s-%d", safe, k);
        }
        st->dir = gr_xstrdup(candidate);
        find_attempts(st);
    }
    free(names);
    *n = count;
    return 0;
}

/* Files under @p dir (one level, and one more for @p depth 1), for the readability check. */
static void add_tree(const char *dir, int depth, char ***paths, int *n)
{
    *paths = gr_xrealloc(*paths, (*n + 1) * sizeof **paths);
    (*paths)[(*n)++] = gr_xstrdup(dir);
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || strcmp(e->d_name, "build") == 0)
            continue;
        char *p = gr_strf("%s/%s", dir, e->d_name);
        if (gr_is_dir(p)) {
            if (depth > 0)
                add_tree(p, depth - 1, paths, n);
            free(p);
            continue;
        }
        *paths = gr_xrealloc(*paths, (*n + 1) * sizeof **paths);
        (*paths)[(*n)++] = p;
    }
    closedir(d);
}

/* Student code and builds run as nobody when the grader is root: every kit file they read
   must be readable by nobody, or every student would fail for the kit's sake. */
static int check_kit_readable(const gr_session *s, const char *lib, lk_error *err)
{
    if (!s->drop || geteuid() != 0)
        return 0;
    char **paths = NULL;
    int n = 0;
    char *d;
    add_tree(d = gr_strf("%s/common", s->kit), 1, &paths, &n);
    free(d);
    add_tree(d = gr_strf("%s/labs", s->kit), 0, &paths, &n);
    free(d);
    for (int i = 0; i < s->nlabs; i++) {
        add_tree(d = gr_strf("%s/labs/%s", s->kit, s->graded[i]->name), 0, &paths, &n);
        free(d);
    }
    if (s->gpu) {
        add_tree(d = gr_strf("%s/datasets", s->kit), 1, &paths, &n);
        free(d);
    }
    paths = gr_xrealloc(paths, (n + 1) * sizeof *paths);
    paths[n++] = gr_xstrdup(lib);
    int pfd[2];
    int rc = 0;
    if (pipe(pfd) == 0) {
        fflush(NULL);
        pid_t pid = fork();
        if (pid == 0) {
            close(pfd[0]);
            if (setgid(GR_UNPRIVILEGED_ID) != 0 || setuid(GR_UNPRIVILEGED_ID) != 0)
                _exit(1);
            for (int i = 0; i < n; i++)
                if (access(paths[i], gr_is_dir(paths[i]) ? R_OK | X_OK : R_OK) != 0) {
                    ssize_t w = write(pfd[1], paths[i], strlen(paths[i]));
                    (void)w;
                    break;
                }
            _exit(0);
        }
        close(pfd[1]);
        char bad[PATH_MAX + 1];
        ssize_t got = pid > 0 ? read(pfd[0], bad, sizeof bad - 1) : 0;
        close(pfd[0]);
        if (pid > 0)
            waitpid(pid, NULL, 0);
        if (got > 0) {
            bad[got] = '\0';
            rc = lk_fail(err, "%s: not readable by nobody (uid %d), who runs the builds and "
                              "the student code: make the kit readable by everyone (chmod -R "
                              "a+rX %s) or run the grader as a normal user", bad,
                         GR_UNPRIVILEGED_ID, s->kit);
        }
    }
    for (int i = 0; i < n; i++)
        free(paths[i]);
    free(paths);
    return rc;
}

/* The jail of student builds and runs: the kit parts a lab needs, read-only (never
   solutions/, the grader's files, the report folder), then a trial run of `true` in it, as
   the user that runs student code, in the work folder. */
static int setup_jail(gr_session *s, const char *lib, int unsandboxed, const char *workdir,
                      lk_error *err)
{
    uid_t uid;
    gid_t gid;
    gr_limits lim = {.wall_s = 30, .drop = s->drop, .jail = &s->jail};
    gr_sandbox_ids(&lim, &uid, &gid);
    const char *as = uid == getuid() ? "as the grader's own user" : "as nobody (uid 65534)";
    if (unsandboxed) {
        gr_jail_none(&s->jail);
        s->env.unsandboxed = 1;
        snprintf(s->env.isolation, sizeof s->env.isolation,
                 "none: graded with --unsandboxed, student code ran %s without namespaces "
                 "and could read and write whatever that user can", as);
        printf("labkit-grade: WARNING: --unsandboxed: student code runs %s without the "
               "sandbox\n", as);
    } else {
        if (gr_jail_init(&s->jail, GR_CUDA_HOME, err) != 0)
            return -1;
        static const char *const parts[] = {"common", "labs", "datasets", "grader/deps.mk"};
        for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
            char *p = gr_strf("%s/%s", s->kit, parts[i]);
            gr_jail_show(&s->jail, p);
            free(p);
        }
        gr_jail_show(&s->jail, lib);
        /* An instructor's labs/NN/build may hold a compiled solution. */
        char **names;
        int n;
        gr_kit_labs(s->kit, &names, &n);
        for (int i = 0; i < n; i++) {
            char *b = gr_strf("%s/labs/%s/build", s->kit, names[i]);
            gr_jail_hide(&s->jail, b);
            free(b);
            free(names[i]);
        }
        free(names);
        snprintf(s->env.isolation, sizeof s->env.isolation,
                 "bubblewrap sandbox (own user, pid, network, IPC namespaces; seccomp filter; "
                 "toolkit and kit read-only, only its own folder writable), %s", as);
    }
    s->kitinfo.jail = &s->jail;
    /* First without the jail: can that user enter the work folder at all? Then in it. */
    char *errs = gr_strf("%s/sandbox-probe.err", workdir);
    const char *argv_true[] = {"true", NULL};
    const char *writable[] = {workdir, NULL};
    gr_cmd cmd = {argv_true, workdir, NULL, errs, NULL, 0, NULL, writable, NULL, NULL};
    gr_outcome oc;
    lim.jail = NULL;
    int rc = gr_sandbox_run(&cmd, &lim, &oc, err);
    if (rc == 0 && !gr_outcome_ok(&oc))
        rc = lk_fail(err, "%s: %s: student code runs %s and must be able to enter it: choose "
                          "an --out folder that every user can traverse (e.g. under /tmp)",
                     workdir, oc.reason, as);
    lim.jail = &s->jail;
    if (rc == 0 && s->jail.bwrap && (rc = gr_sandbox_run(&cmd, &lim, &oc, err)) == 0 &&
        !gr_outcome_ok(&oc)) {
        lk_error ignored;
        char *said = gr_read_file(errs, 4096, NULL, &ignored);
        if (said)
            said[strcspn(said, "\n")] = '\0';
        char *why = gr_jail_refusal(said && said[0] ? said : oc.reason);
        rc = lk_fail(err, "%s", why);
        free(why);
        free(said);
    }
    unlink(errs);
    free(errs);
    return rc;
}

/* The kit, the class, the report folder and its lock; the session's settings. */
static int open_folders(gr_session *s, const gr_options *o, lk_error *err)
{
    char real[PATH_MAX];
    if (!realpath(o->kit, real)) {
        lk_fail(err, "%s: cannot find the kit: %s: give it with --kit", o->kit, strerror(errno));
        return 1;
    }
    s->kit = gr_xstrdup(real);
    s->self = o->submissions && strcmp(o->submissions, "self") == 0;
    if (!s->self) {
        const char *given = o->submissions;
        char *dflt = gr_strf("%s/grader/examples", s->kit);
        if (!given && !gr_is_dir(dflt)) {
            /* A student distribution ships without the example submissions. */
            lk_fail(err, "%s: no example submissions in this kit (a student distribution has "
                         "none): grade a class with --submissions DIR (one folder per "
                         "student), or your own files with --submissions self (make grade "
                         "SUBMISSIONS=self)", dflt);
            free(dflt);
            return 2;
        }
        if (!realpath(given ? given : dflt, real)) {
            lk_fail(err, "%s: cannot open the submissions folder: %s: give one folder per "
                         "student with --submissions DIR (or `self`)",
                    given ? given : dflt, strerror(errno));
            free(dflt);
            return 1;
        }
        free(dflt);
        s->subs = gr_xstrdup(real);
    }
    char *out_given = o->out ? gr_xstrdup(o->out) : gr_strf("%s/build/grade", s->kit);
    if (gr_mkdir_p(out_given, 0755, err) != 0 || !realpath(out_given, real)) {
        if (!err->msg[0])
            lk_fail(err, "%s", strerror(errno));
        free(out_given);
        return 1;
    }
    free(out_given);
    s->out = gr_xstrdup(real);
    chmod(s->out, 0755);
    /* Each lab's block from its folder, unless --rubric gives one file for every lab. */
    s->rubric_path = o->rubric ? gr_xstrdup(o->rubric) : gr_strf("%s/labs/*/rubric", s->kit);
    s->lib = o->lib ? gr_xstrdup(o->lib) : gr_strf("%s/build/common/liblabkit.a", s->kit);
    s->manifest_path = gr_strf("%s/datasets/MANIFEST", s->kit);
    s->force = o->force;
    s->accept_implausible = o->accept_implausible;
    s->runs = o->runs > 0 ? o->runs : gr_default_runs();
    s->drop = 1;
    s->gpu_lock = gr_xstrdup(o->gpu_lock);
    s->lock_timeout_s = o->lock_timeout_s;
    s->seed = o->seed_given ? o->seed : random_u64();
    s->fd_state = (unsigned)random_u64();

    /* One grader per report folder: a second one would interleave its files. */
    char *lock_path = gr_strf("%s/.grader.lock", s->out);
    s->out_lock = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (s->out_lock < 0 || flock(s->out_lock, LOCK_EX | LOCK_NB) != 0) {
        lk_fail(err, "%s: another grader is writing to %s: wait for it or use another --out",
                lock_path, s->out);
        free(lock_path);
        return 1;
    }
    free(lock_path);
    /* The command lines carry the hidden datasets' seeds: for the instructor only. */
    char *log_path = gr_strf("%s/commands.log", s->out);
    gr_command_log = open(log_path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_NOFOLLOW |
                                    O_CLOEXEC, 0600);
    if (gr_command_log >= 0)
        fchmod(gr_command_log, 0600);
    gr_command_log_t0 = lk_wall_seconds();
    if (gr_command_log < 0)
        lk_fail(err, "%s: cannot create the command log: %s", log_path, strerror(errno));
    free(log_path);
    return gr_command_log < 0;
}

int gr_session_open(gr_session *s, const gr_options *o, lk_error *err)
{
    memset(s, 0, sizeof *s);
    s->out_lock = -1;
    s->state_lock = -1;
    int rc = open_folders(s, o, err);
    if (rc != 0)
        return rc;
    if ((o->rubric ? gr_rubric_read(o->rubric, &s->rubric, err)
                   : gr_rubric_read_kit(s->kit, &s->rubric, err)) != 0 ||
        lk_manifest_read(s->manifest_path, &s->manifest, err) != 0 ||
        (rc = setup_labs(s, s->rubric_path, o->lab, o->quiet, err)) != 0 ||
        gr_kit_init(&s->kitinfo, s->kit, s->lib, GR_CUDA_HOME, o->cuda_arch, s->drop, err) != 0)
        return rc == 2 ? 2 : 1;
    gr_env_probe(s->kit, !o->no_gpu && !o->assume_gpu, s->drop, &s->env);
    if (o->assume_gpu && !o->no_gpu) {
        s->env.gpu_ok = 1;
        snprintf(s->env.gpu, sizeof s->env.gpu, "%.200s (assumed: --assume-gpu)", o->assume_gpu);
    }
    s->gpu = s->env.gpu_ok;
    /* The GPUs are the grader's choice, made before any student code runs. */
    if (o->gpus && !s->gpu && !o->quiet)
        printf("note: --gpus %s: the GPU stages do not run here (%s): graded as without it\n",
               o->gpus, s->env.gpu_reason);
    if (o->gpus && s->gpu) {
        gr_gpu *all;
        int n;
        if (gr_list_gpus(&all, &n, err) != 0)
            return 1;
        rc = gr_pick_gpus(o->gpus, all, n, &s->gpus, &s->ngpus, err);
        free(all);
        if (rc != 0)
            return 2;
    }
    if (gr_grader_secret(s->out, s->env.secret, err) != 0)
        return 1;
    for (int i = 0; i < s->nlabs && s->gpu && !s->self; i++)
        if (!s->labs[i].have_solution) {
            lk_fail(err, "solutions/%s is missing: grading a class needs the instructor kit "
                         "with its solutions (the performance stage runs them); self-grading "
                         "works without", s->labs[i].rub->name);
            return 1;
        }

    if (check_kit_readable(s, s->lib, err) != 0)
        return 1;
    /* Student code runs as nobody when the grader is root: it must reach the work folder. */
    char *workdir = gr_strf("%s/work", s->out);
    if (gr_mkdir_p(workdir, 0755, err) != 0) {
        free(workdir);
        return 1;
    }
    chmod(workdir, 0755);
    s->kitinfo.log_dir = gr_xstrdup(workdir);
    rc = setup_jail(s, s->lib, o->unsandboxed, workdir, err);
    free(workdir);
    /* Student builds run unprivileged and cannot write build/: the library they link is
       brought up to date once, before any of them. */
    if (rc == 0)
        rc = gr_refresh_lib(&s->kitinfo, err);
    /* The session work of the labs kept for the next session: per GPU (a worker's, in
       class.c), or "default" for the one GPU. Nothing to keep without the GPU stages. */
    if (rc == 0 && o->session_state && s->gpu) {
        rc = gr_mkdir_p(o->session_state, 0755, err);
        char real[PATH_MAX];
        if (rc == 0 && !realpath(o->session_state, real))
            rc = lk_fail(err, "%s: %s", o->session_state, strerror(errno));
        if (rc == 0) {
            s->state_dir = gr_xstrdup(real);
            if (!s->ngpus)
                rc = gr_state_open(s, "default", err);
        }
    }
    return rc == 0 ? 0 : 1;
}

void gr_session_close(gr_session *s)
{
    for (int i = 0; i < s->nlabs; i++) {
        gr_lab_ctx *lc = &s->labs[i];
        free(lc->steps);
        free(lc->kit_work);
        free(lc->ref_driver);
        free(lc->ref_error);
        free(lc->serial_error);
        free(lc->baseline_error);
        free(lc->zero_error);
        for (int k = 0; k < lc->nperf_refs; k++) {
            /* Large, and only good for this session's seed (kept with --session-state). */
            if (lc->perf_refs[k] && !s->state_dir)
                unlink(lc->perf_refs[k]);
            free(lc->perf_refs[k]);
        }
        free(lc->perf_refs);
        free(lc->sol_ms);
        free(lc->nsol_ms);
    }
    free(s->labs);
    free(s->graded);
    gr_env_release(&s->env);
    gr_kit_free(&s->kitinfo);
    gr_jail_free(&s->jail);
    gr_rubric_free(&s->rubric);
    lk_manifest_free(&s->manifest);
    free(s->kit);
    free(s->out);
    free(s->subs);
    free(s->rubric_path);
    free(s->lib);
    free(s->manifest_path);
    free(s->gpu_lock);
    free(s->host_lock);
    free(s->state_dir);
    gr_gpu_unlock(s->state_lock);
    free(s->gpus);
    free(s->gpu_label);
    if (gr_command_log >= 0)
        close(gr_command_log);
    gr_command_log = -1;
    if (s->out_lock >= 0)
        close(s->out_lock);
    memset(s, 0, sizeof *s);
}

void gr_free_students(gr_student *st, int n)
{
    for (int i = 0; i < n; i++) {
        for (int l = 0; l < st[i].nlabs; l++)
            gr_lab_free(&st[i].labs[l]);
        free(st[i].labs);
        free(st[i].name);
        free(st[i].dir);
        free(st[i].root);
        gr_audit_free(st[i].audit, st[i].naudit);
        for (int a = 0; a < st[i].nattempts; a++)
            free(st[i].attempts[a]);
        free(st[i].attempts);
    }
    free(st);
}

int gr_session_log(const char *out, const char *fmt, ...)
{
    char now[32];
    gr_utc_now(now, sizeof now);
    gr_buf b = {0};
    gr_buf_printf(&b, "%s ", now);
    char line[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    gr_buf_printf(&b, "%s\n", line);
    char *path = gr_strf("%s/session.log", out);
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
    free(path);
    /* One write per line: lines of build jobs and of the grader never interleave. */
    int rc = fd >= 0 && fchmod(fd, 0600) == 0 &&
             write(fd, gr_buf_str(&b), b.len) == (ssize_t)b.len ? 0 : -1;
    if (fd >= 0)
        close(fd);
    gr_buf_free(&b);
    return rc;
}

long long gr_mem_available(const char *meminfo)
{
    lk_error ignored;
    char *text = gr_read_file(meminfo, 1 << 20, NULL, &ignored);
    const char *at = text ? strstr(text, "MemAvailable:") : NULL;
    long long kib = -1;
    if (at && sscanf(at, "MemAvailable: %lld kB", &kib) != 1)
        kib = -1;
    free(text);
    return kib < 0 ? -1 : kib * 1024;
}

int gr_jobs_that_fit(int jobs, long long per_job, long long available, char *note, size_t size)
{
    note[0] = '\0';
    if (jobs <= 0 || per_job <= 0 || available < 0 || (long long)jobs * per_job <= available)
        return jobs;
    int fit = (int)(available / per_job);
    snprintf(note, size, "%d build job%s ahead instead of %d: each build may reserve %.0f GiB "
             "(its address-space limit) and the host has %.1f GiB available (MemAvailable)",
             fit, fit == 1 ? "" : "s", jobs, per_job / 1073741824.0, available / 1073741824.0);
    return fit;
}
