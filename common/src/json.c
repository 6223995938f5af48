#include "labkit/json.h"

#include <math.h>

/* Length of the valid UTF-8 sequence at s, or 0 if it is not one. */
static int utf8_length(const unsigned char *s)
{
    int n;
    unsigned min;
    if (s[0] < 0x80)
        return 1;
    if ((s[0] & 0xe0) == 0xc0)
        n = 2, min = 0x80;
    else if ((s[0] & 0xf0) == 0xe0)
        n = 3, min = 0x800;
    else if ((s[0] & 0xf8) == 0xf0)
        n = 4, min = 0x10000;
    else
        return 0;
    unsigned cp = s[0] & (0x7f >> n);
    for (int i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return n;
}

void lk_json_string(FILE *f, const char *s)
{
    if (!s) {
        fputs("null", f);
        return;
    }
    fputc('"', f);
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        if (*p == '"' || *p == '\\') {
            fputc('\\', f);
            fputc(*p++, f);
        } else if (*p == '\n') {
            fputs("\\n", f);
            p++;
        } else if (*p == '\t') {
            fputs("\\t", f);
            p++;
        } else if (*p < 0x20 || *p == 0x7f) {
            fprintf(f, "\\u%04x", *p++);
        } else {
            int n = utf8_length(p);
            if (n == 0) {
                fputs("\\ufffd", f);
                p++;
            } else {
                fwrite(p, 1, n, f);
                p += n;
            }
        }
    }
    fputc('"', f);
}

void lk_json_number(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, "%.17g", v);
    else
        fputs("null", f);
}
