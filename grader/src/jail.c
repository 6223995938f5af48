#define _GNU_SOURCE /* memfd_create */
#include "jail.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

/* The /etc files a compiler, make, the CUDA runtime and mpirun read: the loader's cache, the
   alternatives links behind cc and c++, names of ids, the time zone, Open MPI's settings.
   Nothing else of /etc. */
static const char *const etc_files[] = {
    "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives",
    "/etc/passwd",      "/etc/group",      "/etc/nsswitch.conf", "/etc/localtime",
    /* Open MPI's system configuration (MCA parameters, default hostfile) for mpirun. */
    "/etc/openmpi",     NULL};

/* Top-level folders that are links into /usr on merged-/usr systems, or real folders. */
static const char *const top_dirs[] = {"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
                                       NULL};

static void add(char ***list, int *n, const char *s)
{
    for (int i = 0; i < *n; i++)
        if (strcmp((*list)[i], s) == 0)
            return;
    *list = gr_xrealloc(*list, (*n + 1) * sizeof **list);
    (*list)[(*n)++] = gr_xstrdup(s);
}

void gr_jail_show(gr_jail *j, const char *path)
{
    char real[PATH_MAX];
    if (!realpath(path, real))
        return;
    add(&j->ro, &j->nro, real);
    /* A path reached through a link (e.g. /opt/cuda) must work under its name too. */
    if (strcmp(real, path) != 0 && path[0] == '/')
        add(&j->links, &j->nlinks, path);
}

/* Is @p path inside a shown folder other than itself? */
static int shown_within(const gr_jail *j, const char *path)
{
    for (int i = 0; i < j->nro; i++)
        if (strcmp(j->ro[i], path) != 0 && gr_path_within(path, j->ro[i]))
            return 1;
    return 0;
}

void gr_jail_hide(gr_jail *j, const char *path)
{
    char real[PATH_MAX];
    if (realpath(path, real) && gr_is_dir(real))
        add(&j->hidden, &j->nhidden, real);
}

/* The system calls a kernel file has no use for and a sandbox escape would want, refused
   with EPERM (not killed: a library that probes them must fail politely). @p inet allows
   IP sockets: MPI launchers talk to their processes over loopback (the network namespace
   has nothing else). */
static int make_seccomp(int inet, lk_error *err)
{
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    if (!ctx)
        return lk_fail(err, "libseccomp: cannot create a filter");
    static const char *const denied[] = {
        "ptrace", "process_vm_readv", "process_vm_writev", "mount", "umount2", "pivot_root",
        "chroot", "unshare", "setns", "keyctl", "add_key", "request_key", "bpf",
        "userfaultfd", "kexec_load", "kexec_file_load", "init_module", "finit_module",
        "delete_module", "reboot", "swapon", "swapoff", "acct", "open_by_handle_at",
        "name_to_handle_at", "fsopen", "fsmount", "move_mount", "open_tree", NULL};
    int rc = 0;
    for (int i = 0; denied[i] && rc == 0; i++) {
        int nr = seccomp_syscall_resolve_name(denied[i]);
        if (nr != __NR_SCMP_ERROR)
            rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0);
    }
    /* Sockets: only local ones (the network namespace is empty anyway). */
    if (rc == 0 && !inet)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), SCMP_SYS(socket), 1,
                              SCMP_A0(SCMP_CMP_NE, AF_UNIX));
    /* Typing into the grader's terminal. */
    if (rc == 0)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1,
                              SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCSTI));
    int fd = rc == 0 ? memfd_create("labkit-grade-seccomp", MFD_CLOEXEC) : -1;
    if (fd >= 0 && seccomp_export_bpf(ctx, fd) != 0) {
        close(fd);
        fd = -1;
    }
    seccomp_release(ctx);
    if (fd < 0)
        return lk_fail(err, "libseccomp: cannot build the system-call filter (%s)",
                       rc ? strerror(-rc) : strerror(errno));
    return fd;
}

void gr_jail_none(gr_jail *j)
{
    memset(j, 0, sizeof *j);
    j->seccomp_fd = j->seccomp_inet_fd = -1;
}

int gr_jail_init(gr_jail *j, const char *cuda_home, lk_error *err)
{
    gr_jail_none(j);
    const char *path = getenv("PATH");
    char *copy = gr_xstrdup(path ? path : "/usr/bin:/bin"), *save = NULL;
    for (char *d = strtok_r(copy, ":", &save); d && !j->bwrap; d = strtok_r(NULL, ":", &save)) {
        char *cand = gr_strf("%s/bwrap", d);
        if (d[0] == '/' && access(cand, X_OK) == 0)
            j->bwrap = cand;
        else
            free(cand);
    }
    free(copy);
    if (!j->bwrap)
        return lk_fail(err, "bwrap (bubblewrap) is not installed or not on PATH: the grader "
                            "runs every student build and run in its sandbox (apt-get install "
                            "bubblewrap), or give --unsandboxed to grade without isolation");
    gr_jail_show(j, "/usr");
    for (int i = 0; etc_files[i]; i++)
        gr_jail_show(j, etc_files[i]);
    gr_jail_show(j, "/sys"); /* the CUDA runtime reads the PCI topology there */
    if (cuda_home)
        gr_jail_show(j, cuda_home);
    DIR *d = opendir("/dev");
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL)
            if (strncmp(e->d_name, "nvidia", 6) == 0) {
                char *node = gr_strf("/dev/%s", e->d_name);
                add(&j->devices, &j->ndevices, node);
                free(node);
            }
        closedir(d);
    }
    j->seccomp_fd = make_seccomp(0, err);
    j->seccomp_inet_fd = j->seccomp_fd < 0 ? -1 : make_seccomp(1, err);
    return j->seccomp_inet_fd < 0 ? -1 : 0;
}

void gr_jail_free(gr_jail *j)
{
    for (int i = 0; i < j->nro; i++)
        free(j->ro[i]);
    for (int i = 0; i < j->nhidden; i++)
        free(j->hidden[i]);
    for (int i = 0; i < j->nlinks; i++)
        free(j->links[i]);
    free(j->links);
    for (int i = 0; i < j->ndevices; i++)
        free(j->devices[i]);
    free(j->ro);
    free(j->hidden);
    free(j->devices);
    free(j->bwrap);
    if (j->seccomp_fd >= 0)
        close(j->seccomp_fd);
    if (j->seccomp_inet_fd >= 0)
        close(j->seccomp_inet_fd);
    gr_jail_none(j);
}

typedef struct argv_buf {
    char **v;
    int n, cap;
} argv_buf;

static void push(argv_buf *a, const char *s)
{
    if (a->n + 2 > a->cap)
        a->v = gr_xrealloc(a->v, (a->cap = a->cap ? 2 * a->cap : 64) * sizeof *a->v);
    a->v[a->n++] = gr_xstrdup(s);
    a->v[a->n] = NULL;
}

static void push3(argv_buf *a, const char *opt, const char *x, const char *y)
{
    push(a, opt);
    push(a, x);
    if (y)
        push(a, y);
}

char **gr_jail_argv(const gr_jail *j, const char *prog, const char *const *args,
                    const char *cwd, const char *const *writable, const char *const *readable,
                    const char *box, int seccomp_fd, int info_fd)
{
    argv_buf a = {0};
    char size[32];
    snprintf(size, sizeof size, "%lld", GR_JAIL_TMP_BYTES);
    push(&a, j->bwrap);
    /* Every namespace bwrap knows (user, pid, net, ipc, uts, cgroup); never --share-net. A
       new session keeps the command off the grader's terminal. */
    push(&a, "--unshare-all");
    push(&a, "--die-with-parent");
    push(&a, "--new-session");
    push(&a, "--cap-drop");
    push(&a, "ALL");
    push3(&a, "--proc", "/proc", NULL);
    push3(&a, "--dev", "/dev", NULL);
    for (int i = 0; i < j->ndevices; i++)
        push3(&a, "--dev-bind-try", j->devices[i], j->devices[i]);
    push3(&a, "--size", size, NULL);
    push3(&a, "--tmpfs", "/dev/shm", NULL);
    push3(&a, "--size", size, NULL);
    push3(&a, "--tmpfs", "/tmp", NULL);
    for (int i = 0; top_dirs[i]; i++) {
        char target[PATH_MAX];
        ssize_t len = readlink(top_dirs[i], target, sizeof target - 1);
        if (len > 0) {
            target[len] = '\0';
            push3(&a, "--symlink", target, top_dirs[i]);
        } else if (gr_is_dir(top_dirs[i])) {
            push3(&a, "--ro-bind", top_dirs[i], top_dirs[i]);
        }
    }
    for (int i = 0; i < j->nro; i++)
        if (!shown_within(j, j->ro[i]))
            push3(&a, "--ro-bind-try", j->ro[i], j->ro[i]);
    for (int i = 0; i < j->nlinks; i++) {
        char target[PATH_MAX];
        if (!shown_within(j, j->links[i]) && realpath(j->links[i], target))
            push3(&a, "--symlink", target, j->links[i]);
    }
    for (int i = 0; i < j->nhidden; i++)
        push3(&a, "--tmpfs", j->hidden[i], NULL);
    for (const char *const *r = readable; r && *r; r++)
        push3(&a, "--ro-bind", *r, *r);
    for (const char *const *w = writable; w && *w; w++)
        push3(&a, "--bind", *w, *w);
    if (box)
        push3(&a, "--bind", box, GR_BOX_PATH);
    /* The folders bwrap made for the mount points (the kit's root, the folders above a run
       folder) are on its own root: read-only, as the rest. */
    push3(&a, "--remount-ro", "/", NULL);
    if (cwd)
        push3(&a, "--chdir", cwd, NULL);
    if (seccomp_fd >= 0) {
        char fd[16];
        snprintf(fd, sizeof fd, "%d", seccomp_fd);
        push3(&a, "--seccomp", fd, NULL);
    }
    if (info_fd >= 0) {
        char fd[16];
        snprintf(fd, sizeof fd, "%d", info_fd);
        push3(&a, "--info-fd", fd, NULL);
    }
    push(&a, "--");
    push(&a, prog);
    for (const char *const *x = args; x && *x; x++)
        push(&a, *x);
    return a.v;
}

void gr_jail_argv_free(char **argv)
{
    for (char **p = argv; p && *p; p++)
        free(*p);
    free(argv);
}

int gr_jail_child_pid(const char *info)
{
    const char *key = info ? strstr(info, "\"child-pid\"") : NULL;
    const char *colon = key ? strchr(key, ':') : NULL;
    long pid = colon ? strtol(colon + 1, NULL, 10) : -1;
    return pid > 1 && pid < INT_MAX ? (int)pid : -1;
}

char *gr_jail_refusal(const char *bwrap_said)
{
    const char *said = bwrap_said && bwrap_said[0] ? bwrap_said : "no message";
    if (strncmp(said, "bwrap: ", 7) == 0)
        said += 7;
    /* bwrap words a refused namespace in several ways, depending on version and kernel. */
    int userns = strstr(said, "namespace") || strstr(said, "uid map") ||
                 strstr(said, "Operation not permitted") || strstr(said, "Permission denied");
    return gr_strf(
        "the sandbox cannot start (bwrap: %s): the grader runs student code only inside it. "
        "%s Or grade without isolation with --unsandboxed (every report then says so)", said,
        userns ? "Enable unprivileged user namespaces: `sysctl -w "
                 "kernel.unprivileged_userns_clone=1` (Debian kernels), `sysctl -w "
                 "user.max_user_namespaces=15000` if it is 0, and on Ubuntu 23.10+ `sysctl -w "
                 "kernel.apparmor_restrict_unprivileged_userns=0` (or an AppArmor profile for "
                 "bwrap); in a container, allow user namespaces (e.g. Docker --security-opt "
                 "seccomp=unconfined)."
               : "Run `bwrap --unshare-all --ro-bind / / true` to see whether bubblewrap works "
                 "on this machine at all.");
}
