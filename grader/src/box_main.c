/* labkit-box: the grader's runner on its own, in the manner of ioi/isolate: one command in a
   fresh box under limits, and a meta record of how it ended. The grader runs every student
   command through the same code (sandbox.c, jail.c); this command lets the runner be
   reviewed and tested without the grading policy above it. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "labkit/cli.h"
#include "sandbox.h"
#include "util.h"

static void usage(FILE *f)
{
    fputs("usage: labkit-box --box DIR [options] -- PROGRAM [ARG...]\n"
          "Run PROGRAM in DIR (its working folder and, with --jail, its only writable one,\n"
          "shown at " GR_BOX_PATH "), as nobody when run as root, and write a meta record.\n"
          "  --box DIR          the box: an existing folder, normally fresh and empty (as\n"
          "                     root: writable by nobody, who runs the command)\n"
          "  --jail             in the bubblewrap sandbox (system read-only, no network)\n"
          "  --time S           wall-clock limit in seconds (default 10)\n"
          "  --output-cap B     stdout and stderr together, in bytes (default 1 MiB)\n"
          "  --quota-files N    entries the box may hold (default 256)\n"
          "  --quota-bytes B    bytes the box may hold (default 256 MiB)\n"
          "  --nproc N          processes the command may add to its user's (default 64)\n"
          "  --stdout F, --stderr F   where its output goes (default: /dev/null)\n"
          "  --meta F           the meta record (default: standard output), one key:value a\n"
          "                     line: status (exited, signaled, timeout, output-cap, quota,\n"
          "                     not-started, interrupted), exitcode or exitsig, time-wall,\n"
          "                     output-bytes, message\n"
          "Exit status: 0 the command ran (whatever its fate), 1 the runner failed, 2 usage.\n",
          f);
}

static const char *end_name(gr_end e)
{
    static const char *const names[] = {"exited", "signaled", "timeout", "output-cap",
                                        "not-started", "interrupted", "quota"};
    return (unsigned)e < sizeof names / sizeof names[0] ? names[e] : "unknown";
}

static int write_meta(const char *path, const gr_outcome *o)
{
    FILE *f = path ? fopen(path, "w") : stdout;
    if (!f) {
        fprintf(stderr, "labkit-box: %s: cannot write the meta record\n", path);
        return 1;
    }
    fprintf(f, "status:%s\n", end_name(o->end));
    if (o->end == GR_END_EXITED)
        fprintf(f, "exitcode:%d\n", o->status);
    else if (o->end == GR_END_SIGNALED)
        fprintf(f, "exitsig:%d\n", o->status);
    fprintf(f, "time-wall:%.3f\noutput-bytes:%lld\nmessage:%s\n", o->wall_s, o->output_bytes,
            o->reason);
    return path && fclose(f) != 0;
}

/* The options into @p lim and @p cmd; the index of PROGRAM, or -1 (usage error, said). */
static int parse(int argc, char **argv, gr_limits *lim, gr_cmd *cmd, int *jail,
                 const char **meta)
{
    enum { O_BOX = 256, O_JAIL, O_TIME, O_CAP, O_QFILES, O_QBYTES, O_NPROC, O_OUT, O_ERR,
           O_META };
    static const struct option opts[] = {
        {"box", required_argument, 0, O_BOX},       {"jail", no_argument, 0, O_JAIL},
        {"time", required_argument, 0, O_TIME},     {"output-cap", required_argument, 0, O_CAP},
        {"quota-files", required_argument, 0, O_QFILES},
        {"quota-bytes", required_argument, 0, O_QBYTES},
        {"nproc", required_argument, 0, O_NPROC},   {"stdout", required_argument, 0, O_OUT},
        {"stderr", required_argument, 0, O_ERR},    {"meta", required_argument, 0, O_META},
        {"help", no_argument, 0, 'h'},              {0, 0, 0, 0}};
    lk_error err;
    int c, rc = 0, n;
    opterr = 0;
    while (rc == 0 && (c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
        switch (c) {
        case O_BOX: cmd->box = optarg; break;
        case O_JAIL: *jail = 1; break;
        case O_TIME:
            rc = lk_parse_double("--time", optarg, 0.001, 86400, &lim->wall_s, &err);
            break;
        case O_CAP: rc = lk_parse_int("--output-cap", optarg, 1, 1 << 30, &n, &err);
                    lim->output_bytes = n; break;
        case O_QFILES: rc = lk_parse_int("--quota-files", optarg, 1, 1 << 24, &n, &err);
                       lim->quota_files = n; break;
        case O_QBYTES: rc = lk_parse_int("--quota-bytes", optarg, 1, 1 << 30, &n, &err);
                       lim->quota_bytes = n; break;
        case O_NPROC: rc = lk_parse_int("--nproc", optarg, 1, 100000, &n, &err);
                      lim->nproc = n; break;
        case O_OUT: cmd->out_path = optarg; break;
        case O_ERR: cmd->err_path = optarg; break;
        case O_META: *meta = optarg; break;
        case 'h': usage(stdout); exit(0);
        default: rc = lk_fail(&err, "unknown option or missing value: '%s'", argv[optind - 1]);
        }
    }
    if (rc == 0 && !cmd->box)
        rc = lk_fail(&err, "--box DIR is required: the folder the command runs in");
    if (rc == 0 && optind >= argc)
        rc = lk_fail(&err, "no command: give it after --");
    if (rc != 0) {
        fprintf(stderr, "labkit-box: %s (see --help)\n", err.msg);
        return -1;
    }
    return optind;
}

int main(int argc, char **argv)
{
    gr_limits lim = {.wall_s = 10, .output_bytes = 1 << 20, .quota_files = 256,
                     .quota_bytes = 256LL << 20, .nproc = 64, .drop = 1};
    gr_cmd cmd = {0};
    int jail = 0;
    const char *meta = NULL;
    int first = parse(argc, argv, &lim, &cmd, &jail, &meta);
    if (first < 0)
        return 2;
    cmd.argv = (const char *const *)argv + first;
    gr_jail j;
    lk_error err;
    if (jail && gr_jail_init(&j, NULL, &err) != 0) {
        fprintf(stderr, "labkit-box: %s\n", err.msg);
        return 1;
    }
    lim.jail = jail ? &j : NULL;
    gr_outcome o;
    int rc = gr_sandbox_run(&cmd, &lim, &o, &err);
    if (rc != 0)
        fprintf(stderr, "labkit-box: %s\n", err.msg);
    else
        rc = write_meta(meta, &o);
    if (jail)
        gr_jail_free(&j);
    return rc != 0;
}
