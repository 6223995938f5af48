#include "labkit/grid_io.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "labkit/cli.h"
#include "labkit/md5.h"

/* ------------------------------------------------------------------------------------------
 * Tokenizer: whitespace-separated tokens read in large chunks, with line and column.
 * ---------------------------------------------------------------------------------------- */

/* Largest read; also the longest token accepted (no number is that long). */
#define LEX_CHUNK ((size_t)4 << 20)
/* Small files get a small buffer, grown only if a token needs it. */
#define LEX_MIN ((size_t)4096)

typedef struct lexer {
    FILE *f;
    const char *path;
    char *buf;             /* cap + 1 bytes: room for a NUL after the last token */
    size_t cap, len, pos;  /* buffer size, bytes held, next byte to scan */
    long long base;        /* file offset of buf[0] */
    long long line;        /* line of buf[pos], from 1 */
    long long line_start;  /* file offset where that line starts */
    long long total;       /* bytes read so far */
    int eof;
    int last_nl;           /* the last byte read is '\n' */
    /* The current token (valid until the next lex_next). */
    char *tok;
    size_t tlen;
    long long tline, tcol;
    int tfirst;            /* first token of its line */
    long long prev_tline;
    int pushed;            /* lex_next returns the current token again */
} lexer;

/* The C locale's isspace(), which is what the course's fscanf("%s") splits on. */
static inline int is_ws(unsigned char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }
static inline int is_digit(unsigned char c) { return c >= '0' && c <= '9'; }

static int lex_open(lexer *lx, const char *path, lk_error *err)
{
    memset(lx, 0, sizeof *lx);
    lx->path = path;
    lx->line = 1;
    lx->f = fopen(path, "rb");
    if (!lx->f)
        return lk_fail(err, "%s: cannot open: %s: check the path and the file's permissions",
                       path, strerror(errno));
    struct stat st;
    lx->cap = LEX_CHUNK;
    if (fstat(fileno(lx->f), &st) == 0) {
        if (S_ISDIR(st.st_mode)) {
            fclose(lx->f);
            return lk_fail(err, "%s: is a directory: expected a grid file", path);
        }
        if (S_ISREG(st.st_mode) && (unsigned long long)st.st_size < LEX_CHUNK)
            lx->cap = (size_t)st.st_size < LEX_MIN ? LEX_MIN : (size_t)st.st_size;
    }
    lx->buf = malloc(lx->cap + 1);
    if (!lx->buf) {
        fclose(lx->f);
        return lk_fail(err, "%s: out of memory for a read buffer", path);
    }
    return 0;
}

static void lex_close(lexer *lx)
{
    free(lx->buf);
    fclose(lx->f);
}

/* Append more bytes to the buffer: 1 if some were read, 0 at end of file, -1 on error. */
static int lex_fill(lexer *lx, lk_error *err)
{
    if (lx->eof)
        return 0;
    size_t n = fread(lx->buf + lx->len, 1, lx->cap - lx->len, lx->f);
    if (n == 0) {
        if (ferror(lx->f))
            return lk_fail(err, "%s: read error: %s", lx->path, strerror(errno));
        lx->eof = 1;
        return 0;
    }
    lx->total += (long long)n;
    lx->last_nl = lx->buf[lx->len + n - 1] == '\n';
    lx->len += n;
    return 1;
}

/* Quote a token for a message: at most 40 characters, non-printable bytes as \xNN. */
static const char *quote(const char *s, size_t n, char *out, size_t size)
{
    const size_t show = 40;
    size_t o = 0;
    out[o++] = '\'';
    for (size_t i = 0; i < n && i < show && o + 8 < size; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x7f && c != '\\')
            out[o++] = (char)c;
        else
            o += (size_t)snprintf(out + o, size - o, "\\x%02x", c);
    }
    if (n > show)
        snprintf(out + o, size - o, "...' (%zu characters)", n);
    else
        snprintf(out + o, size - o, "'");
    return out;
}

/* Next token: 1 if there is one, 0 at end of file, -1 on error. */
static int lex_next(lexer *lx, lk_error *err)
{
    if (lx->pushed) {
        lx->pushed = 0;
        return 1;
    }
    for (;;) {
        const char *b = lx->buf;
        size_t p = lx->pos, len = lx->len;
        while (p < len && is_ws((unsigned char)b[p])) {
            if (b[p] == '\n') {
                lx->line++;
                lx->line_start = lx->base + (long long)p + 1;
            }
            p++;
        }
        lx->pos = p;
        if (p < len)
            break;
        lx->base += (long long)len;
        lx->len = lx->pos = 0;
        int r = lex_fill(lx, err);
        if (r <= 0)
            return r;
    }
    size_t start = lx->pos;
    long long tcol = lx->base + (long long)start - lx->line_start + 1;
    for (;;) {
        size_t p = lx->pos;
        while (p < lx->len && !is_ws((unsigned char)lx->buf[p]))
            p++;
        lx->pos = p;
        if (p < lx->len || lx->eof)
            break;
        if (start == 0 && lx->len == lx->cap && lx->cap < LEX_CHUNK) {
            size_t cap = lx->cap * 2 < LEX_CHUNK ? lx->cap * 2 : LEX_CHUNK;
            char *b = realloc(lx->buf, cap + 1);
            if (!b)
                return lk_fail(err, "%s: out of memory for a read buffer", lx->path);
            lx->buf = b;
            lx->cap = cap;
        } else if (start == 0 && lx->len == lx->cap) {
            char q[256];
            return lk_fail(err,
                           "%s:%lld:%lld: token longer than %zu bytes: found %s: expected "
                           "numbers or header keys separated by whitespace",
                           lx->path, lx->line, tcol, LEX_CHUNK,
                           quote(lx->buf, lx->len, q, sizeof q));
        }
        /* The token runs past the buffer: move it to the front and read more. */
        memmove(lx->buf, lx->buf + start, lx->len - start);
        lx->base += (long long)start;
        lx->len -= start;
        lx->pos -= start;
        start = 0;
        if (lex_fill(lx, err) < 0)
            return -1;
    }
    lx->tok = lx->buf + start;
    lx->tlen = lx->pos - start;
    lx->tline = lx->line;
    lx->tcol = tcol;
    lx->tfirst = lx->tline != lx->prev_tline;
    lx->prev_tline = lx->tline;
    return 1;
}

/* Line on which the file ends (a final '\n' closes the last line, it does not open one). */
static long long lex_end_line(const lexer *lx)
{
    if (lx->total == 0)
        return 1;
    return lx->last_nl ? lx->line - 1 : lx->line;
}

/* ------------------------------------------------------------------------------------------
 * Numbers: plain decimal syntax only, converted to exactly the double the course's atof gives.
 * ---------------------------------------------------------------------------------------- */

enum num_kind { NUM_OK, NUM_BAD, NUM_NAN, NUM_INF, NUM_HEX, NUM_RANGE };

/* Why a token that is not plain decimal was rejected: strtod would accept some of these. */
static int classify_bad(const char *s, size_t n)
{
    if (n > 0 && (s[0] == '+' || s[0] == '-'))
        s++, n--;
    if ((n == 3 && strncasecmp(s, "nan", 3) == 0) || (n > 4 && strncasecmp(s, "nan(", 4) == 0))
        return NUM_NAN;
    if ((n == 3 && strncasecmp(s, "inf", 3) == 0) ||
        (n == 8 && strncasecmp(s, "infinity", 8) == 0))
        return NUM_INF;
    if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
        return NUM_HEX;
    return NUM_BAD;
}

/* 10^0 .. 10^22: every one is exactly representable as a double. */
static const double pow10_exact[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                       1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                       1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/*
 * Parse a token in the lexer's buffer (writable one byte past its end). Accepted syntax:
 * [+-] (digits [. [digits]] | . digits) [(e|E) [+-] digits].
 */
static int parse_number(char *s, size_t n, double *out)
{
    size_t i = 0, digits = 0;
    long long frac = 0, e = 0;
    uint64_t m = 0;
    int neg = 0, exact = 1;
    if (i < n && (s[i] == '+' || s[i] == '-'))
        neg = s[i++] == '-';
    for (int in_frac = 0;; i++) {
        if (i < n && s[i] == '.' && !in_frac) {
            in_frac = 1;
            continue;
        }
        if (i == n || !is_digit((unsigned char)s[i]))
            break;
        digits++;
        frac += in_frac;
        if (exact) {
            m = m * 10 + (uint64_t)(s[i] - '0');
            exact = m <= ((uint64_t)1 << 53);
        }
    }
    if (digits == 0)
        return classify_bad(s, n);
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        size_t edigits = 0;
        int eneg = 0;
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-'))
            eneg = s[i++] == '-';
        for (; i < n && is_digit((unsigned char)s[i]); i++, edigits++)
            if (e < 1000000)
                e = e * 10 + (s[i] - '0');
        if (edigits == 0)
            return classify_bad(s, n);
        if (eneg)
            e = -e;
    }
    if (i != n)
        return classify_bad(s, n);
#if FLT_EVAL_METHOD == 0
    /* Clinger's fast path: an exact integer times or over an exact power of ten is one
       correctly rounded operation, so it gives strtod's (and atof's) double, ~3x faster. */
    long long e10 = e - frac;
    if (exact && e10 >= -22 && e10 <= 22) {
        double v = (double)m;
        v = e10 < 0 ? v / pow10_exact[-e10] : v * pow10_exact[e10];
        *out = neg ? -v : v;
        return NUM_OK;
    }
#endif
    char saved = s[n];
    s[n] = '\0';
    char *end;
    double v = strtod(s, &end);
    s[n] = saved;
    if (end != s + n)
        return NUM_BAD;
    if (!isfinite(v))
        return NUM_RANGE;
    *out = v;
    return NUM_OK;
}

/* Does the token look like the start of a body (a number, even a malformed one)? */
static int looks_numeric(const char *s, size_t n)
{
    unsigned char c = (unsigned char)s[0];
    if (is_digit(c) || c == '+' || c == '-' || c == '.')
        return 1;
    int k = classify_bad(s, n);
    return k == NUM_NAN || k == NUM_INF;
}

static int number_fail(lk_error *err, const lexer *lx, const char *what, int kind)
{
    char q[256];
    quote(lx->tok, lx->tlen, q, sizeof q);
    const char *p = lx->path;
    long long l = lx->tline, c = lx->tcol;
    switch (kind) {
    case NUM_NAN:
        return lk_fail(err,
                       "%s:%lld:%lld: %s is NaN: found %s: NaN is not allowed in grid files; "
                       "use a finite number (NODATA_value marks missing cells)",
                       p, l, c, what, q);
    case NUM_INF:
        return lk_fail(err,
                       "%s:%lld:%lld: %s is infinite: found %s: infinity is not allowed in "
                       "grid files; use a finite number",
                       p, l, c, what, q);
    case NUM_HEX:
        return lk_fail(err,
                       "%s:%lld:%lld: %s is a hexadecimal float: found %s: only plain decimal "
                       "numbers are accepted, such as -12.5, 3e-4, .5 or 7.",
                       p, l, c, what, q);
    case NUM_RANGE:
        return lk_fail(err,
                       "%s:%lld:%lld: %s is out of the range of a double: found %s: values "
                       "must be finite (magnitude at most 1.7976931348623157e308)",
                       p, l, c, what, q);
    default:
        return lk_fail(err,
                       "%s:%lld:%lld: %s is not a number: found %s: expected a decimal number "
                       "such as -12.5, 3e-4, .5 or 7.",
                       p, l, c, what, q);
    }
}

/* ------------------------------------------------------------------------------------------
 * Header
 * ---------------------------------------------------------------------------------------- */

enum { K_NCOLS, K_NROWS, K_XLL, K_YLL, K_CELLSIZE, K_NODATA, K_COUNT };

static const struct {
    const char *name;
    int slot;
    int center; /* xllcenter / yllcenter */
} header_keys[] = {
    {"ncols", K_NCOLS, 0},        {"nrows", K_NROWS, 0},         {"xllcorner", K_XLL, 0},
    {"xllcenter", K_XLL, 1},      {"yllcorner", K_YLL, 0},       {"yllcenter", K_YLL, 1},
    {"cellsize", K_CELLSIZE, 0},  {"NODATA_value", K_NODATA, 0},
};
#define NKEYS ((int)(sizeof header_keys / sizeof header_keys[0]))

static const char *const slot_names[K_COUNT] = {"ncols",    "nrows",    "xllcorner",
                                                "yllcorner", "cellsize", "NODATA_value"};

#define VALID_KEYS                                                                            \
    "ncols, nrows, xllcorner (or xllcenter), yllcorner (or yllcenter), cellsize, "          \
    "NODATA_value"

static int find_key(const char *s, size_t n)
{
    for (int k = 0; k < NKEYS; k++)
        if (strlen(header_keys[k].name) == n && strncasecmp(s, header_keys[k].name, n) == 0)
            return k;
    return -1;
}

/* ncols/nrows: 0 ok, 1 not a positive integer, 2 too large. */
static int parse_dim(const char *s, size_t n, int *out)
{
    size_t i = 0;
    long long v = 0;
    if (n > 0 && s[0] == '+')
        i++;
    if (i == n)
        return 1;
    for (; i < n; i++) {
        if (!is_digit((unsigned char)s[i]))
            return 1;
        if (v <= LK_GRID_MAX_DIM)
            v = v * 10 + (s[i] - '0');
    }
    if (v == 0)
        return 1;
    if (v > LK_GRID_MAX_DIM)
        return 2;
    *out = (int)v;
    return 0;
}

typedef struct seen_key {
    int seen;
    char spelled[16]; /* the key as written */
    long long line, col;
} seen_key;

/*
 * Parse `key value` pairs. In .asc mode (asc != 0) the header ends before the first token
 * that starts a line and looks numeric; that token is pushed back for the body.
 */
static int parse_header(lexer *lx, int asc, lk_grid_header *out, lk_error *err)
{
    seen_key seen[K_COUNT];
    int center[K_COUNT] = {0}, dims[2] = {0, 0};
    double val[K_COUNT] = {0};
    long long ntok = 0, dims_line = 0;
    char q[256];
    const char *path = lx->path;
    memset(seen, 0, sizeof seen);
    val[K_NODATA] = -9999.0;

    for (;;) {
        int r = lex_next(lx, err);
        if (r < 0)
            return -1;
        if (r == 0)
            break;
        ntok++;
        int k = find_key(lx->tok, lx->tlen);
        if (k < 0) {
            int numeric = looks_numeric(lx->tok, lx->tlen);
            int required = seen[K_NCOLS].seen && seen[K_NROWS].seen && seen[K_XLL].seen &&
                           seen[K_YLL].seen && seen[K_CELLSIZE].seen;
            if (asc && numeric && lx->tfirst) {
                lx->pushed = 1; /* the body starts here */
                ntok--;
                break;
            }
            quote(lx->tok, lx->tlen, q, sizeof q);
            if (asc && numeric)
                return lk_fail(err,
                               "%s:%lld:%lld: found the number %s where a header key was "
                               "expected: each header line holds one key and its value; the "
                               "header ends at the first line that starts with a number",
                               path, lx->tline, lx->tcol, q);
            if (!asc && required && (numeric || seen[K_NODATA].seen))
                return lk_fail(err,
                               "%s:%lld:%lld: extra token %s after the header: a header file "
                               "holds only the key value pairs " VALID_KEYS
                               "; remove it (a body belongs in its own file)",
                               path, lx->tline, lx->tcol, q);
            if (numeric)
                return lk_fail(err,
                               "%s:%lld:%lld: found the number %s where a header key was "
                               "expected: expected one of " VALID_KEYS,
                               path, lx->tline, lx->tcol, q);
            return lk_fail(err,
                           "%s:%lld:%lld: unknown header key %s: expected one of " VALID_KEYS
                           " (case does not matter)",
                           path, lx->tline, lx->tcol, q);
        }
        int slot = header_keys[k].slot;
        if (seen[slot].seen)
            return lk_fail(err,
                           "%s:%lld:%lld: duplicate header key '%.*s': '%s' was already "
                           "given at line %lld: give each key once",
                           path, lx->tline, lx->tcol, (int)lx->tlen, lx->tok,
                           seen[slot].spelled, seen[slot].line);
        seen_key key = {1, "", lx->tline, lx->tcol};
        snprintf(key.spelled, sizeof key.spelled, "%.*s", (int)lx->tlen, lx->tok);

        r = lex_next(lx, err);
        if (r < 0)
            return -1;
        if (r == 0)
            return lk_fail(err,
                           "%s:%lld:%lld: missing value for header key '%s': the file ends "
                           "after the key: expected a number after it",
                           path, key.line, key.col, key.spelled);
        if (find_key(lx->tok, lx->tlen) >= 0)
            return lk_fail(err,
                           "%s:%lld:%lld: missing value for header key '%s': found the key "
                           "'%.*s' instead: expected a number after each key",
                           path, key.line, key.col, key.spelled, (int)lx->tlen, lx->tok);
        char what[64];
        snprintf(what, sizeof what, "the value of header key '%s'", key.spelled);
        if (slot == K_NCOLS || slot == K_NROWS) {
            int d = 0, rc = parse_dim(lx->tok, lx->tlen, &d);
            if (rc == 1) {
                double ignored;
                int kind = parse_number(lx->tok, lx->tlen, &ignored);
                if (kind != NUM_OK && kind != NUM_RANGE)
                    return number_fail(err, lx, what, kind);
                return lk_fail(err, "%s:%lld:%lld: %s must be a positive integer: found %s",
                               path, lx->tline, lx->tcol, key.spelled,
                               quote(lx->tok, lx->tlen, q, sizeof q));
            }
            if (rc == 2)
                return lk_fail(err,
                               "%s:%lld:%lld: %s is too large: found %s: at most %d rows or "
                               "columns are accepted",
                               path, lx->tline, lx->tcol, key.spelled,
                               quote(lx->tok, lx->tlen, q, sizeof q), LK_GRID_MAX_DIM);
            dims[slot] = d;
            dims_line = lx->tline;
        } else {
            int kind = parse_number(lx->tok, lx->tlen, &val[slot]);
            if (kind != NUM_OK)
                return number_fail(err, lx, what, kind);
            if (slot == K_CELLSIZE && !(val[slot] > 0))
                return lk_fail(err, "%s:%lld:%lld: cellsize must be a positive number: found %s",
                               path, lx->tline, lx->tcol, quote(lx->tok, lx->tlen, q, sizeof q));
            center[slot] = header_keys[k].center;
        }
        seen[slot] = key;
    }

    if (ntok == 0 && !lx->pushed)
        return lk_fail(err,
                       "%s:%lld: file is empty%s: expected a grid header with the keys " VALID_KEYS,
                       path, lex_end_line(lx), lx->total ? " (only whitespace)" : "");
    char missing[160] = "";
    int nmissing = 0;
    for (int s = 0; s < K_NODATA; s++)
        if (!seen[s].seen) {
            size_t used = strlen(missing);
            snprintf(missing + used, sizeof missing - used, "%s'%s'", nmissing ? ", " : "",
                     slot_names[s]);
            nmissing++;
        }
    if (nmissing) {
        long long line = lx->pushed ? lx->tline : lex_end_line(lx);
        return lk_fail(err,
                       "%s:%lld: header is missing key%s %s%s: a header needs ncols, nrows, "
                       "xllcorner (or xllcenter), yllcorner (or yllcenter) and cellsize "
                       "(NODATA_value is optional)",
                       path, line, nmissing > 1 ? "s" : "", missing,
                       lx->pushed ? " (the header ends where this line starts with a number)"
                                  : "");
    }
    long long cells = (long long)dims[K_NCOLS] * dims[K_NROWS];
    if (cells > LK_GRID_MAX_CELLS)
        return lk_fail(err,
                       "%s:%lld: grid of nrows x ncols = %d x %d = %lld cells is too large: at "
                       "most %lld cells are accepted",
                       path, dims_line, dims[K_NROWS], dims[K_NCOLS], cells, LK_GRID_MAX_CELLS);

    out->ncols = dims[K_NCOLS];
    out->nrows = dims[K_NROWS];
    out->cellsize = val[K_CELLSIZE];
    /* The struct holds the corner; a center is half a cell up and right of it. */
    out->xllcorner = center[K_XLL] ? val[K_XLL] - val[K_CELLSIZE] / 2 : val[K_XLL];
    out->yllcorner = center[K_YLL] ? val[K_YLL] - val[K_CELLSIZE] / 2 : val[K_YLL];
    out->nodata = val[K_NODATA];
    return 0;
}

/* ------------------------------------------------------------------------------------------
 * Body
 * ---------------------------------------------------------------------------------------- */

/* Where values go: a fixed array of n (cap == n), or a buffer grown up to n on demand. */
typedef struct body_dest {
    double *v;
    long long cap;
    int grow;
} body_dest;

static int check_dims(const char *path, int rows, int cols, lk_error *err)
{
    if (rows <= 0 || cols <= 0 || (long long)rows * cols > LK_GRID_MAX_CELLS)
        return lk_fail(err,
                       "%s: invalid grid size %d x %d: rows and columns must be positive and "
                       "the grid at most %lld cells",
                       path, rows, cols, LK_GRID_MAX_CELLS);
    return 0;
}

/*
 * Every body line is one grid row of ncols values. The total count alone would let a header
 * with nrows and ncols swapped through as a transposed grid, so the first line of another
 * length is remembered: it is the error when the total is right, a hint when it is not.
 */
typedef struct row_check {
    long long row, values, line;              /* the line being read */
    long long bad_row, bad_values, bad_line;  /* the first line of other than ncols values */
} row_check;

static void row_end(row_check *rc, int cols)
{
    if (rc->values == 0)
        return;
    if (rc->values != cols && rc->bad_line == 0) {
        rc->bad_row = rc->row;
        rc->bad_values = rc->values;
        rc->bad_line = rc->line;
    }
    rc->row++;
    rc->values = 0;
}

static void row_token(row_check *rc, const lexer *lx, int cols)
{
    if (lx->tfirst)
        row_end(rc, cols);
    if (rc->values++ == 0)
        rc->line = lx->tline;
}

/* "row R (from 0) has N values, the header says ncols = C" for the first bad line. */
static const char *bad_row_text(const row_check *rc, int cols, char *buf, size_t size)
{
    snprintf(buf, size, "row %lld (from 0) has %lld value%s, the header says ncols = %d",
             rc->bad_row, rc->bad_values, rc->bad_values == 1 ? "" : "s", cols);
    return buf;
}

static int parse_body(lexer *lx, int rows, int cols, body_dest *d, lk_error *err)
{
    const long long n = (long long)rows * cols;
    long long k = 0;
    row_check rc = {0, 0, 0, 0, 0, 0};
    char what[128], q[256], bad[128], hint[192];
    for (;;) {
        int r = lex_next(lx, err);
        if (r < 0)
            return -1;
        if (r == 0)
            break;
        row_token(&rc, lx, cols);
        if (k == n) {
            if (rc.bad_line)
                snprintf(hint, sizeof hint, "; line %lld: %s", rc.bad_line,
                         bad_row_text(&rc, cols, bad, sizeof bad));
            return lk_fail(err,
                           "%s:%lld:%lld: extra token %s after the %lld expected values: the "
                           "body holds more values than nrows x ncols = %d x %d: check the "
                           "header's nrows/ncols or the file%s",
                           lx->path, lx->tline, lx->tcol, quote(lx->tok, lx->tlen, q, sizeof q),
                           n, rows, cols, rc.bad_line ? hint : "");
        }
        if (k == d->cap) {
            long long cap = d->cap * 2 > n ? n : d->cap * 2;
            double *v = d->grow ? realloc(d->v, (size_t)cap * sizeof *v) : NULL;
            if (!v)
                return lk_fail(err, "%s: out of memory reading a %d x %d grid", lx->path, rows,
                               cols);
            d->v = v;
            d->cap = cap;
        }
        int kind = parse_number(lx->tok, lx->tlen, &d->v[k]);
        if (kind != NUM_OK) {
            snprintf(what, sizeof what, "value %lld of %lld (row %lld, col %lld, from 0)", k + 1,
                     n, k / cols, k % cols);
            return number_fail(err, lx, what, kind);
        }
        k++;
    }
    row_end(&rc, cols);
    if (k < n) {
        if (lx->total == 0)
            return lk_fail(err,
                           "%s:1: file is empty: expected nrows x ncols = %d x %d = %lld values",
                           lx->path, rows, cols, n);
        /* A short last row is what a truncated file looks like; an earlier one is a hint. */
        int hinted = rc.bad_line && rc.bad_row < rc.row - 1;
        if (hinted)
            snprintf(hint, sizeof hint, "; line %lld: %s", rc.bad_line,
                     bad_row_text(&rc, cols, bad, sizeof bad));
        return lk_fail(err,
                       "%s:%lld: file ends at line %lld after %lld of %lld values: expected "
                       "nrows x ncols = %d x %d = %lld values (from the header): check that "
                       "the file is complete and that the header's nrows/ncols match it%s",
                       lx->path, lex_end_line(lx), lex_end_line(lx), k, n, rows, cols, n,
                       hinted ? hint : "");
    }
    if (rc.bad_line)
        return lk_fail(err,
                       "%s:%lld: %s: each line of the body holds one grid row: check that "
                       "nrows and ncols are not swapped",
                       lx->path, rc.bad_line, bad_row_text(&rc, cols, bad, sizeof bad));
    return 0;
}

int lk_grid_alloc(lk_grid *g, int rows, int cols, lk_error *err)
{
    if (rows <= 0 || cols <= 0 || (long long)rows * cols > LK_GRID_MAX_CELLS)
        return lk_fail(err,
                       "lk_grid_alloc: invalid grid size %d x %d: rows and columns must be "
                       "positive and the grid at most %lld cells",
                       rows, cols, LK_GRID_MAX_CELLS);
    double *v = calloc((size_t)rows * (size_t)cols, sizeof *v);
    if (!v)
        return lk_fail(err, "lk_grid_alloc: out of memory for a %d x %d grid (%.1f MiB)", rows,
                       cols, (double)rows * cols * sizeof *v / (1024.0 * 1024.0));
    g->rows = rows;
    g->cols = cols;
    g->data = v;
    return 0;
}

int lk_parse_grid_size(const char *s, int *rows, int *cols, lk_error *err)
{
    /* lk_parse_dims reads the numbers; its message speaks of WIDTHxHEIGHT (a thread block),
       while a grid size gives the rows first. */
    lk_error sub;
    if (lk_parse_dims("size", s, LK_GRID_MAX_DIM, rows, cols, &sub) == 0)
        return 0;
    return lk_fail(err,
                   "size '%.40s' is not ROWSxCOLS: give the number of rows and of columns "
                   "joined by x, e.g. 610x496, each between 1 and %d",
                   s ? s : "", LK_GRID_MAX_DIM);
}

void lk_grid_free(lk_grid *g)
{
    if (!g)
        return;
    free(g->data);
    g->data = NULL;
    g->rows = g->cols = 0;
}

int lk_read_header(const char *path, lk_grid_header *hdr, lk_error *err)
{
    lexer lx;
    if (lex_open(&lx, path, err) != 0)
        return -1;
    lk_grid_header h;
    int rc = parse_header(&lx, 0, &h, err);
    lex_close(&lx);
    if (rc == 0)
        *hdr = h;
    return rc;
}

int lk_read_body(const char *path, int rows, int cols, double *out, lk_error *err)
{
    if (check_dims(path, rows, cols, err) != 0)
        return -1;
    lexer lx;
    if (lex_open(&lx, path, err) != 0)
        return -1;
    body_dest d = {out, (long long)rows * cols, 0};
    int rc = parse_body(&lx, rows, cols, &d, err);
    lex_close(&lx);
    return rc;
}

int lk_read_asc(const char *path, lk_grid_header *hdr, lk_grid *g, lk_error *err)
{
    lexer lx;
    if (lex_open(&lx, path, err) != 0)
        return -1;
    lk_grid_header h;
    if (parse_header(&lx, 1, &h, err) != 0) {
        lex_close(&lx);
        return -1;
    }
    /* Size the buffer by what the file can hold (a value takes at least 2 bytes), so a
       header that lies about the size cannot make us allocate gigabytes. */
    long long n = (long long)h.nrows * h.ncols, cap = 1 << 16;
    struct stat st;
    if (fstat(fileno(lx.f), &st) == 0 && S_ISREG(st.st_mode))
        cap = (long long)(st.st_size / 2) + 1;
    if (cap > n)
        cap = n;
    body_dest d = {malloc((size_t)cap * sizeof(double)), cap, 1};
    if (!d.v) {
        lex_close(&lx);
        return lk_fail(err, "%s: out of memory reading a %d x %d grid", path, h.nrows, h.ncols);
    }
    int rc = parse_body(&lx, h.nrows, h.ncols, &d, err);
    lex_close(&lx);
    if (rc != 0) {
        free(d.v);
        return -1;
    }
    *hdr = h;
    g->rows = h.nrows;
    g->cols = h.ncols;
    g->data = d.v;
    return 0;
}

/* ------------------------------------------------------------------------------------------
 * Writers: text is formatted into a buffer that goes to a file, an md5, or both.
 * ---------------------------------------------------------------------------------------- */

/* Longest formatted value: "%f" of -DBL_MAX is 317 characters. */
#define SINK_ROOM 400

typedef struct sink {
    FILE *f;          /* file output, or NULL */
    const char *path; /* for messages */
    lk_md5 *md5;      /* digest output, or NULL */
    size_t len;
    char buf[1 << 16];
} sink;

static int sink_flush(sink *s, lk_error *err)
{
    if (s->len == 0)
        return 0;
    if (s->f && fwrite(s->buf, 1, s->len, s->f) != s->len)
        return lk_fail(err, "%s: write failed: %s: check free disk space and permissions",
                       s->path, strerror(errno));
    if (s->md5 && lk_md5_update(s->md5, s->buf, s->len, err) != 0)
        return -1;
    s->len = 0;
    return 0;
}

/* Make sure SINK_ROOM bytes are free at the end of the buffer. */
static inline int sink_room(sink *s, lk_error *err)
{
    if (s->len + SINK_ROOM > sizeof s->buf)
        return sink_flush(s, err);
    return 0;
}

static int open_out(sink *s, const char *path, lk_error *err)
{
    s->path = path;
    s->md5 = NULL;
    s->len = 0;
    s->f = fopen(path, "wb");
    if (!s->f)
        return lk_fail(err,
                       "%s: cannot create file: %s: check that the directory exists and is "
                       "writable",
                       path, strerror(errno));
    return 0;
}

/* Flush and close; a failing fclose is how a full disk shows up with buffered output. */
static int close_out(sink *s, int rc, lk_error *err)
{
    if (rc == 0)
        rc = sink_flush(s, err);
    if (rc == 0 && (fflush(s->f) != 0 || ferror(s->f))) {
        int e = errno;
        fclose(s->f);
        return lk_fail(err, "%s: write failed: %s: check free disk space", s->path, strerror(e));
    }
    if (fclose(s->f) != 0 && rc == 0)
        return lk_fail(err, "%s: write failed when closing the file: %s: check free disk space",
                       s->path, strerror(errno));
    return rc;
}

static int begin_md5(sink *s, lk_error *err)
{
    s->f = NULL;
    s->path = "md5";
    s->len = 0;
    s->md5 = lk_md5_begin(err);
    return s->md5 ? 0 : -1;
}

static int end_md5(sink *s, int rc, char hex[33], lk_error *err)
{
    if (rc == 0)
        rc = sink_flush(s, err);
    if (rc != 0) {
        lk_md5_abort(s->md5);
        return -1;
    }
    return lk_md5_end(s->md5, hex, err);
}

/* The course's saveGrid2Dr: sprintf(str, "%f ", v) then fprintf(f, "%s ", str). */
static int emit_course_text(sink *s, const double *v, int rows, int cols, lk_error *err)
{
    for (int i = 0; i < rows; i++) {
        const double *row = v + (size_t)i * cols;
        for (int j = 0; j < cols; j++) {
            if (sink_room(s, err) != 0)
                return -1;
            s->len += (size_t)snprintf(s->buf + s->len, SINK_ROOM, "%f  ", row[j]);
        }
        if (sink_room(s, err) != 0)
            return -1;
        s->buf[s->len++] = '\n';
    }
    return 0;
}

static int emit_body(sink *s, const double *v, int rows, int cols, lk_error *err)
{
    for (int i = 0; i < rows; i++) {
        const double *row = v + (size_t)i * cols;
        for (int j = 0; j < cols; j++) {
            if (sink_room(s, err) != 0)
                return -1;
            s->len += (size_t)snprintf(s->buf + s->len, SINK_ROOM, j ? " %.17g" : "%.17g",
                                       row[j]);
        }
        s->buf[s->len++] = '\n';
    }
    return 0;
}

/* Shortest of %.15g..%.17g that reads back to the same double, so headers stay readable. */
static void format_exact(char *out, size_t size, double x)
{
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(out, size, "%.*g", prec, x);
        double back = strtod(out, NULL);
        if (back == x && signbit(back) == signbit(x))
            return;
    }
}

static int check_header(const char *path, const lk_grid_header *h, lk_error *err)
{
    if (check_dims(path, h->nrows, h->ncols, err) != 0)
        return -1;
    if (!isfinite(h->xllcorner) || !isfinite(h->yllcorner) || !isfinite(h->nodata) ||
        !isfinite(h->cellsize) || !(h->cellsize > 0))
        return lk_fail(err,
                       "%s: cannot write the header: xllcorner %g, yllcorner %g, cellsize %g, "
                       "NODATA_value %g: values must be finite and cellsize positive",
                       path, h->xllcorner, h->yllcorner, h->cellsize, h->nodata);
    return 0;
}

static int emit_header(sink *s, const lk_grid_header *h, lk_error *err)
{
    char x[40], y[40], c[40], nd[40];
    format_exact(x, sizeof x, h->xllcorner);
    format_exact(y, sizeof y, h->yllcorner);
    format_exact(c, sizeof c, h->cellsize);
    format_exact(nd, sizeof nd, h->nodata);
    if (sink_room(s, err) != 0)
        return -1;
    s->len += (size_t)snprintf(s->buf + s->len, SINK_ROOM,
                               "ncols        %d\nnrows        %d\nxllcorner    %s\n"
                               "yllcorner    %s\ncellsize     %s\nNODATA_value %s\n",
                               h->ncols, h->nrows, x, y, c, nd);
    return 0;
}

/* A body file must read back, so refuse values the parser rejects. */
static int check_finite(const char *path, const double *v, int rows, int cols, lk_error *err)
{
    size_t n = (size_t)rows * cols;
    for (size_t k = 0; k < n; k++)
        if (!isfinite(v[k]))
            return lk_fail(err,
                           "%s: cannot write value at row %zu, col %zu (from 0): it is %s: grid "
                           "files hold finite values only",
                           path, k / cols, k % cols, isnan(v[k]) ? "NaN" : "infinite");
    return 0;
}

int lk_write_header(const char *path, const lk_grid_header *hdr, lk_error *err)
{
    sink s;
    if (check_header(path, hdr, err) != 0 || open_out(&s, path, err) != 0)
        return -1;
    return close_out(&s, emit_header(&s, hdr, err), err);
}

int lk_write_body(const char *path, const double *v, int rows, int cols, lk_error *err)
{
    sink s;
    if (check_dims(path, rows, cols, err) != 0 || check_finite(path, v, rows, cols, err) != 0 ||
        open_out(&s, path, err) != 0)
        return -1;
    return close_out(&s, emit_body(&s, v, rows, cols, err), err);
}

int lk_write_asc(const char *path, const lk_grid_header *hdr, const double *v, lk_error *err)
{
    sink s;
    if (check_header(path, hdr, err) != 0 ||
        check_finite(path, v, hdr->nrows, hdr->ncols, err) != 0 || open_out(&s, path, err) != 0)
        return -1;
    int rc = emit_header(&s, hdr, err);
    if (rc == 0)
        rc = emit_body(&s, v, hdr->nrows, hdr->ncols, err);
    return close_out(&s, rc, err);
}

int lk_write_course_text(const char *path, const double *v, int rows, int cols, lk_error *err)
{
    sink s;
    if (check_dims(path, rows, cols, err) != 0 || open_out(&s, path, err) != 0)
        return -1;
    return close_out(&s, emit_course_text(&s, v, rows, cols, err), err);
}

int lk_course_text_md5(const double *v, int rows, int cols, char hex[33], lk_error *err)
{
    sink s;
    if (check_dims("lk_course_text_md5", rows, cols, err) != 0 || begin_md5(&s, err) != 0)
        return -1;
    return end_md5(&s, emit_course_text(&s, v, rows, cols, err), hex, err);
}

/* ------------------------------------------------------------------------------------------
 * Binary: little-endian IEEE doubles, built with shifts so the code is right on any host.
 * ---------------------------------------------------------------------------------------- */

static inline void put_le(unsigned char *p, double x)
{
    uint64_t u;
    memcpy(&u, &x, 8);
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(u >> (8 * i));
}

static inline double get_le(const unsigned char *p)
{
    uint64_t u = 0;
    for (int i = 0; i < 8; i++)
        u |= (uint64_t)p[i] << (8 * i);
    double x;
    memcpy(&x, &u, 8);
    return x;
}

static int emit_binary(sink *s, const double *v, size_t n, lk_error *err)
{
    for (size_t k = 0; k < n; k++) {
        if (s->len + 8 > sizeof s->buf && sink_flush(s, err) != 0)
            return -1;
        put_le((unsigned char *)s->buf + s->len, v[k]);
        s->len += 8;
    }
    return 0;
}

int lk_write_binary(const char *path, const double *v, size_t n, lk_error *err)
{
    sink s;
    if (open_out(&s, path, err) != 0)
        return -1;
    return close_out(&s, emit_binary(&s, v, n, err), err);
}

int lk_binary_md5(const double *v, size_t n, char hex[33], lk_error *err)
{
    sink s;
    if (begin_md5(&s, err) != 0)
        return -1;
    return end_md5(&s, emit_binary(&s, v, n, err), hex, err);
}

int lk_read_binary(const char *path, double *v, size_t n, lk_error *err)
{
    if (n > SIZE_MAX / 8)
        return lk_fail(err, "%s: cannot read %zu doubles: too many", path, n);
    const size_t want = n * 8;
    FILE *f = fopen(path, "rb");
    if (!f)
        return lk_fail(err, "%s: cannot open: %s: check the path and the file's permissions",
                       path, strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) == 0) {
        if (S_ISDIR(st.st_mode)) {
            fclose(f);
            return lk_fail(err, "%s: is a directory: expected a binary grid file", path);
        }
        if (S_ISREG(st.st_mode) && (unsigned long long)st.st_size != want) {
            long long size = (long long)st.st_size;
            fclose(f);
            if (size % 8)
                return lk_fail(err,
                               "%s: file holds %lld bytes, which is not a whole number of "
                               "doubles: expected %zu doubles x 8 = %zu bytes: check that it is "
                               "a raw binary dump of this grid",
                               path, size, n, want);
            return lk_fail(err,
                           "%s: file holds %lld bytes (%lld doubles): expected %zu doubles x 8 "
                           "= %zu bytes: check that it was written for this grid size",
                           path, size, size / 8, n, want);
        }
    }
    unsigned char buf[1 << 16];
    size_t done = 0;
    while (done < want) {
        size_t chunk = want - done < sizeof buf ? want - done : sizeof buf;
        size_t got = fread(buf, 1, chunk, f);
        for (size_t i = 0; i + 8 <= got; i += 8)
            v[(done + i) / 8] = get_le(buf + i);
        if (got != chunk) {
            int failed = ferror(f);
            int e = errno;
            fclose(f);
            if (failed)
                return lk_fail(err, "%s: read error: %s", path, strerror(e));
            return lk_fail(err, "%s: file ends after %zu bytes: expected %zu doubles x 8 = %zu "
                                "bytes",
                           path, done + got, n, want);
        }
        done += got;
    }
    int extra = fgetc(f) != EOF;
    fclose(f);
    if (extra)
        return lk_fail(err, "%s: file holds more than %zu bytes: expected %zu doubles x 8 = %zu "
                            "bytes",
                       path, want, n, want);
    return 0;
}
