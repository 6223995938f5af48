/**
 * @file roster.h
 * @brief The class roster (--roster FILE): which LMS user each submission folder is, so that
 * the Canvas and Moodle exports import as they are.
 *
 * A CSV file (RFC 4180: quoted fields may hold commas, quotes and line breaks), its first row
 * naming the columns, in any order: `folder` (required: the submission folder's name) and any
 * of `name`, `canvas_id`, `sis_user_id`, `sis_login_id`, `section`, `email`, `idnumber`,
 * `username`. Every problem is reported as `FILE:LINE: what is wrong: what to write`.
 */
#ifndef GRADER_ROSTER_H
#define GRADER_ROSTER_H

#include "labkit/error.h"

/** The roster's columns. */
typedef enum gr_roster_col {
    GR_ROSTER_FOLDER,       /**< Submission folder name (required, unique). */
    GR_ROSTER_NAME,         /**< The student's name as the LMS shows it. */
    GR_ROSTER_CANVAS_ID,    /**< Canvas user ID (the gradebook's `ID`). */
    GR_ROSTER_SIS_USER_ID,  /**< Canvas `SIS User ID`. */
    GR_ROSTER_SIS_LOGIN_ID, /**< Canvas `SIS Login ID`. */
    GR_ROSTER_SECTION,      /**< Section. */
    GR_ROSTER_EMAIL,        /**< Moodle: e-mail address. */
    GR_ROSTER_IDNUMBER,     /**< Moodle: ID number. */
    GR_ROSTER_USERNAME,     /**< Moodle: username. */
    GR_ROSTER_NCOLS
} gr_roster_col;

/** One student of the roster. */
typedef struct gr_roster_entry {
    char *col[GR_ROSTER_NCOLS]; /**< Values ("" where the column is absent or empty). */
    int line;                   /**< Line of the file where the row starts. */
} gr_roster_entry;

/** A roster. */
typedef struct gr_roster {
    char *path;             /**< The file, for messages. */
    gr_roster_entry *rows;  /**< Students in file order. */
    int n;                  /**< Their number. */
    int has[GR_ROSTER_NCOLS]; /**< 1 for the columns the header names. */
} gr_roster;

/**
 * One CSV record (RFC 4180) from *@p p: its fields (free with gr_csv_record_free()), *@p p
 * and *@p line advanced past it. Returns the number of fields, 0 at the end of the text, -1
 * on an unclosed quote.
 */
int gr_csv_record(const char **p, int *line, char ***fields);
/** Free the @p n fields of a record. */
void gr_csv_record_free(char **fields, int n);

/** The header name of column @p c (e.g. "canvas_id"). */
const char *gr_roster_column_name(gr_roster_col c);

/** Parse roster text; @p path names it in messages. */
int gr_roster_parse(const char *path, const char *text, gr_roster *r, lk_error *err);
/** Read and parse a roster file. */
int gr_roster_read(const char *path, gr_roster *r, lk_error *err);

/**
 * Check that every row identifies its student for the exports asked for: Canvas needs one of
 * canvas_id, sis_user_id, sis_login_id; Moodle one of email, idnumber, username.
 */
int gr_roster_check(const gr_roster *r, int canvas, int moodle, lk_error *err);

/** The row of submission folder @p folder, or NULL. */
const gr_roster_entry *gr_roster_find(const gr_roster *r, const char *folder);

/** Free a roster (safe on a zeroed struct). */
void gr_roster_free(gr_roster *r);

#endif
