/* Lab 04, given (read-only): the fast variant's boxes (stretch 2), shared by the step loop
   (given.c), the tests' CPU model and a kernels.cu that defines lab04_fast_step. The halo,
   nohalo and fused tasks do not use them. README.md, "Stretch", says why the boxes work. */
#ifndef LAB04_FAST_BOXES_H
#define LAB04_FAST_BOXES_H

#include "sciddicat/sciddicat.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A bounding box of cells, rows r0..r1 and columns c0..c1 (inclusive); empty when r0 > r1 or
   c0 > c1. The device keeps the box of the cells that are not still (sciddicat_is_still). */
typedef struct lab04_box {
    int r0, r1, c0, c1;
} lab04_box;

/* Boxes the caller keeps on the device (lab04_fast_boxes_init). */
#define LAB04_FAST_BOXES 4

/* What a step does with each box (lab04_fast_slot). */
typedef enum lab04_fast_role {
    LAB04_WET_NOW = 0,  /* read: the box of the cells not still at the step's start */
    LAB04_WET_PREV = 1, /* read: the same one step earlier */
    LAB04_WET_NEXT = 2, /* grown (atomicMin/atomicMax) to the cells not still after the step */
    LAB04_TO_CLEAR = 3  /* emptied, for the next step to grow (no step reads it meanwhile) */
} lab04_fast_role;

LK_HD static inline lab04_box lab04_box_empty(void)
{
    lab04_box b = {0x7fffffff, -1, 0x7fffffff, -1};
    return b;
}

LK_HD static inline int lab04_box_is_empty(lab04_box b) { return b.r0 > b.r1 || b.c0 > b.c1; }

/* Which box plays @p role in step @p step: the four rotate, so no step waits for a copy. */
LK_HD static inline int lab04_fast_slot(int step, lab04_fast_role role)
{
    const int offset = role == LAB04_WET_NOW    ? 0
                       : role == LAB04_WET_NEXT ? 1
                       : role == LAB04_TO_CLEAR ? 2
                                                : 3; /* LAB04_WET_PREV: step - 1 */
    return (step + offset) % LAB04_FAST_BOXES;
}

/* Before step 0 both "wet" boxes cover the grid: steps 0 and 1 update every interior cell of
   both buffers, as the reference does (a -0.0 thickness becomes +0.0 there). */
LK_HD static inline void lab04_fast_boxes_init(int rows, int cols,
                                               lab04_box boxes[LAB04_FAST_BOXES])
{
    const lab04_box all = {0, rows - 1, 0, cols - 1};
    for (int k = 0; k < LAB04_FAST_BOXES; k++)
        boxes[k] = lab04_box_empty();
    boxes[lab04_fast_slot(0, LAB04_WET_NOW)] = all;
    boxes[lab04_fast_slot(0, LAB04_WET_PREV)] = all;
}

/* The interior cells step @p step must update: one cell around the wet boxes of now and of
   one step earlier (that cell's older value sits in the buffer this step writes). */
LK_HD static inline lab04_box lab04_fast_region(const lab04_box boxes[LAB04_FAST_BOXES],
                                                int step, int rows, int cols)
{
    const lab04_box now = boxes[lab04_fast_slot(step, LAB04_WET_NOW)];
    const lab04_box prev = boxes[lab04_fast_slot(step, LAB04_WET_PREV)];
    lab04_box r = lab04_box_empty();
    if (!lab04_box_is_empty(now))
        r = now;
    if (!lab04_box_is_empty(prev)) {
        r.r0 = prev.r0 < r.r0 ? prev.r0 : r.r0;
        r.r1 = prev.r1 > r.r1 ? prev.r1 : r.r1;
        r.c0 = prev.c0 < r.c0 ? prev.c0 : r.c0;
        r.c1 = prev.c1 > r.c1 ? prev.c1 : r.c1;
    }
    if (lab04_box_is_empty(r))
        return r;
    r.r0 = r.r0 - 1 > 1 ? r.r0 - 1 : 1;
    r.r1 = r.r1 + 1 < rows - 2 ? r.r1 + 1 : rows - 2;
    r.c0 = r.c0 - 1 > 1 ? r.c0 - 1 : 1;
    r.c1 = r.c1 + 1 < cols - 2 ? r.c1 + 1 : cols - 2;
    return r;
}

#ifdef __cplusplus
}
#endif
#endif
