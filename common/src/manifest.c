#include "labkit/manifest.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "labkit/cli.h"

static int is_md5(const char *s)
{
    if (strlen(s) != 32)
        return 0;
    for (const char *p = s; *p; p++)
        if (!isxdigit((unsigned char)*p) || isupper((unsigned char)*p))
            return 0;
    return 1;
}

static int copy_field(char *dst, size_t size, const char *src, const char *path, int line,
                      const char *what, lk_error *err)
{
    if (strlen(src) >= size)
        return lk_fail(err, "%s:%d: %s '%.40s...' is too long: at most %zu characters", path,
                       line, what, src, size - 1);
    strcpy(dst, src);
    return 0;
}

static int parse_line(char *text, const char *path, int line, lk_manifest_entry *e,
                      lk_error *err)
{
    static const char *names[] = {"name", "model", "generator", "steps", "stored", "md5"};
    char *field[7];
    int n = 0;
    for (char *tok = strtok(text, " \t\r\n"); tok; tok = strtok(NULL, " \t\r\n"))
        field[n < 7 ? n++ : 6] = tok;
    if (n != 6)
        return lk_fail(err, "%s:%d: found %d fields, expected 6 (%s %s %s %s %s %s)", path,
                       line, n, names[0], names[1], names[2], names[3], names[4], names[5]);
    memset(e, 0, sizeof *e);
    e->line = line;
    if (copy_field(e->name, sizeof e->name, field[0], path, line, "name", err) ||
        copy_field(e->model, sizeof e->model, field[1], path, line, "model", err) ||
        copy_field(e->spec, sizeof e->spec, field[2], path, line, "generator", err))
        return -1;
    lk_error sub;
    if (lk_parse_int("steps", field[3], 0, 100000000, &e->steps, &sub) != 0)
        return lk_fail(err, "%s:%d: %s", path, line, sub.msg);
    if (strcmp(field[4], "yes") == 0)
        e->stored = 1;
    else if (strcmp(field[4], "no") != 0)
        return lk_fail(err, "%s:%d: stored is '%s': write yes or no", path, line, field[4]);
    if (!is_md5(field[5]))
        return lk_fail(err, "%s:%d: md5 '%s' is not 32 lowercase hex digits", path, line,
                       field[5]);
    strcpy(e->md5, field[5]);
    return 0;
}

int lk_manifest_read(const char *path, lk_manifest *m, lk_error *err)
{
    memset(m, 0, sizeof *m);
    FILE *f = fopen(path, "r");
    if (!f)
        return lk_fail(err, "%s: cannot open: %s", path, strerror(errno));
    char text[1024];
    int line = 0, cap = 0, rc = 0;
    while (rc == 0 && fgets(text, sizeof text, f)) {
        line++;
        if (!strchr(text, '\n') && !feof(f)) {
            rc = lk_fail(err, "%s:%d: line longer than %zu characters", path, line,
                         sizeof text - 2);
            break;
        }
        char *hash = strchr(text, '#');
        if (hash)
            *hash = '\0';
        if (strspn(text, " \t\r\n") == strlen(text))
            continue;
        if (m->n == cap) {
            cap = cap ? 2 * cap : 16;
            lk_manifest_entry *grown = realloc(m->e, cap * sizeof *grown);
            if (!grown) {
                rc = lk_fail(err, "%s: out of memory", path);
                break;
            }
            m->e = grown;
        }
        rc = parse_line(text, path, line, &m->e[m->n], err);
        if (rc == 0) {
            const lk_manifest_entry *dup = lk_manifest_find(m, m->e[m->n].name);
            if (dup)
                rc = lk_fail(err, "%s:%d: dataset '%s' is already defined on line %d", path,
                             line, dup->name, dup->line);
            else
                m->n++;
        }
    }
    if (rc == 0 && ferror(f))
        rc = lk_fail(err, "%s: read error: %s", path, strerror(errno));
    fclose(f);
    if (rc == 0 && m->n == 0)
        rc = lk_fail(err, "%s: no dataset listed: expected lines of 'name model generator "
                          "steps stored md5'", path);
    if (rc != 0)
        lk_manifest_free(m);
    return rc;
}

const lk_manifest_entry *lk_manifest_find(const lk_manifest *m, const char *name)
{
    for (int i = 0; i < m->n; i++)
        if (strcmp(m->e[i].name, name) == 0)
            return &m->e[i];
    return NULL;
}

const lk_manifest_entry *lk_manifest_find_model(const lk_manifest *m, const char *path,
                                                const char *name, const char *model,
                                                lk_error *err)
{
    const lk_manifest_entry *e = lk_manifest_find(m, name);
    if (!e) {
        char known[512] = "";
        for (int i = 0; i < m->n; i++)
            if (strcmp(m->e[i].model, model) == 0 &&
                strlen(known) + strlen(m->e[i].name) + 2 < sizeof known)
                strcat(strcat(known, " "), m->e[i].name);
        lk_fail(err, "%s: no dataset named '%s': known %s datasets:%s", path, name, model, known);
        return NULL;
    }
    if (strcmp(e->model, model) != 0) {
        lk_fail(err, "%s:%d: dataset '%s' is for model '%s', not %s", path, e->line, name,
                e->model, model);
        return NULL;
    }
    return e;
}

void lk_manifest_free(lk_manifest *m)
{
    free(m->e);
    m->e = NULL;
    m->n = 0;
}

int lk_manifest_lookup(const char *path, const char *name, const char *model,
                       const char *generated_only, lk_manifest_entry *out, lk_error *err)
{
    lk_manifest m;
    if (lk_manifest_read(path, &m, err) != 0)
        return -1;
    const lk_manifest_entry *e = lk_manifest_find_model(&m, path, name, model, err);
    int rc = -1;
    if (e && generated_only && e->stored)
        lk_fail(err, "%s:%d: dataset '%s' is marked stored, but %s datasets are always "
                     "generated from their spec: write no", path, e->line, name, generated_only);
    else if (e) {
        *out = *e;
        rc = 0;
    }
    lk_manifest_free(&m);
    return rc;
}

int lk_dataset_load(const lk_dataset_kind *kind, const char *manifest_path, const char *name,
                    void *problem, int *steps, char *md5, lk_error *err)
{
    lk_manifest_entry e;
    if (lk_manifest_lookup(manifest_path, name, kind->model,
                           kind->load_stored ? NULL : kind->noun, &e, err) != 0)
        return -1;
    if (e.stored) {
        /* A stored dataset's files sit under the manifest's folder (DIR/<model>/). */
        char dir[4096];
        snprintf(dir, sizeof dir, "%s", manifest_path);
        char *slash = strrchr(dir, '/');
        if (slash)
            *slash = '\0';
        else
            strcpy(dir, ".");
        if (kind->load_stored(dir, name, problem, err) != 0)
            return -1;
    } else {
        lk_error why;
        const int rc = kind->generate(e.spec, problem, &why);
        if (rc == LK_BAD_SPEC)
            return lk_fail(err, "%s:%d: %s", manifest_path, e.line, why.msg);
        if (rc != 0) {
            *err = why;
            return -1;
        }
    }
    if (steps)
        *steps = e.steps;
    if (md5)
        memcpy(md5, e.md5, sizeof e.md5);
    return 0;
}
