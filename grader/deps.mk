# Read by the grader only, after a lab's own Makefile (make -C labs/LAB -f Makefile -f THIS):
# lists the #include dependencies of one student file with exactly the compiler and flags the
# lab builds it with, so the grader can refuse includes from outside the allowed folders, and
# writes the file's preprocessed translation units, on which the rubric's `forbid-source`
# applies (no macro or token pasting hides a name there).
#   GRADER_SRC   the student file (in the grader's work folder)
#   GRADER_DEPS  where to write the make-style dependency list
#   GRADER_PP    optional: where to write the preprocessed units, one after the other: for a
#                CUDA file the host pass and one device pass per architecture the lab
#                compiles for (each sees its own __CUDA_ARCH__, as the real build does)
.PHONY: grader-deps
grader_comma := ,
# nvcc -E preprocesses the first architecture's device pass only: the host pass is that pass
# without the two macros nvcc adds for the device, and each -gencode gets a pass of its own.
GRADER_ARCHS := $(sort $(patsubst arch=compute_%,%,$(filter arch=compute_%,\
                  $(subst $(grader_comma), ,$(NVCCFLAGS)))))
GRADER_NVCC_ONE := $(LAB_CPPFLAGS) $(filter-out -gencode arch=%,$(NVCCFLAGS))
grader-deps:
ifeq ($(suffix $(GRADER_SRC)),.cu)
	$(NVCC) $(LAB_CPPFLAGS) $(NVCCFLAGS) -M $(GRADER_SRC) -o $(GRADER_DEPS)
ifneq ($(GRADER_PP),)
	$(NVCC) $(LAB_CPPFLAGS) $(NVCCFLAGS) -U__CUDA_ARCH__ -UCUDA_DOUBLE_MATH_FUNCTIONS -E \
	  $(GRADER_SRC) >$(GRADER_PP)
	$(if $(GRADER_ARCHS),$(foreach a,$(GRADER_ARCHS),$(NVCC) $(GRADER_NVCC_ONE) \
	  -gencode arch=compute_$(a),code=sm_$(a) -E $(GRADER_SRC) >>$(GRADER_PP) &&) true,\
	  $(NVCC) $(LAB_CPPFLAGS) $(NVCCFLAGS) -E $(GRADER_SRC) >>$(GRADER_PP))
endif
else
	$(CC) $(LAB_CPPFLAGS) $(CFLAGS) -M $(GRADER_SRC) -MF $(GRADER_DEPS)
ifneq ($(GRADER_PP),)
	$(CC) $(LAB_CPPFLAGS) $(CFLAGS) -E $(GRADER_SRC) -o $(GRADER_PP)
endif
endif
