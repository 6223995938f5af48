/**
 * @file class.h
 * @brief Grading a class: every lab of every student in turn, with progress and an estimate
 * of the time left, reports written as it goes; the final table and exit status.
 */
#ifndef GRADER_CLASS_H
#define GRADER_CLASS_H

#include "report.h"
#include "session.h"

/** What grading the class came to. */
typedef struct gr_class_tally {
    int gpu_not_run;   /**< Labs whose GPU stages were not run. */
    int grader_errors; /**< Labs the grader (or the kit) could not grade. */
    int refused;       /**< Nothing graded: the request was wrong (a --regrade of a student
                            or lab with no saved result; said on stderr). */
} gr_class_tally;

/** Grade every lab of the @p n students (stops early when interrupted). */
void gr_grade_class(gr_session *s, const gr_options *o, gr_student *st, int n,
                    gr_class_tally *tally);

/** Print the final table and where the reports are; return the exit status (0, 1, 2 or 4). */
int gr_finish_class(const gr_session *s, const gr_options *o, const gr_student *st, int n,
                    const gr_class_tally *tally);

/** The class's files (gradebook, summary, and what @p o asks for: JUnit, the LMS exports
    with the roster check) into @p out, each written atomically. */
int gr_write_class_files(const char *out, const gr_options *o, const gr_report_ctx *rc,
                         const gr_student *st, int n, lk_error *err);

/** The rubric's deadline for lab @p l of @p st, with the late days the course's tokens cover
    (planned over every lab of the rubric), applied to @p r in memory: the saved result keeps
    the points earned. */
void gr_apply_course_deadline(const gr_session *s, const gr_options *o, const gr_student *st,
                              int l, gr_lab_result *r);

#endif
