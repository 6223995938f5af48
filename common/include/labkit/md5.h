/**
 * @file md5.h
 * @brief md5 digests (OpenSSL EVP) printed as 32 lowercase hex digits.
 *
 * md5 is used as the course uses it: a fingerprint of an output file, not for security.
 */
#ifndef LABKIT_MD5_H
#define LABKIT_MD5_H

#include <stddef.h>
#include "labkit/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Incremental md5 state (opaque). */
typedef struct lk_md5 lk_md5;

/** Start a digest; NULL (with @p err filled) if OpenSSL cannot provide md5. */
lk_md5 *lk_md5_begin(lk_error *err);
/** Add @p n bytes; on failure the state is left for the caller to lk_md5_abort(). */
int lk_md5_update(lk_md5 *ctx, const void *data, size_t n, lk_error *err);
/** Finish into @p hex (33 bytes with NUL) and free the state (also on failure). */
int lk_md5_end(lk_md5 *ctx, char hex[33], lk_error *err);
/** Free a digest without finishing it (NULL is fine). */
void lk_md5_abort(lk_md5 *ctx);

/** md5 of a buffer. */
int lk_md5_buffer(const void *data, size_t n, char hex[33], lk_error *err);
/** md5 of a file's bytes, read in 1 MiB chunks (any file size). */
int lk_md5_file(const char *path, char hex[33], lk_error *err);

#ifdef __cplusplus
}
#endif
#endif
