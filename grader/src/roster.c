/* The class roster: a CSV file the instructor exports from the LMS or writes, read strictly
   (every problem names its line and what to write). */
#include "roster.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

static const char *const column_names[GR_ROSTER_NCOLS] = {
    "folder", "name", "canvas_id", "sis_user_id", "sis_login_id", "section", "email", "idnumber",
    "username"};

const char *gr_roster_column_name(gr_roster_col c)
{
    return c >= 0 && c < GR_ROSTER_NCOLS ? column_names[c] : "?";
}

int gr_csv_record(const char **p, int *line, char ***fields)
{
    const char *s = *p;
    if (!*s)
        return 0;
    int n = 0, cap = 8;
    *fields = gr_xcalloc(cap, sizeof **fields);
    for (;;) {
        gr_buf b = {0};
        if (*s == '"') {
            s++;
            for (;;) {
                if (!*s) {
                    gr_buf_free(&b);
                    for (int i = 0; i < n; i++)
                        free((*fields)[i]);
                    free(*fields);
                    *fields = NULL;
                    return -1;
                }
                if (*s == '"' && s[1] == '"') {
                    gr_buf_puts(&b, "\"");
                    s += 2;
                } else if (*s == '"') {
                    s++;
                    break;
                } else {
                    *line += *s == '\n';
                    char c[2] = {*s++, 0};
                    gr_buf_puts(&b, c);
                }
            }
        }
        /* Unquoted text, or what follows a closing quote up to the separator. */
        while (*s && *s != ',' && *s != '\n' && *s != '\r') {
            char c[2] = {*s++, 0};
            gr_buf_puts(&b, c);
        }
        if (n == cap)
            *fields = gr_xrealloc(*fields, (cap *= 2) * sizeof **fields);
        (*fields)[n++] = gr_buf_take(&b);
        if (*s == ',') {
            s++;
            continue;
        }
        if (*s == '\r')
            s++;
        if (*s == '\n') {
            s++;
            (*line)++;
        }
        break;
    }
    *p = s;
    return n;
}

void gr_csv_record_free(char **fields, int n)
{
    for (int i = 0; i < n; i++)
        free(fields[i]);
    free(fields);
}

static int blank_record(char **fields, int n)
{
    return n == 1 && fields[0][strspn(fields[0], " \t")] == '\0';
}

/* The header: every column known, none twice, `folder` among them. */
static int read_header(const char *path, char **fields, int n, int *map, gr_roster *r,
                       lk_error *err)
{
    for (int i = 0; i < n; i++) {
        int c = 0;
        while (c < GR_ROSTER_NCOLS && strcmp(fields[i], column_names[c]) != 0)
            c++;
        if (c == GR_ROSTER_NCOLS) {
            gr_buf known = {0};
            for (int k = 0; k < GR_ROSTER_NCOLS; k++)
                gr_buf_printf(&known, "%s%s", k ? ", " : "", column_names[k]);
            int rc = lk_fail(err, "%s:1: unknown column '%s': name the columns %s", path,
                             fields[i], gr_buf_str(&known));
            gr_buf_free(&known);
            return rc;
        }
        if (r->has[c])
            return lk_fail(err, "%s:1: column '%s' named twice: keep one", path, fields[i]);
        r->has[c] = 1;
        map[i] = c;
    }
    if (!r->has[GR_ROSTER_FOLDER])
        return lk_fail(err, "%s:1: no 'folder' column: the first row names the columns, "
                            "folder (the submission folder's name) among them", path);
    return 0;
}

int gr_roster_parse(const char *path, const char *text, gr_roster *r, lk_error *err)
{
    memset(r, 0, sizeof *r);
    r->path = gr_xstrdup(path);
    /* Spreadsheets save UTF-8 with a byte-order mark. */
    const char *p = strncmp(text, "\xef\xbb\xbf", 3) == 0 ? text + 3 : text;
    int line = 1, header_n = 0, *map = NULL, cap = 0, rc = 0;
    char **fields;
    while (rc == 0) {
        const int start = line;
        int n = gr_csv_record(&p, &line, &fields);
        if (n == 0)
            break;
        if (n < 0) {
            rc = lk_fail(err, "%s:%d: a quoted field is not closed: end it with \"", path, start);
            break;
        }
        if (blank_record(fields, n)) {
            gr_csv_record_free(fields, n);
            continue;
        }
        if (!map) {
            map = gr_xcalloc(n, sizeof *map);
            header_n = n;
            rc = read_header(path, fields, n, map, r, err);
        } else if (n != header_n) {
            rc = lk_fail(err, "%s:%d: %d field%s, the header has %d: quote a field that holds "
                              "a comma", path, start, n, n == 1 ? "" : "s", header_n);
        } else {
            gr_roster_entry e = {.line = start};
            for (int c = 0; c < GR_ROSTER_NCOLS; c++)
                e.col[c] = NULL;
            for (int i = 0; i < n; i++) {
                e.col[map[i]] = fields[i];
                fields[i] = NULL;
            }
            for (int c = 0; c < GR_ROSTER_NCOLS; c++)
                if (!e.col[c])
                    e.col[c] = gr_xstrdup("");
            if (r->n == cap)
                r->rows = gr_xrealloc(r->rows, (cap = cap ? 2 * cap : 16) * sizeof *r->rows);
            r->rows[r->n++] = e;
            const char *folder = e.col[GR_ROSTER_FOLDER];
            if (!folder[0])
                rc = lk_fail(err, "%s:%d: empty folder: give the student's submission folder "
                                  "name", path, start);
            for (int k = 0; rc == 0 && k < r->n - 1; k++)
                if (strcmp(r->rows[k].col[GR_ROSTER_FOLDER], folder) == 0)
                    rc = lk_fail(err, "%s:%d: folder '%s' is already on line %d: one row per "
                                      "student", path, start, folder, r->rows[k].line);
        }
        gr_csv_record_free(fields, n);
    }
    if (rc == 0 && !map)
        rc = lk_fail(err, "%s:1: empty roster: write a header row (folder,name,...) and one "
                          "row per student", path);
    free(map);
    if (rc != 0)
        gr_roster_free(r);
    return rc;
}

int gr_roster_read(const char *path, gr_roster *r, lk_error *err)
{
    memset(r, 0, sizeof *r);
    char *text = gr_read_file(path, 64 << 20, NULL, err);
    if (!text)
        return -1;
    int rc = gr_roster_parse(path, text, r, err);
    free(text);
    return rc;
}

/* Does row @p e have a value in one of the columns @p cols (ended by -1)? */
static int has_any(const gr_roster_entry *e, const int *cols)
{
    for (; *cols >= 0; cols++)
        if (e->col[*cols][0])
            return 1;
    return 0;
}

int gr_roster_check(const gr_roster *r, int canvas, int moodle, lk_error *err)
{
    static const int canvas_cols[] = {GR_ROSTER_CANVAS_ID, GR_ROSTER_SIS_USER_ID,
                                      GR_ROSTER_SIS_LOGIN_ID, -1};
    static const int moodle_cols[] = {GR_ROSTER_EMAIL, GR_ROSTER_IDNUMBER, GR_ROSTER_USERNAME,
                                      -1};
    for (int i = 0; i < r->n; i++) {
        const gr_roster_entry *e = &r->rows[i];
        if (canvas && !has_any(e, canvas_cols))
            return lk_fail(err, "%s:%d: no Canvas user for '%s': fill canvas_id, sis_user_id "
                                "or sis_login_id (--export canvas)", r->path, e->line,
                           e->col[GR_ROSTER_FOLDER]);
        if (moodle && !has_any(e, moodle_cols))
            return lk_fail(err, "%s:%d: no Moodle user for '%s': fill email, idnumber or "
                                "username (--export moodle)", r->path, e->line,
                           e->col[GR_ROSTER_FOLDER]);
    }
    return 0;
}

const gr_roster_entry *gr_roster_find(const gr_roster *r, const char *folder)
{
    for (int i = 0; r && i < r->n; i++)
        if (strcmp(r->rows[i].col[GR_ROSTER_FOLDER], folder) == 0)
            return &r->rows[i];
    return NULL;
}

void gr_roster_free(gr_roster *r)
{
    for (int i = 0; i < r->n; i++)
        for (int c = 0; c < GR_ROSTER_NCOLS; c++)
            free(r->rows[i].col[c]);
    free(r->rows);
    free(r->path);
    memset(r, 0, sizeof *r);
}
