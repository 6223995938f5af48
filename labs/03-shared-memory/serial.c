/* Lab 03: the serial shallow-water program (read-only) is the model's one reference, in
   common/models/swe/serial.c (lab 02's too). It is compiled here as this lab's serial
   object, which a graded build leaves out (labs/README.md, "Serial references"). */
#include "swe/serial.c"
