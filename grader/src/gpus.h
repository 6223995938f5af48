/**
 * @file gpus.h
 * @brief The machine's GPUs and the choice of `--gpus all|N|LIST`: which GPUs a class is
 * graded on, each by a worker of its own (class.c), each with its own lock.
 */
#ifndef GRADER_GPUS_H
#define GRADER_GPUS_H

#include "labkit/error.h"

/** One GPU of the machine, as nvidia-smi numbers and names it. */
typedef struct gr_gpu {
    int index;      /**< nvidia-smi's index (PCI bus order). */
    char uuid[96];  /**< GPU-...: what CUDA_VISIBLE_DEVICES pins, whatever the enumeration. */
    char name[160]; /**< The model, e.g. "NVIDIA H200". */
} gr_gpu;

/** The command that lists the GPUs, one `index, uuid, name` line each. */
#define GR_GPU_LIST_CMD "nvidia-smi --query-gpu=index,uuid,name --format=csv,noheader"

/**
 * The machine's GPUs into a new array: the output of GR_GPU_LIST_CMD, or of the command in
 * the environment's LK_GPU_LIST_CMD (the grader's tests stand one in without a GPU).
 */
int gr_list_gpus(gr_gpu **out, int *n, lk_error *err);

/** Is @p spec a well-formed `--gpus` value (all, a count N >= 1, or a LIST of indices and
    UUIDs: 0,2 or GPU-...)? */
int gr_gpus_spec_check(const char *spec, lk_error *err);

/**
 * The GPUs @p spec picks of the machine's @p n @p all (all: every one; N: the first N;
 * LIST: those indices or UUIDs, in the order given) into a new array. A GPU the machine
 * does not have is an error naming the ones it has.
 */
int gr_pick_gpus(const char *spec, const gr_gpu *all, int n, gr_gpu **out, int *nout,
                 lk_error *err);

/**
 * The lock file of @p g: @p lock itself for index 0, the GPU that unpinned programs use
 * (make check, make bench, a grader without --gpus, all of which take @p lock), else
 * @p lock.UUID. A malloc'd path.
 */
char *gr_gpu_lock_path(const char *lock, const gr_gpu *g);

#endif
