/**
 * @file session.h
 * @brief Opening a grading session (the kit, its rubric and labs, the report folder and its
 * lock, the environment, the sandbox) and the class it grades; closing it.
 */
#ifndef GRADER_SESSION_H
#define GRADER_SESSION_H

#include "grade.h"

/** The command line of labkit-grade (main.c reads it). */
typedef struct gr_options {
    const char *kit, *submissions, *out, *rubric, *lib, *gpu_lock, *cuda_arch;
    const char *only, *assume_gpu;
    const char *lab; /**< --lab: grade only this lab of the kit (NULL: every lab). */
    unsigned long long seed;
    int seed_given, force, junit, gradescope, no_gpu, quiet, unsandboxed, accept_implausible;
    int jobs; /**< Build jobs ahead of the GPU (--jobs; -1: half the CPUs, at most 8). */
    int runs; /**< Correctness runs side by side (--runs; -1: 3/4 of the CPUs, at most 12). */
} gr_options;

/**
 * Open the session @p o asks for: every check that can fail before a student is graded.
 * 0 on success; else the exit status (1 a grader error, 2 bad usage) with the message in
 * @p err.
 */
int gr_session_open(gr_session *s, const gr_options *o, lk_error *err);

/** Free what gr_session_open() set up (and release the report folder's lock). */
void gr_session_close(gr_session *s);

/** The students of the session's class (or the kit itself for self-grading), sorted. */
int gr_find_students(gr_session *s, const char *only, gr_student **out, int *n, lk_error *err);

/** Free the students' results and names. */
void gr_free_students(gr_student *st, int n);

#endif
