/**
 * @file jail.h
 * @brief What an untrusted command may see: a bubblewrap sandbox (Linux namespaces) with the
 * system and the toolkit read-only, the kit parts a lab needs read-only, the command's own
 * folder writable, a private size-capped /tmp, no network, its own pid namespace, the GPU
 * device nodes, and a seccomp filter against the system calls a kernel file has no use for.
 *
 * Everything else (solutions/, the rubric, the report folder, the reference cache, other
 * students, the instructor's home) does not exist inside. This, not the symbol check, is the
 * defence; it holds whether the grader runs as root (student code then runs as nobody) or as
 * an ordinary instructor account.
 */
#ifndef GRADER_JAIL_H
#define GRADER_JAIL_H

#include <stddef.h>

#include "labkit/error.h"

/** Where a command's box (its fresh, only writable folder) appears inside the jail. */
#define GR_BOX_PATH "/box"

/** Size of the private /tmp and /dev/shm of every sandboxed command. */
#define GR_JAIL_TMP_BYTES (256LL << 20)

/** The session-wide view of the machine that every sandboxed command gets. */
typedef struct gr_jail {
    char *bwrap;    /**< Absolute path of bwrap; NULL: no namespaces (--unsandboxed). */
    char **ro;      /**< Paths shown read-only at their own place (files or folders). */
    int nro;        /**< Their number. */
    char **links;   /**< Links to shown folders (e.g. /opt/cuda -> /opt/cuda-13.0), made as
                         links inside when no shown folder holds them already. */
    int nlinks;     /**< Their number. */
    char **hidden;  /**< Folders inside @ref ro shown empty (e.g. the labs' build folders). */
    int nhidden;    /**< Their number. */
    char **devices; /**< GPU device nodes passed through (/dev/nvidia*). */
    int ndevices;   /**< Their number. */
    int seccomp_fd; /**< A memfd holding the compiled seccomp filter, or -1. */
    int seccomp_inet_fd; /**< The same filter allowing IP sockets (loopback only, in the
                              sandbox's network namespace), for MPI launchers; or -1. */
} gr_jail;

/**
 * Find bwrap (PATH), and set up the system part of the view: /usr, the merged-/usr links,
 * the few /etc files compilers and the CUDA runtime read, /sys, the CUDA toolkit
 * @p cuda_home (its real folder when it is a link), the GPU nodes, the seccomp filter.
 * Returns -1 with @p err when bwrap is not installed.
 */
int gr_jail_init(gr_jail *j, const char *cuda_home, lk_error *err);

/** A jail that isolates nothing (--unsandboxed): commands run as before namespaces. */
void gr_jail_none(gr_jail *j);

/** Show @p path (file or folder, resolved) read-only; a missing path is skipped. */
void gr_jail_show(gr_jail *j, const char *path);

/** Show folder @p path empty inside a shown folder (skipped when it does not exist). */
void gr_jail_hide(gr_jail *j, const char *path);

/** Free what gr_jail_init() and the calls after it allocated. */
void gr_jail_free(gr_jail *j);

/**
 * The bwrap command line that runs @p prog with @p args (argv[1]... of the command) in the
 * jail: @p writable folders writable, @p readable paths read-only on top of the session's,
 * @p cwd as working folder, @p box (NULL: none) writable at GR_BOX_PATH, @p seccomp_fd the
 * descriptor number bwrap reads the filter from (-1: none), @p info_fd the one it writes the
 * sandbox's pid to (-1: none). A malloc'd NULL-terminated array of malloc'd strings
 * (gr_jail_argv_free).
 */
char **gr_jail_argv(const gr_jail *j, const char *prog, const char *const *args,
                    const char *cwd, const char *const *writable, const char *const *readable,
                    const char *box, int seccomp_fd, int info_fd);

/** The pid of the sandbox's init from what bwrap wrote to its info descriptor, or -1. */
int gr_jail_child_pid(const char *info);

/** Free a command line from gr_jail_argv(). */
void gr_jail_argv_free(char **argv);

/**
 * What to tell an instructor whose machine cannot start the sandbox: @p bwrap_said (bwrap's
 * own message) and how to enable unprivileged user namespaces, or --unsandboxed.
 */
char *gr_jail_refusal(const char *bwrap_said);

#endif
