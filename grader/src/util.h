/**
 * @file util.h
 * @brief Small helpers of the grader: growing strings, paths, files written atomically,
 * trees removed or re-owned, untrusted files copied safely.
 */
#ifndef GRADER_UTIL_H
#define GRADER_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "labkit/error.h"

/** A growing NUL-terminated string. A zeroed struct is an empty string. */
typedef struct gr_buf {
    char *s;    /**< The text (NULL while empty). */
    size_t len; /**< Its length. */
    size_t cap; /**< Bytes allocated. */
} gr_buf;

/** Append formatted text. */
void gr_buf_printf(gr_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/** Append a string. */
void gr_buf_puts(gr_buf *b, const char *s);
/** The text, "" when empty (never NULL). */
const char *gr_buf_str(const gr_buf *b);
/** Take ownership of the text (a malloc'd string, "" when empty) and reset @p b. */
char *gr_buf_take(gr_buf *b);
/** Free the text and reset @p b. */
void gr_buf_free(gr_buf *b);

/** malloc/calloc/realloc/strdup that end the grader with a message when memory runs out. */
void *gr_xmalloc(size_t n);
void *gr_xcalloc(size_t n, size_t size);
void *gr_xrealloc(void *p, size_t n);
char *gr_xstrdup(const char *s);
/** A malloc'd formatted string. */
char *gr_strf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/** Create @p path and its missing parents with @p mode. */
int gr_mkdir_p(const char *path, mode_t mode, lk_error *err);
/** Remove @p path and everything under it (symbolic links are removed, never followed). */
int gr_rm_rf(const char *path, lk_error *err);
/** Give @p path and everything under it to @p uid:@p gid (links themselves, not targets). */
int gr_chown_tree(const char *path, uid_t uid, gid_t gid, lk_error *err);

/** Read a whole file (at most @p max bytes, else an error); NUL-terminated; @p len may be NULL. */
char *gr_read_file(const char *path, size_t max, size_t *len, lk_error *err);

/**
 * Copy a file from an untrusted place: it must be a regular file (not a link, device or
 * FIFO) of at most @p max bytes. The copy is created with mode 0644.
 */
int gr_copy_untrusted(const char *src, const char *dst, size_t max, lk_error *err);

/** Writes the content of a file for gr_write_atomic(); returns 0 or -1 with @p err. */
typedef int (*gr_writer)(FILE *f, void *ctx, lk_error *err);

/**
 * Write @p path atomically: into a temporary file of the same folder, flushed and synced,
 * then renamed over @p path (and the folder synced). A reader sees the old or the new file,
 * never a part of one, even if the grader is killed meanwhile.
 */
int gr_write_atomic(const char *path, gr_writer writer, void *ctx, lk_error *err);
/** gr_write_atomic() of a string. */
int gr_write_atomic_text(const char *path, const char *text, lk_error *err);

/** Does @p path exist (any kind of file)? */
int gr_exists(const char *path);
/** Is @p path a directory? */
int gr_is_dir(const char *path);

/**
 * A name safe as one path component: letters, digits, '.', '-', '_' kept, other bytes
 * become '_', a leading '.' becomes '_'; an empty name becomes "_".
 */
void gr_safe_name(const char *in, char *out, size_t size);

/** Name of a signal, e.g. "SIGSEGV" ("signal 42" for unknown ones; static storage). */
const char *gr_signal_name(int sig);

/**
 * Append to @p out at most @p max_lines lines and @p max_bytes bytes of @p text, then
 * "... (N more lines)" when something was cut.
 */
void gr_head(const char *text, int max_lines, size_t max_bytes, gr_buf *out);

/** Replace every occurrence of @p from in @p s by @p to; a new malloc'd string. */
char *gr_replace_all(const char *s, const char *from, const char *to);

/** Is @p path equal to @p dir or inside it (both absolute, no trailing slash needed)? */
int gr_path_within(const char *path, const char *dir);

/** Current UTC date and time as ISO 8601 (e.g. 2025-01-31T12:00:00Z). */
void gr_utc_now(char *out, size_t size);

/**
 * Read a file the grader wrote itself, without trusting the name: opened with O_NOFOLLOW and
 * O_NONBLOCK (a link or a FIFO planted in its place is refused, never followed or waited on),
 * and it must be a regular file of at most @p max bytes. NUL-terminated; @p len may be NULL.
 */
char *gr_read_regular(const char *path, size_t max, size_t *len, lk_error *err);

/** The seeds a session derives from its seed S are S + k, k < GR_SEED_SPAN: hidden dataset
    i is S + i, performance instance i S + 1000 + i, hidden stretch dataset j S + 2000 + j. */
#define GR_SEED_SPAN 4096ULL

/**
 * @p text without the session seed @p seed, for what students see (a new malloc'd string): a
 * generator spec KIND:ROWSxCOLS:N whose N is one of the session's seeds becomes
 * "KIND:ROWSxCOLS (hidden seed)", and such an N of 8 digits or more standing alone becomes
 * "(hidden seed)" (a shorter number alone is too common to be told from other numbers).
 */
char *gr_redact_seed(const char *text, unsigned long long seed);

/** A 32-bit FNV-1a hash of @p s: a stable number for a name (e.g. a student's run user). */
unsigned gr_hash_name(const char *s);

#endif
