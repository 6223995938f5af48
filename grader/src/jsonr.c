/* Accessors over cJSON, and its parse errors located by line and column. */
#include "jsonr.h"

#include <stdio.h>
#include <string.h>

gr_json *gr_json_parse(const char *text, const char *where, lk_error *err)
{
    const char *end = NULL;
    gr_json *j = cJSON_ParseWithOpts(text, &end, 1);
    if (j)
        return j;
    if (!end || end < text || end > text + strlen(text))
        end = text;
    int line = 1, col = 1;
    for (const char *q = text; q < end; q++) {
        if (*q == '\n')
            line++, col = 1;
        else
            col++;
    }
    char found[32];
    if (*end == '\0')
        snprintf(found, sizeof found, "end of text");
    else
        snprintf(found, sizeof found, "'%.10s'", end);
    for (char *c = found; *c; c++)
        if (*c == '\n' || *c == '\r' || *c == '\t')
            *c = ' ';
    lk_fail(err, "%s: line %d column %d: found %s: not valid JSON", where, line, col, found);
    return NULL;
}

void gr_json_free(gr_json *j)
{
    cJSON_Delete(j);
}

const gr_json *gr_json_get(const gr_json *j, const char *key)
{
    if (!cJSON_IsObject(j))
        return NULL;
    const gr_json *found = NULL;
    for (const gr_json *c = j->child; c; c = c->next)
        if (c->string && strcmp(c->string, key) == 0)
            found = c;
    return found;
}

double gr_json_num(const gr_json *j, const char *key, double dflt)
{
    const gr_json *v = gr_json_get(j, key);
    return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

const char *gr_json_str(const gr_json *j, const char *key)
{
    const gr_json *v = gr_json_get(j, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

int gr_json_true(const gr_json *j, const char *key)
{
    return cJSON_IsTrue(gr_json_get(j, key));
}

int gr_json_count(const gr_json *j)
{
    return cJSON_IsArray(j) || cJSON_IsObject(j) ? cJSON_GetArraySize(j) : 0;
}
