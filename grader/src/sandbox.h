/**
 * @file sandbox.h
 * @brief Running an untrusted command with limits: its own process group, a wall-clock
 * limit, rlimits (CPU, file size, processes, address space), capped output, when the
 * grader runs as root an unprivileged user (nobody) so that the process limit holds, and
 * inside the jail (jail.h) what it may see of the machine.
 *
 * Whatever the command does (crash, hang, fork, print without end), gr_sandbox_run()
 * returns with the reason, and no process of its group is left behind.
 */
#ifndef GRADER_SANDBOX_H
#define GRADER_SANDBOX_H

#include <signal.h>
#include <sys/types.h>

#include "jail.h"
#include "labkit/error.h"

/** Uid and gid that untrusted commands run as when the grader is root (nobody). */
#define GR_UNPRIVILEGED_ID 65534
/** First of the users a student's runs get when the grader is root (GR_RUN_IDS of them, as
    isolate's boxes have): the process limit then counts one student's processes only. */
#define GR_RUN_ID_BASE 60000
#define GR_RUN_IDS 4096

/** Limits of one command. A field of 0 means: no limit of that kind. */
typedef struct gr_limits {
    double wall_s;          /**< Wall-clock seconds before the whole group is killed. */
    long cpu_s;             /**< RLIMIT_CPU, seconds of CPU time (SIGXCPU then SIGKILL). */
    long long file_bytes;   /**< RLIMIT_FSIZE: largest file the command may write. */
    long long output_bytes; /**< Cap on stdout + stderr together; the group is killed past it. */
    long long as_bytes;     /**< RLIMIT_AS (not for CUDA programs: they reserve huge ranges). */
    long nproc;             /**< Processes/threads the command may add to its user's count. */
    int drop;               /**< When the grader is root: run as GR_UNPRIVILEGED_ID... */
    unsigned run_id;        /**< ...or as this uid and gid when not 0 (a student's own). */
    const gr_jail *jail;    /**< The sandbox (jail.h) for untrusted commands; NULL for the
                                 kit's own tools (make lib, the GPU probe). */
    int inet;               /**< Allow IP sockets in the jail (an MPI launcher and its
                                 processes talk over the sandbox's own loopback). */
    long quota_files;       /**< Entries the command's box (gr_cmd.box) may hold; 0: none. */
    long long quota_bytes;  /**< Bytes (allocated blocks) its box may hold; 0: no limit. */
} gr_limits;

/** A command to run. */
typedef struct gr_cmd {
    const char *const *argv;  /**< Program and arguments; argv[0] is looked up in PATH. */
    const char *cwd;          /**< Working folder (NULL: the grader's). */
    const char *out_path;     /**< File receiving stdout (NULL: /dev/null). */
    const char *err_path;     /**< File receiving stderr (NULL: the same file as stdout). */
    const char *result_path;  /**< File opened as descriptor @ref result_fd (NULL: none). */
    int result_fd;            /**< Descriptor number of the result file in the command. */
    const char *const *env;   /**< Extra NAME=VALUE entries (NULL-terminated, may be NULL). */
    const char *const *writable; /**< In a jail: the folders it may write (NULL-terminated). */
    const char *const *readable; /**< In a jail: more paths it may read (NULL-terminated). */
    const char *box;          /**< A fresh folder that is the command's working folder and,
                                   in a jail, its only writable one, shown at GR_BOX_PATH so
                                   that no path it plants means anything outside (NULL:
                                   none; @ref cwd is used). */
} gr_cmd;

/** How a command ended. */
typedef enum gr_end {
    GR_END_EXITED,      /**< It exited; @ref gr_outcome.status is the exit status. */
    GR_END_SIGNALED,    /**< A signal killed it; @ref gr_outcome.status is the signal. */
    GR_END_TIMEOUT,     /**< It ran past the wall-clock limit; the group was killed. */
    GR_END_OUTPUT_CAP,  /**< Its output passed the cap; the group was killed. */
    GR_END_NOT_STARTED, /**< The program could not be started (not found, not executable). */
    GR_END_INTERRUPTED, /**< The grader was asked to stop; the group was killed. */
    GR_END_QUOTA        /**< Its box held more files or bytes than allowed; killed. */
} gr_end;

/** What happened to a command. */
typedef struct gr_outcome {
    gr_end end;              /**< How it ended. */
    int status;              /**< Exit status or signal number. */
    double wall_s;           /**< Wall-clock seconds it ran. */
    long long output_bytes;  /**< Bytes it wrote to stdout and stderr. */
    int pgid;                /**< Its process group (all gone by the time the call returns). */
    char reason[512];        /**< One line, e.g. "crashed: SIGSEGV (Segmentation fault)". */
} gr_outcome;

/** Descriptor (O_APPEND) receiving one line per command run: when it ended (seconds after
    gr_command_log_t0), its seconds, outcome, folder, command line; -1: none. The session
    opens OUT/commands.log. */
extern int gr_command_log;
/** What starts each line a GPU worker prints ("gpu1 "; empty outside the workers): the
    workers share the console. */
extern char gr_console_prefix[16];
/** lk_wall_seconds() when the session opened the command log. */
extern double gr_command_log_t0;

/** Set by the grader's SIGINT/SIGTERM handler: running commands are killed at once. */
extern volatile sig_atomic_t gr_stop_requested;

/**
 * Run @p cmd under @p lim and wait for it. Returns 0 when the command ran, whatever its fate
 * (see @p out), and -1 with @p err only when the grader itself could not do its part
 * (cannot open the output files, cannot fork).
 */
int gr_sandbox_run(const gr_cmd *cmd, const gr_limits *lim, gr_outcome *out, lk_error *err);

/**
 * Open @p path for writing without following a link, creating it (mode 0644) or emptying
 * it, and refuse what is not a regular file (a FIFO planted there would block the grader):
 * a descriptor, or -1 with @p err.
 */
int gr_open_for_writing(const char *path, lk_error *err);

/** Did the command end normally with exit status 0? */
int gr_outcome_ok(const gr_outcome *o);

/** Does the sandbox switch to GR_UNPRIVILEGED_ID (the grader is root and @p lim asks)? */
int gr_sandbox_drops(const gr_limits *lim);

/** Uid and gid the commands run as under @p lim. */
void gr_sandbox_ids(const gr_limits *lim, uid_t *uid, gid_t *gid);

/**
 * Count the tasks (processes and threads) of user @p uid, as RLIMIT_NPROC counts them.
 */
long gr_count_tasks(uid_t uid);

/**
 * flock @p op (LOCK_SH or LOCK_EX) on @p path (created if needed, mode 0666), the @p what
 * lock of the messages, printing @p waiting once if it must wait, at most @p timeout_s
 * seconds (0: no deadline). Returns the descriptor holding it, or -1 with @p err.
 */
int gr_take_lock(const char *path, int op, const char *what, double timeout_s,
                 const char *waiting, lk_error *err);

/**
 * Take the machine-wide GPU lock at @p path (created if needed, mode 0666), waiting for
 * other graders at most @p timeout_s seconds (0: no deadline); prints one line while
 * waiting. Returns the descriptor holding the lock, or -1 with @p err (the deadline passed,
 * or the grader was interrupted).
 */
int gr_gpu_lock(const char *path, double timeout_s, lk_error *err);
/** As gr_gpu_lock() without waiting: -1 with @p err when another process holds it. */
int gr_gpu_trylock(const char *path, lk_error *err);
/**
 * Take the host lock at @p path, which every grader of one of the machine's GPUs (--gpus)
 * holds shared while it runs its GPU stages: exclusive when @p alone (nothing else runs
 * them then), else shared. A grader waiting to take it exclusive goes before those that
 * would take it shared after it asked (PATH.gate). Waits as gr_gpu_lock() does; release with
 * gr_gpu_unlock().
 */
int gr_host_lock(const char *path, int alone, double timeout_s, lk_error *err);
/** Release a lock taken by gr_gpu_lock() or gr_host_lock() (-1 is ignored). */
void gr_gpu_unlock(int fd);

#endif
