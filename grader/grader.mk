# The grader (grader/): builds labkit-grade and its tests, and runs `make grade`.
# Included by the top-level Makefile, which provides the toolchain settings (common/common.mk),
# $(LK_LIB), $(LK_HEADERS) and $(REPORTS).
#
#   make grade                          grade the example submissions (grader/examples)
#   make grade SUBMISSIONS=dir/         grade a class: one sub-folder per student
#   make grade SUBMISSIONS=self         self-grade this tree's student files
#   make grade OUT=dir                  reports there (default build/grade)
#   make grade ROSTER=class.csv EXPORT=canvas,moodle,gradescope   LMS imports (grader/README.md)
#   make grade SUBMISSION_TIMES=times.csv   when each lab was handed in, for the deadlines
#   make grade GRADE_FLAGS="--seed 7 --junit --force"   more options (-h lists them)
#   make grade GPUS=all                 a worker per GPU of the machine (or GPUS=2, GPUS=0,2)
#   make grade SLURM=1 SLURM_GRES=gpu:1 SLURM_TIME=1:00:00   one Slurm array task per student
#   make check-grader                   the grader's own test suites

GRADER_BUILD := $(LK_BUILD)/grader
GRADER := $(GRADER_BUILD)/labkit-grade
GRADER_HOSTILE := $(GRADER_BUILD)/tests/hostile
GRADER_HEADERS := $(wildcard grader/src/*.h)
GRADER_OBJS := $(patsubst grader/src/%.c,$(GRADER_BUILD)/obj/%.o,$(wildcard grader/src/*.c))
# The runner on its own (labkit-box): the grader's sandbox code with a command line of its own.
GRADER_BOX := $(GRADER_BUILD)/labkit-box
GRADER_MAINS := $(GRADER_BUILD)/obj/main.o $(GRADER_BUILD)/obj/box_main.o
GRADER_LIB_OBJS := $(filter-out $(GRADER_MAINS),$(GRADER_OBJS))
GRADER_TESTS := $(patsubst grader/tests/%.c,$(GRADER_BUILD)/tests/%,$(wildcard grader/tests/test_*.c))
# cJSON reads the drivers' result lines; libseccomp builds the sandbox's system-call filter.
GRADER_LIBS := -lcjson -lseccomp
GRADER_CPPFLAGS = $(CPPFLAGS) -I$(LK_TOP)/grader/src -DGR_NVCC='"$(NVCC)"' \
                  -DGR_CUDA_HOME='"$(CUDA_HOME)"' -DGR_GPU_LOCK='"$(LK_GPU_LOCK)"'

SUBMISSIONS ?= grader/examples
# OUT is a common name in shell environments (CI runners set it): only the command line moves
# the reports, never a stray environment variable.
ifneq ($(origin OUT),command line)
OUT := $(LK_BUILD)/grade
endif
GRADE_FLAGS ?=
ROSTER ?=
EXPORT ?=
SUBMISSION_TIMES ?=
GPUS ?=
# SLURM=1: the same grading as one Slurm array job, a task per student (or per
# SLURM_STUDENTS_PER_TASK) on a GPU node, then the merge into OUT (tools/slurm-grade.sh;
# grader/README.md, "Grading on a cluster").
include $(LK_TOP)/tools/slurm-settings.mk
# A Slurm task grades on the one GPU Slurm gives it: GPUS is for one machine.
ifneq ($(and $(filter 1,$(SLURM)),$(GPUS)),)
  $(error GPUS=$(GPUS) with SLURM=1: each Slurm task grades on the one GPU Slurm gives it: leave out GPUS (Slurm spreads the class), or leave out SLURM=1 to grade on the GPUs of this machine)
endif
GRADE_RUNNER = $(if $(filter 1,$(SLURM)),$(LK_SLURM_ENV) $(LK_TOP)/tools/slurm-grade.sh submit \
  $(GRADER),$(GRADER))

.PHONY: grader grader-tests check-grader

grader: $(GRADER) $(GRADER_BOX)

grader-tests: $(GRADER_TESTS) $(GRADER) $(GRADER_BOX) $(GRADER_HOSTILE)

$(GRADER_BUILD)/obj/%.o: grader/src/%.c $(GRADER_HEADERS) $(LK_HEADERS) grader/grader.mk
	@mkdir -p $(@D)
	$(lk_say) CC $<
	$(Q)$(CC) $(GRADER_CPPFLAGS) $(CFLAGS) -c $< -o $@

$(GRADER): $(GRADER_BUILD)/obj/main.o $(GRADER_LIB_OBJS) $(LK_LIB)
	@mkdir -p $(@D)
	$(lk_say) LD $(call lk_rel,$@)
	$(Q)$(CC) $(CFLAGS) $(GRADER_BUILD)/obj/main.o $(GRADER_LIB_OBJS) -o $@ $(LDFLAGS) $(LK_LIB) \
	  $(GRADER_LIBS) $(LK_LIBS)

$(GRADER_BOX): $(GRADER_BUILD)/obj/box_main.o $(GRADER_LIB_OBJS) $(LK_LIB)
	@mkdir -p $(@D)
	$(lk_say) LD $(call lk_rel,$@)
	$(Q)$(CC) $(CFLAGS) $(GRADER_BUILD)/obj/box_main.o $(GRADER_LIB_OBJS) -o $@ $(LDFLAGS) \
	  $(LK_LIB) $(GRADER_LIBS) $(LK_LIBS)

# A helper that misbehaves on request (sleeps, forks, floods, crashes) for the isolation tests.
$(GRADER_HOSTILE): grader/tests/hostile.c
	@mkdir -p $(@D)
	$(lk_say) CC $<
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $< -o $@

$(GRADER_BUILD)/tests/test_%: grader/tests/test_%.c grader/tests/grader_testing.h \
                              $(GRADER_LIB_OBJS) $(LK_LIB) $(GRADER_HEADERS) $(LK_HEADERS) \
                              $(GRADER) $(GRADER_BOX) $(GRADER_HOSTILE)
	@mkdir -p $(@D)
	$(lk_say) CC $<
	$(Q)$(CC) $(GRADER_CPPFLAGS) -DGR_GRADER='"$(GRADER)"' -DGR_HOSTILE='"$(GRADER_HOSTILE)"' \
	  -DGR_BOX='"$(GRADER_BOX)"' \
	  -DGR_LK_LIB='"$(LK_LIB)"' $(CFLAGS) $< $(GRADER_LIB_OBJS) -o $@ $(LDFLAGS) $(LK_LIB) \
	  $(LK_TEST_LIBS) $(GRADER_LIBS) $(LK_LIBS)

# `grade` is declared .PHONY by the top-level Makefile. The library is built first: student
# builds run as an unprivileged user and cannot write to build/.
# Exit status 4 (graded, GPU stages not run) is what a machine without a GPU can do: the
# grader has already said so loudly, so the make target succeeds; scripts read the status
# of labkit-grade itself.
grade: lib $(GRADER)
	@$(GRADE_RUNNER) --kit $(LK_TOP) --lib $(LK_LIB) --submissions $(SUBMISSIONS) --out $(OUT) \
	  $(if $(ROSTER),--roster $(ROSTER)) $(if $(EXPORT),--export $(EXPORT)) \
	  $(if $(SUBMISSION_TIMES),--submission-times $(SUBMISSION_TIMES)) \
	  $(if $(GPUS),--gpus $(GPUS)) $(GRADE_FLAGS); \
	status=$$?; [ $$status -eq 0 ] || [ $$status -eq 4 ] || exit $$status

check-grader: grader-tests
	@for t in $(GRADER_TESTS); do tools/run-suite.sh $(REPORTS) grader-$${t##*/test_} $$t; done
