/* Tasks side by side (gr_fanout): the order they start in, the slots they share, and their
   results handed back in task order. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "fanout.h"
#include "labkit/testing.h"
#include "grader_testing.h"
#include "session.h"

typedef struct {
    const char *log; /* each task appends its number when it starts */
} order_ctx;

static int log_start_then_nap(void *ctx, int task, gr_lab_result *r, lk_error *err)
{
    const order_ctx *c = ctx;
    char line[16];
    int n = snprintf(line, sizeof line, "%d\n", task);
    int fd = open(c->log, O_WRONLY | O_APPEND | O_CREAT, 0644);
    if (fd < 0 || write(fd, line, (size_t)n) != n)
        return lk_fail(err, "%s: cannot append", c->log);
    close(fd);
    struct timespec nap = {0, 100 * 1000 * 1000};
    nanosleep(&nap, NULL);
    char name[32];
    snprintf(name, sizeof name, "task %d", task);
    gr_lab_add(r, "correctness", name, GR_PASS, "ran", NULL);
    return task;
}

Test(fanout, heavier_tasks_start_first_and_results_keep_task_order)
{
    char *dir = gr_test_dir();
    char *log = gr_strf("%s/starts.log", dir), *work = gr_strf("%s/tasks", dir);
    order_ctx ctx = {log};
    gr_session s;
    memset(&s, 0, sizeof s);
    /* Two slots: each 2-weight task runs alone, then the 1-weight ones two by two. */
    const int weights[] = {1, 1, 2, 1, 2};
    gr_task_result out[5];
    lk_error err;
    LK_ASSERT_OK(gr_fanout(&s, work, 5, weights, 2, log_start_then_nap, &ctx, NULL, out, &err),
                 &err);
    char *starts = gr_read_file(log, 1 << 10, NULL, &err);
    cr_assert_not_null(starts, "%s", err.msg);
    cr_assert_str_eq(starts, "2\n4\n0\n1\n3\n");
    for (int i = 0; i < 5; i++) {
        cr_assert(out[i].started);
        cr_assert_eq(out[i].code, i);
        char name[32];
        snprintf(name, sizeof name, "task %d", i);
        cr_assert_eq(out[i].r.nchecks, 1);
        cr_assert_str_eq(out[i].r.checks[0].name, name);
    }
    gr_fanout_free(out, 5);
    free(starts);
    free(log);
    free(work);
    gr_test_cleanup(dir);
}
