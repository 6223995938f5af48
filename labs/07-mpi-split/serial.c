/* Lab 07 runs lab 01's serial SciddicaT program: one definition for every SciddicaT lab. */
#include "../01-straightforward/serial.c"
