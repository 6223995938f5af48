/**
 * @file static_check.h
 * @brief `labkit-grade --static LAB`: the grader's checks that need no run (the source rules,
 * the includes, the symbols of the compiled objects) on a lab folder's own student files and
 * the objects its `make check` built, so that `make check` fails where `make grade` rejects.
 */
#ifndef GRADER_STATIC_CHECK_H
#define GRADER_STATIC_CHECK_H

/** What --static checks and where the pieces are. */
typedef struct gr_static_request {
    const char *kit;       /**< The kit (its labs/, grader/deps.mk, rubric). */
    const char *rubric;    /**< One rubric file for every lab (NULL: KIT/labs/LAB/rubric). */
    const char *lib;       /**< The kit library, built (NULL: KIT/build/common/liblabkit.a). */
    const char *cuda_arch; /**< CUDA_ARCH of the lab's build, or NULL for lab.mk's choice. */
    const char *lab;       /**< The lab's folder name, e.g. 01-straightforward. */
    const char *objects;   /**< The lab's build folder: STEM.o of each student file. */
    char *const *files;    /**< MAKEVAR=PATH of each student file (the rubric's names). */
    int nfiles;            /**< Their number. */
} gr_static_request;

/**
 * Run the grader's static stage (gr_check_source, gr_check_includes, gr_check_symbols) on
 * @p q, in the folder OBJECTS/grader-static, without a sandbox (the student's own files, on
 * their machine). Prints the grader's verdict: one line when it passes, the lab's reason
 * and the failed check's detail when it does not. Returns 0 passed (or the lab is not
 * graded), 3 the grader would reject it or not build it, 1 an error, 2 bad usage.
 */
int gr_static_check(const gr_static_request *q);

#endif
