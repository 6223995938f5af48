# Shared rules for every lab. A lab's Makefile sets what is the lab's own above the line
# `include ../lab.mk` (this file names no lab; labs/README.md, "Adding a lab"):
#
#   STUDENT_C := exchange.c   student files in C beside kernels.cu (the rubric's other
#                             `student-file` lines; default none)
#   USES_MPI := 1             the lab runs under MPI (its rubric says `launcher mpirun`)
#
#   make            build the driver and the tests from your kernels.cu
#   make check      the grader's static rules and the tests on your kernels.cu, then a summary
#   make grade      self-grade this lab (the grader's checks; reports in build/student/grade)
#   make run        run the lab's standard dataset (time, md5, speedup, PNG)
#   make bench      performance report (GPU)
#   make bench-profile  DRAM bytes per step measured with ncu (GPU, Nsight Compute)
#   VARIANT=solution builds against solutions/<lab>/kernels.cu (instructors; and the lab's
#                    other student files, its STUDENT_C)
#   GRADED=1         the grader's build of a driver that runs a student's code: no serial
#                    reference in it (serial.c's functions stop the run with one error line,
#                    lk_no_reference in labkit/harness.h), so --gpu runs and --serial, --bench
#                    and the default run of both fail. The tests link the reference as always.
#   V=1             show the full compiler command lines

LAB := $(notdir $(CURDIR))
LAB_ID := $(firstword $(subst -, ,$(LAB)))
include $(CURDIR)/../../common/common.mk

# $(call lk_default,VAR,VALUE): VAR is VALUE unless the command line sets it. The variables
# that choose the code built and tested, and where a build and its reports go, ignore the
# environment: a VARIANT or B left in a shell must not swap the code or move the build.
lk_default = $(if $(filter command line,$(origin $(1))),,$(eval $(1) := $(2)))

# Students on a cluster reach a GPU only through Slurm: with SLURM=1 (or the kit's cluster.mk)
# the goals run as this same make on a GPU node through srun, with the same output; inside a
# job (SLURM_JOB_ID set) they run where they are. (The grader's builds see no tools/.)
-include $(LK_TOP)/tools/slurm-settings.mk
ifeq ($(SLURM)$(SLURM_JOB_ID),1)
LK_SLURM_GOALS := $(or $(MAKECMDGOALS),build)
.PHONY: $(LK_SLURM_GOALS)
$(firstword $(LK_SLURM_GOALS)):
	@$(LK_SLURM_ENV) $(LK_TOP)/tools/slurm-run.sh $(MAKE) --no-print-directory $(LK_SLURM_GOALS) \
	  SLURM=0
$(wordlist 2,$(words $(LK_SLURM_GOALS)),$(LK_SLURM_GOALS)): $(firstword $(LK_SLURM_GOALS))
	@:
else

$(call lk_default,VARIANT,student)
$(call lk_default,KERNELS,$(if $(filter solution,$(VARIANT)),$(LK_TOP)/solutions/$(LAB),$(CURDIR))/kernels.cu)
# Student files in C beside kernels.cu (the lab's STUDENT_C). Each NAME.c is built from the
# path in the make variable NAME in capitals (EXCHANGE=...): the lab's own file, or under
# VARIANT=solution the solution's. The grader passes them as its rubric's `student-file NAME
# MAKEVAR` lines say, so the two must agree: a student file built as the kit's own would be
# graded as the kit's.
# Settings only the lab's Makefile gives (one left in a shell's environment counts for none).
$(foreach v,STUDENT_C USES_MPI,$(if $(filter environment%,$(origin $(v))),$(eval $(v) :=)))
LAB_RUBRIC := $(wildcard $(CURDIR)/rubric)
ifneq ($(LAB_RUBRIC),)
  lk_rubric_c := $(shell sed -n 's/\#.*//; s/^[[:space:]]*student-file[[:space:]]\{1,\}\([^[:space:]]*\.c\)[[:space:]].*/\1/p' $(LAB_RUBRIC))
  ifneq ($(sort $(lk_rubric_c)),$(sort $(STUDENT_C)))
    $(error labs/$(LAB)/Makefile: STUDENT_C is '$(strip $(STUDENT_C))' but labs/$(LAB)/rubric's student-file lines name '$(strip $(lk_rubric_c))': write STUDENT_C := $(strip $(lk_rubric_c)) above include ../lab.mk)
  endif
  lk_rubric_mpi := $(if $(shell sed -n 's/\#.*//; /^[[:space:]]*launcher[[:space:]]\{1,\}mpirun/p' $(LAB_RUBRIC)),1)
  ifneq ($(lk_rubric_mpi),$(strip $(USES_MPI)))
    $(error labs/$(LAB)/Makefile: $(if $(lk_rubric_mpi),labs/$(LAB)/rubric says 'launcher mpirun' but USES_MPI is not 1: write USES_MPI := 1,USES_MPI is '$(strip $(USES_MPI))' but labs/$(LAB)/rubric has no 'launcher mpirun': drop USES_MPI or add the launcher) above include ../lab.mk)
  endif
endif
lk_student_var = $(shell printf '%s' '$(basename $(1))' | tr a-z A-Z)
$(foreach f,$(STUDENT_C),$(call lk_default,$(call lk_student_var,$(f)),\
  $(if $(filter solution,$(VARIANT)),$(LK_TOP)/solutions/$(LAB)/$(f),$(CURDIR)/$(f))))
$(call lk_default,GRADED,)
$(if $(filter-out 0 1,$(GRADED)),$(error GRADED=$(GRADED): use GRADED=1 for a graded build, or leave it out))
$(call lk_default,B,$(CURDIR)/build/$(VARIANT))
$(call lk_default,REPORTS,$(B)/reports)
PROG := $(B)/lab$(LAB_ID)

LAB_HEADERS := $(wildcard $(CURDIR)/*.h) $(wildcard $(LK_TOP)/common/include/labkit/*.h $(LK_TOP)/common/models/*/*.h)
# Every C and CUDA file of the lab but main.c is linked into the driver and the tests; the
# harness's own CUDA files (e.g. a given reference kernel) sit beside the student's kernels.cu.
LAB_OBJS := $(patsubst $(CURDIR)/%.c,$(B)/%.o,$(filter-out $(CURDIR)/main.c $(addprefix $(CURDIR)/,$(STUDENT_C)),$(wildcard $(CURDIR)/*.c))) \
            $(patsubst $(CURDIR)/%.cu,$(B)/%.o,$(filter-out $(CURDIR)/kernels.cu,$(wildcard $(CURDIR)/*.cu))) \
            $(B)/kernels.o $(patsubst %.c,$(B)/%.o,$(STUDENT_C))
# A graded build (GRADED=1): the driver runs student code, so it holds no reference (the
# grader's expected outputs come from its own build of the kit). The lab's serial object,
# built from the kit only, stays out of the link, and every global name it defines is bound
# to lk_no_reference: a call of the reference, by name or through a pointer found at run
# time, ends the run. The tests link LAB_OBJS, the reference included.
LAB_SERIAL := $(filter $(B)/serial.o $(B)/serial_%.o,$(LAB_OBJS))
PROG_OBJS := $(if $(filter 1,$(GRADED)),$(filter-out $(LAB_SERIAL),$(LAB_OBJS)),$(LAB_OBJS))
PROG_GRADED_FLAGS := $(if $(and $(filter 1,$(GRADED)),$(LAB_SERIAL)),@$(B)/no-reference.flags)
TESTS := $(patsubst $(CURDIR)/tests/%.c,$(B)/tests/%,$(wildcard $(CURDIR)/tests/test_*.c))
LAB_CPPFLAGS := $(CPPFLAGS) -I$(CURDIR) -DLK_LAB='"$(LAB)"'
LAB_LDFLAGS := $(LDFLAGS) $(LK_HARNESS_LDFLAGS)
# Labs that run under MPI (USES_MPI := 1): Open MPI's compile and link flags from its mpicc
# wrapper, and for the tests the driver they start under mpirun.
ifeq ($(strip $(USES_MPI)),1)
  LK_MPICC ?= mpicc
  LAB_CPPFLAGS += $(shell $(LK_MPICC) --showme:compile 2>/dev/null) -DOMPI_SKIP_MPICXX -DMPICH_SKIP_MPICXX \
                  -DLK_LAB_PROG='"$(PROG)"'
  LAB_LDFLAGS += $(shell $(LK_MPICC) --showme:link 2>/dev/null)
  ifeq ($(shell command -v $(LK_MPICC) 2>/dev/null),)
    $(error lab $(LAB) needs Open MPI: $(LK_MPICC) not found: apt-get install libopenmpi-dev openmpi-bin (see make doctor))
  endif
endif

PROFILE_CSV ?= $(B)/profile.csv

.PHONY: build check check-suites grader-rules grade run bench bench-profile clean
.DELETE_ON_ERROR:

build: $(PROG) $(TESTS)

$(LK_LIB): FORCE
	@$(MAKE) --no-print-directory $(LK_SUBMAKE_QUIET) -C $(LK_TOP) lib
FORCE:

$(B)/kernels.o: $(KERNELS) $(LAB_HEADERS)
	@mkdir -p $(@D)
	$(lk_say) NVCC $(call lk_rel,$<)
	$(Q)$(NVCC) $(LAB_CPPFLAGS) $(NVCCFLAGS) -c $< -o $@

# A student C file comes from its make variable (see STUDENT_C).
$(foreach f,$(STUDENT_C),$(eval $(B)/$(f:.c=.o): $$($(call lk_student_var,$(f))) $$(LAB_HEADERS)))
$(patsubst %.c,$(B)/%.o,$(STUDENT_C)):
	@mkdir -p $(@D)
	$(lk_say) CC $(call lk_rel,$<)
	$(Q)$(CC) $(LAB_CPPFLAGS) $(CFLAGS) -c $< -o $@

$(B)/%.o: $(CURDIR)/%.cu $(LAB_HEADERS)
	@mkdir -p $(@D)
	$(lk_say) NVCC $(call lk_rel,$<)
	$(Q)$(NVCC) $(LAB_CPPFLAGS) $(NVCCFLAGS) -c $< -o $@

$(B)/%.o: $(CURDIR)/%.c $(LAB_HEADERS)
	@mkdir -p $(@D)
	$(lk_say) CC $(call lk_rel,$<)
	$(Q)$(CC) $(LAB_CPPFLAGS) $(CFLAGS) -c $< -o $@

$(PROG): $(B)/main.o $(LAB_OBJS) $(LK_LIB) $(B)/link-mode $(if $(PROG_GRADED_FLAGS),$(B)/no-reference.flags)
	$(lk_say) LD $(call lk_rel,$@)
	$(Q)$(CC) $(CFLAGS) $(B)/main.o $(PROG_OBJS) -o $@ $(LAB_LDFLAGS) $(PROG_GRADED_FLAGS) $(LK_LIB) $(LK_LIBS)

# Which link PROG had (graded or not): rewritten only when it changes, so that switching
# GRADED in one build folder relinks the driver.
$(B)/link-mode: FORCE
	@mkdir -p $(@D)
	@echo '$(if $(filter 1,$(GRADED)),graded,full)' | cmp -s - $@ || \
	  echo '$(if $(filter 1,$(GRADED)),graded,full)' >$@

# The graded link's options (a gcc @file): one --defsym per global name of the serial
# object, and lk_no_reference pulled from the kit library. Only a function can stand in for
# a function: a data symbol (nm type other than T or W) stops the build with its name.
$(B)/no-reference.flags: $(LAB_SERIAL)
	$(lk_say) NM $(call lk_rel,$(LAB_SERIAL))
	$(Q)nm --defined-only -g $(LAB_SERIAL) | awk 'NF == 3' >$@.nm
	$(Q)awk -v obj='$(call lk_rel,$(LAB_SERIAL))' 'BEGIN { print "-Wl,--undefined=lk_no_reference" } \
	  $$2 != "T" && $$2 != "W" { printf "%s: %s (nm type %s) is not a function: a graded " \
	    "build binds only functions to lk_no_reference\n", obj, $$3, $$2 >"/dev/stderr"; \
	    bad = 1 } \
	  { print "-Wl,--defsym=" $$3 "=lk_no_reference" } END { exit bad }' $@.nm >$@
	@rm -f $@.nm

# The tests run the lab's real main.c, renamed lk_lab_main (labkit/testing.h).
$(B)/main_in_tests.o: $(CURDIR)/main.c $(LAB_HEADERS)
	@mkdir -p $(@D)
	$(lk_say) CC $(call lk_rel,$<)
	$(Q)$(CC) $(LAB_CPPFLAGS) $(CFLAGS) -Dmain=lk_lab_main -c $< -o $@

$(B)/tests/%: $(CURDIR)/tests/%.c $(LAB_OBJS) $(B)/main_in_tests.o $(LK_LIB) $(LAB_HEADERS)
	@mkdir -p $(@D)
	$(lk_say) CC $(call lk_rel,$<)
	$(Q)$(CC) $(LAB_CPPFLAGS) $(CFLAGS) $< $(LAB_OBJS) $(B)/main_in_tests.o -o $@ $(LAB_LDFLAGS) $(LK_LIB) $(LK_TEST_LIBS) $(LK_LIBS)

# Suites report into $(REPORTS); the top-level `make check` collects every lab's reports. When
# the driver or the tests do not build, that is the lab's one failed suite (lab01-student-build)
# and the target still succeeds, so that the other labs run and the summary names the build.
# (Only the line that runs $(MAKE) runs under make -n; the suites stay on lines of their own.)
BUILD_REPORT := $(REPORTS)/lab$(LAB_ID)-$(VARIANT)-build
check-suites:
	@rm -f $(BUILD_REPORT).tap $(BUILD_REPORT).status $(BUILD_REPORT).fix
	@$(MAKE) --no-print-directory build || $(LK_TOP)/tools/record-failure.sh $(REPORTS) \
	  $(notdir $(BUILD_REPORT)) \
	  "labs/$(LAB) ($(VARIANT)) did not build: fix the first error above, then run make check again"
	@[ -e $(BUILD_REPORT).status ] || $(MAKE) --no-print-directory grader-rules || \
	  $(LK_TOP)/tools/record-failure.sh $(REPORTS) $(notdir $(RULES_REPORT)) \
	  "the grader (labkit-grade) did not build, so its rules were not checked: make doctor"
	@[ -e $(BUILD_REPORT).status ] || for t in $(TESTS); do \
	  $(LK_TOP)/tools/run-suite.sh $(REPORTS) lab$(LAB_ID)-$(VARIANT)-$${t##*/test_} $$t; done

# The grader's static rules (source rules, includes, symbols: labkit-grade --static, the
# grader's own code) on the student files and objects just built, so that a file make grade
# rejects fails make check too, with the grader's reason.
LK_GRADER := $(LK_BUILD)/grader/labkit-grade
RULES_REPORT := $(REPORTS)/lab$(LAB_ID)-$(VARIANT)-rules
STUDENT_FILE_ARGS := KERNELS='$(KERNELS)' \
  $(foreach f,$(STUDENT_C),$(call lk_student_var,$(f))='$($(call lk_student_var,$(f)))')
$(LK_GRADER): FORCE
	@$(MAKE) --no-print-directory $(LK_SUBMAKE_QUIET) -C $(LK_TOP) grader
grader-rules: $(LK_GRADER)
	@rm -f $(RULES_REPORT).tap $(RULES_REPORT).status $(RULES_REPORT).fix
	@$(LK_GRADER) --kit $(LK_TOP) --lib $(LK_LIB) --cuda-arch '$(CUDA_ARCH)' --static $(LAB) \
	  --objects $(B) $(STUDENT_FILE_ARGS) 2>$(B)/grader-rules.err; status=$$?; \
	  cat $(B)/grader-rules.err >&2; [ $$status -eq 0 ] || { \
	  why=$$(sed -n 's/^labkit-grade: //p' $(B)/grader-rules.err | head -n 1); \
	  $(LK_TOP)/tools/record-failure.sh $(REPORTS) $(notdir $(RULES_REPORT)) \
	    "$${why:-labkit-grade --static $(LAB) ended with exit status $$status (above)}"; }

check:
	@rm -rf $(REPORTS)
	@$(MAKE) --no-print-directory check-suites
	@$(LK_TOP)/tools/summary.sh $(REPORTS)

# Self-grade this lab only, as the grader will (the top folder's make grade grades every lab):
# reports in $(B)/grade. GRADE_FLAGS adds grader options (e.g. --seed 7).
grade:
	@$(MAKE) --no-print-directory -C $(LK_TOP) grade SUBMISSIONS=self OUT=$(B)/grade \
	  GRADE_FLAGS="--lab $(LAB) $(GRADE_FLAGS)"

run: $(PROG)
	$(PROG) --standard --png $(B)/run.png

# A lab that times more than its bench dataset lists one `--bench` argument set per line
# in bench.runs (other sizes, the given versions' own rows); `#` lines are comments. A lab
# with its own bench script (lab 07's scaling.sh: several rank counts under mpirun) runs it
# instead of the driver's --bench.
BENCH_RUNS := $(wildcard $(CURDIR)/bench.runs)
LAB_BENCH := $(wildcard $(CURDIR)/scaling.sh)
# Each timed command holds the GPU lock that the grader takes (tools/gpu-lock.sh); on a
# machine without a GPU it says so at once instead of waiting for the lock first.
GPU_LOCKED := $(LK_TOP)/tools/gpu-lock.sh --needs-gpu $(LK_GPU_LOCK)
bench: $(PROG)
ifneq ($(LAB_BENCH),)
	PROG=$(PROG) $(GPU_LOCKED) $(LAB_BENCH) $(if $(BENCH_CSV),--csv $(BENCH_CSV))
else
	$(GPU_LOCKED) $(PROG) --bench $(if $(BENCH_CSV),--csv $(BENCH_CSV))
endif
ifneq ($(BENCH_RUNS),)
	@grep -v '^[[:space:]]*\(#\|$$\)' $(BENCH_RUNS) | while read -r args; do \
	  echo "$(PROG) --bench $$args"; \
	  $(GPU_LOCKED) $(PROG) --bench $$args $(if $(BENCH_CSV),--csv $(BENCH_CSV)) </dev/null || exit 1; \
	done
endif

# Measured DRAM bytes per step (tools/bench-profile.sh) on the bench dataset (the lab's C
# declaration, lk_lab.bench_dataset, through --list-datasets) and on the datasets that
# bench.runs names.
bench-profile: $(PROG)
	@$(GPU_LOCKED) $(LK_TOP)/tools/bench-profile.sh $(LAB) $(PROG) $(PROFILE_CSV) \
	  $$($(PROG) --list-datasets bench) \
	  $(if $(BENCH_RUNS),$$(sed -n 's/.*--dataset \([^ ]*\).*/\1/p' $(BENCH_RUNS) | sort -u))

clean:
	$(lk_say) CLEAN $(call lk_rel,$(CURDIR)/build)
	$(Q)rm -rf $(CURDIR)/build
endif # SLURM=1 outside a job
