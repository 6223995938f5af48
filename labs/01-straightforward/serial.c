/* Lab 01: the serial SciddicaT program (read-only) is the model's one reference, in
   common/models/sciddicat/serial.c: read it there, top to bottom; it is the code you port to
   CUDA in kernels.cu. It is compiled here as this lab's serial object, which a graded build
   leaves out (labs/README.md, "Serial references"). */
#include "sciddicat/serial.c"
