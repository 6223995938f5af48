/**
 * @file env.h
 * @brief Provenance of a grading session (GPU, driver, CUDA, host, date, kit version) and
 * the content hash of the kit that decides whether an earlier result can be reused.
 */
#ifndef GRADER_ENV_H
#define GRADER_ENV_H

#include "labkit/error.h"
#include "rubric.h"

/** Version of the grader's rules; part of every reuse key. */
#define GR_GRADER_VERSION "1.1"

/** Bytes of the grader's own secret (OUT/.grader-secret), which seals saved results. */
#define GR_SECRET_BYTES 32

/** Where and with what a session grades. */
typedef struct gr_env {
    char host[256];        /**< Host name, OS and kernel release. */
    char date[32];         /**< Start of the session, UTC, ISO 8601. */
    char user[96];         /**< Who runs the grader, and who runs the student code. */
    int gpu_ok;            /**< 1 when a CUDA device is usable. */
    char gpu[512];         /**< Device description (name, sm, memory, driver, runtime). */
    char gpu_reason[512];  /**< Why there is no usable GPU (when gpu_ok is 0). */
    char cuda[128];        /**< CUDA toolkit used for builds (nvcc's release line). */
    char kit_version[128]; /**< `git describe` of the kit, else its KIT_VERSION file's line. */
    int unsandboxed;       /**< 1: student code ran without the jail (--unsandboxed). */
    char isolation[256];   /**< How student code was isolated, in words. */
    int gpu_keeper;        /**< pid of the GPU probe, kept with its context; 0 when none. */
    unsigned char secret[GR_SECRET_BYTES]; /**< The grader's secret (gr_grader_secret()):
                                seals saved results; no report or log shows it. */
} gr_env;

/**
 * Fill @p env. The GPU is probed in a child process (as the unprivileged user when @p drop
 * is set and the grader is root) so the grader itself never initialises CUDA; @p probe_gpu 0
 * skips the probe (--no-gpu) and records why.
 */
void gr_env_probe(const char *kit, int probe_gpu, int drop, gr_env *env);

/**
 * Probe the GPU that this process's CUDA_VISIBLE_DEVICES shows (the first one without it)
 * into @p env's gpu_ok, gpu and gpu_reason, keeping the probe with its context for the
 * session (gpu_keeper) when it found one.
 */
void gr_env_probe_gpu(int drop, gr_env *env);

/** End the GPU probe that @p env keeps for the session (a no-op without one). */
void gr_env_release(gr_env *env);

/**
 * md5 of everything in the kit that decides a lab's grade: the common library's sources and
 * build settings, the lab's folder (its student files excepted), its solution, the datasets,
 * the lab's rubric entry and the grader version.
 */
int gr_kit_hash(const char *kit, const gr_lab_rubric *lab, char out[33], lk_error *err);

/**
 * The grader's own secret of report folder @p out, OUT/.grader-secret: GR_SECRET_BYTES from
 * /dev/urandom, made on first use (mode 0600, never through a link) and afterwards read back
 * only when it is a regular file of that size, owned by the grader's user and readable by
 * nobody else. A secret that fails these checks is an error that names the file to delete
 * (results sealed with it are then graded again).
 */
int gr_grader_secret(const char *out, unsigned char secret[GR_SECRET_BYTES], lk_error *err);

/** One canonical line per rubric setting of @p lab (hashed, and shown in reports). */
char *gr_rubric_lab_text(const gr_lab_rubric *lab);

#endif
