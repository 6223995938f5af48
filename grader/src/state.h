/**
 * @file state.h
 * @brief A session's per-lab work kept for the next session on the same GPU
 * (`--session-state DIR`): what a Slurm array task would otherwise do again for each student.
 */
#ifndef GRADER_STATE_H
#define GRADER_STATE_H

#include "grade.h"

/**
 * Move each lab's work folder to DIR/@p key/LAB (@p key: the GPU's UUID, or "default"),
 * take DIR/@p key's lock for the session, and take up the work a session before left there
 * when it was done for the same kit, seed, host and CUDA architecture. 0, or -1 with @p err.
 */
int gr_state_open(gr_session *s, const char *key, lk_error *err);

/** Leave @p lc's work (a built solution, timings, the solution's outputs) for the next
    session; a failure to write it costs that session the work, and is said once. */
void gr_state_save(const gr_session *s, const gr_lab_ctx *lc);

#endif
