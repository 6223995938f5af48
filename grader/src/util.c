#define _GNU_SOURCE /* nftw, O_NOFOLLOW, strsignal */
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void out_of_memory(size_t n)
{
    fprintf(stderr, "labkit-grade: out of memory allocating %zu bytes: free some memory and "
                    "run again (finished results are kept and reused)\n", n);
    exit(1);
}

void *gr_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        out_of_memory(n);
    return p;
}

void *gr_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        out_of_memory(n * size);
    return p;
}

void *gr_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        out_of_memory(n);
    return q;
}

char *gr_xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = gr_xmalloc(n);
    memcpy(p, s, n);
    return p;
}

static void buf_reserve(gr_buf *b, size_t extra)
{
    if (b->len + extra + 1 <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->len + extra + 1)
        cap *= 2;
    b->s = gr_xrealloc(b->s, cap);
    b->cap = cap;
}

static void buf_vprintf(gr_buf *b, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0)
        return;
    buf_reserve(b, (size_t)n);
    vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
}

void gr_buf_printf(gr_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    buf_vprintf(b, fmt, ap);
    va_end(ap);
}

void gr_buf_puts(gr_buf *b, const char *s)
{
    size_t n = strlen(s);
    buf_reserve(b, n);
    memcpy(b->s + b->len, s, n + 1);
    b->len += n;
}

const char *gr_buf_str(const gr_buf *b)
{
    return b->s ? b->s : "";
}

char *gr_buf_take(gr_buf *b)
{
    char *s = b->s ? b->s : gr_xstrdup("");
    b->s = NULL;
    b->len = b->cap = 0;
    return s;
}

void gr_buf_free(gr_buf *b)
{
    free(b->s);
    b->s = NULL;
    b->len = b->cap = 0;
}

char *gr_strf(const char *fmt, ...)
{
    gr_buf b = {0};
    va_list ap;
    va_start(ap, fmt);
    buf_vprintf(&b, fmt, ap);
    va_end(ap);
    return gr_buf_take(&b);
}

int gr_mkdir_p(const char *path, mode_t mode, lk_error *err)
{
    char *p = gr_xstrdup(path);
    for (char *s = p + 1;; s++) {
        if (*s != '/' && *s != '\0')
            continue;
        char c = *s;
        *s = '\0';
        if (mkdir(p, mode) != 0 && errno != EEXIST) {
            int e = errno;
            lk_fail(err, "%s: cannot create the folder: %s: check the permissions of its parent",
                    p, strerror(e));
            free(p);
            return -1;
        }
        *s = c;
        if (c == '\0')
            break;
    }
    free(p);
    if (!gr_is_dir(path))
        return lk_fail(err, "%s: exists but is not a folder: remove it or choose another path",
                       path);
    return 0;
}

/* nftw passes no context: the callbacks report through these (the grader is single-threaded). */
static int tree_errno;
static char tree_failed[4096];
static uid_t tree_uid;
static gid_t tree_gid;

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)ftw;
    int rc = flag == FTW_DP ? rmdir(path) : unlink(path);
    if (rc != 0 && errno != ENOENT) {
        tree_errno = errno;
        snprintf(tree_failed, sizeof tree_failed, "%s", path);
        return 1;
    }
    return 0;
}

int gr_rm_rf(const char *path, lk_error *err)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return errno == ENOENT ? 0 : lk_fail(err, "%s: cannot inspect: %s", path, strerror(errno));
    /* Folders left read-only by a build would stop the removal: open them up first. */
    if (S_ISDIR(st.st_mode))
        gr_chown_tree(path, getuid(), getgid(), NULL);
    tree_errno = 0;
    if (nftw(path, remove_entry, 32, FTW_DEPTH | FTW_PHYS) != 0 || tree_errno)
        return lk_fail(err, "%s: cannot remove: %s: remove it by hand",
                       tree_errno ? tree_failed : path, strerror(tree_errno ? tree_errno : errno));
    return 0;
}

static int chown_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)ftw;
    /* An entry gone since the walk listed it was removed or renamed by a run beside this one
       (the reference runs share their cache folder). */
    if (flag == FTW_NS || lchown(path, tree_uid, tree_gid) != 0) {
        if (errno == ENOENT)
            return 0;
        tree_errno = errno;
        snprintf(tree_failed, sizeof tree_failed, "%s", path);
        return 1;
    }
    /* Folders must stay writable by their new owner even if a build made them read-only. */
    if (flag == FTW_D && (st->st_mode & 0700) != 0700)
        chmod(path, st->st_mode | 0700);
    return 0;
}

int gr_chown_tree(const char *path, uid_t uid, gid_t gid, lk_error *err)
{
    tree_uid = uid;
    tree_gid = gid;
    tree_errno = 0;
    if (nftw(path, chown_entry, 32, FTW_PHYS) != 0 || tree_errno)
        return lk_fail(err, "%s: cannot change the owner to %d:%d: %s",
                       tree_errno ? tree_failed : path, (int)uid, (int)gid,
                       strerror(tree_errno ? tree_errno : errno));
    return 0;
}

char *gr_read_file(const char *path, size_t max, size_t *len, lk_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        lk_fail(err, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    gr_buf b = {0};
    buf_reserve(&b, 4096);
    for (;;) {
        if (b.len > max) {
            lk_fail(err, "%s: larger than %zu bytes", path, max);
            close(fd);
            gr_buf_free(&b);
            return NULL;
        }
        buf_reserve(&b, 65536);
        ssize_t n = read(fd, b.s + b.len, b.cap - b.len - 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            lk_fail(err, "%s: cannot read: %s", path, strerror(errno));
            close(fd);
            gr_buf_free(&b);
            return NULL;
        }
        if (n == 0)
            break;
        b.len += (size_t)n;
    }
    close(fd);
    b.s[b.len] = '\0';
    if (b.len > max) {
        lk_fail(err, "%s: larger than %zu bytes", path, max);
        gr_buf_free(&b);
        return NULL;
    }
    if (len)
        *len = b.len;
    return b.s;
}

static int write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

int gr_copy_untrusted(const char *src, const char *dst, size_t max, lk_error *err)
{
    /* O_NOFOLLOW and O_NONBLOCK: a link is refused, a FIFO cannot block the grader. */
    int in = open(src, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (in < 0)
        return lk_fail(err, "%s: cannot open: %s", src,
                       errno == ELOOP ? "it is a symbolic link: submit the file itself"
                                      : strerror(errno));
    struct stat st;
    if (fstat(in, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(in);
        return lk_fail(err, "%s: not a regular file: submit the file itself", src);
    }
    if ((size_t)st.st_size > max) {
        close(in);
        return lk_fail(err, "%s: %lld bytes, more than the %zu allowed for a student file",
                       src, (long long)st.st_size, max);
    }
    size_t len;
    char *data = NULL;
    {
        gr_buf b = {0};
        buf_reserve(&b, (size_t)st.st_size + 1);
        ssize_t n;
        while ((n = read(in, b.s + b.len, b.cap - b.len - 1)) != 0) {
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0 || b.len + (size_t)n > max) {
                int e = n < 0 ? errno : EFBIG;
                close(in);
                gr_buf_free(&b);
                return lk_fail(err, "%s: cannot read: %s", src, strerror(e));
            }
            b.len += (size_t)n;
            buf_reserve(&b, 4096);
        }
        len = b.len;
        data = b.s;
    }
    close(in);
    int out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (out < 0) {
        free(data);
        return lk_fail(err, "%s: cannot create: %s", dst, strerror(errno));
    }
    int rc = write_all(out, data, len);
    int e = errno;
    free(data);
    if (close(out) != 0 && rc == 0)
        rc = -1, e = errno;
    if (rc != 0)
        return lk_fail(err, "%s: cannot write: %s", dst, strerror(e));
    if (fchmodat(AT_FDCWD, dst, 0644, 0) != 0)
        return lk_fail(err, "%s: cannot set its mode to 0644: %s", dst, strerror(errno));
    return 0;
}

static void sync_dir_of(const char *path)
{
    char *copy = gr_xstrdup(path);
    int fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
    free(copy);
}

int gr_write_atomic(const char *path, gr_writer writer, void *ctx, lk_error *err)
{
    char *tmp = gr_strf("%s.tmp.XXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        lk_fail(err, "%s: cannot create a temporary file next to it: %s", path, strerror(errno));
        free(tmp);
        return -1;
    }
    fchmod(fd, 0644);
    FILE *f = fdopen(fd, "w");
    if (!f) {
        close(fd);
        unlink(tmp);
        free(tmp);
        return lk_fail(err, "%s: cannot open a stream: %s", path, strerror(errno));
    }
    lk_error werr;
    lk_error_clear(&werr);
    int rc = writer(f, ctx, &werr);
    if (rc == 0 && (fflush(f) != 0 || ferror(f) || fsync(fileno(f)) != 0)) {
        lk_fail(&werr, "%s: cannot write: %s: check the free disk space", path, strerror(errno));
        rc = -1;
    }
    if (fclose(f) != 0 && rc == 0) {
        lk_fail(&werr, "%s: cannot write: %s: check the free disk space", path, strerror(errno));
        rc = -1;
    }
    if (rc == 0 && rename(tmp, path) != 0) {
        lk_fail(&werr, "%s: cannot rename the temporary file over it: %s", path, strerror(errno));
        rc = -1;
    }
    if (rc != 0) {
        unlink(tmp);
        if (err)
            *err = werr;
    } else {
        sync_dir_of(path);
    }
    free(tmp);
    return rc;
}

static int write_text(FILE *f, void *ctx, lk_error *err)
{
    (void)err;
    fputs(ctx, f);
    return 0;
}

int gr_write_atomic_text(const char *path, const char *text, lk_error *err)
{
    return gr_write_atomic(path, write_text, (void *)text, err);
}

int gr_exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

int gr_is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

void gr_safe_name(const char *in, char *out, size_t size)
{
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)in; *p && o + 1 < size; p++) {
        int ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                 (*p >= '0' && *p <= '9') || *p == '-' || *p == '_' || (*p == '.' && o > 0);
        out[o++] = ok ? (char)*p : '_';
    }
    if (o == 0 && size > 1)
        out[o++] = '_';
    if (size > 0)
        out[o] = '\0';
}

const char *gr_signal_name(int sig)
{
    static const struct { int sig; const char *name; } names[] = {
        {SIGHUP, "SIGHUP"},   {SIGINT, "SIGINT"},   {SIGQUIT, "SIGQUIT"}, {SIGILL, "SIGILL"},
        {SIGTRAP, "SIGTRAP"}, {SIGABRT, "SIGABRT"}, {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"},
        {SIGKILL, "SIGKILL"}, {SIGUSR1, "SIGUSR1"}, {SIGSEGV, "SIGSEGV"}, {SIGUSR2, "SIGUSR2"},
        {SIGPIPE, "SIGPIPE"}, {SIGALRM, "SIGALRM"}, {SIGTERM, "SIGTERM"}, {SIGCHLD, "SIGCHLD"},
        {SIGSTOP, "SIGSTOP"}, {SIGTSTP, "SIGTSTP"}, {SIGXCPU, "SIGXCPU"}, {SIGXFSZ, "SIGXFSZ"},
        {SIGSYS, "SIGSYS"},   {SIGVTALRM, "SIGVTALRM"}, {SIGPROF, "SIGPROF"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].sig == sig)
            return names[i].name;
    static char other[32];
    snprintf(other, sizeof other, "signal %d", sig);
    return other;
}

void gr_head(const char *text, int max_lines, size_t max_bytes, gr_buf *out)
{
    const char *p = text;
    int lines = 0;
    size_t bytes = 0;
    while (*p && lines < max_lines) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) + 1 : strlen(p);
        if (bytes + n > max_bytes) {
            size_t keep = max_bytes > bytes ? max_bytes - bytes : 0;
            buf_reserve(out, keep);
            memcpy(out->s + out->len, p, keep);
            out->len += keep;
            out->s[out->len] = '\0';
            gr_buf_puts(out, "...\n");
            p += n;
            lines++;
            break;
        }
        buf_reserve(out, n);
        memcpy(out->s + out->len, p, n);
        out->len += n;
        out->s[out->len] = '\0';
        if (!nl)
            gr_buf_puts(out, "\n");
        bytes += n;
        p += n;
        lines++;
    }
    if (*p) {
        int rest = 0;
        for (const char *q = p; *q; q++)
            rest += *q == '\n';
        if (p[strlen(p) - 1] != '\n')
            rest++;
        gr_buf_printf(out, "... (%d more line%s)\n", rest, rest == 1 ? "" : "s");
    }
}

char *gr_replace_all(const char *s, const char *from, const char *to)
{
    gr_buf b = {0};
    size_t n = strlen(from);
    if (n == 0)
        return gr_xstrdup(s);
    const char *p = s, *hit;
    while ((hit = strstr(p, from)) != NULL) {
        buf_reserve(&b, (size_t)(hit - p));
        memcpy(b.s + b.len, p, (size_t)(hit - p));
        b.len += (size_t)(hit - p);
        b.s[b.len] = '\0';
        gr_buf_puts(&b, to);
        p = hit + n;
    }
    gr_buf_puts(&b, p);
    return gr_buf_take(&b);
}

int gr_path_within(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/')
        n--;
    if (strncmp(path, dir, n) != 0)
        return 0;
    return path[n] == '\0' || path[n] == '/' || (n == 1 && dir[0] == '/');
}

void gr_utc_now(char *out, size_t size)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

char *gr_read_regular(const char *path, size_t max, size_t *len, lk_error *err)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        lk_fail(err, "%s: cannot open: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    if (!S_ISREG(st.st_mode) || (unsigned long long)st.st_size > max) {
        lk_fail(err, "%s: %s", path, S_ISREG(st.st_mode) ? "too large" : "not a regular file");
        close(fd);
        return NULL;
    }
    char *text = gr_xmalloc((size_t)st.st_size + 1);
    size_t got = 0;
    while (got < (size_t)st.st_size) {
        ssize_t n = read(fd, text + got, (size_t)st.st_size - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    close(fd);
    if (got != (size_t)st.st_size) {
        lk_fail(err, "%s: cannot read all of its %lld bytes", path, (long long)st.st_size);
        free(text);
        return NULL;
    }
    text[got] = '\0';
    if (len)
        *len = got;
    return text;
}

/* Is the digit run s[0..n) one of the session's seeds (seed + k, k < GR_SEED_SPAN)? */
static int session_seed(const char *s, size_t n, unsigned long long seed)
{
    unsigned long long v = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (ULLONG_MAX - d) / 10)
            return 0;
        v = v * 10 + d;
    }
    return n > 0 && v - seed < GR_SEED_SPAN;
}

/* Length of the run of characters accepted by @p is that ends just before text[end]. */
static size_t run_before(const char *text, size_t end, int (*is)(int))
{
    size_t i = end;
    while (i > 0 && is((unsigned char)text[i - 1]))
        i--;
    return end - i;
}

/* Does "KIND:ROWSxCOLS" (KIND lower-case letters) end just before text[end]? */
static int spec_head_before(const char *text, size_t end)
{
    size_t cols = run_before(text, end, isdigit);
    size_t i = end - cols;
    if (cols == 0 || i == 0 || text[i - 1] != 'x')
        return 0;
    size_t rows = run_before(text, --i, isdigit);
    i -= rows;
    if (rows == 0 || i == 0 || text[i - 1] != ':')
        return 0;
    return run_before(text, i - 1, islower) > 0;
}

char *gr_redact_seed(const char *text, unsigned long long seed)
{
    gr_buf b = {0};
    size_t kept = 0, i = 0;
    while (text[i]) {
        if (!isdigit((unsigned char)text[i])) {
            i++;
            continue;
        }
        size_t n = strspn(text + i, "0123456789");
        int spec = i > 0 && text[i - 1] == ':' && spec_head_before(text, i - 1);
        if ((spec || n >= 8) && session_seed(text + i, n, seed)) {
            size_t upto = spec ? i - 1 : i;
            gr_buf_printf(&b, "%.*s%s", (int)(upto - kept), text + kept,
                          spec ? " (hidden seed)" : "(hidden seed)");
            kept = i + n;
        }
        i += n;
    }
    gr_buf_puts(&b, text + kept);
    return gr_buf_take(&b);
}

unsigned gr_hash_name(const char *s)
{
    unsigned h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}
