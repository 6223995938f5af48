/**
 * @file merge.h
 * @brief A class graded in parts (labkit-grade --merge PARTS): each student graded on its
 * own, e.g. one Slurm array task each (tools/slurm-grade.sh), into PARTS/NAME, a report
 * folder of that student alone; the merge brings the parts into the class's report folder
 * without grading anything again.
 */
#ifndef GRADER_MERGE_H
#define GRADER_MERGE_H

#include "report.h"
#include "session.h"

/**
 * Bring the parts under @p parts together for the @p n students of session @p s: each lab's
 * saved result is taken only when its seal holds under its part's secret (and sealed again
 * under the session's, so that a later --regrade finds it), the student's reports are copied
 * with where the part ran (PARTS/NAME/slurm.md) added, then the gradebook, summary and what
 * @p o asks for (JUnit, the LMS exports) are written. A student without a complete part is
 * pending and named. Returns the exit status: 0, 1 (a part missing or refused), 4 (GPU
 * stages not run).
 */
int gr_merge_parts(gr_session *s, const gr_options *o, const char *parts, gr_student *st, int n);

#endif
