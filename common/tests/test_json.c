#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

#include "labkit/json.h"

static char *render_string(const char *s)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    lk_json_string(f, s);
    fclose(f);
    return buf;
}

Test(json, escapes_quotes_backslashes_and_controls)
{
    char *out = render_string("say \"hi\"\\\n\t\x01 end");
    cr_assert_str_eq(out, "\"say \\\"hi\\\"\\\\\\n\\t\\u0001 end\"");
    free(out);
}

Test(json, keeps_valid_utf8_and_replaces_invalid_bytes)
{
    char *out = render_string("caf\xc3\xa9 \xff \xc3");
    cr_assert_str_eq(out, "\"caf\xc3\xa9 \\ufffd \\ufffd\"");
    free(out);
}

Test(json, null_string_and_non_finite_numbers_are_null)
{
    char *out = render_string(NULL);
    cr_assert_str_eq(out, "null");
    free(out);
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    lk_json_number(f, NAN);
    fputc(' ', f);
    lk_json_number(f, 0.1);
    fclose(f);
    cr_assert_str_eq(buf, "null 0.10000000000000001");
    free(buf);
}
