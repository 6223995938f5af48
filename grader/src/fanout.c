/* Driver runs side by side, one forked process per task. A task's sandboxed commands are its
   process's children, so their reaping (which collects any child) never touches another
   task's; the parent waits on its tasks by pid only (the build jobs are its children too). */
#include "fanout.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "labkit/timing.h"
#include "result.h"
#include "util.h"

int gr_default_runs(void)
{
    /* Three quarters of the CPUs: a lab's 9-11 checks then fit in one wave on 16 cores, and
       the build jobs ahead (nice 10) take what is left. */
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int runs = cpus > 1 ? (int)(cpus * 3 / 4) : 1;
    return runs > 12 ? 12 : runs;
}

static char *task_file(const char *dir, int task, const char *ext)
{
    return gr_strf("%s/task-%d.%s", dir, task, ext);
}

/* The forked side: run the task, leave its checks (and its error) in files, exit with its
   code (100: a grader error). */
static void run_task(gr_session *s, const char *dir, int task, gr_task_fn fn, void *ctx)
{
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    /* Each task picks result descriptors of its own, not its siblings' next ones. */
    s->fd_state ^= 2654435761u * (unsigned)(task + 1);
    gr_lab_result r;
    gr_lab_init(&r, "task", 0);
    lk_error err;
    lk_error_clear(&err);
    int code = fn(ctx, task, &r, &err);
    char *json = task_file(dir, task, "json");
    lk_error e2;
    if (code >= 0 && gr_lab_save(json, &r, &e2) != 0) {
        err = e2;
        code = -1;
    }
    if (code < 0) {
        char *why = task_file(dir, task, "error");
        gr_write_atomic_text(why, err.msg[0] ? err.msg : "the task failed", &e2);
        free(why);
    }
    free(json);
    fflush(NULL);
    _exit(code < 0 ? 100 : code > 99 ? 99 : code);
}

/* The parent side of a task that ended with @p status. */
static void collect(const char *dir, int task, int status, gr_task_result *t)
{
    char *json = task_file(dir, task, "json"), *why = task_file(dir, task, "error");
    lk_error e;
    t->code = WIFEXITED(status) && WEXITSTATUS(status) < 100 ? WEXITSTATUS(status) : -1;
    if (t->code >= 0 && gr_lab_load(json, &t->r, &e) != 0) {
        t->code = -1;
        t->error = gr_strf("the result of a run in parallel is unreadable: %s", e.msg);
    } else if (t->code < 0) {
        char *said = gr_exists(why) ? gr_read_file(why, 1 << 16, NULL, &e) : NULL;
        t->error = said ? said
                   : WIFSIGNALED(status)
                       ? gr_strf("a grader process running checks in parallel died of signal %d",
                                 WTERMSIG(status))
                       : gr_strf("a grader process running checks in parallel failed (exit "
                                 "status %d)", WEXITSTATUS(status));
    }
    unlink(json);
    unlink(why);
    free(json);
    free(why);
}

int gr_fanout(gr_session *s, const char *dir, int ntasks, const int *weights, int slots,
              double deadline_s,
              gr_task_fn fn, void *ctx, int (*stop)(void *ctx, int code),
              gr_task_result *out, lk_error *err)
{
    for (int i = 0; i < ntasks; i++) {
        memset(&out[i], 0, sizeof out[i]);
        out[i].code = -1;
        gr_lab_init(&out[i].r, "task", 0);
    }
    if (gr_mkdir_p(dir, 0700, err) != 0)
        return -1;
    pid_t *pid = gr_xcalloc(ntasks ? (size_t)ntasks : 1, sizeof *pid);
    double *began = gr_xcalloc(ntasks ? (size_t)ntasks : 1, sizeof *began);
    int next = 0, running = 0, load = 0, stopped = 0, forwarded = 0, rc = 0;
    if (slots < 1)
        slots = 1;
    while (next < ntasks || running > 0) {
        const int w = next < ntasks && weights ? (weights[next] > 0 ? weights[next] : 1) : 1;
        const int room = running == 0 || load + w <= slots;
        if (next < ntasks && !stopped && !gr_stop_requested && room) {
            fflush(NULL);
            pid_t p = fork();
            if (p == 0)
                run_task(s, dir, next, fn, ctx);
            if (p < 0) {
                if (running == 0) {
                    rc = lk_fail(err, "cannot start a process for a check: %s", strerror(errno));
                    break;
                }
            } else {
                pid[next] = p;
                began[next] = lk_wall_seconds();
                out[next].started = 1;
                running++;
                load += w;
                next++;
                continue;
            }
        }
        if (running == 0)
            break; /* stopped: the rest are never started */
        /* An interrupted grader stops its runs now rather than at their time limits (a
           signal to the grader alone, e.g. from `timeout`, does not reach them). */
        if (gr_stop_requested && !forwarded) {
            for (int i = 0; i < next; i++)
                if (pid[i] > 0)
                    kill(pid[i], SIGTERM);
            forwarded = 1;
        }
        /* Every wait has a deadline: a task stuck on the grader's side of a run (its
           command has a time limit of its own) is killed, its run reported timed out. */
        const double now = lk_wall_seconds();
        for (int i = 0; i < next; i++)
            if (pid[i] > 0 && deadline_s > 0 && now - began[i] > deadline_s &&
                !out[i].timed_out) {
                kill(pid[i], SIGKILL);
                out[i].timed_out = 1;
            }
        /* Poll our own tasks only: waiting on any child would take the build jobs' exits. */
        int reaped = 0;
        for (int i = 0; i < next; i++) {
            int status;
            if (pid[i] <= 0 || waitpid(pid[i], &status, WNOHANG) != pid[i])
                continue;
            pid[i] = 0;
            running--;
            load -= weights && weights[i] > 0 ? weights[i] : 1;
            collect(dir, i, status, &out[i]);
            if (out[i].timed_out) {
                free(out[i].error);
                out[i].code = -1;
                out[i].error = gr_strf("timed out: the run's grader process was still busy %.0f "
                                       "s after it started, and was killed", deadline_s);
            }
            if (stop && out[i].code >= 0 && stop(ctx, out[i].code))
                stopped = 1;
            reaped = 1;
        }
        if (!reaped) {
            struct timespec nap = {0, 5 * 1000 * 1000};
            nanosleep(&nap, NULL);
        }
    }
    free(pid);
    free(began);
    lk_error ignored;
    gr_rm_rf(dir, &ignored);
    return rc;
}

void gr_fanout_free(gr_task_result *out, int n)
{
    for (int i = 0; i < n; i++) {
        free(out[i].error);
        gr_lab_free(&out[i].r);
    }
}
