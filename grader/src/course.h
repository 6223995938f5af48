/**
 * @file course.h
 * @brief Course policy applied after grading: the rubric's deadline and late penalty, and
 * when each lab was submitted (an instructor's CSV of submission times, or the student files'
 * modification times when none is given, which the report then says).
 */
#ifndef GRADER_COURSE_H
#define GRADER_COURSE_H

#include "labkit/error.h"
#include "result.h"
#include "rubric.h"

/**
 * Parse a UTC date `YYYY-MM-DDTHH:MM[:SS]` ('T' or a space) ending in `Z`, ` UTC` or an
 * offset `+HH:MM`/`-HH:MM`, into seconds since the epoch. -1 when it is not one.
 */
int gr_parse_utc(const char *s, long long *out);

/** One submission time of the instructor's file. */
typedef struct gr_submission_time {
    char *folder;   /**< Submission folder. */
    char *lab;      /**< The lab, or "" for every lab of the folder. */
    long long when; /**< Seconds since the epoch. */
} gr_submission_time;

/** The instructor's submission times (--submission-times FILE). */
typedef struct gr_submission_times {
    char *path;                 /**< The file. */
    gr_submission_time *rows;   /**< In file order. */
    int n;                      /**< Their number. */
} gr_submission_times;

/**
 * Read a CSV of submission times: a header naming `folder`, `submitted` and optionally `lab`
 * (any order), a row per folder (and lab). Errors are `FILE:LINE: what: what to write`.
 */
int gr_submission_times_read(const char *path, gr_submission_times *t, lk_error *err);
/** Free them (safe on a zeroed struct). */
void gr_submission_times_free(gr_submission_times *t);

/**
 * When lab @p lab of the submission @p folder (its files under @p root) was submitted: from
 * @p times when it has a row (for the lab, else for the folder), else the newest modification
 * time of the student files where the grader takes them from. @p source says which; -1 when
 * neither gives one.
 */
int gr_find_submission_time(const gr_submission_times *times, const char *folder,
                            const char *root, const gr_lab_rubric *lab, long long *when,
                            const char **source);

/**
 * Points taken off for a submission @p late_s seconds after the deadline: @p per_day percent
 * of @p max for each day or part of one, but never below @p floor percent of @p max (a
 * score already below it keeps it).
 */
double gr_late_penalty(double score, double max, long long late_s, double per_day, double floor);

/**
 * The course's late tokens (@p rub's `late-tokens`) of submission @p folder: @p days[i] gets
 * the late days of rub->labs[i] they cover, spent in rubric order on every lab submitted late
 * until none is left. It depends on the submission times alone, not on which labs a run
 * grades.
 */
void gr_plan_late_tokens(const gr_rubric *rub, const gr_submission_times *times,
                         const char *folder, const char *root, int *days);

/**
 * Apply the rubric's deadline to a graded lab @p r of folder @p folder: a `policy` check with
 * the submission time and its source, the penalty for the late days that @p token_days does
 * not cover taken off the score (in memory: the saved result keeps the points the work
 * earned).
 */
void gr_apply_deadline(const gr_lab_rubric *lab, const gr_submission_times *times,
                       const char *folder, const char *root, int token_days, gr_lab_result *r);

/**
 * The rubric's speed contest for lab @p lab, the @p li-th result of each of the @p n
 * students: the `contest_top` K fastest correct submissions (median speed relative to the
 * solution; timings measured and plausible) get contest_points x (K - rank + 1) / K bonus
 * points, rank 1 the most, equal speeds the same rank. Every ranked submission gets a `policy`
 * check `contest` with its rank (in memory, as a late penalty). Returns how many were ranked.
 */
int gr_award_contest(const gr_lab_rubric *lab, int li, gr_student *st, int n);

/**
 * Which of @p n attempts' results of a lab counts (index): the last one, or with @p best the
 * highest score, the later of equal ones. A best-of with an attempt not decided yet (GPU
 * stages not run) takes the latest such attempt: its grade is not final either.
 */
int gr_pick_attempt(const gr_lab_result *tries, int n, int best);

#endif
