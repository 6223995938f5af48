#include "labkit/md5.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/evp.h>

struct lk_md5 {
    EVP_MD_CTX *ctx;
};

/* Files can be hundreds of MB: hash them in chunks of this size. */
#define MD5_CHUNK (1u << 20)

static const char *openssl_reason(char *buf, size_t size)
{
    unsigned long code = ERR_get_error();
    if (code == 0)
        snprintf(buf, size, "no OpenSSL error reported");
    else
        ERR_error_string_n(code, buf, size);
    ERR_clear_error();
    return buf;
}

lk_md5 *lk_md5_begin(lk_error *err)
{
    char why[256];
    lk_md5 *m = malloc(sizeof *m);
    if (!m) {
        lk_fail(err, "md5: out of memory for the digest state");
        return NULL;
    }
    m->ctx = EVP_MD_CTX_new();
    if (!m->ctx) {
        free(m);
        lk_fail(err, "md5: EVP_MD_CTX_new failed: %s", openssl_reason(why, sizeof why));
        return NULL;
    }
    if (EVP_DigestInit_ex(m->ctx, EVP_md5(), NULL) != 1) {
        EVP_MD_CTX_free(m->ctx);
        free(m);
        lk_fail(err,
                "md5: OpenSSL cannot provide md5: %s: md5 may be disabled (FIPS mode); "
                "use an OpenSSL configuration with the default provider",
                openssl_reason(why, sizeof why));
        return NULL;
    }
    return m;
}

int lk_md5_update(lk_md5 *m, const void *data, size_t n, lk_error *err)
{
    char why[256];
    if (!m)
        return lk_fail(err, "md5: update on a NULL digest state: call lk_md5_begin first");
    if (n == 0)
        return 0;
    if (EVP_DigestUpdate(m->ctx, data, n) != 1)
        return lk_fail(err, "md5: EVP_DigestUpdate failed: %s", openssl_reason(why, sizeof why));
    return 0;
}

int lk_md5_end(lk_md5 *m, char hex[33], lk_error *err)
{
    char why[256];
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    hex[0] = '\0';
    if (!m)
        return lk_fail(err, "md5: finish on a NULL digest state: call lk_md5_begin first");
    int ok = EVP_DigestFinal_ex(m->ctx, md, &len) == 1 && len == 16;
    lk_md5_abort(m);
    if (!ok)
        return lk_fail(err, "md5: EVP_DigestFinal_ex failed: %s", openssl_reason(why, sizeof why));
    static const char digits[] = "0123456789abcdef";
    for (int i = 0; i < 16; i++) {
        hex[2 * i] = digits[md[i] >> 4];
        hex[2 * i + 1] = digits[md[i] & 15];
    }
    hex[32] = '\0';
    return 0;
}

void lk_md5_abort(lk_md5 *m)
{
    if (!m)
        return;
    EVP_MD_CTX_free(m->ctx);
    free(m);
}

int lk_md5_buffer(const void *data, size_t n, char hex[33], lk_error *err)
{
    lk_md5 *m = lk_md5_begin(err);
    if (!m)
        return -1;
    if (lk_md5_update(m, data, n, err) != 0) {
        lk_md5_abort(m);
        return -1;
    }
    return lk_md5_end(m, hex, err);
}

int lk_md5_file(const char *path, char hex[33], lk_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return lk_fail(err, "%s: cannot open for md5: %s: check the path", path, strerror(errno));
    unsigned char *buf = malloc(MD5_CHUNK);
    lk_md5 *m = buf ? lk_md5_begin(err) : NULL;
    if (!m) {
        if (!buf)
            lk_fail(err, "%s: md5: out of memory for a %u-byte read buffer", path, MD5_CHUNK);
        free(buf);
        fclose(f);
        return -1;
    }
    size_t got;
    while ((got = fread(buf, 1, MD5_CHUNK, f)) > 0) {
        if (lk_md5_update(m, buf, got, err) != 0)
            goto fail;
    }
    if (ferror(f)) {
        lk_fail(err, "%s: read error while computing md5: %s", path, strerror(errno));
        goto fail;
    }
    free(buf);
    fclose(f);
    return lk_md5_end(m, hex, err);
fail:
    lk_md5_abort(m);
    free(buf);
    fclose(f);
    return -1;
}
