/* labkit-grade: grades a class (or the kit's own student files) on correctness hashes and
   speedups. See grader/README.md. */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "class.h"
#include "merge.h"
#include "labkit/cli.h"
#include "sandbox.h"
#include "static_check.h"
#include "util.h"

#ifndef LK_TOP_DIR
#error "compile with -DLK_TOP_DIR='\"path to the kit\"'"
#endif
#ifndef GR_GPU_LOCK
#error "compile with -DGR_GPU_LOCK='\"lock file\"' (grader.mk: common.mk's LK_GPU_LOCK)"
#endif

enum { EXIT_ERROR = 1, EXIT_USAGE = 2 };

/* --static LAB: only the static checks of one lab (static_check.h); --objects says where
   its objects are, and the arguments MAKEVAR=PATH where its student files are. */
static const char *static_lab, *static_objects;
/* --merge PARTS: build the class's outputs from students graded apart (merge.h). */
static const char *merge_parts;
/* --list-students: the report folders of the --only students, for tools/slurm-grade.sh. */
static int list_students;

static void usage(FILE *f)
{
    fputs("usage: labkit-grade [options]\n"
          "Grades submissions against the pristine kit: builds each student's files, checks\n"
          "them, runs them on public and hidden datasets, times them against the solution.\n"
          "  --submissions DIR|self  one folder per student, or `self` for this kit's own\n"
          "                          student files (default: KIT/grader/examples)\n"
          "  --out DIR               reports (default: KIT/build/grade)\n"
          "  --kit DIR               the pristine kit (default: the one this grader was built in)\n"
          "  --rubric FILE           one rubric holding every lab's block, in place of each\n"
          "                          lab folder's KIT/labs/NN-name/rubric\n"
          "  --lib FILE              the kit library (default: KIT/build/common/liblabkit.a)\n"
          "  --seed N                seed of the hidden datasets, to repeat a session (default:\n"
          "                          a new one from /dev/urandom); kept in OUT/session.log\n"
          "  --seed-file FILE        the seed in a file only you can read (mode 0600), so\n"
          "                          that no process list shows it (Slurm array tasks)\n"
          "  --only NAME             grade only the student NAME (again for more students)\n"
          "  --list-students         print FOLDER<TAB>NAME for each --only student (FOLDER:\n"
          "                          its report folder, OUT/students/FOLDER) and exit\n"
          "  --lab NAME              grade only lab NAME (e.g. 04-halo-tiling)\n"
          "  --force                 re-grade results that are unchanged since the last run\n"
          "  --junit                 also write OUT/junit.xml\n"
          "  --export WHAT[,WHAT]    also write what an LMS imports as it is: canvas\n"
          "                          (OUT/canvas.csv), moodle (OUT/moodle.csv), both from\n"
          "                          --roster, and gradescope (OUT/students/NAME/results.json)\n"
          "  --roster FILE           CSV: folder, then name, canvas_id, sis_user_id,\n"
          "                          sis_login_id, section, email, idnumber, username (any\n"
          "                          of them; grader/README.md); OUT/roster-check.txt lists\n"
          "                          who is on one side only\n"
          "  --gradescope            the same as --export gradescope\n"
          "  --submission-times FILE CSV (folder,lab,submitted) of when each lab was handed\n"
          "                          in, for the rubric's deadlines (default: the student\n"
          "                          files' modification times, which the report says)\n"
          "  --regrade NAME          grade student NAME again (all labs, or --lab) with a new\n"
          "                          seed; --reason TEXT says why; the old and new scores go\n"
          "                          to the audit trail of the student's report\n"
          "  --no-gpu                do not run the GPU stages even if a GPU is present\n"
          "  --assume-gpu WHAT       run the GPU stages without probing for a device (for\n"
          "                          testing the grader with stand-in drivers)\n"
          "  --gpus all|N|LIST       grade on several GPUs of this machine, a worker each\n"
          "                          taking the next student (all; the first N; indices as\n"
          "                          nvidia-smi numbers them, e.g. 0,2, or UUIDs GPU-...);\n"
          "                          default: one GPU\n"
          "  --session-state DIR     keep each lab's session work (solution build, trusted\n"
          "                          timings, the solution's outputs) in DIR per GPU, and take\n"
          "                          it up in the next session with the same kit, seed, host\n"
          "                          and GPU (what a Slurm array task of one student uses)\n"
          "  --gpu-lock FILE         lock serialising GPU work across graders and make bench\n"
          "                          (default: " GR_GPU_LOCK ")\n"
          "  --lock-timeout S        wait at most S seconds for that lock (default 21600; 0: no\n"
          "                          deadline)\n"
          "  --cuda-arch ARCH        CUDA_ARCH for every build (default: lab.mk's choice)\n"
          "  --accept-implausible    score timings the rubric's `plausible` rules flag\n"
          "                          (after an instructor reviewed them)\n"
          "  --unsandboxed           run student code without the bubblewrap sandbox (where\n"
          "                          user namespaces are off); every report says so\n"
          "  --jobs N                build N labs ahead while the GPU grades (default: half\n"
          "                          the CPUs, at most 8, and as many as the host's memory\n"
          "                          fits; 0: build each lab when it comes)\n"
          "  --runs N                run N correctness checks side by side (default: 3/4\n"
          "                          of the CPUs, at most 12; 1: one at a time); timed rounds\n"
          "                          always run alone\n"
          "  --merge PARTS           grade nothing: build OUT's gradebook, reports, summary\n"
          "                          and exports from PARTS/NAME, each student graded alone\n"
          "                          with --only NAME --out PARTS/NAME (make grade SLURM=1)\n"
          "  --static LAB --objects DIR MAKEVAR=PATH...\n"
          "                          only the static checks of lab LAB (source rules,\n"
          "                          includes, symbols) on the given student files and their\n"
          "                          objects in DIR, as a lab's make check runs them; exit 3\n"
          "                          with the grader's reason when they fail\n"
          "  -q, --quiet             print only the final table\n"
          "  -h, --help              this text\n"
          "Exit status: 0 everything graded, 1 grader error or interrupted, 2 bad usage,\n"
          "4 graded as far as possible but the GPU stages were not run (no GPU).\n", f);
}

/* --export canvas,moodle,gradescope (or the option given once per format). */
static int parse_exports(const char *list, gr_options *o)
{
    char *copy = gr_xstrdup(list), *save = NULL;
    int rc = 0;
    for (char *w = strtok_r(copy, ",", &save); w && rc == 0; w = strtok_r(NULL, ",", &save)) {
        if (strcmp(w, "canvas") == 0)
            o->export_canvas = 1;
        else if (strcmp(w, "moodle") == 0)
            o->export_moodle = 1;
        else if (strcmp(w, "gradescope") == 0)
            o->gradescope = 1;
        else {
            fprintf(stderr, "labkit-grade: --export %s: unknown format '%s': give canvas, "
                            "moodle or gradescope\n", list, w);
            rc = -1;
        }
    }
    free(copy);
    return rc;
}

/* --seed-file FILE: the seed kept off the command line, which any user of the node sees. */
static int read_seed_file(const char *path, unsigned long long *seed)
{
    lk_error err;
    struct stat st;
    char *text = gr_read_regular(path, 64, NULL, &err);
    if (text && (stat(path, &st) != 0 || (st.st_mode & 077) != 0))
        lk_fail(&err, "%s: readable by others: the seed is the instructor's; chmod 600 %s",
                path, path);
    else if (text) {
        text[strcspn(text, "\n")] = '\0';
        if (lk_parse_seed("--seed-file", text, seed, &err) == 0) {
            free(text);
            return 0;
        }
    }
    fprintf(stderr, "labkit-grade: %s\n", err.msg);
    free(text);
    return -1;
}

static int parse_args(int argc, char **argv, gr_options *o, const char **roster,
                      const char **times)
{
    enum { O_SUB = 256, O_OUT, O_KIT, O_RUBRIC, O_LIB, O_SEED, O_ONLY, O_LAB, O_FORCE, O_JUNIT, O_GS,
           O_NOGPU, O_LOCK, O_LOCK_TIMEOUT, O_ARCH, O_ASSUME, O_UNSANDBOXED, O_ACCEPT, O_JOBS,
           O_RUNS, O_EXPORT, O_ROSTER, O_STATIC, O_OBJECTS, O_REGRADE,
           O_REASON, O_TIMES, O_MERGE, O_SEED_FILE, O_GPUS, O_STATE, O_LIST };
    static const struct option opts[] = {
        {"submissions", required_argument, 0, O_SUB}, {"out", required_argument, 0, O_OUT},
        {"kit", required_argument, 0, O_KIT},         {"rubric", required_argument, 0, O_RUBRIC},
        {"lib", required_argument, 0, O_LIB},         {"seed", required_argument, 0, O_SEED},
        {"only", required_argument, 0, O_ONLY},       {"force", no_argument, 0, O_FORCE},
        {"lab", required_argument, 0, O_LAB},
        {"junit", no_argument, 0, O_JUNIT},           {"gradescope", no_argument, 0, O_GS},
        {"no-gpu", no_argument, 0, O_NOGPU},          {"gpu-lock", required_argument, 0, O_LOCK},
        {"cuda-arch", required_argument, 0, O_ARCH},  {"quiet", no_argument, 0, 'q'},
        {"assume-gpu", required_argument, 0, O_ASSUME},
        {"unsandboxed", no_argument, 0, O_UNSANDBOXED},
        {"accept-implausible", no_argument, 0, O_ACCEPT},
        {"jobs", required_argument, 0, O_JOBS},
        {"runs", required_argument, 0, O_RUNS},
        {"export", required_argument, 0, O_EXPORT},
        {"roster", required_argument, 0, O_ROSTER},
        {"regrade", required_argument, 0, O_REGRADE},
        {"reason", required_argument, 0, O_REASON},
        {"submission-times", required_argument, 0, O_TIMES},
        {"lock-timeout", required_argument, 0, O_LOCK_TIMEOUT},
        {"static", required_argument, 0, O_STATIC},
        {"objects", required_argument, 0, O_OBJECTS},
        {"merge", required_argument, 0, O_MERGE},
        {"seed-file", required_argument, 0, O_SEED_FILE},
        {"gpus", required_argument, 0, O_GPUS},
        {"session-state", required_argument, 0, O_STATE},
        {"list-students", no_argument, 0, O_LIST},
        {"help", no_argument, 0, 'h'},                {0, 0, 0, 0}};
    memset(o, 0, sizeof *o);
    o->kit = LK_TOP_DIR;
    o->jobs = -1;
    o->runs = -1;
    o->gpu_lock = GR_GPU_LOCK;
    o->lock_timeout_s = GR_LOCK_TIMEOUT_S;
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
        case O_ONLY:
            o->only = gr_xrealloc(o->only, (size_t)(o->nonly + 1) * sizeof *o->only);
            o->only[o->nonly++] = optarg;
            break;
        case O_LIST: list_students = 1; break;
        case O_LAB:
            if (o->lab) { /* one lab or every lab: a second --lab would drop the first */
                fprintf(stderr, "labkit-grade: --lab %s and --lab %s: --lab grades one lab; "
                                "leave it out to grade every lab\n", o->lab, optarg);
                return -1;
            }
            o->lab = optarg;
            break;
        case O_FORCE: o->force = 1; break;
        case O_JUNIT: o->junit = 1; break;
        case O_GS: o->gradescope = 1; break;
        case O_NOGPU: o->no_gpu = 1; break;
        case O_LOCK: o->gpu_lock = optarg; break;
        case O_LOCK_TIMEOUT: {
            int seconds;
            if (lk_parse_int("--lock-timeout", optarg, 0, 7 * 86400, &seconds, &err) != 0) {
                fprintf(stderr, "labkit-grade: %s\n", err.msg);
                return -1;
            }
            o->lock_timeout_s = seconds;
            break;
        }
        case O_ARCH: o->cuda_arch = optarg[0] ? optarg : NULL; break;
        case O_ASSUME: o->assume_gpu = optarg; break;
        case O_UNSANDBOXED: o->unsandboxed = 1; break;
        case O_ACCEPT: o->accept_implausible = 1; break;
        case O_JOBS:
            if (lk_parse_int("--jobs", optarg, 0, 64, &o->jobs, &err) != 0) {
                fprintf(stderr, "labkit-grade: %s\n", err.msg);
                return -1;
            }
            break;
        case O_RUNS:
            if (lk_parse_int("--runs", optarg, 1, 64, &o->runs, &err) != 0) {
                fprintf(stderr, "labkit-grade: %s\n", err.msg);
                return -1;
            }
            break;
        case O_EXPORT:
            if (parse_exports(optarg, o) != 0)
                return -1;
            break;
        case O_ROSTER: *roster = optarg; break;
        case O_REGRADE: o->regrade = optarg; break;
        case O_REASON: o->regrade_reason = optarg; break;
        case O_TIMES: *times = optarg; break;
        case O_STATIC: static_lab = optarg; break;
        case O_OBJECTS: static_objects = optarg; break;
        case O_MERGE:
            merge_parts = optarg;
            o->no_gpu = 1; /* a merge runs nothing: the login node's GPU does not matter */
            break;
        case O_SEED_FILE:
            if (read_seed_file(optarg, &o->seed) != 0)
                return -1;
            o->seed_given = 1;
            break;
        case O_GPUS:
            if (gr_gpus_spec_check(optarg, &err) != 0) {
                fprintf(stderr, "labkit-grade: %s\n", err.msg);
                return -1;
            }
            o->gpus = optarg;
            break;
        case O_STATE: o->session_state = optarg; break;
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
    /* A regrade is one student graded again on a fresh seed, for a reason on the record. */
    if (o->regrade || o->regrade_reason) {
        const char *why = !o->regrade ? "--reason goes with --regrade NAME"
                          : !o->regrade_reason || !o->regrade_reason[0]
                              ? "--regrade needs --reason TEXT: why the grade is looked at again"
                          : o->only ? "--regrade names the student: leave out --only"
                          : o->seed_given ? "--regrade draws a new seed: leave out --seed"
                                          : NULL;
        if (why) {
            fprintf(stderr, "labkit-grade: %s\n", why);
            return -1;
        }
        o->force = 1;
    }
    if ((o->export_canvas || o->export_moodle) && !*roster) {
        fprintf(stderr, "labkit-grade: --export %s needs --roster FILE: a CSV with the "
                        "folder and LMS identity of each student (see grader/README.md)\n",
                o->export_canvas ? "canvas" : "moodle");
        return -1;
    }
    if (merge_parts && (o->only || o->regrade)) {
        fprintf(stderr, "labkit-grade: --merge builds the whole class from its parts: leave "
                        "out %s\n", o->only ? "--only" : "--regrade");
        return -1;
    }
    if (list_students && (!o->only || !o->submissions)) {
        fprintf(stderr, "labkit-grade: --list-students names the folders of the --only "
                        "students: give --submissions DIR and --only NAME\n");
        return -1;
    }
    if (static_lab && !static_objects) {
        fprintf(stderr, "labkit-grade: --static %s needs --objects DIR, the lab's build folder "
                        "(see -h)\n", static_lab);
        return -1;
    }
    if (optind < argc && !static_lab) {
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

static void catch_signals(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal; /* no SA_RESTART: waits wake up and see the request */
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
}

/* --list-students: FOLDER<TAB>NAME of each --only student, as a session of them names the
   report folders (two names may share a safe folder name: the second gets -2). */
static int print_student_folders(const gr_options *o)
{
    gr_session s;
    memset(&s, 0, sizeof s);
    s.self = strcmp(o->submissions, "self") == 0;
    s.subs = (char *)o->submissions;
    s.kit = (char *)o->kit;
    gr_student *st = NULL;
    int n = 0;
    lk_error err;
    if (gr_find_students(&s, o->only, o->nonly, &st, &n, &err) != 0) {
        fprintf(stderr, "labkit-grade: %s\n", err.msg);
        return EXIT_USAGE;
    }
    for (int i = 0; i < n; i++)
        printf("%s\t%s\n", st[i].dir, st[i].name);
    gr_free_students(st, n);
    return 0;
}

int main(int argc, char **argv)
{
    gr_options o;
    const char *roster_path = NULL, *times_path = NULL;
    if (parse_args(argc, argv, &o, &roster_path, &times_path) != 0)
        return EXIT_USAGE;
    if (static_lab) {
        gr_static_request q = {o.kit, o.rubric, o.lib, o.cuda_arch, static_lab, static_objects,
                               argv + optind, argc - optind};
        return gr_static_check(&q);
    }
    lk_error err;
    lk_error_clear(&err);
    if (list_students)
        return print_student_folders(&o);
    gr_roster roster = {0};
    if (roster_path) {
        if (gr_roster_read(roster_path, &roster, &err) != 0 ||
            gr_roster_check(&roster, o.export_canvas, o.export_moodle, &err) != 0) {
            fprintf(stderr, "labkit-grade: %s\n", err.msg);
            gr_roster_free(&roster);
            return EXIT_USAGE;
        }
        o.roster = &roster;
    }
    gr_submission_times times = {0};
    if (times_path) {
        if (gr_submission_times_read(times_path, &times, &err) != 0) {
            fprintf(stderr, "labkit-grade: %s\n", err.msg);
            gr_roster_free(&roster);
            return EXIT_USAGE;
        }
        o.times = &times;
    }
    catch_signals();
    gr_session s;
    int status = gr_session_open(&s, &o, &err);
    gr_student *students = NULL;
    int n = 0;
    if (status == 0 && gr_find_students(&s, o.only, o.nonly, &students, &n, &err) != 0)
        status = EXIT_ERROR;
    if (status != 0) {
        fprintf(stderr, "labkit-grade: %s\n", err.msg);
    } else if (merge_parts) {
        status = gr_merge_parts(&s, &o, merge_parts, students, n);
    } else {
        gr_class_tally tally;
        gr_grade_class(&s, &o, students, n, &tally);
        status = gr_finish_class(&s, &o, students, n, &tally);
    }
    gr_free_students(students, n);
    gr_session_close(&s);
    gr_roster_free(&roster);
    gr_submission_times_free(&times);
    return status;
}
