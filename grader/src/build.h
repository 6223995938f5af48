/**
 * @file build.h
 * @brief From a submission to a checked driver: find the student files, copy only them into
 * a fresh work folder, check their #include dependencies, build them against the pristine
 * kit with the lab's own rules (labs/lab.mk), and check the compiled object's symbols.
 */
#ifndef GRADER_BUILD_H
#define GRADER_BUILD_H

#include "labkit/error.h"
#include "policy.h"
#include "result.h"
#include "rubric.h"
#include "sandbox.h"

/** Largest student file accepted. */
#define GR_MAX_STUDENT_FILE (1u << 20)

/** What the build stage knows about the kit, computed once per session. */
typedef struct gr_kit {
    char *top;            /**< Absolute path of the pristine kit. */
    char *deps_mk;        /**< grader/deps.mk (lists #include dependencies with a lab's flags). */
    char **include_dirs;  /**< Folders a student file may include from (real paths). */
    int ninclude_dirs;    /**< Their number. */
    char **lib_symbols;   /**< Global symbols defined by the kit library (sorted). */
    int nlib_symbols;     /**< Their number. */
    char *lib;            /**< The kit library (liblabkit.a). */
    char *cuda_arch;      /**< CUDA_ARCH passed to every build, or NULL for lab.mk's choice. */
    int drop;             /**< Untrusted commands run as nobody when the grader is root. */
    const gr_jail *jail;  /**< The sandbox of builds and checks (set by the caller). */
    char *log_dir;        /**< Where the grader's own build logs go (set by the caller). */
} gr_kit;

/**
 * Prepare @p kit for the kit at @p top: the allowed include folders (the compilers' system
 * folders, the CUDA toolkit, common/include/labkit) and the kit library's symbols
 * (from @p lib, which must be built).
 */
int gr_kit_init(gr_kit *kit, const char *top, const char *lib, const char *cuda_home,
                const char *cuda_arch, int drop, lk_error *err);
/** Free @p kit. */
void gr_kit_free(gr_kit *kit);

/**
 * Find @p lab's student files in the submission folder @p root and copy them into
 * @p src_dir. Layouts, first match wins: `root/labs/LAB/FILE`, `root/LAB/FILE`, and
 * `root/FILE` when no other lab in @p labs (the graded labs) has a file of that name.
 * With @p self, @p root is the kit and only `labs/LAB/FILE` is looked at.
 * Adds a "files" check to @p r. Returns 1 when every file was copied, 0 when one is
 * missing (outcome missing) or unacceptable (outcome rejected), -1 on a grader error.
 */
int gr_fetch_files(const char *root, int self, const gr_lab_rubric *const *labs, int nlabs,
                   const gr_lab_rubric *lab, const char *src_dir, gr_lab_result *r,
                   lk_error *err);

/**
 * Build the lab's driver from the student files in WORK/src into WORK/build with
 * `make -C labs/LAB VAR=file ... B=WORK/build WORK/build/DRIVER`, with `GRADED=1` when
 * @p graded (a driver that runs student code: no serial reference in it, labs/lab.mk).
 * Adds a "build" check with the compiler's first errors on failure. Returns 1 ok, 0 failed
 * (outcome set), -1 error.
 */
int gr_build(const gr_kit *kit, const gr_lab_rubric *lab, const char *work, const char *src_dir,
             int graded, gr_lab_result *r, lk_error *err);

/** Bring the kit library up to date (make lib, as the grader's user); -1 if it fails. */
int gr_refresh_lib(const gr_kit *kit, lk_error *err);

/** Lines of a build log that report errors (at most @p max), work paths shortened. */
char *gr_first_errors(const char *log, const char *src_dir, int max);

/** Does the kit library (or the CUDA runtime) define global symbol @p name? */
int gr_kit_defines(const gr_kit *kit, const char *name);

/** Limits of builds and static checks. */
void gr_build_limits(const gr_kit *kit, const gr_lab_rubric *lab, gr_limits *lim);

/** Run make (or another tool) of the build stage in the sandbox, in @p work; @p log gets
    its stdout and stderr. 0 when it ran (see @p o), -1 on grader errors. */
int gr_run_tool(const gr_kit *kit, const gr_lab_rubric *lab, const char *const *argv,
                const char *work, const char *log, gr_outcome *o, lk_error *err);

/** A log file's text ("" when it cannot be read). */
char *gr_read_log(const char *path);

#endif
