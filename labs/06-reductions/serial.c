/* Lab 06: the serial reference (read-only) is the reductions model's, in
   common/models/reduce/serial.c: read it there, top to bottom; its loops are what you turn
   into reductions in kernels.cu. It is compiled here as this lab's serial object, which a
   graded build leaves out (labs/README.md, "Serial references"). */
#include "reduce/serial.c"
