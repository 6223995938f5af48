/**
 * @file session.h
 * @brief Opening a grading session (the kit, its rubric and labs, the report folder and its
 * lock, the environment, the sandbox) and the class it grades; closing it.
 */
#ifndef GRADER_SESSION_H
#define GRADER_SESSION_H

#include "grade.h"
#include "course.h"
#include "roster.h"

/** The command line of labkit-grade (main.c reads it). */
typedef struct gr_options {
    const char *kit, *submissions, *out, *rubric, *lib, *gpu_lock, *cuda_arch;
    const char **only; /**< --only NAME, each given (NULL: every student). */
    int nonly;
    const char *assume_gpu;
    const char *lab; /**< --lab: grade only this lab of the kit (NULL: every lab). */
    const char *gpus; /**< --gpus all|N|LIST: a worker per GPU (NULL: the one GPU, as before). */
    const char *session_state; /**< --session-state DIR: each lab's session work kept there
                                    per GPU for the next session (NULL: in OUT, for this one). */
    unsigned long long seed;
    int seed_given, force, junit, gradescope, no_gpu, quiet, unsandboxed, accept_implausible;
    int jobs; /**< Build jobs ahead of the GPU (--jobs; -1: half the CPUs, at most 8). */
    int runs; /**< Correctness runs side by side (--runs; -1: 3/4 of the CPUs, at most 12). */
    double lock_timeout_s; /**< --lock-timeout: the longest wait for the GPU lock (0: none). */
    int export_canvas, export_moodle; /**< --export canvas, moodle (gradescope: gradescope). */
    const gr_roster *roster; /**< --roster, read before the session opens (NULL: none). */
    const char *regrade;        /**< --regrade: the one student graded (again, forced);
                                     the others' saved results fill the gradebook. */
    const char *regrade_reason; /**< Its --reason. */
    const gr_submission_times *times; /**< --submission-times, read before the session
                                     opens (NULL: the files' modification times). */
} gr_options;

/** The default deadline for the GPU lock: six hours, a whole class of another grader. */
#define GR_LOCK_TIMEOUT_S 21600

/**
 * Open the session @p o asks for: every check that can fail before a student is graded.
 * 0 on success; else the exit status (1 a grader error, 2 bad usage) with the message in
 * @p err.
 */
int gr_session_open(gr_session *s, const gr_options *o, lk_error *err);

/** Free what gr_session_open() set up (and release the report folder's lock). */
void gr_session_close(gr_session *s);

/** The students of the session's class (or the kit itself for self-grading), sorted: those
    of the @p nonly names in @p only when it is not NULL. */
int gr_find_students(gr_session *s, const char *const *only, int nonly, gr_student **out,
                     int *n, lk_error *err);

/** Free the students' results and names. */
void gr_free_students(gr_student *st, int n);

/**
 * Append one line, dated, to OUT/session.log, the instructor's log (mode 0600, never
 * through a link): the session's seed, the students graded, saved results refused. No
 * student-facing file shows what it holds.
 */
int gr_session_log(const char *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/** MemAvailable of @p meminfo (a /proc/meminfo) in bytes, or -1 when it does not say. */
long long gr_mem_available(const char *meminfo);

/**
 * How many of @p jobs build jobs may run at once when each may take @p per_job bytes (its
 * address-space limit) and @p available bytes are free (-1: unknown, no cap). When that is
 * fewer than @p jobs, @p note says so in a line for the progress output, else it is "".
 */
int gr_jobs_that_fit(int jobs, long long per_job, long long available, char *note, size_t size);

#endif
