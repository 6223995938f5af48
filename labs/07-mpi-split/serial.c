/* Lab 07: the serial SciddicaT program (read-only) is the model's one reference, in
   common/models/sciddicat/serial.c (lab 01 ports it). It is compiled here as this lab's
   serial object, which a graded build leaves out (labs/README.md, "Serial references"). */
#include "sciddicat/serial.c"
