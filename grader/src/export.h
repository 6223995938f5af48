/**
 * @file export.h
 * @brief Gradebooks an LMS imports as they are (--export canvas|moodle, with --roster): one
 * row per roster student, the LMS's identity columns, a score column per lab; and the check
 * that names every roster student without a submission and every submission not on the
 * roster (never dropped in silence). A lab not graded or not gradable has an empty cell: the
 * LMS keeps it ungraded instead of recording a 0.
 */
#ifndef GRADER_EXPORT_H
#define GRADER_EXPORT_H

#include <stdio.h>

#include "report.h"
#include "roster.h"

/**
 * Canvas's gradebook import CSV: `Student,ID,SIS User ID,SIS Login ID,Section`, a column per
 * lab, then a `Points Possible` row and a row per roster student.
 */
int gr_write_canvas(FILE *f, const gr_report_ctx *c, const gr_roster *ro, const gr_student *st,
                    int n);

/**
 * Moodle's grade import CSV: the identity columns the roster has (`Email address`, `ID
 * number`, `Username`: the import maps one to the user), then per lab its score and a
 * `LAB feedback` column (the outcome and summary), a row per roster student.
 */
int gr_write_moodle(FILE *f, const gr_report_ctx *c, const gr_roster *ro, const gr_student *st,
                    int n);

/** How many roster students have no submission, and how many submissions are not on it. */
void gr_roster_unmatched(const gr_roster *ro, const gr_student *st, int n, int *no_submission,
                         int *not_in_roster);

/** roster-check.txt: the two lists of gr_roster_unmatched(), one name a line. */
int gr_write_roster_check(FILE *f, const gr_roster *ro, const gr_student *st, int n);

#endif
