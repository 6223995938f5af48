/* labkit-grade: grades a class (or the kit's own student files) on correctness hashes and
   speedups. See grader/README.md. */
#define _GNU_SOURCE /* realpath */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "grade.h"
#include "labkit/cli.h"
#include "report.h"
#include "sandbox.h"
#include "util.h"

#ifndef LK_TOP_DIR
#error "compile with -DLK_TOP_DIR='\"path to the kit\"'"
#endif
#ifndef GR_CUDA_HOME
#define GR_CUDA_HOME "/usr/local/cuda"
#endif

enum { EXIT_GRADED = 0, EXIT_ERROR = 1, EXIT_USAGE = 2, EXIT_NO_GPU = 4 };

typedef struct options {
    const char *kit, *submissions, *out, *rubric, *lib, *gpu_lock, *cuda_arch;
    const char *only, *assume_gpu;
    unsigned long long seed;
    int seed_given, force, junit, gradescope, no_gpu, quiet, unsandboxed, accept_implausible;
} options;

static void usage(FILE *f)
{
    fputs("usage: labkit-grade [options]\n"
          "Grades submissions against the pristine kit: builds each student's files, checks\n"
          "them, runs them on public and hidden datasets, times them against the solution.\n"
          "  --submissions DIR|self  one folder per student, or `self` for this kit's own\n"
          "                          student files (default: KIT/grader/examples)\n"
          "  --out DIR               reports (default: KIT/build/grade)\n"
          "  --kit DIR               the pristine kit (default: the one this grader was built in)\n"
          "  --rubric FILE           (default: KIT/grader/rubric.txt)\n"
          "  --lib FILE              the kit library (default: KIT/build/common/liblabkit.a)\n"
          "  --seed N                seed of the hidden datasets (default: from /dev/urandom)\n"
          "  --only NAME             grade only the student NAME\n"
          "  --force                 re-grade results that are unchanged since the last run\n"
          "  --junit                 also write OUT/junit.xml\n"
          "  --gradescope            also write OUT/students/NAME/results.json\n"
          "  --no-gpu                do not run the GPU stages even if a GPU is present\n"
          "  --assume-gpu WHAT       run the GPU stages without probing for a device (for\n"
          "                          testing the grader with stand-in drivers)\n"
          "  --gpu-lock FILE         lock serialising GPU work across graders\n"
          "                          (default: /tmp/labkit-grader-gpu.lock)\n"
          "  --cuda-arch ARCH        CUDA_ARCH for every build (default: lab.mk's choice)\n"
          "  --accept-implausible    score timings the rubric's `plausible` rules flag\n"
          "                          (after an instructor reviewed them)\n"
          "  --unsandboxed           run student code without the bubblewrap sandbox (where\n"
          "                          user namespaces are off); every report says so\n"
          "  -q, --quiet             print only the final table\n"
          "  -h, --help              this text\n"
          "Exit status: 0 everything graded, 1 grader error or interrupted, 2 bad usage,\n"
          "4 graded as far as possible but the GPU stages were not run (no GPU).\n", f);
}

static int parse_args(int argc, char **argv, options *o)
{
    enum { O_SUB = 256, O_OUT, O_KIT, O_RUBRIC, O_LIB, O_SEED, O_ONLY, O_FORCE, O_JUNIT, O_GS,
           O_NOGPU, O_LOCK, O_ARCH, O_ASSUME, O_UNSANDBOXED, O_ACCEPT };
    static const struct option opts[] = {
        {"submissions", required_argument, 0, O_SUB}, {"out", required_argument, 0, O_OUT},
        {"kit", required_argument, 0, O_KIT},         {"rubric", required_argument, 0, O_RUBRIC},
        {"lib", required_argument, 0, O_LIB},         {"seed", required_argument, 0, O_SEED},
        {"only", required_argument, 0, O_ONLY},       {"force", no_argument, 0, O_FORCE},
        {"junit", no_argument, 0, O_JUNIT},           {"gradescope", no_argument, 0, O_GS},
        {"no-gpu", no_argument, 0, O_NOGPU},          {"gpu-lock", required_argument, 0, O_LOCK},
        {"cuda-arch", required_argument, 0, O_ARCH},  {"quiet", no_argument, 0, 'q'},
        {"assume-gpu", required_argument, 0, O_ASSUME},
        {"unsandboxed", no_argument, 0, O_UNSANDBOXED},
        {"accept-implausible", no_argument, 0, O_ACCEPT},
        {"help", no_argument, 0, 'h'},                {0, 0, 0, 0}};
    memset(o, 0, sizeof *o);
    o->kit = LK_TOP_DIR;
    o->gpu_lock = "/tmp/labkit-grader-gpu.lock";
    opterr = 0;
    int c;
    lk_error err;
    while ((c = getopt_long(argc, argv, ":qh", opts, NULL)) != -1) {
        switch (c) {
        case O_SUB: o->submissions = optarg; break;
        case O_OUT: o->out = optarg; break;
        case O_KIT: o->kit = optarg; break;
        case O_RUBRIC: o->rubric = optarg; break;
        case O_LIB: o->lib = optarg; break;
        case O_SEED:
            if (lk_parse_seed("--seed", optarg, &o->seed, &err) != 0) {
                fprintf(stderr, "labkit-grade: %s\n", err.msg);
                return -1;
            }
            o->seed_given = 1;
            break;
        case O_ONLY: o->only = optarg; break;
        case O_FORCE: o->force = 1; break;
        case O_JUNIT: o->junit = 1; break;
        case O_GS: o->gradescope = 1; break;
        case O_NOGPU: o->no_gpu = 1; break;
        case O_LOCK: o->gpu_lock = optarg; break;
        case O_ARCH: o->cuda_arch = optarg[0] ? optarg : NULL; break;
        case O_ASSUME: o->assume_gpu = optarg; break;
        case O_UNSANDBOXED: o->unsandboxed = 1; break;
        case O_ACCEPT: o->accept_implausible = 1; break;
        case 'q': o->quiet = 1; break;
        case 'h': usage(stdout); exit(0);
        case ':':
            fprintf(stderr, "labkit-grade: option %s needs a value: see -h\n", argv[optind - 1]);
            return -1;
        default:
            fprintf(stderr, "labkit-grade: unknown option '%s': see -h\n", argv[optind - 1]);
            return -1;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "labkit-grade: unexpected argument '%s': give folders with "
                        "--submissions and --out (see -h)\n", argv[optind]);
        return -1;
    }
    return 0;
}

static void on_signal(int sig)
{
    (void)sig;
    gr_stop_requested = 1;
}

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

/* The kit's labs: folders labs/NN-name holding a lab.h, sorted. */
static int kit_labs(const char *kit, char ***names, int *n)
{
    char *dir = gr_strf("%s/labs", kit);
    DIR *d = opendir(dir);
    *names = NULL;
    *n = 0;
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            const char *s = e->d_name;
            if (!(s[0] >= '0' && s[0] <= '9' && s[1] >= '0' && s[1] <= '9' && s[2] == '-'))
                continue;
            char *h = gr_strf("%s/%s/lab.h", dir, s);
            if (gr_exists(h)) {
                *names = gr_xrealloc(*names, (*n + 1) * sizeof **names);
                (*names)[(*n)++] = gr_xstrdup(s);
            }
            free(h);
        }
        closedir(d);
    }
    free(dir);
    qsort(*names, *n, sizeof **names, cmp_name);
    return 0;
}

/* Check the rubric against the kit: datasets in the manifest, driver names, solutions. */
static int setup_labs(gr_session *s, const char *rubric_path, int quiet, lk_error *err)
{
    char **names;
    int n;
    kit_labs(s->kit, &names, &n);
    s->labs = gr_xcalloc(n ? n : 1, sizeof *s->labs);
    s->graded = gr_xcalloc(n ? n : 1, sizeof *s->graded);
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
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
                              "driver %s", rubric_path, lab->line, lab->name, lab->driver,
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
                                  "generator spec KIND:ROWSxCOLS:SEED", rubric_path, ds->line,
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
        if (!quiet && !lc->have_solution)
            printf("note: solutions/%s is missing (a handout?): performance is judged on the "
                   "minimum speedup only, and the serial reference runs from the student's "
                   "build\n", lab->name);
    }
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

/* Student folders of a class, or the kit itself for self-grading. */
static int find_students(gr_session *s, const char *subs, const char *only, gr_student **out,
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
    DIR *d = opendir(subs);
    if (!d)
        return lk_fail(err, "%s: cannot open the submissions folder: %s", subs, strerror(errno));
    char **names = NULL;
    int count = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char *p = gr_strf("%s/%s", subs, e->d_name);
        struct stat st;
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode) && (!only || strcmp(only, e->d_name) == 0)) {
            names = gr_xrealloc(names, (count + 1) * sizeof *names);
            names[count++] = gr_xstrdup(e->d_name);
        }
        free(p);
    }
    closedir(d);
    if (count == 0)
        return lk_fail(err, "%s: %s: give a folder with one sub-folder per student",
                       subs, only ? "no student folder of that name" : "no student folders");
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
        kit_labs(s->kit, &names, &n);
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
    gr_cmd cmd = {argv_true, workdir, NULL, errs, NULL, 0, NULL, writable, NULL};
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

typedef struct writer_ctx {
    const gr_report_ctx *rc;
    const gr_student *st;
    int n;
} writer_ctx;

static int w_gradebook(FILE *f, void *p, lk_error *e)
{
    (void)e;
    writer_ctx *w = p;
    return gr_write_gradebook(f, w->rc, w->st, w->n);
}
static int w_summary(FILE *f, void *p, lk_error *e)
{
    (void)e;
    writer_ctx *w = p;
    return gr_write_summary(f, w->rc, w->st, w->n);
}
static int w_junit(FILE *f, void *p, lk_error *e)
{
    (void)e;
    writer_ctx *w = p;
    return gr_write_junit(f, w->rc, w->st, w->n);
}
static int w_md(FILE *f, void *p, lk_error *e)
{
    (void)e;
    writer_ctx *w = p;
    return gr_write_student_md(f, w->rc, w->st);
}
static int w_json(FILE *f, void *p, lk_error *e)
{
    (void)e;
    writer_ctx *w = p;
    return gr_write_student_json(f, w->rc, w->st);
}
static int w_gs(FILE *f, void *p, lk_error *e)
{
    (void)e;
    writer_ctx *w = p;
    return gr_write_gradescope(f, w->rc, w->st);
}

static int write_student(const char *out, const gr_report_ctx *rc, const gr_student *st,
                         int gradescope, lk_error *err)
{
    char *dir = gr_strf("%s/students/%s", out, st->dir);
    char *md = gr_strf("%s/report.md", dir), *js = gr_strf("%s/report.json", dir);
    char *gs = gr_strf("%s/results.json", dir);
    writer_ctx w = {rc, st, 1};
    int r = gr_mkdir_p(dir, 0755, err) == 0 && gr_write_atomic(md, w_md, &w, err) == 0 &&
                    gr_write_atomic(js, w_json, &w, err) == 0 &&
                    (!gradescope || gr_write_atomic(gs, w_gs, &w, err) == 0)
                ? 0
                : -1;
    free(dir);
    free(md);
    free(js);
    free(gs);
    return r;
}

static int write_class(const char *out, const gr_report_ctx *rc, const gr_student *st, int n,
                       int junit, lk_error *err)
{
    char *gb = gr_strf("%s/gradebook.csv", out), *sm = gr_strf("%s/summary.md", out);
    char *ju = gr_strf("%s/junit.xml", out);
    writer_ctx w = {rc, st, n};
    int r = gr_write_atomic(gb, w_gradebook, &w, err) == 0 &&
                    gr_write_atomic(sm, w_summary, &w, err) == 0 &&
                    (!junit || gr_write_atomic(ju, w_junit, &w, err) == 0)
                ? 0
                : -1;
    free(gb);
    free(sm);
    free(ju);
    return r;
}

static void print_lab(const gr_lab_result *r, int width)
{
    char score[64];
    if (r->decided)
        snprintf(score, sizeof score, "%.2f/%g", r->score, r->max);
    else
        snprintf(score, sizeof score, "-/%g", r->max);
    printf("    %-*s %-13s %-11s %s%s\n", width, r->lab, r->outcome, score, r->summary,
           r->reused ? " [unchanged: reused]" : "");
}

int main(int argc, char **argv)
{
    options o;
    if (parse_args(argc, argv, &o) != 0)
        return EXIT_USAGE;
    setvbuf(stdout, NULL, _IOLBF, 0);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal; /* no SA_RESTART: waits wake up and see the request */
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    lk_error err;
    lk_error_clear(&err);
    gr_session s;
    memset(&s, 0, sizeof s);
    char real[PATH_MAX];
    if (!realpath(o.kit, real)) {
        fprintf(stderr, "labkit-grade: %s: cannot find the kit: %s: give it with --kit\n", o.kit,
                strerror(errno));
        return EXIT_ERROR;
    }
    s.kit = gr_xstrdup(real);
    s.self = o.submissions && strcmp(o.submissions, "self") == 0;
    char *subs = NULL;
    if (!s.self) {
        const char *given = o.submissions;
        char *dflt = gr_strf("%s/grader/examples", s.kit);
        if (!given && !gr_is_dir(dflt)) {
            /* A student distribution ships without the example submissions. */
            fprintf(stderr, "labkit-grade: %s: no example submissions in this kit (a student "
                            "distribution has none): grade a class with --submissions DIR "
                            "(one folder per student), or your own files with --submissions "
                            "self (make grade SUBMISSIONS=self)\n", dflt);
            free(dflt);
            return EXIT_USAGE;
        }
        if (!realpath(given ? given : dflt, real)) {
            fprintf(stderr, "labkit-grade: %s: cannot open the submissions folder: %s: give one "
                            "folder per student with --submissions DIR (or `self`)\n",
                    given ? given : dflt, strerror(errno));
            free(dflt);
            return EXIT_ERROR;
        }
        free(dflt);
        subs = gr_xstrdup(real);
    }
    char *out_given = o.out ? gr_xstrdup(o.out) : gr_strf("%s/build/grade", s.kit);
    if (gr_mkdir_p(out_given, 0755, &err) != 0 || !realpath(out_given, real)) {
        fprintf(stderr, "labkit-grade: %s\n", err.msg[0] ? err.msg : strerror(errno));
        return EXIT_ERROR;
    }
    free(out_given);
    s.out = gr_xstrdup(real);
    chmod(s.out, 0755);
    char *rubric_path = o.rubric ? gr_xstrdup(o.rubric) : gr_strf("%s/grader/rubric.txt", s.kit);
    char *lib = o.lib ? gr_xstrdup(o.lib) : gr_strf("%s/build/common/liblabkit.a", s.kit);
    s.manifest_path = gr_strf("%s/datasets/MANIFEST", s.kit);
    s.force = o.force;
    s.accept_implausible = o.accept_implausible;
    s.drop = 1;
    s.gpu_lock = gr_xstrdup(o.gpu_lock);
    s.seed = o.seed_given ? o.seed : random_u64();
    s.fd_state = (unsigned)random_u64();

    /* One grader per report folder: a second one would interleave its files. */
    char *lock_path = gr_strf("%s/.grader.lock", s.out);
    int lock = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (lock < 0 || flock(lock, LOCK_EX | LOCK_NB) != 0) {
        fprintf(stderr, "labkit-grade: %s: another grader is writing to %s: wait for it or use "
                        "another --out\n", lock_path, s.out);
        return EXIT_ERROR;
    }
    free(lock_path);

    int status = EXIT_GRADED;
    if (gr_rubric_read(rubric_path, &s.rubric, &err) != 0 ||
        lk_manifest_read(s.manifest_path, &s.manifest, &err) != 0 ||
        setup_labs(&s, rubric_path, o.quiet, &err) != 0 ||
        gr_kit_init(&s.kitinfo, s.kit, lib, GR_CUDA_HOME, o.cuda_arch, s.drop, &err) != 0) {
        fprintf(stderr, "labkit-grade: %s\n", err.msg);
        return EXIT_ERROR;
    }
    gr_env_probe(s.kit, !o.no_gpu && !o.assume_gpu, s.drop, &s.env);
    if (o.assume_gpu && !o.no_gpu) {
        s.env.gpu_ok = 1;
        snprintf(s.env.gpu, sizeof s.env.gpu, "%.200s (assumed: --assume-gpu)", o.assume_gpu);
    }
    s.gpu = s.env.gpu_ok;
    for (int i = 0; i < s.nlabs && s.gpu && !s.self; i++)
        if (!s.labs[i].have_solution) {
            fprintf(stderr, "labkit-grade: solutions/%s is missing: grading a class needs the "
                            "instructor kit with its solutions (the performance stage runs "
                            "them); self-grading works without\n", s.labs[i].rub->name);
            return EXIT_ERROR;
        }

    if (check_kit_readable(&s, lib, &err) != 0) {
        fprintf(stderr, "labkit-grade: %s\n", err.msg);
        return EXIT_ERROR;
    }
    /* Student code runs as nobody when the grader is root: it must reach the work folder. */
    char *workdir = gr_strf("%s/work", s.out);
    if (gr_mkdir_p(workdir, 0755, &err) != 0) {
        fprintf(stderr, "labkit-grade: %s\n", err.msg);
        return EXIT_ERROR;
    }
    chmod(workdir, 0755);
    s.kitinfo.log_dir = gr_xstrdup(workdir);
    if (setup_jail(&s, lib, o.unsandboxed, workdir, &err) != 0) {
        fprintf(stderr, "labkit-grade: %s\n", err.msg);
        return EXIT_ERROR;
    }
    free(workdir);

    gr_student *students;
    int n;
    if (find_students(&s, subs, o.only, &students, &n, &err) != 0) {
        fprintf(stderr, "labkit-grade: %s\n", err.msg);
        return EXIT_ERROR;
    }
    char seed_s[32];
    snprintf(seed_s, sizeof seed_s, "%llu", s.seed);
    gr_report_ctx rctx = {&s.env, seed_s, s.self ? "self (this kit's student files)" : subs,
                          rubric_path, s.graded, s.nlabs, s.gpu ? NULL : s.env.gpu_reason};
    int width = 10;
    for (int i = 0; i < s.nlabs; i++)
        if ((int)strlen(s.graded[i]->name) > width)
            width = (int)strlen(s.graded[i]->name);
    if (!o.quiet) {
        printf("labkit-grade: %d submission%s from %s, lab%s", n, n == 1 ? "" : "s",
               s.self ? "this kit (self-grading)" : subs, s.nlabs == 1 ? "" : "s");
        for (int i = 0; i < s.nlabs; i++)
            printf(" %s", s.graded[i]->name);
        printf("\n  GPU: %s\n  reports: %s\n  hidden-dataset seed: %s%s\n",
               s.gpu ? s.env.gpu : s.env.gpu_reason, s.out, seed_s,
               o.seed_given ? " (given)" : " (random; --seed to repeat)");
    }
    int gpu_not_run = 0, grader_errors = 0;
    for (int i = 0; i < n && !gr_stop_requested; i++) {
        gr_student *st = &students[i];
        if (!o.quiet)
            printf("[%d/%d] %s\n", i + 1, n, st->name);
        st->labs = gr_xcalloc(s.nlabs, sizeof *st->labs);
        st->nlabs = s.nlabs;
        for (int l = 0; l < s.nlabs && !gr_stop_requested; l++) {
            gr_lab_result *r = &st->labs[l];
            lk_error_clear(&err);
            if (gr_grade_lab(&s, st, l, r, &err) != 0) {
                grader_errors++;
                fprintf(stderr, "labkit-grade: %s: %s: %s\n", st->name, s.graded[l]->name,
                        err.msg);
                gr_lab_free(r);
                gr_lab_init(r, s.graded[l]->name,
                            s.graded[l]->points_correct + s.graded[l]->points_perf);
                gr_lab_add(r, "grader", "grader", GR_FAIL, err.msg, NULL);
                gr_lab_outcome(r, GR_OUT_ERROR, "not graded: grader error: %s", err.msg);
            }
            if (strcmp(r->outcome, GR_OUT_GPU_NOT_RUN) == 0)
                gpu_not_run++;
            if (strcmp(r->outcome, GR_OUT_ERROR) == 0 && !gr_stop_requested)
                grader_errors += r->nchecks > 0 && strcmp(r->checks[0].stage, "grader") != 0;
            if (!o.quiet)
                print_lab(r, width);
        }
        st->done = !gr_stop_requested;
        if (write_student(s.out, &rctx, st, o.gradescope, &err) != 0 ||
            write_class(s.out, &rctx, students, n, o.junit, &err) != 0) {
            fprintf(stderr, "labkit-grade: %s\n", err.msg);
            grader_errors++;
        }
    }
    if (write_class(s.out, &rctx, students, n, o.junit, &err) != 0) {
        fprintf(stderr, "labkit-grade: %s\n", err.msg);
        grader_errors++;
    }

    printf("\n%-24s", "student");
    for (int l = 0; l < s.nlabs; l++)
        printf(" %-*s", width + 14, s.graded[l]->name);
    printf(" total\n");
    for (int i = 0; i < n; i++) {
        gr_student *st = &students[i];
        printf("%-24s", st->name);
        for (int l = 0; l < s.nlabs; l++) {
            char cell[96];
            if (!st->done || l >= st->nlabs || !st->labs[l].lab)
                snprintf(cell, sizeof cell, "pending");
            else if (st->labs[l].decided)
                snprintf(cell, sizeof cell, "%.2f %s", st->labs[l].score, st->labs[l].outcome);
            else
                snprintf(cell, sizeof cell, "- %s", st->labs[l].outcome);
            printf(" %-*s", width + 14, cell);
        }
        double total, max, full = 0;
        int decided;
        gr_student_total(st, &total, &max, &decided);
        for (int l = 0; l < s.nlabs; l++)
            full += s.graded[l]->points_correct + s.graded[l]->points_perf;
        if (decided)
            printf(" %.2f/%g\n", total, full);
        else
            printf(" -/%g\n", full);
    }
    printf("\ngradebook: %s/gradebook.csv\nreports:   %s/students/NAME/report.md (and "
           "report.json)\nsummary:   %s/summary.md\n", s.out, s.out, s.out);
    if (o.junit)
        printf("junit:     %s/junit.xml\n", s.out);
    if (gr_stop_requested) {
        printf("labkit-grade: interrupted: finished results are saved; run again to resume\n");
        status = EXIT_ERROR;
    } else if (grader_errors) {
        printf("labkit-grade: %d grader error%s (see above): those labs are not graded\n",
               grader_errors, grader_errors == 1 ? "" : "s");
        status = EXIT_ERROR;
    } else if (gpu_not_run) {
        printf("labkit-grade: GPU STAGES NOT RUN for %d lab%s (%s): their scores are not final; "
               "grade on a machine with a GPU (exit status %d)\n", gpu_not_run,
               gpu_not_run == 1 ? "" : "s", s.env.gpu_reason, EXIT_NO_GPU);
        status = EXIT_NO_GPU;
    }
    for (int i = 0; i < n; i++) {
        for (int l = 0; l < students[i].nlabs; l++)
            gr_lab_free(&students[i].labs[l]);
        free(students[i].labs);
        free(students[i].name);
        free(students[i].dir);
        free(students[i].root);
    }
    free(students);
    for (int i = 0; i < s.nlabs; i++) {
        free(s.labs[i].steps);
        free(s.labs[i].kit_work);
        free(s.labs[i].ref_driver);
        free(s.labs[i].ref_error);
        free(s.labs[i].serial_error);
        free(s.labs[i].baseline_error);
        free(s.labs[i].zero_error);
        for (int k = 0; k < s.labs[i].nperf_refs; k++)
            free(s.labs[i].perf_refs[k]);
        free(s.labs[i].perf_refs);
    }
    free(s.labs);
    free(s.graded);
    gr_kit_free(&s.kitinfo);
    gr_jail_free(&s.jail);
    gr_rubric_free(&s.rubric);
    lk_manifest_free(&s.manifest);
    free(s.kit);
    free(s.out);
    free(s.manifest_path);
    free(s.gpu_lock);
    free(subs);
    free(rubric_path);
    free(lib);
    close(lock);
    return status;
}
