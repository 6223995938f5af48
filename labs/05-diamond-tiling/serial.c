/* Lab 05: the serial programs (read-only) are the models' references, in
   common/models/vstring/serial.c (the vibrating string) and common/models/bruss/serial.c
   (the stretch's Brusselator, the same listing): read them there, top to bottom. They are
   compiled here as this lab's serial object, which a graded build leaves out
   (labs/README.md, "Serial references"). */
#include "vstring/serial.c"
#include "bruss/serial.c"
