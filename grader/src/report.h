/**
 * @file report.h
 * @brief The grader's outputs: gradebook.csv, per-student report.md and report.json, the
 * class summary, JUnit XML and Gradescope-style results.json. Every file is written
 * atomically (see gr_write_atomic()).
 */
#ifndef GRADER_REPORT_H
#define GRADER_REPORT_H

#include <stdio.h>

#include "env.h"
#include "labkit/error.h"
#include "result.h"
#include "rubric.h"

/** What every report says about the session. */
typedef struct gr_report_ctx {
    const gr_env *env;                /**< Provenance. The session's seed is not here: no
                                           report shows it (OUT/session.log has it). */
    const char *submissions;          /**< What was graded ("self" or a folder). */
    const char *rubric;               /**< Rubric file. */
    const gr_lab_rubric *const *labs; /**< Graded labs (gradebook columns). */
    int nlabs;                        /**< Their number. */
    const char *gpu_note;             /**< Why GPU stages did not run, or NULL. */
} gr_report_ctx;

/**
 * Write one CSV field: quoted when it holds a comma, quote, CR, LF or edge spaces (quotes
 * doubled); a field that a spreadsheet would run as a formula (= + - @ at the start) gets a
 * leading apostrophe.
 */
void gr_csv_field(FILE *f, const char *s);

/** gradebook.csv: a header, then one row per student (score per lab, total, max, status). */
int gr_write_gradebook(FILE *f, const gr_report_ctx *c, const gr_student *st, int n);
/** A student's report.md. */
int gr_write_student_md(FILE *f, const gr_report_ctx *c, const gr_student *st);
/** A student's report.json. */
int gr_write_student_json(FILE *f, const gr_report_ctx *c, const gr_student *st);
/** summary.md: score distribution per lab and the list of students. */
int gr_write_summary(FILE *f, const gr_report_ctx *c, const gr_student *st, int n);
/** JUnit XML: a test suite per student and lab, a test case per check. */
int gr_write_junit(FILE *f, const gr_report_ctx *c, const gr_student *st, int n);
/** Gradescope-style results.json of one student. */
int gr_write_gradescope(FILE *f, const gr_report_ctx *c, const gr_student *st);

/** Write @p s escaped for XML text and attributes (invalid characters become '?'). */
void gr_xml_escape(FILE *f, const char *s);

/** One-word status of a student: "complete", "incomplete: ...", "pending". */
char *gr_student_status(const gr_student *st);

#endif
