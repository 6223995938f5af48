# Read by the grader only, after a lab's own Makefile (make -C labs/LAB -f Makefile -f THIS):
# lists the #include dependencies of one student file with exactly the compiler and flags the
# lab builds it with, so the grader can refuse includes from outside the allowed folders.
#   GRADER_SRC   the student file (in the grader's work folder)
#   GRADER_DEPS  where to write the make-style dependency list
.PHONY: grader-deps
grader-deps:
ifeq ($(suffix $(GRADER_SRC)),.cu)
	$(NVCC) $(LAB_CPPFLAGS) $(NVCCFLAGS) -M $(GRADER_SRC) -o $(GRADER_DEPS)
else
	$(CC) $(LAB_CPPFLAGS) $(CFLAGS) -M $(GRADER_SRC) -MF $(GRADER_DEPS)
endif
