/**
 * @file integrity.h
 * @brief The integrity checks of a student's files, run around the build: their includes,
 * the identifiers the rubric forbids in their source, and the symbols and instructions of
 * their compiled objects. The lists they apply are in policy.h. These are early, friendly
 * messages; the sandbox (jail.h) is what stops a hostile submission.
 */
#ifndef GRADER_INTEGRITY_H
#define GRADER_INTEGRITY_H

#include "build.h"

/**
 * Check that the #include dependencies of every student file in @p src_dir (listed by the
 * lab's own compiler and flags) stay inside the allowed folders, the lab's folder and
 * @p src_dir, and, for a lab with `forbid-source`, that the preprocessed file (host and
 * device passes, the student's own lines) names none of them. Adds an "includes" and a
 * "source" check. Returns 1 ok, 0 failed (outcome set), -1 error.
 */
int gr_check_includes(const gr_kit *kit, const gr_lab_rubric *lab, const char *work,
                      gr_lab_result *r, lk_error *err);

/**
 * The rubric's `forbid-source` identifiers in the copied student files (@p src_dir): 1 none,
 * 0 one is used (a `rejected` check saying the lab asks for that code to be written), -1
 * grader error.
 */
int gr_check_source(const gr_lab_rubric *lab, const char *src_dir, gr_lab_result *r,
                    lk_error *err);

/**
 * Static check of the compiled student objects (WORK/build/STEM.o): no forbidden symbol
 * (processes, files, sockets, dynamic loading, main, the lab's forbid-symbol list), no
 * global definition but the lab's contract (`entry`), C++ names of its own and what the
 * compilers emit (an allow-list), no raw system-call instruction. Adds a "symbols" check.
 * Returns 1 ok, 0 failed (outcome set), -1 error.
 */
int gr_check_symbols(const gr_kit *kit, const gr_lab_rubric *lab, const char *work,
                     gr_lab_result *r, lk_error *err);

#endif
