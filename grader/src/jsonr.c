#include "jsonr.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

typedef struct parser {
    const char *text, *p, *where;
    lk_error *err;
    int failed;
} parser;

static void position(const parser *ps, int *line, int *col)
{
    *line = 1, *col = 1;
    for (const char *q = ps->text; q < ps->p; q++) {
        if (*q == '\n')
            ++*line, *col = 1;
        else
            ++*col;
    }
}

static gr_json *fail(parser *ps, const char *expected)
{
    if (!ps->failed) {
        int line, col;
        position(ps, &line, &col);
        char found[32];
        if (*ps->p == '\0')
            snprintf(found, sizeof found, "end of text");
        else
            snprintf(found, sizeof found, "'%.10s'", ps->p);
        for (char *c = found; *c; c++)
            if (*c == '\n' || *c == '\r' || *c == '\t')
                *c = ' ';
        lk_fail(ps->err, "%s: line %d column %d: found %s: expected %s", ps->where, line, col,
                found, expected);
        ps->failed = 1;
    }
    return NULL;
}

static void skip_ws(parser *ps)
{
    while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r')
        ps->p++;
}

static gr_json *new_value(gr_json_kind kind)
{
    gr_json *j = gr_xcalloc(1, sizeof *j);
    j->kind = kind;
    return j;
}

static int hex4(const char *s, unsigned *out)
{
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = s[i];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (unsigned)(c - 'A' + 10);
        else
            return -1;
    }
    *out = v;
    return 0;
}

static void put_utf8(gr_buf *b, unsigned cp)
{
    char s[5] = {0};
    if (cp < 0x80) {
        s[0] = (char)cp;
    } else if (cp < 0x800) {
        s[0] = (char)(0xc0 | cp >> 6);
        s[1] = (char)(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
        s[0] = (char)(0xe0 | cp >> 12);
        s[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        s[2] = (char)(0x80 | (cp & 0x3f));
    } else {
        s[0] = (char)(0xf0 | cp >> 18);
        s[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
        s[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
        s[3] = (char)(0x80 | (cp & 0x3f));
    }
    gr_buf_puts(b, s);
}

/* Parses a string literal at ps->p (which is '"'); returns the malloc'd text. */
static char *parse_string(parser *ps)
{
    gr_buf b = {0};
    ps->p++;
    for (;;) {
        unsigned char c = (unsigned char)*ps->p;
        if (c == '"') {
            ps->p++;
            return gr_buf_take(&b);
        }
        if (c == '\0' || c < 0x20) {
            gr_buf_free(&b);
            fail(ps, c ? "no control characters inside a string" : "'\"' closing the string");
            return NULL;
        }
        if (c != '\\') {
            char one[2] = {(char)c, 0};
            gr_buf_puts(&b, one);
            ps->p++;
            continue;
        }
        char e = ps->p[1];
        const char *simple = strchr("\"\\/bfnrt", e);
        if (e != '\0' && simple) {
            static const char map[] = "\"\\/\b\f\n\r\t";
            char one[2] = {map[simple - "\"\\/bfnrt"], 0};
            gr_buf_puts(&b, one);
            ps->p += 2;
            continue;
        }
        unsigned cp;
        if (e != 'u' || hex4(ps->p + 2, &cp) != 0) {
            gr_buf_free(&b);
            fail(ps, "a valid escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)");
            return NULL;
        }
        ps->p += 6;
        if (cp >= 0xd800 && cp <= 0xdbff) {
            unsigned lo;
            if (ps->p[0] == '\\' && ps->p[1] == 'u' && hex4(ps->p + 2, &lo) == 0 &&
                lo >= 0xdc00 && lo <= 0xdfff) {
                cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                ps->p += 6;
            } else {
                cp = 0xfffd;
            }
        } else if (cp >= 0xdc00 && cp <= 0xdfff) {
            cp = 0xfffd;
        }
        if (cp == 0)
            cp = 0xfffd; /* a NUL would cut the C string */
        put_utf8(&b, cp);
    }
}

static gr_json *parse_value(parser *ps, int depth);

static gr_json *parse_members(parser *ps, int depth, int object)
{
    gr_json *j = new_value(object ? GR_JSON_OBJECT : GR_JSON_ARRAY);
    gr_json **tail = &j->child;
    char close = object ? '}' : ']';
    ps->p++;
    skip_ws(ps);
    if (*ps->p == close) {
        ps->p++;
        return j;
    }
    for (;;) {
        char *key = NULL;
        if (object) {
            skip_ws(ps);
            if (*ps->p != '"') {
                gr_json_free(j);
                return fail(ps, "a member name in double quotes");
            }
            if (!(key = parse_string(ps))) {
                gr_json_free(j);
                return NULL;
            }
            skip_ws(ps);
            if (*ps->p != ':') {
                free(key);
                gr_json_free(j);
                return fail(ps, "':' after the member name");
            }
            ps->p++;
        }
        gr_json *v = parse_value(ps, depth + 1);
        if (!v) {
            free(key);
            gr_json_free(j);
            return NULL;
        }
        v->key = key;
        *tail = v;
        tail = &v->next;
        skip_ws(ps);
        if (*ps->p == ',') {
            ps->p++;
            continue;
        }
        if (*ps->p == close) {
            ps->p++;
            return j;
        }
        gr_json_free(j);
        return fail(ps, object ? "',' or '}'" : "',' or ']'");
    }
}

static gr_json *parse_number(parser *ps)
{
    const char *s = ps->p, *q = s;
    if (*q == '-')
        q++;
    if (*q == '0')
        q++;
    else if (*q >= '1' && *q <= '9')
        while (*q >= '0' && *q <= '9')
            q++;
    else
        return fail(ps, "a value (object, array, string, number, true, false, null)");
    if (*q == '.') {
        q++;
        if (!(*q >= '0' && *q <= '9'))
            return fail(ps, "digits after the decimal point");
        while (*q >= '0' && *q <= '9')
            q++;
    }
    if (*q == 'e' || *q == 'E') {
        q++;
        if (*q == '+' || *q == '-')
            q++;
        if (!(*q >= '0' && *q <= '9'))
            return fail(ps, "digits in the exponent");
        while (*q >= '0' && *q <= '9')
            q++;
    }
    gr_json *j = new_value(GR_JSON_NUMBER);
    j->number = strtod(s, NULL);
    ps->p = q;
    return j;
}

static gr_json *parse_value(parser *ps, int depth)
{
    if (depth > 64)
        return fail(ps, "at most 64 nested arrays/objects");
    skip_ws(ps);
    switch (*ps->p) {
    case '{': return parse_members(ps, depth, 1);
    case '[': return parse_members(ps, depth, 0);
    case '"': {
        char *s = parse_string(ps);
        if (!s)
            return NULL;
        gr_json *j = new_value(GR_JSON_STRING);
        j->string = s;
        return j;
    }
    case 't':
    case 'f':
    case 'n': {
        static const char *const words[] = {"true", "false", "null"};
        for (int i = 0; i < 3; i++) {
            size_t n = strlen(words[i]);
            if (strncmp(ps->p, words[i], n) == 0) {
                ps->p += n;
                gr_json *j = new_value(i == 2 ? GR_JSON_NULL : GR_JSON_BOOL);
                j->number = i == 0;
                return j;
            }
        }
        return fail(ps, "true, false or null");
    }
    default: return parse_number(ps);
    }
}

gr_json *gr_json_parse(const char *text, const char *where, lk_error *err)
{
    parser ps = {text, text, where ? where : "JSON", err, 0};
    gr_json *j = parse_value(&ps, 0);
    if (!j)
        return NULL;
    skip_ws(&ps);
    if (*ps.p != '\0') {
        gr_json_free(j);
        return fail(&ps, "end of text after the value");
    }
    return j;
}

void gr_json_free(gr_json *j)
{
    while (j) {
        gr_json *next = j->next;
        gr_json_free(j->child);
        free(j->key);
        free(j->string);
        free(j);
        j = next;
    }
}

const gr_json *gr_json_get(const gr_json *j, const char *key)
{
    if (!j || j->kind != GR_JSON_OBJECT)
        return NULL;
    const gr_json *found = NULL;
    for (const gr_json *c = j->child; c; c = c->next)
        if (strcmp(c->key, key) == 0)
            found = c; /* the last duplicate wins, as in most parsers */
    return found;
}

double gr_json_num(const gr_json *j, const char *key, double dflt)
{
    const gr_json *v = gr_json_get(j, key);
    return v && v->kind == GR_JSON_NUMBER ? v->number : dflt;
}

const char *gr_json_str(const gr_json *j, const char *key)
{
    const gr_json *v = gr_json_get(j, key);
    return v && v->kind == GR_JSON_STRING ? v->string : NULL;
}

int gr_json_count(const gr_json *j)
{
    int n = 0;
    if (j && (j->kind == GR_JSON_ARRAY || j->kind == GR_JSON_OBJECT))
        for (const gr_json *c = j->child; c; c = c->next)
            n++;
    return n;
}
