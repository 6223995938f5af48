/* Lab 03 runs lab 02's serial shallow-water program: one definition for both labs. */
#include "../02-coalescing/serial.c"
